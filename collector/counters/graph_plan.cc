#include "counters/graph_plan.h"

#include <algorithm>
#include <map>
#include <queue>

namespace gt::counters {

GraphPlan PlanGraph(const std::vector<GraphNodeInfo>& nodes,
                    const std::vector<std::pair<uint32_t, uint32_t>>& edges) {
  GraphPlan plan;
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  plan.ambiguous.assign(n, 0);
  std::vector<std::vector<uint32_t>> out(n);
  std::vector<uint32_t> indegree(n, 0);
  for (const auto& [from, to] : edges) {
    if (from >= n || to >= n) {
      plan.not_replayable = "the graph has an edge to a node it does not list";
      continue;
    }
    out[from].push_back(to);
    ++indegree[to];
  }
  // Kahn's algorithm with the lowest ready index first: deterministic, and node order for independent nodes.
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
  for (uint32_t i = 0; i < n; ++i)
    if (!indegree[i]) ready.push(i);
  std::vector<uint32_t> position(n, UINT32_MAX);
  while (!ready.empty()) {
    uint32_t i = ready.top();
    ready.pop();
    position[i] = static_cast<uint32_t>(plan.order.size());
    plan.order.push_back(i);
    for (uint32_t j : out[i])
      if (--indegree[j] == 0) ready.push(j);
  }
  const bool cyclic = plan.order.size() != n;
  if (cyclic) {
    plan.not_replayable = "the graph's dependencies form a cycle";
    plan.order.clear();
    for (uint32_t i = 0; i < n; ++i) plan.order.push_back(i);
  }
  for (uint32_t i : plan.order)
    if (nodes[i].kind == GraphNodeKind::kKernel) plan.kernels.push_back(i);
  for (uint32_t i : plan.order)
    if (nodes[i].kind == GraphNodeKind::kUnsupported && plan.not_replayable.empty())
      plan.not_replayable = "the graph has a " + nodes[i].unsupported;
  if (cyclic) return plan;  // no order to reason about; not replayed anyway

  // Same-name kernels in order must each reach the next (reachability is transitive, so consecutive pairs
  // decide whether the whole group is ordered); a group that is not is ambiguous as a whole.
  std::map<std::string, std::vector<uint32_t>> by_name;  // kernels in `order`
  for (uint32_t i : plan.kernels) by_name[nodes[i].kernel_name].push_back(i);
  std::vector<uint32_t> seen(n, UINT32_MAX);  // BFS stamp
  uint32_t stamp = 0;
  auto reaches = [&](uint32_t from, uint32_t to) {
    ++stamp;
    std::vector<uint32_t> stack{from};
    seen[from] = stamp;
    while (!stack.empty()) {
      uint32_t i = stack.back();
      stack.pop_back();
      if (i == to) return true;
      for (uint32_t j : out[i])
        // A node after `to` in the order cannot lead back to it: prune.
        if (seen[j] != stamp && position[j] <= position[to]) {
          seen[j] = stamp;
          stack.push_back(j);
        }
    }
    return false;
  };
  for (const auto& [name, group] : by_name) {
    bool ordered = true;
    for (size_t k = 1; k < group.size() && ordered; ++k) ordered = reaches(group[k - 1], group[k]);
    if (!ordered)
      for (uint32_t i : group) plan.ambiguous[i] = 1;
  }
  return plan;
}

}  // namespace gt::counters
