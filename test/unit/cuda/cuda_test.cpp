//===- cuda_test.cpp - The cuda backend against ref -----------------------===//
//
// Every case builds one small graph (test/unit/backends/op_graph.h), runs it
// on ref and on cuda with the same step and compares:
//   nmse = sum((cuda - ref)^2) / sum(ref^2)
// f32 paths must agree to accumulation order; bf16/f16 weights, i8/i4 on
// the cuBLASLt path (activations rounded to bf16) and half KV caches get
// the conformance suite's low-precision bound.
//
// Without a usable CUDA device every GPU test skips with the plugin's
// reason; ReportsWhyItIsNotUsable then checks that reason and create().
//
//===----------------------------------------------------------------------===//
#include "op_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>

namespace llmc::testing {
namespace {

constexpr double kF32 = 1e-9, kF32Acc = 1e-7, kLow = 5e-6;

const LoadedBackend &cudaPlugin() {
  const LoadedBackend *b = registry().find("cuda");
  if (!b)
    throw Error("the cuda plugin was not found (LLMC_BACKEND_PATH)");
  return *b;
}

std::string unusableReason() {
  const LoadedBackend &b = cudaPlugin();
  if (b.usable())
    return "";
  return b.devices().empty() ? std::string("no device reported")
                             : std::string(b.devices()[0].reason);
}

#define SKIP_WITHOUT_GPU()                                                     \
  do {                                                                         \
    std::string why = unusableReason();                                        \
    if (!why.empty())                                                          \
      GTEST_SKIP() << "no CUDA device: " << why;                               \
  } while (0)

double nmse(const std::vector<float> &out, const std::vector<float> &ref) {
  if (out.size() != ref.size())
    return INFINITY;
  double err = 0, norm = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(out[i]))
      return INFINITY;
    err += (double(out[i]) - ref[i]) * (double(out[i]) - ref[i]);
    norm += double(ref[i]) * ref[i];
  }
  return norm > 0 ? err / norm : err;
}

// Builds the case's graph into g and returns the buffer to read back.
using Build = std::function<uint32_t(OpGraph &g)>;

std::vector<float> runOn(const BackendInstance &backend, const Build &build,
                         StepData step, const llmc_kv_cache_desc *kv) {
  OpGraph g;
  uint32_t out = build(g);
  std::unique_ptr<DeviceKvCache> cache;
  if (kv)
    cache = std::make_unique<DeviceKvCache>(backend.createKvCache(*kv));
  return runGraph(backend, g, out, step, cache.get());
}

class Cuda : public ::testing::Test {
public:
  const BackendInstance *refBackend() const { return ref.get(); }
  const BackendInstance *cudaBackend() const { return cuda.get(); }

protected:
  void SetUp() override {
    SKIP_WITHOUT_GPU();
    ref = std::make_unique<BackendInstance>(*registry().find("ref"));
    cuda = std::make_unique<BackendInstance>(cudaPlugin());
  }

  void expectMatch(const Build &build, const StepData &step, double bound,
                   const std::string &what,
                   const llmc_kv_cache_desc *kv = nullptr) {
    std::vector<float> want = runOn(*ref, build, step, kv);
    std::vector<float> got = runOn(*cuda, build, step, kv);
    double err = nmse(got, want);
    EXPECT_LE(err, bound) << what << ": nmse " << err;
  }

  std::unique_ptr<BackendInstance> ref, cuda;
  std::mt19937 rng{1234};
};

bool mapped(const std::string &library) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(library) != std::string::npos)
      return true;
  return false;
}

// ctest runs each case in its own process, so nothing before this asked.
TEST(CudaPlugin, LoadsNoCudaLibraryUntilAskedForItsDevices) {
  BackendRegistry r = BackendRegistry::discover();
  const LoadedBackend *cuda = r.find("cuda");
  ASSERT_NE(cuda, nullptr);
  const LoadedBackend *ref = r.find("ref");
  ASSERT_NE(ref, nullptr);
  EXPECT_TRUE(ref->usable()); // choosing another backend asks only it
  EXPECT_FALSE(mapped("libllmc-cuda-device.so"));
  EXPECT_FALSE(mapped("libcublas"));
  EXPECT_FALSE(mapped("libcudart"));
  // Without a driver even listing the devices loads nothing.
  const bool driver = cuda->score() > 0;
  ASSERT_FALSE(cuda->devices().empty());
  EXPECT_EQ(mapped("libllmc-cuda-device.so"), driver);
  if (!driver) {
    EXPECT_FALSE(mapped("libcublas"));
  }
}

