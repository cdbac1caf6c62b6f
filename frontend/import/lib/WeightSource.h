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

  /// Serves a multimodal checkpoint's language model under a text model's
  /// names: "model.X" is read from `modelPrefix` + "X" and
  /// "lm_head.weight" from `head`; tensors outside them (the vision tower,
  /// the projector) are not the graph's and checkAllUsed passes over them.
  void useTextModel(std::string modelPrefix, std::string head);

  /// Throws for the first tensor in the checkpoint no graph op used, unless
  /// it is a known buffer (`ignorable` returns true).
  void checkAllUsed(const std::string &architecture,
                    bool (*ignorable)(const std::string &)) const;

  /// The name the checkpoint stores `name` under (useTextModel); the
  /// graph's params carry it, so the plan writer finds the tensor.
  std::string stored(const std::string &name) const;

private:
  std::vector<std::string> names() const;

  std::optional<weights::Checkpoint> checkpoint_;
  std::shared_ptr<weights::GGUFFile> gguf_;
  std::string location_;
  std::set<std::string> used_;
  std::string textPrefix_, textHead_;
};

} // namespace llmc::import
