//===- engine.cpp - One graph execution per step
//----------------------------===//

#include "llmc/runtime/engine.h"
#include "llmc/support/error.h"

#include <algorithm>

namespace llmc {

namespace {

int64_t planContext(const Plan &plan, const EngineOptions &o) {
  int64_t ctx =
      o.contextLength > 0 ? o.contextLength : plan.config().contextLength;
  if (ctx <= 0)
    throw Error(plan.path() + ": the plan has no context length");
  return ctx;
}

int32_t poolBlocks(const Plan &plan, const EngineOptions &o) {
  if (o.blockSize <= 0)
    throw Error("--block-size must be positive, got " +
                std::to_string(o.blockSize));
  int64_t perSeq = (planContext(plan, o) + o.blockSize - 1) / o.blockSize;
  return static_cast<int32_t>(perSeq * std::max(1, o.maxSequences));
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
                  (b->devices.empty() ? std::string("no device")
                                      : std::string(b->devices[0].reason)));
    return *b;
  }
  if (const LoadedBackend *b = registry.find(planTarget); b && b->usable())
    return *b;
  if (const LoadedBackend *b = registry.find("ref"); b && b->usable())
    return *b;
  throw Error("no usable backend found (found: " + names() + ")");
}

struct Engine::Step {
  std::vector<int32_t> tokens, positions, slots, queryStart, contextLens,
      blockTables, logitsRows;
  int32_t maxBlocks = 1;
};

Engine::Engine(const Plan &plan, const BackendRegistry &registry,
               EngineOptions options)
    : plan_(plan), options_(options),
      contextLength_(planContext(plan, options)),
      blocks_(poolBlocks(plan, options)) {
  const LoadedBackend &chosen =
      chooseBackend(registry, options.backend, plan.config().target);
  llmc_backend_options bo{};
  bo.threads = options.threads;
  bo.memory_fraction = 0.9f;
  backend_ = std::make_unique<BackendInstance>(chosen, bo);
  for (const char *name : {"prefill", "decode", "verify"})
    if (plan.graph(name))
      prepared_.emplace(name, backend_->prepare(plan.graphDesc(name)));
  for (const char *name : {"prefill", "decode"})
    if (!prepared_.count(name))
      throw Error(plan.path() + ": the plan has no '" + name + "' graph");

  llmc_kv_cache_desc kv{};
  const PlanConfig &c = plan.config();
  kv.layers = static_cast<uint32_t>(c.numLayers);
  kv.kv_heads = static_cast<uint32_t>(c.numKVHeads);
  kv.head_dim = static_cast<uint32_t>(c.headDim);
  kv.dtype = c.kvDtype;
  kv.block_size = static_cast<uint32_t>(options.blockSize);
  kv.num_blocks = static_cast<uint32_t>(blocks_.numBlocks());
  cache_ = std::make_unique<DeviceKvCache>(backend_->createKvCache(kv));
}

Engine::~Engine() = default;

int64_t Engine::kvBytesPerToken() const {
  const PlanConfig &c = plan_.config();
  return 2 * c.numLayers * c.numKVHeads * c.headDim *
         static_cast<int64_t>(dtypeBytes(c.kvDtype, 1));
}

int64_t Engine::kvPoolBytes() const {
  return kvBytesPerToken() * blocks_.numBlocks() * options_.blockSize;
}

int32_t Engine::newSequence() {
  int32_t id = nextSeq_++;
  seqs_[id] = SequenceState{};
  return id;
}

void Engine::releaseSequence(int32_t seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end())
    return;
  for (int32_t b : it->second.blocks)
    blocks_.release(b);
  seqs_.erase(it);
}

int32_t Engine::forkSequence(int32_t seq) {
  SequenceState copy = seqs_.at(seq);
  for (int32_t b : copy.blocks)
    blocks_.retain(b);
  int32_t id = nextSeq_++;
  seqs_[id] = std::move(copy);
  return id;
}

int64_t Engine::length(int32_t seq) const { return seqs_.at(seq).length; }

void Engine::truncate(int32_t seq, int64_t length) {
  SequenceState &s = seqs_.at(seq);
  if (length < 0 || length > s.length)
    throw Error("cannot truncate a sequence of " + std::to_string(s.length) +
                " tokens to " + std::to_string(length));
  const int64_t bs = options_.blockSize;
  const auto keep = static_cast<size_t>((length + bs - 1) / bs);
  while (s.blocks.size() > keep) {
    blocks_.release(s.blocks.back());
    s.blocks.pop_back();
  }
  s.length = length;
}

