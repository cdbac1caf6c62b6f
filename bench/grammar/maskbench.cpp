// MaskBench's correctness table for llmc's JSON Schema front end: each file
// of guidance-ai/jsonschemabench's maskbench/data holds a schema and test
// instances marked valid or not. A schema passes when it compiles, every
// valid instance is accepted and every invalid one rejected (the instance
// is fed as compact JSON, byte by byte, through the grammar; acceptance
// does not depend on the tokenizer). Prints the counts, the compile time
// (schema -> grammar -> ready matcher over a byte vocabulary) and the most
// common reasons a schema is refused. It measures; it asserts nothing.
//
// With --tokenizer DIR it measures as MaskBench does: the grammar compiled
// over that vocabulary (lazily: --warm-states 0 unless given), every test
// instance tokenized, a mask computed before each token (timed), the token
// checked against the mask and accepted; the table adds compile and mask
// quantiles. One thread.
//
//   llmc_maskbench DATA_DIR [--limit N] [--failures] [--fail-on-invalid]
//                  [--disable-additional-properties] [--tokenizer DIR]
//                  [--warm-states N] [--slowest N]
//
// --slowest N lists the N slowest masks with their file and the text before
// them (where a mask's tail comes from).
//
// --fail-on-invalid exits 1 when an invalid instance was accepted (the
// soundness check ctest runs on test/data/maskbench-sample).
#include "llmc/grammar/json_schema.h"
#include "llmc/grammar/matcher.h"
#include "llmc/support/error.h"
#include "llmc/tokenizer/tokenizer.h"
#include "quantile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace llmc;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

