//===- kquant_dot_test.cpp - K-quant dots at every level, exactly ---------===//
//
// quantizeQ8K must round as ggml's quantize_row_q8_K does (the products
// llama.cpp computes), and each level's dot must equal the double-precision
// sum of decoded weights times the q8_K activations it was given, for every
// row count a level takes: what remains is f32 summation order. Many rows
// (the GEMM tiles) give each row the same bits as one at a time.
//
//===----------------------------------------------------------------------===//
#include "gemv_kquant.h"

#include "../kquant_blocks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace llmc::cpu {
namespace {

/// ggml's quantize_row_q8_K_ref, transcribed: signed max, -127 / max.
void ggmlQ8K(const float *x, int8_t *q, float &d) {
  float max = 0, amax = 0;
  for (int j = 0; j < kquant::kBlock; ++j)
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  if (amax == 0) {
    d = 0;
    std::fill(q, q + kquant::kBlock, 0);
    return;
  }
  const float iscale = -127.f / max;
  for (int j = 0; j < kquant::kBlock; ++j)
    q[j] = int8_t(std::min(127, int(std::nearbyint(iscale * x[j]))));
  d = 1 / iscale;
}

TEST(KQuantDot, ActivationsRoundAsGgmlQ8K) {
  std::mt19937 rng(5);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> x(4 * kquant::kBlock);
  for (float &v : x)
    v = n(rng);
  x[300] = -9.5f; // a negative max in block 1
  std::fill(x.begin() + 512, x.begin() + 768, 0.0f); // an all-zero block
  std::vector<Q8K> q(4);
  quantizeQ8K(x.data(), int64_t(x.size()), q.data());
  for (int b = 0; b < 4; ++b) {
    int8_t want[kquant::kBlock];
    float wd;
    ggmlQ8K(x.data() + b * kquant::kBlock, want, wd);
    for (int j = 0; j < kquant::kBlock; ++j)
      ASSERT_EQ(float(q[b].q[j]) * q[b].d, float(want[j]) * wd)
          << "block " << b << " value " << j; // the same products
    for (int j = 0; j < 16; ++j) {
      int s = 0;
      for (int i = 0; i < 16; ++i)
        s += q[b].q[16 * j + i];
      EXPECT_EQ(q[b].bsums[j], s);
    }
  }
  // The paired order holds the same values, moved; the sums stay in place.
  std::vector<Q8K> p(4);
  quantizeQ8K(x.data(), int64_t(x.size()), p.data(), true);
  for (int b = 0; b < 4; ++b) {
    EXPECT_EQ(p[b].d, q[b].d);
    for (int j = 0; j < kquant::kBlock; ++j)
      ASSERT_EQ(p[b].q[q8kIndex(j, true)], q[b].q[j]) << "value " << j;
    for (int j = 0; j < 16; ++j)
      EXPECT_EQ(p[b].bsums[j], q[b].bsums[j]);
  }
  EXPECT_EQ(q8kIndex(40, true), 72);
  EXPECT_EQ(q8kIndex(72, true), 40);
  EXPECT_EQ(q8kIndex(200, true), 168); // 128 + 72: the second half alike
  EXPECT_EQ(q8kIndex(100, true), 100);
}

TEST(KQuantDot, EveryLevelEveryFormatEveryRowCount) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int64_t blocks = 3, K = blocks * kquant::kBlock;
  const Isa best = detectIsa();
  for (Isa isa : {Isa::Avx2, Isa::Avx512}) {
    if (isa > best)
      continue;
    Backend b;
    useLevel(b, isa);
    for (kquant::Format f :
         {kquant::Format::Q4_K, kquant::Format::Q5_K, kquant::Format::Q6_K}) {
      const kquant::Layout l = kquant::layout(f);
      auto [codes, headers] = testing::randomKQuantBlocks(f, blocks, rng);
      std::vector<float> w(static_cast<size_t>(K));
      for (int64_t i = 0; i < blocks; ++i)
        kquant::decode(f, &headers[size_t(i * l.headerBytes)],
                       &codes[size_t(i * l.codeBytes)], &w[size_t(i * 256)]);
      const int64_t maxRows = b.kquant.maxRows;
      std::vector<float> x(static_cast<size_t>(maxRows * K));
      for (float &v : x)
        v = u(rng);
      std::vector<Q8K> xq(static_cast<size_t>(maxRows * blocks));
      const bool paired = b.kquant.pairedX[int(f)];
      for (int64_t r = 0; r < maxRows; ++r)
        quantizeQ8K(&x[size_t(r * K)], K, &xq[size_t(r * blocks)], paired);
      for (int64_t R = 1; R <= maxRows; ++R) {
        SCOPED_TRACE(std::string(isaName(isa)) + " " + std::string(l.name) +
                     " R=" + std::to_string(R));
        float res[8];
        b.kquant.dot[int(f)](headers.data(), codes.data(), blocks, xq.data(),
                             blocks, R, res);
        for (int64_t r = 0; r < R; ++r) {
          double want = 0, norm = 0;
          for (int64_t k = 0; k < K; ++k) {
            const Q8K &q = xq[size_t(r * blocks + k / 256)];
            const double xv = double(q.d) * q.q[q8kIndex(int(k % 256), paired)];
            want += double(w[size_t(k)]) * xv;
            norm += std::fabs(double(w[size_t(k)]) * xv);
          }
          EXPECT_NEAR(res[r], want, 1e-5 * norm) << "row " << r;
        }
      }
    }
  }
}

