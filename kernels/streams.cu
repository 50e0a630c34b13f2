// Concurrency: four streams, each copying its chunk in (pinned, async), running a kernel on it and copying it
// back, so copies on one stream overlap kernels on another. Kernels: stream_work x (streams x iters).
#include "common.cuh"

__global__ void stream_work(float* x, size_t n, int loops) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float v = x[i];
    for (int k = 0; k < loops; ++k) v = v * 1.0001f + 0.25f;
    x[i] = v;
  }
}

int main(int argc, char** argv) {
  const int nstreams = int(ArgInt(argc, argv, "streams", 4));
  const int iters = int(ArgInt(argc, argv, "iters", 4));
  const size_t n = size_t(ArgInt(argc, argv, "mib", 16)) << 18;  // floats per stream
  cudaStream_t streams[16];
  float *host, *dev;
  GT_CHECK(cudaMallocHost(&host, n * sizeof(float) * nstreams));
  GT_CHECK(cudaMalloc(&dev, n * sizeof(float) * nstreams));
  for (int s = 0; s < nstreams; ++s) GT_CHECK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
  for (int it = 0; it < iters; ++it) {
    for (int s = 0; s < nstreams; ++s) {
      float* h = host + s * n;
      float* d = dev + s * n;
      GT_CHECK(cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, streams[s]));
      stream_work<<<132, 256, 0, streams[s]>>>(d, n, 64);
      GT_CHECK(cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, streams[s]));
    }
  }
  GT_CHECK(cudaGetLastError());
  for (int s = 0; s < nstreams; ++s) GT_CHECK(cudaStreamSynchronize(streams[s]));
  for (int s = 0; s < nstreams; ++s) GT_CHECK(cudaStreamDestroy(streams[s]));
  GT_CHECK(cudaFreeHost(host));
  GT_CHECK(cudaFree(dev));
  std::printf("streams: %d streams x %d iters of (HtoD, stream_work, DtoH)\n", nstreams, iters);
  return 0;
}
