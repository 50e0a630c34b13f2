// gt/units.h: the one formatter of durations, sizes, rates and counts.
#include <catch2/catch.hpp>

#include "gt/units.h"

using namespace gt;

TEST_CASE("durations take ns, three significant digits, the unit picked after rounding", "[units]") {
  CHECK(FormatDuration(0) == "0 ns");
  CHECK(FormatDuration(999) == "999 ns");
  CHECK(FormatDuration(1000) == "1 \u00b5s");
  CHECK(FormatDuration(12400) == "12.4 \u00b5s");
  CHECK(FormatDuration(999'700) == "1 ms");  // not "1e+03 µs"
  CHECK(FormatDuration(3'210'000) == "3.21 ms");
  CHECK(FormatDuration(1'500'000'000) == "1.500 s");
  CHECK(FormatDuration(-400) == "-400 ns");
  CHECK(FormatDuration(-12400.0) == "-12.4 \u00b5s");
}

TEST_CASE("ruler labels share the step's unit", "[units]") {
  CHECK(FormatRulerTime(12.5e6, 0.1e6) == "12.5 ms");
  CHECK(FormatRulerTime(3500e3, 500e3) == "3.5 ms");
  CHECK(FormatRulerTime(250, 50) == "250 ns");
}

TEST_CASE("sizes are binary, rates SI", "[units]") {
  CHECK(FormatBytes(512) == "512 B");
  CHECK(FormatBytes(4096) == "4.00 KiB");
  CHECK(FormatBytes(228.0 * 1024) == "228 KiB");
  CHECK(FormatBytes(1342177280ull) == "1.25 GiB");
  CHECK(FormatRate(4.04e12, "B/s") == "4.04 TB/s");
  CHECK(FormatRate(65.1e12, "FLOP/s") == "65.1 TFLOP/s");
  CHECK(FormatBandwidth(1e6, 1e3) == "1.00 TB/s");  // 1 MB in 1 µs
  CHECK(FormatBandwidth(0, 10) == "-");
  CHECK(FormatBandwidth(10, 0) == "-");
  CHECK(FormatPercent(84.2) == "84%");
  CHECK(FormatCount(1234567) == "1,234,567");
}
