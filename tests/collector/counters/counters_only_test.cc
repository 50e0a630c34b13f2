// gcollect --counters-only without a GPU: a synthetic counters run (what the injection's counters module
// writes: kernel activity records without timestamps for the replayed launches, real ones for the rest, the
// L2 flush kernel, graph kernels, per-launch metrics keyed by name + ordinal) goes through
// BuildCountersOnlyTrace, is written as a .gtrace and opened by the viewer core: kernels on the timeline with
// their measured durations, counters joined by correlation id (graph kernels by graph ordinal), roofline
// placement, and the "no timeline" and "not profiled: graph launch" notes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "counters/join.h"
#include "counters/metric_sets.h"
#include "counters/selection.h"
#include "gt/counter_vocab.h"
#include "gt/reader.h"
#include "gt/viewer/analysis.h"
#include "gt/viewer/load.h"
#include "gt/writer.h"
#include "launcher/launcher.h"

using namespace gt;
using namespace gt::counters;

namespace {

StringId Intern(TraceData& t, const std::string& s) {
  for (size_t i = 0; i < t.strings.size(); ++i)
    if (t.strings[i] == s) return static_cast<StringId>(i);
  t.strings.push_back(s);
  return static_cast<StringId>(t.strings.size() - 1);
}

void Kernel(TraceData& t, const char* name, uint32_t corr, int64_t start, int64_t end, uint32_t graph_id = 0,
            uint32_t stream = 7) {
  KernelRecord k;
  k.pid = 42;
  k.name = Intern(t, name);
  k.correlation_id = corr;
  k.stream_id = stream;
  k.grid = {264, 1, 1};
  k.block = {256, 1, 1};
  k.start = start;
  k.end = end;
  k.graph_id = graph_id;
  t.kernels.push_back(k);
}

void Metric(TraceData& t, const char* kernel, uint32_t ordinal, const std::string& metric, double v) {
  KernelMetricRecord m;
  m.pid = 42;
  m.kernel_name = Intern(t, kernel);
  m.launch_ordinal = ordinal;
  m.metric = Intern(t, metric);
  m.value = v;
  t.kernel_metrics.push_back(m);
}

// A memory-bound launch: `bytes` of DRAM traffic in `ns`, with the peaks the roofline needs.
void Launch(TraceData& t, const char* kernel, uint32_t ordinal, double ns, double bytes) {
  Metric(t, kernel, ordinal, gt::metric::kTime, ns);
  Metric(t, kernel, ordinal, gt::metric::kDramBytesRead, bytes / 2);
  Metric(t, kernel, ordinal, gt::metric::kDramBytesWrite, bytes / 2);
  Metric(t, kernel, ordinal, gt::metric::kFfma, bytes / 64);
  Metric(t, kernel, ordinal, gt::metric::kSmClock, 1.755e9);
  Metric(t, kernel, ordinal, gt::metric::kDramClock, 2.619e9);
  Metric(t, kernel, ordinal, gt::metric::kDramBytesPeak, 1831.9);
  Metric(t, kernel, ordinal, gt::metric::kFfmaPeak, 16896);
  Metric(t, kernel, ordinal, launch_metric::kGridSize, 264);
  Metric(t, kernel, ordinal, launch_metric::kBlockSize, 256);
}

// What the counters run of the kernels/graph workload records (2 eager launches profiled, a graph launched
// twice, one launch beyond the per-name limit, the flush kernel before each profiled launch).
TraceData CountersRun() {
  TraceData t;
  t.strings = {""};
  ProcessRecord p;
  p.pid = 42;
  p.name = Intern(t, "gt_k_graph");
  p.start_ns = 1'000'000;
  t.processes.push_back(p);
  DeviceRecord d;
  d.device_id = 0;
  d.pid = 42;
  d.sm_count = 132;
  d.cc_major = 9;
  d.name = Intern(t, "NVIDIA H200");
  t.devices.push_back(d);
  Kernel(t, kL2FlushKernel, 10, 5'000'000, 5'050'000);
  Kernel(t, "graph_scale", 11, 0, 0);  // replayed: no timestamps
  Kernel(t, kL2FlushKernel, 12, 6'000'000, 6'050'000);
  Kernel(t, "graph_add", 13, 0, 0);
  Kernel(t, "graph_scale", 20, 9'000'000, 9'010'000, /*graph_id=*/3);
  Kernel(t, "graph_add", 20, 9'010'000, 9'020'000, 3);
  Kernel(t, "graph_scale", 21, 9'100'000, 9'110'000, 3);
  Kernel(t, "graph_add", 21, 9'110'000, 9'120'000, 3);
  Kernel(t, "graph_add", 30, 9'500'000, 9'510'000);  // a later eager launch, not selected: runs unprofiled
  Launch(t, "graph_scale", 0, 12'345, 128e6);
  Launch(t, "graph_add", 0, 23'456, 192e6);
  // The first graph launch was replayed node by node and both of its kernels profiled (graph ordinals); the
  // second graph's kernels were counted and not profiled, as if the graph could not be replayed.
  Launch(t, "graph_scale", kGraphOrdinalBit | 0, 11'111, 128e6);
  Launch(t, "graph_add", kGraphOrdinalBit | 0, 22'222, 192e6);
  LossRecord loss;
  loss.name = Intern(t, kNotProfiledLoss);
  loss.severity = static_cast<uint8_t>(Severity::kWarning);
  loss.pid = 42;
  loss.count = 1;
  loss.detail = Intern(t, "not profiled: graph launch: graph_add (1 launch): the graph has a host node");
  t.losses.push_back(loss);
  return t;
}

}  // namespace

TEST_CASE("graph kernels are counted apart from direct launches", "[counters][graph]") {
  TraceData t = CountersRun();
  auto ord = KernelLaunchOrdinals(t);
  const uint32_t g = kGraphOrdinalBit;
  // flush#0, scale#0, flush#1, add#0, graph scale#0 add#0 scale#1 add#1, add#1
  CHECK(ord == std::vector<uint32_t>{0, 0, 1, 0, g | 0, g | 0, g | 1, g | 1, 1});
  CHECK(LaunchLabel("graph_add", g | 1) == "graph_add graph launch 1");
  CHECK(LaunchLabel("graph_add", 1) == "graph_add launch 1");
  CHECK(IsGraphOrdinal(g | 5));
  CHECK_FALSE(IsGraphOrdinal(5));
  CHECK_FALSE(IsGraphOrdinal(kNone));
  CHECK(OrdinalIndex(g | 5) == 5);
}

TEST_CASE("the join pairs graph kernels by graph ordinal and reports the ones not profiled",
          "[counters][graph]") {
  TraceData timeline;
  timeline.strings = {""};
  ProcessRecord p;
  p.pid = 7;
  p.name = Intern(timeline, "gt_k_graph");
  p.start_ns = 50;
  timeline.processes.push_back(p);
  // Timeline: eager scale, eager add, then 2 graph launches (correlation ids 9 and 10).
  auto add = [&](const char* name, uint32_t corr, int64_t start, uint32_t graph) {
    KernelRecord k;
    k.pid = 7;
    k.name = Intern(timeline, name);
    k.correlation_id = corr;
    k.grid = {264, 1, 1};
    k.block = {256, 1, 1};
    k.start = start;
    k.end = start + 1000;
    k.graph_id = graph;
    timeline.kernels.push_back(k);
  };
  add("graph_scale", 5, 100, 0);
  add("graph_add", 6, 200, 0);
  add("graph_add", 9, 400, 3);  // listed out of order: start time decides within a graph launch
  add("graph_scale", 9, 300, 3);
  add("graph_scale", 10, 500, 3);
  add("graph_add", 10, 600, 3);
  TraceData ct = CountersRun();
  JoinReport r = JoinCountersIntoTimeline(timeline, ct);
  CHECK(r.profiled_launches == 4);
  CHECK(r.matched_launches == 4);
  CHECK(r.unmatched_launches == 0);
  CHECK(r.graph_kernels == 1);
  REQUIRE(r.not_profiled.size() == 1);
  CHECK(r.not_profiled[0] == "not profiled: graph launch: graph_add (1 launch): the graph has a host node");
  CHECK(r.Summary().find("1 graph-launched kernels not profiled") != std::string::npos);
  // Eager counters on the eager launches, graph ordinal 0 on the first graph launch (correlation id 9).
  std::map<std::pair<std::string, uint32_t>, double> duration;  // (kernel, correlation id) -> ns
  for (const auto& m : timeline.kernel_metrics)
    if (timeline.Str(m.metric) == gt::metric::kTime)
      duration[{timeline.Str(m.kernel_name), m.correlation_id}] = m.value;
  CHECK(duration == std::map<std::pair<std::string, uint32_t>, double>{{{"graph_scale", 5}, 12'345},
                                                                       {{"graph_add", 6}, 23'456},
                                                                       {{"graph_scale", 9}, 11'111},
                                                                       {{"graph_add", 9}, 22'222}});
  int graph_losses = 0;
  for (const auto& l : timeline.losses)
    if (timeline.Str(l.name) == kNotProfiledLoss) {
      ++graph_losses;
      CHECK(l.pid == 7);  // the timeline's pid
    }
  CHECK(graph_losses == 1);
  // A second counters run (--cache-control all) does not report the same graph kernels again.
  JoinReport again = JoinCountersIntoTimeline(timeline, ct, JoinMode::kSupplement);
  CHECK(again.not_profiled.empty());
  graph_losses = 0;
  for (const auto& l : timeline.losses) graph_losses += timeline.Str(l.name) == kNotProfiledLoss;
  CHECK(graph_losses == 1);
}

TEST_CASE("same-name kernels of one graph launch pair in start order", "[counters][graph]") {
  TraceData timeline;
  timeline.strings = {""};
  ProcessRecord p;
  p.pid = 7;
  p.name = Intern(timeline, "app");
  timeline.processes.push_back(p);
  // One graph launch runs `layer` twice (the second waits for the first), with different grids.
  for (auto [start, grid] : {std::pair<int64_t, uint32_t>{900, 64}, {100, 32}}) {
    KernelRecord k;
    k.pid = 7;
    k.name = Intern(timeline, "layer");
    k.correlation_id = 4;
    k.grid = {grid, 1, 1};
    k.start = start;
    k.end = start + 50;
    k.graph_id = 1;
    timeline.kernels.push_back(k);
  }
  TraceData ct;
  ct.strings = {""};
  ProcessRecord q = p;
  q.name = Intern(ct, "app");
  ct.processes.push_back(q);
  KernelRecord k;  // the counters run's own record of the graph launch: what pairs the processes
  k.pid = 7;
  k.name = Intern(ct, "layer");
  k.graph_id = 1;
  ct.kernels.push_back(k);
  auto metric = [&](uint32_t ordinal, const char* name, double v) {
    KernelMetricRecord m;
    m.pid = 7;
    m.kernel_name = Intern(ct, "layer");
    m.launch_ordinal = ordinal;
    m.metric = Intern(ct, name);
    m.value = v;
    ct.kernel_metrics.push_back(m);
  };
  metric(kGraphOrdinalBit | 0, launch_metric::kGridSize, 32);  // dependency order: the 32-block one first
  metric(kGraphOrdinalBit | 1, launch_metric::kGridSize, 64);
  JoinReport r = JoinCountersIntoTimeline(timeline, ct);
  INFO(r.Summary() << (r.problems.empty() ? "" : ": " + r.problems[0]));
  CHECK(r.matched_launches == 2);
  CHECK(r.unmatched_launches == 0);
  // Swapped grids would mean the earlier kernel got the later one's counters: the shape check refuses that.
  metric(kGraphOrdinalBit | 2, launch_metric::kGridSize, 64);
  TraceData timeline2 = timeline;
  timeline2.kernel_metrics.clear();
  JoinReport r2 = JoinCountersIntoTimeline(timeline2, ct);
  CHECK(r2.unmatched_launches == 1);
  REQUIRE_FALSE(r2.problems.empty());
  CHECK(r2.problems[0] ==
        "layer graph launch 2: the timeline run has 2 graph-launched launches of this kernel");
}

TEST_CASE("counters-only trace: profiled kernels end to end, counters joined, the viewer opens it",
          "[counters][counters_only]") {
  TraceData t = CountersRun();
  JoinReport r = BuildCountersOnlyTrace(t);
  CHECK(r.profiled_launches == 4);
  CHECK(r.matched_launches == 4);
  CHECK(r.unmatched_launches == 0);
  CHECK(r.graph_kernels == 1);

  // Only the four profiled launches stay: launch order, measured durations, no gaps, from the process start.
  REQUIRE(t.kernels.size() == 4);
  const char* names[] = {"graph_scale", "graph_add", "graph_scale", "graph_add"};
  const int64_t durations[] = {12'345, 23'456, 11'111, 22'222};
  for (size_t i = 0; i < 4; ++i) {
    CHECK(t.Str(t.kernels[i].name) == names[i]);
    CHECK(t.kernels[i].start == (i ? t.kernels[i - 1].end : 1'000'000));
    CHECK(t.kernels[i].end - t.kernels[i].start == durations[i]);
  }
  for (const auto& m : t.kernel_metrics) {
    const bool graph = IsGraphOrdinal(m.launch_ordinal);
    CHECK(m.correlation_id == (graph ? 20u : t.Str(m.kernel_name) == "graph_scale" ? 11u : 13u));
  }
  const std::string* timeline = t.metadata.Find("timeline");
  REQUIRE(timeline);
  CHECK(timeline->rfind("none: counters only", 0) == 0);
  // Peaks from the counters, as in the joined trace.
  CHECK(t.devices[0].dram_bandwidth == Approx(1831.9 * 2.619e9));

  // Through the file format and the viewer's loader.
  std::string bytes;
  auto writer = TraceWriter::Create(MakeStringSink(&bytes));
  REQUIRE(writer.ok());
  REQUIRE(WriteTraceData(t, **writer).ok());
  REQUIRE((*writer)->Finish().ok());
  auto model = viewer::LoadTrace(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  REQUIRE(model.ok());
  const viewer::TraceModel& m = **model;
  uint64_t kernels = 0;
  for (const auto& lane : m.lanes)
    for (size_t i = 0; i < lane.start.size(); ++i) {
      if (m.Kind({static_cast<viewer::LaneId>(&lane - m.lanes.data()), static_cast<uint32_t>(i)}) !=
          viewer::EventKind::kKernel)
        continue;
      ++kernels;
      CHECK(
          (lane.dur[i] == 12'345 || lane.dur[i] == 23'456 || lane.dur[i] == 11'111 || lane.dur[i] == 22'222));
      CHECK((lane.aux[i] == 11 || lane.aux[i] == 13 ||
             lane.aux[i] == 20));  // correlation ids the counters carry
    }
  CHECK(kernels == 4);
  auto has_loss = [&](const char* name, const char* text) {
    return std::any_of(m.losses.begin(), m.losses.end(), [&](const viewer::LossStat& l) {
      return l.name == name && l.detail.find(text) != std::string::npos;
    });
  };
  CHECK(has_loss("counters_only", "gaps, overlap and host activity were not measured"));
  CHECK(has_loss("counters_only", "3 unprofiled launches are not in this trace"));
  CHECK(
      has_loss("counters_not_profiled", "not profiled: graph launch: graph_add (1 launch): the graph has a"));

  // The details panel's analysis and the roofline work on it.
  TraceData back;
  REQUIRE(
      ReadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), back)
          .ok());
  std::vector<KernelCounters> launches = GroupKernelCounters(back);
  REQUIRE(launches.size() == 4);
  std::vector<KernelAnalysis> analyses;
  for (const auto& c : launches) {
    CHECK(c.Get(gt::metric::kTime) > 0);
    analyses.push_back(AnalyzeKernel(c, back.devices[0], LaunchShapeOf(c)));
  }
  RooflineModel roof = BuildRoofline(back.devices[0]);
  CHECK_FALSE(roof.ceilings.empty());
  auto points = PlaceOnRoofline(roof, analyses, MemoryLevel::kDram);
  CHECK(points.size() == 4);
}

TEST_CASE("gcollect --counters-only and --cache-control flags", "[counters][options]") {
  using gt::launcher::ParseOptions;
  auto o = ParseOptions({"--counters-only", "--", "./app"});
  REQUIRE(o.ok());
  CHECK(o->counters_only);
  CHECK(o->counter_sets == kDefaultSets);  // implies --counters
  CHECK(o->cache_control_all);             // as ncu: the L2 flushed before every replay pass (own replay)
  o = ParseOptions({"--counters=roofline", "--counters-only", "--cache-control", "all", "./app"});
  REQUIRE(o.ok());
  CHECK(o->counter_sets == kSetRoofline);
  CHECK(o->cache_control_all);
  o = ParseOptions({"--counters", "--cache-control=none", "./app"});
  REQUIRE(o.ok());
  CHECK_FALSE(o->cache_control_all);
  CHECK_FALSE(o->counters_only);
  CHECK_FALSE(ParseOptions({"--counters", "--cache-control=some", "./app"}).ok());
  CHECK_FALSE(ParseOptions({"--cache-control=none", "./app"}).ok());  // needs --counters
  CHECK_FALSE(ParseOptions({"--counters-only=1", "./app"}).ok());
  CHECK_FALSE(ParseOptions({"--counters-only", "--duration", "2", "./app"}).ok());  // no timeline to cut
  CHECK_FALSE(ParseOptions({"--counters-only", "--pc-sampling", "./app"}).ok());    // rides the timeline run
  CHECK(gt::launcher::UsageText().find("--counters-only") != std::string::npos);
}

TEST_CASE("the counters run's environment carries the cache choice", "[counters][options]") {
  CountersOptions o;
  o.sets = kDefaultSets;
  o.flush_caches = true;
  std::vector<std::pair<std::string, std::string>> env;
  CountersOptionsToEnv(
      o,
      [](void* ctx, const char* n, const char* v) {
        static_cast<std::vector<std::pair<std::string, std::string>>*>(ctx)->push_back({n, v});
      },
      &env);
  auto get = [](void* ctx, const char* n) -> const char* {
    for (const auto& [k, v] : *static_cast<std::vector<std::pair<std::string, std::string>>*>(ctx))
      if (k == n) return v.c_str();
    return nullptr;
  };
  auto back = CountersOptionsFromEnv(get, &env);
  REQUIRE(back.ok());
  CHECK(back->flush_caches);
  for (auto& [k, v] : env)
    if (k == "GTRACE_COUNTERS_CACHE") v = "sometimes";
  CHECK_FALSE(CountersOptionsFromEnv(get, &env).ok());
}

#ifdef GT_COUNTERS_ONLY_FIXTURE
// The real thing: `gcollect --counters-only -- gt_k_graph --iters=3` on the H200 (tests/data/README.md): 2
// direct launches and 3 graph launches of 2 kernel nodes, every one profiled (graph launches replayed node by
// node).
TEST_CASE("a real counters-only trace from the H200 opens in the viewer with its counters",
          "[counters][fixture]") {
  auto model = viewer::LoadTraceFile(GT_COUNTERS_ONLY_FIXTURE);
  REQUIRE(model.ok());
  const viewer::TraceModel& m = **model;
  REQUIRE(m.metadata.Find("timeline"));
  CHECK(m.metadata.Find("timeline")->rfind("none: counters only", 0) == 0);
  // Eight profiled launches on the timeline, each as long as its measured gpu__time_duration.sum, and every
  // counter record pointing at one of them by correlation id and name (a graph launch's kernels share its
  // id).
  std::map<std::pair<uint32_t, std::string>, int64_t> kernel_dur;  // (correlation id, name) -> duration
  for (viewer::LaneId l = 0; l < m.lanes.size(); ++l)
    for (uint32_t i = 0; i < m.lanes[l].start.size(); ++i)
      if (m.Kind({l, i}) == viewer::EventKind::kKernel)
        kernel_dur[{m.CorrelationId({l, i}), m.Str(m.Name({l, i}))}] = m.End({l, i}) - m.Start({l, i});
  REQUIRE(kernel_dur.size() == 8);
  int durations = 0, graph = 0;
  for (const auto& r : m.kernel_metrics) {
    const std::pair<uint32_t, std::string> key{r.correlation_id, m.Str(r.kernel_name)};
    REQUIRE(kernel_dur.count(key));
    if (m.Str(r.metric) == gt::metric::kTime) {
      CHECK(double(kernel_dur[key]) == Approx(r.value).margin(1));
      ++durations;
      graph += IsGraphOrdinal(r.launch_ordinal);
    }
  }
  CHECK(durations == 8);
  CHECK(graph == 6);
  for (const auto& l : m.losses) CHECK(l.name != "counters_not_profiled");
  // The details panel's analysis: a verdict for every launch, direct or from a graph.
  std::vector<KernelCounters> launches = GroupKernelCounters(
      m.kernel_metrics, m.stall_samples, [&](StringId id) -> std::string_view { return m.Str(id); });
  REQUIRE(launches.size() == 8);
  REQUIRE_FALSE(m.devices.empty());
  for (const auto& c : launches) {
    KernelAnalysis a = AnalyzeKernel(c, m.devices.front(), LaunchShapeOf(c));
    INFO(c.kernel_name << ": " << a.verdict);
    CHECK_FALSE(a.verdict.empty());
  }
}
#endif
