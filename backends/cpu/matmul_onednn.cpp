//===- matmul_onednn.cpp - Many-row LINEAR through oneDNN -----------------===//
//
// f32 and bf16 weights are read in place from the plan ([N, K] row-major is
// the B operand in format_tag::ba); the others are converted once into the
// layout oneDNN's brgemm wants (format_tag::any) and shared between the
// graphs of a plan. Primitives are cached per row count, all reading the
// same weights.
//
// dtypes: f32 and f16 (widened to f32: oneDNN 2.6 has no f16 matmul on CPU)
// run f32 x f32. Where oneDNN has a fast bf16 kernel (AVX-512 BF16 or AMX),
// bf16, i8 and i4 weights run bf16 x bf16 -> f32 with the activations
// rounded to bf16:
// - i8 keeps its integers (exact in bf16) and applies the row scale after;
// - i4's group scales vary along K, so its weights are dequantized to bf16,
//   and the activations are split into a bf16 high and low part (two rows
//   each) so only the weights' rounding remains.
// Elsewhere those dtypes return no pack and the gemv kernels run.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"

#include "llmc/support/half.h"

#include <dnnl.hpp>
#include <immintrin.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>

namespace llmc::cpu {

using dnnl::memory;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

class MatmulEngine {
public:
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  int bf16Fast = -1; // probed on first use
};

struct PackedMatmul {
  std::shared_ptr<MatmulEngine> e;
  dt src = dt::f32;
  bool split = false;  // i4: activations as bf16 hi + lo rows
  bool scaled = false; // i8: per-row (n) scale after the matmul
  std::vector<float> scale;
  memory::desc wmd;
  memory weights;
  int64_t N = 0, K = 0;
  std::map<std::pair<int64_t, bool>, dnnl::matmul> prims;
  std::vector<uint16_t> xb;
  std::vector<float> tmp;
};

void toBf16(const float *x, int64_t n, uint16_t *out) {
  int64_t i = 0;
  const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
  for (; i + 16 <= n; i += 16) {
    __m256i a = _mm256_castps_si256(_mm256_loadu_ps(x + i));
    __m256i b = _mm256_castps_si256(_mm256_loadu_ps(x + i + 8));
    a = _mm256_srli_epi32(
        _mm256_add_epi32(
            a, _mm256_add_epi32(
                   bias, _mm256_and_si256(_mm256_srli_epi32(a, 16), one))),
        16);
    b = _mm256_srli_epi32(
        _mm256_add_epi32(
            b, _mm256_add_epi32(
                   bias, _mm256_and_si256(_mm256_srli_epi32(b, 16), one))),
        16);
    __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xd8);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + i), packed);
  }
  for (; i < n; ++i)
    out[i] = floatToBf16(x[i]);
}

namespace {

bool probeBf16(MatmulEngine &e) {
  if (const char *force = std::getenv("LLMC_CPU_ONEDNN_BF16"))
    return std::atoi(force) != 0;
  try {
    memory::desc a({64, 64}, dt::bf16, tag::ab),
        w({64, 64}, dt::bf16, tag::any), c({64, 64}, dt::f32, tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, w, c), e.eng);
    std::string impl = pd.impl_info_str();
    return impl.find("amx") != std::string::npos ||
           impl.find("bf16") != std::string::npos;
  } catch (const dnnl::error &) {
    return false;
  }
}

MatmulEngine &engineOf(Backend &b) {
  if (!b.matmul)
    b.matmul = std::make_shared<MatmulEngine>();
  if (b.matmul->bf16Fast < 0)
    b.matmul->bf16Fast = probeBf16(*b.matmul);
  return *b.matmul;
}

// W [N, K] row-major in `dtype` at `data`, as the [K, N] B operand.
void reorderIn(PackedMatmul &p, const void *data, dt dtype) {
  memory::dims kn = {p.K, p.N};
  memory::desc plain(kn, dtype, tag::ba);
  memory::desc any(kn, p.src, tag::any);
  memory::desc a({128, p.K}, p.src, tag::ab), c({128, p.N}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, any, c), p.e->eng);
  p.wmd = pd.weights_desc();
  p.weights = memory(p.wmd, p.e->eng);
  memory src(plain, p.e->eng, const_cast<void *>(data));
  dnnl::reorder(src, p.weights).execute(p.e->strm, src, p.weights);
  p.e->strm.wait();
}

// The plan's own [N, K] bytes as the B operand: brgemm reads them as fast as
// its packed layout at these shapes (measured: prefill equal or faster), and
// a packed copy would double the weights' memory.
void usePlain(PackedMatmul &p, const void *data, dt dtype) {
  p.wmd = memory::desc({p.K, p.N}, dtype, tag::ba);
  p.weights = memory(p.wmd, p.e->eng, const_cast<void *>(data));
}

