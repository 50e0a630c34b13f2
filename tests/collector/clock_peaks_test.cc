#include <catch2/catch.hpp>

#include <time.h>

#include "config/config.h"
#include "decode/clock.h"
#include "decode/device_peaks.h"

using namespace gt;
using namespace gt::config;
using namespace gt::decode;

TEST_CASE("clock offset comes from the tightest bracket") {
  std::vector<ClockSample> s = {
      {1000, 501000, 1400},  // wide (preempted)
      {2000, 501990, 2020},  // tight: other read at ~2010 -> offset 2010 - 501990 = -499980
      {3000, 503500, 2990},  // invalid (reference went backwards)
  };
  ClockOffset o = EstimateOffset(s);
  REQUIRE(o.valid);
  CHECK(o.offset_ns == -499980);
  CHECK(o.uncertainty_ns == 10);
  CHECK_FALSE(EstimateOffset({}).valid);
}

TEST_CASE("measured CLOCK_REALTIME offset maps realtime onto the monotonic trace clock") {
  ClockOffset o = EstimateOffset(SampleClocks(CLOCK_REALTIME, 32));
  REQUIRE(o.valid);
  CHECK(o.uncertainty_ns < 1000000);  // well under a millisecond even on a loaded CI machine
  int64_t mono = TraceClockNow();
  int64_t mapped = RealtimeNow() + o.offset_ns;
  CHECK(std::llabs(mapped - mono) < 5000000);  // 5 ms: the two reads are not simultaneous
}

TEST_CASE("Hopper peaks: SM count x clock x per-SM rate") {
  DeviceRecord d;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.sm_clock_khz = 1980000;
  DerivePeaks(d, 0);
  const double clk = 132 * 1.98e9;
  CHECK(d.peak_flops[static_cast<size_t>(Precision::kFp64)] == Approx(clk * 128));
  CHECK(d.peak_flops[static_cast<size_t>(Precision::kFp32)] == Approx(clk * 256));  // 66.9 TFLOP/s
  CHECK(d.peak_flops[static_cast<size_t>(Precision::kBf16Tensor)] ==
        Approx(clk * 4096));  // 1070 TFLOP/s dense
  CHECK(d.peak_flops[static_cast<size_t>(Precision::kFp8Tensor)] == Approx(clk * 8192));
  CHECK(d.dram_bandwidth == 0);  // no memory clock, no CUPTI figure
  d.mem_clock_khz = 2619000;
  d.mem_bus_width_bits = 5120;
  DerivePeaks(d, 1e12);
  CHECK(d.dram_bandwidth ==
        Approx(2619e6 * 2 * 640));  // attributes win over CUPTI's figure: 3.35 TB/s (H100)
  CHECK(d.peak_source == static_cast<uint8_t>(PeakSource::kDerived));
}

TEST_CASE("unknown architectures keep peaks unknown") {
  DeviceRecord d;
  d.cc_major = 3;
  d.cc_minor = 5;
  d.sm_count = 15;
  d.sm_clock_khz = 800000;
  DerivePeaks(d, 0);
  for (double p : d.peak_flops) CHECK(p == 0);
  CHECK(d.peak_source == static_cast<uint8_t>(PeakSource::kUnknown));
  CHECK(std::string(ChipForComputeCapability(9, 0)) == "GH100");
  CHECK(std::string(ChipForComputeCapability(1, 0)).empty());
}
