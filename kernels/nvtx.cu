// NVTX phases: a range opened before CUDA initializes, nested push/pop ranges with colors and payloads, marks,
// a range started on one thread and ended on another, a custom domain, a named OS thread, and
// cudaProfilerStart/Stop around the "compute" phase (for --capture-range tests).
// Expected: ranges startup, setup, compute, step x3 (inside compute), teardown, cross-thread (ends on another
// thread), domain:work; marks before-cuda, checkpoint. Kernels: phase_kernel x 3 (inside steps).
#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <unistd.h>

#include <thread>

#include "common.cuh"

__global__ void phase_kernel(float* x, int loops) {
  float v = x[threadIdx.x];
  for (int i = 0; i < loops; ++i) v = v * 1.0001f + 0.5f;
  x[threadIdx.x] = v;
}

static void PushColored(const char* name, uint32_t argb, uint64_t payload) {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = argb;
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = payload;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  nvtxRangePushEx(&a);
}

int main(int argc, char** argv) {
  const int loops = int(ArgInt(argc, argv, "loops", 20000));
  nvtxRangePushA("startup");  // before any CUDA call: needs the NVTX injection entry point
  nvtxMarkA("before-cuda");
  usleep(5000);
  nvtxRangePop();

  nvtxRangePushA("setup");
  float* x;
  GT_CHECK(cudaMalloc(&x, 1024 * sizeof(float)));
  GT_CHECK(cudaMemset(x, 0, 1024 * sizeof(float)));
  nvtxRangePop();

  GT_CHECK(cudaProfilerStart());
  PushColored("compute", 0xFF76B900u, 42);
  for (int s = 0; s < 3; ++s) {
    PushColored("step", 0xFF2060C0u, uint64_t(s));
    phase_kernel<<<1, 256>>>(x, loops);
    GT_CHECK(cudaDeviceSynchronize());
    nvtxRangePop();
  }
  nvtxMarkA("checkpoint");
  nvtxRangePop();
  GT_CHECK(cudaProfilerStop());

  nvtxRangeId_t cross = nvtxRangeStartA("cross-thread");
  std::thread worker([cross] {
    nvtxNameOsThreadA(static_cast<uint32_t>(gettid()), "nvtx-worker");
    usleep(2000);
    nvtxRangeEnd(cross);
  });
  worker.join();

  nvtxDomainHandle_t domain = nvtxDomainCreateA("gtrace-test");
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "domain:work";
  nvtxDomainRangePushEx(domain, &a);
  usleep(1000);
  nvtxDomainRangePop(domain);
  nvtxDomainDestroy(domain);

  nvtxRangePushA("teardown");
  GT_CHECK(cudaFree(x));
  nvtxRangePop();
  std::printf("nvtx: phases done\n");
  return 0;
}
