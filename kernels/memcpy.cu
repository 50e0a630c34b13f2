// Host memory kinds: the same 64 MiB copied H2D and D2H from pageable and from pinned memory. Pinned copies
// run near PCIe/C2C peak; pageable ones go through a staging buffer and are slower.
// Memcpys: iters x (HtoD pageable, DtoH pageable, HtoD pinned, DtoH pinned); one memset.
#include <vector>

#include "common.cuh"

int main(int argc, char** argv) {
  const size_t bytes = size_t(ArgInt(argc, argv, "mib", 64)) << 20;
  const int iters = int(ArgInt(argc, argv, "iters", 3));
  std::vector<char> pageable(bytes, 1);
  char* pinned = nullptr;
  GT_CHECK(cudaMallocHost(&pinned, bytes));
  std::memset(pinned, 2, bytes);
  char* dev = nullptr;
  GT_CHECK(cudaMalloc(&dev, bytes));
  GT_CHECK(cudaMemset(dev, 0, bytes));
  for (int i = 0; i < iters; ++i) {
    GT_CHECK(cudaMemcpy(dev, pageable.data(), bytes, cudaMemcpyHostToDevice));
    GT_CHECK(cudaMemcpy(pageable.data(), dev, bytes, cudaMemcpyDeviceToHost));
  }
  for (int i = 0; i < iters; ++i) {
    GT_CHECK(cudaMemcpy(dev, pinned, bytes, cudaMemcpyHostToDevice));
    GT_CHECK(cudaMemcpy(pinned, dev, bytes, cudaMemcpyDeviceToHost));
  }
  GT_CHECK(cudaFreeHost(pinned));
  GT_CHECK(cudaFree(dev));
  std::printf("memcpy: %d x 4 copies of %zu MiB (pageable, pinned)\n", iters, bytes >> 20);
  return 0;
}
