#include "checksum.h"
#include "plan_format.h"
#include "plan_generated.h"

#include "llmc/runtime/plan.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

#include <set>

namespace llmc {
namespace {

// Bounds that keep every size computation in describePlan and the runtime
// (coefficient × T, layers × heads × ...) far from int64 overflow.
constexpr int64_t kMaxConfigValue = INT32_MAX;
constexpr int64_t kMaxByteCoefficient = int64_t(1) << 48;
constexpr int64_t kMaxElements = int64_t(1) << 60;

std::string str(const flatbuffers::String *s) {
  return s ? std::string(s->data(), s->size()) : std::string();
}

template <typename T> std::vector<T> vec(const flatbuffers::Vector<T> *v) {
  return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>();
}

template <typename V> size_t size(const V *v) { return v ? v->size() : 0; }

// The 2.0.8 verifier checks a vector's length prefix for 4-byte alignment
// only; elements of 8-byte types would be read misaligned (UB) in a forged
// file. The builder aligns every non-empty one (empty ones are not, and
// are never read), so anything else is corruption.
template <typename V> bool aligned8(const V *v) {
  return !v || v->size() == 0 ||
         reinterpret_cast<uintptr_t>(v->Data()) % 8 == 0;
}

std::string version(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

} // namespace

Plan::~Plan() = default;

std::unique_ptr<Plan> Plan::load(const std::string &path) {
  return load(path, PlanLoadOptions{});
}

std::unique_ptr<Plan> Plan::load(const std::string &path,
                                 const PlanLoadOptions &options) {
  std::unique_ptr<Plan> plan(new Plan());
  plan->path_ = path;
  plan->file_ = std::make_shared<MappedFile>(path);
  plan->data_ = plan->file_->data();
  plan->size_ = plan->file_->size();
  plan->parse(options);
  return plan;
}

std::unique_ptr<Plan> Plan::loadFromMemory(const uint8_t *data, size_t size,
                                           std::string name,
                                           const PlanLoadOptions &options) {
  // FlatBuffers reads int64 and double fields in place.
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0)
    throw Error(name + ": plan image is not 8-byte aligned in memory");
  std::unique_ptr<Plan> plan(new Plan());
  plan->path_ = std::move(name);
  plan->data_ = data;
  plan->size_ = size;
  plan->parse(options);
  return plan;
}

void Plan::parse(const PlanLoadOptions &options) {
  using namespace detail;
  auto fail = [&](const std::string &message) -> Error {
    return Error(path_ + ": " + message);
  };
  auto corrupt = [&](const std::string &message) -> Error {
    return fail("corrupted plan metadata: " + message);
  };

  if (size_ < kPlanHeaderSize)
    throw fail("truncated plan: " + std::to_string(size_) +
               " bytes, a plan header is " + std::to_string(kPlanHeaderSize));
  if (std::memcmp(data_, kPlanMagic, sizeof(kPlanMagic)) != 0)
    throw fail("not an llmc plan (bad magic)");
  PlanHeader h = decodeHeader(data_, size_);
  formatMajor_ = h.major;
  formatMinor_ = h.minor;
  std::string supported = std::to_string(kPlanFormatMajor) + ".x";
  if (h.major > kPlanFormatMajor)
    throw fail("plan format " + version(h.major, h.minor) +
               " is newer than this llmc supports (" + supported +
               "): recompile the model with this llmc or upgrade llmc");
  if (h.major < kPlanFormatMajor)
    throw fail("plan format " + version(h.major, h.minor) +
               " is older than this llmc supports (" + supported +
               "): recompile the model with this llmc");

  // Overflow-safe: every quantity is checked against the file size before
  // it is added to another.
  if (h.headerSize < kPlanHeaderSize || h.headerSize > (uint64_t(1) << 20))
    throw fail("corrupted plan header: header size " +
               std::to_string(h.headerSize));
  if (h.headerSize > size_)
    throw fail("truncated plan: " + std::to_string(size_) +
               " bytes, but its header is " + std::to_string(h.headerSize));
  if (h.flatBufferOffset < h.headerSize || h.flatBufferOffset % 8 != 0 ||
      h.weightsOffset % kWeightSectionAlign != 0 ||
      h.flatBufferOffset > h.weightsOffset ||
      h.flatBufferSize > h.weightsOffset - h.flatBufferOffset)
    throw fail("corrupted plan header: sections overlap or are misaligned");
  if (h.weightsOffset > size_ || h.weightsSize > size_ - h.weightsOffset)
    throw fail("truncated plan: " + std::to_string(size_) +
               " bytes, but its weight section ends at byte " +
               std::to_string(h.weightsOffset + h.weightsSize));
  uint64_t end = h.weightsOffset + h.weightsSize;
  if (end != size_)
    throw fail("corrupted plan: " + std::to_string(size_ - end) +
               " unexpected bytes after the weight section");
  if (h.flatBufferSize > kMaxFlatBufferSize)
    throw corrupt("the metadata section is over 2 GiB");

  const uint8_t *fbData = data_ + h.flatBufferOffset;
  flatbuffers::Verifier verifier(fbData, h.flatBufferSize);
  if (!fb::VerifyPlanBuffer(verifier))
    throw fail("corrupted plan metadata (the FlatBuffers verifier rejected "
               "it)");
  const fb::Plan *root = fb::GetPlan(fbData);
  auto misaligned = [&]() { return corrupt("misaligned vector"); };

  const fb::Config *c = root->config();
  if (!c)
    throw corrupt("no model config");
  config_.architecture = str(c->architecture());
  const std::pair<const char *, int64_t> sizes[] = {
      {"vocab_size", c->vocab_size()},
      {"hidden_size", c->hidden_size()},
      {"num_layers", c->num_layers()},
      {"num_heads", c->num_heads()},
      {"num_kv_heads", c->num_kv_heads()},
      {"head_dim", c->head_dim()},
      {"intermediate_size", c->intermediate_size()},
      {"context_length", c->context_length()},
      {"num_experts", c->num_experts()},
      {"experts_per_token", c->experts_per_token()},
      {"expert_intermediate_size", c->expert_intermediate_size()},
      {"moe_layers", c->moe_layers()}};
  for (const auto &[name, value] : sizes)
    if (value < 0 || value > kMaxConfigValue)
      throw corrupt(std::string("config ") + name + " = " +
                    std::to_string(value) + " is out of range");
  config_.vocabSize = c->vocab_size();
  config_.hiddenSize = c->hidden_size();
  config_.numLayers = c->num_layers();
  config_.numHeads = c->num_heads();
  config_.numKVHeads = c->num_kv_heads();
  config_.headDim = c->head_dim();
  config_.intermediateSize = c->intermediate_size();
  config_.contextLength = c->context_length();
  config_.numExperts = c->num_experts();
  config_.expertsPerToken = c->experts_per_token();
  config_.expertIntermediateSize = c->expert_intermediate_size();
  config_.moeLayers = c->moe_layers();
  if (config_.expertsPerToken > config_.numExperts ||
      config_.moeLayers > config_.numLayers ||
      (config_.numExperts > 0) != (config_.expertsPerToken > 0))
    throw corrupt("config: " + std::to_string(config_.expertsPerToken) +
                  " experts per token of " +
                  std::to_string(config_.numExperts) + " in " +
                  std::to_string(config_.moeLayers) + " of " +
                  std::to_string(config_.numLayers) + " layers");
  if (c->total_parameters() < 0 || c->active_parameters() < 0 ||
      c->active_parameters() > c->total_parameters())
    throw corrupt("config: parameter counts out of range");
  config_.totalParameters = c->total_parameters();
  config_.activeParameters = c->active_parameters();
  // Plans before 1.4 have neither: one rank caching every kv head.
  config_.tp = c->tp();
  config_.kvHeadsPerRank =
      c->kv_heads_per_rank() > 0 ? c->kv_heads_per_rank() : config_.numKVHeads;
  if (config_.tp < 1 || config_.tp > 1024 || config_.kvHeadsPerRank < 0 ||
      config_.kvHeadsPerRank > config_.numKVHeads)
    throw corrupt("config: tp " + std::to_string(config_.tp) + " with " +
                  std::to_string(config_.kvHeadsPerRank) +
                  " kv heads per rank of " +
                  std::to_string(config_.numKVHeads));
  if (options.rank < 0 || options.rank >= config_.tp)
    throw fail("rank " + std::to_string(options.rank) +
               " is not one of the plan's " + std::to_string(config_.tp) +
               " tensor-parallel ranks");
  if (c->bos_token_id())
    config_.bosTokenId = *c->bos_token_id();
  if (!aligned8(c->eos_token_ids()))
    throw misaligned();
  config_.eosTokenIds = vec(c->eos_token_ids());
  config_.target = str(c->target());
  config_.computeDtype = str(c->compute_dtype());
  config_.quantization = str(c->quantization());
  uint32_t kv = c->kv_dtype();
  if (!llmc_kv_dtype_name(kv))
    throw corrupt("KV-cache dtype " + std::to_string(kv) +
                  " is not f32, bf16, f16, int8 or fp8");
  config_.kvDtype = static_cast<llmc_dtype>(kv);
  config_.compilerVersion = str(root->compiler_version());

  if (const fb::Tokenizer *t = root->tokenizer()) {
    tokenizer_.kind = str(t->kind());
    // A view, not a copy: a 256k vocabulary's tables are tens of MB.
    if (const auto *bytes = t->file_bytes())
      tokenizer_.mapped = std::string_view(
          reinterpret_cast<const char *>(bytes->data()), bytes->size());
    tokenizer_.configJson = str(t->config_json());
    tokenizer_.chatTemplate = str(t->chat_template());
  } else {
    tokenizer_.kind = "none";
  }

  for (uint32_t i = 0; i < size(root->weights()); ++i) {
    const fb::Weight *w = root->weights()->Get(i);
    WeightInfo info;
    info.name = str(w->name());
    std::string what = "weight " + std::to_string(i) + " '" + info.name + "'";
    if (!isWeightDtype(w->dtype()))
      throw corrupt(what + ": unknown dtype " + std::to_string(w->dtype()));
    info.dtype = static_cast<llmc_dtype>(w->dtype());
    if (!aligned8(w->shape()))
      throw misaligned();
    info.shape = vec(w->shape());
    if (info.shape.size() > 4)
      throw corrupt(what + ": rank " + std::to_string(info.shape.size()) +
                    " (at most 4)");
    int64_t elements = 1;
    for (int64_t d : info.shape)
      if (d < 0 || __builtin_mul_overflow(elements, d, &elements) ||
          elements > kMaxElements)
        throw corrupt(what + ": bad shape");
    info.offset = w->offset();
    info.nbytes = w->nbytes();
    uint64_t expected = dtypeBytes(info.dtype, elements);
    if (info.nbytes != expected)
      throw corrupt(what + ": " + std::to_string(info.nbytes) +
                    " bytes, but its dtype and shape make " +
                    std::to_string(expected));
    if (const auto *ranks = w->rank_offsets()) {
      if (!aligned8(ranks))
        throw misaligned();
      info.rankOffsets = vec(ranks);
      if (static_cast<int64_t>(info.rankOffsets.size()) != config_.tp ||
          info.rankOffsets.front() != info.offset)
        throw corrupt(what + ": " + std::to_string(info.rankOffsets.size()) +
                      " rank slices for tp " + std::to_string(config_.tp));
    }
    for (uint64_t at : info.rankOffsets.empty()
                           ? std::vector<uint64_t>{info.offset}
                           : info.rankOffsets) {
      if (at % kWeightAlign != 0)
        throw corrupt(what + ": offset " + std::to_string(at) +
                      " is not 64-byte aligned");
      if (at > h.weightsSize || info.nbytes > h.weightsSize - at)
        throw corrupt(what + ": bytes " + std::to_string(at) + ".." +
                      std::to_string(at + info.nbytes) +
                      " lie outside the weight section (" +
                      std::to_string(h.weightsSize) + " bytes)");
    }
    weights_.push_back(std::move(info));
  }

  std::set<std::string> names;
  for (uint32_t gi = 0; gi < size(root->graphs()); ++gi) {
    const fb::Graph *fg = root->graphs()->Get(gi);
    Graph g;
    g.name = str(fg->name());
    std::string what = "graph '" + g.name + "'";
    if (!names.insert(g.name).second)
      throw corrupt("two graphs named '" + g.name + "'");
    if (!aligned8(fg->buffers()))
      throw misaligned();
    for (uint32_t k = 0; k < size(fg->buffers()); ++k) {
      const fb::Buffer *b = fg->buffers()->Get(k);
      llmc_buffer_desc d{};
      d.rows = {b->rows().t_coef(), b->rows().b_coef(), b->rows().constant()};
      d.cols = b->cols();
      d.dtype = b->dtype();
      d.offset_t = b->offset_t();
      d.offset_b = b->offset_b();
      d.offset_const = b->offset_const();
      std::string bwhat = what + " buffer " + std::to_string(k);
      if (d.dtype > LLMC_I32)
        throw corrupt(bwhat + ": unknown dtype " + std::to_string(d.dtype));
      for (int64_t v : {d.cols, d.offset_t, d.offset_b, d.offset_const})
        if (v < 0 || v >= kMaxByteCoefficient)
          throw corrupt(bwhat + ": size or offset out of range");
      g.buffers.push_back(d);
    }
    auto numBuffers = g.buffers.size();
    for (uint32_t k = 0; k < size(fg->ops()); ++k) {
      const fb::Op *fo = fg->ops()->Get(k);
      llmc_op_desc op{};
      op.kind = fo->kind();
      std::string owhat = what + " op " + std::to_string(k);
      if (op.kind >= LLMC_OP_COUNT)
        throw corrupt(owhat + ": unknown op kind " + std::to_string(op.kind));
      owhat += " (" + std::string(opKindName(llmc_op_kind(op.kind))) + ")";
      if (size(fo->operands()) > LLMC_MAX_OPERANDS ||
          size(fo->results()) > LLMC_MAX_RESULTS ||
          size(fo->i()) > LLMC_MAX_INT_ATTRS ||
          size(fo->f()) > LLMC_MAX_FLOAT_ATTRS)
        throw corrupt(owhat + ": more operands, results or attributes than "
                              "an op can have");
      if (!aligned8(fo->i()) || !aligned8(fo->f()))
        throw misaligned();
      op.num_operands = size(fo->operands());
      for (uint32_t j = 0; j < op.num_operands; ++j) {
        const fb::Operand *o = fo->operands()->Get(j);
        op.operands[j] = {o->kind(), o->index()};
        std::string bad = owhat + ": operand " + std::to_string(j) + " is ";
        switch (o->kind()) {
        case LLMC_OPERAND_BUFFER:
          if (o->index() >= numBuffers)
            throw corrupt(bad + "buffer " + std::to_string(o->index()) +
                          " but the graph has " + std::to_string(numBuffers));
          break;
        case LLMC_OPERAND_WEIGHT:
          if (o->index() >= weights_.size())
            throw corrupt(bad + "weight " + std::to_string(o->index()) +
                          " but the plan has " +
                          std::to_string(weights_.size()));
          break;
        case LLMC_OPERAND_INPUT:
          if (o->index() > 1)
            throw corrupt(bad + "input " + std::to_string(o->index()) +
                          " (0 tokens, 1 positions)");
          break;
        case LLMC_OPERAND_NONE:
          break;
        default:
          throw corrupt(bad + "of unknown kind " + std::to_string(o->kind()));
        }
      }
      op.num_results = size(fo->results());
      for (uint32_t j = 0; j < op.num_results; ++j) {
        op.results[j] = fo->results()->Get(j);
        if (op.results[j] >= numBuffers)
          throw corrupt(owhat + ": result " + std::to_string(j) +
                        " is buffer " + std::to_string(op.results[j]) +
                        " but the graph has " + std::to_string(numBuffers));
      }
      for (uint32_t j = 0; j < size(fo->i()); ++j)
        op.i[j] = fo->i()->Get(j);
      for (uint32_t j = 0; j < size(fo->f()); ++j)
        op.f[j] = fo->f()->Get(j);
      g.ops.push_back(op);
    }
    g.logitsBuffer = fg->logits_buffer();
    if (g.logitsBuffer >= numBuffers)
      throw corrupt(what + ": logits buffer " + std::to_string(g.logitsBuffer) +
                    " but the graph has " + std::to_string(numBuffers));
    g.workspaceT = fg->workspace_t();
    g.workspaceB = fg->workspace_b();
    g.workspaceC = fg->workspace_c();
    for (int64_t v : {g.workspaceT, g.workspaceB, g.workspaceC})
      if (v < 0 || v >= kMaxByteCoefficient)
        throw corrupt(what + ": workspace size out of range");
    graphs_.push_back(std::move(g));
  }

  // A 1.0 plan has only the whole-file checksum.
  const bool split = h.headerSize >= kPlanHeaderSizeV1_1;
  if (options.verifyChecksum && split &&
      checksum(data_ + h.headerSize, h.weightsOffset - h.headerSize) !=
          h.metadataChecksum)
    throw fail("checksum mismatch: the plan's metadata is corrupted");
  if ((options.verifyWeights || (options.verifyChecksum && !split)) &&
      checksum(data_ + h.headerSize, end - h.headerSize) != h.checksum)
    throw fail("checksum mismatch: the plan is corrupted");

  weightBase_ = data_ + h.weightsOffset;
  for (const WeightInfo &w : weights_) {
    llmc_weight_desc d{};
    d.name = w.name.c_str();
    d.dtype = w.dtype;
    d.rank = static_cast<uint32_t>(w.shape.size());
    for (size_t j = 0; j < w.shape.size(); ++j)
      d.shape[j] = w.shape[j];
    d.data = weightBase_ + (w.rankOffsets.empty()
                                ? w.offset
                                : w.rankOffsets[size_t(options.rank)]);
    d.nbytes = w.nbytes;
    weightDescs_.push_back(d);
  }
  for (const Graph &g : graphs_) {
    llmc_graph_desc d{};
    d.name = g.name.c_str();
    d.num_ops = static_cast<uint32_t>(g.ops.size());
    d.num_buffers = static_cast<uint32_t>(g.buffers.size());
    d.num_weights = static_cast<uint32_t>(weightDescs_.size());
    d.ops = g.ops.data();
    d.buffers = g.buffers.data();
    d.weights = weightDescs_.data();
    d.logits_buffer = g.logitsBuffer;
    // Plan::load maps the file; loadFromMemory's image is the caller's.
    d.flags = file_ ? LLMC_GRAPH_WEIGHTS_FILE_MAPPED : 0;
    d.workspace_t = g.workspaceT;
    d.workspace_b = g.workspaceB;
    d.workspace_c = g.workspaceC;
    graphDescs_.push_back(d);
  }
}

const Graph *Plan::graph(const std::string &name) const {
  for (const Graph &g : graphs_)
    if (g.name == name)
      return &g;
  return nullptr;
}

const uint8_t *Plan::weightData(uint32_t index) const {
  if (index >= weights_.size())
    throw Error(path_ + ": no weight " + std::to_string(index) + " (has " +
                std::to_string(weights_.size()) + ")");
  return weightBase_ + weights_[index].offset;
}

uint64_t Plan::fileSize() const { return size_; }

const llmc_graph_desc &Plan::graphDesc(const std::string &name) const {
  for (size_t i = 0; i < graphs_.size(); ++i)
    if (graphs_[i].name == name)
      return graphDescs_[i];
  std::string has;
  for (const Graph &g : graphs_)
    has += (has.empty() ? "" : ", ") + g.name;
  throw Error(path_ + ": plan has no graph '" + name +
              "' (has: " + (has.empty() ? "none" : has) + ")");
}

} // namespace llmc
