// Level of detail: exhaustive randomized checks that folding loses and duplicates nothing, that the number of
// draw items depends on the screen and not on the event count, and that counter folding matches brute force.
#include <catch2/catch.hpp>
#include <cmath>

#include "gt/viewer/lod.h"
#include "synth_trace.h"
#include "test_util.h"

using namespace gt;
using namespace gt::viewer;

// A random disjoint lane: clusters of tiny events, wide events, zero-length events, huge (overflow) events.
static Lane RandomLane(gt::synth::Rng& rng, uint32_t n) {
  Lane l;
  int64_t t = int64_t(rng.Below(1000));
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t mode = rng.Below(100);
    int64_t gap = mode < 60 ? rng.Below(5) : mode < 90 ? rng.Below(2000) : rng.Below(1000000);
    int64_t dur = mode < 50 ? rng.Below(10) : mode < 95 ? rng.Below(50000) : mode < 99 ? 0 : 5'000'000'000ll;
    t += gap;
    l.start.push_back(t);
    if (dur >= int64_t(kDurOverflow)) {
      l.dur.push_back(kDurOverflow);
      l.long_dur.emplace_back(i, dur);
    } else {
      l.dur.push_back(uint32_t(dur));
    }
    l.name.push_back(1);
    l.ref.push_back(0);
    t += dur;
  }
  return l;
}

// `l` has its LOD pyramid; `plain` is the same lane without (the galloping fallback). Both must agree.
static void CheckLod(const Lane& l, const Lane& plain, int64_t t0, int64_t t1, double nspx,
                     const LodOptions& opt) {
  std::vector<DrawItem> items, fallback;
  QueryLane(l, t0, t1, nspx, &items, opt);
  QueryLane(plain, t0, t1, nspx, &fallback, opt);
  REQUIRE(items == fallback);
  // Expected set: events overlapping [t0, t1) per the header's rule.
  std::vector<uint32_t> expected;
  for (uint32_t i = 0; i < l.size(); ++i)
    if (l.start[i] < t1 && l.End(i) >= t0) expected.push_back(i);
  std::vector<uint32_t> got;
  const int64_t min_ns = int64_t(std::ceil(opt.min_px * nspx));
  const int64_t gap_ns = int64_t(std::ceil(opt.gap_px * nspx));
  for (const DrawItem& it : items) {
    REQUIRE(it.count >= 1);
    REQUIRE(it.start == l.start[it.first]);
    int64_t max_end = INT64_MIN;
    for (uint32_t k = 0; k < it.count; ++k) {
      got.push_back(it.first + k);
      max_end = std::max(max_end, l.End(it.first + k));
      if (it.count > 1) {
        // Merged members are narrow and separated by small gaps.
        REQUIRE(l.Duration(it.first + k) < min_ns);
        if (k > 0) REQUIRE(l.start[it.first + k] - l.End(it.first + k - 1) < gap_ns);
      }
    }
    REQUIRE(it.end == max_end);
  }
  // Exactly once, in order, nothing outside.
  REQUIRE(got == expected);
  // Screen-bound: items never exceed about one per pixel (plus partially visible edges).
  const double px = double(t1 - t0) / nspx;
  REQUIRE(double(items.size()) <= 2.0 * px + 4.0);
}

TEST_CASE("LOD: every event in range appears in exactly one draw item (randomized)", "[lod]") {
  gt::synth::Rng rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    Lane plain = RandomLane(rng, 1 + rng.Below(trial < 200 ? 300 : 20000));
    Lane l = plain;
    BuildLaneLod(l);
    REQUIRE((l.size() <= kLaneLodFanout || !l.lod.empty()));
    const int64_t lo = l.start.front() - 1000, hi = l.End(l.size() - 1) + 1000;
    for (int q = 0; q < 20; ++q) {
      int64_t a = lo + int64_t(rng.Next() % uint64_t(hi - lo));
      int64_t b = lo + int64_t(rng.Next() % uint64_t(hi - lo));
      if (a > b) std::swap(a, b);
      if (a == b) ++b;
      if (q == 0) a = lo, b = hi;  // full zoom-out
      double width = 50 + rng.Below(3000);
      double nspx = std::max(0.001, double(b - a) / width);
      LodOptions opt;
      if (q % 5 == 1) opt.min_px = 1.0, opt.gap_px = 0.5;
      CheckLod(l, plain, a, b, nspx, opt);
    }
  }
}

TEST_CASE("LOD: item count depends on the screen, not on the number of events", "[lod]") {
  gt::synth::Rng rng(99);
  Lane small = RandomLane(rng, 1000), big = RandomLane(rng, 1000000);
  BuildLaneLod(small);
  BuildLaneLod(big);
  std::vector<DrawItem> a, b;
  auto full = [](const Lane& l) { return std::make_pair(l.start.front(), l.End(l.size() - 1)); };
  auto [s0, s1] = full(small);
  auto [b0, b1] = full(big);
  QueryLane(small, s0, s1 + 1, double(s1 - s0) / 2000, &a);
  QueryLane(big, b0, b1 + 1, double(b1 - b0) / 2000, &b);
  CHECK(b.size() <= 4004);
  CHECK(a.size() <= 4004);
  uint64_t covered = 0;
  for (const auto& it : b) covered += it.count;
  CHECK(covered == big.size());
}

