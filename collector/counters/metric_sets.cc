#include "counters/metric_sets.h"

#include <algorithm>

namespace gt::counters {
namespace {

struct SetName {
  const char* name;
  uint32_t bits;
};
constexpr SetName kSetNames[] = {
    {"roofline", kSetRoofline}, {"stalls", kSetStalls}, {"occupancy", kSetOccupancy}, {"access", kSetAccess},
    {"sol", kSetSol},           {"hmma", kSetHmma},     {"default", kDefaultSets},    {"all", kAllSets},
};

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

const std::vector<std::string>& StallReasons() {
  // The vocabulary lists the reasons in display order; the range profiler has always been configured with
  // long_scoreboard first and the rest alphabetically, and keeps that order (it decides the metric order of
  // the config image).
  static const std::vector<std::string> kReasons = [] {
    std::vector<std::string> keys;
    for (const auto& r : StallReasonVocabulary()) keys.emplace_back(r.key);
    std::sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) {
      if ((a == "long_scoreboard") != (b == "long_scoreboard")) return a == "long_scoreboard";
      return a < b;
    });
    return keys;
  }();
  return kReasons;
}

StatusOr<uint32_t> ParseCounterSets(std::string_view spec) {
  if (Trim(spec).empty()) return kDefaultSets;
  uint32_t bits = 0;
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string word = Trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (word.empty()) continue;
    bool found = false;
    for (const auto& s : kSetNames) {
      if (word == s.name) {
        bits |= s.bits;
        found = true;
      }
    }
    if (!found) {
      std::string valid;
      for (const auto& s : kSetNames) valid += std::string(valid.empty() ? "" : ", ") + s.name;
      return InvalidArgument("unknown counter set '" + word + "' (valid: " + valid + ")");
    }
  }
  if (bits == 0) return kDefaultSets;
  return bits;
}

std::string CounterSetsToString(uint32_t sets) {
  if (sets == kAllSets) return "all";
  if (sets == kDefaultSets) return "default";
  std::string out;
  for (const auto& s : kSetNames) {
    if (s.bits == kDefaultSets || s.bits == kAllSets) continue;
    if (sets & s.bits) out += std::string(out.empty() ? "" : ",") + s.name;
  }
  return out;
}

std::vector<std::string> MetricsForSets(uint32_t sets) {
  std::vector<std::string> out;
  auto add = [&](const char* m) {
    if (std::find(out.begin(), out.end(), m) == out.end()) out.emplace_back(m);
  };
  // Every set needs the time: it is what the roofline sizes points by and what the cost report compares.
  add(metric::kTime);
  if (sets & kSetRoofline) {
    for (const char* m : kRooflineMetrics) add(m);
    for (const char* m : kPeakMetrics) add(m);
  }
  if (sets & kSetStalls) {
    add(metric::kIssued);
    for (const auto& r : StallReasons()) add(StallMetricName(r).c_str());
  }
  if (sets & kSetOccupancy)
    for (const char* m : kOccupancyMetrics) add(m);
  if (sets & kSetAccess)
    for (const char* m : kAccessMetrics) add(m);
  if (sets & kSetSol)
    for (const char* m : kSolMetrics) add(m);
  if (sets & kSetHmma)
    for (const char* m : kHmmaMetrics) add(m);
  return out;
}

}  // namespace gt::counters
