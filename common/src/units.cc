#include "gt/units.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace gt {
namespace {

// `v` (>= 0) with three significant digits: "%.2f" below 10, "%.1f" below 100, else "%.0f".
int DecimalsFor(double v) {
  return v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
}

}  // namespace

std::string FormatDuration(double ns) {
  char buf[48];
  if (!std::isfinite(ns)) return "-";
  const char* sign = ns < 0 ? "-" : "";
  const double a = std::fabs(ns);
  if (a < 999.5) {
    std::snprintf(buf, sizeof buf, "%s%.0f ns", sign, a);
    return buf;
  }
  if (a >= 999.5e6) {
    std::snprintf(buf, sizeof buf, "%s%.3f s", sign, a / 1e9);
    return buf;
  }
  const bool micro = a < 999.5e3;
  const double v = micro ? a / 1e3 : a / 1e6;
  std::snprintf(buf, sizeof buf, "%s%.*f %s", sign, DecimalsFor(v), v, micro ? "\u00b5s" : "ms");
  // %.3g without the exponent: "12.4", "1.00" -> drop zeros only where %.3g would ("1 µs", "12.4 µs").
  std::string s = buf;
  const size_t dot = s.find('.');
  if (dot != std::string::npos) {
    size_t end = s.find(' ', dot);
    size_t last = end;
    while (last > dot + 1 && s[last - 1] == '0') --last;
    if (last == dot + 1) --last;  // "1." -> "1"
    s.erase(last, end - last);
  }
  return s;
}

std::string FormatRulerTime(double ns, double step_ns) {
  struct Unit {
    double scale;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{1, "ns"}, {1e3, "\u00b5s"}, {1e6, "ms"}, {1e9, "s"}};
  // The largest unit in which the step is still >= 0.1 ("3.5 ms" rather than "3500 µs"), so labels stay
  // short.
  const Unit* unit = &kUnits[0];
  for (const Unit& u : kUnits)
    if (step_ns * 10 >= u.scale) unit = &u;
  const double step_in_unit = step_ns / unit->scale;
  int decimals = 0;
  while (decimals < 6 && std::fabs(step_in_unit * std::pow(10.0, decimals) -
                                   std::round(step_in_unit * std::pow(10.0, decimals))) > 1e-6)
    ++decimals;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, ns / unit->scale, unit->name);
  return buf;
}

std::string FormatBytes(double bytes) {
  char buf[48];
  if (!std::isfinite(bytes)) return "-";
  if (std::fabs(bytes) < 1024) {
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
    return buf;
  }
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = bytes / 1024;
  int u = 0;
  while (std::fabs(v) >= 1023.5 && u < 5) v /= 1024, ++u;
  std::snprintf(buf, sizeof buf, "%.*f %s", DecimalsFor(std::fabs(v)), v, kUnits[u]);
  return buf;
}

std::string FormatRate(double v, const char* unit) {
  if (!std::isfinite(v)) return "-";
  static const char* const kPrefix[] = {"", "K", "M", "G", "T", "P", "E"};
  int i = 0;
  double a = std::fabs(v);
  while (a >= 999.5 && i < 6) {
    a /= 1000;
    v /= 1000;
    ++i;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f %s%s", DecimalsFor(a), v, kPrefix[i], unit);
  return buf;
}

std::string FormatBandwidth(double bytes, double ns) {
  if (!(bytes > 0) || !(ns > 0)) return "-";
  return FormatRate(bytes / ns * 1e9, "B/s");
}

std::string FormatPercent(double pct) {
  char buf[32];
  if (!std::isfinite(pct)) return "?";
  if (pct >= 9.95 || pct == 0)
    std::snprintf(buf, sizeof buf, "%.0f%%", pct);
  else if (pct >= 0.995)
    std::snprintf(buf, sizeof buf, "%.1f%%", pct);
  else
    std::snprintf(buf, sizeof buf, "%.2f%%", pct);
  return buf;
}

std::string FormatCount(uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string PadColumn(std::string s, size_t width, bool right) {
  size_t cps = 0;
  for (unsigned char c : s) cps += (c & 0xC0) != 0x80;
  if (cps >= width) return s;
  return right ? std::string(width - cps, ' ') + s : s + std::string(width - cps, ' ');
}

}  // namespace gt
