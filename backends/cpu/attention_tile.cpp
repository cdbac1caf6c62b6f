//===- attention_tile.cpp - Flash-style attention of a tile of queries ----===//
//
// The query heads that share a kv head (GQA) and a tile of query rows walk
// the sequence's keys in chunks of 32, gathered from the paged pool key by
// key. With AVX-512 each query position's rows run on the row kernels over
// the cache's own rows (attention_rows.h); on AVX2 (and heads wider than
// 256) a chunk is converted to f32 once for the tile and taken two rows at
// a time. Softmax is online (running max and sum), so no score row of the
// full context is ever stored. Prefill and decode attention are both this,
// and a row's arithmetic depends on that row and its keys alone: a decode
// token in a mixed step, a prompt chunked any way and a recomputed request
// get the bits they get alone.
//
//===----------------------------------------------------------------------===//
#include "attention_rows.h"
#include "cpu.h"
#include "simd.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

namespace llmc::cpu {
namespace {

// Keys per chunk: four 8-lane score vectors per row on AVX2, two rows'
// reductions on AVX-512.
constexpr int64_t kChunk = 32;
static_assert(kChunk == kRowChunk, "the row kernels take a decode chunk");
// How far ahead of the key being gathered its rows are prefetched, into L2
// (_MM_HINT_T1): L1's few miss buffers filled up at 16 keys into L1, and
// the prefetch itself stalled. Measured on the small bench model's batch-16
// decode step (KV from DRAM): 0.32 -> 0.22 ms per layer; 1.1B Q4_K_M at
// 512 context: 0.095 -> 0.070 ms (64 keys ahead: 0.26 ms, L3 hint: same).
constexpr int64_t kPrefetchKeys = 32;

// One head's n values as f32; `scale` multiplies i8 and fp8 values.
__attribute__((always_inline)) inline void loadRow(const uint8_t *src,
                                                   uint32_t dtype, float scale,
                                                   int64_t n, float *out) {
  if (dtype == LLMC_F32) {
    std::memcpy(out, src, size_t(n) * 4);
    return;
  }
  int64_t i = 0;
  if (dtype == LLMC_I8) {
    const __m256 vs = _mm256_set1_ps(scale);
    for (; i + 8 <= n; i += 8) {
      __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(src + i));
      _mm256_storeu_ps(
          out + i,
          _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)), vs));
    }
  } else if (dtype == LLMC_FP8_E4M3) {
    // e4m3 s.eeee.mmm placed as f16 s.0eeee.mmm0000000 is the same number
    // times 2^-8 (subnormals too), so F16C widens it.
    const __m256 vs = _mm256_set1_ps(scale * 256.0f);
    const __m128i magMask = _mm_set1_epi16(0x7f),
                  signMask = _mm_set1_epi16(0x80);
    for (; i + 8 <= n; i += 8) {
      __m128i w = _mm_cvtepu8_epi16(
          _mm_loadl_epi64(reinterpret_cast<const __m128i *>(src + i)));
      __m128i h = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(w, magMask), 7),
                               _mm_slli_epi16(_mm_and_si128(w, signMask), 8));
      _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_cvtph_ps(h), vs));
    }
  } else {
    const auto *h = reinterpret_cast<const uint16_t *>(src);
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(out + i, dtype == LLMC_BF16 ? simd::loadBf16(h + i)
                                                   : simd::loadF16(h + i));
  }
  common::decodeKvHead(
      src + i * int64_t(dtype == LLMC_BF16 || dtype == LLMC_F16 ? 2 : 1), n - i,
      dtype, scale, out + i);
}

RowType rowType(uint32_t dtype) {
  switch (dtype) {
  case LLMC_BF16:
    return RowType::Bf16;
  case LLMC_F16:
    return RowType::F16;
  case LLMC_I8:
    return RowType::I8;
  case LLMC_FP8_E4M3:
    return RowType::Fp8;
  default:
    return RowType::F32;
  }
}

struct Scratch {
  std::vector<float> kt, v, krows, m, l, acc, alpha;
  std::vector<float> sp;           // a chunk's scores, then probabilities
  std::vector<const float *> q;    // each row's query vector
  std::vector<size_t> at, scaleAt; // each key's row (and scale) in the pool
};

