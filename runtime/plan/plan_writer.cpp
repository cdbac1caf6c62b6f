#include "checksum.h"
#include "output_file.h"
#include "plan_format.h"
#include "plan_generated.h"

#include "llmc/runtime/plan.h"
#include "llmc/support/error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace llmc {
namespace detail {
namespace {} // namespace

void writePlanFile(const std::string &path, const uint8_t *flatBuffer,
                   size_t flatBufferSize,
                   const std::vector<WeightSlot> &weights,
                   const WriteProgressFn &progress) {
  PlanHeader header;
  header.major = kPlanFormatMajor;
  header.minor = kPlanFormatMinor;
  header.headerSize = kPlanHeaderSizeV1_1;
  header.flatBufferOffset = kPlanHeaderSizeV1_1;
  header.flatBufferSize = flatBufferSize;
  header.weightsOffset =
      alignUp(kPlanHeaderSizeV1_1 + flatBufferSize, kWeightSectionAlign);
  uint64_t maxWeight = 0;
  for (const WeightSlot &w : weights) {
    if (w.offset < header.weightsSize)
      throw Error(path + ": weights overlap or are out of order");
    header.weightsSize = w.offset + w.nbytes;
    maxWeight = std::max(maxWeight, w.nbytes);
  }

  // Written under a temporary name so a failed conversion never leaves a
  // file that looks like a plan.
  std::string partial = path + ".partial";
  try {
    OutputFile out(partial);
    Checksum sum;
    uint8_t headerBytes[kPlanHeaderSizeV1_1];
    encodeHeader(header, headerBytes);
    out.write(headerBytes, sizeof(headerBytes));
    out.write(flatBuffer, flatBufferSize);
    sum.update(flatBuffer, flatBufferSize);
    std::vector<uint8_t> zeros(kWeightSectionAlign);
    uint64_t pad = header.weightsOffset - kPlanHeaderSizeV1_1 - flatBufferSize;
    out.write(zeros.data(), pad);
    sum.update(zeros.data(), pad);
    {
      Checksum metadata;
      metadata.update(flatBuffer, flatBufferSize);
      metadata.update(zeros.data(), pad);
      header.metadataChecksum = metadata.digest();
    }

    std::vector<uint8_t> buffer(maxWeight);
    uint64_t at = 0;
    WriteProgress done{0, weights.size(), 0, header.weightsSize};
    for (size_t i = 0; i < weights.size(); ++i) {
      const WeightSlot &w = weights[i];
      pad = w.offset - at;
      for (uint64_t left = pad; left > 0;) {
        uint64_t n = std::min<uint64_t>(left, zeros.size());
        out.write(zeros.data(), n);
        sum.update(zeros.data(), n);
        left -= n;
      }
      // Not cleared for a fill, which writes every byte (a buggy one would
      // still give the same file every time: the buffer's history is
      // deterministic); a weight without one is zeros.
      if (w.fill)
        w.fill(buffer.data());
      else
        std::memset(buffer.data(), 0, w.nbytes);
      out.write(buffer.data(), w.nbytes);
      sum.update(buffer.data(), w.nbytes);
      at = w.offset + w.nbytes;
      done.weightsDone = i + 1;
      done.bytesDone = at;
      if (progress)
        progress(done);
    }
    header.checksum = sum.digest();
    encodeHeader(header, headerBytes);
    out.finish(headerBytes, sizeof(headerBytes));
    if (std::rename(partial.c_str(), path.c_str()) != 0)
      throw Error(path + ": cannot rename " + partial + ": " +
                  std::strerror(errno));
  } catch (...) {
    std::remove(partial.c_str());
    throw;
  }
}

} // namespace detail