namespace {

bool accepts(const std::shared_ptr<const grammar::CompiledGrammar> &g,
             const std::string &text) {
  grammar::Matcher m(g, {grammar::TokenVocabulary::kByteEos});
  for (unsigned char c : text)
    if (!m.accept(c))
      return false;
  return m.canEnd();
}

double us(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

/// MaskBench's walk: a mask before each token of `text` (timed into
/// `maskUs`), the token checked against it, then accepted. Throws when
/// the mask and accept() disagree (an engine bug, never a verdict).
bool acceptsTokens(const std::shared_ptr<const grammar::CompiledGrammar> &g,
                   const tok::Tokenizer &tokenizer, int32_t eos,
                   const std::string &text, std::vector<double> &maskUs,
                   std::vector<size_t> &maskAt) {
  grammar::Matcher m(g, {eos});
  grammar::TokenMask mask(g->vocabulary().size());
  size_t at = 0;
  for (int32_t t : tokenizer.encode(text, /*addSpecial=*/false)) {
    const auto t0 = Clock::now();
    m.fillMask(mask);
    maskUs.push_back(us(Clock::now() - t0));
    maskAt.push_back(at);
    at += g->vocabulary().bytes(t).size();
    const bool allowed = mask.test(t);
    if (m.accept(t) != allowed)
      throw Error("the mask and accept() disagree on token " +
                  std::to_string(t) + " of " + text);
    if (!allowed)
      return false;
  }
  return m.canEnd();
}

/// The refusal without the schema-specific part: "at /x/y: the keyword 'k'
/// ..." -> "the keyword 'k' ...".
std::string reason(std::string what) {
  const size_t at = what.find(": at ");
  if (at != std::string::npos) {
    const size_t colon = what.find(": ", at + 5);
    if (colon != std::string::npos)
      what = what.substr(colon + 2);
  }
  return what.substr(0, 90);
}

using bench::quantile;

constexpr const char *kUsage =
    "usage: llmc_maskbench DATA_DIR [--limit N] [--failures] "
    "[--fail-on-invalid] [--disable-additional-properties] [--tokenizer DIR] "
    "[--warm-states N] [--slowest N]\n";

/// A flag's value as a count (false when it is none).
bool parseCount(const char *text, int64_t &out) {
  char *end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end || errno || v < 0)
    return false;
  out = v;
  return true;
}

/// A slow mask: where it was met.
struct Slow {
  double us;
  std::string file, before;
  bool operator<(const Slow &o) const { return us > o.us; }
};

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  int64_t limit = INT64_MAX, slowestCount = 0, warmStates = 0;
  bool showFailures = false, failOnInvalid = false;
  std::string tokenizerDir;
  grammar::JsonSchemaOptions options;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    bool ok = true;
    if (a == "--limit" && i + 1 < argc)
      ok = parseCount(argv[++i], limit);
    else if (a == "--failures")
      showFailures = true;
    else if (a == "--fail-on-invalid")
      failOnInvalid = true;
    else if (a == "--disable-additional-properties")
      options.strictObjects = true;
    else if (a == "--tokenizer" && i + 1 < argc)
      tokenizerDir = argv[++i];
    else if (a == "--warm-states" && i + 1 < argc)
      ok = parseCount(argv[++i], warmStates);
    else if (a == "--slowest" && i + 1 < argc)
      ok = parseCount(argv[++i], slowestCount);
    else
      ok = false;
    if (!ok) {
      std::fprintf(stderr,
                   "llmc_maskbench: unknown or incomplete flag, or a value "
                   "that is no count: '%s'\n%s",
                   argv[i], kUsage);
      return 2;
    }
  }
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator(argv[1], ec))
    if (e.path().extension() == ".json")
      files.push_back(e.path());
  if (ec) {
    std::fprintf(stderr, "llmc_maskbench: %s: %s\n", argv[1],
                 ec.message().c_str());
    return 2;
  }
  std::sort(files.begin(), files.end());
  if (files.size() > static_cast<uint64_t>(limit))
    files.resize(static_cast<size_t>(limit));

  std::unique_ptr<tok::Tokenizer> tokenizer;
  std::shared_ptr<const grammar::TokenVocabulary> vocab =
      grammar::TokenVocabulary::ofBytes();
  int32_t eos = grammar::TokenVocabulary::kByteEos;
  if (!tokenizerDir.empty()) {
    tokenizer = tok::loadTokenizer(tokenizerDir);
    vocab = std::make_shared<grammar::TokenVocabulary>(*tokenizer,
                                                       tokenizer->vocabSize());
    eos = tokenizer->eos.value_or(-1);
  }
  std::vector<double> maskUs;
  std::vector<size_t> maskAt;
  std::vector<Slow> slow; // a heap of the slowest
  double slowest = 0;
  std::string slowestFile;
  size_t passing = 0, compileErrors = 0, validationErrors = 0,
         invalidationErrors = 0, unreadable = 0;
  std::map<std::string, size_t> reasons;
  std::vector<double> compileUs;
  for (const auto &path : files) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    Json file = Json::parse(ss.str(), nullptr, false);
    if (file.is_discarded() || !file.contains("schema")) {
      ++unreadable;
      continue;
    }
    std::shared_ptr<const grammar::CompiledGrammar> g;
    const auto t0 = Clock::now();
    try {
      g = std::make_shared<grammar::CompiledGrammar>(
          grammar::grammarFromJsonSchema(file["schema"].dump(),
                                         path.filename().string(), options),
          vocab, warmStates);
    } catch (const Error &e) {
      ++compileErrors;
      ++reasons[reason(e.what())];
      continue;
    }
    compileUs.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    bool validRejected = false, invalidAccepted = false;
    for (const Json &t : file.value("tests", Json::array())) {
      const std::string doc =
          t["data"].dump(-1, ' ', false, Json::error_handler_t::replace);
      const size_t before = maskUs.size();
      const bool ok =
          tokenizer ? acceptsTokens(g, *tokenizer, eos, doc, maskUs, maskAt)
                    : accepts(g, doc);
      for (size_t i = before; i < maskUs.size(); ++i) {
        if (maskUs[i] > slowest) {
          slowest = maskUs[i];
          slowestFile = path.filename().string();
        }
        if (slowestCount && (slow.size() < static_cast<size_t>(slowestCount) ||
                             maskUs[i] > slow.front().us)) {
          slow.push_back(
              {maskUs[i], path.filename().string(), doc.substr(0, maskAt[i])});
          std::push_heap(slow.begin(), slow.end());
          if (slow.size() > static_cast<size_t>(slowestCount)) {
            std::pop_heap(slow.begin(), slow.end());
            slow.pop_back();
          }
        }
      }
      const bool valid = t.value("valid", false);
      if (valid && !ok) {
        validRejected = true;
        if (showFailures)
          std::printf("valid rejected: %s: %.200s\n", path.filename().c_str(),
                      doc.c_str());
      }
      if (!valid && ok) {
        invalidAccepted = true;
        if (showFailures)
          std::printf("invalid accepted: %s: %.200s\n", path.filename().c_str(),
                      doc.c_str());
      }
    }
    if (invalidAccepted)
      ++invalidationErrors;
    else if (validRejected)
      ++validationErrors;
    else
      ++passing;
  }
  std::printf("| schemas | passing | compile error | validation error (valid "
              "rejected) | invalidation error (invalid accepted) | compile "
              "p50 / p99 us | mask p50 / p99 / p99.9 / max us |\n"
              "|---|---|---|---|---|---|---|\n"
              "| %zu | %zu | %zu | %zu | %zu | %.0f / %.0f | ",
              files.size() - unreadable, passing, compileErrors,
              validationErrors, invalidationErrors, quantile(compileUs, 0.5),
              quantile(compileUs, 0.99));
  if (tokenizer)
    std::printf("%.1f / %.0f / %.0f / %.0f |\n", quantile(maskUs, 0.5),
                quantile(maskUs, 0.99), quantile(maskUs, 0.999),
                quantile(maskUs, 1.0));
  else
    std::printf("- |\n");
  std::printf("\nvocabulary: %s (%d tokens), warm-up %lld states, %zu masks\n",
              tokenizer ? tokenizerDir.c_str() : "bytes", vocab->size(),
              static_cast<long long>(warmStates), maskUs.size());
  if (!slowestFile.empty())
    std::printf("slowest mask: %.0f us, in %s\n", slowest, slowestFile.c_str());
  std::sort_heap(slow.begin(), slow.end());
  for (const Slow &s : slow)
    std::printf(
        "slow mask: %.0f us, %s, after ...%s\n", s.us, s.file.c_str(),
        s.before.substr(s.before.size() - std::min<size_t>(s.before.size(), 80))
            .c_str());
  std::vector<std::pair<size_t, std::string>> top;
  for (const auto &[r, n] : reasons)
    top.emplace_back(n, r);
  std::sort(top.rbegin(), top.rend());
  std::printf("\nrefusals, by count:\n");
  for (size_t i = 0; i < top.size() && i < 25; ++i)
    std::printf("%6zu  %s\n", top[i].first, top[i].second.c_str());
  return failOnInvalid && invalidationErrors > 0 ? 1 : 0;
}
