//===- cpu.h - The fast CPU backend's internals ----------------*- C++ -*-===//
//
// The cpu backend validates graphs and steps with backends/common's checks,
// as every backend does, so all refuse exactly the same inputs, and has a
// vectorized, OpenMP-parallel kernel for every op. Weights are converted or
// packed once at prepare and shared, keyed by their data pointer, between the
// graphs of one plan.
//
// Our kernels need AVX2 + FMA + F16C, which every x86 server of the last
// decade has; the dot products of decode also come in AVX-VNNI, AVX-512 VNNI
// builds, chosen when the backend is created (isa.h). Linears run on our
// own kernels at every row count (linear.cpp says why).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "attention_rows.h"
#include "common/host.h"
#include "gemv_int.h"
#include "isa.h"
#include "kquant_dot.h"
#include "mapped_buffer.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace llmc::cpu {

using common::AttentionShape;
using common::attentionShape;
using common::expectCacheFits;
using common::expectCols;
using common::expectRows;
using common::Graph;
using common::InvalidArgument;
using common::KvCache;
using common::Matrix;
using common::Step;

/// A compiled op: everything prepare could decide is captured.
using Kernel = std::function<void(Step &)>;

/// Packed weights shared by the graphs of a plan. An entry lives while some
/// prepared graph holds it, so a new plan mapped at a reused address never
/// sees another plan's packs.
class WeightCache {
public:
  template <typename T, typename Make>
  std::shared_ptr<T> get(const void *data, size_t nbytes, int kind, Make make) {
    Key key{data, nbytes, kind};
    auto it = entries_.find(key);
    if (it != entries_.end())
      if (auto p = it->second.lock())
        return std::static_pointer_cast<T>(p);
    std::shared_ptr<T> made = make();
    entries_[key] = made;
    return made;
  }

private:
  using Key = std::tuple<const void *, size_t, int>;
  std::map<Key, std::weak_ptr<void>> entries_;
};

struct Backend {
  int threads = 1;
  Isa isa = Isa::Avx2;
  IntKernels ints; // for isa
  F32Tile f32Tile = nullptr;
  Bf16Tile bf16Tile = nullptr;      // Avx512Bf16 and above
  const RowKernels *rows = nullptr; // null below Avx512
  KQuantDots kquant{};              // for isa
  WeightCache weights;
  /// ALL_REDUCE: the plugin's communicator (common::HostBackend).
  std::function<void(const llmc_op_desc &, Step &)> allReduce;
};

/// Sets b.isa and the kernels of that level.
void useLevel(Backend &b, Isa isa);

//===-- Weight helpers ----------------------------------------------------===//

/// A f32/bf16/f16 weight as an owned f32 vector (norm weights, biases,
/// tables of frequencies: small, read every step).
std::vector<float> toF32(const llmc_weight_desc &w, int64_t count);

//===-- Kernel factories (one per op family) ------------------------------===//

Kernel makeEmbedding(const llmc_op_desc &, const Graph &, Backend &);
Kernel makeNorm(const llmc_op_desc &, const Graph &, Backend &);
Kernel makeLinear(const llmc_op_desc &, const Graph &, Backend &);
/// The linear with the SWIGLU that alone reads its result fused in (the
/// result never written), where its weights run on the packed integer
/// tiles; else an empty Kernel.
Kernel makeLinearSwiglu(const llmc_op_desc &linear, const llmc_op_desc &swiglu,
                        const Graph &, Backend &);
Kernel makeRope(const llmc_op_desc &, const Graph &, Backend &);
Kernel makeElementwise(const llmc_op_desc &, const Graph &, Backend &);
Kernel makeKvWrite(const llmc_op_desc &, const Graph &, Backend &);
Kernel makePrefillAttention(const llmc_op_desc &, const Graph &, Backend &);
Kernel makeDecodeAttention(const llmc_op_desc &, const Graph &, Backend &);
Kernel makeMoe(const llmc_op_desc &, const Graph &, Backend &);

//===-- Small-row linear kernels (decode) ---------------------------------===//

