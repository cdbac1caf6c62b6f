//===- gemm_int_avx2.cpp - The integer tiles with vpmaddubsw --------------===//
//
// Built with -mavx2 -mfma -mf16c. The pairwise int16 sums of vpmaddubsw
// cannot saturate: |w| <= 128 and |x| <= 127 give at most 32512.
//
//===----------------------------------------------------------------------===//
#include <immintrin.h>

namespace {
inline __m256i dot32(__m256i acc, __m256i u, __m256i s) {
  return _mm256_add_epi32(
      acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
}
} // namespace

#include "gemm_int_256.h"
#include "gemm_kquant_256.h"

namespace llmc::cpu {

IntKernels intKernelsAvx2() {
  return {tile256<true>,        tile256<false>, 0,
          tile256<false, true>, kquantTile256,  tile256<false, true, true>};
}

} // namespace llmc::cpu
