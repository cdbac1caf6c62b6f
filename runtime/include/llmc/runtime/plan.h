//===- plan.h - Plan files: writing and loading ----------------*- C++ -*-===//
//
// A plan is [64-byte header][FlatBuffer (runtime/plan/plan.fbs)][padding to
// 4096][weights, each 64-byte aligned]. The header holds the "LLMCPLAN"
// magic, the format major/minor, the offsets and sizes of the parts and a
// checksum of everything after the header. Weights are mapped read-only and
// zero-copy.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/graph.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmc {

class MappedFile;

constexpr uint32_t kPlanFormatMajor = 1;
// 1.1: the metadata checksum; 1.2: the MoE and parameter counts of Config;
// 1.3: tokenizer.json stored compiled (tokenizer kind "hf-tables");
// 1.4: tensor parallelism (Config.tp, Weight.rank_offsets).
constexpr uint32_t kPlanFormatMinor = 4;

/// Everything the runtime needs to know about the model, without a
/// checkpoint.
struct PlanConfig {
  std::string architecture;
  int64_t vocabSize = 0, hiddenSize = 0, numLayers = 0, numHeads = 0,
          numKVHeads = 0, headDim = 0, intermediateSize = 0, contextLength = 0;
  std::optional<int64_t> bosTokenId;
  std::vector<int64_t> eosTokenIds;
  std::string target;            // ref | cpu | cuda
  std::string computeDtype;      // f32 | bf16 | f16
  std::string quantization;      // none | int8 | int4
  llmc_dtype kvDtype = LLMC_F32; // the default; a run may choose another
  std::string compilerVersion;
  /// Mixture of experts: 0 experts = dense. moeLayers of numLayers are
  /// sparse (the others have a dense MLP of intermediateSize).
  int64_t numExperts = 0, expertsPerToken = 0, expertIntermediateSize = 0,
          moeLayers = 0;
  /// Logical weight values, and those one token's forward pass uses (0 in a
  /// plan older than format 1.2).
  int64_t totalParameters = 0, activeParameters = 0;
  /// Tensor-parallel ranks (llmc compile --tp) and the kv heads each rank's
  /// cache holds (0: numKVHeads, as when tp is 1).
  int64_t tp = 1, kvHeadsPerRank = 0;
  int64_t rankKvHeads() const {
    return kvHeadsPerRank > 0 ? kvHeadsPerRank : numKVHeads;
  }
};

/// Bytes of K and V one token takes over every layer with the cache in
/// `kvDtype` (backend.h's layout: an i8 or fp8 row carries an f32 scale per
/// kv head) on one rank (its kvHeadsPerRank); 0 for a dtype the cache
/// cannot hold.
uint64_t kvBytesPerToken(const PlanConfig &c, llmc_dtype kvDtype);

/// A --kv-dtype value (f32, bf16, f16, int8, fp8); the error names `flag`.
llmc_dtype parseKvDtype(const std::string &value, const std::string &flag);

/// The tokenizer as the plan carries it: the file's bytes, so a plan runs
/// without the checkpoint folder.
struct PlanTokenizer {
  // hf-tables (tokenizer.json compiled: tok::compileTokenizerJson) |
  // hf-json (plans before 1.2) | sentencepiece | gguf | none
  std::string kind;
  /// tokenizer.json's tables / tokenizer.model / GGUF vocab (JSON): what a
  /// plan being written holds. A loaded plan leaves it empty and views its
  /// mapping instead (`mapped`, valid while the Plan lives): bytes() is
  /// either.
  std::string fileBytes;
  std::string_view mapped;
  std::string configJson;   // tokenizer_config.json ("" if none)
  std::string chatTemplate; // "" if none

  std::string_view bytes() const {
    return mapped.data() ? mapped : std::string_view(fileBytes);
  }
};

struct WeightInfo {
  std::string name;
  llmc_dtype dtype = LLMC_F32;
  std::vector<int64_t> shape;
  uint64_t offset = 0; // from the start of the weight section
  uint64_t nbytes = 0;
  /// Split over tp ranks: rank r's slice (nbytes) at rankOffsets[r]; empty
  /// when every rank reads the one copy at offset.
  std::vector<uint64_t> rankOffsets;
};

/// How far PlanWriter::write is: weights and weight bytes.
struct WriteProgress {
  size_t weightsDone = 0, weightsTotal = 0;
  uint64_t bytesDone = 0, bytesTotal = 0;
};
using WriteProgressFn = std::function<void(const WriteProgress &)>;

