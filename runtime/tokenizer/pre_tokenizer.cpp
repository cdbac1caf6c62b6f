#include "pre_tokenizer.h"

#include "byte_level.h"
#include "normalizer.h"
#include "regex.h"

#include "llmc/support/error.h"

namespace llmc::tok::detail {

namespace {

class Sequence : public PreTokenizer {
public:
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  void apply(std::vector<std::string> &words, bool startOfText) const override {
    for (const auto &step : steps)
      step->apply(words, startOfText);
  }
};

class RegexSplit : public PreTokenizer {
public:
  RegexSplit(std::shared_ptr<Regex> regex, SplitBehavior behavior, bool invert)
      : regex_(std::move(regex)), behavior_(behavior), invert_(invert) {}

  void apply(std::vector<std::string> &words, bool) const override {
    std::vector<std::string> out;
    for (const std::string &word : words)
      splitOne(word, out);
    words = std::move(out);
  }

private:
  struct Span {
    size_t begin, end;
    bool match;
  };

  void splitOne(const std::string &word, std::vector<std::string> &out) const {
    std::vector<Span> spans;
    size_t pos = 0;
    for (auto [begin, end] : regex_->findAll(word)) {
      if (begin > pos)
        spans.push_back({pos, begin, invert_});
      spans.push_back({begin, end, !invert_});
      pos = end;
    }
    if (pos < word.size())
      spans.push_back({pos, word.size(), invert_});

    std::string pending; // for MergedWithNext / Contiguous
    bool pendingMatch = false;
    auto flush = [&] {
      if (!pending.empty())
        out.push_back(std::move(pending));
      pending.clear();
    };
    for (const Span &s : spans) {
      std::string piece = word.substr(s.begin, s.end - s.begin);
      switch (behavior_) {
      case SplitBehavior::Removed:
        if (!s.match)
          out.push_back(std::move(piece));
        break;
      case SplitBehavior::Isolated:
        out.push_back(std::move(piece));
        break;
      case SplitBehavior::MergedWithPrevious:
        // A match joins the word before it unless that word already ends
        // with a match.
        if (s.match && !pending.empty() && !pendingMatch) {
          pending += piece;
          pendingMatch = true;
        } else {
          flush();
          pending = std::move(piece);
          pendingMatch = s.match;
        }
        break;
      case SplitBehavior::MergedWithNext:
        if (s.match) {
          flush();
          pending = std::move(piece);
        } else {
          pending += piece;
          flush();
        }
        break;
      case SplitBehavior::Contiguous:
        if (s.match && pendingMatch) {
          pending += piece;
        } else {
          flush();
          pending = std::move(piece);
          pendingMatch = s.match;
        }
        break;
      }
    }
    flush();
  }

  std::shared_ptr<Regex> regex_;
  SplitBehavior behavior_;
  bool invert_;
};

class ByteLevel : public PreTokenizer {
public:
  ByteLevel(std::shared_ptr<Regex> regex, bool addPrefixSpace)
      : regex_(std::move(regex)), addPrefixSpace_(addPrefixSpace) {}
  void apply(std::vector<std::string> &words, bool) const override {
    std::vector<std::string> out;
    for (std::string &word : words) {
      if (addPrefixSpace_ && (word.empty() || word[0] != ' '))
        word.insert(word.begin(), ' ');
      if (!regex_) {
        out.emplace_back();
        appendByteLevel(out.back(), word);
        continue;
      }
      // Isolated split: matches and the gaps between them are all words.
      size_t pos = 0;
      auto emit = [&](size_t begin, size_t end) {
        out.emplace_back();
        appendByteLevel(out.back(),
                        std::string_view(word).substr(begin, end - begin));
      };
      for (auto [begin, end] : regex_->findAll(word)) {
        if (begin > pos)
          emit(pos, begin);
        emit(begin, end);
        pos = end;
      }
      if (pos < word.size())
        emit(pos, word.size());
    }
    words = std::move(out);
  }

private:
  std::shared_ptr<Regex> regex_;
  bool addPrefixSpace_;
};

class Metaspace : public PreTokenizer {
public:
  std::string replacement = "\xE2\x96\x81"; // U+2581 '▁'
  enum class Prepend { Always, First, Never } prepend = Prepend::Always;
  bool split = true;

