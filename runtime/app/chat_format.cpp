//===- chat_format.cpp - A template's tool-call and reasoning markup ------===//
#include "llmc/runtime/chat_format.h"

#include "llmc/runtime/chat_template.h"

#include <algorithm>
#include <array>

namespace llmc {

using json = nlohmann::ordered_json;

namespace {

/// Reasoning blocks as models write them (DeepSeek R1, Qwen3, Command A,
/// Magistral, Seed, Kimi).
const text::ReasoningMarkers kReasoningPairs[] = {
    {"<think>", "</think>"},
    {"<|START_THINKING|>", "<|END_THINKING|>"},
    {"[THINK]", "[/THINK]"},
    {"<seed:think>", "</seed:think>"},
    {"\xe2\x97\x81think\xe2\x96\xb7", "\xe2\x97\x81/think\xe2\x96\xb7"}};

bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::string_view trimLeft(std::string_view s) {
  while (!s.empty() && isSpace(s.front()))
    s.remove_prefix(1);
  return s;
}

size_t commonPrefix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n])
    ++n;
  return n;
}

size_t commonSuffix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() &&
         a[a.size() - 1 - n] == b[b.size() - 1 - n])
    ++n;
  return n;
}

/// `n` or less, so that text[0, n) does not end inside a marker (`<|...|>`,
/// `<...>`, `[...]`): character-level common prefixes of two renderings
/// must not split one.
size_t markerPrefix(std::string_view text, size_t n) {
  const std::string_view head = text.substr(0, n);
  const size_t open = head.find_last_of("<[");
  if (open == std::string_view::npos)
    return n;
  const char close = head[open] == '<' ? '>' : ']';
  return head.find(close, open) == std::string_view::npos ? open : n;
}

/// `n` or less, so that the last n characters of `text` do not start inside
/// a marker.
size_t markerSuffix(std::string_view text, size_t n) {
  const std::string_view tail = text.substr(text.size() - n);
  const size_t close = tail.find_first_of(">]");
  if (close == std::string_view::npos)
    return n;
  const char open = tail[close] == '>' ? '<' : '[';
  return tail.substr(0, close).find(open) == std::string_view::npos
             ? n - close - 1
             : n;
}

