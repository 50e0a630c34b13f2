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

// Whether sample i is one of `threads` (else of `pids`; both empty: every sample counts).
bool Selected(const Cpu& c, size_t i, std::span<const uint32_t> pids, std::span<const ThreadKey> threads) {
  if (!threads.empty())
    return std::any_of(threads.begin(), threads.end(),
                       [&](const ThreadKey& t) { return t.pid == c.pid[i] && t.tid == c.tid[i]; });
  return pids.empty() || std::find(pids.begin(), pids.end(), c.pid[i]) != pids.end();
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
    if (!Selected(c, i, pids, threads)) continue;
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
                                       std::span<const uint32_t> pids, std::span<const ThreadKey> threads) {
  const Cpu& c = model.cpu;
  std::vector<FlameNode> tree(1);  // root
  std::vector<std::vector<uint32_t>> children(1);
  if (c.size() == 0 || end_ns <= start_ns) return tree;
  const auto [a, b] = SampleRange(c, start_ns, end_ns);
  // Samples repeat stacks (a thread parked in a wait, an idle repeat): count them per stack node first, then
  // walk each distinct stack once (a 10x saving on the H200 fixtures' ranges).
  std::unordered_map<uint32_t, uint64_t> per_stack;
  for (size_t i = a; i < b; ++i)
    if (Selected(c, i, pids, threads)) ++per_stack[c.stack[i]];
  std::vector<std::pair<uint32_t, uint64_t>> stacks(per_stack.begin(), per_stack.end());
  std::sort(stacks.begin(), stacks.end());  // a deterministic order of creation (children's tie-break)
  // Paths are keyed by (parent tree node, frame, kind); the same frame from two processes merges.
  std::map<std::tuple<uint32_t, StringId, uint8_t>, uint32_t> index;
  for (const auto& [stack, count] : stacks) {
    tree[0].samples += count;
    uint32_t at = 0;
    for (uint32_t n : StackNodes(model, stack)) {  // none for 0 or an unknown node: the root's own
      auto [it, fresh] = index.try_emplace({at, c.node_frame[n], c.node_kind[n]}, uint32_t(tree.size()));
      if (fresh) {
        FlameNode f;
        f.frame = c.node_frame[n], f.kind = c.node_kind[n], f.depth = tree[at].depth + 1, f.parent = at;
        tree.push_back(f);
        children.emplace_back();
        children[at].push_back(it->second);
      }
      at = it->second;
      tree[at].samples += count;
    }
    tree[at].self_samples += count;
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

std::vector<FlameRect> LayoutFlameGraph(std::span<const FlameNode> graph, uint32_t focus, double min_width) {
  std::vector<FlameRect> out;
  if (graph.empty()) return out;
  if (focus >= graph.size()) focus = 0;
  const double total = double(graph[focus].samples);
  // The graph is in depth-first order with parents first, so one pass places every node after its parent.
  // where[n]: n's index in `out` (or none); next[n]: the x where n's next child starts (the focus's: 0).
  constexpr uint32_t kOut = UINT32_MAX;
  std::vector<uint32_t> where(graph.size(), kOut);
  std::vector<double> next(graph.size(), 0);
  std::vector<uint32_t> chain;  // the focus and what is above it, focus first
  for (uint32_t n = focus;; n = graph[n].parent) {
    chain.push_back(n);
    if (n == 0 || graph[n].parent >= n) break;  // parents precede children: a graph of ours ends at 0
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    where[*it] = uint32_t(out.size());
    out.push_back({*it, graph[*it].depth, 0, 1, *it != focus});
  }
  if (total <= 0) return out;
  for (uint32_t n = focus + 1; n < graph.size(); ++n) {
    const uint32_t p = graph[n].parent;
    if (p >= n || where[p] == kOut || (p != focus && out[where[p]].above_focus))
      continue;  // not under the focus
    const double w = double(graph[n].samples) / total;
    const double x0 = next[p];
    next[p] = x0 + w;
    if (w < min_width || w <= 0) continue;
    where[n] = uint32_t(out.size());
    next[n] = x0;
    out.push_back({n, graph[n].depth, x0, x0 + w, false});
  }
  return out;
}

FrameParts SplitFrame(std::string_view frame, uint8_t kind) {
  FrameParts p;
  if (kind == uint8_t(FrameKind::kPython)) {
    const size_t line = frame.rfind(':');
    const size_t fn =
        line == std::string_view::npos || line == 0 ? std::string_view::npos : frame.rfind(':', line - 1);
    if (fn != std::string_view::npos) {
      p.function = std::string(frame.substr(fn + 1, line - fn - 1));
      p.location = std::string(frame.substr(0, fn)) + std::string(frame.substr(line));
      return p;
    }
  } else if (const size_t bang = frame.find('!'); bang != std::string_view::npos) {
    p.function = std::string(frame.substr(bang + 1));
    p.location = std::string(frame.substr(0, bang));
    return p;
  }
  p.function = std::string(frame);
  return p;
}

std::vector<uint32_t> FlamePath(std::span<const FlameNode> graph, uint32_t node) {
  std::vector<uint32_t> out;
  // Parents precede their children in the graph, so the walk ends at the root.
  for (uint32_t n = node; n != 0 && n < graph.size() && graph[n].parent < n; n = graph[n].parent)
    out.push_back(n);
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace gt::viewer
