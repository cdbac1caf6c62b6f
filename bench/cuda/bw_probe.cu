// bw_probe: device-to-device copy bandwidth (read + write bytes per second),
// the HBM ceiling cuda_check.sh divides decode speed by. Prints GB/s.
#include <cstdio>
#include <cuda_runtime.h>

int main() {
  const size_t bytes = size_t(1) << 30; // 1 GiB each way
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess ||
      cudaMalloc(&b, bytes) != cudaSuccess) {
    std::fprintf(stderr, "bw_probe: cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(a, 1, bytes);
  cudaEvent_t t0, t1;
  cudaEventCreate(&t0);
  cudaEventCreate(&t1);
  cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice); // warm-up
  const int reps = 20;
  cudaEventRecord(t0);
  for (int i = 0; i < reps; ++i)
    cudaMemcpy(i % 2 ? a : b, i % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(t1);
  cudaEventSynchronize(t1);
  float ms = 0;
  cudaEventElapsedTime(&ms, t0, t1);
  if (cudaGetLastError() != cudaSuccess) {
    std::fprintf(stderr, "bw_probe: copy failed\n");
    return 1;
  }
  std::printf("%.1f\n", 2.0 * double(bytes) * reps / (ms * 1e-3) / 1e9);
  return 0;
}
