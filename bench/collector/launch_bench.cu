// Launch overhead: time N back-to-back launches of an empty kernel (launch-bound) or of a kernel that spins
// for a fixed time (GPU-bound), as µs per launch (median of several repetitions). Run it plain and under
// gcollect in the same session and compare; scripts/gpu/collector_suite.sh does that.
//   gt_bench_launch [--launches=N] [--reps=R] [--spin_us=0] [--blocks=1] [--threads=1]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                   \
  do {                                                             \
    cudaError_t e = (x);                                           \
    if (e != cudaSuccess) {                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); \
      std::exit(1);                                                \
    }                                                              \
  } while (0)

__global__ void empty_kernel() {}

__global__ void spin_kernel(long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (static_cast<long long>(now - start) < ns);
}

static long Arg(int argc, char** argv, const char* name, long fallback) {
  size_t n = std::strlen(name);
  for (int i = 1; i < argc; ++i)
    if (!std::strncmp(argv[i], "--", 2) && !std::strncmp(argv[i] + 2, name, n) && argv[i][2 + n] == '=')
      return std::strtol(argv[i] + 3 + n, nullptr, 10);
  return fallback;
}

int main(int argc, char** argv) {
  const long launches = Arg(argc, argv, "launches", 50000);
  const int reps = int(Arg(argc, argv, "reps", 5));
  const long spin_us = Arg(argc, argv, "spin_us", 0);
  // Wide kernels show whether a tracer's per-kernel cost grows with the blocks it has to time.
  const dim3 grid(unsigned(Arg(argc, argv, "blocks", 1))), block(unsigned(Arg(argc, argv, "threads", 1)));
  CHECK(cudaFree(nullptr));
  // Warm up: module load, first-launch costs.
  for (int i = 0; i < 100; ++i)
    spin_us ? spin_kernel<<<grid, block>>>(spin_us * 1000) : empty_kernel<<<grid, block>>>();
  CHECK(cudaDeviceSynchronize());
  std::vector<double> per_launch;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    if (spin_us) {
      for (long i = 0; i < launches; ++i) spin_kernel<<<grid, block>>>(spin_us * 1000);
    } else {
      for (long i = 0; i < launches; ++i) empty_kernel<<<grid, block>>>();
    }
    CHECK(cudaDeviceSynchronize());
    auto t1 = std::chrono::steady_clock::now();
    per_launch.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / double(launches));
  }
  CHECK(cudaGetLastError());
  std::sort(per_launch.begin(), per_launch.end());
  std::printf(
      "launch_bench spin_us=%ld blocks=%u threads=%u launches=%ld reps=%d median_us_per_launch=%.3f min=%.3f "
      "max=%.3f\n",
      spin_us, grid.x, block.x, launches, reps, per_launch[per_launch.size() / 2], per_launch.front(),
      per_launch.back());
  return 0;
}
