//===- engine.cpp - One graph execution per step --------------------------===//
#include "llmc/runtime/engine.h"

#include "step_message.h"

#include "llmc/support/error.h"
#include "llmc/support/memory.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstddef>
#include <cstring>

namespace llmc {

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

void checkWeightAbi(const std::string &planPath, const llmc_graph_desc &graph,
                    const std::string &backendName,
                    const llmc_backend_api &api) {
  for (uint32_t i = 0; i < graph.num_weights; ++i) {
    const uint32_t d = graph.weights[i].dtype;
    const uint32_t minor = d == LLMC_MXFP4 ? 7 : d >= LLMC_Q4_K ? 8 : 0;
    if (api.abi_minor >= minor)
      continue;
    std::string format = dtypeName(static_cast<llmc_dtype>(d));
    for (char &c : format) // as GGUF names them: MXFP4, Q4_K
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    throw Error(
        planPath + ": weight '" + graph.weights[i].name + "' is " + format +
        ", which needs backend ABI 1." + std::to_string(minor) + "; backend '" +
        backendName + "' speaks " + std::to_string(api.abi_major) + "." +
        std::to_string(api.abi_minor) + ": rebuild the plugin with this llmc");
  }
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
    : Engine(plan, options, chosen,
             agreedPool(planKvPool(plan, options, chosen), options.comm)) {}

namespace {

/// Every rank must run the same plan (each maps its own slices of it):
/// rank 0's size and shape of the plan against this rank's.
void checkSamePlan(const Plan &plan, Communicator &comm) {
  const PlanConfig &c = plan.config();
  const std::string mine =
      std::to_string(plan.fileSize()) + " bytes, " +
      std::to_string(plan.weights().size()) + " weights, " + c.architecture +
      " of " + std::to_string(c.numLayers) + " layers, tp " +
      std::to_string(c.tp) + ", compiled by " + c.compilerVersion;
  std::vector<uint8_t> bytes(mine.begin(), mine.end());
  comm.broadcast(bytes);
  const std::string first(bytes.begin(), bytes.end());
  if (first != mine)
    throw Error(plan.path() + " on rank " + std::to_string(comm.rank()) +
                " is not rank 0's plan (" + mine + "; rank 0: " + first + ")");
}

} // namespace

KvPoolPlan agreedPool(KvPoolPlan pool, Communicator *comm) {
  if (!comm || comm->size() < 2)
    return pool;
  int32_t blocks[2] = {pool.options.numBlocks, pool.options.slidingBlocks};
  std::vector<uint8_t> bytes(sizeof blocks);
  std::memcpy(bytes.data(), blocks, sizeof blocks);
  comm->broadcast(bytes);
  if (bytes.size() != sizeof blocks)
    throw Error("rank 0 sent a KV pool of " + std::to_string(bytes.size()) +
                " bytes");
  std::memcpy(blocks, bytes.data(), sizeof blocks);
  pool.options.numBlocks = blocks[0];
  pool.options.slidingBlocks = blocks[1];
  return pool;
}

Engine::Engine(const Plan &plan, const EngineOptions &options,
               const LoadedBackend &chosen, KvPoolPlan pool)
    : StepRunner(pool.options, planContext(plan, options)), plan_(plan),
      options_(options), pool_(std::move(pool)) {
  llmc_backend_options bo{};
  bo.threads = options.threads;
  bo.memory_fraction = 0.9f;
  // Ranks on one host take its devices in turn (a GPU each).
  if (options.comm && options.comm->size() > 1 && chosen.devices().size() > 1)
    bo.device = options.comm->localRank() % int(chosen.devices().size());
  backend_ = std::make_unique<BackendInstance>(chosen, bo);
  const int64_t ranks = options.comm ? options.comm->size() : 1;
  if (plan.config().tp != ranks)
    throw Error(
        plan.path() + ": compiled for " + std::to_string(plan.config().tp) +
        " tensor-parallel rank(s) (llmc compile --tp), run on " +
        std::to_string(ranks) +
        (plan.config().tp > 1
             ? ": launch it with mpirun -n " + std::to_string(plan.config().tp)
             : std::string()));
  if (ranks > 1) {
    const llmc_backend_api &api = backend_->api();
    if (api.struct_size < offsetof(llmc_backend_api, set_communicator) +
                              sizeof(api.set_communicator) ||
        !api.set_communicator)
      throw Error("backend '" + chosen.name +
                  "' runs no tensor-parallel plan (no set_communicator)");
    if (api.set_communicator(backend_->get(), &options.comm->abi()) != LLMC_OK)
      throw Error("backend '" + chosen.name +
                  "': " + api.last_error(backend_->get()));
    checkSamePlan(plan, *options.comm);
    if (options.comm->rank() == 0)
      leads_ = options.comm;
  }
  for (const char *name : {"prefill", "decode", "verify"}) {
    const Graph *g = plan.graph(name);
    if (!g)
      continue;
    checkBackendAbi(plan.path(), *g, chosen.name, backend_->api());
    checkWeightAbi(plan.path(), plan.graphDesc(name), chosen.name,
                   backend_->api());
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
  kv.kv_heads = static_cast<uint32_t>(c.rankKvHeads()); // this rank's
  kv.head_dim = static_cast<uint32_t>(c.headDim);
  checkKvAbi(kvDtypeOf(plan, options), chosen.name, backend_->api());
  kv.dtype = kvDtypeOf(plan, options);
  kv.block_size = static_cast<uint32_t>(options.blockSize);
  kv.num_blocks = static_cast<uint32_t>(numBlocks());
  if (pool_.options.slidingBlocks > 0) {
    kv.num_sliding_blocks = static_cast<uint32_t>(pool_.options.slidingBlocks);
    kv.sliding_layers = pool_.sliding.layers.data();
  }
  cache_ = std::make_unique<DeviceKvCache>(backend_->createKvCache(kv));
}

Engine::~Engine() {
  if (!leads_)
    return;
  try { // the followers return from follow()
    tellFollowers(encodeStop());
  } catch (const std::exception &e) {
    leads_->abort(e.what());
  }
}

void Engine::follow() {
  const size_t V = static_cast<size_t>(vocabSize());
  std::vector<uint8_t> bytes;
  std::vector<float> logits;
  for (;;) {
    options_.comm->broadcast(bytes);
    StepMessage m = decodeStepMessage(bytes);
    if (m.kind == StepMessage::Stop)
      return;
    if (m.kind == StepMessage::CopyBlock) {
      cache_->copyBlock(m.copy.src, m.copy.dst, m.copy.sliding);
      continue;
    }
    // Every rank computes the whole logits (the LM head is replicated);
    // rank 0's are the ones sampled.
    logits.resize(std::max(m.batch.logitsRows.size(), m.batch.tokens.size()) *
                  V);
    backend_->execute(prepared_.at(m.batch.graph), cache_.get(),
                      m.batch.args(logits.data()));
  }
}

int64_t Engine::kvBytesPerToken() const {
  return int64_t(llmc::kvBytesPerToken(plan_.config(), kvDtype()));
}

llmc_dtype Engine::kvDtype() const { return kvDtypeOf(plan_, options_); }

void Engine::tellFollowers(std::vector<uint8_t> message) {
  leads_->broadcast(message);
}

void Engine::copyBlock(const BlockCopy &c) {
  if (leads_)
    tellFollowers(encodeCopyBlock(c));
  cache_->copyBlock(c.src, c.dst, c.sliding);
}

void Engine::execute(const StepBatch &batch, std::span<const StepWork> work,
                     float *logits) {
  const size_t V = static_cast<size_t>(vocabSize());
  if (leads_)
    tellFollowers(encodeExecute(batch));
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
  // Every row's logits come chunk by chunk too (the verify graph), so a
  // long window never needs more of the pools than a prefill chunk does.
  const size_t chunk = static_cast<size_t>(std::max(1, options_.prefillChunk));
  const size_t vocab = static_cast<size_t>(vocabSize());
  for (size_t start = 0; start < tokens.size(); start += chunk) {
    size_t n = std::min(chunk, tokens.size() - start);
    bool last = start + n == tokens.size();
    StepWork w{seq, tokens.subspan(start, n),
               allLogits ? static_cast<int32_t>(n) : (last ? 1 : 0),
               kv().length(seq) - static_cast<int64_t>(start) +
                   static_cast<int64_t>(tokens.size())};
    step(std::span<const StepWork>(&w, 1),
         allLogits ? logits + start * vocab : logits);
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
