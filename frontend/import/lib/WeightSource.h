//===- WeightSource.h - The tensors of a checkpoint, by name --*- C++ -*-===//
#pragma once

#include "llmc/weights/gguf.h"
#include "llmc/weights/safetensors.h"

#include <memory>
#include <optional>
#include <set>
#include <string>

namespace llmc::import {

/// Safetensors (single or sharded) or GGUF tensors behind one lookup that
/// checks what the graph asks for and remembers what it used.
class WeightSource {
public:
  static WeightSource safetensors(const std::string &dir);
  static WeightSource gguf(std::shared_ptr<weights::GGUFFile> file);

  bool isGGUF() const { return gguf_ != nullptr; }
  const std::string &location() const { return location_; }
  bool contains(const std::string &name) const;
  /// The tensor `name`, or null; not marked used.
  const weights::TensorRef *find(const std::string &name) const;

  /// The tensor `name`, checked to exist with `shape` (as stored) and a dtype
  /// the compiler can convert; errors name the tensor and the file.
  const weights::TensorRef &require(const std::string &name,
                                    const std::vector<int64_t> &shape);

  /// Throws for the first tensor in the checkpoint no graph op used, unless
  /// it is a known buffer (`ignorable` returns true).
  void checkAllUsed(const std::string &architecture,
                    bool (*ignorable)(const std::string &)) const;

private:
  std::vector<std::string> names() const;

  std::optional<weights::Checkpoint> checkpoint_;
  std::shared_ptr<weights::GGUFFile> gguf_;
  std::string location_;
  std::set<std::string> used_;
};

} // namespace llmc::import