  void apply(std::vector<std::string> &words, bool startOfText) const override {
    std::vector<std::string> out;
    for (size_t i = 0; i < words.size(); ++i) {
      std::string word = replaceAll(words[i], " ", replacement);
      bool add = prepend == Prepend::Always ||
                 (prepend == Prepend::First && startOfText && i == 0);
      if (add && word.compare(0, replacement.size(), replacement) != 0)
        word.insert(0, replacement);
      if (!split) {
        out.push_back(std::move(word));
        continue;
      }
      // MergedWithNext on the replacement: each word starts with it.
      size_t begin = 0;
      for (size_t hit = word.find(replacement, 1); hit != std::string::npos;
           hit = word.find(replacement, hit + replacement.size())) {
        if (hit > begin)
          out.push_back(word.substr(begin, hit - begin));
        begin = hit;
      }
      if (begin < word.size())
        out.push_back(word.substr(begin));
    }
    words = std::move(out);
  }
};

SplitBehavior parseBehavior(const std::string &name,
                            const std::string &origin) {
  if (name == "Removed")
    return SplitBehavior::Removed;
  if (name == "Isolated")
    return SplitBehavior::Isolated;
  if (name == "MergedWithPrevious")
    return SplitBehavior::MergedWithPrevious;
  if (name == "MergedWithNext")
    return SplitBehavior::MergedWithNext;
  if (name == "Contiguous")
    return SplitBehavior::Contiguous;
  throw Error(origin + ": unsupported Split behavior '" + name + "'");
}

std::unique_ptr<PreTokenizer> regexSplit(const char *pattern,
                                         SplitBehavior behavior, bool invert,
                                         const std::string &origin) {
  return makeRegexSplit(std::make_shared<Regex>(pattern, false, origin),
                        behavior, invert);
}

std::unique_ptr<PreTokenizer> make(const json &spec,
                                   const std::string &origin) {
  std::string type = typeOf(spec);
  if (type == "Sequence") {
    auto seq = std::make_unique<Sequence>();
    for (const json &item : spec.at("pretokenizers"))
      seq->steps.push_back(make(item, origin));
    return seq;
  }
  if (type == "ByteLevel") {
    std::shared_ptr<Regex> regex;
    if (getBool(spec, "use_regex", true))
      regex = std::make_shared<Regex>(kGpt2Pattern, false, origin);
    return makeByteLevel(regex, getBool(spec, "add_prefix_space", true));
  }
  if (type == "Split") {
    const json &pattern = spec.at("pattern");
    bool literal = pattern.contains("String");
    std::string text =
        pattern.at(literal ? "String" : "Regex").get<std::string>();
    return makeRegexSplit(
        std::make_shared<Regex>(text, literal, origin),
        parseBehavior(getString(spec, "behavior", "Isolated"), origin),
        getBool(spec, "invert", false));
  }
  if (type == "Metaspace") {
    auto m = std::make_unique<Metaspace>();
    m->replacement = getString(spec, "replacement", m->replacement);
    if (m->replacement.empty())
      throw Error(origin + ": Metaspace replacement is empty");
    std::string scheme = getString(spec, "prepend_scheme", "");
    if (scheme.empty())
      m->prepend = getBool(spec, "add_prefix_space", true)
                       ? Metaspace::Prepend::Always
                       : Metaspace::Prepend::Never;
    else if (scheme == "always")
      m->prepend = Metaspace::Prepend::Always;
    else if (scheme == "first")
      m->prepend = Metaspace::Prepend::First;
    else if (scheme == "never")
      m->prepend = Metaspace::Prepend::Never;
    else
      throw Error(origin + ": unsupported Metaspace prepend_scheme '" + scheme +
                  "'");
    m->split = getBool(spec, "split", true);
    return m;
  }
  if (type == "Digits")
    return getBool(spec, "individual_digits", false)
               ? regexSplit(R"(\p{N})", SplitBehavior::Isolated, false, origin)
               : regexSplit(R"(\p{N}+)", SplitBehavior::Isolated, false,
                            origin);
  if (type == "Whitespace")
    return regexSplit(R"(\w+|[^\w\s]+)", SplitBehavior::Removed, true, origin);
  if (type == "WhitespaceSplit")
    return regexSplit(R"(\s+)", SplitBehavior::Removed, false, origin);
  if (type == "Punctuation")
    return regexSplit(
        R"(\p{P})",
        parseBehavior(getString(spec, "behavior", "Isolated"), origin), false,
        origin);
  throw Error(origin + ": unsupported pre_tokenizer '" + type +
              "'; supported: ByteLevel, Split, Metaspace, Digits, Whitespace, "
              "WhitespaceSplit, Punctuation, Sequence");
}

} // namespace

std::unique_ptr<PreTokenizer> makeRegexSplit(std::shared_ptr<Regex> regex,
                                             SplitBehavior behavior,
                                             bool invert) {
  return std::make_unique<RegexSplit>(std::move(regex), behavior, invert);
}

std::unique_ptr<PreTokenizer> makeByteLevel(std::shared_ptr<Regex> regex,
                                            bool addPrefixSpace) {
  return std::make_unique<ByteLevel>(std::move(regex), addPrefixSpace);
}

std::unique_ptr<PreTokenizer> makePreTokenizer(const json &spec,
                                               const std::string &origin) {
  if (spec.is_null())
    return nullptr;
  return make(spec, origin);
}

} // namespace llmc::tok::detail
