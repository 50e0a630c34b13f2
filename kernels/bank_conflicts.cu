// Shared-memory bank conflicts: a column walk of a 32x32 float tile hits one bank 32 times per warp access;
// the padded tile (33 columns) spreads it over all banks. Kernels: smem_conflicted x iters, smem_padded x iters.
#include "common.cuh"

template <int kCols>
__device__ float ColumnWalk(float (*tile)[kCols], int rounds) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int r = 0; r < 32; ++r) tile[lane][r] = lane * 32 + r + warp;
  __syncwarp();
  float acc = 0;
  for (int k = 0; k < rounds; ++k) {
#pragma unroll 8
    for (int r = 0; r < 32; ++r) acc += tile[r][(lane + k) & 31];  // lanes of a warp read one column
  }
  return acc;
}

__global__ void smem_conflicted(float* out, int rounds) {
  __shared__ float tiles[8][32][32];
  out[blockIdx.x * blockDim.x + threadIdx.x] = ColumnWalk<32>(tiles[threadIdx.x >> 5], rounds);
}

__global__ void smem_padded(float* out, int rounds) {
  __shared__ float tiles[8][32][33];
  out[blockIdx.x * blockDim.x + threadIdx.x] = ColumnWalk<33>(tiles[threadIdx.x >> 5], rounds);
}

int main(int argc, char** argv) {
  const int iters = int(ArgInt(argc, argv, "iters", 3));
  const int rounds = int(ArgInt(argc, argv, "rounds", 64));
  int sms = 0;
  GT_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float* out;
  GT_CHECK(cudaMalloc(&out, sizeof(float) * sms * 8 * 256));
  for (int i = 0; i < iters; ++i) smem_conflicted<<<sms * 8, 256>>>(out, rounds);
  for (int i = 0; i < iters; ++i) smem_padded<<<sms * 8, 256>>>(out, rounds);
  GT_CHECK(cudaGetLastError());
  GT_CHECK(cudaDeviceSynchronize());
  std::printf("bank_conflicts: %d x smem_conflicted + %d x smem_padded\n", iters, iters);
  GT_CHECK(cudaFree(out));
  return 0;
}
