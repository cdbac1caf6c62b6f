//===- safetensors.h - Hugging Face safetensors checkpoints ----*- C++ -*-===//
//
// Reads .safetensors files zero-copy (mmap) and HF checkpoint directories,
// single-file or sharded through model.safetensors.index.json. Every header
// field is validated; bad input throws llmc::Error naming file and tensor.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/weights/tensor.h"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace llmc {
class MappedFile;
}

namespace llmc::weights {

/// Parses an in-memory safetensors file (header + data). The returned tensors
/// point into `data`, which must outlive them. `fileName` is for messages.
std::vector<TensorRef>
parseSafetensors(const uint8_t *data, size_t size, const std::string &fileName,
                 std::map<std::string, std::string> *metadata = nullptr);

/// One .safetensors file, mmapped for the lifetime of the object.
class SafetensorsFile {
public:
  explicit SafetensorsFile(const std::string &path);
  ~SafetensorsFile();
  SafetensorsFile(SafetensorsFile &&) noexcept;
  SafetensorsFile &operator=(SafetensorsFile &&) noexcept;

  const std::string &path() const;
  /// In data-offset order (the order HF writes them).
  const std::vector<TensorRef> &tensors() const { return tensors_; }
  const TensorRef *find(std::string_view name) const;
  /// The `__metadata__` string map (empty if absent).
  const std::map<std::string, std::string> &metadata() const {
    return metadata_;
  }

private:
  std::unique_ptr<MappedFile> file_;
  std::vector<TensorRef> tensors_;
  std::map<std::string, std::string> metadata_;
};

/// An HF checkpoint's weights: DIR/model.safetensors, or the shards listed by
/// DIR/model.safetensors.index.json (each listed file must exist and hold the
/// tensors mapped to it; a tensor in two shards is an error). A path to a
/// single .safetensors file is accepted too.
/// The tensors Hugging Face's MXFP4 pairs among `byName` stand for: each
/// `X_blocks` (uint8 [.., G, 16]) with its `X_scales` (uint8 [.., G]) as one
/// MXFP4 tensor X [.., 32·G] (TensorRef::scales), pointing into theirs.
/// Throws llmc::Error naming both tensors for a pair that does not fit
/// (a scale byte of 255 included).
std::vector<std::unique_ptr<TensorRef>> joinMxfp4Pairs(
    const std::map<std::string, const TensorRef *, std::less<>> &byName);

class Checkpoint {
public:
  /// Each pair `X_blocks` + `X_scales` (uint8, Hugging Face's MXFP4) is
  /// also listed as one MXFP4 tensor `X` of the logical shape [.., 32·G];
  /// a pair that does not fit throws naming both tensors.
  static Checkpoint open(const std::string &dir);

  const TensorRef *find(std::string_view name) const;
  /// Sorted.
  std::vector<std::string> names() const;
  /// The files read, in load order.
  std::vector<std::string> files() const;

private:
  void joinMxfp4Pairs();

  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::vector<std::unique_ptr<TensorRef>> joined_; // MXFP4 pairs
  std::map<std::string, const TensorRef *, std::less<>> byName_;
};

} // namespace llmc::weights
