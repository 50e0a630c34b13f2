// A small multi-threaded host program: N named threads, each with its own stream, launching kernels and
// synchronizing. Expected: threads x launches mt_kernel kernels; API calls on N distinct named threads.
#include <pthread.h>

#include <string>
#include <thread>
#include <vector>

#include "common.cuh"

__global__ void mt_kernel(float* x, int id) {
  x[threadIdx.x] += id;
}

int main(int argc, char** argv) {
  const int nthreads = int(ArgInt(argc, argv, "threads", 4));
  const int launches = int(ArgInt(argc, argv, "launches", 50));
  GT_CHECK(cudaFree(nullptr));  // create the context once, on the main thread
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t) {
    threads.emplace_back([t, launches] {
      std::string name = "worker-" + std::to_string(t);
      pthread_setname_np(pthread_self(), name.c_str());
      cudaStream_t s;
      GT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      float* x;
      GT_CHECK(cudaMallocAsync(&x, 256 * sizeof(float), s));
      GT_CHECK(cudaMemsetAsync(x, 0, 256 * sizeof(float), s));
      for (int i = 0; i < launches; ++i) mt_kernel<<<1, 256, 0, s>>>(x, t);
      GT_CHECK(cudaFreeAsync(x, s));
      GT_CHECK(cudaStreamSynchronize(s));
      GT_CHECK(cudaStreamDestroy(s));
    });
  }
  for (auto& th : threads) th.join();
  std::printf("multithread: %d threads x %d x mt_kernel\n", nthreads, launches);
  return 0;
}
