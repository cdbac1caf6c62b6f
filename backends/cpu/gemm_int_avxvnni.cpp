//===- gemm_int_avxvnni.cpp - The integer tiles with AVX-VNNI -------------===//
//
// Built with -mavx2 -mfma -mf16c -mavxvnni: vpdpbusd on 256 bits, for CPUs
// that have it without AVX-512 (Alder Lake and later client parts).
//
//===----------------------------------------------------------------------===//
#include <immintrin.h>

namespace {
inline __m256i dot32(__m256i acc, __m256i u, __m256i s) {
  return _mm256_dpbusd_avx_epi32(acc, u, s);
}
} // namespace

#include "gemm_int_256.h"
#include "gemm_kquant_256.h"

namespace llmc::cpu {

IntKernels intKernelsAvxVnni() {
  return {tile256<false>,       tile256<false>, 128,
          tile256<false, true>, kquantTile256,  tile256<false, true, true>};
}

} // namespace llmc::cpu