// A batched decode step (12 rows: the dot, 8 rows at a time) and a prompt
// (38 rows: the GEMM tiles) round the activations as one row does and sum
// in the same arithmetic (exact int32 per super-block, then the same two
// f32 steps): a row gives the same bits as alone. (The bound against the
// decoded weights checks both are right, not merely alike.)
TEST(KQuantDot, ManyRowsGiveEachRowTheSameBitsAsAlone) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int64_t K = 512, N = 40;
  for (int64_t rows : {int64_t(12), kKQuantGemmRows + 6})
    for (Isa isa : {Isa::Avx2, Isa::Avx512}) {
      if (isa > detectIsa())
        continue;
      Backend b;
      useLevel(b, isa);
      for (kquant::Format f :
           {kquant::Format::Q4_K, kquant::Format::Q5_K, kquant::Format::Q6_K}) {
        SCOPED_TRACE(std::string(isaName(isa)) + " " +
                     std::string(kquant::layout(f).name));
        auto [codes, headers] =
            testing::randomKQuantBlocks(f, N * K / kquant::kBlock, rng);
        const KQuantWeight w{f,
                             codes.data(),
                             headers.data(),
                             true,
                             b.kquant.dot[int(f)],
                             b.kquant.pairedX[int(f)],
                             b.kquant.maxRows,
                             &b.ints};
        std::vector<float> x(static_cast<size_t>(rows * K)), bias(N);
        for (float &v : x)
          v = u(rng);
        for (float &v : bias)
          v = u(rng);
        std::vector<float> all(static_cast<size_t>(rows * N)),
            one(static_cast<size_t>(N)), wd(static_cast<size_t>(N * K));
        const kquant::Layout l = kquant::layout(f);
        for (int64_t b = 0; b < N * K / kquant::kBlock; ++b)
          kquant::decode(f, headers.data() + b * l.headerBytes,
                         codes.data() + b * l.codeBytes,
                         wd.data() + b * kquant::kBlock);
        gemvKQuant(GemvArgs{x.data(), rows, K, N, bias.data(), all.data()}, w);
        for (int64_t r = 0; r < rows; ++r) {
          gemvKQuant(
              GemvArgs{x.data() + r * K, 1, K, N, bias.data(), one.data()}, w);
          for (int64_t n = 0; n < N; ++n) {
            double norm = 0;
            for (int64_t k = 0; k < K; ++k)
              norm += std::fabs(double(wd[size_t(n * K + k)]) *
                                double(x[size_t(r * K + k)]));
            double want = bias[size_t(n)];
            for (int64_t k = 0; k < K; ++k)
              want +=
                  double(wd[size_t(n * K + k)]) * double(x[size_t(r * K + k)]);
            // q8_K rounding: within 1% of sum |w x| at these sizes.
            EXPECT_NEAR(one[size_t(n)], want, 1e-2 * norm + 1e-6)
                << "row " << r << " column " << n;
            EXPECT_EQ(all[size_t(r * N + n)], one[size_t(n)])
                << "row " << r << " column " << n;
          }
        }
      }
    }
}

} // namespace
} // namespace llmc::cpu
