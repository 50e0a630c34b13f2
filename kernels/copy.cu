// Memory-bound: a float4 copy and saxpy over 256 MiB buffers. Expect DRAM near its peak, SM nearly idle,
// long_scoreboard stalls. Kernels: copy_float4 x iters, saxpy x iters.
#include "common.cuh"

__global__ void copy_float4(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

__global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    y[i] = a * x[i] + y[i];
}

int main(int argc, char** argv) {
  const size_t bytes = size_t(ArgInt(argc, argv, "mib", 256)) << 20;
  const int iters = int(ArgInt(argc, argv, "iters", 10));
  float *a, *b;
  GT_CHECK(cudaMalloc(&a, bytes));
  GT_CHECK(cudaMalloc(&b, bytes));
  GT_CHECK(cudaMemset(a, 0, bytes));
  GT_CHECK(cudaMemset(b, 0, bytes));
  int sms = 0;
  GT_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int i = 0; i < iters; ++i)
    copy_float4<<<sms * 8, 256>>>(reinterpret_cast<float4*>(a), reinterpret_cast<float4*>(b), bytes / 16);
  for (int i = 0; i < iters; ++i) saxpy<<<sms * 8, 256>>>(2.0f, a, b, bytes / 4);
  GT_CHECK(cudaGetLastError());
  GT_CHECK(cudaDeviceSynchronize());
  GT_CHECK(cudaFree(a));
  GT_CHECK(cudaFree(b));
  std::printf("copy: %d x copy_float4 + %d x saxpy over %zu MiB\n", iters, iters, bytes >> 20);
  return 0;
}