TEST(CudaPlugin, ReportsWhyItIsNotUsable) {
  const LoadedBackend &b = cudaPlugin();
  if (b.usable())
    GTEST_SKIP() << "a CUDA device is usable here; the GPU tests run instead";
  ASSERT_FALSE(b.devices().empty());
  std::string reason = b.devices()[0].reason;
  EXPECT_EQ(reason.rfind("no CUDA device (", 0), 0u) << reason;
  EXPECT_EQ(b.devices()[0].usable, 0);
  // create() fails with the same message, and never crashes.
  llmc_backend *backend = nullptr;
  llmc_backend_options options{};
  EXPECT_NE(b.api->create(&options, &backend), LLMC_OK);
  EXPECT_EQ(backend, nullptr);
  EXPECT_NE(std::string(b.api->last_error(nullptr)).find(reason),
            std::string::npos)
      << b.api->last_error(nullptr);
  // Passes: the plugin reports why and create() refuses cleanly.
  std::printf("cuda plugin: %s\n", reason.c_str());
}

TEST_F(Cuda, Embedding) {
  for (llmc_dtype dt : {LLMC_F32, LLMC_BF16, LLMC_F16}) {
    std::vector<float> table = randomVector(rng, 50 * 24);
    auto build = [&](OpGraph &g) {
      uint32_t w = g.weight(dt, {50, 24}, table);
      uint32_t out = g.buffer(rowsT(), 24);
      g.add(makeOp(LLMC_OP_EMBEDDING, {wt(w), tokensInput()}, {out}));
      return out;
    };
    StepData s = StepData::simple(7, 7);
    s.tokens = {3, 49, 0, 7, 7, 12, 30};
    expectMatch(build, s, kF32, "embedding");
  }
}

TEST_F(Cuda, Norms) {
  for (int64_t cols : {64, 1000, 4096}) {
    std::vector<float> x = randomVector(rng, size_t(9 * cols), -3, 3);
    std::vector<float> r = randomVector(rng, size_t(9 * cols));
    std::vector<float> w = randomVector(rng, size_t(cols));
    std::vector<float> bias = randomVector(rng, size_t(cols));
    StepData s = StepData::simple(9, 9);
    expectMatch(
        [&](OpGraph &g) {
          uint32_t in = g.feed(x, cols), out = g.buffer(rowsT(), cols);
          g.add(makeOp(LLMC_OP_RMS_NORM,
                       {buf(in), wt(g.weight(LLMC_BF16, {cols}, w))}, {out}, {},
                       {1e-5}));
          return out;
        },
        s, kF32Acc, "rms_norm");
    expectMatch(
        [&](OpGraph &g) {
          uint32_t a = g.feed(x, cols), b = g.feed(r, cols);
          uint32_t sum = g.buffer(rowsT(), cols), out = g.buffer(rowsT(), cols);
          g.add(makeOp(LLMC_OP_ADD_RMS_NORM,
                       {buf(a), buf(b), wt(g.weight(LLMC_F32, {cols}, w))},
                       {sum, out}, {}, {1e-6}));
          uint32_t both = g.buffer(rowsT(), cols);
          g.add(makeOp(LLMC_OP_ADD, {buf(sum), buf(out)}, {both}));
          return both;
        },
        s, kF32Acc, "add_rms_norm");
    expectMatch(
        [&](OpGraph &g) {
          uint32_t in = g.feed(x, cols), out = g.buffer(rowsT(), cols);
          g.add(makeOp(LLMC_OP_LAYER_NORM,
                       {buf(in), wt(g.weight(LLMC_F32, {cols}, w)),
                        wt(g.weight(LLMC_F32, {cols}, bias))},
                       {out}, {}, {1e-5}));
          return out;
        },
        s, kF32Acc, "layer_norm");
  }
}

