// Level of detail for lanes and counters. Per-frame cost is O(draw items · log n): narrow runs are skipped
// with binary searches over the (sorted) event ends, never walked event by event.
#include "gt/viewer/lod.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gt::viewer {

// First index in [lo, hi) whose end is >= t (ends ascend because events in a lane are disjoint).
static uint32_t FirstEndingAtOrAfter(const Lane& lane, uint32_t lo, uint32_t hi, int64_t t) {
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (lane.End(mid) < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

std::pair<uint32_t, uint32_t> LaneRange(const Lane& lane, int64_t t0, int64_t t1) {
  uint32_t last =
      static_cast<uint32_t>(std::lower_bound(lane.start.begin(), lane.start.end(), t1) - lane.start.begin());
  uint32_t first = FirstEndingAtOrAfter(lane, 0, last, t0);
  return {first, last};
}

void QueryLane(const Lane& lane, int64_t t0, int64_t t1, double ns_per_px, std::vector<DrawItem>* out,
               const LodOptions& options) {
  out->clear();
  if (t1 <= t0 || lane.size() == 0 || !(ns_per_px > 0)) return;
  const double min_d = options.min_px * ns_per_px;
  const double gap_d = std::max(0.0, options.gap_px * ns_per_px);
  // Integer thresholds: a duration d is "narrow" when d < min_ns, a gap g is small when g < gap_ns.
  const int64_t min_ns = min_d >= 9e18 ? INT64_MAX : static_cast<int64_t>(std::ceil(min_d));
  const int64_t gap_ns = gap_d >= 9e18 ? INT64_MAX / 4 : static_cast<int64_t>(std::ceil(gap_d));
  auto [i, last] = LaneRange(lane, t0, t1);
  while (i < last) {
    const int64_t s = lane.start[i];
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
      uint32_t k = FirstEndingAtOrAfter(lane, j, last, target);
      if (k > j) {
        blk_end = std::max(blk_end, lane.End(k - 1));
        j = k;
        if (j >= last) break;
      }
      const int64_t sj = lane.start[j], ej = lane.End(j);
      if (ej - sj < min_ns && sj - blk_end < gap_ns) {  // one more narrow event after a small gap
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

// -----------------------------------------------------------------------------------------------------------------
// Counters
// -----------------------------------------------------------------------------------------------------------------

std::pair<double, double> CounterMinMax(const CounterTrack& c, uint32_t first, uint32_t last) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  auto take = [&](double a, double b) { lo = std::min(lo, a), hi = std::max(hi, b); };
  last = std::min<uint32_t>(last, static_cast<uint32_t>(c.value.size()));
  uint64_t a = first, b = last;
  const uint32_t F = kCounterFanout;
  // Level -1: raw samples until aligned to a level-0 block.
  while (a < b && a % F) take(c.value[a], c.value[a]), ++a;
  while (b > a && b % F) --b, take(c.value[b], c.value[b]);
  if (c.levels.empty()) {
    for (; a < b; ++a) take(c.value[a], c.value[a]);
    return {lo, hi};
  }
  a /= F, b /= F;
  for (size_t level = 0; a < b; ++level) {
    const auto& arr = c.levels[level];
    if (level + 1 == c.levels.size()) {
      for (; a < b && a < arr.size(); ++a) take(arr[a].first, arr[a].second);
      break;
    }
    while (a < b && a % F) take(arr[a].first, arr[a].second), ++a;
    while (b > a && b % F) --b, take(arr[b].first, arr[b].second);
    a /= F, b /= F;
  }
  return {lo, hi};
}

void QueryCounter(const CounterTrack& c, int64_t t0, int64_t t1, double ns_per_px,
                  std::vector<CounterColumn>* out) {
  out->clear();
  const uint32_t n = static_cast<uint32_t>(c.time.size());
  if (n == 0 || t1 <= t0 || !(ns_per_px > 0)) return;
  const double span = double(t1 - t0);
  const int64_t cols = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(span / ns_per_px)));
  auto col_start = [&](int64_t col) {
    return col >= cols ? t1 : std::min(t1, t0 + static_cast<int64_t>(double(col) * ns_per_px));
  };
  int64_t col = 0;
  while (col < cols) {
    const int64_t cs = col_start(col);
    uint32_t j0 = static_cast<uint32_t>(std::lower_bound(c.time.begin(), c.time.end(), cs) - c.time.begin());
    const bool held = j0 > 0;
    const double hv = held ? c.value[j0 - 1] : 0.0;
    if (j0 >= n || c.time[j0] >= t1) {  // no more samples: the held value runs to the end
      if (held) out->push_back({cs, t1, hv, hv, hv, hv, 0});
      break;
    }
    // The column holding the next sample, consistent with col_start's rounding.
    int64_t cj = std::min(static_cast<int64_t>(double(c.time[j0] - t0) / ns_per_px), cols - 1);
    while (cj + 1 < cols && col_start(cj + 1) <= c.time[j0]) ++cj;
    while (cj > col && col_start(cj) > c.time[j0]) --cj;
    if (cj > col) {  // columns without samples collapse into one flat column
      if (held) out->push_back({cs, col_start(cj), hv, hv, hv, hv, 0});
      col = cj;
      continue;
    }
    const int64_t ce = col_start(col + 1);
    uint32_t j1 =
        static_cast<uint32_t>(std::lower_bound(c.time.begin() + j0, c.time.end(), ce) - c.time.begin());
    auto [lo, hi] = CounterMinMax(c, j0, j1);
    if (held) lo = std::min(lo, hv), hi = std::max(hi, hv);
    out->push_back({cs, ce, held ? hv : c.value[j0], lo, hi, c.value[j1 - 1], j1 - j0});
    ++col;
  }
}

// -----------------------------------------------------------------------------------------------------------------
// Idle gaps
// -----------------------------------------------------------------------------------------------------------------

void QueryIdleGaps(const TraceModel& model, uint32_t device_id, int64_t t0, int64_t t1, double ns_per_px,
                   std::vector<std::pair<int64_t, int64_t>>* out, double min_px) {
  out->clear();
  const DeviceSummary* dev = nullptr;
  for (const auto& d : model.device_summaries)
    if (d.device_id == device_id) dev = &d;
  if (!dev || !(ns_per_px > 0)) return;
  t0 = std::max(t0, dev->first_ns);
  t1 = std::min(t1, dev->last_ns);
  if (t1 <= t0) return;
  std::vector<std::pair<int64_t, int64_t>> busy;
  std::vector<DrawItem> items;
  for (const Track& t : model.tracks) {
    if (t.kind != TrackKind::kGpuStream || t.device_id != device_id) continue;
    for (uint32_t d = 0; d < t.lane_count; ++d) {
      QueryLane(model.lanes[t.first_lane + d], t0, t1, ns_per_px, &items);
      for (const auto& it : items) busy.emplace_back(it.start, it.end);
    }
  }
  std::sort(busy.begin(), busy.end());
  const double min_ns = min_px * ns_per_px;
  int64_t cursor = t0;
  for (const auto& [s, e] : busy) {
    if (s > cursor && double(s - cursor) >= min_ns) out->emplace_back(cursor, s);
    cursor = std::max(cursor, e);
  }
  if (t1 > cursor && double(t1 - cursor) >= min_ns) out->emplace_back(cursor, t1);
}

}  // namespace gt::viewer
