//===- kernels_bench.cpp - The cpu backend's kernels, timed ---------------===//
//
// GEMV (decode) reports the weight bytes read per second: compare with the
// machine's DRAM read bandwidth. The 2048x2048 and 5632x2048 shapes may sit
// in L2/L3, so "stream" runs over the linear weights of several layers of
// a 1.1B Llama (hidden 2048, ff 5632, 4 kv heads of 64), far beyond the
// caches. Prefill matmul reports FLOP/s, decode attention the time per call.
//
// Run: OMP_NUM_THREADS=2 build/bin/llmc_kernels_bench
//        --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
//
//===----------------------------------------------------------------------===//
#include "cpu.h"
#include "gemv_kquant.h"

#include "llmc/support/half.h"

#include <benchmark/benchmark.h>

#include <random>

using namespace llmc;
using namespace llmc::cpu;

namespace {

// MX4: MXFP4 with int8 activations (gpt-oss's experts as a GGUF runs them).
enum Fmt { F32, BF16, Q8, Q4, MX4, Q4K, Q5K, Q6K };

bool isKQuant(Fmt f) { return f >= Q4K; }
kquant::Format kquantOf(Fmt f) { return kquant::Format(int(f) - int(Q4K)); }

// A linear weight of one format with random contents.
struct Weight {
  Fmt fmt;
  int64_t N, K;
  std::vector<uint8_t> bytes;
  std::vector<float> scales;

  std::vector<uint8_t> headers;            // K-quants
  std::vector<uint8_t> e8m0;               // MX4
  std::shared_ptr<PackedIntWeight> packed; // Q8, Q4, MX4: as LINEAR packs
  std::shared_ptr<PackedFloatWeight> packedFloat; // F32, BF16: as LINEAR

  Weight(Fmt f, int64_t n, int64_t k) : fmt(f), N(n), K(k) {
    std::mt19937 rng(7);
    if (isKQuant(f)) {
      const kquant::Layout l = kquant::layout(kquantOf(f));
      const int64_t blocks = n * k / kquant::kBlock;
      bytes.resize(size_t(blocks * l.codeBytes));
      headers.resize(size_t(blocks * l.headerBytes));
      for (auto &b : bytes)
        b = uint8_t(rng());
      for (int64_t b = 0; b < blocks; ++b) {
        uint8_t *h = headers.data() + b * l.headerBytes;
        for (int i = 0; i < l.headerBytes; ++i)
          h[i] = uint8_t(rng() & 0x3f);
        // d (and dmin) a small normal f16: 0x1400 is 2^-10.
        const int at = kquantOf(f) == kquant::Format::Q6_K ? 16 : 0;
        h[at] = 0, h[at + 1] = 0x14;
        if (at == 0)
          h[2] = 0, h[3] = 0x14;
      }
      return;
    }
    size_t size = f == F32    ? n * k * 4
                  : f == BF16 ? n * k * 2
                  : f == Q8   ? n * k
                              : n * k / 2;
    bytes.resize(size);
    for (auto &b : bytes)
      b = uint8_t(rng() & 0x3f);
    // Float weights as trained ones are (random bytes would be tiny or
    // denormal values, whose products run slow on some units).
    std::uniform_real_distribution<float> u(-0.05f, 0.05f);
    if (f == F32) {
      auto *w = reinterpret_cast<float *>(bytes.data());
      for (size_t i = 0; i < size / 4; ++i)
        w[i] = u(rng);
    } else if (f == BF16) {
      auto *w = reinterpret_cast<uint16_t *>(bytes.data());
      for (size_t i = 0; i < size / 2; ++i)
        w[i] = floatToBf16(u(rng));
    }
    if (f == MX4) {
      e8m0.assign(size_t(n * k / 32), 120);
      for (auto &b : bytes)
        b = uint8_t(rng());
    } else {
      scales.assign(size_t(n * (f == Q4 ? k / 32 : 1)), 0.01f);
    }
    if (f == F32 || f == BF16)
      packedFloat = packFloatWeight(
          f == F32 ? LLMC_F32 : LLMC_BF16, bytes.data(), n, k,
          f == BF16 && level().bf16Tile && k % 2 == 0); // as LINEAR packs
    if ((f == Q8 || f == Q4 || f == MX4) && intTilesApply(k, group()))
      packed = packIntWeight(level().ints, intFormat(dtype()), bytes.data(),
                             scales.data(), n, k, group(), e8m0.data());
  }
  size_t weightBytes() const {
    return bytes.size() + headers.size() + scales.size() * 4 + e8m0.size();
  }
  uint32_t dtype() const {
    return fmt == Q8 ? LLMC_I8 : fmt == Q4 ? LLMC_I4 : LLMC_MXFP4;
  }
  int64_t group() const { return fmt == Q8 ? K : 32; }