TEST_F(Cuda, Rope) {
  // heads, head_dim, rotary_dim, style, scaling
  struct R {
    int64_t heads, dim, rot, style;
    double scaling;
  };
  for (R c : {R{4, 64, 64, 0, 1.0}, R{2, 128, 64, 0, 1.0}, R{3, 64, 64, 1, 1.0},
              R{2, 80, 40, 1, 1.2}}) {
    int64_t cols = c.heads * c.dim;
    std::vector<float> x = randomVector(rng, size_t(6 * cols));
    std::vector<float> inv(size_t(c.rot / 2));
    for (size_t i = 0; i < inv.size(); ++i)
      inv[i] = float(std::pow(10000.0, -2.0 * double(i) / double(c.rot)));
    StepData s = StepData::simple(6, 6);
    s.positions = {0, 1, 17, 255, 4000, 131000};
    expectMatch(
        [&](OpGraph &g) {
          uint32_t in = g.feed(x, cols);
          g.add(makeOp(LLMC_OP_ROPE,
                       {buf(in), positionsInput(),
                        wt(g.weight(LLMC_F32, {c.rot / 2}, inv))},
                       {in}, {c.heads, c.dim, c.rot, c.style}, {c.scaling}));
          return in;
        },
        s, kF32Acc, "rope");
  }
}

TEST_F(Cuda, Pointwise) {
  const int64_t cols = 300;
  std::vector<float> x = randomVector(rng, 5 * 2 * cols, -4, 4);
  std::vector<float> y = randomVector(rng, 5 * 2 * cols, -4, 4);
  StepData s = StepData::simple(5, 5);
  for (llmc_op_kind k : {LLMC_OP_ADD, LLMC_OP_MUL})
    expectMatch(
        [&](OpGraph &g) {
          uint32_t a = g.feed(x, cols), b = g.feed(y, cols);
          uint32_t out = g.buffer(rowsT(), cols);
          g.add(makeOp(k, {buf(a), buf(b)}, {out}));
          return out;
        },
        s, kF32, "add/mul");
  for (int64_t tanhApprox : {-1, 0, 1})
    expectMatch(
        [&](OpGraph &g) {
          uint32_t a = g.feed(x, cols);
          uint32_t out = g.buffer(rowsT(), cols);
          if (tanhApprox < 0)
            g.add(makeOp(LLMC_OP_SILU, {buf(a)}, {out}));
          else
            g.add(makeOp(LLMC_OP_GELU, {buf(a)}, {out}, {tanhApprox}));
          return out;
        },
        s, kF32Acc, "silu/gelu");
  expectMatch(
      [&](OpGraph &g) {
        uint32_t a = g.feed(x, 2 * cols);
        uint32_t out = g.buffer(rowsT(), cols);
        g.add(makeOp(LLMC_OP_SWIGLU, {buf(a)}, {out}));
        return out;
      },
      s, kF32Acc, "swiglu");
  expectMatch(
      [&](OpGraph &g) {
        uint32_t a = g.feed(x, 2 * cols);
        uint32_t out = g.buffer(rowsT(), 77);
        g.add(makeOp(LLMC_OP_SLICE, {buf(a)}, {out}, {123}));
        return out;
      },
      s, kF32, "slice");
  StepData pick = StepData::simple(5, 3);
  pick.logitsRows = {4, 0, 2};
  expectMatch(
      [&](OpGraph &g) {
        uint32_t a = g.feed(x, cols);
        uint32_t out = g.buffer(rowsB(), cols);
        g.add(makeOp(LLMC_OP_TAKE_ROWS, {buf(a)}, {out}));
        return out;
      },
      pick, kF32, "take_rows");
}

