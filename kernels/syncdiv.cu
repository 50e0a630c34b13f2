// Barrier-bound: half of each warp does extra work before every __syncthreads, so warps wait at the barrier.
// Kernel: syncthreads_divergent x iters. Expect barrier stalls and branch divergence.
#include "common.cuh"

__global__ void syncthreads_divergent(float* out, int rounds) {
  __shared__ float buf[1024];
  float v = threadIdx.x;
  for (int r = 0; r < rounds; ++r) {
    if (threadIdx.x & 1) {
      for (int k = 0; k < 64; ++k) v = v * 1.0001f + 0.5f;
    }
    buf[threadIdx.x] = v;
    __syncthreads();
    v += buf[(threadIdx.x + 1) % blockDim.x];
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

int main(int argc, char** argv) {
  const int iters = int(ArgInt(argc, argv, "iters", 3));
  const int rounds = int(ArgInt(argc, argv, "rounds", 256));
  int sms = 0;
  GT_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float* out;
  GT_CHECK(cudaMalloc(&out, sizeof(float) * sms * 4 * 1024));
  for (int i = 0; i < iters; ++i) syncthreads_divergent<<<sms * 4, 1024>>>(out, rounds);
  GT_CHECK(cudaGetLastError());
  GT_CHECK(cudaDeviceSynchronize());
  std::printf("syncdiv: %d x syncthreads_divergent\n", iters);
  GT_CHECK(cudaFree(out));
  return 0;
}
