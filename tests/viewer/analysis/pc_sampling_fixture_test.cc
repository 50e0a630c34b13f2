// Against a real PC-sampling trace from the H200 (tests/data/pcsampling_h200.gtrace: copy, fma, atomics and
// syncdiv from kernels/ (-lineinfo) as children of one shell under `gcollect --pc-sampling`, period 2^10; see
// tests/data/README.md): the per-kernel histograms, the hot-spot tables and the collector's loss records.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "gt/reader.h"
#include "gt/trace_data.h"
#include "gt/viewer/analysis.h"

using namespace gt;

namespace {

struct Fixture {
  TraceData trace;
  std::vector<PcSamplingProfile> profiles;
  std::map<std::string, const PcSamplingProfile*> by_base;  // "copy_float4" -> profile
};

const Fixture& Load() {
  static Fixture f = [] {
    Fixture x;
    auto bytes = ReadFileBytes(GT_PCS_FIXTURE);
    REQUIRE(bytes.ok());
    auto r = ReadTrace(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), x.trace);
    REQUIRE(r.ok());
    REQUIRE(r->clean());
    return x;
  }();
  static bool indexed = false;
  if (!indexed) {
    f.profiles = BuildPcSamplingProfiles(f.trace);
    for (const auto& p : f.profiles) f.by_base[p.kernel_name.substr(0, p.kernel_name.find('('))] = &p;
    indexed = true;
  }
  return f;
}

const PcSamplingProfile& Kernel(const char* base) {
  const Fixture& f = Load();
  auto it = f.by_base.find(base);
  REQUIRE(it != f.by_base.end());
  return *it->second;
}

double Share(const PcSamplingProfile& p, const char* reason) {
  for (const auto& r : p.reasons)
    if (r.reason == reason) return r.share;
  return 0;
}

}  // namespace

TEST_CASE("pc sampling fixture: every workload kernel has samples, lines, and no loss") {
  const Fixture& f = Load();
  CHECK(f.profiles.size() == 5);
  for (const auto& p : f.profiles) {
    INFO(p.kernel_name);
    CHECK(p.samples > 5000);
    CHECK(p.line_coverage == Approx(1.0));  // kernels/ is built with -lineinfo
    CHECK_FALSE(p.by_line.empty());
    // Every reason is one the viewer can explain (one vocabulary with the counters).
    for (const auto& r : p.reasons) CHECK(FindStallReason(r.reason) != nullptr);
    // PC samples are matched to the timeline's kernels by (pid, name).
    bool in_timeline = false;
    for (const auto& k : f.trace.kernels)
      if (k.pid == p.pid && f.trace.Str(k.name) == p.kernel_name) in_timeline = true;
    CHECK(in_timeline);
  }
  // One "pc_sampling" info record per CUDA process, nothing dropped or failed.
  int info = 0;
  for (const auto& l : f.trace.losses) {
    const std::string& name = f.trace.Str(l.name);
    INFO(name << ": " << f.trace.Str(l.detail));
    if (name == "pc_sampling") ++info;
    CHECK(name.find("dropped") == std::string::npos);
    CHECK(name != "pc_sampling_unavailable");
    CHECK(name != "pc_sampling_hardware_buffer_full");
  }
  CHECK(info == 4);
}

TEST_CASE("pc sampling fixture: copy and saxpy wait on memory at the load line") {
  for (const char* base : {"copy_float4", "saxpy"}) {
    const PcSamplingProfile& p = Kernel(base);
    INFO(p.kernel_name);
    REQUIRE_FALSE(p.reasons.empty());
    CHECK(p.reasons.front().reason == "long_scoreboard");
    CHECK(p.reasons.front().share > 0.9);
    REQUIRE_FALSE(p.by_line.empty());
    CHECK(p.by_line.front().dominant_reason == "long_scoreboard");
    CHECK(p.by_line.front().share > 0.9);
    CHECK(p.summary.rfind("9", 0) == 0);  // "9x% of samples stalled on Long Scoreboard..."
    CHECK(p.summary.find("stalled on Long Scoreboard") != std::string::npos);
  }
  // The hottest line is the load: copy.cu:7 (copy_float4) and copy.cu:12 (saxpy).
  CHECK(HotSpotLabel(Kernel("copy_float4").by_line.front()) == "copy.cu:7");
  CHECK(HotSpotLabel(Kernel("saxpy").by_line.front()) == "copy.cu:12");
  CHECK(Kernel("copy_float4").by_pc.front().pc_offset == 0x1e0);
}

TEST_CASE("pc sampling fixture: fma is issue-bound, atomics throttle, syncdiv waits at its barriers") {
  const PcSamplingProfile& fma = Kernel("fma_chains");
  CHECK(fma.reasons.front().reason == "not_selected");
  CHECK(Share(fma, "not_selected") + Share(fma, "selected") > 0.9);
  CHECK(fma.summary.find("Not Selected (not a stall") != std::string::npos);

  const PcSamplingProfile& at = Kernel("atomic_one_address");
  CHECK(at.reasons.front().reason == "lg_throttle");
  CHECK(Share(at, "lg_throttle") > 0.5);
  CHECK(Share(at, "drain") > 0.05);
  // The atomic itself sits in CUDA's header; its line is the hottest.
  CHECK(HotSpotLabel(at.by_line.front()) == "device_atomic_functions.hpp:226");
  CHECK(at.by_line.front().dominant_reason == "lg_throttle");

  const PcSamplingProfile& sd = Kernel("syncthreads_divergent");
  CHECK(Share(sd, "barrier") > 0.1);
  // The two hottest PCs are the instructions that wait right after the two __syncthreads() (a stalled warp is
  // sampled at the instruction it cannot issue): line 14 and the loop head, line 8.
  REQUIRE(sd.by_pc.size() >= 2);
  for (int i = 0; i < 2; ++i) {
    INFO(HotSpotLabel(sd.by_pc[i]));
    CHECK(sd.by_pc[i].dominant_reason == "barrier");
    CHECK(sd.by_pc[i].dominant_share > 0.7);
  }
  CHECK(HotSpotLabel(sd.by_pc[0]) == "syncdiv.cu:14");
  CHECK(HotSpotLabel(sd.by_pc[1]) == "syncdiv.cu:8");
}
