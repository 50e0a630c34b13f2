// Uncoalesced: each thread reads one float 64 bytes apart from its neighbour, so every 4-byte load drags a
// whole 32-byte sector (or more) from DRAM. Kernels: strided_read x iters, coalesced_read x iters (baseline).
#include "common.cuh"

__global__ void strided_read(const float* __restrict__ in, float* __restrict__ out, size_t n, int stride) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i * stride < n) out[i] = in[i * stride] * 2.0f;
}

__global__ void coalesced_read(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i] * 2.0f;
}

int main(int argc, char** argv) {
  const size_t n = size_t(ArgInt(argc, argv, "mib", 256)) << 18;  // floats
  const int stride = int(ArgInt(argc, argv, "stride", 16));
  const int iters = int(ArgInt(argc, argv, "iters", 5));
  float *in, *out;
  GT_CHECK(cudaMalloc(&in, n * sizeof(float)));
  GT_CHECK(cudaMalloc(&out, n * sizeof(float)));
  GT_CHECK(cudaMemset(in, 0, n * sizeof(float)));
  const size_t m = n / stride;
  for (int i = 0; i < iters; ++i) strided_read<<<(m + 255) / 256, 256>>>(in, out, n, stride);
  for (int i = 0; i < iters; ++i) coalesced_read<<<(m + 255) / 256, 256>>>(in, out, m);
  GT_CHECK(cudaGetLastError());
  GT_CHECK(cudaDeviceSynchronize());
  std::printf("strided: %d x strided_read (stride %d) + %d x coalesced_read, %zu loads each\n", iters, stride, iters, m);
  GT_CHECK(cudaFree(in));
  GT_CHECK(cudaFree(out));
  return 0;
}
