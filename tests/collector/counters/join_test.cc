// The two-run join: timeline run kernels x counters run metrics -> matched / unmatched, reported not guessed.
#include <catch2/catch.hpp>
#include <map>

#include "counters/join.h"
#include "counters/metric_sets.h"
#include "gt/counter_vocab.h"

using namespace gt;
using namespace gt::counters;

namespace {

StringId Intern(TraceData& t, const std::string& s) {
  for (size_t i = 0; i < t.strings.size(); ++i)
    if (t.strings[i] == s) return static_cast<StringId>(i);
  t.strings.push_back(s);
  return static_cast<StringId>(t.strings.size() - 1);
}

void AddProcess(TraceData& t, uint32_t pid, const char* name, int64_t start) {
  ProcessRecord p;
  p.pid = pid;
  p.name = Intern(t, name);
  p.start_ns = start;
  t.processes.push_back(p);
}

void AddKernel(TraceData& t, uint32_t pid, const char* name, uint32_t corr, uint32_t grid, int64_t start) {
  KernelRecord k;
  k.pid = pid;
  k.name = Intern(t, name);
  k.correlation_id = corr;
  k.grid = {grid, 1, 1};
  k.block = {256, 1, 1};
  k.start = start;
  k.end = start + 1000;
  t.kernels.push_back(k);
}

void AddMetric(TraceData& t, uint32_t pid, const char* kernel, uint32_t ordinal, const char* metric,
               double v) {
  KernelMetricRecord m;
  m.pid = pid;
  m.kernel_name = Intern(t, kernel);
  m.launch_ordinal = ordinal;
  m.metric = Intern(t, metric);
  m.value = v;
  t.kernel_metrics.push_back(m);
}

void AddLaunch(TraceData& t, uint32_t pid, const char* kernel, uint32_t ordinal, double grid,
               double time_ns) {
  AddMetric(t, pid, kernel, ordinal, launch_metric::kGridSize, grid);
  AddMetric(t, pid, kernel, ordinal, launch_metric::kBlockSize, 256);
  AddMetric(t, pid, kernel, ordinal, gt::metric::kTime, time_ns);
}

}  // namespace

TEST_CASE("launch ordinals follow launch order per name and process", "[counters][join]") {
  TraceData t;
  AddKernel(t, 10, "a", 5, 1, 500);
  AddKernel(t, 10, "b", 3, 1, 300);
  AddKernel(t, 10, "a", 1, 1,
            900);  // launched first (lower correlation id), finished later on another stream
  AddKernel(t, 11, "a", 2, 1, 100);
  auto ord = KernelLaunchOrdinals(t);
  CHECK(ord == std::vector<uint32_t>{1, 0, 0, 0});
}

TEST_CASE("join pairs processes and launches, rewrites ids", "[counters][join]") {
  TraceData tl;
  AddProcess(tl, 100, "app", 0);
  AddKernel(tl, 100, "copy", 7, 64, 1000);
  AddKernel(tl, 100, "copy", 9, 64, 2000);
  AddKernel(tl, 100, "fma", 8, 32, 1500);
  TraceData ct;
  ct.strings.push_back("padding so string ids differ");
  AddProcess(ct, 555, "app", 0);
  AddLaunch(ct, 555, "copy", 0, 64, 532000);
  AddLaunch(ct, 555, "copy", 1, 64, 531000);
  AddLaunch(ct, 555, "fma", 0, 32, 1091000);
  StallSample s;
  s.pid = 555;
  s.kernel_name = Intern(ct, "fma");
  s.launch_ordinal = 0;
  s.reason = Intern(ct, "not_selected");
  s.count = 42;
  ct.stall_samples.push_back(s);

  JoinReport r = JoinCountersIntoTimeline(tl, ct);
  CHECK(r.profiled_launches == 3);
  CHECK(r.matched_launches == 3);
  CHECK(r.unmatched_launches == 0);
  CHECK(r.problems.empty());
  REQUIRE(tl.kernel_metrics.size() == 9);
  for (const auto& m : tl.kernel_metrics) {
    CHECK(m.pid == 100);
    if (tl.Str(m.kernel_name) == "copy") CHECK((m.correlation_id == (m.launch_ordinal == 0 ? 7u : 9u)));
    if (tl.Str(m.kernel_name) == "fma") CHECK(m.correlation_id == 8);
  }
  REQUIRE(tl.stall_samples.size() == 1);
  CHECK(tl.Str(tl.stall_samples[0].reason) == "not_selected");
  CHECK(tl.stall_samples[0].correlation_id == 8);
  CHECK(tl.losses.empty());
  CHECK(r.Summary() == "joined 3 of 3 profiled launches");
}

