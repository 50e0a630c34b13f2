// Against a real PyTorch CUDA-graph trace from the H200 (tests/data/counters_torch_graph_h200.gtrace:
// `gcollect --counters -- python3 tests/collector/gpu/torch_cuda_graph.py`): an MLP captured with
// torch.cuda.graph and replayed, whose graph kernels the counters run profiled by replaying each graph launch
// node by node. Checks the join by graph ordinal and the viewer's mapping from a timeline kernel to its
// profiled launch.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "gt/counter_vocab.h"
#include "gt/viewer/analysis.h"
#include "gt/viewer/load.h"
#include "gt/viewer/profiled.h"

using namespace gt;

namespace {

const viewer::TraceModel& Model() {
  static std::unique_ptr<viewer::TraceModel> m = [] {
    auto model = viewer::LoadTraceFile(GT_GRAPH_FIXTURE);
    REQUIRE(model.ok());
    return std::move(*model);
  }();
  return *m;
}

}  // namespace

TEST_CASE("graph kernels of a real PyTorch CUDA graph carry their own counters", "[graph_fixture]") {
  const viewer::TraceModel& m = Model();
  std::vector<KernelCounters> launches = GroupKernelCounters(
      m.kernel_metrics, m.stall_samples, [&](StringId id) -> std::string_view { return m.Str(id); });
  size_t graph_launches = 0;
  std::set<std::string> graph_kernels;
  for (const auto& c : launches)
    if (IsGraphOrdinal(c.launch_ordinal)) {
      ++graph_launches;
      graph_kernels.insert(c.kernel_name);
      CHECK(c.correlation_id != 0);
      CHECK(c.Get(gt::metric::kTime) > 0);
    }
  // 7 kernels per replay (3 GEMMs and their epilogues, GELUs, the state update), first 3 replays profiled.
  CHECK(graph_launches >= 15);
  CHECK(graph_kernels.size() >= 5);
  CHECK(launches.size() > graph_launches);  // the eager runs of the same model, counted apart

  // Every profiled graph launch is a kernel event of the timeline: LaunchOf (what the details panel uses)
  // finds each exactly once.
  const viewer::ProfiledKernels p = viewer::AnalyzeProfiledKernels(m);
  REQUIRE(p.launches.size() == launches.size());
  std::map<size_t, int> found;  // launch index -> events mapped to it
  size_t graph_events = 0;
  for (viewer::LaneId l = 0; l < m.lanes.size(); ++l)
    for (uint32_t i = 0; i < m.lanes[l].size(); ++i) {
      size_t idx = p.LaunchOf({l, i});
      if (idx == SIZE_MAX) continue;
      ++found[idx];
      graph_events += IsGraphOrdinal(launches[idx].launch_ordinal);
    }
  CHECK(graph_events == graph_launches);
  for (const auto& [idx, n] : found) CHECK(n == 1);
  CHECK(found.size() == launches.size());
  CHECK(LaunchOrdinalLabel(kGraphOrdinalBit | 2) == "graph launch 2");
  CHECK(LaunchOrdinalLabel(2) == "launch 2");

  // Nothing unmatched, nothing dropped for being in a graph; the counters run says how many graph launches it
  // replayed.
  bool replayed = false;
  for (const auto& loss : m.losses) {
    CHECK(loss.name != "counters_unmatched");
    CHECK(loss.name != "counters_not_profiled");
    if (loss.name == "counters_graph_launches")
      replayed = loss.detail.find("replayed node by node") != std::string::npos;
  }
  CHECK(replayed);

  // The analysis gives every graph kernel a verdict; the GEMMs are placed on the roofline with FLOPs.
  REQUIRE_FALSE(m.devices.empty());
  int gemms = 0;
  for (const auto& c : launches) {
    if (!IsGraphOrdinal(c.launch_ordinal)) continue;
    KernelAnalysis a = AnalyzeKernel(c, m.devices.front(), LaunchShapeOf(c));
    INFO(c.kernel_name << ": " << a.verdict);
    CHECK_FALSE(a.verdict.empty());
    if (c.kernel_name.find("gemm") != std::string::npos) {
      ++gemms;
      CHECK(c.Get(gt::metric::kFfma) > 0);
    }
  }
  CHECK(gemms >= 3);
}
