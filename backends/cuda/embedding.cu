//===- embedding.cu - Table lookup ----------------------------------------===//
#include "device.cuh"

namespace llmc::cuda {
namespace {

__global__ void embeddingKernel(const void *table, uint32_t dtype,
                                const int32_t *ids, float *out, int64_t dim) {
  int64_t t = blockIdx.x;
  int64_t base = int64_t(ids[t]) * dim;
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x)
    out[t * dim + c] = loadAny(table, dtype, base + c);
}

} // namespace

void launchEmbedding(cudaStream_t s, const void *table, uint32_t dtype,
                     const int32_t *ids, float *out, int64_t rows,
                     int64_t dim) {
  if (rows > 0)
    embeddingKernel<<<unsigned(rows), 256, 0, s>>>(table, dtype, ids, out, dim);
}

} // namespace llmc::cuda
