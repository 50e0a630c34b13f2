// Clock alignment. The trace clock is CLOCK_MONOTONIC in nanoseconds. CUPTI is asked to stamp every record
// with it (cuptiActivityRegisterTimestampCallback); when that is unavailable, CUPTI stamps CLOCK_REALTIME and
// the injection measures the offset between the two clocks with bracketed reads and shifts every record.
#pragma once

#include <cstdint>
#include <vector>

namespace gt::decode {

// One bracketed read: reference clock before, other clock, reference clock after.
struct ClockSample {
  int64_t ref_before = 0;
  int64_t other = 0;
  int64_t ref_after = 0;
};

struct ClockOffset {
  int64_t offset_ns = 0;       // ref = other + offset_ns
  int64_t uncertainty_ns = 0;  // half the tightest bracket
  bool valid = false;
};

// Picks the tightest bracket (least likely to have been preempted) and assumes `other` was read at its
// middle. Brackets with ref_after < ref_before are ignored.
ClockOffset EstimateOffset(const std::vector<ClockSample>& samples);

// Reads `n` bracketed samples of (CLOCK_MONOTONIC, `other_clock_id`).
std::vector<ClockSample> SampleClocks(int other_clock_id, int n);

}  // namespace gt::decode
