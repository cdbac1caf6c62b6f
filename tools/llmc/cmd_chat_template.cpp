//===- cmd_chat_template.cpp - llmc chat-template TEMPLATE --messages M
//----===//
//
// Renders a chat template exactly as Hugging Face's apply_chat_template does
// and prints the text alone, byte for byte, for users debugging a template.
//
//===----------------------------------------------------------------------===//

#include "commands.h"
#include "llmc/runtime/chat_template.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"
#include "llmc/template/jinja.h"

#include <cstdio>
#include <ctime>
#include <optional>

namespace llmc::cli {
namespace {

nlohmann::ordered_json readJsonArg(const std::string &path, const char *flag) {
  std::string text = readFile(path);
  auto j = tmpl::parseContextJson(text);
  if (j.is_discarded())
    throw Error(std::string(flag) + " " + path + ": not valid JSON");
  return j;
}

} // namespace

Action addChatTemplate(CLI::App &app) {
  struct Options {
    std::string templatePath, messages, tools, documents, now;
    std::vector<std::string> vars;
    bool addGenerationPrompt = false;
    std::optional<std::string> bos, eos;
  };
  auto o = std::make_shared<Options>();
  app.add_option("TEMPLATE", o->templatePath, "A .jinja chat template")
      ->required();
  app.add_option("--messages", o->messages, "JSON file: the list of messages")
      ->required();
  app.add_option("--tools", o->tools, "JSON file: the tool list");
  app.add_option("--documents", o->documents, "JSON file: the documents");
  app.add_option("--var", o->vars,
                 "NAME=JSON: an extra template variable (repeatable)");
  app.add_flag("--add-generation-prompt", o->addGenerationPrompt,
               "Open the assistant's turn at the end");
  app.add_option("--bos-token", o->bos, "bos_token (undefined if not given)");
  app.add_option("--eos-token", o->eos, "eos_token (undefined if not given)");
  app.add_option("--now", o->now,
                 "The local time strftime_now() formats, ISO 8601 "
                 "(default: now)");
  return [o]() -> int {
    tmpl::Template t(readFile(o->templatePath));
    nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
    ctx["messages"] = readJsonArg(o->messages, "--messages");
    ctx["tools"] = o->tools.empty() ? nlohmann::ordered_json()
                                    : readJsonArg(o->tools, "--tools");
    ctx["documents"] = o->documents.empty()
                           ? nlohmann::ordered_json()
                           : readJsonArg(o->documents, "--documents");
    ctx["add_generation_prompt"] = o->addGenerationPrompt;
    if (o->bos)
      ctx["bos_token"] = *o->bos;
    if (o->eos)
      ctx["eos_token"] = *o->eos;
    for (const std::string &v : o->vars) {
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0)
        throw Error("--var '" + v + "': expected NAME=JSON");
      auto value = tmpl::parseContextJson(v.substr(eq + 1));
      if (value.is_discarded())
        throw Error("--var " + v.substr(0, eq) + ": '" + v.substr(eq + 1) +
                    "' is not JSON (quote strings: NAME='\"text\"')");
      ctx[v.substr(0, eq)] = value;
    }
    tmpl::RenderOptions ro;
    ro.strftimeNow = o->now.empty() ? localTimeIso() : o->now;
    std::string out;
    try {
      out = t.render(ctx, ro);
    } catch (const tmpl::RaisedException &e) {
      throw Error(o->templatePath + ": raise_exception: " + e.what());
    } catch (const tmpl::TemplateError &e) {
      throw Error(o->templatePath + ": " + e.what());
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  };
}

} // namespace llmc::cli