TEST_CASE("a second run that differs is reported, not guessed", "[counters][join]") {
  TraceData tl;
  AddProcess(tl, 100, "app", 0);
  AddKernel(tl, 100, "copy", 1, 64, 1000);
  AddKernel(tl, 100, "autotuned", 2, 128, 2000);
  TraceData ct;
  AddProcess(ct, 200, "app", 0);
  AddLaunch(ct, 200, "copy", 0, 64, 1);
  AddLaunch(ct, 200, "copy", 1, 64, 1);        // the timeline run launched copy only once
  AddLaunch(ct, 200, "autotuned", 0, 256, 1);  // other grid this time
  AddLaunch(ct, 200, "only_in_run2", 0, 1, 1);
  AddProcess(ct, 201, "helper", 10);  // a child the timeline run never started
  AddLaunch(ct, 201, "copy", 0, 64, 1);

  JoinReport r = JoinCountersIntoTimeline(tl, ct);
  CHECK(r.profiled_launches == 5);
  CHECK(r.matched_launches == 1);
  CHECK(r.unmatched_launches == 4);
  CHECK(r.unmatched_processes == 1);
  auto has = [&](const char* text) {
    for (const auto& p : r.problems)
      if (p.find(text) != std::string::npos) return true;
    return false;
  };
  CHECK(has("copy launch 1: the timeline run has 1 launches of this kernel"));
  CHECK(has("autotuned launch 0: launch shape differs between the runs (grid 256 x block 256 vs 128 x 256)"));
  CHECK(has("only_in_run2 launch 0: the timeline run has 0 launches"));
  CHECK(has("process helper (pid 201) of the counters run has no partner"));
  // Only the matched launch's records arrive; the loss is visible in the trace.
  CHECK(tl.kernel_metrics.size() == 3);
  REQUIRE(tl.losses.size() == 1);
  CHECK(tl.Str(tl.losses[0].name) == "counters_unmatched");
  CHECK(tl.losses[0].count == 4);
}

TEST_CASE("device peaks come from the profiler's peak_sustained values", "[counters][join][peaks]") {
  TraceData t;
  t.devices.push_back(DeviceRecord{});
  AddMetric(t, 1, "k", 0, gt::metric::kSmClock, 1.755e9);
  AddMetric(t, 1, "k", 1, gt::metric::kSmClock, 1.98e9);
  AddMetric(t, 1, "k", 0, gt::metric::kDramBytesPeak, 1536);
  AddMetric(t, 1, "k", 0, gt::metric::kDramClock, 3.1e9);
  AddMetric(t, 1, "k", 0, gt::metric::kFfmaPeak, 16896);
  CHECK(ApplyCounterPeaks(t) == 1);
  const DeviceRecord& d = t.devices[0];
  CHECK(d.dram_bandwidth == Approx(1536 * 3.1e9));
  CHECK(d.peak_flops[static_cast<size_t>(Precision::kFp32)] == Approx(2 * 16896 * 1.98e9));
  CHECK(d.peak_source == static_cast<uint8_t>(PeakSource::kDerived));
  TraceData none;
  none.devices.push_back(DeviceRecord{});
  CHECK(ApplyCounterPeaks(none) == 0);
}

