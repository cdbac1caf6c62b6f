//===- engine.cpp - One graph execution per step --------------------------===//
#include "llmc/runtime/engine.h"

#include "llmc/support/error.h"
#include "llmc/support/memory.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace llmc {

namespace {

int64_t planContext(const Plan &plan, const EngineOptions &o) {
  int64_t ctx =
      o.contextLength > 0 ? o.contextLength : plan.config().contextLength;
  if (ctx <= 0)
    throw Error(plan.path() + ": the plan has no context length");
  return ctx;
}

llmc_dtype kvDtypeOf(const Plan &plan, const EngineOptions &o) {
  return o.kvDtype ? *o.kvDtype : plan.config().kvDtype;
}

/// The pool's size and how it was chosen.
std::pair<KvManager::Options, std::string>
poolOptions(const Plan &plan, const EngineOptions &o,
            const LoadedBackend &backend) {
  if (o.blockSize <= 0)
    throw Error("--block-size must be positive, got " +
                std::to_string(o.blockSize));
  const int64_t bs = o.blockSize;
  const int64_t blockBytes = std::max<int64_t>(
      int64_t(kvBytesPerToken(plan.config(), kvDtypeOf(plan, o))) * bs, 1);
  int64_t blocks;
  std::string origin;
  if (o.kvCacheBlocks > 0) {
    blocks = o.kvCacheBlocks;
    origin = "--kv-cache-blocks";
  } else if (o.kvCacheBytes > 0) {
    blocks = o.kvCacheBytes / blockBytes;
    origin = "--kv-cache-memory";
    if (blocks < 1)
      throw Error("--kv-cache-memory " + std::to_string(o.kvCacheBytes) +
                  " bytes holds no KV block: one block of " +
                  std::to_string(bs) + " tokens takes " +
                  std::to_string(blockBytes) + " bytes with this plan's " +
                  llmc_kv_dtype_name(kvDtypeOf(plan, o)) + " KV cache");
  } else {
    int64_t perSeq = (planContext(plan, o) + bs - 1) / bs;
    blocks = perSeq * std::max(1, o.maxSequences);
    origin = "default (" + std::to_string(std::max(1, o.maxSequences)) +
             " x the context)";
    // A device that reports its memory holds the pool there; the host's
    // available memory otherwise.
    int64_t memory =
        backend.devices().empty()
            ? 0
            : static_cast<int64_t>(backend.devices()[0].memory_bytes);
    const char *where = "of the GPU's memory";
    if (memory == 0) {
      memory = availableMemoryBytes();
      where = "of the available memory";
    }
    int64_t cap = static_cast<int64_t>(kDefaultKvMemoryShare *
                                       static_cast<double>(memory)) /
                  blockBytes;
    if (memory > 0 && cap >= 1 && cap < blocks) {
      blocks = cap;
      origin = "default (" +
               std::to_string(static_cast<int>(kDefaultKvMemoryShare * 100)) +
               "% " + where + ")";
    }
  }
  if (blocks > INT32_MAX / bs)
    throw Error("the KV cache of " + std::to_string(blocks) +
                " blocks is larger than llmc can address (" +
                std::to_string(INT32_MAX / bs) + " blocks of " +
                std::to_string(bs) + " tokens)");
  return {{static_cast<int32_t>(blocks), o.blockSize, o.prefixCaching}, origin};
}

} // namespace

const LoadedBackend &chooseBackend(const BackendRegistry &registry,
                                   const std::string &requested,
                                   const std::string &planTarget) {
  auto names = [&] {
    std::string s;
    for (const auto &b : registry.backends())
      s += (s.empty() ? "" : ", ") + b.name;
    return s.empty() ? std::string("none") : s;
  };
  if (!requested.empty()) {
    const LoadedBackend *b = registry.find(requested);
    if (!b)
      throw Error("no backend named '" + requested + "' (found: " + names() +
                  "; search path: LLMC_BACKEND_PATH, next to llmc, "
                  "<prefix>/lib/llmc/backends)");
    if (!b->usable())
      throw Error("backend '" + requested + "' is not usable here: " +
                  (b->devices().empty() ? std::string("no device")
                                        : std::string(b->devices()[0].reason)));
    return *b;
  }
  if (const LoadedBackend *b = registry.find(planTarget); b && b->usable())
    return *b;
  if (const LoadedBackend *b = registry.find("ref"); b && b->usable())
    return *b;
  throw Error("no usable backend found (found: " + names() + ")");
}

void checkBackendAbi(const std::string &planPath, const Graph &graph,
                     const std::string &backendName,
                     const llmc_backend_api &api) {
  AbiNeed need = abiNeeded(graph);
  if (need.minor <= api.abi_minor)
    return;
  throw Error(
      planPath + ": graph '" + graph.name + "' needs backend ABI " +
      std::to_string(LLMC_BACKEND_ABI_MAJOR) + "." +
      std::to_string(need.minor) + " (" + need.feature + "); backend '" +
      backendName + "' speaks " + std::to_string(api.abi_major) + "." +
      std::to_string(api.abi_minor) + ": rebuild the plugin with this llmc");
}

