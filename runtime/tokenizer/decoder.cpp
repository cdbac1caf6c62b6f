#include "decoder.h"

#include "byte_level.h"
#include "normalizer.h"

#include "llmc/support/error.h"

namespace llmc::tok::detail {

namespace {

class Sequence : public Decoder {
public:
  std::vector<std::unique_ptr<Decoder>> steps;
  void apply(std::vector<std::string> &tokens, bool atStart) const override {
    for (const auto &step : steps)
      step->apply(tokens, atStart);
  }
};

class ByteLevel : public Decoder {
public:
  void apply(std::vector<std::string> &tokens, bool) const override {
    for (std::string &t : tokens)
      t = fromByteLevel(t);
  }
};

class Metaspace : public Decoder {
public:
  std::string replacement;
  bool stripFirst = true;
  void apply(std::vector<std::string> &tokens, bool atStart) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      tokens[i] = replaceAll(tokens[i], replacement, " ");
      if (i == 0 && atStart && stripFirst && !tokens[i].empty() &&
          tokens[i][0] == ' ')
        tokens[i].erase(0, 1);
    }
  }
};

class Replace : public Decoder {
public:
  std::string from, to;
  void apply(std::vector<std::string> &tokens, bool) const override {
    for (std::string &t : tokens)
      t = replaceAll(t, from, to);
  }
};

class ByteFallback : public Decoder {
public:
  void apply(std::vector<std::string> &tokens, bool) const override {
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9')
        return c - '0';
      if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
      if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
      return -1;
    };
    for (std::string &t : tokens) {
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' &&
          hex(t[3]) >= 0 && hex(t[4]) >= 0)
        t = std::string(1, static_cast<char>(hex(t[3]) * 16 + hex(t[4])));
    }
  }
};

class Fuse : public Decoder {
public:
  void apply(std::vector<std::string> &tokens, bool) const override {
    std::string all;
    for (const std::string &t : tokens)
      all += t;
    tokens.assign(1, std::move(all));
  }
};

// Hugging Face strips up to `start` leading / `stop` trailing copies of
// `content` from each token; after a Fuse that is the whole text, so in the
// middle of a stream (atStart false) nothing is at the text's start.
class Strip : public Decoder {
public:
  std::string content;
  size_t start = 0, stop = 0;
  bool afterFuse = false;
  void apply(std::vector<std::string> &tokens, bool atStart) const override {
    if (content.empty())
      return;
    for (std::string &t : tokens) {
      if (!afterFuse || atStart)
        for (size_t i = 0;
             i < start && t.compare(0, content.size(), content) == 0; ++i)
          t.erase(0, content.size());
      if (!afterFuse)
        for (size_t i = 0;
             i < stop && t.size() >= content.size() &&
             t.compare(t.size() - content.size(), content.size(), content) == 0;
             ++i)
          t.erase(t.size() - content.size());
    }
  }
};

std::unique_ptr<Decoder> make(const json &spec, const std::string &origin,
                              bool &fused) {
  std::string type = typeOf(spec);
  if (type == "Sequence") {
    auto seq = std::make_unique<Sequence>();
    for (const json &item : spec.at("decoders"))
      seq->steps.push_back(make(item, origin, fused));
    return seq;
  }
  if (type == "ByteLevel")
    return std::make_unique<ByteLevel>();
  if (type == "Metaspace") {
    auto m = std::make_unique<Metaspace>();
    m->replacement = getString(spec, "replacement", "\xE2\x96\x81");
    std::string scheme = getString(spec, "prepend_scheme", "");
    m->stripFirst = scheme.empty() ? getBool(spec, "add_prefix_space", true)
                                   : scheme != "never";
    if (m->replacement.empty())
      throw Error(origin + ": Metaspace replacement is empty");
    return m;
  }
  if (type == "Replace") {
    const json &pattern = spec.at("pattern");
    if (!pattern.contains("String"))
      throw Error(origin + ": unsupported decoder 'Replace' with a Regex "
                           "pattern");
    auto r = std::make_unique<Replace>();
    r->from = pattern.at("String").get<std::string>();
    r->to = spec.at("content").get<std::string>();
    return r;
  }
  if (type == "ByteFallback")
    return std::make_unique<ByteFallback>();
  if (type == "Fuse") {
    fused = true;
    return std::make_unique<Fuse>();
  }
  if (type == "Strip") {
    auto s = std::make_unique<Strip>();
    s->content = spec.at("content").get<std::string>();
    s->start = spec.at("start").get<size_t>();
    s->stop = spec.at("stop").get<size_t>();
    s->afterFuse = fused;
    return s;
  }
  throw Error(origin + ": unsupported decoder '" + type +
              "'; supported: ByteLevel, Metaspace, Replace, ByteFallback, "
              "Fuse, Strip, Sequence");
}

} // namespace

std::unique_ptr<Decoder> makeDecoder(const json &spec,
                                     const std::string &origin) {
  if (spec.is_null())
    return nullptr;
  bool fused = false;
  return make(spec, origin, fused);
}

} // namespace llmc::tok::detail
