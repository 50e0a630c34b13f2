// Level of detail for lanes and counters. Per-frame cost is O(draw items · log n): narrow runs are skipped
// with binary searches over the (sorted) event ends, never walked event by event.
#include "gt/viewer/lod.h"
#include "gt/sat_math.h"

#include "builder_internal.h"
#include "lod_query.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gt::viewer {

std::pair<uint32_t, uint32_t> LaneRange(const Lane& lane, int64_t t0, int64_t t1) {
  return lod_detail::LaneRangeOf(lod_detail::LaneAccess{lane}, t0, t1);
}

static uint32_t Saturate(int64_t v) {
  return v <= 0 ? 0 : v >= int64_t{UINT32_MAX} ? UINT32_MAX : uint32_t(v);
}

void BuildLaneLod(Lane& lane) {
  lane.lod.clear();
  const uint32_t n = lane.size();
  constexpr uint32_t F = kLaneLodFanout;
  if (n <= F) return;
  Column<LodMax> level((n + F - 1) / F);
  detail::BuildLaneLodLevel0(lane, &level, 0, level.size());
  detail::BuildLaneLodUpper(lane, std::move(level));
}

namespace detail {

void BuildLaneLodLevel0(const Lane& lane, Column<LodMax>* level, size_t first_block, size_t last_block) {
  const uint32_t n = lane.size();
  constexpr uint32_t F = kLaneLodFanout;
  last_block = std::min(last_block, level->size());
  if (first_block >= last_block) return;
  int64_t prev_end = first_block == 0 ? lane.start[0] : lane.End(uint32_t(first_block * F - 1));
  for (size_t b = first_block; b < last_block; ++b) {
    uint32_t md = 0, mg = 0;
    for (uint32_t x = uint32_t(b * F); x < std::min<uint64_t>(n, (b + 1) * F); ++x) {
      const uint32_t d = lane.dur[x];
      // Inline end for the common short event; Duration() (out of line, searches long_dur) only for overflow.
      const int64_t e = d == kDurOverflow ? lane.End(x) : lane.start[x] + int64_t{d};
      md = std::max(md, d);  // kDurOverflow already saturates
      mg = std::max(mg, Saturate(lane.start[x] - prev_end));
      prev_end = e;
    }
    (*level)[b] = {md, mg};
  }
}

void BuildLaneLodUpper(Lane& lane, Column<LodMax> level) {
  constexpr uint32_t F = kLaneLodFanout;
  lane.lod.clear();
  while (true) {
    const size_t m = level.size();
    lane.lod.push_back(std::move(level));
    if (m <= F) break;
    const auto& below = lane.lod.back();
    level.assign((m + F - 1) / F, {0, 0});
    for (size_t i = 0; i < m; ++i) {
      auto& p = level[i / F];
      p.first = std::max(p.first, below[i].first);
      p.second = std::max(p.second, below[i].second);
    }
  }
  lane.lod.shrink_to_fit();
}

}  // namespace detail

