#include "decode/clock.h"

#include <time.h>

namespace gt::decode {

ClockOffset EstimateOffset(const std::vector<ClockSample>& samples) {
  ClockOffset best;
  int64_t best_width = INT64_MAX;
  for (const auto& s : samples) {
    int64_t width = s.ref_after - s.ref_before;
    if (width < 0 || width >= best_width) continue;
    best_width = width;
    int64_t mid = s.ref_before + width / 2;
    best.offset_ns = mid - s.other;
    best.uncertainty_ns = (width + 1) / 2;
    best.valid = true;
  }
  return best;
}

static int64_t Read(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

std::vector<ClockSample> SampleClocks(int other_clock_id, int n) {
  std::vector<ClockSample> out;
  out.reserve(n);
  for (int i = 0; i < n; ++i) {
    ClockSample s;
    s.ref_before = Read(CLOCK_MONOTONIC);
    s.other = Read(static_cast<clockid_t>(other_clock_id));
    s.ref_after = Read(CLOCK_MONOTONIC);
    out.push_back(s);
  }
  return out;
}

}  // namespace gt::decode
