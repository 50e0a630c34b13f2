// The search filter: which tracks keep a matching event (gt/viewer/filter.h).
#include "gt/viewer/filter.h"

#include "gt/viewer/lod.h"

namespace gt::viewer {

TrackFilter BuildTrackFilter(const TraceModel& m, const Search& search) {
  TrackFilter f;
  if (search.empty()) return f;
  f.active = true;
  f.track_visible.assign(m.tracks.size(), 0);
  f.group_visible.assign(m.groups.size(), 0);
  if (search.match_count() == 0) return f;
  for (TrackId t = 0; t < m.tracks.size(); ++t) {
    const Track& tr = m.tracks[t];
    bool any = false;
    for (uint32_t d = 0; d < tr.lane_count && !any; ++d) {
      const Lane& lane = m.lanes[tr.first_lane + d];
      any = search.AnyMatchIn(m, tr.first_lane + d, 0, lane.size(), lane.size());
    }
    if (!any) continue;
    f.track_visible[t] = 1;
    ++f.visible_tracks;
    if (tr.group < f.group_visible.size()) f.group_visible[tr.group] = 1;
  }
  return f;
}

TrackFilter TrackFilterOf(const TraceModel& m, std::span<const TrackId> tracks) {
  TrackFilter f;
  f.active = true;
  f.track_visible.assign(m.tracks.size(), 0);
  f.group_visible.assign(m.groups.size(), 0);
  for (TrackId t : tracks) {
    if (t >= m.tracks.size() || f.track_visible[t]) continue;
    f.track_visible[t] = 1;
    ++f.visible_tracks;
    if (m.tracks[t].group < f.group_visible.size()) f.group_visible[m.tracks[t].group] = 1;
  }
  return f;
}

std::vector<uint32_t> MatchingEventsIn(const TraceModel& m, const Search& search, LaneId lane, int64_t t0,
                                       int64_t t1, size_t limit) {
  std::vector<uint32_t> out;
  if (lane >= m.lanes.size() || search.match_count() == 0) return out;
  const Lane& l = m.lanes[lane];
  auto [a, b] = LaneRange(l, t0, t1);
  for (uint32_t i = a; i < b && out.size() < limit; ++i)
    if (search.Matches(l.name[i])) out.push_back(i);
  return out;
}

}  // namespace gt::viewer
