// Human-readable numbers for the UI: durations with adaptive units, bytes, bandwidth, counts.
#pragma once

#include <cstdint>
#include <string>

namespace gt::ui {

// "1.23 ms", "850 ns", "2.000 s"; `precision` significant digits after the point.
std::string FormatDuration(double ns, int precision = 2);
// A ruler label: the step decides the unit, so labels along one ruler share it ("12.5 ms", "12.6 ms").
std::string FormatRulerTime(double ns, double step_ns);
std::string FormatBytes(uint64_t bytes);
std::string FormatBandwidth(double bytes_per_second);
std::string FormatCount(uint64_t n);  // "1,234,567"

}  // namespace gt::ui
