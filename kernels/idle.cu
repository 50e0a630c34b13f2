// GPU idle gaps with known causes, three steps of the same pattern, each cause in its own gap:
//   "load batch": the CPU sleeps 3 ms inside an NVTX range while nothing is queued (a data-loading stall);
//   allocation: cudaMalloc/cudaFree of 256 MiB buffers in the loop, 2+ ms of them (allocation in the hot path);
//   nothing recorded: the CPU sleeps 4 ms outside any range and any CUDA call (unannotated host work).
// Between the gaps a 50 us kernel keeps the GPU busy. Expected: gtrace stats / ExplainIdleGaps names the
// range, cudaMalloc or cudaFree, and "no CUDA call or annotated range" for the gaps of each step.
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include "common.cuh"

__global__ void busy_kernel(long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (static_cast<long long>(now - start) < ns);
}

static void Work() {
  busy_kernel<<<1, 32>>>(50'000);
  GT_CHECK(cudaDeviceSynchronize());
}

int main(int argc, char** argv) {
  const int steps = int(ArgInt(argc, argv, "steps", 3));
  Work();  // context, module load
  for (int s = 0; s < steps; ++s) {
    nvtxRangePushA("step");
    Work();
    nvtxRangePushA("load batch");
    usleep(3000);
    nvtxRangePop();
    Work();
    for (int i = 0; i < 8; ++i) {
      void* p = nullptr;
      GT_CHECK(cudaMalloc(&p, 256u << 20));
      GT_CHECK(cudaFree(p));
    }
    Work();
    nvtxRangePop();
    usleep(4000);
    Work();
  }
  std::printf("idle: %d steps\n", steps);
  return 0;
}
