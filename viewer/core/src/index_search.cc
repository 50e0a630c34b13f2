// The search box on a remote trace (gt/viewer/index_query.h: IndexSearchStep, what=search): names are
// matched over the interned strings (Search), counts come from TraceModel::name_counts, and a next/previous
// step scans name columns window by window in time order with a budget, answering where to resume when the
// budget is spent. Nothing here is computed at build: a step costs at most about kSearchScanBudget names
// (docs/benchmarks.md "Remote search"), whatever the trace's size.
#include <algorithm>
#include <memory>
#include <tuple>

#include "gt/sat_math.h"
#include "gt/viewer/index_query.h"
#include "index_blocks.h"
#include "lod_query.h"

namespace gt::viewer {

namespace {

using index_detail::LaneReader;
using Pos = std::tuple<int64_t, LaneId, uint32_t>;  // Search::Next's order

// Events of each lane whose start lies in [lo, hi): index ranges, and their total.
struct Window {
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // per lane
  uint64_t total = 0;
};

}  // namespace

SearchStepResult IndexSearchStep(const MappedIndex& index, const Search& search, bool forward, int64_t t,
                                 EventId from, uint64_t budget) {
  const TraceModel& m = index.model();
  SearchStepResult r;
  if (search.match_count() == 0 || m.lanes.empty()) {
    r.at_end = true;
    return r;
  }
  budget = std::max<uint64_t>(budget, 1);
  std::vector<std::unique_ptr<LaneReader>> readers(m.lanes.size());
  auto reader = [&](LaneId l) -> LaneReader& {
    if (!readers[l]) readers[l] = std::make_unique<LaneReader>(index.blocks(), m.lanes[l], l);
    return *readers[l];
  };
  // Lanes that can hold events in [lo, hi): their track's extent overlaps it.
  auto count = [&](int64_t lo, int64_t hi, Window* w) {
    w->ranges.assign(m.lanes.size(), {0, 0});
    w->total = 0;
    for (LaneId l = 0; l < m.lanes.size(); ++l) {
      const Track& tr = m.tracks[m.lanes[l].track];
      if (index.lane_size(l) == 0 || tr.last_ns < lo || tr.first_ns >= hi) continue;
      LaneReader& rd = reader(l);
      const uint32_t a = rd.LowerBoundStart(lo), b = rd.LowerBoundStart(hi);
      w->ranges[l] = {a, b};
      w->total += b - a;
    }
  };
  const bool has_from = from.valid();
  const Pos at{t, has_from ? from.lane : 0, has_from ? from.index : 0};
  // Windows start at about 64 Ki events wide (by the trace's mean density) and double while nothing matches.
  const double span = std::max(1.0, double(m.last_ns) - double(m.first_ns));
  int64_t width = int64_t(std::clamp(span * 65536.0 / double(std::max<uint64_t>(m.event_count, 1)), 1.0,
                                     double(int64_t{1} << 61)));
  // forward: starts in [lo, hi) from lo = t; backward: hi = t (+1 when stepping from an event at t).
  int64_t edge = forward ? t : (has_from ? SatAdd(t, int64_t{1}) : t);
  Window w;
  while (true) {
    if (forward ? edge > m.last_ns : edge <= m.first_ns) {
      r.at_end = true;
      return r;
    }
    int64_t lo = forward ? edge : SatSub(edge, width), hi = forward ? SatAdd(edge, width) : edge;
    count(lo, hi, &w);
    // A window holding more than the budget left is narrowed (by its density) before anything is read.
    const uint64_t left = budget > r.examined ? budget - r.examined : 0;
    // At least halved each time: at most 62 tries, each a binary search per lane over cached start blocks.
    while (w.total > std::max<uint64_t>(left, 1) && width > 1) {
      const double by_density = double(width) * double(std::max<uint64_t>(left, 1)) / double(w.total) * 0.9;
      width = std::max<int64_t>(1, std::min(width / 2, int64_t(by_density)));
      lo = forward ? edge : SatSub(edge, width), hi = forward ? SatAdd(edge, width) : edge;
      count(lo, hi, &w);
    }
    bool found = false;
    Pos best;
    for (LaneId l = 0; l < m.lanes.size(); ++l) {
      const auto [a, b] = w.ranges[l];
      if (a == b) continue;
      LaneReader& rd = reader(l);
      r.examined += b - a;
      if (forward) {
        for (uint32_t i = a; i < b; ++i) {
          if (!search.Matches(rd.Name(i))) continue;
          const Pos p{rd.Start(i), l, i};
          if (has_from && p <= at) continue;
          if (!found || p < best) best = p, found = true;
          break;  // later events of this lane come after p
        }
      } else {
        for (uint32_t i = b; i-- > a;) {
          if (!search.Matches(rd.Name(i))) continue;
          const Pos p{rd.Start(i), l, i};
          if (has_from && p >= at) continue;
          if (!found || p > best) best = p, found = true;
          break;
        }
      }
    }
    for (const auto& rd : readers)
      if (rd && !rd->status().ok()) {
        r.status = rd->status();
        return r;
      }
    if (found) {
      r.hit = {std::get<1>(best), std::get<2>(best)};
      LaneReader& rd = reader(r.hit.lane);
      r.start = rd.Start(r.hit.index);
      r.end = rd.End(r.hit.index);
      return r;
    }
    edge = forward ? hi : lo;
    if (r.examined >= budget && (forward ? edge <= m.last_ns : edge > m.first_ns)) {
      r.resume = true;
      r.resume_t = edge;
      return r;
    }
    if (width < (int64_t{1} << 61)) width *= 2;
  }
}

SearchListResult IndexSearchList(const MappedIndex& index, const Search& search, int64_t t0, int64_t t1,
                                 size_t limit, uint64_t budget) {
  const TraceModel& m = index.model();
  SearchListResult r;
  if (search.match_count() == 0 || t0 >= t1) return r;
  std::vector<std::tuple<int64_t, LaneId, uint32_t, int64_t, StringId>>
      found;  // (start, lane, index, end, name)
  for (LaneId l = 0; l < m.lanes.size() && r.status.ok(); ++l) {
    LaneReader rd(index.blocks(), m.lanes[l], l);
    auto [a, b] = lod_detail::LaneRangeOf(rd, t0, t1);
    if (r.examined + (b - a) > budget) {  // the rest of this lane, and the lanes after it, are not scanned
      b = a + uint32_t(budget - std::min(budget, r.examined));
      r.complete = false;
    }
    for (uint32_t i = a; i < b; ++i)
      if (const StringId name = rd.Name(i); search.Matches(name))
        found.emplace_back(rd.Start(i), l, i, rd.End(i), name);
    r.examined += b - a;
    if (!rd.status().ok()) r.status = rd.status();
    if (!r.complete) break;
  }
  std::sort(found.begin(), found.end());
  if (found.size() > limit) found.resize(limit);
  for (const auto& [start, lane, i, end, name] : found) {
    r.hits.push_back({lane, i});
    r.start.push_back(start);
    r.end.push_back(end);
    r.name.push_back(name);
  }
  return r;
}

}  // namespace gt::viewer