/// out[r][n] = sum_k x[r][k] * W[n][k] + bias[n] (bias may be null) for every
/// row r of x, reading W once per group of rows. Parallel over n.
struct GemvArgs {
  const float *x;
  int64_t rows, K, N;
  const float *bias;
  float *out; // [rows, N]
};
/// i8 [N, K] with scales [N, K / group].
void gemvQ8(const GemvArgs &a, const int8_t *w, const float *scales,
            int64_t group);
/// i4 [N, K / 2] (low nibble = even column) with scales [N, K / group].
void gemvQ4(const GemvArgs &a, const uint8_t *w, const float *scales,
            int64_t group);
/// MXFP4 [N, K / 2] codes with E8M0 scales [N, K / 32] against f32
/// activations (exact products), any rows: panels decoded to f32 on the
/// F32Tile (gemm.cpp).
void gemmMxfp4(F32Tile tile, const GemvArgs &a, const uint8_t *w,
               const uint8_t *e8m0);
/// Block b (32 values) of MXFP4 row `codes`, decoded to f32 at out.
void decodeMxfp4Block(const uint8_t *codes, uint8_t e8m0, float *out);
/// Whether the integer tiles can take these shapes (blocks of 32 that
/// groups align to); others run the grouped gemv (gemvQ8 / gemvQ4).
bool intTilesApply(int64_t K, int64_t group);
/// An i8, i4 or MXFP4 weight repacked once, when the graph is prepared,
/// into the integer GEMM tiles' panels (i4 and MXFP4 stay at two values a byte,
/// MXFP4's scales as E8M0 bytes): every row count, one decode token to a whole
/// prompt, then runs on the tiles over as many bytes as the plan holds, with no
/// per-call repack, and the plan's pages are not read again.
struct PackedIntWeight {
  IntFormat format = kI8;
  int64_t N = 0, K = 0, groups = 1; // N: one expert's rows
  std::vector<uint8_t> w;           // [panels][IntGemm::w of all of K]
  std::vector<float> s;             // [panels][groups][kTileN], 0 past N
  std::vector<uint8_t> e;           // MXFP4: as s, E8M0 bytes
};
/// `experts` stacked weights of N rows each (scales and E8M0 bytes alike),
/// each padded to whole panels: expert e's columns start at panel
/// e * ceil(N / kTileN).
std::shared_ptr<PackedIntWeight>
packIntWeight(const IntKernels &k, IntFormat f, const void *w,
              const float *scales, int64_t N, int64_t K, int64_t group,
              const uint8_t *e8m0 = nullptr, int64_t experts = 1);
/// out = x · Wᵀ (+ bias) on the tiles, any number of rows, x rounded per
/// block of 32 to int8 (quantizeBlockInt8). With `gated` ([rows][N / 2], N / 2
/// a multiple of kTileN), out is not written: gated = silu(gate) · up of the
/// result's halves, as SWIGLU computes it from out. Columns [0, a.N) are the
/// weight's from panel `panel0` on (an expert's slice of a packed stack).
void gemmPackedInt(const IntKernels &k, const GemvArgs &a,
                   const PackedIntWeight &w, float *gated = nullptr,
                   int64_t panel0 = 0);
/// An f32, bf16 or f16 weight repacked once, at prepare, into the
/// F32Tile's panels in its own dtype ([panels][K][kTileN], 0 past N; bf16
/// and f16 widened to f32 a block at a time as they are read). Every row
/// count, one decode token to a prompt, runs the tile over them against f32
/// activations: each result sums its bias, then k in order, so a row's
/// result is the same bits batched or alone, decoded or recomputed.
/// With `pairs` (bf16 where the level has a Bf16Tile, K even) the panels
/// hold pairs of K for vdpbf16ps instead ([K / 2][kTileN][2]) and every row
/// count runs gemmPackedBf16: x rounded to bf16, as llama.cpp rounds it for
/// bf16 weights (twice the f32 tile's rate at any batch).
struct PackedFloatWeight {
  uint32_t dtype = 0;
  int64_t N = 0, K = 0;
  bool pairs = false;
  MappedBuffer w;
};
std::shared_ptr<PackedFloatWeight> packFloatWeight(uint32_t dtype,
                                                   const void *w, int64_t N,
                                                   int64_t K,
                                                   bool pairs = false);