namespace {

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

template <typename T> size_t trimmedSize(const T *values, size_t n) {
  // Attributes past the last non-zero one are implied zeros; comparing bits
  // keeps -0.0.
  while (n > 0) {
    T zero{};
    if (std::memcmp(&values[n - 1], &zero, sizeof(T)) != 0)
      break;
    --n;
  }
  return n;
}

flatbuffers::Offset<fb::Graph> buildGraph(flatbuffers::FlatBufferBuilder &fbb,
                                          const Graph &g) {
  std::vector<flatbuffers::Offset<fb::Op>> ops;
  ops.reserve(g.ops.size());
  for (size_t k = 0; k < g.ops.size(); ++k) {
    const llmc_op_desc &op = g.ops[k];
    // Only what would overrun the C arrays is refused here; everything else
    // is the loader's job, so tests can write bad plans through the writer.
    if (op.num_operands > LLMC_MAX_OPERANDS ||
        op.num_results > LLMC_MAX_RESULTS)
      throw Error("graph '" + g.name + "' op " + std::to_string(k) +
                  ": more operands or results than llmc_op_desc holds");
    std::vector<fb::Operand> operands;
    for (uint32_t j = 0; j < op.num_operands; ++j)
      operands.emplace_back(op.operands[j].kind, op.operands[j].index);
    auto operandsOff = fbb.CreateVectorOfStructs(operands);
    auto resultsOff = fbb.CreateVector(op.results, op.num_results);
    auto iOff = fbb.CreateVector(op.i, trimmedSize(op.i, LLMC_MAX_INT_ATTRS));
    auto fOff = fbb.CreateVector(op.f, trimmedSize(op.f, LLMC_MAX_FLOAT_ATTRS));
    ops.push_back(
        fb::CreateOp(fbb, op.kind, operandsOff, resultsOff, iOff, fOff));
  }
  std::vector<fb::Buffer> buffers;
  buffers.reserve(g.buffers.size());
  for (const llmc_buffer_desc &b : g.buffers)
    buffers.emplace_back(
        fb::Rows(b.rows.t_coef, b.rows.b_coef, b.rows.constant), b.cols,
        b.dtype, b.offset_t, b.offset_b, b.offset_const);
  auto nameOff = fbb.CreateString(g.name);
  auto opsOff = fbb.CreateVector(ops);
  auto buffersOff = fbb.CreateVectorOfStructs(buffers);
  return fb::CreateGraph(fbb, nameOff, opsOff, buffersOff, g.logitsBuffer,
                         g.workspaceT, g.workspaceB, g.workspaceC);
}

} // namespace

void PlanWriter::setConfig(PlanConfig config) { config_ = std::move(config); }

void PlanWriter::setTokenizer(PlanTokenizer tokenizer) {
  tokenizer_ = std::move(tokenizer);
}

uint32_t PlanWriter::addWeight(std::string name, llmc_dtype dtype,
                               std::vector<int64_t> shape, uint64_t nbytes,
                               std::function<void(uint8_t *dst)> fill) {
  std::string what = "weight '" + name + "'";
  if (!isWeightDtype(dtype))
    throw Error(what + ": unknown dtype " + std::to_string(dtype));
  if (shape.size() > 4)
    throw Error(what + ": rank " + std::to_string(shape.size()) +
                " (a plan holds at most 4 dimensions)");
  int64_t elements = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(elements, d, &elements) ||
        elements > (int64_t(1) << 60))
      throw Error(what + ": bad shape " + shapeString(shape));
  uint64_t expected = dtypeBytes(dtype, elements);
  if (nbytes != expected)
    throw Error(what + ": " + std::to_string(nbytes) + " bytes, but " +
                dtypeName(dtype) + " " + shapeString(shape) + " is " +
                std::to_string(expected));
  if (weights_.size() >= UINT32_MAX)
    throw Error("too many weights");
  PendingWeight w;
  w.info.name = std::move(name);
  w.info.dtype = dtype;
  w.info.shape = std::move(shape);
  w.info.nbytes = nbytes;
  if (!weights_.empty()) {
    const WeightInfo &last = weights_.back().info;
    w.info.offset = detail::alignUp(
        (last.rankOffsets.empty() ? last.offset : last.rankOffsets.back()) +
            last.nbytes,
        detail::kWeightAlign);
  }
  w.fill = std::move(fill);
  weights_.push_back(std::move(w));
  return static_cast<uint32_t>(weights_.size() - 1);
}

uint32_t PlanWriter::addSplitWeight(
    std::string name, llmc_dtype dtype, std::vector<int64_t> shape,
    uint64_t nbytes, int64_t tp,
    std::function<void(int64_t rank, uint8_t *dst)> fill) {
  if (tp < 2)
    throw Error("weight '" + name + "': split over " + std::to_string(tp) +
                " ranks");
  const uint32_t index =
      addWeight(std::move(name), dtype, std::move(shape), nbytes, {});
  WeightInfo &info = weights_.back().info;
  for (int64_t r = 0; r < tp; ++r)
    info.rankOffsets.push_back(
        r == 0 ? info.offset
               : detail::alignUp(info.rankOffsets.back() + nbytes,
                                 detail::kWeightAlign));
  weights_.back().rankFill = std::move(fill);
  return index;
}

