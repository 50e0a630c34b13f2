// PC-sampling analysis (viewer/core/src/analysis/pc_sampling.cc): golden tables from tiny sample lists built
// in code. The real H200 trace is checked in pc_sampling_fixture_test.cc.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "gt/viewer/analysis.h"

using namespace gt;

namespace {

// String table: ids are indices.
const std::vector<std::string> kStr = {"",
                                       "copy(float const*, float*)",
                                       "long_scoreboard",
                                       "selected",
                                       "/src/kernels/copy.cu",
                                       "barrier",
                                       "syncdiv(float*)",
                                       "not_selected",
                                       "lg_throttle"};
std::string_view Str(StringId id) {
  return id < kStr.size() ? std::string_view(kStr[id]) : std::string_view();
}

StallSample Pc(uint32_t pid, StringId kernel, StringId reason, uint64_t pc, uint64_t count, StringId file = 0,
               uint32_t line = 0) {
  StallSample s;
  s.pid = pid;
  s.kernel_name = kernel;
  s.launch_ordinal = kNone;
  s.reason = reason;
  s.pc_offset = pc;
  s.source_file = file;
  s.source_line = line;
  s.count = count;
  return s;
}

}  // namespace

TEST_CASE("pc sampling analysis: histogram, hot PCs and hot lines of one kernel (golden)") {
  std::vector<StallSample> s = {
      // copy: line 12 has two PCs (0x80, 0x90), line 14 one; 0x90 appears in two flushes.
      Pc(7, 1, 2, 0x90, 600, 4, 12),
      Pc(7, 1, 2, 0x90, 300, 4, 12),
      Pc(7, 1, 3, 0x90, 20, 4, 12),
      Pc(7, 1, 2, 0x80, 50, 4, 12),
      Pc(7, 1, 3, 0x100, 25, 4, 14),
      Pc(7, 1, 8, 0x100, 5, 4, 14),
      // A counters-run bin (one launch, whole kernel) must not be counted as PC samples.
      [] {
        StallSample c;
        c.pid = 7;
        c.kernel_name = 1;
        c.launch_ordinal = 0;
        c.reason = 2;
        c.count = 1000000;
        return c;
      }(),
  };
  auto profiles = BuildPcSamplingProfiles(s, Str);
  REQUIRE(profiles.size() == 1);
  const PcSamplingProfile& p = profiles[0];
  CHECK(p.pid == 7);
  CHECK(p.kernel_name == "copy(float const*, float*)");
  CHECK(p.samples == 1000);
  CHECK(p.distinct_pcs == 3);
  CHECK(p.line_coverage == Approx(1.0));
  CHECK(
      FormatPcSamplingProfile(p) ==
      "copy(float const*, float*): 1000 samples at 3 PCs, 100% with a source line\n"
      "95% of samples stalled on Long Scoreboard: improve locality / coalescing; hottest copy.cu:12 (97% of "
      "samples, mostly Long Scoreboard)\n"
      "reason               samples   share  of stalls\n"
      "long_scoreboard          950     95%       99%\n"
      "selected                  45    4.5%         -\n"
      "lg_throttle                5   0.50%     0.52%\n"
      "hot lines                  samples   share  dominant           PCs\n"
      "copy.cu:12                     970     97%  long_scoreboard 98% 2\n"
      "copy.cu:14                      30    3.0%  selected 83%       1\n"
      "hot PCs                    samples   share  dominant           PCs\n"
      "0x90 copy.cu:12                920     92%  long_scoreboard 98% 1\n"
      "0x80 copy.cu:12                 50    5.0%  long_scoreboard 100% 1\n"
      "0x100 copy.cu:14                30    3.0%  selected 83%       1\n");
  // The line's representative PC is its hottest one.
  CHECK(p.by_line[0].pc_offset == 0x90);
  CHECK(p.by_pc[0].pc_offset == 0x90);
  CHECK(FindPcSamplingProfile(profiles, 7, "copy(float const*, float*)") == &profiles[0]);
  CHECK(FindPcSamplingProfile(profiles, 8, "copy(float const*, float*)") == nullptr);
}

TEST_CASE("pc sampling analysis: kernels without line info, several kernels, empty input") {
  std::vector<StallSample> s = {
      Pc(1, 6, 5, 0x40, 30),  Pc(1, 6, 7, 0x40, 10), Pc(1, 6, 5, 0x200, 10),  // syncdiv, no lines
      Pc(1, 1, 2, 0x10, 500),                                                 // copy, bigger
      Pc(1, 1, 2, 0x20, 0),                                                   // empty bin: ignored
  };
  auto profiles = BuildPcSamplingProfiles(s, Str, /*top=*/1);
  REQUIRE(profiles.size() == 2);
  CHECK(profiles[0].kernel_name == "copy(float const*, float*)");  // most samples first
  const PcSamplingProfile& sd = profiles[1];
  CHECK(sd.samples == 50);
  CHECK(sd.by_line.empty());
  CHECK(sd.line_coverage == 0);
  REQUIRE(sd.by_pc.size() == 1);  // top = 1
  CHECK(HotSpotLabel(sd.by_pc[0]) == "pc 0x40");
  CHECK(sd.by_pc[0].dominant_reason == "barrier");
  CHECK(sd.by_pc[0].dominant_share == Approx(0.75));
  CHECK(sd.reasons[0].reason == "barrier");
  CHECK(sd.reasons[0].share == Approx(0.8));
  CHECK(sd.reasons[0].stall_share == Approx(1.0));  // not_selected is not a stall
  CHECK(sd.summary ==
        "80% of samples stalled on Barrier (Synchronization): balance work before __syncthreads; hottest pc "
        "0x40 (80% of samples, mostly Barrier (Synchronization))");
  CHECK(BuildPcSamplingProfiles(std::vector<StallSample>{}, Str).empty());
}

TEST_CASE("pc sampling analysis: issue-bound kernels lead with the non-stall state, then the top stall") {
  // fma-like: most samples not selected (ready warps), a small wait stall.
  std::vector<StallSample> s = {Pc(1, 1, 7, 0x10, 85), Pc(1, 1, 3, 0x10, 10), Pc(1, 1, 5, 0x20, 5)};
  auto profiles = BuildPcSamplingProfiles(s, Str);
  REQUIRE(profiles.size() == 1);
  CHECK(profiles[0].summary ==
        "85% of samples Not Selected (not a stall; none needed: issue slots are busy); top stall Barrier "
        "(Synchronization) 5.0%; hottest pc 0x10 (95% of samples, mostly Not Selected)");
  // Only non-stall samples: no stall is named.
  s = {Pc(1, 1, 7, 0x10, 40), Pc(1, 1, 3, 0x10, 60)};
  profiles = BuildPcSamplingProfiles(s, Str);
  REQUIRE(profiles.size() == 1);
  CHECK(profiles[0].summary.rfind("60% of samples Selected (not a stall; none)", 0) == 0);
}