// Rows r[0..7] (8 floats each, stride ld) into columns: out + i * ldo holds
// element i of every row.
inline void transpose8(const float *in, int64_t ld, float *out, int64_t ldo) {
  __m256 r0 = _mm256_loadu_ps(in), r1 = _mm256_loadu_ps(in + ld),
         r2 = _mm256_loadu_ps(in + 2 * ld), r3 = _mm256_loadu_ps(in + 3 * ld),
         r4 = _mm256_loadu_ps(in + 4 * ld), r5 = _mm256_loadu_ps(in + 5 * ld),
         r6 = _mm256_loadu_ps(in + 6 * ld), r7 = _mm256_loadu_ps(in + 7 * ld);
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
         t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
         t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
         t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44),
         u1 = _mm256_shuffle_ps(t0, t2, 0xee),
         u2 = _mm256_shuffle_ps(t1, t3, 0x44),
         u3 = _mm256_shuffle_ps(t1, t3, 0xee),
         u4 = _mm256_shuffle_ps(t4, t6, 0x44),
         u5 = _mm256_shuffle_ps(t4, t6, 0xee),
         u6 = _mm256_shuffle_ps(t5, t7, 0x44),
         u7 = _mm256_shuffle_ps(t5, t7, 0xee);
  _mm256_storeu_ps(out, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(out + ldo, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(out + 2 * ldo, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(out + 3 * ldo, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(out + 4 * ldo, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(out + 5 * ldo, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(out + 6 * ldo, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(out + 7 * ldo, _mm256_permute2f128_ps(u3, u7, 0x31));
}

/// One row's scores of a chunk (keys [lo, hi) valid) to probabilities
/// (0 outside [lo, hi)) against its running softmax (max m, sum l); returns
/// the factor the row's earlier output accumulates by. `softcap` > 0 caps
/// each scaled score at c * tanh(s / c) before the mask (Gemma 2).
float softmaxChunk(float *scores, int64_t n, int64_t lo, int64_t hi,
                   float scale, float softcap, float &m, float &l) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256 vscale = _mm256_set1_ps(scale);
  // Scale, mask keys outside [lo, hi) to -inf, and take the max.
  const __m256i vlo = _mm256_set1_epi32(int32_t(lo - 1)),
                vhi = _mm256_set1_epi32(int32_t(hi));
  __m256 vmax = _mm256_set1_ps(ninf);
  for (int64_t t = 0; t < n; t += 8) {
    __m256i idx = _mm256_add_epi32(_mm256_set1_epi32(int32_t(t)), iota);
    __m256i ok = _mm256_and_si256(_mm256_cmpgt_epi32(idx, vlo),
                                  _mm256_cmpgt_epi32(vhi, idx));
    __m256 s = _mm256_mul_ps(_mm256_loadu_ps(scores + t), vscale);
    if (softcap > 0)
      s = simd::softcap(s, softcap);
    __m256 sv =
        _mm256_blendv_ps(_mm256_set1_ps(ninf), s, _mm256_castsi256_ps(ok));
    _mm256_storeu_ps(scores + t, sv);
    vmax = _mm256_max_ps(vmax, sv);
  }
  const float mNew = std::max(m, simd::hmax(vmax));
  const float alpha = m == ninf ? 0.0f : m == mNew ? 1.0f : std::exp(m - mNew);
  __m256 vm = _mm256_set1_ps(mNew), psum = _mm256_setzero_ps();
  for (int64_t t = 0; t < n; t += 8) {
    __m256 sv = _mm256_loadu_ps(scores + t);
    __m256 valid = _mm256_cmp_ps(sv, _mm256_set1_ps(ninf), _CMP_NEQ_OQ);
    __m256 p = _mm256_and_ps(simd::exp(_mm256_sub_ps(sv, vm)), valid);
    _mm256_storeu_ps(scores + t, p);
    psum = _mm256_add_ps(psum, p);
  }
  l = l * alpha + simd::hsum(psum);
  m = mNew;
  return alpha;
}

/// acc[D] = alpha * acc + sum over keys [lo, hi) of p[t] * v[t][D].
void accumulateRow(const float *scores, int64_t lo, int64_t hi, float alpha,
                   const float *v, int64_t D, float *acc) {
  // 64 columns at a time where D allows: eight independent chains.
  const __m256 va = _mm256_set1_ps(alpha);
  int64_t d = 0;
  for (; d + 64 <= D; d += 64) {
    __m256 a[8];
    for (int j = 0; j < 8; ++j)
      a[j] = _mm256_mul_ps(_mm256_loadu_ps(acc + d + 8 * j), va);
    for (int64_t t = lo; t < hi; ++t) {
      const __m256 p = _mm256_set1_ps(scores[t]);
      const float *vt = v + t * D + d;
      for (int j = 0; j < 8; ++j)
        a[j] = _mm256_fmadd_ps(p, _mm256_loadu_ps(vt + 8 * j), a[j]);
    }
    for (int j = 0; j < 8; ++j)
      _mm256_storeu_ps(acc + d + 8 * j, a[j]);
  }
  for (; d + 8 <= D; d += 8) {
    __m256 a = _mm256_mul_ps(_mm256_loadu_ps(acc + d), va);
    for (int64_t t = lo; t < hi; ++t)
      a = _mm256_fmadd_ps(_mm256_set1_ps(scores[t]),
                          _mm256_loadu_ps(v + t * D + d), a);
    _mm256_storeu_ps(acc + d, a);
  }
  for (; d < D; ++d) {
    float a = acc[d] * alpha;
    for (int64_t t = lo; t < hi; ++t)
      a += scores[t] * v[t * D + d];
    acc[d] = a;
  }
}

} // namespace

void attendTile(const AttentionShape &s, const Step &step, const Matrix &q,
                const Matrix &out, int64_t b, int64_t first, int64_t count,
                int64_t len, int64_t kvHead, const RowKernels *rows) {
  const KvCache &cache = *step.cache;
  const int64_t D = s.headDim, G = s.heads / s.kvHeads, R = count * G;
  const int64_t bs = cache.desc.block_size;
  const common::KvLayout &kv = cache.layout;
  const uint32_t dtype = kv.dtype;
  const size_t rowBytes = size_t(D) * kv.elementBytes;
  const float ninf = -std::numeric_limits<float>::infinity();

  if (rows && D > kRowMaxHeadDim)
    rows = nullptr;
  thread_local Scratch sc;
  sc.sp.resize(size_t(R * kChunk));
  sc.alpha.resize(size_t(R));
  if (!rows) {
    sc.kt.assign(size_t(D * kChunk), 0.0f);
    sc.v.resize(size_t(kChunk * D));
    sc.krows.assign(size_t(kChunk * D), 0.0f);
  }
  sc.m.assign(size_t(R), ninf);
  sc.l.assign(size_t(R), 0.0f);
  sc.acc.assign(size_t(R * D), 0.0f);

  // Keys row i may see: causal, and within the window.
  auto rowLo = [&](int64_t i) {
    int64_t pos = len - count + i;
    return s.window > 0 ? std::max<int64_t>(0, pos - s.window + 1) : 0;
  };
  auto rowHi = [&](int64_t i) { return len - count + i + 1; };
  // Chunks start at multiples of kChunk, whatever rows share this tile: a
  // row's online softmax then meets its keys in the same chunks batched or
  // alone, decoded or in a prompt of any chunking, and gives the same bits.
  // Keys before the first row's window are masked for every row.
  const int64_t seenFrom = rowLo(0), to = rowHi(count - 1);
  const int64_t from = seenFrom - seenFrom % kChunk;

  const uint8_t *kBase = cache.k[size_t(s.layer)].data();
  const uint8_t *vBase = cache.v[size_t(s.layer)].data();
  const int32_t *table = step.blockTables(s.layer) + b * step.args.max_blocks;
  // Keys [lo, hi) of the chunk at j0 (nt keys) that row r sees; empty when
  // lo >= hi.
  auto keysOf = [&](int64_t r, int64_t j0, int64_t nt) {
    const int64_t i = r / G;
    return std::pair{std::max(rowLo(i), j0), std::min(rowHi(i), j0 + nt)};
  };
  // One chunk's probabilities for every row, against its running softmax;
  // rows that see none of its keys get zeros and keep their state.
  auto softmaxRows = [&](int64_t j0, int64_t nt) {
    for (int64_t r = 0; r < R; ++r) {
      const auto [lo, hi] = keysOf(r, j0, nt);
      float *p = &sc.sp[size_t(r * kChunk)];
      if (lo >= hi) {
        std::fill(p, p + kChunk, 0.0f);
        sc.alpha[size_t(r)] = 1.0f;
        continue;
      }
      sc.alpha[size_t(r)] =
          softmaxChunk(p, kChunk, lo - j0, hi - j0, s.scale, s.softcap,
                       sc.m[size_t(r)], sc.l[size_t(r)]);
    }
  };

  // Two query rows at a time: eight independent FMA chains hide the FMA
  // latency, and each chunk load feeds both rows.
  auto chunkTwoRowsAtATime = [&](int64_t j0, int64_t nt) {
    for (int64_t r0 = 0; r0 < R; r0 += 2) {
      const int64_t pair = std::min<int64_t>(2, R - r0);
      const float *qv[2];
      for (int64_t p = 0; p < 2; ++p) {
        const int64_t r = r0 + std::min(p, pair - 1);
        qv[p] = q.row(first + r / G) + (kvHead * G + r % G) * D;
      }
      __m256 s0[2], s1[2], s2[2], s3[2];
      for (int p = 0; p < 2; ++p)
        s0[p] = s1[p] = s2[p] = s3[p] = _mm256_setzero_ps();
      const float *kt = sc.kt.data();
      for (int64_t d = 0; d < D; ++d, kt += kChunk) {
        const __m256 k0 = _mm256_loadu_ps(kt), k1 = _mm256_loadu_ps(kt + 8),
                     k2 = _mm256_loadu_ps(kt + 16),
                     k3 = _mm256_loadu_ps(kt + 24);
        for (int p = 0; p < 2; ++p) {
          const __m256 qd = _mm256_set1_ps(qv[p][d]);
          s0[p] = _mm256_fmadd_ps(qd, k0, s0[p]);
          s1[p] = _mm256_fmadd_ps(qd, k1, s1[p]);
          s2[p] = _mm256_fmadd_ps(qd, k2, s2[p]);
          s3[p] = _mm256_fmadd_ps(qd, k3, s3[p]);
        }
      }
      for (int64_t p = 0; p < pair; ++p) {
        float *scores = &sc.sp[size_t((r0 + p) * kChunk)];
        _mm256_storeu_ps(scores, s0[p]);
        _mm256_storeu_ps(scores + 8, s1[p]);
        _mm256_storeu_ps(scores + 16, s2[p]);
        _mm256_storeu_ps(scores + 24, s3[p]);
      }
    }
    softmaxRows(j0, nt);
    for (int64_t r = 0; r < R; ++r)
      accumulateRow(&sc.sp[size_t(r * kChunk)], 0, nt, sc.alpha[size_t(r)],
                    sc.v.data(), D, &sc.acc[size_t(r * D)]);
  };

  // All the tile's rows at once, scores and values straight from the
  // cache's rows (attention_rows.h): each widened key and value row serves
  // as many query rows as the registers hold, across query positions.
  KeyRows keys;
  keys.type = rowType(dtype);
  keys.headDim = D;
  if (rows) {
    sc.q.resize(size_t(R));
    for (int64_t r = 0; r < R; ++r)
      sc.q[size_t(r)] = q.row(first + r / G) + (kvHead * G + r % G) * D;
  }
  auto chunkOnRows = [&](int64_t j0, int64_t nt) {
    keys.n = nt;
    rows->scores(keys, sc.q.data(), R, sc.sp.data());
    softmaxRows(j0, nt);
    rows->accumulate(keys, sc.sp.data(), sc.alpha.data(), R, sc.acc.data());
  };

  // Where each key's row is, block by block: one division per block, not
  // several per key (they were a third of a short decode's time). Keys
  // before seenFrom (masked; their blocks may have left a sliding pool)
  // are rows of zeros (the row kernels take heads of at most
  // kRowMaxHeadDim values).
  static const uint8_t zeros[kRowMaxHeadDim * 4] = {};
  constexpr size_t kMasked = ~size_t(0);
  const size_t seen = size_t(std::max<int64_t>(to - from, 0));
  sc.at.resize(seen);
  sc.scaleAt.resize(kv.scaled ? seen : 0);
  for (int64_t j = from; j < to;) {
    if (j < seenFrom) {
      sc.at[size_t(j - from)] = kMasked;
      ++j;
      continue;
    }
    const int64_t within = j % bs, run = std::min(bs - within, to - j);
    const size_t block = size_t(table[j / bs]) * kv.blockBytes;
    for (int64_t i = 0; i < run; ++i, ++j) {
      const size_t slot = size_t((within + i) * kv.kvHeads + kvHead);
      sc.at[size_t(j - from)] = block + slot * rowBytes;
      if (kv.scaled) // after the block's values, an f32 per (slot, head)
        sc.scaleAt[size_t(j - from)] =
            block + size_t(bs * kv.kvHeads * D) + slot * 4;
    }
  }

  for (int64_t j0 = from; j0 < to;) {
    // Keys are gathered row by row, so a chunk may span blocks of the pool
    // (with blocks of 16, chunks that stopped at each block's end left half
    // of every 32-key chunk masked).
    int64_t nt = std::min(kChunk, to - j0);
    for (int64_t t = 0; t < nt; ++t) {
      const int64_t j = j0 + t;
      const size_t off = sc.at[size_t(j - from)];
      // The rows of the key kPrefetchKeys ahead: a head's rows are strided
      // and blocks scattered, so the hardware prefetcher misses them, and a
      // long decode reads the cache from DRAM.
      if (j + kPrefetchKeys < to && j + kPrefetchKeys >= seenFrom) {
        const size_t po = sc.at[size_t(j + kPrefetchKeys - from)];
        for (size_t b = 0; b < rowBytes; b += 64) {
          _mm_prefetch(reinterpret_cast<const char *>(kBase + po + b),
                       _MM_HINT_T1);
          _mm_prefetch(reinterpret_cast<const char *>(vBase + po + b),
                       _MM_HINT_T1);
        }
        if (kv.scaled) {
          const size_t ps = sc.scaleAt[size_t(j + kPrefetchKeys - from)];
          _mm_prefetch(reinterpret_cast<const char *>(kBase + ps), _MM_HINT_T1);
          _mm_prefetch(reinterpret_cast<const char *>(vBase + ps), _MM_HINT_T1);
        }
      }
      const bool masked = off == kMasked;
      float ks = 1.0f, vs = 1.0f;
      if (kv.scaled && !masked) {
        std::memcpy(&ks, kBase + sc.scaleAt[size_t(j - from)], 4);
        std::memcpy(&vs, vBase + sc.scaleAt[size_t(j - from)], 4);
      }
      if (rows) {
        keys.k[t] = masked ? zeros : kBase + off;
        keys.v[t] = masked ? zeros : vBase + off;
        keys.ks[t] = ks;
        keys.vs[t] = vs;
        continue;
      }
      if (masked) {
        std::fill_n(&sc.krows[size_t(t * D)], D, 0.0f);
        std::fill_n(&sc.v[size_t(t * D)], D, 0.0f);
        continue;
      }
      loadRow(kBase + off, dtype, ks, D, &sc.krows[size_t(t * D)]);
      loadRow(vBase + off, dtype, vs, D, &sc.v[size_t(t * D)]);
    }
    if (rows) {
      chunkOnRows(j0, nt);
      j0 += nt;
      continue;
    }
    // Stale rows past nt only feed scores that are masked out below.
    int64_t d8 = D - D % 8;
    for (int64_t t = 0; t < nt; t += 8)
      for (int64_t d = 0; d < d8; d += 8)
        transpose8(&sc.krows[size_t(t * D + d)], D,
                   &sc.kt[size_t(d * kChunk + t)], kChunk);
    for (int64_t t = 0; t < kChunk; ++t)
      for (int64_t d = d8; d < D; ++d)
        sc.kt[size_t(d * kChunk + t)] = sc.krows[size_t(t * D + d)];
    chunkTwoRowsAtATime(j0, nt);
    j0 += nt;
  }

  for (int64_t r = 0; r < R; ++r) {
    int64_t i = r / G, h = kvHead * G + r % G;
    const float *acc = &sc.acc[size_t(r * D)];
    float l = sc.l[size_t(r)];
    if (s.sinks) // gpt-oss: the sink's exp joins the sum, its column not
      l += std::exp(s.sinks[h] - sc.m[size_t(r)]);
    float inv = l > 0 ? 1.0f / l : 0.0f;
    float *o = out.row(first + i) + h * D;
    for (int64_t d = 0; d < D; ++d)
      o[d] = acc[d] * inv;
  }
}

} // namespace llmc::cpu