void QueryLane(const Lane& lane, int64_t t0, int64_t t1, double ns_per_px, std::vector<DrawItem>* out,
               const LodOptions& options) {
  lod_detail::QueryLaneOf(lod_detail::LaneAccess{lane}, t0, t1, ns_per_px, out, options);
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

// First index in [lo, hi) with time >= t, galloping from lo: the answer is usually a few samples ahead.
static uint32_t GallopTime(const std::vector<int64_t>& time, uint32_t lo, uint32_t hi, int64_t t) {
  uint64_t step = 1;
  uint64_t prev = lo;
  while (true) {
    const uint64_t probe = uint64_t{lo} + step - 1;
    if (probe >= hi || time[probe] >= t) {
      const uint64_t end = std::min<uint64_t>(probe, hi);
      return static_cast<uint32_t>(std::lower_bound(time.begin() + prev, time.begin() + end, t) -
                                   time.begin());
    }
    prev = probe + 1;
    step *= 2;
  }
}

// First index in [lo, hi) with time >= t, searched outwards from `guess` (clamped to [lo, hi]).
static uint32_t FindTimeNear(const std::vector<int64_t>& time, uint32_t lo, uint32_t hi, int64_t t,
                             uint64_t guess) {
  guess = std::clamp<uint64_t>(guess, lo, hi);
  if (guess == lo || time[guess - 1] < t) return GallopTime(time, uint32_t(guess), hi, t);
  // The answer is at or before guess - 1 (time[guess - 1] >= t): gallop backwards.
  uint64_t right = guess - 1, step = 1;
  while (true) {
    if (right < uint64_t{lo} + step)
      return static_cast<uint32_t>(std::lower_bound(time.begin() + lo, time.begin() + right, t) -
                                   time.begin());
    const uint64_t probe = right - step;
    if (time[probe] < t)
      return static_cast<uint32_t>(std::lower_bound(time.begin() + probe + 1, time.begin() + right, t) -
                                   time.begin());
    right = probe;
    step *= 2;
  }
}

// Samples a column reads one by one before switching to the pyramid: below this, a sequential pass is cheaper
// than galloping plus the pyramid's partial blocks; above it, the pyramid bounds the cost per column.
static constexpr uint32_t kCounterLinearRun = 16;

void QueryCounter(const CounterTrack& c, int64_t t0, int64_t t1, double ns_per_px,
                  std::vector<CounterColumn>* out) {
  out->clear();
  const uint32_t n = static_cast<uint32_t>(c.time.size());
  if (n == 0 || t1 <= t0 || !(ns_per_px > 0)) return;
  const double span = double(SatSub(t1, t0));
  const int64_t cols = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(span / ns_per_px)));
  auto col_start = [&](int64_t col) {
    const double off = double(col) * ns_per_px;  // below span, so it converts (extreme imported times)
    return col >= cols || off >= span ? t1 : std::min(t1, SatAdd(t0, static_cast<int64_t>(off)));
  };
  const int64_t* time = c.time.data();
  const double* value = c.value.data();
  // j: the first sample at or after the current column's start. One binary search per frame, then it only
  // moves forward (galloping), so a frame reads the samples it shows sequentially instead of binary-searching
  // the whole counter twice per column (which made wasm frames grow with the trace length).
  uint32_t j = static_cast<uint32_t>(std::lower_bound(c.time.begin(), c.time.end(), t0) - c.time.begin());
  int64_t col = 0;
  // Samples in the last column that had any: neighbouring columns hold about as many (dense counters skip the
  // sequential pass and search near where the column should end).
  uint32_t prev_count = 0;
  while (col < cols) {
    const int64_t cs = col_start(col);
    const bool held = j > 0;
    const double hv = held ? value[j - 1] : 0.0;
    if (j >= n || time[j] >= t1) {  // no more samples: the held value runs to the end
      if (held) out->push_back({cs, t1, hv, hv, hv, hv, 0});
      break;
    }
    // The column holding the next sample, consistent with col_start's rounding.
    int64_t cj = std::min(static_cast<int64_t>(double(time[j] - t0) / ns_per_px), cols - 1);
    while (cj + 1 < cols && col_start(cj + 1) <= time[j]) ++cj;
    while (cj > col && col_start(cj) > time[j]) --cj;
    if (cj > col) {  // columns without samples collapse into one flat column
      if (held) out->push_back({cs, col_start(cj), hv, hv, hv, hv, 0});
      col = cj;
      continue;
    }
    const int64_t ce = col_start(col + 1);
    double lo = value[j], hi = value[j];
    uint32_t k = j + 1;
    if (prev_count <= kCounterLinearRun) {
      const uint32_t linear_end = n - j > kCounterLinearRun ? j + kCounterLinearRun : n;
      for (; k < linear_end && time[k] < ce; ++k) lo = std::min(lo, value[k]), hi = std::max(hi, value[k]);
    }
    if (k < n && time[k] < ce) {  // a long run: its end from the previous column's count, then the pyramid
      const uint32_t end = FindTimeNear(c.time, k, n, ce, std::min<uint64_t>(n, uint64_t{j} + prev_count));
      const auto [plo, phi] = CounterMinMax(c, k, end);
      lo = std::min(lo, plo), hi = std::max(hi, phi);
      k = end;
    }
    if (held) lo = std::min(lo, hv), hi = std::max(hi, hv);
    out->push_back({cs, ce, held ? hv : value[j], lo, hi, value[k - 1], k - j});
    prev_count = k - j;
    j = k;
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
    if (s > cursor && double(s) - double(cursor) >= min_ns) out->emplace_back(cursor, s);
    cursor = std::max(cursor, e);
  }
  if (t1 > cursor && double(t1) - double(cursor) >= min_ns) out->emplace_back(cursor, t1);
}

}  // namespace gt::viewer
