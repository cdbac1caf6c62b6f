//===- grammar_cache.cpp - Compiled grammars by source --------------------===//
#include "llmc/grammar/grammar_cache.h"

#include "llmc/grammar/gbnf.h"
#include "llmc/grammar/json_schema.h"

#include <algorithm>

namespace llmc::grammar {

Grammar grammarOf(SourceKind kind, const std::string &source,
                  const std::string &origin, const JsonSchemaOptions &options) {
  switch (kind) {
  case SourceKind::JsonSchema:
    return grammarFromJsonSchema(source, origin, options);
  case SourceKind::Gbnf:
    return parseGbnf(source, origin);
  case SourceKind::AnyJson:
  case SourceKind::JsonObject:
    break;
  }
  return grammarForJson(kind == SourceKind::JsonObject);
}

std::shared_ptr<const CompiledGrammar>
compileGrammar(SourceKind kind, const std::string &source,
               const std::string &origin,
               std::shared_ptr<const TokenVocabulary> vocabulary,
               const JsonSchemaOptions &options) {
  return std::make_shared<CompiledGrammar>(
      grammarOf(kind, source, origin, options), std::move(vocabulary));
}

GrammarCache::GrammarCache(std::shared_ptr<const TokenVocabulary> vocabulary,
                           size_t capacity)
    : vocab_(std::move(vocabulary)), capacity_(std::max<size_t>(capacity, 1)) {}

std::shared_ptr<const CompiledGrammar>
GrammarCache::find(const std::string &key) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->key == key) {
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front().grammar;
    }
  return nullptr;
}

void GrammarCache::insert(const std::string &key,
                          std::shared_ptr<const CompiledGrammar> grammar) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_front({key, std::move(grammar)});
  while (entries_.size() > capacity_)
    entries_.pop_back();
}

std::shared_ptr<const CompiledGrammar>
GrammarCache::get(SourceKind kind, const std::string &source,
                  const std::string &origin, const JsonSchemaOptions &options) {
  const std::string key =
      std::to_string(static_cast<int>(kind)) +
      (kind == SourceKind::JsonSchema && options.strictObjects ? "s:" : ":") +
      (kind == SourceKind::JsonSchema || kind == SourceKind::Gbnf ? source
                                                                  : "");
  if (auto hit = find(key))
    return hit;
  // Compiled outside the lock: other requests go on meanwhile.
  auto compiled = compileGrammar(kind, source, origin, vocab_, options);
  insert(key, compiled);
  return compiled;
}

std::shared_ptr<const CompiledGrammar>
GrammarCache::get(const std::string &key,
                  const std::function<Grammar()> &build) {
  const std::string k = "built:" + key;
  if (auto hit = find(k))
    return hit;
  auto compiled = std::make_shared<CompiledGrammar>(build(), vocab_);
  insert(k, compiled);
  return compiled;
}

} // namespace llmc::grammar