void gemmPackedFloat(F32Tile tile, const GemvArgs &a,
                     const PackedFloatWeight &w);
/// Columns [0, a.N) are the weight's from panel `panel0` on (an expert's
/// slice of a packed stack).
void gemmPackedBf16(Bf16Tile tile, const GemvArgs &a,
                    const PackedFloatWeight &w, int64_t panel0 = 0);
/// The same arithmetic (the same bits) over w [N][K] as the plan stores it,
/// each panel packed per call: expert stacks, sliced per call.
void gemmFloat(F32Tile tile, uint32_t dtype, const GemvArgs &a, const void *w);
/// Rows [0, rows) of K floats each (row(r) points at row r) in an F32Tile's
/// x layout at dst: [rows / kF32TileRows][K][kF32TileRows], zero padded.
template <typename Row>
void packTileRows(int64_t rows, int64_t K, const Row &row, float *dst) {
  for (int64_t t = 0; t * kF32TileRows < rows; ++t, dst += K * kF32TileRows)
    for (int64_t m = 0; m < kF32TileRows; ++m) {
      const int64_t r = t * kF32TileRows + m;
      const float *x = r < rows ? row(r) : nullptr;
      for (int64_t k = 0; k < K; ++k)
        dst[k * kF32TileRows + m] = x ? x[k] : 0.0f;
    }
}

//===-- Linear on our kernels ---------------------------------------------===//

struct LinearWeight {
  uint32_t dtype;
  const void *data;
  size_t nbytes;
  const float *scales; // i8/i4 (owned by the caller)
  int64_t N, K, group;
  const uint8_t *e8m0 = nullptr;      // MXFP4's scales [N, K / 32] (the plan's)
  bool int8Activations = false;       // MXFP4, K-quants: x may round (op i2)
  const uint8_t *kqHeaders = nullptr; // a K-quant's headers (the plan's)
};
/// Our own kernels for one weight at the backend's ISA level (linear.cpp):
/// for each dtype one arithmetic at every row count, so a row's result
/// never depends on the rows beside it.
struct OwnKernels {
  IntKernels ints{};
  KQuantDots kquant{};
  F32Tile f32Tile = nullptr;
  Bf16Tile bf16Tile = nullptr;
  // i8 / i4 / MXFP4 with int8 activations whose blocks fit K: the caller
  // packs the weight once (packIntWeight) and runs gemmPackedInt.
  bool intDot = false;
};
OwnKernels ownKernelsFor(const Backend &b, const LinearWeight &w);
/// The integer kernels' format of an i8, i4 or MXFP4 weight dtype.
IntFormat intFormat(uint32_t dtype);
/// A weight now served from a packed copy leaves the resident set, where
/// its pages are the plan file's (they read back from it); a plan image in
/// the caller's memory is left alone.
void releaseCopied(const Graph &g, const llmc_weight_desc &wd);
/// out = x · Wᵀ (+ bias) on them for weights that are not packed (!intDot);
/// parallel inside unless called from a parallel region (then on the
/// calling thread alone).
void runOwnLinear(const LinearWeight &w, const OwnKernels &k,
                  const GemvArgs &a);

//===-- Attention ---------------------------------------------------------===//

/// An attention op's sinks (operand 1) as floats; empty without them.
std::vector<float> attentionSinks(const llmc_op_desc &op, const Graph &g);
/// Attention of `count` query positions (starting at row `first` of q) of
/// sequence b, the last ending at its `len`-th cached position, for one kv
/// head's group of query heads: on `rows` (AVX-512) where given, else two
/// rows at a time (attention_tile.cpp). Runs on the calling thread.
void attendTile(const AttentionShape &s, const Step &step, const Matrix &q,
                const Matrix &out, int64_t b, int64_t first, int64_t count,
                int64_t len, int64_t kvHead, const RowKernels *rows);

//===-- Vector helpers shared by the kernels ------------------------------===//

int ompThreads();

} // namespace llmc::cpu
