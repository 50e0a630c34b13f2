// CUDA graphs: the same two kernels launched directly (eagerly) and as nodes of a captured graph replayed
// with cudaGraphLaunch. Kernels: graph_scale, graph_add, once eagerly, then --iters graph launches (default 3).
// Ground truth for the counters run: graph-launched kernels are reported per kernel (profiled through the
// graph launch, or "not profiled: graph launch"), never silently missing.
#include "common.cuh"

__global__ void graph_scale(float* x, int n, float a) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] *= a;
}

__global__ void graph_add(float* y, const float* x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] += x[i];
}

int main(int argc, char** argv) {
  const int n = int(ArgInt(argc, argv, "mib", 16)) * (1 << 20) / int(sizeof(float));
  const int iters = int(ArgInt(argc, argv, "iters", 3));
  float *x, *y;
  GT_CHECK(cudaMalloc(&x, n * sizeof(float)));
  GT_CHECK(cudaMalloc(&y, n * sizeof(float)));
  GT_CHECK(cudaMemset(x, 0, n * sizeof(float)));
  GT_CHECK(cudaMemset(y, 0, n * sizeof(float)));
  cudaStream_t s;
  GT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int grid = 264, block = 256;
  // x[0] = 1 (scaled by 1): y[0] counts the graph_add launches, eager and graph, so the check below fails
  // when a replayed launch ran more than once without its memory restored.
  float one = 1.0f;
  GT_CHECK(cudaMemcpy(x, &one, sizeof one, cudaMemcpyHostToDevice));

  // Eager launches: profiled like any other launch.
  graph_scale<<<grid, block, 0, s>>>(x, n, 1.0f);
  graph_add<<<grid, block, 0, s>>>(y, x, n);

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  GT_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  graph_scale<<<grid, block, 0, s>>>(x, n, 1.0f);
  graph_add<<<grid, block, 0, s>>>(y, x, n);
  GT_CHECK(cudaStreamEndCapture(s, &graph));
  GT_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < iters; ++i) GT_CHECK(cudaGraphLaunch(exec, s));
  GT_CHECK(cudaStreamSynchronize(s));

  float v = 0;
  GT_CHECK(cudaMemcpy(&v, y, sizeof v, cudaMemcpyDeviceToHost));
  std::printf("graph: 2 eager launches + %d graph launches of 2 kernel nodes, y[0] = %.0f\n", iters, v);
  GT_CHECK(cudaGraphExecDestroy(exec));
  GT_CHECK(cudaGraphDestroy(graph));
  GT_CHECK(cudaStreamDestroy(s));
  GT_CHECK(cudaFree(x));
  GT_CHECK(cudaFree(y));
  return v == float(1 + iters) ? 0 : 1;
}