class PlanWriter {
public:
  void setConfig(PlanConfig config);
  void setTokenizer(PlanTokenizer tokenizer);
  /// Adds a weight; `fill` writes exactly `nbytes` bytes when the file is
  /// written (so weights are converted one at a time, never all in memory).
  /// Returns its index, which graphs use as LLMC_OPERAND_WEIGHT.
  uint32_t addWeight(std::string name, llmc_dtype dtype,
                     std::vector<int64_t> shape, uint64_t nbytes,
                     std::function<void(uint8_t *dst)> fill);
  /// The same for a weight split over tp ranks: fill(rank, dst) writes rank
  /// r's slice (dtype, shape and nbytes are one rank's).
  uint32_t addSplitWeight(std::string name, llmc_dtype dtype,
                          std::vector<int64_t> shape, uint64_t nbytes,
                          int64_t tp,
                          std::function<void(int64_t rank, uint8_t *dst)> fill);
  void addGraph(Graph graph);
  /// Writes the plan under a temporary name, syncs it to disk and renames
  /// it, so no half-written file ever carries the name; `progress` is
  /// called after each weight. Throws llmc::Error naming the path.
  void write(const std::string &path,
             const WriteProgressFn &progress = {}) const;

private:
  PlanConfig config_;
  PlanTokenizer tokenizer_;
  struct PendingWeight {
    WeightInfo info;
    std::function<void(uint8_t *)> fill;
    std::function<void(int64_t, uint8_t *)> rankFill; // split weights
  };
  std::vector<PendingWeight> weights_;
  std::vector<Graph> graphs_;
};

struct PlanLoadOptions {
  /// The metadata checksum (graphs, config, tokenizer: small). Only the
  /// fuzzer, whose inputs would all fail it, turns it off; every structural
  /// check still runs.
  bool verifyChecksum = true;
  /// Also hash every weight byte: seconds for a GB-sized plan, so not before
  /// every run (`llmc inspect --verify`). Plans of format 1.0, which have
  /// only the whole-file checksum, are hashed whole when verifyChecksum.
  bool verifyWeights = false;
  /// The tensor-parallel rank whose weight slices graphDesc() points at;
  /// must be below the plan's tp.
  int64_t rank = 0;
};

/// A loaded plan. Loading checks, in order: magic, format major version, the
/// FlatBuffers verifier, every weight against the file size, the checksum;
/// any failure throws llmc::Error naming the file and what is wrong.
class Plan {
public:
  static std::unique_ptr<Plan> load(const std::string &path);
  static std::unique_ptr<Plan> load(const std::string &path,
                                    const PlanLoadOptions &options);
  /// Loads a plan image already in memory; `data` must be 8-byte aligned and
  /// outlive the Plan. `name` stands in for the path in messages.
  static std::unique_ptr<Plan>
  loadFromMemory(const uint8_t *data, size_t size, std::string name,
                 const PlanLoadOptions &options = {});
  ~Plan();

  const std::string &path() const { return path_; }
  const PlanConfig &config() const { return config_; }
  const PlanTokenizer &tokenizer() const { return tokenizer_; }
  /// Keeps the plan's mapping alive for what views it past the Plan (the
  /// tokenizer's tables); null for a plan loaded from memory.
  std::shared_ptr<const void> mappingOwner() const { return file_; }
  const std::vector<WeightInfo> &weights() const { return weights_; }
  const std::vector<Graph> &graphs() const { return graphs_; }
  const Graph *graph(const std::string &name) const;
  /// The weight's bytes in the mapped file.
  const uint8_t *weightData(uint32_t index) const;
  uint64_t fileSize() const;
  /// A C view of a graph for backends; valid while the Plan lives.
  const llmc_graph_desc &graphDesc(const std::string &name) const;
  /// The format version the file was written with (its minor may be newer
  /// than kPlanFormatMinor).
  uint32_t formatMajor() const { return formatMajor_; }
  uint32_t formatMinor() const { return formatMinor_; }

private:
  Plan() = default;
  void parse(const PlanLoadOptions &options);
  std::string path_;
  std::shared_ptr<MappedFile> file_;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  uint32_t formatMajor_ = 0, formatMinor_ = 0;
  const uint8_t *weightBase_ = nullptr;
  PlanConfig config_;
  PlanTokenizer tokenizer_;
  std::vector<WeightInfo> weights_;
  std::vector<Graph> graphs_;
  std::vector<llmc_weight_desc> weightDescs_;
  std::vector<llmc_graph_desc> graphDescs_;
};

} // namespace llmc
