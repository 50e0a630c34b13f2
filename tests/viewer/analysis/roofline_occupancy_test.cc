// Roofline placement, occupancy limiters and the stall-reason table.
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "gt/counter_vocab.h"
#include "gt/viewer/analysis.h"

using namespace gt;

namespace {
DeviceRecord H200() {
  DeviceRecord d;
  d.cc_major = 9;
  d.sm_count = 132;
  d.sm_clock_khz = 1980000;
  d.max_warps_per_sm = 64;
  d.max_blocks_per_sm = 32;
  d.regs_per_sm = 65536;
  d.shared_mem_per_sm = 233472;
  d.dram_bandwidth = 4.8e12;
  d.l2_bandwidth = 12e12;
  return d;
}
KernelAnalysis Point(const char* name, double flops, double dram_bytes, double time_s, Precision p) {
  KernelCounters c;
  c.kernel_name = name;
  c.Set(gt::metric::kTime, time_s * 1e9);
  c.Set(gt::metric::kSmClock, 1.98e9);
  c.Set(gt::metric::kDramBytes, dram_bytes);
  if (p == Precision::kFp32) c.Set(gt::metric::kFfma, flops / 2);
  if (p == Precision::kBf16Tensor) c.Set(gt::metric::kTensorHgmmaBf16, flops);
  return AnalyzeKernel(c, H200());
}
}  // namespace

TEST_CASE("roofline ceilings and roofs come from the device peaks", "[roofline]") {
  RooflineModel m = BuildRoofline(H200());
  REQUIRE(m.ceilings.size() == 3);  // DRAM, L2 given; L1 from the cc 9.0 table
  CHECK(m.ceilings[0].level == MemoryLevel::kDram);
  CHECK(m.Bandwidth(MemoryLevel::kL1) == Approx(128.0 * 132 * 1.98e9));
  CHECK(m.Peak(Precision::kFp32) == Approx(256.0 * 132 * 1.98e9));
  CHECK(m.Peak(Precision::kBf16Tensor) == Approx(4096.0 * 132 * 1.98e9));
  CHECK(m.roofs.front().precision == Precision::kFp8Tensor);  // highest first
  CHECK(m.Ridge(MemoryLevel::kDram, Precision::kFp32) == Approx(256.0 * 132 * 1.98e9 / 4.8e12));
  CHECK(m.Attainable(1.0, MemoryLevel::kDram, Precision::kFp32) == Approx(4.8e12));
  CHECK(m.Attainable(1e4, MemoryLevel::kDram, Precision::kFp32) == Approx(256.0 * 132 * 1.98e9));
}

TEST_CASE("kernels land on the right side of the ridge, sized by total time", "[roofline]") {
  std::vector<KernelAnalysis> as = {
      Point("saxpy", 2.0 * 268435456, 3.0 * 1073741824, 776e-6, Precision::kFp32),  // AI = 1/6
      Point("fma", 65e12 * 1091e-6, 4e6, 1091e-6, Precision::kFp32),
      Point("gemm", 2.0 * 4096.0 * 4096 * 4096, 3.0 * 4096 * 4096 * 2, 179e-6, Precision::kBf16Tensor),
      Point("no_flops", 0, 1e9, 1e-3, Precision::kFp32),
  };
  RooflineModel m = BuildRoofline(H200());
  std::vector<double> totals = {776e-6 * 100, 1091e-6, 179e-6 * 10, 1e-3};
  auto pts = PlaceOnRoofline(m, as, MemoryLevel::kDram, totals);
  REQUIRE(pts.size() == 3);  // a kernel without FLOPs cannot be placed
  CHECK(pts[0].kernel_name == "saxpy");
  CHECK(pts[0].memory_side);
  CHECK(pts[0].intensity == Approx(1.0 / 6));
  CHECK(pts[0].pct_of_roof == Approx((2.0 * 268435456 / 776e-6) / (4.8e12 / 6)).epsilon(1e-9));
  CHECK(pts[0].radius == Approx(1.0));
  CHECK_FALSE(pts[1].memory_side);
  CHECK(pts[1].pct_of_roof == Approx(65e12 / (256.0 * 132 * 1.98e9)));
  CHECK(pts[1].radius == Approx(std::sqrt(1091e-6 / 776e-4)));
  CHECK(pts[2].precision == Precision::kBf16Tensor);
  CHECK_FALSE(pts[2].memory_side);

  double x0, x1, y0, y1;
  m.Bounds(pts, &x0, &x1, &y0, &y1);
  CHECK(x0 <= std::log10(1.0 / 6));
  CHECK(y1 >= std::log10(m.roofs.front().flops_per_s));
  CHECK(PickRooflinePoint(pts, std::log10(pts[1].intensity) + 0.01, std::log10(pts[1].flops_per_s), 0.05) ==
        1);
  CHECK(PickRooflinePoint(pts, 10, 10, 0.05) == -1);
}