TEST_F(Cuda, Linear) {
  struct L {
    llmc_dtype dtype;
    int64_t group;
  };
  // rows 1 and 8: GEMV; 9 and 40: cuBLASLt. K 256 vectorized, 200 not.
  for (L l : {L{LLMC_F32, 0}, L{LLMC_BF16, 0}, L{LLMC_F16, 0}, L{LLMC_I8, 0},
              L{LLMC_I4, 32}, L{LLMC_I4, 128}})
    for (int64_t k : {256, 200})
      for (int32_t rows : {1, 8, 9, 40})
        for (bool bias : {false, true}) {
          if (l.dtype == LLMC_I4 && k % l.group != 0)
            continue;
          int64_t n = 96;
          std::vector<float> x = randomVector(rng, size_t(rows * k));
          std::vector<float> w = randomVector(rng, size_t(n * k));
          std::vector<float> bv = randomVector(rng, size_t(n));
          bool quant = l.dtype == LLMC_I8 || l.dtype == LLMC_I4;
          int64_t group = l.dtype == LLMC_I8 ? k : l.group;
          Quantized qz;
          if (quant)
            qz = quantize(l.dtype, w, n, k, group);
          auto build = [&](OpGraph &g) {
            uint32_t in = g.feed(x, k), out = g.buffer(rowsT(), n);
            llmc_operand wi, si = none(), bi = none();
            if (quant) {
              wi = wt(g.weight(l.dtype, {n, l.dtype == LLMC_I8 ? k : k / 2},
                               qz.bytes));
              si = wt(g.weight(LLMC_F32, {n, k / group}, qz.scales));
            } else {
              wi = wt(g.weight(l.dtype, {n, k}, w));
            }
            if (bias)
              bi = wt(g.weight(LLMC_F32, {n}, bv));
            g.add(makeOp(LLMC_OP_LINEAR, {buf(in), wi, si, bi}, {out},
                         {quant ? group : 0}));
            return out;
          };
          bool exact = l.dtype == LLMC_F32 || rows <= 8;
          expectMatch(build, StepData::simple(rows, rows),
                      exact ? kF32Acc : kLow,
                      "linear dtype " + std::to_string(l.dtype) + " k " +
                          std::to_string(k) + " rows " + std::to_string(rows));
        }
}

// Paged attention: sequences' blocks are scattered over the pool.
struct AttnCase {
  int heads, kvHeads, headDim, window, blockSize;
  llmc_dtype kv;
  std::vector<int> from, to; // new positions [from, to) per sequence
  bool decode;
};

void runAttention(Cuda &t, const AttnCase &c, std::mt19937 &rng, double bound) {
  int qCols = c.heads * c.headDim, kvCols = c.kvHeads * c.headDim;
  int maxBlocks = 0, blocks = 0, total = 0;
  std::vector<int> base;
  for (int len : c.to) {
    base.push_back(total);
    total += len;
    maxBlocks = std::max(maxBlocks, (len + c.blockSize - 1) / c.blockSize);
    blocks += (len + c.blockSize - 1) / c.blockSize;
  }
  std::vector<int32_t> pool(size_t(blocks + 2));
  for (size_t i = 0; i < pool.size(); ++i)
    pool[i] = int32_t(i);
  std::shuffle(pool.begin(), pool.end(), rng);
  std::vector<int32_t> tables(c.to.size() * size_t(maxBlocks), 0);
  size_t next = 0;
  for (size_t b = 0; b < c.to.size(); ++b)
    for (int j = 0; j < (c.to[b] + c.blockSize - 1) / c.blockSize; ++j)
      tables[b * size_t(maxBlocks) + size_t(j)] = pool[next++];
  std::vector<float> q = randomVector(rng, size_t(total * qCols), -2, 2);
  std::vector<float> k = randomVector(rng, size_t(total * kvCols), -2, 2);
  std::vector<float> v = randomVector(rng, size_t(total * kvCols));
  auto slotOf = [&](size_t b, int p) {
    return tables[b * size_t(maxBlocks) + size_t(p / c.blockSize)] *
               c.blockSize +
           p % c.blockSize;
  };
  llmc_kv_cache_desc kv = {2,
                           uint32_t(c.kvHeads),
                           uint32_t(c.headDim),
                           uint32_t(c.kv),
                           uint32_t(c.blockSize),
                           uint32_t(pool.size()),
                           0,
                           nullptr};
  // First a prefill of every prefix (so the cache holds it), then the step
  // under test; both run on the same cache.
  auto stepFor = [&](const std::vector<int> &from, const std::vector<int> &to) {
    StepData d;
    d.numSeqs = int32_t(from.size());
    d.queryStart = {0};
    for (size_t b = 0; b < from.size(); ++b) {
      for (int p = from[b]; p < to[b]; ++p) {
        d.tokens.push_back(base[b] + p);
        d.positions.push_back(p);
        d.slots.push_back(slotOf(b, p));
      }
      d.queryStart.push_back(int32_t(d.tokens.size()));
      d.contextLens.push_back(to[b]);
    }
    d.blockTables = tables;
    d.maxBlocks = maxBlocks;
    d.numLogits = int32_t(d.tokens.size());
    return d;
  };
  auto graphFor = [&](bool decode) {
    return [&, decode](OpGraph &g) {
      uint32_t qb = g.feed(q, qCols), kb = g.feed(k, kvCols),
               vb = g.feed(v, kvCols);
      uint32_t out = g.buffer(decode ? rowsB() : rowsT(), qCols);
      g.add(makeOp(LLMC_OP_KV_WRITE, {buf(kb), buf(vb)}, {}, {1}));
      g.add(
          makeOp(decode ? LLMC_OP_DECODE_ATTENTION : LLMC_OP_PREFILL_ATTENTION,
                 {buf(qb)}, {out}, {1, c.heads, c.kvHeads, c.headDim, c.window},
                 {1.0 / std::sqrt(double(c.headDim))}));
      return out;
    };
  };
  std::vector<float> results[2];
  const BackendInstance *backends[2] = {t.refBackend(), t.cudaBackend()};
  for (int i = 0; i < 2; ++i) {
    DeviceKvCache cache = backends[i]->createKvCache(kv);
    std::vector<int> zero(c.from.size(), 0);
    bool anyPrefix = false;
    for (int f : c.from)
      anyPrefix |= f > 0;
    if (anyPrefix) {
      OpGraph g;
      uint32_t out = graphFor(false)(g);
      StepData pre = stepFor(zero, c.from);
      runGraph(*backends[i], g, out, pre, &cache);
    }
    OpGraph g;
    uint32_t out = graphFor(c.decode)(g);
    StepData s = stepFor(c.from, c.to);
    results[i] = runGraph(*backends[i], g, out, s, &cache);
  }
  double err = nmse(results[1], results[0]);
  EXPECT_LE(err, bound) << "heads " << c.heads << "/" << c.kvHeads << " dim "
                        << c.headDim << " window " << c.window << " kv " << c.kv
                        << (c.decode ? " decode" : " prefill") << ": nmse "
                        << err;
}

