// Against the real counters traces from the H200 (tests/data/counters_h200*.gtrace, one per --cache-control
// mode: the kernels/ workloads run as children of one shell under `gcollect --counters`, see
// bench/counters/run_device.sh): the two-run join, the
// roofline placement, the verdicts naming each workload's known bottleneck, and the flags.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "gt/reader.h"
#include "gt/trace_data.h"
#include "gt/viewer/analysis.h"

using namespace gt;

namespace {

struct Fixture {
  TraceData trace;
  std::vector<KernelCounters> launches;
  std::map<std::string, KernelAnalysis> by_base;  // "copy_float4" -> launches merged
  std::vector<KernelAnalysis> analyses;
  std::vector<std::string> bases;
};

std::string Base(const std::string& name) {
  return name.substr(0, name.find('('));
}

const Fixture& Load() {
  static Fixture f = [] {
    Fixture x;
    auto bytes = ReadFileBytes(GT_COUNTERS_FIXTURE);
    REQUIRE(bytes.ok());
    auto r = ReadTrace(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), x.trace);
    REQUIRE(r.ok());
    REQUIRE(r->clean());
    x.launches = GroupKernelCounters(x.trace);
    std::map<std::pair<uint32_t, std::string>, std::vector<KernelCounters>> groups;
    for (const auto& c : x.launches) groups[{c.pid, c.kernel_name}].push_back(c);
    REQUIRE_FALSE(x.trace.devices.empty());
    // Occupancy from the timeline's launch record of the same launch (registers, shared memory, block).
    std::map<std::pair<uint32_t, uint32_t>, const KernelRecord*> by_corr;
    for (const auto& k : x.trace.kernels) by_corr[{k.pid, k.correlation_id}] = &k;
    std::map<std::pair<uint32_t, std::string>, LaunchShape> shapes;
    for (const auto& m : x.trace.kernel_metrics)
      if (auto it = by_corr.find({m.pid, m.correlation_id}); it != by_corr.end())
        shapes[{m.pid, x.trace.Str(m.kernel_name)}] = LaunchShapeOf(*it->second);
    for (auto& [key, v] : groups) {
      KernelAnalysis a = AnalyzeKernel(MergeLaunches(v), x.trace.devices.front(), shapes[key]);
      x.by_base[Base(key.second)] = a;
      x.analyses.push_back(a);
      x.bases.push_back(Base(key.second));
    }
    return x;
  }();
  return f;
}

const KernelAnalysis& Kernel(const char* base) {
  const Fixture& f = Load();
  auto it = f.by_base.find(base);
  INFO("kernel " << base);
  REQUIRE(it != f.by_base.end());
  return it->second;
}

bool Contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("fixture: every profiled launch joined onto a timeline kernel", "[fixture][join]") {
  const Fixture& f = Load();
  REQUIRE(f.trace.kernel_metrics.size() > 100);
  std::map<std::pair<uint32_t, uint32_t>, const KernelRecord*> kernels;
  for (const auto& k : f.trace.kernels) kernels[{k.pid, k.correlation_id}] = &k;
  for (const auto& m : f.trace.kernel_metrics) {
    auto it = kernels.find({m.pid, m.correlation_id});
    REQUIRE(it != kernels.end());
    CHECK(it->second->name == m.kernel_name);
    CHECK(it->second->end > it->second->start);  // timestamps come from the timeline run
  }
  for (const auto& l : f.trace.losses) CHECK(f.trace.Str(l.name) != "counters_unmatched");
  // Several processes (children of one shell) were paired.
  std::set<uint32_t> pids;
  for (const auto& m : f.trace.kernel_metrics) pids.insert(m.pid);
  CHECK(pids.size() >= 6);
  // The device peaks came from the profiler's own peak_sustained values.
  CHECK(f.trace.devices.front().peak_source == static_cast<uint8_t>(PeakSource::kDerived));
  CHECK(f.trace.devices.front().dram_bandwidth > 3e12);
}

