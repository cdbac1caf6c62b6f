#include "normalizer.h"

#include "regex.h"

#include "llmc/support/error.h"

#include <vector>

#ifdef LLMC_TOKENIZER_HAVE_ICU
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/unistr.h>
#endif

namespace llmc::tok::detail {

std::string replaceAll(std::string_view text, std::string_view from,
                       std::string_view to) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    size_t hit = from.empty() ? std::string_view::npos : text.find(from, pos);
    if (hit == std::string_view::npos)
      break;
    out.append(text.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(text.substr(pos));
  return out;
}

namespace {

class Sequence : public Normalizer {
public:
  std::vector<std::unique_ptr<Normalizer>> steps;
  std::string apply(std::string_view text) const override {
    std::string s(text);
    for (const auto &step : steps)
      s = step->apply(s);
    return s;
  }
};

class ReplaceString : public Normalizer {
public:
  std::string from, to;
  std::string apply(std::string_view text) const override {
    return replaceAll(text, from, to);
  }
};

class ReplaceRegex : public Normalizer {
public:
  ReplaceRegex(const std::string &pattern, std::string to,
               const std::string &origin)
      : regex(pattern, false, origin), to(std::move(to)) {}
  Regex regex;
  std::string to;
  std::string apply(std::string_view text) const override {
    std::string out;
    size_t pos = 0;
    for (auto [begin, end] : regex.findAll(text)) {
      out.append(text.substr(pos, begin - pos));
      out.append(to);
      pos = end;
    }
    out.append(text.substr(pos));
    return out;
  }
};

class Affix : public Normalizer {
public:
  std::string text;
  bool prepend = true;
  std::string apply(std::string_view input) const override {
    if (input.empty())
      return {};
    return prepend ? text + std::string(input) : std::string(input) + text;
  }
};

class Strip : public Normalizer {
public:
  bool left = true, right = true;
  std::string apply(std::string_view text) const override {
    auto space = [](char c) {
      return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
             c == '\f';
    };
    size_t begin = 0, end = text.size();
    while (left && begin < end && space(text[begin]))
      ++begin;
    while (right && end > begin && space(text[end - 1]))
      --end;
    return std::string(text.substr(begin, end - begin));
  }
};

#ifdef LLMC_TOKENIZER_HAVE_ICU
class Unicode : public Normalizer {
public:
  explicit Unicode(const icu::Normalizer2 *n) : normalizer(n) {}
  const icu::Normalizer2 *normalizer;
  std::string apply(std::string_view text) const override {
    UErrorCode status = U_ZERO_ERROR;
    icu::UnicodeString in = icu::UnicodeString::fromUTF8(
        icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
    icu::UnicodeString out = normalizer->normalize(in, status);
    if (U_FAILURE(status))
      return std::string(text);
    std::string result;
    out.toUTF8String(result);
    return result;
  }
};

class Lowercase : public Normalizer {
public:
  std::string apply(std::string_view text) const override {
    icu::UnicodeString s = icu::UnicodeString::fromUTF8(
        icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
    s.toLower(icu::Locale::getRoot());
    std::string result;
    s.toUTF8String(result);
    return result;
  }
};

const icu::Normalizer2 *icuNormalizer(const std::string &type) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2 *n = nullptr;
  if (type == "NFC")
    n = icu::Normalizer2::getNFCInstance(status);
  else if (type == "NFD")
    n = icu::Normalizer2::getNFDInstance(status);
  else if (type == "NFKC")
    n = icu::Normalizer2::getNFKCInstance(status);
  else if (type == "NFKD")
    n = icu::Normalizer2::getNFKDInstance(status);
  return U_SUCCESS(status) ? n : nullptr;
}
#endif

std::unique_ptr<Normalizer> make(const json &spec, const std::string &origin) {
  std::string type = typeOf(spec);
  if (type == "Sequence") {
    auto seq = std::make_unique<Sequence>();
    const json &list = spec.at("normalizers");
    for (const json &item : list)
      if (auto step = make(item, origin))
        seq->steps.push_back(std::move(step));
    return seq;
  }
  if (type == "Replace") {
    const json &pattern = spec.at("pattern");
    std::string content = spec.at("content").get<std::string>();
    if (pattern.contains("String")) {
      auto r = std::make_unique<ReplaceString>();
      r->from = pattern.at("String").get<std::string>();
      r->to = content;
      return r;
    }
    return std::make_unique<ReplaceRegex>(
        pattern.at("Regex").get<std::string>(), content, origin);
  }
  if (type == "Prepend" || type == "Append") {
    auto a = std::make_unique<Affix>();
    a->prepend = type == "Prepend";
    a->text =
        spec.at(type == "Prepend" ? "prepend" : "append").get<std::string>();
    return a;
  }
  if (type == "Strip") {
    auto s = std::make_unique<Strip>();
    s->left = getBool(spec, "strip_left", true);
    s->right = getBool(spec, "strip_right", true);
    return s;
  }
#ifdef LLMC_TOKENIZER_HAVE_ICU
  if (const icu::Normalizer2 *n = icuNormalizer(type))
    return std::make_unique<Unicode>(n);
  if (type == "Lowercase")
    return std::make_unique<Lowercase>();
#endif
  throw Error(origin + ": unsupported normalizer '" + type +
              "'; supported: Sequence, Replace, Prepend, Append, Strip"
#ifdef LLMC_TOKENIZER_HAVE_ICU
              ", NFC, NFD, NFKC, NFKD, Lowercase"
#endif
  );
}

} // namespace

std::unique_ptr<Normalizer> makeNormalizer(const json &spec,
                                           const std::string &origin) {
  if (spec.is_null())
    return nullptr;
  return make(spec, origin);
}

} // namespace llmc::tok::detail