TEST_F(Cuda, PrefillAttention) {
  runAttention(*this, {4, 4, 64, 0, 16, LLMC_F32, {0}, {37}, false}, rng,
               kF32Acc);
  runAttention(*this, {8, 2, 128, 0, 4, LLMC_F32, {0, 0}, {50, 9}, false}, rng,
               kF32Acc);
  runAttention(*this, {4, 1, 64, 7, 16, LLMC_F32, {0}, {40}, false}, rng,
               kF32Acc);
  // A chunk over a cached prefix, next to a fresh prompt.
  runAttention(*this, {6, 2, 64, 0, 8, LLMC_F32, {30, 0}, {45, 12}, false}, rng,
               kF32Acc);
  runAttention(*this, {32, 4, 256, 0, 16, LLMC_BF16, {0}, {20}, false}, rng,
               kLow);
  runAttention(*this, {4, 2, 96, 0, 16, LLMC_F16, {5}, {33}, false}, rng, kLow);
  runAttention(*this, {40, 2, 64, 0, 16, LLMC_F32, {0}, {19}, false}, rng,
               kF32Acc); // 20 heads per kv head: two head chunks
}

TEST_F(Cuda, DecodeAttention) {
  runAttention(*this, {4, 4, 64, 0, 16, LLMC_F32, {36}, {37}, true}, rng,
               kF32Acc);
  runAttention(*this,
               {8, 2, 128, 0, 16, LLMC_F32, {999, 40, 4}, {1000, 41, 5}, true},
               rng, kF32Acc); // long context: several splits
  runAttention(*this, {8, 1, 64, 30, 8, LLMC_BF16, {300, 2}, {301, 3}, true},
               rng, kLow);
  runAttention(*this, {16, 8, 128, 0, 32, LLMC_F16, {2047}, {2048}, true}, rng,
               kLow);
}