void PlanWriter::addGraph(Graph graph) {
  for (const Graph &g : graphs_)
    if (g.name == graph.name)
      throw Error("plan already has a graph '" + graph.name + "'");
  graphs_.push_back(std::move(graph));
}

void PlanWriter::write(const std::string &path,
                       const WriteProgressFn &progress) const {
  // The tokenizer is the only large thing in the metadata; refuse early
  // rather than let FlatBuffers hit its 2 GiB limit.
  if (tokenizer_.fileBytes.size() + tokenizer_.configJson.size() +
          tokenizer_.chatTemplate.size() >
      (uint64_t(1) << 30))
    throw Error(path + ": the tokenizer is over 1 GiB; a plan cannot hold it");

  flatbuffers::FlatBufferBuilder fbb(1 << 16);
  const PlanConfig &c = config_;
  auto arch = fbb.CreateString(c.architecture);
  auto eos = fbb.CreateVector(c.eosTokenIds);
  auto target = fbb.CreateString(c.target);
  auto compute = fbb.CreateString(c.computeDtype);
  auto quant = fbb.CreateString(c.quantization);
  fb::ConfigBuilder cb(fbb);
  cb.add_architecture(arch);
  cb.add_vocab_size(c.vocabSize);
  cb.add_hidden_size(c.hiddenSize);
  cb.add_num_layers(c.numLayers);
  cb.add_num_heads(c.numHeads);
  cb.add_num_kv_heads(c.numKVHeads);
  cb.add_head_dim(c.headDim);
  cb.add_intermediate_size(c.intermediateSize);
  cb.add_context_length(c.contextLength);
  if (c.bosTokenId)
    cb.add_bos_token_id(*c.bosTokenId);
  cb.add_eos_token_ids(eos);
  cb.add_target(target);
  cb.add_compute_dtype(compute);
  cb.add_quantization(quant);
  cb.add_kv_dtype(c.kvDtype);
  cb.add_num_experts(c.numExperts);
  cb.add_experts_per_token(c.expertsPerToken);
  cb.add_expert_intermediate_size(c.expertIntermediateSize);
  cb.add_moe_layers(c.moeLayers);
  cb.add_total_parameters(c.totalParameters);
  cb.add_active_parameters(c.activeParameters);
  cb.add_tp(c.tp);
  cb.add_kv_heads_per_rank(c.kvHeadsPerRank);
  auto config = cb.Finish();

  const PlanTokenizer &t = tokenizer_;
  auto tokenizer = fb::CreateTokenizer(
      fbb, fbb.CreateString(t.kind),
      fbb.CreateVector(reinterpret_cast<const uint8_t *>(t.fileBytes.data()),
                       t.fileBytes.size()),
      fbb.CreateString(t.configJson), fbb.CreateString(t.chatTemplate));

  std::vector<flatbuffers::Offset<fb::Graph>> graphs;
  for (const Graph &g : graphs_)
    graphs.push_back(buildGraph(fbb, g));

  std::vector<flatbuffers::Offset<fb::Weight>> weights;
  std::vector<detail::WeightSlot> slots;
  for (const PendingWeight &w : weights_) {
    weights.push_back(fb::CreateWeight(
        fbb, fbb.CreateString(w.info.name), w.info.dtype,
        fbb.CreateVector(w.info.shape), w.info.offset, w.info.nbytes,
        w.info.rankOffsets.empty() ? 0 : fbb.CreateVector(w.info.rankOffsets)));
    if (w.info.rankOffsets.empty())
      slots.push_back({w.info.offset, w.info.nbytes, w.fill});
    for (size_t r = 0; r < w.info.rankOffsets.size(); ++r)
      slots.push_back({w.info.rankOffsets[r], w.info.nbytes,
                       [fill = w.rankFill, r](uint8_t *dst) {
                         fill(static_cast<int64_t>(r), dst);
                       }});
  }

  auto graphsOff = fbb.CreateVector(graphs);
  auto weightsOff = fbb.CreateVector(weights);
  auto version = fbb.CreateString(c.compilerVersion);
  fb::FinishPlanBuffer(fbb, fb::CreatePlan(fbb, config, tokenizer, graphsOff,
                                           weightsOff, version));
  detail::writePlanFile(path, fbb.GetBufferPointer(), fbb.GetSize(), slots,
                        progress);
}

} // namespace llmc
