//===- grammar_cache.h - Compiled grammars shared by requests ---*- C++ -*-===//
//
// Compiling a schema and warming its masks costs milliseconds; a warm
// grammar's masks cost microseconds. Requests with the same schema or
// grammar (a server's clients mostly send a few) share one CompiledGrammar;
// the least recently used goes past `capacity`. Thread-safe: connection
// threads compile, the engine thread masks.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/grammar/json_schema.h"
#include "llmc/grammar/matcher.h"

#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>

namespace llmc::grammar {

enum class SourceKind { JsonSchema, Gbnf, AnyJson, JsonObject };

class GrammarCache {
public:
  explicit GrammarCache(std::shared_ptr<const TokenVocabulary> vocabulary,
                        size_t capacity = 32);

  /// The grammar of `source` (schema text, GBNF text; ignored for AnyJson
  /// and JsonObject; `options` for schemas). Throws llmc::Error from the
  /// front end, its messages starting with `origin`.
  std::shared_ptr<const CompiledGrammar>
  get(SourceKind kind, const std::string &source, const std::string &origin,
      const JsonSchemaOptions &options = {});

  /// A grammar built by `build` (a tool call's), cached under `key`.
  std::shared_ptr<const CompiledGrammar>
  get(const std::string &key, const std::function<Grammar()> &build);

  const std::shared_ptr<const TokenVocabulary> &vocabulary() const {
    return vocab_;
  }

private:
  std::shared_ptr<const CompiledGrammar> find(const std::string &key);
  void insert(const std::string &key,
              std::shared_ptr<const CompiledGrammar> grammar);
  struct Entry {
    std::string key;
    std::shared_ptr<const CompiledGrammar> grammar;
  };
  std::shared_ptr<const TokenVocabulary> vocab_;
  size_t capacity_;
  std::mutex mutex_;
  std::list<Entry> entries_; // most recent first
};

/// The grammar a source asks for (throws as get() does).
Grammar grammarOf(SourceKind kind, const std::string &source,
                  const std::string &origin,
                  const JsonSchemaOptions &options = {});

/// The grammar a source asks for, compiled over `vocabulary` (no cache).
std::shared_ptr<const CompiledGrammar>
compileGrammar(SourceKind kind, const std::string &source,
               const std::string &origin,
               std::shared_ptr<const TokenVocabulary> vocabulary,
               const JsonSchemaOptions &options = {});

} // namespace llmc::grammar