/// Makes room for `newTokens` more tokens; a shared last block that would be
/// written into is copied first (copy-on-write).
void Engine::reserve(int32_t seq, int64_t newTokens) {
  SequenceState &s = seqs_.at(seq);
  int64_t end = s.length + newTokens;
  if (end > contextLength_)
    throw Error("sequence needs " + std::to_string(end) +
                " positions but the context length is " +
                std::to_string(contextLength_));
  const int32_t bs = options_.blockSize;
  int64_t firstWritten = s.length / bs;
  if (s.length % bs != 0 &&
      firstWritten < static_cast<int64_t>(s.blocks.size())) {
    int32_t &b = s.blocks[firstWritten];
    if (blocks_.refcount(b) > 1) {
      int32_t fresh = blocks_.allocate(bs);
      cache_->copyBlock(b, fresh);
      blocks_.release(b);
      b = fresh;
    }
  }
  while (static_cast<int64_t>(s.blocks.size()) * bs < end)
    s.blocks.push_back(blocks_.allocate(bs));
}

void Engine::run(const std::string &graph, const Step &step, float *logits) {
  llmc_step_args a{};
  a.num_tokens = static_cast<int32_t>(step.tokens.size());
  a.num_seqs = static_cast<int32_t>(step.contextLens.size());
  a.tokens = step.tokens.data();
  a.positions = step.positions.data();
  a.slot_mapping = step.slots.data();
  a.query_start = step.queryStart.data();
  a.context_lens = step.contextLens.data();
  a.block_tables = step.blockTables.data();
  a.max_blocks = step.maxBlocks;
  a.num_logits = static_cast<int32_t>(step.logitsRows.size());
  a.logits_rows = step.logitsRows.data();
  a.logits = logits;
  backend_->execute(prepared_.at(graph), cache_.get(), a);
}

void Engine::prefill(int32_t seq, std::span<const int32_t> tokens,
                     float *logits, bool allLogits) {
  if (tokens.empty())
    throw Error("prefill needs at least one token");
  if (allLogits && !prepared_.count("verify"))
    throw Error(plan_.path() + ": the plan has no 'verify' graph");
  const int32_t bs = options_.blockSize;
  const size_t chunk =
      allLogits ? tokens.size()
                : static_cast<size_t>(std::max(1, options_.prefillChunk));
  for (size_t start = 0; start < tokens.size(); start += chunk) {
    size_t n = std::min(chunk, tokens.size() - start);
    reserve(seq, static_cast<int64_t>(n));
    SequenceState &s = seqs_.at(seq);
    Step step;
    for (size_t i = 0; i < n; ++i) {
      int64_t pos = s.length + static_cast<int64_t>(i);
      step.tokens.push_back(tokens[start + i]);
      step.positions.push_back(static_cast<int32_t>(pos));
      step.slots.push_back(s.blocks[pos / bs] * bs +
                           static_cast<int32_t>(pos % bs));
    }
    step.queryStart = {0, static_cast<int32_t>(n)};
    step.contextLens = {
        static_cast<int32_t>(s.length + static_cast<int64_t>(n))};
    step.maxBlocks = static_cast<int32_t>(s.blocks.size());
    step.blockTables = s.blocks;
    bool last = start + n == tokens.size();
    if (allLogits) {
      for (size_t i = 0; i < n; ++i)
        step.logitsRows.push_back(static_cast<int32_t>(i));
      run("verify", step, logits);
    } else {
      // Intermediate chunks still produce one row, which is simply dropped.
      step.logitsRows = {static_cast<int32_t>(n - 1)};
      std::vector<float> scratch;
      float *out = logits;
      if (!last) {
        scratch.resize(static_cast<size_t>(vocabSize()));
        out = scratch.data();
      }
      run("prefill", step, out);
    }
    s.length += static_cast<int64_t>(n);
  }
}

void Engine::decode(std::span<const int32_t> seqs,
                    std::span<const int32_t> tokens, float *logits) {
  if (seqs.size() != tokens.size() || seqs.empty())
    throw Error("decode needs one token per sequence");
  const int32_t bs = options_.blockSize;
  Step step;
  int32_t maxBlocks = 1;
  for (int32_t seq : seqs) {
    reserve(seq, 1);
    maxBlocks =
        std::max(maxBlocks, static_cast<int32_t>(seqs_.at(seq).blocks.size()));
  }
  step.maxBlocks = maxBlocks;
  step.queryStart.push_back(0);
  for (size_t i = 0; i < seqs.size(); ++i) {
    SequenceState &s = seqs_.at(seqs[i]);
    int64_t pos = s.length;
    step.tokens.push_back(tokens[i]);
    step.positions.push_back(static_cast<int32_t>(pos));
    step.slots.push_back(s.blocks[pos / bs] * bs +
                         static_cast<int32_t>(pos % bs));
    step.queryStart.push_back(static_cast<int32_t>(i + 1));
    step.contextLens.push_back(static_cast<int32_t>(pos + 1));
    std::vector<int32_t> row = s.blocks;
    row.resize(static_cast<size_t>(maxBlocks), 0);
    step.blockTables.insert(step.blockTables.end(), row.begin(), row.end());
    step.logitsRows.push_back(static_cast<int32_t>(i));
  }
  run("decode", step, logits);
  for (int32_t seq : seqs)
    seqs_.at(seq).length += 1;
}

} // namespace llmc
