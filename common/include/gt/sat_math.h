// Saturating int64 arithmetic for times and durations read from untrusted traces: a JSON trace may carry any
// int64 nanosecond value, so sums of durations and differences of extents must clamp instead of overflowing.
#pragma once

#include <cstdint>
#include <limits>

namespace gt {

inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

inline int64_t SatSub(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

}  // namespace gt
