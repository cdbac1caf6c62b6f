//===- embedding.cu - Table lookup ----------------------------------------===//
#include "device.cuh"

namespace llmc::cuda {
namespace {

__global__ void embeddingKernel(const void *table, uint32_t dtype,
                                const float *scales, const uint8_t *headers,
                                int64_t group, const int32_t *ids, float *out,
                                int64_t dim) {
  int64_t t = blockIdx.x;
  int64_t base = int64_t(ids[t]) * dim;
  if (headers) { // a K-quant table
    for (int64_t c = threadIdx.x; c < dim; c += blockDim.x)
      out[t * dim + c] = kquantAt(dtype, table, headers, ids[t], dim, c);
    return;
  }
  if (scales) { // i8 rows, one scale per group of columns
    const int8_t *q = static_cast<const int8_t *>(table) + base;
    const float *s = scales + base / group;
    for (int64_t c = threadIdx.x; c < dim; c += blockDim.x)
      out[t * dim + c] = float(q[c]) * s[c / group];
    return;
  }
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x)
    out[t * dim + c] = loadAny(table, dtype, base + c);
}

} // namespace

void launchEmbedding(cudaStream_t s, const void *table, uint32_t dtype,
                     const float *scales, const uint8_t *headers, int64_t group,
                     const int32_t *ids, float *out, int64_t rows,
                     int64_t dim) {
  if (rows > 0)
    embeddingKernel<<<unsigned(rows), 256, 0, s>>>(
        table, dtype, scales, headers, group, ids, out, dim);
}

} // namespace llmc::cuda
