// Contention: every thread atomically adds to one global address; the L2 serializes them.
// Kernel: atomic_one_address x iters. Expect near-zero DRAM and SM throughput, lg_throttle / drain stalls.
#include "common.cuh"

__global__ void atomic_one_address(unsigned long long* counter, int per_thread) {
  for (int i = 0; i < per_thread; ++i) atomicAdd(counter, 1ull);
}

int main(int argc, char** argv) {
  const int iters = int(ArgInt(argc, argv, "iters", 3));
  const int per_thread = int(ArgInt(argc, argv, "per_thread", 16));
  int sms = 0;
  GT_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  unsigned long long* counter;
  GT_CHECK(cudaMalloc(&counter, sizeof *counter));
  GT_CHECK(cudaMemset(counter, 0, sizeof *counter));
  for (int i = 0; i < iters; ++i) atomic_one_address<<<sms * 4, 256>>>(counter, per_thread);
  GT_CHECK(cudaGetLastError());
  unsigned long long result = 0;
  GT_CHECK(cudaMemcpy(&result, counter, sizeof result, cudaMemcpyDeviceToHost));
  unsigned long long expected = 1ull * iters * sms * 4 * 256 * per_thread;
  std::printf("atomics: %d x atomic_one_address, counter %llu (expected %llu)\n", iters, result, expected);
  GT_CHECK(cudaFree(counter));
  return result == expected ? 0 : 1;
}