TEST_CASE("processes pair by the name they gave themselves, cut to comm length", "[counters][join]") {
  // Timeline: gcollect named the root "bash" (argv[0]), but bash exec'd the workload, whose injection
  // recorded its main thread as the workload; another root kept its long argv name, which comm truncates to
  // 15 chars.
  TraceData tl;
  AddProcess(tl, 100, "bash", 0);
  tl.threads.push_back({100, 100, Intern(tl, "gt_k_tiny_burst")});
  AddKernel(tl, 100, "tiny", 1, 1, 1000);
  AddProcess(tl, 90, "gt_k_bank_conflicts", 0);
  AddKernel(tl, 90, "smem", 1, 1, 500);
  AddProcess(tl, 80, "sh", 0);  // no GPU work: takes no part
  TraceData ct;
  AddProcess(ct, 300, "gt_k_tiny_burst", 0);
  AddLaunch(ct, 300, "tiny", 0, 1, 1);
  AddProcess(ct, 290, "gt_k_bank_confl", 0);
  AddLaunch(ct, 290, "smem", 0, 1, 1);
  JoinReport r = JoinCountersIntoTimeline(tl, ct);
  CHECK(r.matched_launches == 2);
  CHECK(r.unmatched_processes == 0);
  for (const auto& m : tl.kernel_metrics) CHECK((m.pid == 100 || m.pid == 90));
}

TEST_CASE("launch attributes the counters run could not read come from the timeline", "[counters][join]") {
  TraceData tl;
  AddProcess(tl, 1, "app", 0);
  AddKernel(tl, 1, "k", 5, 64, 100);
  tl.kernels.back().registers_per_thread = 40;
  tl.kernels.back().static_shared_bytes = 4096;
  TraceData ct;
  AddProcess(ct, 2, "app", 0);
  AddLaunch(ct, 2, "k", 0, 64, 1);
  AddMetric(ct, 2, "k", 0, launch_metric::kRegisters, 0);
  AddMetric(ct, 2, "k", 0, launch_metric::kStaticShared, 0);
  REQUIRE(JoinCountersIntoTimeline(tl, ct).matched_launches == 1);
  for (const auto& m : tl.kernel_metrics) {
    if (tl.Str(m.metric) == launch_metric::kRegisters) CHECK(m.value == 40);
    if (tl.Str(m.metric) == launch_metric::kStaticShared) CHECK(m.value == 4096);
  }
}

TEST_CASE("a supplementary counters run adds its metrics once, passes and cost add up", "[counters][join]") {
  TraceData tl;
  AddProcess(tl, 100, "app", 0);
  AddKernel(tl, 100, "copy", 7, 64, 1000);
  // --cache-control all: the own-replay run gave the cache-sensitive metrics ...
  TraceData own;
  AddProcess(own, 555, "app", 0);
  AddLaunch(own, 555, "copy", 0, 64, 532000);
  AddMetric(own, 555, "copy", 0, gt::metric::kDramBytesWrite, 1.0e6);
  AddMetric(own, 555, "copy", 0, launch_metric::kPasses, 3);
  AddMetric(own, 555, "copy", 0, launch_metric::kCostNs, 40e6);
  REQUIRE(JoinCountersIntoTimeline(tl, own).matched_launches == 1);
  // ... the kernel-replay run the rest, with the launch attributes again.
  TraceData other;
  AddProcess(other, 777, "app", 0);
  AddLaunch(other, 777, "copy", 0, 64, 540000);
  AddMetric(other, 777, "copy", 0, gt::metric::kIssued, 12345);
  AddMetric(other, 777, "copy", 0, launch_metric::kPasses, 5);
  AddMetric(other, 777, "copy", 0, launch_metric::kCostNs, 60e6);
  JoinReport r = JoinCountersIntoTimeline(tl, other, JoinMode::kSupplement);
  CHECK(r.matched_launches == 1);
  std::map<std::string, std::vector<double>> values;
  for (const auto& m : tl.kernel_metrics) {
    CHECK(m.correlation_id == 7);
    values[tl.Str(m.metric)].push_back(m.value);
  }
  CHECK(values[gt::metric::kTime] == std::vector<double>{532000});  // the first run's, once
  CHECK(values[launch_metric::kGridSize] == std::vector<double>{64});
  CHECK(values[gt::metric::kDramBytesWrite] == std::vector<double>{1.0e6});
  CHECK(values[gt::metric::kIssued] == std::vector<double>{12345});
  CHECK(values[launch_metric::kPasses] == std::vector<double>{8});
  CHECK(values[launch_metric::kCostNs] == std::vector<double>{100e6});
}