TEST_CASE("LOD: empty ranges and degenerate inputs", "[lod]") {
  Lane l;
  std::vector<DrawItem> items{{1, 2, 3, 4}};
  QueryLane(l, 0, 100, 1.0, &items);
  CHECK(items.empty());
  l.start = {10, 20};
  l.dur = {5, 5};
  l.name = {1, 1};
  l.ref = {0, 0};
  QueryLane(l, 100, 50, 1.0, &items);
  CHECK(items.empty());
  QueryLane(l, 0, 100, 0.0, &items);
  CHECK(items.empty());
  QueryLane(l, 15, 20, 0.01, &items);  // ends at 15 touches t0: included; starts at 20 = t1: excluded
  REQUIRE(items.size() == 1);
  CHECK(items[0].first == 0);
  auto [a, b] = LaneRange(l, 16, 19);
  CHECK(a == b);
}

static CounterTrack RandomCounter(gt::synth::Rng& rng, uint32_t n) {
  CounterTrack c;
  int64_t t = 0;
  for (uint32_t i = 0; i < n; ++i) {
    t += 1 + rng.Below(1000);
    c.time.push_back(t);
    c.value.push_back(double(int(rng.Below(2001)) - 1000));
  }
  // Build the pyramid the way the builder does: through a model build.
  ModelBuilder b;
  CounterDescriptor d;
  d.counter_id = 1;
  b.OnCounterDescriptors({&d, 1});
  std::vector<CounterSample> s;
  for (uint32_t i = 0; i < n; ++i) s.push_back({1, c.time[i], c.value[i]});
  b.OnCounterSamples(s);
  auto m = b.Finish();
  return m->counters[0];
}

TEST_CASE("counters: pyramid min/max and per-pixel columns match brute force", "[lod][counter]") {
  gt::synth::Rng rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    CounterTrack c = RandomCounter(rng, 1 + rng.Below(trial < 30 ? 500 : 100000));
    const uint32_t n = uint32_t(c.value.size());
    for (int q = 0; q < 50; ++q) {
      uint32_t a = rng.Below(n), b = rng.Below(n + 1);
      if (a > b) std::swap(a, b);
      if (a == b) continue;
      auto [lo, hi] = CounterMinMax(c, a, b);
      double blo = c.value[a], bhi = c.value[a];
      for (uint32_t i = a; i < b; ++i) blo = std::min(blo, c.value[i]), bhi = std::max(bhi, c.value[i]);
      REQUIRE(lo == blo);
      REQUIRE(hi == bhi);
    }
    int64_t t0 = c.time.front() - 500 + int64_t(rng.Below(1000)), t1 = c.time.back() + 10;
    double nspx = double(t1 - t0) / (100 + rng.Below(2000));
    std::vector<CounterColumn> cols;
    QueryCounter(c, t0, t1, nspx, &cols);
    uint64_t samples = 0;
    int64_t prev_end = INT64_MIN;
    for (const auto& col : cols) {
      REQUIRE(col.t0 >= prev_end);
      prev_end = col.t1;
      samples += col.samples;
      REQUIRE(col.min <= col.first);
      REQUIRE(col.max >= col.first);
      REQUIRE(col.min <= col.last);
      REQUIRE(col.max >= col.last);
      // Brute-force min/max of the samples in the column.
      for (uint32_t i = 0; i < n; ++i)
        if (c.time[i] >= col.t0 && c.time[i] < col.t1) {
          REQUIRE(c.value[i] >= col.min);
          REQUIRE(c.value[i] <= col.max);
        }
    }
    uint64_t in_range = 0;
    for (int64_t t : c.time) in_range += t >= t0 && t < t1;
    REQUIRE(samples == in_range);
    REQUIRE(cols.size() <= size_t((t1 - t0) / nspx) + 2);
  }
}