TEST_CASE("fixture: verdicts name each workload's known bottleneck", "[fixture][verdict]") {
  for (const char* k : {"copy_float4", "saxpy"}) {
    INFO(k << ": " << Kernel(k).verdict);
    CHECK(Kernel(k).bottleneck == Bottleneck::kMemory);
    CHECK(Contains(Kernel(k).verdict, "long-scoreboard"));
  }
  // The baseline: short (5 us), waiting on memory latency, not bandwidth. Under CUPTI's kernel replay the
  // restore's write-back adds DRAM traffic (33% of peak: latency-bound, long-scoreboard); with the L2 flushed
  // before each pass (--cache-control all) it reads 16% of peak and is named launch-bound. Never memory- or
  // compute-bound.
  INFO(Kernel("coalesced_read").verdict);
  CHECK((Contains(Kernel("coalesced_read").verdict, "long-scoreboard") ||
         Kernel("coalesced_read").bottleneck == Bottleneck::kLaunch));
  CHECK(Kernel("coalesced_read").bottleneck != Bottleneck::kMemory);
  CHECK(Kernel("coalesced_read").bottleneck != Bottleneck::kCompute);
  INFO(Kernel("strided_read").verdict);
  CHECK(Kernel("strided_read").bottleneck == Bottleneck::kMemory);
  CHECK(Contains(Kernel("strided_read").verdict, "uncoalesced loads"));
  INFO(Kernel("fma_chains").verdict);
  CHECK(Kernel("fma_chains").bottleneck == Bottleneck::kCompute);
  CHECK(Contains(Kernel("fma_chains").verdict, "FP32 peak"));
  INFO(Kernel("atomic_one_address").verdict);
  CHECK(Contains(Kernel("atomic_one_address").verdict, "atomic contention"));
  INFO(Kernel("syncthreads_divergent").verdict);
  CHECK(Contains(Kernel("syncthreads_divergent").verdict, "barrier"));
  CHECK(Contains(Kernel("syncthreads_divergent").verdict, "branch divergence"));
  INFO(Kernel("smem_conflicted").verdict);
  CHECK(Contains(Kernel("smem_conflicted").verdict, "bank conflicts"));
  CHECK_FALSE(Contains(Kernel("smem_padded").verdict, "bank conflicts"));
  INFO(Kernel("tiny_kernel").verdict);
  CHECK(Kernel("tiny_kernel").bottleneck == Bottleneck::kLaunch);
}

TEST_CASE("fixture: roofline placement", "[fixture][roofline]") {
  const Fixture& f = Load();
  RooflineModel model = BuildRoofline(f.trace.devices.front());
  auto pts = PlaceOnRoofline(model, f.analyses, MemoryLevel::kDram);
  std::map<std::string, RooflinePoint> by_base;
  for (const auto& p : pts) by_base[f.bases[p.analysis_index]] = p;
  REQUIRE(by_base.count("fma_chains"));
  REQUIRE(by_base.count("saxpy"));
  CHECK_FALSE(by_base["fma_chains"].memory_side);
  CHECK(by_base["fma_chains"].pct_of_roof > 0.8);
  CHECK(by_base["saxpy"].memory_side);
  CHECK(by_base["saxpy"].pct_of_roof > 0.6);
  for (const auto& p : pts) CHECK(p.pct_of_roof <= 1.05);  // nothing above its roof
}

TEST_CASE("fixture: flags only where values are impossible", "[fixture][flags]") {
  const Fixture& f = Load();
  for (const auto& a : f.analyses) {
    for (const auto& fl : a.flags) {
      INFO(a.kernel_name << ": " << fl.message);
      // Every flag is about a value that really is out of range.
      CHECK((fl.metric.find("hit rate") != std::string::npos || fl.metric.find("%") != std::string::npos ||
             fl.metric == "achieved occupancy" || fl.metric == "hmma" || fl.metric == "sectors per request" ||
             fl.metric == "bank conflicts" || fl.metric == "active threads per warp" ||
             fl.metric.find("__") != std::string::npos));
    }
    if (a.l2_hit_pct) CHECK(a.l2_hit_pct.value <= 100);
    if (a.l1_hit_pct) CHECK(a.l1_hit_pct.value <= 100);
  }
}
