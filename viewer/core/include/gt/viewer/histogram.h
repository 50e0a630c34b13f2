// Duration histogram of one kernel name (the kernel table's "Histogram"): log-scale bins of its instances'
// durations, percentiles, and which instances fall in a bin (click a bin: select / zoom to them).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gt/viewer/model.h"

namespace gt::viewer {

struct DurationHistogram {
  struct Bin {
    int64_t lo_ns = 0, hi_ns = 0;  // [lo, hi)
    uint64_t count = 0;
  };
  std::vector<Bin> bins;  // contiguous, ascending, from the bin of the shortest to that of the longest
  uint64_t total = 0;
  int64_t min_ns = 0, max_ns = 0;
  int64_t p50_ns = 0, p90_ns = 0, p99_ns = 0;  // nearest-rank percentiles of the durations
  double mean_ns = 0;
  // The bin holding duration d; -1 when outside every bin (or no bins).
  int BinOf(int64_t d) const;
};

// Bin edges are 10^(k / bins_per_decade) ns rounded to whole ns (distinct edges only; a duration of 0 falls
// in [0, 1)). bins_per_decade is clamped to 1..20. Durations need not be sorted.
DurationHistogram BuildDurationHistogram(std::span<const int64_t> durations_ns, int bins_per_decade = 5);
// Nearest-rank percentile (0 < p <= 100) of sorted values; 0 when empty.
int64_t Percentile(std::span<const int64_t> sorted_ns, double p);

// The histogram of kernel `name`'s instances (KernelInstances: every GPU stream, time order), and the
// instances whose duration falls in bin `bin` (time order).
DurationHistogram KernelDurationHistogram(const TraceModel& model, StringId name, int bins_per_decade = 5);
std::vector<EventId> InstancesInBin(const TraceModel& model, StringId name, const DurationHistogram& h,
                                    int bin);

}  // namespace gt::viewer