// A one-layer Llama block, prefill then decode steps of changing batch
// sizes (graph capture per bucket, padding, replay), on both backends.
TEST_F(Cuda, EndToEndLlamaBlock) {
  const int64_t V = 97, D = 128, H = 4, KVH = 2, HD = 32, I = 192;
  std::vector<float> emb = randomVector(rng, V * D);
  std::vector<float> wqkv =
      randomVector(rng, (H + 2 * KVH) * HD * D, -0.2f, 0.2f);
  std::vector<float> wo = randomVector(rng, D * H * HD, -0.2f, 0.2f);
  std::vector<float> wgu = randomVector(rng, 2 * I * D, -0.2f, 0.2f);
  std::vector<float> wd = randomVector(rng, D * I, -0.2f, 0.2f);
  std::vector<float> wlm = randomVector(rng, V * D, -0.2f, 0.2f);
  std::vector<float> norm = randomVector(rng, D, 0.5f, 1.5f);
  std::vector<float> inv(HD / 2);
  for (size_t i = 0; i < inv.size(); ++i)
    inv[i] = float(std::pow(10000.0, -2.0 * double(i) / double(HD)));

  auto build = [&](OpGraph &g, bool decode, llmc_dtype wdt) {
    llmc_rows rows = decode ? rowsB() : rowsT();
    uint32_t x = g.buffer(rows, D);
    g.add(makeOp(LLMC_OP_EMBEDDING,
                 {wt(g.weight(LLMC_F32, {V, D}, emb)), tokensInput()}, {x}));
    uint32_t h = g.buffer(rows, D);
    uint32_t nw = g.weight(LLMC_F32, {D}, norm);
    g.add(makeOp(LLMC_OP_RMS_NORM, {buf(x), wt(nw)}, {h}, {}, {1e-5}));
    uint32_t qkv = g.buffer(rows, (H + 2 * KVH) * HD);
    g.add(makeOp(LLMC_OP_LINEAR,
                 {buf(h), wt(g.weight(wdt, {(H + 2 * KVH) * HD, D}, wqkv))},
                 {qkv}));
    uint32_t q = g.buffer(rows, H * HD), k = g.buffer(rows, KVH * HD),
             v = g.buffer(rows, KVH * HD);
    g.add(makeOp(LLMC_OP_SLICE, {buf(qkv)}, {q}, {0}));
    g.add(makeOp(LLMC_OP_SLICE, {buf(qkv)}, {k}, {H * HD}));
    g.add(makeOp(LLMC_OP_SLICE, {buf(qkv)}, {v}, {(H + KVH) * HD}));
    uint32_t invw = g.weight(LLMC_F32, {HD / 2}, inv);
    g.add(makeOp(LLMC_OP_ROPE, {buf(q), positionsInput(), wt(invw)}, {q},
                 {H, HD, HD, 0}, {1.0}));
    g.add(makeOp(LLMC_OP_ROPE, {buf(k), positionsInput(), wt(invw)}, {k},
                 {KVH, HD, HD, 0}, {1.0}));
    g.add(makeOp(LLMC_OP_KV_WRITE, {buf(k), buf(v)}, {}, {0}));
    uint32_t att = g.buffer(rows, H * HD);
    g.add(makeOp(decode ? LLMC_OP_DECODE_ATTENTION : LLMC_OP_PREFILL_ATTENTION,
                 {buf(q)}, {att}, {0, H, KVH, HD, 0},
                 {1.0 / std::sqrt(double(HD))}));
    uint32_t o = g.buffer(rows, D);
    g.add(makeOp(LLMC_OP_LINEAR, {buf(att), wt(g.weight(wdt, {D, H * HD}, wo))},
                 {o}));
    uint32_t sum = g.buffer(rows, D), h2 = g.buffer(rows, D);
    g.add(makeOp(LLMC_OP_ADD_RMS_NORM, {buf(o), buf(x), wt(nw)}, {sum, h2}, {},
                 {1e-5}));
    uint32_t gu = g.buffer(rows, 2 * I), act = g.buffer(rows, I);
    g.add(makeOp(LLMC_OP_LINEAR, {buf(h2), wt(g.weight(wdt, {2 * I, D}, wgu))},
                 {gu}));
    g.add(makeOp(LLMC_OP_SWIGLU, {buf(gu)}, {act}));
    uint32_t down = g.buffer(rows, D);
    g.add(makeOp(LLMC_OP_LINEAR, {buf(act), wt(g.weight(wdt, {D, I}, wd))},
                 {down}));
    uint32_t res = g.buffer(rows, D);
    g.add(makeOp(LLMC_OP_ADD, {buf(down), buf(sum)}, {res}));
    uint32_t last = g.buffer(rowsB(), D);
    g.add(makeOp(LLMC_OP_TAKE_ROWS, {buf(res)}, {last}));
    uint32_t logits = g.buffer(rowsB(), V);
    g.add(makeOp(LLMC_OP_LINEAR, {buf(last), wt(g.weight(wdt, {V, D}, wlm))},
                 {logits}));
    return logits;
  };

  for (llmc_dtype wdt : {LLMC_F32, LLMC_BF16}) {
    const int seqs = 6, blockSize = 8, maxBlocks = 8;
    llmc_kv_cache_desc kv = {
        1, KVH, HD, LLMC_F32, blockSize, seqs * maxBlocks, 0, nullptr};
    std::vector<float> got[2];
    const BackendInstance *backends[2] = {ref.get(), cuda.get()};
    for (int bi = 0; bi < 2; ++bi) {
      const BackendInstance &be = *backends[bi];
      DeviceKvCache cache = be.createKvCache(kv);
      OpGraph pg, dg;
      uint32_t pout = build(pg, false, wdt), dout = build(dg, true, wdt);
      llmc_graph_desc pdesc = pg.desc(pout, "prefill");
      llmc_graph_desc ddesc = dg.desc(dout, "decode");
      PreparedGraph prefill = be.prepare(pdesc), decode = be.prepare(ddesc);
      std::vector<int> len(seqs, 0);
      auto table = [&](int s, int j) { return s * maxBlocks + j; };
      // Prefill every sequence with 3 + 2s tokens (one step, all seqs).
      StepData p;
      p.numSeqs = seqs;
      p.queryStart = {0};
      for (int s = 0; s < seqs; ++s) {
        for (int t = 0; t < 3 + 2 * s; ++t) {
          p.tokens.push_back((s * 7 + t * 3) % int32_t(V));
          p.positions.push_back(t);
          p.slots.push_back(table(s, t / blockSize) * blockSize +
                            t % blockSize);
        }
        len[s] = 3 + 2 * s;
        p.queryStart.push_back(int32_t(p.tokens.size()));
        p.contextLens.push_back(len[s]);
        p.logitsRows.push_back(p.queryStart.back() - 1);
      }
      for (int s = 0; s < seqs; ++s)
        for (int j = 0; j < maxBlocks; ++j)
          p.blockTables.push_back(table(s, j));
      p.maxBlocks = maxBlocks;
      p.numLogits = seqs;
      llmc_step_args pa = p.args(V);
      be.execute(prefill, &cache, pa);
      got[bi].insert(got[bi].end(), p.logits.begin(), p.logits.end());
      // Decode steps over changing subsets: buckets 4, 8, 1, 4 (replay).
      for (int batch : {3, 6, 1, 4, 3}) {
        StepData d;
        d.numSeqs = batch;
        for (int s = 0; s < batch; ++s) {
          int pos = len[s]++;
          d.tokens.push_back((s * 5 + pos) % int32_t(V));
          d.positions.push_back(pos);
          d.slots.push_back(table(s, pos / blockSize) * blockSize +
                            pos % blockSize);
          d.contextLens.push_back(len[s]);
          d.logitsRows.push_back(s);
          for (int j = 0; j < maxBlocks; ++j)
            d.blockTables.push_back(table(s, j));
        }
        d.maxBlocks = maxBlocks;
        d.numLogits = batch;
        llmc_step_args da = d.args(V);
        be.execute(decode, &cache, da);
        got[bi].insert(got[bi].end(), d.logits.begin(), d.logits.end());
      }
    }
    double err = nmse(got[1], got[0]);
    EXPECT_LE(err, wdt == LLMC_F32 ? kF32Acc : kLow)
        << "weights " << wdt << ": nmse " << err;
  }
}

TEST_F(Cuda, RefusesWhatRefRefuses) {
  // An id outside the table: the same InvalidArgument as ref, no launch.
  std::vector<float> table = randomVector(rng, 10 * 8);
  OpGraph g;
  uint32_t out = g.feed(table, 8);
  StepData s = StepData::simple(3, 3);
  s.tokens = {1, 10, 2};
  try {
    runGraph(*cuda, g, out, s);
    FAIL() << "expected an error";
  } catch (const BackendError &e) {
    EXPECT_EQ(e.status(), LLMC_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("outside the table"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
} // namespace llmc::testing
