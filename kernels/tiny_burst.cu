// Launch-bound: thousands of tiny kernels back to back; the GPU idles between them while the CPU launches.
// Kernel: tiny_kernel x count (default 5000). Expect a high GPU idle share and launch-API time dominating.
#include "common.cuh"

__global__ void tiny_kernel(float* x) {
  if (threadIdx.x == 0) x[blockIdx.x] += 1.0f;
}

int main(int argc, char** argv) {
  const int count = int(ArgInt(argc, argv, "count", 5000));
  float* x;
  GT_CHECK(cudaMalloc(&x, sizeof(float)));
  GT_CHECK(cudaMemset(x, 0, sizeof(float)));
  for (int i = 0; i < count; ++i) tiny_kernel<<<1, 32>>>(x);
  GT_CHECK(cudaGetLastError());
  float v = 0;
  GT_CHECK(cudaMemcpy(&v, x, sizeof v, cudaMemcpyDeviceToHost));
  std::printf("tiny_burst: %d x tiny_kernel, value %.0f\n", count, v);
  GT_CHECK(cudaFree(x));
  return v == float(count) ? 0 : 1;
}