std::shared_ptr<PackedMatmul> pack(Backend &b, const LinearWeight &w) {
  MatmulEngine &e = engineOf(b);
  auto p = std::make_shared<PackedMatmul>();
  p->e = b.matmul;
  p->N = w.N;
  p->K = w.K;
  size_t count = size_t(w.N * w.K);
  if (w.dtype == LLMC_F32) {
    usePlain(*p, w.data, dt::f32);
  } else if (w.dtype == LLMC_F16) {
    std::vector<float> f(count);
    const auto *h = static_cast<const uint8_t *>(w.data);
    for (size_t i = 0; i < count; ++i) {
      uint16_t v;
      std::memcpy(&v, h + 2 * i, 2);
      f[i] = f16ToFloat(v);
    }
    reorderIn(*p, f.data(), dt::f32);
  } else if (!e.bf16Fast) {
    return nullptr;
  } else if (w.dtype == LLMC_BF16) {
    p->src = dt::bf16;
    usePlain(*p, w.data, dt::bf16);
  } else {
    p->src = dt::bf16;
    std::vector<uint16_t> q(count);
    const auto *bytes = static_cast<const uint8_t *>(w.data);
    int64_t groups = w.K / w.group;
    if (w.dtype == LLMC_I8) {
      p->scaled = true;
      p->scale.assign(w.scales, w.scales + w.N);
      for (size_t i = 0; i < count; ++i)
        q[i] = floatToBf16(float(int8_t(bytes[i])));
      if (groups != 1) { // several scales per row: fold them in instead
        p->scaled = false;
        for (size_t i = 0; i < count; ++i) {
          int64_t n = int64_t(i) / w.K, k = int64_t(i) % w.K;
          q[i] = floatToBf16(float(int8_t(bytes[i])) *
                             w.scales[n * groups + k / w.group]);
        }
      }
    } else {
      p->split = true;
      for (size_t i = 0; i < count; ++i) {
        int64_t n = int64_t(i) / w.K, k = int64_t(i) % w.K;
        uint8_t byte = bytes[n * (w.K / 2) + k / 2];
        int nib = k % 2 == 0 ? byte & 0xf : byte >> 4;
        q[i] = floatToBf16(float(nib >= 8 ? nib - 16 : nib) *
                           w.scales[n * groups + k / w.group]);
      }
    }
    reorderIn(*p, q.data(), dt::bf16);
  }
  return p;
}

dnnl::matmul *primitive(PackedMatmul &p, int64_t M, bool bias) {
  auto key = std::make_pair(M, bias);
  auto it = p.prims.find(key);
  if (it != p.prims.end())
    return &it->second;
  if (p.prims.size() > 64) // row counts of chunked prefill tails vary
    p.prims.clear();
  memory::desc a({M, p.K}, p.src, tag::ab), c({M, p.N}, dt::f32, tag::ab);
  memory::desc bmd({1, p.N}, dt::f32, tag::ab);
  dnnl::matmul::desc d = bias ? dnnl::matmul::desc(a, p.wmd, bmd, c)
                              : dnnl::matmul::desc(a, p.wmd, c);
  dnnl::matmul::primitive_desc pd(d, p.e->eng);
  return &p.prims.emplace(key, dnnl::matmul(pd)).first->second;
}

} // namespace

std::shared_ptr<PackedMatmul> packMatmul(Backend &b, const LinearWeight &w) {
  try {
    return b.weights.get<PackedMatmul>(w.data, w.nbytes, 100 + int(w.dtype),
                                       [&] { return pack(b, w); });
  } catch (const dnnl::error &) {
    return nullptr; // the gemv kernels serve every row count
  }
}

bool runMatmul(PackedMatmul &p, const float *x, int64_t M, const float *bias,
               float *out) {
  bool fuseBias = bias && !p.scaled && !p.split;
  int64_t rows = p.split ? 2 * M : M;
  dnnl::matmul *prim;
  try {
    prim = primitive(p, rows, fuseBias);
  } catch (const dnnl::error &) {
    return false;
  }
  MatmulEngine &e = *p.e;
  void *src = const_cast<float *>(x);
  if (p.src == dt::bf16) {
    p.xb.resize(size_t(rows * p.K));
    uint16_t *xb = p.xb.data();
    int64_t K = p.K;
    bool split = p.split;
#pragma omp parallel if (M * K >= (1 << 16))
    {
      std::vector<float> lo(split ? size_t(K) : 0);
#pragma omp for schedule(static)
      for (int64_t m = 0; m < M; ++m) {
        toBf16(x + m * K, K, xb + m * K);
        if (split) {
          for (int64_t k = 0; k < K; ++k)
            lo[size_t(k)] = x[m * K + k] - bf16ToFloat(xb[m * K + k]);
          toBf16(lo.data(), K, xb + (M + m) * K);
        }
      }
    }
    src = xb;
  }
  float *dst = out;
  if (p.split) {
    p.tmp.resize(size_t(rows * p.N));
    dst = p.tmp.data();
  }
  memory a({{rows, p.K}, p.src, tag::ab}, e.eng, src);
  memory c({{rows, p.N}, dt::f32, tag::ab}, e.eng, dst);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, p.weights}, {DNNL_ARG_DST, c}};
  if (fuseBias)
    args.emplace(DNNL_ARG_BIAS, memory({{1, p.N}, dt::f32, tag::ab}, e.eng,
                                       const_cast<float *>(bias)));
  prim->execute(e.strm, args);
  e.strm.wait();

  if (p.scaled || p.split) {
    int64_t N = p.N;
    const float *scale = p.scaled ? p.scale.data() : nullptr;
    const float *hi = dst, *lo = dst + M * N;
#pragma omp parallel for schedule(static) if (M * N >= (1 << 16))
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        float v = p.split ? hi[m * N + n] + lo[m * N + n] : out[m * N + n];
        if (scale)
          v *= scale[n];
        out[m * N + n] = v + (bias ? bias[n] : 0.0f);
      }
  }
  return true;
}

void capOneDnn(Isa isa) {
  using ci = dnnl::cpu_isa;
  ci max = isa == Isa::Avx2         ? ci::avx2
           : isa == Isa::AvxVnni    ? ci::avx2_vnni
           : isa == Isa::Avx512     ? ci::avx512_core_vnni
           : isa == Isa::Avx512Bf16 ? ci::avx512_core_bf16
                                    : ci::avx512_core_amx;
  // Refused once oneDNN has run (a second backend in the process): the
  // first cap stays, which is what that process asked for.
  (void)dnnl::set_max_cpu_isa(max);
}

} // namespace llmc::cpu
