// The one place numbers become text for people: durations, timestamps on a ruler, byte sizes, rates and
// counts. The launcher's end-of-run summary, the viewer core's reports and details, the CLI and the UI all
// call these, so the same quantity reads the same everywhere. Standard library only (snprintf: libc++ under
// emcc has no std::format nor floating-point to_chars), so it builds natively and with em++.
//
// Conventions, decided once:
// - Durations take nanoseconds (int64 or double); a caller holding seconds multiplies by 1e9. Three
// significant
//   digits, the unit chosen after rounding so 999.7 us reads "1.00 ms", never "1e+03 us"; whole seconds and
//   above keep three decimals ("1.500 s"), since a run's span is read to the millisecond.
// - Micro is written "µs" (U+00B5, UTF-8). The UI's font (ImGui's default ProggyClean, glyph range 0x20-0xFF)
//   has that glyph, terminals show it, and the text reports pad by code points, not bytes.
// - Memory sizes are binary (KiB, MiB, GiB = 1024^n): allocations, caches, shared memory and device memory
// are
//   sized in powers of two, and "228 KiB/SM" or "50.0 MiB L2" is how the hardware documents them.
// - Rates are decimal (SI prefixes: "4.04 TB/s", "65.1 TFLOP/s"): vendors quote bandwidth and throughput
//   peaks in powers of ten, and a measured rate is compared with those peaks.
// - What cannot be computed (no time, no bytes) is "-".
#pragma once

#include <cstdint>
#include <string>

namespace gt {

// "850 ns", "12.4 µs", "3.21 ms", "1.500 s"; negative durations get a leading "-".
std::string FormatDuration(double ns);
// A timeline ruler's label: the step decides the unit and the decimals, so labels along one ruler share them
// ("12.5 ms", "12.6 ms").
std::string FormatRulerTime(double ns, double step_ns);
// "512 B", "4.00 KiB", "50.0 MiB", "140 GiB".
std::string FormatBytes(double bytes);
// SI prefixes, three significant digits: FormatRate(4.04e12, "B/s") == "4.04 TB/s"; "-" when not finite.
std::string FormatRate(double per_second, const char* unit);
// Bytes moved in `ns` nanoseconds as a rate ("812 GB/s"); "-" without time or bytes.
std::string FormatBandwidth(double bytes, double ns);
// "84%", "3.2%", "0.22%": the digits a percentage needs; "?" when not finite.
std::string FormatPercent(double pct);
// "1,234,567".
std::string FormatCount(uint64_t n);

// `s` padded with spaces to `width` columns counted in code points, so a column holding "µs" (two bytes)
// lines up in a text table; right: pad on the left (numbers). printf's %10s counts bytes, so tables use this
// instead.
std::string PadColumn(std::string s, size_t width, bool right);

}  // namespace gt