  /// The kernel LINEAR runs for this format at the CPU's level.
  void gemv(const GemvArgs &a) const {
    const Backend &b = level();
    if (isKQuant(fmt)) {
      const kquant::Format f = kquantOf(fmt);
      return gemvKQuant(a, KQuantWeight{f, bytes.data(), headers.data(), true,
                                        b.kquant.dot[int(f)],
                                        b.kquant.pairedX[int(f)],
                                        b.kquant.maxRows, &b.ints});
    }
    switch (fmt) {
    case F32:
    case BF16:
      if (packedFloat->pairs)
        return gemmPackedBf16(b.bf16Tile, a, *packedFloat);
      return gemmPackedFloat(b.f32Tile, a, *packedFloat);
    default: // Q8, Q4, MX4 (their blocks fit every shape here)
      return gemmPackedInt(b.ints, a, *packed);
    }
  }

  static const Backend &level() {
    static Backend b = [] {
      Backend s;
      useLevel(s, selectIsa());
      return s;
    }();
    return b;
  }
};

void BM_Gemv(benchmark::State &state) {
  Weight w(Fmt(state.range(0)), state.range(1), state.range(2));
  std::vector<float> x(size_t(w.K), 0.5f), out(size_t(w.N));
  for (auto _ : state) {
    w.gemv({x.data(), 1, w.K, w.N, nullptr, out.data()});
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) *
                          int64_t(w.weightBytes()));
}
BENCHMARK(BM_Gemv)
    ->ArgNames({"fmt", "N", "K"})
    ->ArgsProduct({{F32, BF16, Q8, Q4}, {2048, 5632}, {2048}})
    ->UseRealTime();

/// The seven linear weights of each of `layers` layers of a 1.1B Llama.
std::vector<Weight> llamaLayers(Fmt fmt, int64_t layers) {
  std::vector<Weight> ws;
  for (int64_t l = 0; l < layers; ++l)
    for (auto [n, k] : {std::pair<int64_t, int64_t>{2048, 2048},
                        {256, 2048},
                        {256, 2048},
                        {2048, 2048},
                        {5632, 2048},
                        {5632, 2048},
                        {2048, 5632}})
      ws.emplace_back(fmt, n, k);
  return ws;
}

/// The linears of a decode step of the ~110M bench model as its plan runs
/// them (q/k/v and gate/up fused, 12 layers) and its 50257-row LM head.
std::vector<Weight> benchModelLinears(Fmt fmt) {
  std::vector<Weight> ws;
  for (int64_t l = 0; l < 12; ++l)
    for (auto [n, k] : {std::pair<int64_t, int64_t>{1280, 768},
                        {768, 768},
                        {4096, 768},
                        {768, 2048}})
      ws.emplace_back(fmt, n, k);
  ws.emplace_back(fmt, 50257, 768);
  return ws;
}

