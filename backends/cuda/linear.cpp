//===- linear.cpp - LINEAR: GEMV for decode, cuBLASLt for longer steps ----===//
//
// rows <= 8: our GEMV kernels read W once in its stored dtype with x in f32.
// Longer: cuBLASLt with f32 accumulation. f32 W runs in f32 (TF32 only with
// LLMC_CUDA_TF32=1); bf16/f16 W takes x converted to its type; i8/i4/MXFP4
// W is expanded to bf16 in scratch first. The bias is added by a small
// kernel.
//
//===----------------------------------------------------------------------===//
#include "cuda.h"

#include "common/op_checks.h"

namespace llmc::cuda {
namespace {

int alignmentOf(const void *p) {
  auto v = reinterpret_cast<uintptr_t>(p);
  int a = 256;
  while (a > 1 && v % uintptr_t(a) != 0)
    a /= 2;
  return a;
}

// RAII for the cuBLASLt descriptors of one call.
struct LtDescs {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtDescs() {
    if (pref)
      cublasLtMatmulPreferenceDestroy(pref);
    if (d)
      cublasLtMatrixLayoutDestroy(d);
    if (b)
      cublasLtMatrixLayoutDestroy(b);
    if (a)
      cublasLtMatrixLayoutDestroy(a);
    if (op)
      cublasLtMatmulDescDestroy(op);
  }
};

} // namespace

void ltMatmul(Backend &be, cudaStream_t s, cudaDataType type, const void *A,
              const void *B, float *D, int64_t M, int64_t N, int64_t K) {
  std::string shape = "cuBLASLt matmul " + std::to_string(M) + "x" +
                      std::to_string(N) + "x" + std::to_string(K);
  cublasComputeType_t compute = type == CUDA_R_32F && be.tf32
                                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                                    : CUBLAS_COMPUTE_32F;
  LtDescs ds;
  checkLt(cublasLtMatmulDescCreate(&ds.op, compute, CUDA_R_32F), shape);
  // Column-major view: D [N, M] = op(A) [N, K] · B [K, M], A stored as the
  // row-major W [N, K] (= column-major [K, N], transposed).
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  checkLt(cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_TRANSA,
                                         &ta, sizeof ta),
          shape);
  checkLt(cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_TRANSB,
                                         &tb, sizeof tb),
          shape);
  checkLt(cublasLtMatrixLayoutCreate(&ds.a, type, uint64_t(K), uint64_t(N), K),
          shape);
  checkLt(cublasLtMatrixLayoutCreate(&ds.b, type, uint64_t(K), uint64_t(M), K),
          shape);
  checkLt(cublasLtMatrixLayoutCreate(&ds.d, CUDA_R_32F, uint64_t(N),
                                     uint64_t(M), N),
          shape);

  int alA = alignmentOf(A), alB = alignmentOf(B), alD = alignmentOf(D);
  LtKey key{M,   N,   K,  int(type) * 2 + int(compute == CUBLAS_COMPUTE_32F),
            alA, alB, alD};
  auto it = be.ltAlgos.find(key);
  if (it == be.ltAlgos.end()) {
    checkLt(cublasLtMatmulPreferenceCreate(&ds.pref), shape);
    uint64_t ws = be.ltWorkspace.size();
    checkLt(
        cublasLtMatmulPreferenceSetAttribute(
            ds.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
        shape);
    uint32_t aligns[4] = {uint32_t(alA), uint32_t(alB), uint32_t(alD),
                          uint32_t(alD)};
    const cublasLtMatmulPreferenceAttributes_t attrs[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4; ++i)
      checkLt(cublasLtMatmulPreferenceSetAttribute(
                  ds.pref, attrs[i], &aligns[i], sizeof(uint32_t)),
              shape);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    checkLt(cublasLtMatmulAlgoGetHeuristic(be.lt, ds.op, ds.a, ds.b, ds.d, ds.d,
                                           ds.pref, 1, &result, &found),
            shape);
    if (found < 1)
      throw CudaError(shape + ": cuBLASLt has no algorithm for this shape");
    it = be.ltAlgos.emplace(key, result.algo).first;
  }
  const float alpha = 1.0f, beta = 0.0f;
  checkLt(cublasLtMatmul(be.lt, ds.op, &alpha, A, ds.a, B, ds.b, &beta, D, ds.d,
                         D, ds.d, &it->second, be.ltWorkspace.get(),
                         be.ltWorkspace.size(), s),
          shape);
}

Kernel makeLinear(const llmc_op_desc &op, const Graph &g, Backend &b,
                  Prepared &p) {
  const llmc_weight_desc &w = g.weights[op.operands[1].index];
  uint32_t xi = op.operands[0].index, oi = op.results[0];
  int64_t K = g.buffers[xi].cols, N = g.buffers[oi].cols;
  uint32_t dtype = w.dtype;
  bool quant = common::isQuantized(dtype);
  int64_t group = quant ? op.i[0] : K;

  auto wd = uploadWeight(b, w);
  p.weights.push_back(wd);
  const float *scales = nullptr, *bias = nullptr;
  const uint8_t *e8m0 = nullptr;
  if (quant) {
    const llmc_weight_desc &s = g.weights[op.operands[2].index];
    // f32, or MXFP4's E8M0 bytes or a K-quant's headers (the checks).
    auto sd = uploadWeight(b, s);
    p.weights.push_back(sd);
    if (dtype == LLMC_MXFP4 || common::isKQuant(dtype))
      e8m0 = static_cast<const uint8_t *>(sd->get());
    else
      scales = sd->as<float>();
  }
  if (op.num_operands > 3 && op.operands[3].kind == LLMC_OPERAND_WEIGHT) {
    auto bd = uploadWeightF32(b, g.weights[op.operands[3].index], N);
    p.weights.push_back(bd);
    bias = bd->as<float>();
  }
  p.linears.push_back(
      {xi, K, N, dtype == LLMC_BF16 || dtype == LLMC_F16, quant});
  const void *W = wd->get();

  return [=](StepCtx &c) {
    const float *x = c.buf[xi];
    float *out = c.buf[oi];
    int64_t M = c.rows[xi];
    if (M <= 0)
      return;
    if (M <= kGemvMaxRows) {
      launchGemv(c.stream,
                 {x, M, K, N, W, dtype, scales, group, bias, out, e8m0});
      return;
    }
    if (dtype == LLMC_F32) {
      ltMatmul(c.be, c.stream, CUDA_R_32F, W, x, out, M, N, K);
    } else {
      // Scratch: [x in half precision][dequantized W], 256-byte aligned.
      char *xh = c.scratch;
      size_t xBytes = (size_t(M * K) * 2 + 255) / 256 * 256;
      uint32_t half = quant ? uint32_t(LLMC_BF16) : dtype;
      launchToHalf(c.stream, x, xh, M * K, half);
      const void *A = W;
      if (quant) {
        launchDequantBf16(c.stream, W, dtype, scales, e8m0, group, N, K,
                          xh + xBytes);
        A = xh + xBytes;
      }
      ltMatmul(c.be, c.stream, half == LLMC_BF16 ? CUDA_R_16BF : CUDA_R_16F, A,
               xh, out, M, N, K);
    }
    if (bias)
      launchAddBias(c.stream, out, bias, M, N);
  };
}

} // namespace llmc::cuda