void checkKvAbi(llmc_dtype kvDtype, const std::string &backendName,
                const llmc_backend_api &api) {
  if ((kvDtype != LLMC_I8 && kvDtype != LLMC_FP8_E4M3) || api.abi_minor >= 3)
    return;
  throw Error("backend '" + backendName + "' speaks ABI " +
              std::to_string(api.abi_major) + "." +
              std::to_string(api.abi_minor) + "; an " +
              llmc_kv_dtype_name(kvDtype) +
              " KV cache needs 1.3: rebuild the plugin with this llmc");
}

Engine::Engine(const Plan &plan, const BackendRegistry &registry,
               EngineOptions options)
    : Engine(plan, options,
             chooseBackend(registry, options.backend, plan.config().target)) {}

Engine::Engine(const Plan &plan, const EngineOptions &options,
               const LoadedBackend &chosen)
    : Engine(plan, options, chosen, poolOptions(plan, options, chosen)) {}

Engine::Engine(const Plan &plan, const EngineOptions &options,
               const LoadedBackend &chosen,
               const std::pair<KvManager::Options, std::string> &pool)
    : StepRunner(pool.first, planContext(plan, options)), plan_(plan),
      options_(options), kvOrigin_(pool.second) {
  llmc_backend_options bo{};
  bo.threads = options.threads;
  bo.memory_fraction = 0.9f;
  backend_ = std::make_unique<BackendInstance>(chosen, bo);
  for (const char *name : {"prefill", "decode", "verify"}) {
    const Graph *g = plan.graph(name);
    if (!g)
      continue;
    checkBackendAbi(plan.path(), *g, chosen.name, backend_->api());
    prepared_.emplace(name, backend_->prepare(plan.graphDesc(name)));
    for (const llmc_op_desc &op : g->ops)
      if (op.kind == LLMC_OP_ROPE && op.i[4] > 0)
        ropeSwitch_ = op.i[4];
  }
  for (const char *name : {"prefill", "decode"})
    if (!prepared_.count(name))
      throw Error(plan.path() + ": the plan has no '" + name + "' graph");

  llmc_kv_cache_desc kv{};
  const PlanConfig &c = plan.config();
  kv.layers = static_cast<uint32_t>(c.numLayers);
  kv.kv_heads = static_cast<uint32_t>(c.numKVHeads);
  kv.head_dim = static_cast<uint32_t>(c.headDim);
  checkKvAbi(kvDtypeOf(plan, options), chosen.name, backend_->api());
  kv.dtype = kvDtypeOf(plan, options);
  kv.block_size = static_cast<uint32_t>(options.blockSize);
  kv.num_blocks = static_cast<uint32_t>(numBlocks());
  cache_ = std::make_unique<DeviceKvCache>(backend_->createKvCache(kv));
}

Engine::~Engine() = default;

int64_t Engine::kvBytesPerToken() const {
  return int64_t(llmc::kvBytesPerToken(plan_.config(), kvDtype()));
}

llmc_dtype Engine::kvDtype() const { return kvDtypeOf(plan_, options_); }

void Engine::copyBlock(int32_t src, int32_t dst) {
  cache_->copyBlock(src, dst);
}

void Engine::execute(const StepBatch &batch, std::span<const StepWork> work,
                     float *logits) {
  const size_t V = static_cast<size_t>(vocabSize());
  if (batch.graph != "verify") {
    backend_->execute(prepared_.at(batch.graph), cache_.get(),
                      batch.args(logits));
    return;
  }
  if (!prepared_.count("verify"))
    throw Error(plan_.path() + ": the plan has no 'verify' graph");
  // Every row comes back; keep the ones each sequence asked for.
  scratch_.resize(batch.tokens.size() * V);
  backend_->execute(prepared_.at("verify"), cache_.get(),
                    batch.args(scratch_.data()));
  size_t out = 0;
  for (size_t i = 0; i < work.size(); ++i) {
    const auto end = static_cast<size_t>(batch.queryStart[i + 1]);
    const auto rows = static_cast<size_t>(work[i].logitRows);
    std::memcpy(logits + out * V, scratch_.data() + (end - rows) * V,
                rows * V * sizeof(float));
    out += rows;
  }
}

void Engine::prefill(int32_t seq, std::span<const int32_t> tokens,
                     float *logits, bool allLogits) {
  if (tokens.empty())
    throw Error("prefill needs at least one token");
  if (allLogits && !prepared_.count("verify"))
    throw Error(plan_.path() + ": the plan has no 'verify' graph");
  const size_t chunk =
      allLogits ? tokens.size()
                : static_cast<size_t>(std::max(1, options_.prefillChunk));
  for (size_t start = 0; start < tokens.size(); start += chunk) {
    size_t n = std::min(chunk, tokens.size() - start);
    bool last = start + n == tokens.size();
    StepWork w{seq, tokens.subspan(start, n),
               allLogits ? static_cast<int32_t>(n) : (last ? 1 : 0),
               kv().length(seq) - static_cast<int64_t>(start) +
                   static_cast<int64_t>(tokens.size())};
    step(std::span<const StepWork>(&w, 1), logits);
  }
}

void Engine::decode(std::span<const int32_t> seqs,
                    std::span<const int32_t> tokens, float *logits) {
  if (seqs.size() != tokens.size() || seqs.empty())
    throw Error("decode needs one token per sequence");
  std::vector<StepWork> work(seqs.size());
  for (size_t i = 0; i < seqs.size(); ++i)
    work[i] = {seqs[i], tokens.subspan(i, 1), 1};
  step(work, logits);
}

} // namespace llmc
