// Sampled CPU stacks (format 1.4) into the model: per-process node ids become one global node table, samples
// are sorted by time. Part of ModelBuilder::Impl::Finish (builder_finish.cc).
#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "builder_internal.h"

namespace gt::viewer {

void ModelBuilder::Impl::BuildCpuSamples() {
  TraceModel::CpuSamples& C = m->cpu;
  if (cpu_nodes.empty() && cpu_samples.empty()) return;
  // A process's nodes may arrive in any chunk order (a parent is always written before or with its children,
  // but merged traces and damaged files promise nothing): map ids first, then parents.
  const auto key = [](uint32_t pid, uint32_t node) { return (uint64_t(pid) << 32) | node; };
  std::unordered_map<uint64_t, uint32_t> global;
  global.reserve(cpu_nodes.size());
  uint64_t duplicates = 0, orphans = 0, unknown = 0;
  for (const CpuStackNodeRecord& n : cpu_nodes) {
    if (n.node == 0 || !global.emplace(key(n.pid, n.node), uint32_t(C.node_parent.size())).second) {
      ++duplicates;
      continue;
    }
    C.node_parent.push_back(0);  // resolved below
    C.node_frame.push_back(n.frame);
    C.node_kind.push_back(n.kind);
  }
  for (const CpuStackNodeRecord& n : cpu_nodes) {
    auto self = global.find(key(n.pid, n.node));
    if (n.parent == 0 || self == global.end() || C.node_frame[self->second] != n.frame) continue;
    auto parent = global.find(key(n.pid, n.parent));
    if (parent == global.end() || parent->second >= self->second) {
      ++orphans;  // kept as an outermost frame: a node may only point at one made before it (no cycles)
      continue;
    }
    C.node_parent[self->second] = parent->second;
  }
  std::stable_sort(cpu_samples.begin(), cpu_samples.end(),
                   [](const CpuSampleRecord& a, const CpuSampleRecord& b) {
                     return std::tie(a.timestamp, a.pid, a.tid) < std::tie(b.timestamp, b.pid, b.tid);
                   });
  const size_t n = cpu_samples.size();
  C.ts.resize(n), C.pid.resize(n), C.tid.resize(n), C.stack.resize(n), C.flags.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const CpuSampleRecord& s = cpu_samples[i];
    uint32_t stack = 0;
    if (s.stack != 0) {
      auto it = global.find(key(s.pid, s.stack));
      if (it != global.end())
        stack = it->second;
      else
        ++unknown;
    }
    C.ts[i] = s.timestamp, C.pid[i] = s.pid, C.tid[i] = s.tid, C.stack[i] = stack, C.flags[i] = s.flags;
  }
  if (duplicates)
    builder_losses["cpu_stack_nodes_duplicate"] = {
        "cpu_stack_nodes_duplicate", uint8_t(Severity::kWarning), 0, duplicates,
        "sampled stack nodes with id 0 or an id seen before (ignored)"};
  if (orphans)
    builder_losses["cpu_stack_nodes_orphan"] = {
        "cpu_stack_nodes_orphan", uint8_t(Severity::kWarning), 0, orphans,
        "sampled stack nodes whose caller is missing (shown as outermost frames)"};
  if (unknown)
    builder_losses["cpu_samples_unknown_stack"] = {
        "cpu_samples_unknown_stack", uint8_t(Severity::kWarning), 0, unknown,
        "CPU samples naming a stack that is not in the trace (shown as not unwound)"};
  std::vector<CpuStackNodeRecord>().swap(cpu_nodes);
  std::vector<CpuSampleRecord>().swap(cpu_samples);
}

}  // namespace gt::viewer