// The column folding QueryCounter must reproduce, written the obvious way: per column, binary searches over
// all samples and a min/max over every sample in it.
static std::vector<CounterColumn> ReferenceColumns(const CounterTrack& c, int64_t t0, int64_t t1,
                                                   double nspx) {
  std::vector<CounterColumn> out;
  const uint32_t n = uint32_t(c.time.size());
  const int64_t cols = std::max<int64_t>(1, int64_t(std::ceil(double(t1 - t0) / nspx)));
  auto col_start = [&](int64_t col) {
    return col >= cols ? t1 : std::min(t1, t0 + int64_t(double(col) * nspx));
  };
  int64_t col = 0;
  while (col < cols) {
    const int64_t cs = col_start(col);
    const uint32_t j0 = uint32_t(std::lower_bound(c.time.begin(), c.time.end(), cs) - c.time.begin());
    const bool held = j0 > 0;
    const double hv = held ? c.value[j0 - 1] : 0.0;
    if (j0 >= n || c.time[j0] >= t1) {
      if (held) out.push_back({cs, t1, hv, hv, hv, hv, 0});
      break;
    }
    int64_t cj = col;  // the column holding sample j0, by scanning column starts
    while (cj + 1 < cols && col_start(cj + 1) <= c.time[j0]) ++cj;
    if (cj > col) {
      if (held) out.push_back({cs, col_start(cj), hv, hv, hv, hv, 0});
      col = cj;
      continue;
    }
    const int64_t ce = col_start(col + 1);
    const uint32_t j1 = uint32_t(std::lower_bound(c.time.begin(), c.time.end(), ce) - c.time.begin());
    double lo = held ? hv : c.value[j0], hi = lo;
    for (uint32_t i = j0; i < j1; ++i) lo = std::min(lo, c.value[i]), hi = std::max(hi, c.value[i]);
    out.push_back({cs, ce, held ? hv : c.value[j0], lo, hi, c.value[j1 - 1], j1 - j0});
    ++col;
  }
  return out;
}

static bool SameColumns(const std::vector<CounterColumn>& a, const std::vector<CounterColumn>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].t0 != b[i].t0 || a[i].t1 != b[i].t1 || a[i].first != b[i].first || a[i].min != b[i].min ||
        a[i].max != b[i].max || a[i].last != b[i].last || a[i].samples != b[i].samples)
      return false;
  return true;
}

TEST_CASE("counters: columns equal the brute-force folding at every density", "[lod][counter]") {
  gt::synth::Rng rng(77);
  for (int trial = 0; trial < 30; ++trial) {
    CounterTrack c = RandomCounter(rng, 1 + rng.Below(trial < 10 ? 300 : 200000));
    const int64_t lo = c.time.front() - 2000, hi = c.time.back() + 2000;
    for (int q = 0; q < 25; ++q) {
      int64_t t0 = lo + int64_t(rng.Next() % uint64_t(hi - lo)),
              t1 = lo + int64_t(rng.Next() % uint64_t(hi - lo));
      if (t0 > t1) std::swap(t0, t1);
      if (q == 0) t0 = lo, t1 = hi;  // full zoom-out: up to hundreds of samples per column
      if (t0 == t1) ++t1;
      // From many samples per column (pyramid path) to many columns per sample (flat columns).
      const double width = q % 3 == 0 ? 50 + rng.Below(200) : 200 + rng.Below(3000);
      const double nspx = std::max(0.01, double(t1 - t0) / width);
      std::vector<CounterColumn> cols;
      QueryCounter(c, t0, t1, nspx, &cols);
      const auto want = ReferenceColumns(c, t0, t1, nspx);
      REQUIRE(SameColumns(cols, want));
    }
  }
}

TEST_CASE("idle gaps from folded lanes are exact at pixel resolution", "[lod][idle]") {
  gt::synth::SynthOptions o;
  o.events = 30000;
  o.devices = 1;
  ModelBuilder b;
  gt::synth::GenerateSynthTrace(b, o);
  auto m = b.Finish();
  REQUIRE(m->device_summaries.size() == 1);
  // Brute-force busy intervals of device 0.
  std::vector<std::pair<int64_t, int64_t>> busy;
  for (const Track& t : m->tracks)
    if (t.kind == TrackKind::kGpuStream)
      for (uint32_t d = 0; d < t.lane_count; ++d) {
        const Lane& l = m->lanes[t.first_lane + d];
        for (uint32_t i = 0; i < l.size(); ++i) busy.emplace_back(l.start[i], l.End(i));
      }
  std::sort(busy.begin(), busy.end());
  gt::synth::Rng rng(3);
  const auto& dev = m->device_summaries[0];
  for (int q = 0; q < 50; ++q) {
    int64_t a = dev.first_ns + int64_t(rng.Next() % uint64_t(dev.last_ns - dev.first_ns));
    int64_t span = 1000 + int64_t(rng.Next() % uint64_t(dev.last_ns - dev.first_ns));
    int64_t t0 = a, t1 = std::min(dev.last_ns, a + span);
    if (q == 0) t0 = dev.first_ns, t1 = dev.last_ns;
    double nspx = double(t1 - t0) / 1500;
    std::vector<std::pair<int64_t, int64_t>> gaps;
    QueryIdleGaps(*m, 0, t0, t1, nspx, &gaps);
    // True gaps within [t0, t1).
    std::vector<std::pair<int64_t, int64_t>> truth;
    int64_t cursor = t0;
    for (auto [s, e] : busy) {
      if (e < t0 || s >= t1) continue;
      if (s > cursor && double(s - cursor) >= nspx) truth.emplace_back(cursor, std::min(s, t1));
      cursor = std::max(cursor, e);
    }
    if (t1 > cursor && double(t1 - cursor) >= nspx) truth.emplace_back(cursor, t1);
    REQUIRE(gaps == truth);
  }
}