// The linears of `layers` layers of a 1.1B Llama (12: 0.3-1.8 GB of weights,
// beyond any cache), or with layers 0 the bench model's step, for `rows`
// tokens at once (a batched decode step): bytes are the weights read once,
// FLOP/s what the rows do with them.
void BM_GemvStream(benchmark::State &state) {
  Fmt fmt = Fmt(state.range(0));
  int64_t layers = state.range(1), rows = state.range(2);
  std::vector<Weight> ws =
      layers ? llamaLayers(fmt, layers) : benchModelLinears(fmt);
  int64_t widest = 0;
  for (const Weight &w : ws)
    widest = std::max({widest, w.N, w.K});
  std::vector<float> x(size_t(rows * widest), 0.5f), out(size_t(rows * widest));
  size_t total = 0;
  double flops = 0;
  for (const Weight &w : ws) {
    total += w.weightBytes();
    flops += 2.0 * double(rows * w.N * w.K);
  }
  for (auto _ : state) {
    for (const Weight &w : ws)
      w.gemv({x.data(), rows, w.K, w.N, nullptr, out.data()});
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(total));
  state.counters["FLOP/s"] = benchmark::Counter(
      double(state.iterations()) * flops, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GemvStream)
    ->ArgNames({"fmt", "layers", "rows"})
    ->ArgsProduct({{F32, BF16, Q8, Q4, MX4, Q4K, Q5K, Q6K}, {12}, {1}})
    ->UseRealTime();
// Batched decode: 2 to 64 rows on the formats a server runs.
BENCHMARK(BM_GemvStream)
    ->Name("BM_BatchedDecode")
    ->ArgNames({"fmt", "layers", "rows"})
    ->ArgsProduct({{BF16, Q8, Q4, MX4, Q4K}, {12}, {2, 4, 8, 16, 32, 64}})
    ->UseRealTime();
// The bench model's step (layers 0), the engine's `--batch 1,16` case.
BENCHMARK(BM_GemvStream)
    ->Name("BM_BatchedDecodeBenchModel")
    ->ArgNames({"fmt", "layers", "rows"})
    ->ArgsProduct({{BF16, Q8, Q4}, {0}, {1, 16}})
    ->UseRealTime();

// 512 rows x N x K (2048 x 2048 unless given) through the path LINEAR takes
// for many rows.
void BM_Prefill(benchmark::State &state) {
  Fmt fmt = Fmt(state.range(0));
  int64_t M = 512, N = 2048, K = 2048;
  if (state.range(1))
    N = state.range(1), K = state.range(2);
  Weight w(fmt, N, K);
  state.SetLabel(std::string("llmc GEMM, ") + isaName(Weight::level().isa));
  std::vector<float> x(size_t(M * K), 0.25f), out(size_t(M * N));
  for (auto _ : state) {
    w.gemv({x.data(), M, K, N, nullptr, out.data()});
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(double(state.iterations()) * 2.0 * double(M * N * K),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Prefill)
    ->ArgNames({"fmt", "N", "K"})
    ->ArgsProduct({benchmark::CreateDenseRange(F32, Q6K, 1), {0}, {0}})
    ->UseRealTime();
// The bench model's prompt linears (q/k/v and gate/up fused, o, down).
BENCHMARK(BM_Prefill)
    ->Name("BM_PrefillBenchModel")
    ->ArgNames({"fmt", "N", "K"})
    ->Args({Q8, 1280, 768})
    ->Args({Q8, 4096, 768})
    ->Args({Q8, 768, 2048})
    ->Args({Q4, 1280, 768})
    ->Args({Q4, 4096, 768})
    ->Args({Q4, 768, 2048})
    ->UseRealTime();

// An op of `kind` reading buffer 0 into buffer 1, its attributes 0.
llmc_op_desc bufferOp(uint32_t kind) {
  llmc_op_desc op{};
  op.kind = kind;
  op.num_operands = 1;
  op.num_results = 1;
  op.operands[0] = {LLMC_OPERAND_BUFFER, 0};
  op.results[0] = 1;
  return op;
}

// The bench model's gate/up (4096 x 768) and its SWIGLU, as LINEAR runs
// them: apart (the linear's 2I-wide result, then the op over it) or fused
// (the linear writes silu(gate) · up), for a decode row, a batch, a prompt.
void BM_GateUpSwiglu(benchmark::State &state) {
  const Fmt fmt = Fmt(state.range(0));
  const int64_t rows = state.range(1), I = 2048, K = 768;
  const bool fused = state.range(2) != 0;
  Weight w(fmt, 2 * I, K);
  if (!w.packed) {
    state.SkipWithError("no packed integer tiles at this level");
    return;
  }
  std::vector<float> x(size_t(rows * K), 0.25f), gu(size_t(rows * 2 * I)),
      y(size_t(rows * I));
  Graph g;
  Kernel swiglu = makeElementwise(bufferOp(LLMC_OP_SWIGLU), g,
                                  const_cast<Backend &>(Weight::level()));
  llmc_step_args args{};
  args.num_tokens = int32_t(rows);
  Step step{g, args, nullptr, {{gu.data(), rows, 2 * I}, {y.data(), rows, I}}};
  const GemvArgs a{x.data(), rows, K, 2 * I, nullptr, gu.data()};
  for (auto _ : state) {
    if (fused) {
      gemmPackedInt(Weight::level().ints, a, *w.packed, y.data());
    } else {
      gemmPackedInt(Weight::level().ints, a, *w.packed);
      swiglu(step);
    }
    benchmark::DoNotOptimize(y.data());
  }
}
BENCHMARK(BM_GateUpSwiglu)
    ->ArgNames({"fmt", "rows", "fused"})
    ->ArgsProduct({{Q8, Q4}, {1, 16, 512}, {0, 1}})
    ->UseRealTime();

// Layer 0's attention op reading buffer 0 into buffer 1, scale 1/8.
llmc_op_desc attentionOp(uint32_t kind, int64_t heads, int64_t kvHeads,
                         int64_t D) {
  llmc_op_desc op = bufferOp(kind);
  op.i[0] = 0;
  op.i[1] = heads;
  op.i[2] = kvHeads;
  op.i[3] = D;
  op.f[0] = 0.125;
  return op;
}

// One decode step of `seqs` sequences of `ctx` keys each, bf16 cache in
// blocks of 16: 32 heads over 4 kv heads of 64 (1.1B), or the small bench
// model's 12 over 4 (batched decode).
void BM_DecodeAttention(benchmark::State &state) {
  int64_t ctx = state.range(0), seqs = state.range(1), heads = state.range(2),
          kvHeads = 4, D = 64, bs = 16;
  int64_t perSeq = (ctx + bs - 1) / bs, blocks = perSeq * seqs;
  KvCache cache;
  common::initKvCache(cache, {1, uint32_t(kvHeads), uint32_t(D), LLMC_BF16,
                              uint32_t(bs), uint32_t(blocks), 0, nullptr});
  for (auto *layer : {&cache.k[0], &cache.v[0]})
    for (size_t i = 0; i < layer->size(); i += 2)
      (*layer)[i + 1] = 0x3c; // bf16 ~0.01..0.02
  // Blocks handed out back to front, sequences interleaved (as a pool
  // shared by many requests leaves them).
  std::vector<int32_t> table(static_cast<size_t>(blocks));
  for (int64_t b = 0; b < seqs; ++b)
    for (int64_t i = 0; i < perSeq; ++i)
      table[size_t(b * perSeq + i)] = int32_t(blocks - 1 - (i * seqs + b));
  std::vector<int32_t> len(static_cast<size_t>(seqs), int32_t(ctx)),
      start(static_cast<size_t>(seqs + 1)),
      pos(static_cast<size_t>(seqs), int32_t(ctx - 1));
  for (int64_t b = 0; b <= seqs; ++b)
    start[size_t(b)] = int32_t(b);
  llmc_step_args args{};
  args.num_tokens = int32_t(seqs);
  args.num_seqs = int32_t(seqs);
  args.positions = pos.data();
  args.query_start = start.data();
  args.context_lens = len.data();
  args.block_tables = table.data();
  args.max_blocks = int32_t(perSeq);

  Graph g;
  std::vector<float> q(size_t(seqs * heads * D), 0.1f),
      out(size_t(seqs * heads * D));
  llmc_op_desc op = attentionOp(LLMC_OP_DECODE_ATTENTION, heads, kvHeads, D);
  Backend backend; // at the CPU's level, as the backend runs it
  useLevel(backend, selectIsa());
  Kernel k = makeDecodeAttention(op, g, backend);
  Step step{g,
            args,
            &cache,
            {{q.data(), seqs, heads * D}, {out.data(), seqs, heads * D}}};
  for (auto _ : state) {
    k(step);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * seqs * ctx * kvHeads *
                          D * 2 * 2);
}
BENCHMARK(BM_DecodeAttention)
    ->ArgNames({"ctx", "seqs", "heads"})
    ->Args({512, 1, 32})
    ->Args({2048, 1, 32})
    ->Args({160, 16, 12})
    ->UseRealTime();

// A whole prompt's causal attention at the small bench model's shape (12
// heads over 4 kv heads of 64, cache in blocks of 16, f32 or bf16), at the
// CPU's level: compare with LLMC_CPU_ISA=avx2 for the AVX2 path.
void BM_PrefillAttention(benchmark::State &state) {
  int64_t T = state.range(0), heads = 12, kvHeads = 4, D = 64, bs = 16;
  const llmc_dtype kv = state.range(1) ? LLMC_BF16 : LLMC_F32;
  int64_t blocks = (T + bs - 1) / bs;
  KvCache cache;
  common::initKvCache(cache, {1, uint32_t(kvHeads), uint32_t(D), uint32_t(kv),
                              uint32_t(bs), uint32_t(blocks), 0, nullptr});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto *layer : {&cache.k[0], &cache.v[0]}) {
    if (kv == LLMC_BF16) {
      auto *h = reinterpret_cast<uint16_t *>(layer->data());
      for (size_t i = 0; i < layer->size() / 2; ++i)
        h[i] = floatToBf16(u(rng));
      continue;
    }
    auto *f = reinterpret_cast<float *>(layer->data());
    for (size_t i = 0; i < layer->size() / 4; ++i)
      f[i] = u(rng);
  }
  std::vector<int32_t> table(static_cast<size_t>(blocks));
  for (int64_t i = 0; i < blocks; ++i)
    table[size_t(i)] = int32_t(i);
  std::vector<int32_t> pos(static_cast<size_t>(T));
  for (int64_t i = 0; i < T; ++i)
    pos[size_t(i)] = int32_t(i);
  int32_t len = int32_t(T), start[2] = {0, int32_t(T)};
  llmc_step_args args{};
  args.num_tokens = int32_t(T);
  args.num_seqs = 1;
  args.positions = pos.data();
  args.query_start = start;
  args.context_lens = &len;
  args.block_tables = table.data();
  args.max_blocks = int32_t(blocks);

  Graph g;
  std::vector<float> q(size_t(T * heads * D)), out(q.size());
  for (float &v : q)
    v = u(rng);
  llmc_op_desc op = attentionOp(LLMC_OP_PREFILL_ATTENTION, heads, kvHeads, D);
  Kernel k =
      makePrefillAttention(op, g, const_cast<Backend &>(Weight::level()));
  Step step{
      g, args, &cache, {{q.data(), T, heads * D}, {out.data(), T, heads * D}}};
  for (auto _ : state) {
    k(step);
    benchmark::DoNotOptimize(out.data());
  }
  // Q·Kᵀ and P·V over the causal half.
  state.counters["FLOP/s"] =
      benchmark::Counter(double(state.iterations()) * 2.0 * 2.0 *
                             double(heads * D) * double(T * (T + 1) / 2),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PrefillAttention)
    ->ArgNames({"T", "bf16"})
    ->ArgsProduct({{512, 2048}, {0, 1}})
    ->UseRealTime();

} // namespace

BENCHMARK_MAIN();
