// Shared by the viewer fuzz targets: model invariants and a pass over every query.
#pragma once

#include <cstdlib>

#include "gt/viewer/lod.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"
#include "gt/viewer/view_state.h"

namespace gt::fuzz {

inline void Check(bool ok) {
  if (!ok) std::abort();
}

inline void ExerciseModel(const gt::viewer::TraceModel& m) {
  using namespace gt::viewer;
  uint64_t events = 0;
  for (LaneId l = 0; l < m.lanes.size(); ++l) {
    const Lane& lane = m.lanes[l];
    events += lane.size();
    for (uint32_t i = 1; i < lane.size(); ++i) Check(lane.End(i - 1) <= lane.start[i]);
    std::vector<DrawItem> items;
    const int64_t span = m.span_ns();
    QueryLane(lane, m.first_ns, gt::SatAdd(m.last_ns, 1), span > 0 ? double(span) / 500 : 1.0, &items);
    uint64_t covered = 0;
    for (const auto& it : items) covered += it.count;
    Check(covered == lane.size());
    for (uint32_t i = 0; i < lane.size() && i < 4; ++i) {
      EventId e{l, i};
      EventDetails(m, e);
      FlowPartner(m, e);
      FlowsOf(m, e);
      Check(m.FindEventByKey(m.EventKey(e)) == e);
    }
  }
  Check(events == m.event_count);
  for (const auto& c : m.counters) {
    std::vector<CounterColumn> cols;
    QueryCounter(c, m.first_ns, gt::SatAdd(m.last_ns, 1), 1000.0, &cols);
  }
  for (const auto& d : m.device_summaries) {
    std::vector<std::pair<int64_t, int64_t>> gaps;
    QueryIdleGaps(m, d.device_id, m.first_ns, gt::SatAdd(m.last_ns, 1), 1000.0, &gaps);
  }
  KernelSummary(m);
  Search s(m, "a");
  s.Next(m, {});
  LossSummary(m);
  StatsReport(m);
}

}  // namespace gt::fuzz
