// The search bar's filter mode: instead of dimming what does not match, hide it. Tracks with no matching
// event (counter tracks too) collapse away, and so do groups left empty; on the tracks that stay, only
// matching events are drawn. Clearing the search (or the filter toggle) brings everything back.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gt/viewer/model.h"
#include "gt/viewer/query.h"

namespace gt::viewer {

struct TrackFilter {
  std::vector<uint8_t> track_visible;  // per TrackId
  std::vector<uint8_t> group_visible;  // per GroupId: any of its tracks visible
  uint32_t visible_tracks = 0;
  bool active = false;  // false: everything shows (empty search)
  bool ShowsTrack(TrackId t) const { return !active || (t < track_visible.size() && track_visible[t]); }
  bool ShowsGroup(GroupId g) const { return !active || (g < group_visible.size() && group_visible[g]); }
};

// O(events) once per search change (a keystroke, not a frame): stops at a lane's first match.
TrackFilter BuildTrackFilter(const TraceModel& model, const Search& search);

// The filter of a trace whose events are elsewhere (a remote trace): the tracks the server says have a match.
TrackFilter TrackFilterOf(const TraceModel& layout, std::span<const TrackId> tracks_with_matches);

// The matching events of `lane` in [t0, t1) (time order), at most `limit`: what a filtered lane draws
// instead of its LOD blocks, which would fold hidden events in.
std::vector<uint32_t> MatchingEventsIn(const TraceModel& model, const Search& search, LaneId lane, int64_t t0,
                                       int64_t t1, size_t limit);

}  // namespace gt::viewer
