// The driver side of replaying a CUDA graph launch node by node (graph_plan.h says why and in what order):
// a catalog of the app's executable graphs, each read at instantiation into a clone of its source graph that
// the counters module keeps, and the re-issue of one node on a stream. Collector-only (CUDA driver types).
#pragma once

#include <cuda.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "counters/graph_plan.h"

namespace gt::inject {

// One node of a (flattened) graph, as the counters run issues it again.
struct GraphNodeLaunch {
  counters::GraphNodeInfo info;
  // kKernel: the node's parameters (the argument arrays belong to the clone, which the catalog keeps).
  CUfunction function = nullptr;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned dynamic_smem = 0;
  void** kernel_params = nullptr;
  void** extra = nullptr;
  unsigned cluster[3] = {0, 0, 0};  // 0 = no cluster launch
  bool cooperative = false;
  int registers = 0, static_smem = 0;
  CUDA_MEMCPY3D memcpy{};            // kMemcpy
  CUDA_MEMSET_NODE_PARAMS memset{};  // kMemset
};

struct GraphExec {
  CUgraph clone = nullptr;  // ours; child graphs are part of it
  std::vector<GraphNodeLaunch> nodes;
  counters::GraphPlan plan;
  std::string stale;  // set when the app changed node parameters after instantiation: not replayed
};

class GraphCatalog {
 public:
  ~GraphCatalog();
  // At a successful instantiation or whole-graph update of `exec` from `graph`. A graph that cannot be read
  // is kept with its reason in plan.not_replayable and no kernels, which the caller must treat as
  // uncountable.
  void Read(CUgraphExec exec, CUgraph graph);
  void MarkStale(CUgraphExec exec, const std::string& why);
  void Forget(CUgraphExec exec);
  const GraphExec* Find(CUgraphExec exec) const;

 private:
  std::map<CUgraphExec, std::unique_ptr<GraphExec>> execs_;
};

// Issues one kernel, memcpy or memset node on `stream` (no-op nodes return CUDA_SUCCESS). Kernels go through
// cuLaunchKernelEx with the node's cluster and cooperative attributes.
CUresult IssueNode(const GraphNodeLaunch& node, CUstream stream);
// The same kernel launch as a cuLaunchKernelEx config: `attrs` must outlive the launch (2 entries).
CUlaunchConfig KernelLaunchConfig(const GraphNodeLaunch& node, CUstream stream, CUlaunchAttribute* attrs);

}  // namespace gt::inject
