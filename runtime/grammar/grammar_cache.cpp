//===- grammar_cache.cpp - Compiled grammars by source --------------------===//
#include "llmc/grammar/grammar_cache.h"

#include "llmc/grammar/gbnf.h"
#include "llmc/grammar/json_schema.h"

#include <algorithm>

namespace llmc::grammar {

std::shared_ptr<const CompiledGrammar>
compileGrammar(SourceKind kind, const std::string &source,
               const std::string &origin,
               std::shared_ptr<const TokenVocabulary> vocabulary) {
  Grammar g;
  switch (kind) {
  case SourceKind::JsonSchema:
    g = grammarFromJsonSchema(source, origin);
    break;
  case SourceKind::Gbnf:
    g = parseGbnf(source, origin);
    break;
  case SourceKind::AnyJson:
  case SourceKind::JsonObject:
    g = grammarForJson(kind == SourceKind::JsonObject);
    break;
  }
  return std::make_shared<CompiledGrammar>(std::move(g), std::move(vocabulary));
}

GrammarCache::GrammarCache(std::shared_ptr<const TokenVocabulary> vocabulary,
                           size_t capacity)
    : vocab_(std::move(vocabulary)), capacity_(std::max<size_t>(capacity, 1)) {}

std::shared_ptr<const CompiledGrammar>
GrammarCache::get(SourceKind kind, const std::string &source,
                  const std::string &origin) {
  const std::string key =
      std::to_string(static_cast<int>(kind)) + ":" +
      (kind == SourceKind::JsonSchema || kind == SourceKind::Gbnf ? source
                                                                  : "");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->key == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return entries_.front().grammar;
      }
  }
  // Compiled outside the lock: other requests go on meanwhile.
  auto compiled = compileGrammar(kind, source, origin, vocab_);
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_front({key, compiled});
  while (entries_.size() > capacity_)
    entries_.pop_back();
  return compiled;
}

} // namespace llmc::grammar
