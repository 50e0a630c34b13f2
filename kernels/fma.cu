// Compute-bound: independent FP32 FMA chains, no memory traffic beyond one store per thread.
// Expect ~95% of FP32 peak, not_selected / math-pipe stalls. Kernel: fma_chains x iters.
#include "common.cuh"

__global__ void fma_chains(float* out, int loops) {
  float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
  const float m = 1.0000001f, c = 0.5f;
  for (int i = 0; i < loops; ++i) {
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      a0 = fmaf(a0, m, c); a1 = fmaf(a1, m, c); a2 = fmaf(a2, m, c); a3 = fmaf(a3, m, c);
      a4 = fmaf(a4, m, c); a5 = fmaf(a5, m, c); a6 = fmaf(a6, m, c); a7 = fmaf(a7, m, c);
    }
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

int main(int argc, char** argv) {
  const int iters = int(ArgInt(argc, argv, "iters", 5));
  const int loops = int(ArgInt(argc, argv, "loops", 2048));
  int sms = 0;
  GT_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int blocks = sms * 8, threads = 256;
  float* out;
  GT_CHECK(cudaMalloc(&out, sizeof(float) * blocks * threads));
  for (int i = 0; i < iters; ++i) fma_chains<<<blocks, threads>>>(out, loops);
  GT_CHECK(cudaGetLastError());
  GT_CHECK(cudaDeviceSynchronize());
  double flops = 2.0 * 8 * 16 * double(loops) * blocks * threads;
  std::printf("fma: %d x fma_chains, %.3g FLOP each\n", iters, flops);
  GT_CHECK(cudaFree(out));
  return 0;
}