TEST_CASE("theoretical occupancy and its limiter", "[occupancy]") {
  DeviceRecord d = H200();
  LaunchShape s;
  s.grid_blocks = 100000;
  s.block_threads = 256;
  s.registers_per_thread = 128;  // 4096 regs per warp -> 16 warps -> 2 blocks of 8 warps
  Occupancy o = ComputeOccupancy(s, d);
  CHECK(o.limiter == OccupancyLimiter::kRegisters);
  CHECK(o.blocks_per_sm == 2);
  CHECK(o.theoretical_pct == Approx(25));

  s.registers_per_thread = 32;
  s.block_threads = 1024;
  o = ComputeOccupancy(s, d);
  CHECK(o.limiter == OccupancyLimiter::kWarps);
  CHECK(o.theoretical_pct == Approx(100));

  s.block_threads = 128;
  s.dynamic_shared_bytes = 100 * 1024;  // +1 KiB reserved -> 2 blocks in 228 KiB
  o = ComputeOccupancy(s, d);
  CHECK(o.limiter == OccupancyLimiter::kSharedMemory);
  CHECK(o.blocks_per_sm == 2);
  CHECK(o.theoretical_pct == Approx(100.0 * 8 / 64));

  s.dynamic_shared_bytes = 0;
  s.block_threads = 32;  // 1 warp per block, 32 blocks max -> 32 warps
  o = ComputeOccupancy(s, d);
  CHECK(o.limiter == OccupancyLimiter::kBlocks);
  CHECK(o.theoretical_pct == Approx(50));

  s.grid_blocks = 10;
  o = ComputeOccupancy(s, d);
  CHECK(o.grid_too_small);
  CHECK_FALSE(ComputeOccupancy(LaunchShape{}, d).valid);
}

TEST_CASE("every GH100 stall reason has a meaning and a fix", "[stalls]") {
  const char* gh100[] = {"barrier",
                         "branch_resolving",
                         "dispatch_stall",
                         "drain",
                         "gmma",
                         "imc_miss",
                         "lg_throttle",
                         "long_scoreboard",
                         "math_pipe_throttle",
                         "membar",
                         "mio_throttle",
                         "misc",
                         "no_instruction",
                         "not_selected",
                         "selected",
                         "short_scoreboard",
                         "sleeping",
                         "tex_throttle",
                         "wait"};
  std::set<std::string> keys;
  for (const auto& r : StallReasonTable()) {
    keys.insert(r.key);
    CHECK(std::string(r.meaning).size() > 20);
    CHECK(std::string(r.fix).size() > 5);
    CHECK(std::string(r.short_fix).size() > 3);
  }
  CHECK(keys.size() == StallReasonTable().size());
  for (const char* k : gh100) {
    INFO(k);
    CHECK(FindStallReason(k) != nullptr);
  }
  CHECK_FALSE(FindStallReason("selected")->is_stall);
  CHECK(FindStallReason("nope") == nullptr);
}

TEST_CASE("formatting", "[format]") {
  CHECK(FormatPercent(84.2) == "84%");
  CHECK(FormatPercent(3.21) == "3.2%");
  CHECK(FormatPercent(0.22) == "0.22%");
  CHECK(FormatRate(4.04e12, "B/s") == "4.04 TB/s");
  CHECK(FormatRate(65.1e12, "FLOP/s") == "65.1 TFLOP/s");
  CHECK(FormatRate(768e12, "FLOP/s") == "768 TFLOP/s");
  CHECK(FormatDuration(532e3) == "532 \xC2\xB5s");  // ns: an analysis's seconds times 1e9
  CHECK(FormatDuration(1.091e6) == "1.09 ms");
}
