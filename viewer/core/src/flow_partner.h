// Internal: FlowPartner's search as a template over how a lane's correlation ids are read, so that a loaded
// model and a mapped index (index_blocks.h) find the same partner with the same probes.
#pragma once

#include <cstdint>

#include "gt/viewer/model.h"

namespace gt::viewer::query_detail {

// The index of `id` among a lane's n correlation ids (get(i)): a binary search when they ascend, else a
// scan. kNone when absent.
template <class Get>
uint32_t FindCorrelationOf(bool sorted, uint32_t n, uint32_t id, Get&& get) {
  if (sorted) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (get(mid) < id)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo < n && get(lo) == id ? lo : kNone;
  }
  for (uint32_t i = 0; i < n; ++i)
    if (get(i) == id) return i;
  return kNone;
}

// The other end of the launch flow of an event of kind `kind` on track `src` with correlation id `corr`:
// find(lane, by_aux) searches one lane (its aux column for GPU lanes, ref for API lanes).
template <class Find>
EventId FlowPartnerOf(const TraceModel& model, const Track& src, EventKind kind, uint32_t corr, Find&& find) {
  if (corr == 0) return {};
  if (src.kind == TrackKind::kThreadApi) {
    for (const Track& t : model.tracks) {
      if (t.kind != TrackKind::kGpuStream || t.pid != src.pid) continue;
      for (uint32_t d = 0; d < t.lane_count; ++d) {
        uint32_t i = find(LaneId(t.first_lane + d), true);
        if (i != kNone) return {t.first_lane + d, i};
      }
    }
  } else if (kind == EventKind::kKernel || kind == EventKind::kMemcpy || kind == EventKind::kMemset) {
    // Runtime calls (depth 0) first: the driver calls under them may share the correlation id.
    for (uint32_t depth = 0; depth < 64; ++depth) {
      bool any = false;
      for (const Track& t : model.tracks) {
        if (t.kind != TrackKind::kThreadApi || t.pid != src.pid || depth >= t.lane_count) continue;
        any = true;
        uint32_t i = find(LaneId(t.first_lane + depth), false);
        if (i != kNone) return {t.first_lane + depth, i};
      }
      if (!any) break;
    }
  }
  return {};
}

}  // namespace gt::viewer::query_detail
