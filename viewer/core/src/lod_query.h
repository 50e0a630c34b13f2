// Internal: QueryLane and LaneRange as templates over how a lane's values are read, so that the loaded model
// (Column arrays) and a mapped index (compressed blocks read through a cache, index_blocks.h) fold with one
// algorithm. `L` provides size(), Start(i), End(i), Duration(i), LowerBoundStart(t), lod_levels(),
// lod_size(k) and Lod(k, b).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gt/sat_math.h"
#include "gt/viewer/lod.h"
#include "gt/viewer/model.h"

namespace gt::viewer::lod_detail {

// A loaded lane as QueryLaneOf's accessor.
struct LaneAccess {
  const Lane& l;
  uint32_t size() const { return l.size(); }
  int64_t Start(uint32_t i) const { return l.start[i]; }
  int64_t End(uint32_t i) const { return l.End(i); }
  int64_t Duration(uint32_t i) const { return l.Duration(i); }
  uint32_t LowerBoundStart(int64_t t) const {
    return uint32_t(std::lower_bound(l.start.begin(), l.start.end(), t) - l.start.begin());
  }
  size_t lod_levels() const { return l.lod.size(); }
  size_t lod_size(size_t k) const { return l.lod[k].size(); }
  LodMax Lod(size_t k, size_t b) const { return l.lod[k][b]; }
};

// First index in [lo, hi) whose end is >= t (ends ascend because events in a lane are disjoint).
template <class L>
uint32_t FirstEndingAtOrAfter(const L& lane, uint32_t lo, uint32_t hi, int64_t t) {
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (lane.End(mid) < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Same as FirstEndingAtOrAfter, galloping from lo: the answer is usually a few events away, and probing near
// lo stays in cache where a binary search over the whole lane would miss on every probe (flat cost at 100 M
// events).
template <class L>
uint32_t GallopEndingAtOrAfter(const L& lane, uint32_t lo, uint32_t hi, int64_t t) {
  uint64_t step = 1;
  uint32_t prev = lo;
  while (true) {
    const uint64_t probe = uint64_t{lo} + step - 1;
    if (probe >= hi) return FirstEndingAtOrAfter(lane, prev, hi, t);
    if (lane.End(uint32_t(probe)) >= t) return FirstEndingAtOrAfter(lane, prev, uint32_t(probe), t);
    prev = uint32_t(probe) + 1;
    step *= 2;
  }
}

template <class L>
std::pair<uint32_t, uint32_t> LaneRangeOf(const L& lane, int64_t t0, int64_t t1) {
  const uint32_t last = lane.LowerBoundStart(t1);
  uint32_t first = FirstEndingAtOrAfter(lane, 0, last, t0);
  return {first, last};
}

// The first index x in [from, last) that breaks a merged block: a duration >= min_ns or a gap to x-1 >=
// gap_ns (from >= 1). `last` when none. Uses the lane's max pyramid: whole blocks below both thresholds are
// skipped.
template <class L>
class BreakFinder {
 public:
  BreakFinder(const L& lane, int64_t min_ns, int64_t gap_ns)
      : lane_(lane),
        min_ns_(min_ns),
        gap_ns_(gap_ns),
        min_sat_(uint32_t(std::min<int64_t>(min_ns, UINT32_MAX))),
        gap_sat_(uint32_t(std::min<int64_t>(gap_ns, UINT32_MAX))) {}

  bool Breaks(uint32_t x) const {
    return lane_.Duration(x) >= min_ns_ || lane_.Start(x) - lane_.End(x - 1) >= gap_ns_;
  }
  bool MayBreak(const LodMax& p) const { return p.first >= min_sat_ || p.second >= gap_sat_; }

  uint32_t Find(uint32_t from, uint32_t last) const {
    constexpr uint64_t F = kLaneLodFanout;
    uint64_t pos = from;
    for (; pos < last && pos % F; ++pos)
      if (Breaks(uint32_t(pos))) return uint32_t(pos);
    const size_t levels = lane_.lod_levels();
    if (levels == 0) {
      for (; pos < last; ++pos)
        if (Breaks(uint32_t(pos))) return uint32_t(pos);
      return last;
    }
    size_t lvl = 0;
    uint64_t span = F;  // events per block at lvl
    while (pos < last) {
      const uint64_t b = pos / span;
      if (b >= lane_.lod_size(lvl)) return last;
      if (MayBreak(lane_.Lod(lvl, b))) {
        if (lvl == 0) {
          const uint64_t end = std::min<uint64_t>(last, pos + F);
          for (; pos < end; ++pos)
            if (Breaks(uint32_t(pos))) return uint32_t(pos);
          // Saturation made the block look breaking; go on past it.
        } else {
          --lvl;
          span /= F;
          continue;
        }
      } else {
        pos += span;
      }
      while (lvl + 1 < levels && pos % (span * F) == 0) ++lvl, span *= F;
    }
    return last;
  }

 private:
  const L& lane_;
  int64_t min_ns_, gap_ns_;
  uint32_t min_sat_, gap_sat_;
};

template <class L>
void QueryLaneOf(const L& lane, int64_t t0, int64_t t1, double ns_per_px, std::vector<DrawItem>* out,
                 const LodOptions& options) {
  out->clear();
  if (t1 <= t0 || lane.size() == 0 || !(ns_per_px > 0)) return;
  const double min_d = options.min_px * ns_per_px;
  const double gap_d = std::max(0.0, options.gap_px * ns_per_px);
  // Integer thresholds: a duration d is "narrow" when d < min_ns, a gap g is small when g < gap_ns.
  const int64_t min_ns = min_d >= 9e18 ? INT64_MAX : static_cast<int64_t>(std::ceil(min_d));
  const int64_t gap_ns = gap_d >= 9e18 ? INT64_MAX / 4 : static_cast<int64_t>(std::ceil(gap_d));
  auto [i, last] = LaneRangeOf(lane, t0, t1);
  if (lane.lod_levels() != 0) {
    // A block runs from a narrow event to the first event that is wide or follows a gap >= gap_ns.
    const BreakFinder<L> finder(lane, min_ns, gap_ns);
    while (i < last) {
      const int64_t s = lane.Start(i);
      const int64_t e = lane.End(i);
      if (e - s >= min_ns) {
        out->push_back({s, e, i, 1});
        ++i;
        continue;
      }
      const uint32_t j = finder.Find(i + 1, last);
      out->push_back({s, j - 1 > i ? lane.End(j - 1) : e, i, j - i});
      i = j;
    }
    return;
  }
  while (i < last) {
    const int64_t s = lane.Start(i);
    int64_t blk_end = lane.End(i);
    if (blk_end - s >= min_ns) {
      out->push_back({s, blk_end, i, 1});
      ++i;
      continue;
    }
    uint32_t j = i + 1;
    while (j < last) {
      // Jump over every event ending within gap_ns of the block end: each is narrower than gap_ns and starts
      // less than gap_ns after its predecessor's end, so it merges; this is what keeps the cost per pixel.
      const int64_t target = blk_end > INT64_MAX - gap_ns ? INT64_MAX : blk_end + gap_ns;
      uint32_t k = GallopEndingAtOrAfter(lane, j, last, target);
      if (k > j) {
        blk_end = std::max(blk_end, lane.End(k - 1));
        j = k;
        if (j >= last) break;
      }
      const int64_t sj = lane.Start(j), ej = lane.End(j);
      if (SatSub(ej, sj) < min_ns &&
          SatSub(sj, blk_end) < gap_ns) {  // one more narrow event after a small gap
        blk_end = std::max(blk_end, ej);
        ++j;
        continue;
      }
      break;
    }
    out->push_back({s, blk_end, i, j - i});
    i = j;
  }
}

}  // namespace gt::viewer::lod_detail
