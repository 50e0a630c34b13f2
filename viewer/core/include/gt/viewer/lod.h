// Level of detail: what to draw for one lane or counter over [t0, t1) at a given zoom, in O(screen width ·
// log n).
//
// A lane query returns draw items in time order: single events, or merged blocks of consecutive events that
// are each narrower than min_px and separated by gaps narrower than gap_px. Every event overlapping the range
// appears in exactly one item; none outside does (tests/viewer/lod_test.cc checks it exhaustively).
#pragma once

#include <cstdint>
#include <vector>

#include "gt/viewer/model.h"

namespace gt::viewer {

struct LodOptions {
  double min_px = 3.0;  // events narrower than this fold into merged blocks
  double gap_px = 1.0;  // ... when the gaps between them are narrower than this
};

struct DrawItem {
  int64_t start = 0;   // first event's start
  int64_t end = 0;     // last event's end (max end in the block)
  uint32_t first = 0;  // index of the first event in the lane
  uint32_t count = 1;  // 1 = the single event `first`; >1 = merged block [first, first + count)
  bool merged() const { return count > 1; }
  friend bool operator==(const DrawItem&, const DrawItem&) = default;
};

// An event overlaps [t0, t1) when start < t1 and end >= t0 (zero-length events at t0 count).
// Appends to *out (cleared first). ns_per_px > 0.
void QueryLane(const Lane& lane, int64_t t0, int64_t t1, double ns_per_px, std::vector<DrawItem>* out,
               const LodOptions& options = {});

// Builds lane.lod (the builder does this for every lane). Without it QueryLane falls back to galloping
// searches: same result, cost O(pixels · log n) instead of O(items · log n).
void BuildLaneLod(Lane& lane);

// Index range [first, last) of the events of `lane` overlapping [t0, t1).
std::pair<uint32_t, uint32_t> LaneRange(const Lane& lane, int64_t t0, int64_t t1);

// One pixel column (or a run of columns with no samples in between) of a counter: the value held at t0
// (`first`), min and max over the column, and the value at its end (`last`).
struct CounterColumn {
  int64_t t0 = 0, t1 = 0;
  double first = 0, min = 0, max = 0, last = 0;
  uint32_t samples = 0;  // samples inside the column
};

// Folds the samples of `counter` over [t0, t1) into columns of ns_per_px width. One O(log n) search, then per
// column O(log k) for its k samples (a sequential pass while k is small, the pyramid beyond): the cost
// follows the screen, not the counter's length.
void QueryCounter(const CounterTrack& counter, int64_t t0, int64_t t1, double ns_per_px,
                  std::vector<CounterColumn>* out);

// Min/max of samples [first, last) via the pyramid: O(log n).
std::pair<double, double> CounterMinMax(const CounterTrack& counter, uint32_t first, uint32_t last);

// Intervals of [t0, t1) of at least min_px where no kernel/memcpy/memset of `device_id` runs, computed from
// the folded stream lanes (so O(screen) per frame; merged blocks only hide gaps < gap_px, so every reported
// gap is real and every gap >= gap_px is reported).
void QueryIdleGaps(const TraceModel& model, uint32_t device_id, int64_t t0, int64_t t1, double ns_per_px,
                   std::vector<std::pair<int64_t, int64_t>>* out, double min_px = 1.0);

}  // namespace gt::viewer