std::optional<std::string> tryRender(const ChatTemplate &chat,
                                     const json &messages, const json &tools,
                                     bool addGenerationPrompt) {
  try {
    return chat.render(messages, tools, nullptr, addGenerationPrompt);
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

constexpr std::array<const char *, 2> kNames = {"probe_fn_a", "probe_fn_b"};
constexpr std::array<const char *, 2> kValues = {"probe_val_a", "probe_val_b"};

/// Where one call's slots are in a rendering.
struct SlotAt {
  size_t begin, end;
  text::ToolCallFormat::Slot slot;
};

/// The slots of probe call `i` in `s`, in order; empty if a slot is missing.
std::vector<SlotAt> findSlots(std::string_view s, int i, const std::string &id,
                              size_t from) {
  std::vector<SlotAt> out;
  const size_t name = s.find(kNames[i], from);
  if (name == std::string_view::npos)
    return {};
  out.push_back({name, name + std::string_view(kNames[i]).size(),
                 text::ToolCallFormat::Slot::Name});
  // The arguments object: back from its key to '{', on to the matching '}'.
  size_t key = s.find("\"probe_arg\"", from);
  if (key == std::string_view::npos)
    return {};
  size_t open = key;
  while (open > from && isSpace(s[open - 1]))
    --open;
  if (open == from || s[open - 1] != '{')
    return {};
  --open;
  size_t close = s.find('}', key);
  if (close == std::string_view::npos)
    return {};
  out.push_back({open, close + 1, text::ToolCallFormat::Slot::Arguments});
  const size_t idAt = s.find(id, from);
  if (idAt != std::string_view::npos)
    out.push_back({idAt, idAt + id.size(), text::ToolCallFormat::Slot::Id});
  std::sort(out.begin(), out.end(),
            [](const SlotAt &a, const SlotAt &b) { return a.begin < b.begin; });
  for (size_t k = 1; k < out.size(); ++k)
    if (out[k].begin < out[k - 1].end)
      return {};
  return out;
}

/// The assistant turn's part of a rendering: after what it shares with the
/// generation prompt and with a plain-text turn's header, without the
/// end of turn, a leading empty reasoning block and leading spaces.
std::optional<std::string>
turnOf(const std::string &rendered, size_t sharedPrefix,
       const std::string &generation, const std::string &endOfTurn,
       const std::optional<text::ReasoningMarkers> &reasoning) {
  if (rendered.size() < sharedPrefix)
    return std::nullopt;
  std::string_view s = std::string_view(rendered).substr(sharedPrefix);
  // A header the generation prompt already ends with, written again by a
  // template whose generation prompt is not a prefix of the turn (Command
  // R+ puts instructions between).
  for (size_t k = std::min(s.size(), generation.size()); k > 0; --k)
    if (generation.compare(generation.size() - k, k, s.substr(0, k)) == 0) {
      s.remove_prefix(k);
      break;
    }
  // The end of turn and whatever a template writes after it: the turn ends
  // at the first marker of a plain turn's ending (Command R's ends a text
  // turn with more markers than a call turn, or writes instructions after).
  // Searched after the call's name: what a template writes after every
  // turn may also open this one (Command R7B's empty thinking block).
  size_t from = s.find(kNames[0]);
  from = from == std::string_view::npos ? 0 : from;
  std::string_view eot = trimLeft(endOfTurn);
  size_t end = s.size();
  while (!eot.empty()) {
    const size_t open = eot.find_first_of("<[");
    if (open == std::string_view::npos)
      break;
    const size_t close = eot.find(eot[open] == '<' ? '>' : ']', open);
    if (close == std::string_view::npos)
      break;
    end = std::min(end, s.find(eot.substr(open, close + 1 - open), from));
    eot.remove_prefix(close + 1);
  }
  if (eot.size() == trimLeft(endOfTurn).size() && !eot.empty())
    end = std::min(end, s.find(eot, from)); // an ending with no marker
  s = s.substr(0, std::min(end, s.size()));
  while (!s.empty() && isSpace(s.back()))
    s.remove_suffix(1);
  s = trimLeft(s);
  if (reasoning && s.substr(0, reasoning->open.size()) == reasoning->open) {
    const size_t close = s.find(reasoning->close);
    if (close == std::string_view::npos)
      return std::nullopt;
    s = trimLeft(s.substr(close + reasoning->close.size()));
  }
  return std::string(s);
}

std::string rebuild(const text::ToolCallFormat &f, int calls,
                    const std::vector<std::vector<std::string>> &values) {
  std::string s = f.blockOpen;
  for (int c = 0; c < calls; ++c) {
    if (c > 0)
      s += f.separator;
    s += f.literals[0];
    for (size_t k = 0; k < f.slots.size(); ++k)
      s += values[c][k] + f.literals[k + 1];
  }
  return s + f.blockClose;
}

std::optional<text::ToolCallFormat>
deriveToolFormat(const ChatTemplate &chat,
                 const std::optional<text::ReasoningMarkers> &reasoning) {
  // Harmony (gpt-oss) is text::HarmonyReply's, see the header.
  if (chat.source().find("tool_calls") == std::string::npos ||
      chat.source().find("<|channel|>") != std::string::npos)
    return std::nullopt;
  json tools = json::array();
  for (const char *name : kNames)
    tools.push_back(
        {{"type", "function"},
         {"function",
          {{"name", name},
           {"description", "A probe."},
           {"parameters",
            {{"type", "object"},
             {"properties",
              {{"probe_arg",
                {{"type", "string"}, {"description", "A probe."}}}}},
             {"required", {"probe_arg"}}}}}}});
  const json user = {{"role", "user"}, {"content", "PROBE_USER"}};
  const auto generation = tryRender(chat, json::array({user}), tools, true);
  const auto plain = tryRender(
      chat,
      json::array({user, {{"role", "assistant"}, {"content", "PROBE_TEXT"}}}),
      tools, false);
  if (!generation || !plain)
    return std::nullopt;
  const size_t textAt = plain->rfind("PROBE_TEXT");
  if (textAt == std::string::npos)
    return std::nullopt;
  const std::string header = plain->substr(0, textAt);
  const std::string endOfTurn = plain->substr(textAt + 10);

  const std::array<std::array<std::string, 2>, 2> idStyles = {
      {{"call_probe_a", "call_probe_b"}, {"prbAa0001", "prbBb0002"}}};
  bool mappingRendered = false;
  for (bool argsText : {false, true})
    for (size_t style = 0; style < idStyles.size(); ++style) {
      const auto &ids = idStyles[style];
      auto call = [&](int i) {
        json args = {{"probe_arg", kValues[i]}};
        return json{{"id", ids[i]},
                    {"type", "function"},
                    {"function",
                     {{"name", kNames[i]},
                      {"arguments", argsText ? json(args.dump()) : args}}}};
      };
      auto turn = [&](int calls) {
        json list = json::array();
        for (int i = 0; i < calls; ++i)
          list.push_back(call(i % 2));
        return json::array({user,
                            {{"role", "assistant"},
                             {"content", ""}, // as the server passes null
                             {"tool_calls", list}}});
      };
      const auto one = tryRender(chat, turn(1), tools, false);
      if (!one || one->find("'probe_arg'") != std::string::npos)
        continue;
      // Arguments as text only where the template cannot take a mapping:
      // one that renders a mapping in a shape of its own (Gemma 4's) has
      // no JSON arguments to constrain.
      if (argsText && mappingRendered)
        return std::nullopt;
      const size_t shared =
          markerPrefix(*one, std::min(commonPrefix(*generation, *one),
                                      commonPrefix(header, *one)));
      const auto s1 = turnOf(*one, shared, *generation, endOfTurn, reasoning);
      if (!s1)
        continue;
      const std::vector<SlotAt> a = findSlots(*s1, 0, ids[0], 0);
      mappingRendered = mappingRendered || !argsText;
      if (a.empty())
        continue;
      text::ToolCallFormat f;
      f.argumentsAsText = argsText;
      f.idLength = style == 1 ? 9 : 0;
      std::vector<std::vector<std::string>> values(3);
      for (const SlotAt &x : a) {
        f.slots.push_back(x.slot);
        values[0].push_back(s1->substr(x.begin, x.end - x.begin));
      }
      const std::string opening = s1->substr(0, a.front().begin);
      const std::string closing = s1->substr(a.back().end);
      for (size_t k = 0; k <= a.size(); ++k) {
        if (k == 0 || k == a.size())
          f.literals.push_back(""); // filled below
        else
          f.literals.push_back(
              s1->substr(a[k - 1].end, a[k].begin - a[k - 1].end));
      }
      const auto two = tryRender(chat, turn(2), tools, false);
      const auto s2 =
          two && two->compare(0, shared, *one, 0, shared) == 0
              ? turnOf(*two, shared, *generation, endOfTurn, reasoning)
              : std::nullopt;
      const std::vector<SlotAt> b =
          s2 ? findSlots(*s2, 1, ids[1], a.back().end) : std::vector<SlotAt>{};
      if (b.size() == a.size() &&
          s2->compare(0, a.back().end, *s1, 0, a.back().end) == 0) {
        const std::string_view between = std::string_view(*s2).substr(
            a.back().end, b.front().begin - a.back().end);
        const size_t head =
            markerSuffix(opening, commonSuffix(opening, between));
        const std::string_view rest = between.substr(0, between.size() - head);
        const size_t tail = markerPrefix(closing, commonPrefix(closing, rest));
        f.literals.front() = opening.substr(opening.size() - head);
        f.literals.back() = closing.substr(0, tail);
        f.blockOpen = opening.substr(0, opening.size() - head);
        f.blockClose = closing.substr(tail);
        f.separator = std::string(rest.substr(tail));
        for (const SlotAt &x : b)
          values[1].push_back(s2->substr(x.begin, x.end - x.begin));
        if (rebuild(f, 2, values) != *s2)
          continue;
        // A third call must follow the same pattern (Command R numbers its
        // calls, which no slot describes: such a format takes one call).
        const auto three = tryRender(chat, turn(3), tools, false);
        const auto s3 =
            three && three->compare(0, shared, *one, 0, shared) == 0
                ? turnOf(*three, shared, *generation, endOfTurn, reasoning)
                : std::nullopt;
        values[2] = values[0];
        if (!s3 || rebuild(f, 3, values) != *s3) {
          f.parallel = false;
          f.separator.clear();
          f.literals.front() = opening.substr(f.blockOpen.size());
          f.literals.back() =
              closing.substr(0, closing.size() - f.blockClose.size());
        }
      } else {
        f.parallel = false;
        f.literals.front() = opening;
        f.literals.back() = closing;
      }
      if (rebuild(f, 1, values) != *s1 || f.opening().empty())
        continue;
      // The trigger: the opening's first marker (`<...>`, `[...]`), or
      // its text up to the JSON; none when the opening is the JSON.
      const std::string open = f.opening();
      if (open[0] != '{') {
        const char end = open[0] == '<' ? '>' : open[0] == '[' ? ']' : 0;
        size_t i = end ? open.find(end) : std::string::npos;
        if (i != std::string::npos) {
          ++i;
        } else {
          i = 1;
          while (i < open.size() && !isSpace(open[i]) && open[i] != '{' &&
                 open[i] != '[' && open[i] != '"')
            ++i;
        }
        f.trigger = open.substr(0, i);
      }
      return f;
    }
  return std::nullopt;
}

/// The one hand-written format: IBM Granite 3.x templates never render an
/// assistant's calls (history loses them), so no rendering can show the
/// format; their instructions name it: "<|tool_call|> followed by a JSON
/// list of tools used".
std::optional<text::ToolCallFormat> instructedFormat(const std::string &src) {
  if (src.find("<|tool_call|> followed by a JSON list") == std::string::npos)
    return std::nullopt;
  text::ToolCallFormat f;
  f.blockOpen = "<|tool_call|>[";
  f.literals = {"{\"name\": \"", "\", \"arguments\": ", "}"};
  f.slots = {text::ToolCallFormat::Slot::Name,
             text::ToolCallFormat::Slot::Arguments};
  f.separator = ", ";
  f.blockClose = "]";
  f.trigger = "<|tool_call|>";
  return f;
}

} // namespace

std::vector<std::string> ChatFormat::markers() const {
  std::vector<std::string> out;
  if (tools)
    for (const std::string *s :
         {&tools->blockOpen, &tools->separator, &tools->blockClose})
      out.push_back(*s);
  if (tools)
    out.insert(out.end(), tools->literals.begin(), tools->literals.end());
  if (reasoning) {
    out.push_back(reasoning->open);
    out.push_back(reasoning->close);
  }
  return out;
}

ChatFormat deriveChatFormat(const ChatTemplate &chat) {
  ChatFormat f;
  // The close marker is enough: a template that only strips reasoning from
  // history (DeepSeek R1's) still has a model that writes the block.
  for (const text::ReasoningMarkers &m : kReasoningPairs)
    if (chat.source().find(m.close) != std::string::npos) {
      f.reasoning = m;
      break;
    }
  f.tools = deriveToolFormat(chat, f.reasoning);
  if (!f.tools)
    f.tools = instructedFormat(chat.source());
  return f;
}

ReplyMarkup replyMarkup(const ChatFormat &format, const std::string &prompt,
                        bool withTools) {
  ReplyMarkup m;
  if (withTools && format.tools)
    m.tools = &*format.tools;
  if (!format.reasoning)
    return m;
  const text::ReasoningMarkers &r = *format.reasoning;
  const size_t open = prompt.rfind(r.open);
  const size_t close = prompt.rfind(r.close);
  if (open != std::string::npos &&
      (close == std::string::npos || close < open)) {
    m.reasoning = r;
    m.startsInReasoning = true;
  } else if (close == std::string::npos ||
             trimLeft(std::string_view(prompt).substr(close + r.close.size()))
                     .size() != 0) {
    m.reasoning = r;
  }
  return m;
}

json historyForTemplate(const json &messages,
                        const std::optional<text::ToolCallFormat> &format) {
  const bool asText = format && format->argumentsAsText;
  json out = json::array();
  for (json m : messages) {
    if (m.contains("role") && m["role"] == "developer")
      m["role"] = "system";
    if (m.contains("reasoning") && !m.contains("reasoning_content"))
      m["reasoning_content"] = m["reasoning"];
    if (m.contains("tool_calls") && m["tool_calls"].is_array())
      for (json &call : m["tool_calls"]) {
        if (!call.is_object())
          continue;
        if (!call.contains("type"))
          call["type"] = "function";
        if (!call.contains("function") || !call["function"].is_object())
          continue;
        json &args = call["function"]["arguments"];
        if (args.is_string() && !asText) {
          json parsed = json::parse(args.get<std::string>(), nullptr, false);
          if (parsed.is_object())
            args = std::move(parsed);
        } else if (args.is_object() && asText) {
          args = args.dump();
        }
      }
    out.push_back(std::move(m));
  }
  return out;
}

} // namespace llmc
