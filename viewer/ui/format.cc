#include "ui/format.h"

#include <cmath>
#include <cstdio>

namespace gt::ui {

std::string FormatDuration(double ns, int precision) {
  char buf[48];
  const double a = std::fabs(ns);
  if (a < 1e3)
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (a < 1e6)
    std::snprintf(buf, sizeof buf, "%.*f \u00b5s", precision,
                  ns / 1e3);  // µs, as the details panel writes it
  else if (a < 1e9)
    std::snprintf(buf, sizeof buf, "%.*f ms", precision, ns / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.*f s", precision + 1, ns / 1e9);
  return buf;
}

std::string FormatRulerTime(double ns, double step_ns) {
  struct Unit {
    double scale;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{1, "ns"}, {1e3, "\u00b5s"}, {1e6, "ms"}, {1e9, "s"}};
  // The largest unit in which the step is still >= 0.1 ("3.5 ms" rather than "3500 us"), so labels stay
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

std::string FormatBytes(uint64_t bytes) {
  char buf[48];
  const double b = static_cast<double>(bytes);
  if (bytes < 1024)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else if (b < 1024.0 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f KiB", b / 1024);
  else if (b < 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f MiB", b / (1024.0 * 1024));
  else
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024 * 1024));
  return buf;
}

std::string FormatBandwidth(double bytes_per_second) {
  char buf[48];
  if (!(bytes_per_second > 0))
    std::snprintf(buf, sizeof buf, "n/a");
  else if (bytes_per_second < 1e6)
    std::snprintf(buf, sizeof buf, "%.1f KB/s", bytes_per_second / 1e3);
  else if (bytes_per_second < 1e9)
    std::snprintf(buf, sizeof buf, "%.1f MB/s", bytes_per_second / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.2f GB/s", bytes_per_second / 1e9);
  return buf;
}

std::string FormatCount(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace gt::ui
