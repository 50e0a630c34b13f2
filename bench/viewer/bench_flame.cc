// The flame graph of a range (gt/viewer/cpu_samples.h) on a trace with sampled CPU stacks: BuildFlameGraph
// (samples counted per stack, each distinct stack walked once) against a baseline in the same run that walks
// every sample's stack (its first version), over the whole trace and every thread (the Flame graph tab's
// widest request). Both graphs must agree path for path (samples of every call path).
//
//   bench_flame FILE.gtrace [--repeat N]   (default tests/data/cpu_h200_loader.gtrace, 5 repeats)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gt/viewer/cpu_samples.h"
#include "gt/viewer/load.h"

using namespace gt;
using namespace gt::viewer;

namespace {

// The per-sample walk (BuildFlameGraph's first version, before its depth-first reordering): every sample's
// stack followed from the outermost frame, one map lookup per frame.
std::vector<FlameNode> Baseline(const TraceModel& m, int64_t a, int64_t b) {
  const auto& c = m.cpu;
  std::vector<FlameNode> tree(1);
  std::map<std::tuple<uint32_t, StringId, uint8_t>, uint32_t> index;
  const size_t i0 = size_t(std::lower_bound(c.ts.begin(), c.ts.end(), a) - c.ts.begin());
  for (size_t i = i0; i < c.size() && c.ts[i] < b; ++i) {
    ++tree[0].samples;
    uint32_t at = 0;
    for (uint32_t n : StackNodes(m, c.stack[i])) {
      auto [it, fresh] = index.try_emplace({at, c.node_frame[n], c.node_kind[n]}, uint32_t(tree.size()));
      if (fresh) {
        FlameNode f;
        f.frame = c.node_frame[n], f.kind = c.node_kind[n], f.depth = tree[at].depth + 1, f.parent = at;
        tree.push_back(f);
      }
      at = it->second;
      ++tree[at].samples;
    }
    ++tree[at].self_samples;
  }
  return tree;
}

std::map<std::vector<std::pair<StringId, uint8_t>>, uint64_t> Paths(const std::vector<FlameNode>& g) {
  std::map<std::vector<std::pair<StringId, uint8_t>>, uint64_t> out;
  for (uint32_t n = 0; n < g.size(); ++n) {
    std::vector<std::pair<StringId, uint8_t>> path;
    for (uint32_t p : FlamePath(g, n)) path.push_back({g[p].frame, g[p].kind});
    out[path] = g[n].samples;
  }
  return out;
}

double Ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string file = "tests/data/cpu_h200_loader.gtrace";
  int repeat = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else
      file = argv[i];
  }
  auto loaded = LoadTraceFile(file);
  if (!loaded.ok()) {
    std::fprintf(stderr, "bench_flame: %s\n", loaded.status().message().c_str());
    return 1;
  }
  const TraceModel& m = **loaded;
  if (m.cpu.size() == 0) {
    std::fprintf(stderr, "bench_flame: %s has no CPU samples\n", file.c_str());
    return 1;
  }
  const int64_t a = m.cpu.ts.front(), b = m.cpu.ts.back() + 1;
  double best = 1e300, best_base = 1e300;
  std::vector<FlameNode> g;
  std::vector<FlameNode> base;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    g = BuildFlameGraph(m, a, b, {});
    best = std::min(best, Ms(t0));
    t0 = std::chrono::steady_clock::now();
    base = Baseline(m, a, b);
    best_base = std::min(best_base, Ms(t0));
  }
  const bool same = Paths(g) == Paths(base);
  std::printf(
      "%s: %zu samples, %zu graph nodes, %zu distinct stacks\n", file.c_str(), m.cpu.size(), g.size(),
      size_t(std::count_if(g.begin(), g.end(), [](const FlameNode& f) { return f.self_samples > 0; })));
  std::printf("BuildFlameGraph %.1f ms, per-sample walk %.1f ms (best of %d): %.1fx; graphs %s\n", best,
              best_base, repeat, best_base / best, same ? "identical" : "DIFFER");
  return same ? 0 : 1;
}
