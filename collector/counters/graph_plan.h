// How the counters run replays a CUDA graph launch node by node. Pure: the driver side (range_profiler.cc)
// reads a graph's nodes and edges into GraphNodeInfo and edge lists; this file decides the order, whether the
// graph can be replayed at all, and which kernels cannot be told apart from another of the same name.
//
// Why node by node: kernel replay profiles one launch API call, and cudaGraphLaunch runs a graph's kernel
// nodes without one, so the counters run issues a graph's nodes itself, one launch per kernel node (as
// `ncu --graph-profiling node` does), then restores device memory and lets the app's own graph launch run.
// The two runs pair graph kernels by name and per-name ordinal (model.h, kGraphOrdinalBit): the timeline
// orders one graph launch's kernels by start time, the counters run by dependency. Both agree for kernels
// that depend on each other; two nodes of the same kernel with no path between them may run in either order,
// so such kernels are counted but not profiled (never guessed).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gt::counters {

enum class GraphNodeKind : uint8_t {
  kKernel,
  kMemcpy,
  kMemset,
  kNoOp,         // empty nodes, event record/wait: ordering only, nothing to redo when run serially
  kUnsupported,  // host callbacks, memory allocation, conditional, ...: the graph is not replayed
};

struct GraphNodeInfo {
  GraphNodeKind kind = GraphNodeKind::kNoOp;
  std::string kernel_name;  // kKernel: demangled, as the timeline names it
  std::string unsupported;  // kUnsupported: what the node is ("host node"), for the report
};

struct GraphPlan {
  std::vector<uint32_t> order;    // every node, dependencies first; ties keep node order
  std::vector<uint32_t> kernels;  // the kernel nodes, in `order`
  std::vector<char> ambiguous;    // per node: a kernel sharing its name with an unordered node
  std::string not_replayable;     // why the graph cannot be replayed node by node ("" = it can)
};

// `edges` are (from, to) node indices. A cycle or an out-of-range edge makes the graph not replayable (its
// kernels are still listed in node order so the run can count them).
GraphPlan PlanGraph(const std::vector<GraphNodeInfo>& nodes,
                    const std::vector<std::pair<uint32_t, uint32_t>>& edges);

}  // namespace gt::counters
