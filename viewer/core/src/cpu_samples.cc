// Where sampled CPU threads were during a range (gt/viewer/cpu_samples.h).
#include "gt/viewer/cpu_samples.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace gt::viewer {
namespace {

using Cpu = TraceModel::CpuSamples;

// Samples of [start, end): the columns are sorted by time.
std::pair<size_t, size_t> SampleRange(const Cpu& c, int64_t start, int64_t end) {
  const size_t a = size_t(std::lower_bound(c.ts.begin(), c.ts.end(), start) - c.ts.begin());
  const size_t b = size_t(std::lower_bound(c.ts.begin() + a, c.ts.end(), end) - c.ts.begin());
  return {a, b};
}

// The innermost Python frame of a stack, else its innermost frame (0: none).
uint32_t AttributedNode(const Cpu& c, uint32_t leaf) {
  for (uint32_t n = leaf, guard = 0; n != 0 && guard < 4096; n = c.node_parent[n], ++guard)
    if (c.node_kind[n] == uint8_t(FrameKind::kPython)) return n;
  return leaf;
}

}  // namespace

std::vector<uint32_t> StackNodes(const TraceModel& model, uint32_t node) {
  std::vector<uint32_t> out;
  const Cpu& c = model.cpu;
  // Parents always precede their children (the builder refuses others), so this ends.
  for (uint32_t n = node; n != 0 && n < c.node_parent.size(); n = c.node_parent[n]) out.push_back(n);
  std::reverse(out.begin(), out.end());
  return out;
}

CpuRangeProfile ProfileCpuRange(const TraceModel& model, int64_t start_ns, int64_t end_ns,
                                std::span<const uint32_t> pids, std::span<const ThreadKey> threads,
                                size_t top_n) {
  CpuRangeProfile out;
  const Cpu& c = model.cpu;
  if (c.size() == 0 || end_ns <= start_ns) return out;
  const auto [a, b] = SampleRange(c, start_ns, end_ns);
  std::unordered_map<uint32_t, uint64_t> by_node;
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (size_t i = a; i < b; ++i) {
    if (!threads.empty()) {
      if (std::none_of(threads.begin(), threads.end(),
                       [&](const ThreadKey& t) { return t.pid == c.pid[i] && t.tid == c.tid[i]; }))
        continue;
    } else if (!pids.empty() && std::find(pids.begin(), pids.end(), c.pid[i]) == pids.end()) {
      continue;
    }
    ++out.samples;
    seen.insert({c.pid[i], c.tid[i]});
    const uint32_t n = c.stack[i] < c.node_parent.size() ? AttributedNode(c, c.stack[i]) : 0;
    if (n == 0)
      ++out.not_unwound;
    else
      ++by_node[n];
    if (n != 0 && c.node_kind[n] == uint8_t(FrameKind::kPython)) ++out.python_samples;
  }
  out.threads = seen.size();
  // Frames, not nodes: one function reached through two call paths is one line, its most sampled path shown.
  struct Agg {
    uint64_t samples = 0, best = 0;
    uint32_t best_node = 0;
  };
  std::map<std::pair<StringId, StringId>, Agg> by_frame;  // (frame, caller frame)
  const bool python_only = out.python_samples > 0;
  for (const auto& [node, count] : by_node) {
    if (python_only && c.node_kind[node] != uint8_t(FrameKind::kPython)) continue;
    const uint32_t parent = c.node_parent[node];
    Agg& g = by_frame[{c.node_frame[node], parent ? c.node_frame[parent] : 0}];
    g.samples += count;
    if (count > g.best || (count == g.best && node < g.best_node)) g.best = count, g.best_node = node;
  }
  std::vector<std::pair<uint64_t, uint32_t>> order;  // (samples, node) by samples desc, node asc
  for (const auto& [key, g] : by_frame) order.push_back({g.samples, g.best_node});
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
  for (size_t i = 0; i < order.size() && i < top_n; ++i) {
    const uint32_t node = order[i].second;
    HotFrame h;
    h.frame = model.Str(c.node_frame[node]);
    h.python = c.node_kind[node] == uint8_t(FrameKind::kPython);
    const uint32_t parent = c.node_parent[node];
    h.path = parent ? model.Str(c.node_frame[parent]) + " → " + h.frame : h.frame;
    h.samples = order[i].first;
    h.share = double(h.samples) / double(python_only ? out.python_samples : out.samples);
    out.hot.push_back(std::move(h));
  }
  return out;
}

std::vector<FlameNode> BuildFlameGraph(const TraceModel& model, int64_t start_ns, int64_t end_ns,
                                       std::span<const uint32_t> pids) {
  const Cpu& c = model.cpu;
  std::vector<FlameNode> tree(1);  // root
  std::vector<std::vector<uint32_t>> children(1);
  if (c.size() == 0 || end_ns <= start_ns) return tree;
  const auto [a, b] = SampleRange(c, start_ns, end_ns);
  // Paths are keyed by (parent tree node, frame, kind); the same frame from two processes merges.
  std::map<std::tuple<uint32_t, StringId, uint8_t>, uint32_t> index;
  for (size_t i = a; i < b; ++i) {
    if (!pids.empty() && std::find(pids.begin(), pids.end(), c.pid[i]) == pids.end()) continue;
    ++tree[0].samples;
    uint32_t at = 0;
    for (uint32_t n : StackNodes(model, c.stack[i])) {
      auto [it, fresh] = index.try_emplace({at, c.node_frame[n], c.node_kind[n]}, uint32_t(tree.size()));
      if (fresh) {
        FlameNode f;
        f.frame = c.node_frame[n], f.kind = c.node_kind[n], f.depth = tree[at].depth + 1, f.parent = at;
        tree.push_back(f);
        children.emplace_back();
        children[at].push_back(it->second);
      }
      at = it->second;
      ++tree[at].samples;
    }
    ++tree[at].self_samples;
  }
  // Depth-first order, heaviest child first, so a drawing walks it once left to right.
  std::vector<FlameNode> out;
  out.reserve(tree.size());
  std::vector<uint32_t> new_index(tree.size());
  std::vector<std::pair<uint32_t, uint32_t>> stack{{0, 0}};  // (old node, new parent)
  while (!stack.empty()) {
    auto [old, parent] = stack.back();
    stack.pop_back();
    new_index[old] = uint32_t(out.size());
    out.push_back(tree[old]);
    out.back().parent = old == 0 ? 0 : parent;
    auto kids = children[old];
    std::sort(kids.begin(), kids.end(), [&](uint32_t x, uint32_t y) {
      return tree[x].samples != tree[y].samples ? tree[x].samples < tree[y].samples : x > y;
    });  // pushed lightest first: the heaviest pops first
    for (uint32_t k : kids) stack.push_back({k, new_index[old]});
  }
  return out;
}

}  // namespace gt::viewer
