// Search, kernel summary, flows, hit-testing, loss summary and formatting (the text reports: summary.cc).
//
// [SECTION] Search
// [SECTION] Kernel summary
// [SECTION] Flows
// [SECTION] Hit-testing
// [SECTION] Loss
// [SECTION] Formatting
#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <tuple>

#include "gt/viewer/query.h"

#include "flow_partner.h"
#include "gt/name_stats.h"
#include "gt/viewer/regex.h"

namespace gt::viewer {

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Search
// -----------------------------------------------------------------------------------------------------------------

static bool ContainsCaseless(std::string_view hay, std::string_view needle) {
  if (needle.size() > hay.size()) return false;
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && lower(hay[i + k]) == lower(needle[k])) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

Search::Search(const TraceModel& model, std::string_view needle, bool case_sensitive) : needle_(needle) {
  if (needle_.empty()) return;
  match_.assign(model.strings.size(), 0);
  for (size_t i = 1; i < model.strings.size(); ++i) {
    const std::string& s = model.strings[i];
    bool hit = case_sensitive ? s.find(needle_) != std::string::npos : ContainsCaseless(s, needle_);
    if (!hit) continue;
    match_[i] = 1;
    uint32_t n = i < model.name_counts.size() ? model.name_counts[i] : 0;
    if (n) ++matching_names_;
    match_count_ += n;
  }
}

StatusOr<Search> Search::MatchRegex(const TraceModel& model, std::string_view pattern, bool case_sensitive) {
  auto re = Regex::Compile(pattern, case_sensitive);
  if (!re.ok()) return re.status();
  Search s;
  s.needle_ = pattern;
  s.regex_ = true;
  if (pattern.empty()) return s;
  s.match_.assign(model.strings.size(), 0);
  for (size_t i = 1; i < model.strings.size(); ++i) {
    if (!re->Search(model.strings[i])) continue;
    s.match_[i] = 1;
    uint32_t n = i < model.name_counts.size() ? model.name_counts[i] : 0;
    if (n) ++s.matching_names_;
    s.match_count_ += n;
  }
  return s;
}

Search Search::FromMatches(std::string_view needle, bool regex, const std::vector<StringId>& ids,
                           uint64_t match_count, uint32_t matching_names) {
  Search s;
  s.needle_ = needle;
  s.regex_ = regex;
  if (needle.empty()) return s;
  StringId top = 0;
  for (StringId id : ids) top = std::max(top, id);
  s.match_.assign(ids.empty() ? 0 : size_t(top) + 1, 0);
  for (StringId id : ids) s.match_[id] = 1;
  s.match_count_ = match_count;
  s.matching_names_ = matching_names;
  return s;
}

Search Search::ExactName(const TraceModel& model, StringId name) {
  Search s;
  if (name == 0 || name >= model.strings.size() || model.strings[name].empty()) return s;
  s.needle_ = model.strings[name];
  s.exact_ = true;
  s.match_.assign(model.strings.size(), 0);
  s.match_[name] = 1;
  const uint32_t n = name < model.name_counts.size() ? model.name_counts[name] : 0;
  s.matching_names_ = n ? 1 : 0;
  s.match_count_ = n;
  // One pass over the events (a click, not a keystroke) buys an exact highlight of folded blocks however many
  // events they hold.
  s.lane_hits_.resize(model.lanes.size());
  uint64_t found = 0;
  for (LaneId l = 0; l < model.lanes.size() && found < n; ++l) {
    const Column<StringId>& names = model.lanes[l].name;
    for (uint32_t i = 0; i < names.size(); ++i)
      if (names[i] == name) s.lane_hits_[l].push_back(i), ++found;
  }
  return s;
}

bool Search::AnyMatchIn(const TraceModel& model, LaneId lane, uint32_t first, uint32_t count,
                        uint32_t probe) const {
  if (match_count_ == 0 || count == 0 || lane >= model.lanes.size()) return false;
  if (exact_) {
    if (lane >= lane_hits_.size()) return false;
    const std::vector<uint32_t>& hits = lane_hits_[lane];
    auto it = std::lower_bound(hits.begin(), hits.end(), first);
    return it != hits.end() && uint64_t{*it} < uint64_t{first} + count;
  }
  const Column<StringId>& names = model.lanes[lane].name;
  const uint64_t end = std::min<uint64_t>({uint64_t{first} + count, uint64_t{first} + probe, names.size()});
  for (uint64_t i = first; i < end; ++i)
    if (Matches(names[i])) return true;
  return false;
}

namespace {
using Pos = std::tuple<int64_t, LaneId, uint32_t>;  // time order, ties by EventId
Pos PosOf(const TraceModel& m, EventId e) {
  return {m.Start(e), e.lane, e.index};
}
}  // namespace

EventId Search::Next(const TraceModel& model, EventId from) const {
  if (match_count_ == 0) return {};
  const bool has_from =
      from.valid() && from.lane < model.lanes.size() && from.index < model.lanes[from.lane].size();
  for (int pass = 0; pass < 2; ++pass) {  // pass 1 wraps around to the beginning
    const bool bounded = pass == 0 && has_from;
    Pos best{INT64_MAX, kNone, kNone};
    const Pos after = bounded ? PosOf(model, from) : Pos{INT64_MIN, 0, 0};
    for (LaneId l = 0; l < model.lanes.size(); ++l) {
      const Lane& lane = model.lanes[l];
      uint32_t i = bounded ? static_cast<uint32_t>(
                                 std::lower_bound(lane.start.begin(), lane.start.end(), std::get<0>(after)) -
                                 lane.start.begin())
                           : 0;
      for (; i < lane.size(); ++i) {
        Pos p{lane.start[i], l, i};
        if (p >= best) break;
        if (bounded && p <= after) continue;
        if (Matches(lane.name[i])) {
          best = p;
          break;
        }
      }
    }
    if (std::get<1>(best) != kNone) return {std::get<1>(best), std::get<2>(best)};
  }
  return {};
}

EventId Search::Prev(const TraceModel& model, EventId from) const {
  if (match_count_ == 0) return {};
  const bool has_from =
      from.valid() && from.lane < model.lanes.size() && from.index < model.lanes[from.lane].size();
  for (int pass = 0; pass < 2; ++pass) {
    const bool bounded = pass == 0 && has_from;
    Pos best{INT64_MIN, 0, 0};
    bool found = false;
    const Pos before = bounded ? PosOf(model, from) : Pos{INT64_MAX, kNone, kNone};
    for (LaneId l = 0; l < model.lanes.size(); ++l) {
      const Lane& lane = model.lanes[l];
      int64_t i =
          static_cast<int64_t>(std::upper_bound(lane.start.begin(), lane.start.end(), std::get<0>(before)) -
                               lane.start.begin()) -
          1;
      for (; i >= 0; --i) {
        Pos p{lane.start[i], l, static_cast<uint32_t>(i)};
        if (found && p <= best) break;
        if (bounded && p >= before) continue;
        if (Matches(lane.name[i])) {
          best = p, found = true;
          break;
        }
      }
    }
    if (found) return {std::get<1>(best), std::get<2>(best)};
  }
  return {};
}

uint64_t Search::Ordinal(const TraceModel& model, EventId e) const {
  if (!e.valid() || e.lane >= model.lanes.size() || e.index >= model.lanes[e.lane].size()) return 0;
  if (!Matches(model.Name(e))) return 0;
  const Pos target = PosOf(model, e);
  uint64_t before = 0;
  for (LaneId l = 0; l < model.lanes.size(); ++l) {
    const Lane& lane = model.lanes[l];
    uint32_t end = static_cast<uint32_t>(
        std::upper_bound(lane.start.begin(), lane.start.end(), std::get<0>(target)) - lane.start.begin());
    for (uint32_t i = 0; i < end; ++i)
      if (Matches(lane.name[i]) && Pos{lane.start[i], l, i} < target) ++before;
  }
  return before + 1;
}

std::vector<EventId> Search::List(const TraceModel& model, int64_t t0, int64_t t1, size_t limit) const {
  std::vector<EventId> out;
  if (match_count_ == 0) return out;
  for (LaneId l = 0; l < model.lanes.size(); ++l) {
    auto [a, b] = LaneRange(model.lanes[l], t0, t1);
    for (uint32_t i = a; i < b; ++i)
      if (Matches(model.lanes[l].name[i])) out.push_back({l, i});
  }
  std::sort(out.begin(), out.end(), [&](EventId x, EventId y) { return PosOf(model, x) < PosOf(model, y); });
  if (out.size() > limit) out.resize(limit);
  return out;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Kernel summary
// -----------------------------------------------------------------------------------------------------------------

template <typename F>
static void ForEachKernelLane(const TraceModel& model, uint32_t device_id, F&& f) {
  for (const Track& t : model.tracks) {
    if (t.kind != TrackKind::kGpuStream) continue;
    if (device_id != kNone && t.device_id != device_id) continue;
    for (uint32_t d = 0; d < t.lane_count; ++d) f(t.first_lane + d);
  }
}

static bool IsKernelRef(uint32_t ref) {
  return (ref >> kRefKindShift) == uint32_t(EventKind::kKernel);
}

std::vector<KernelSummaryRow> KernelSummary(const TraceModel& model, uint32_t device_id) {
  NameAggregator agg;
  ForEachKernelLane(model, device_id, [&](LaneId l) {
    const Lane& lane = model.lanes[l];
    for (uint32_t i = 0; i < lane.size(); ++i)
      if (IsKernelRef(lane.ref[i])) agg.Add(lane.name[i], lane.start[i], lane.Duration(i));
  });
  return KernelSummaryRows(agg);
}

std::vector<KernelSummaryRow> KernelSummaryRows(const NameAggregator& agg) {
  std::vector<KernelSummaryRow> rows;
  for (const NameRow& n : agg.Rows()) {
    KernelSummaryRow r;
    r.name = n.name;
    r.count = n.stats.count;
    r.total_ns = n.stats.total_ns;
    r.min_ns = n.stats.min_ns;
    r.max_ns = n.stats.max_ns;
    r.avg_ns = n.stats.avg_ns();
    r.share = n.share;
    r.first_ns = n.stats.first_ns;
    r.last_ns = n.stats.last_ns;
    rows.push_back(r);
  }
  return rows;  // by total time, ties by StringId: SortKernelSummary(kTotal, descending)'s order
}

void SortKernelSummary(const TraceModel& model, std::vector<KernelSummaryRow>* rows, KernelColumn column,
                       bool descending) {
  auto key_less = [&](const KernelSummaryRow& a, const KernelSummaryRow& b) -> int {  // -1, 0, 1
    auto cmp = [](auto x, auto y) { return x < y ? -1 : y < x ? 1 : 0; };
    switch (column) {
      case KernelColumn::kName:
        return cmp(model.Str(a.name), model.Str(b.name));
      case KernelColumn::kCount:
        return cmp(a.count, b.count);
      case KernelColumn::kTotal:
        return cmp(a.total_ns, b.total_ns);
      case KernelColumn::kAverage:
        return cmp(a.avg_ns, b.avg_ns);
      case KernelColumn::kMin:
        return cmp(a.min_ns, b.min_ns);
      case KernelColumn::kMax:
        return cmp(a.max_ns, b.max_ns);
      case KernelColumn::kShare:
        return cmp(a.share, b.share);
    }
    return 0;
  };
  std::sort(rows->begin(), rows->end(), [&](const KernelSummaryRow& a, const KernelSummaryRow& b) {
    int c = key_less(a, b);
    if (c != 0) return descending ? c > 0 : c < 0;
    return a.name < b.name;  // deterministic ties
  });
}

std::vector<EventId> KernelInstances(const TraceModel& model, StringId name, uint32_t device_id) {
  std::vector<EventId> out;
  ForEachKernelLane(model, device_id, [&](LaneId l) {
    const Lane& lane = model.lanes[l];
    for (uint32_t i = 0; i < lane.size(); ++i)
      if (lane.name[i] == name && IsKernelRef(lane.ref[i])) out.push_back({l, i});
  });
  std::sort(out.begin(), out.end(), [&](EventId x, EventId y) { return PosOf(model, x) < PosOf(model, y); });
  return out;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Flows
// -----------------------------------------------------------------------------------------------------------------

EventId FlowPartner(const TraceModel& model, EventId e) {
  if (!e.valid() || e.lane >= model.lanes.size() || e.index >= model.lanes[e.lane].size()) return {};
  const uint32_t corr = model.CorrelationId(e);
  return query_detail::FlowPartnerOf(
      model, model.TrackOf(e), model.Kind(e), corr, [&](LaneId l, bool by_aux) {
        const Lane& lane = model.lanes[l];
        const Column<uint32_t>& c = by_aux ? lane.aux : lane.ref;
        return query_detail::FindCorrelationOf(lane.aux_sorted, uint32_t(c.size()), corr,
                                               [&c](uint32_t i) { return c[i]; });
      });
}

std::vector<FlowArrow> FlowsOf(const TraceModel& model, EventId e) {
  std::vector<FlowArrow> out;
  EventId p = FlowPartner(model, e);
  if (p.valid()) {
    if (model.TrackOf(e).kind == TrackKind::kThreadApi)
      out.push_back({e, p, true});
    else
      out.push_back({p, e, true});
  }
  AppendExplicitFlows(model, e, &out);
  return out;
}

void AppendExplicitFlows(const TraceModel& model, EventId e, std::vector<FlowArrow>* out_arrows) {
  std::vector<FlowArrow>& out = *out_arrows;
  auto it = std::lower_bound(model.flows.begin(), model.flows.end(), e,
                             [](const Flow& f, EventId x) { return f.from < x; });
  for (; it != model.flows.end() && it->from == e; ++it) out.push_back({it->from, it->to, false});
  for (const Flow& f : model.flows)  // incoming arrows: flows are few next to events
    if (f.to == e) out.push_back({f.from, f.to, false});
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Hit-testing
// -----------------------------------------------------------------------------------------------------------------

EventId HitTest(const TraceModel& model, LaneId lane_id, int64_t t, double ns_per_px, double tolerance_px) {
  if (lane_id >= model.lanes.size()) return {};
  const Lane& lane = model.lanes[lane_id];
  if (lane.size() == 0) return {};
  const double tol = std::max(0.0, tolerance_px * ns_per_px);
  uint32_t i =
      static_cast<uint32_t>(std::upper_bound(lane.start.begin(), lane.start.end(), t) - lane.start.begin());
  // i-1: last event starting at or before t; i: first starting after.
  double best_dist = tol;
  EventId best;
  if (i > 0) {
    int64_t end = lane.End(i - 1);
    if (end >= t) return {lane_id, i - 1};
    if (double(t - end) <= best_dist) best_dist = double(t - end), best = {lane_id, i - 1};
  }
  if (i < lane.size() && double(lane.start[i] - t) < best_dist) best = {lane_id, i};
  return best;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Loss
// -----------------------------------------------------------------------------------------------------------------

std::vector<LossStat> LossSummary(const TraceModel& model) {
  std::vector<LossStat> out = model.losses;
  auto has = [&](const char* name) {
    for (const auto& l : out)
      if (l.name == name) return true;
    return false;
  };
  const LoadReport& r = model.report;
  if (r.chunks_lost && !has("chunk_lost"))
    out.push_back({"chunk_lost", uint8_t(Severity::kDataLoss), 0, r.chunks_lost,
                   std::to_string(r.bytes_lost) + " bytes in damaged chunks could not be decoded"});
  if (r.truncated && !has("file_truncated"))
    out.push_back({"file_truncated", uint8_t(Severity::kDataLoss), 0, 1,
                   "the file ends early (the recording was interrupted or the copy is incomplete)"});
  if (r.chunks_unknown && !has("chunks_unknown"))
    out.push_back({"chunks_unknown", uint8_t(Severity::kWarning), 0, r.chunks_unknown,
                   "chunks from a newer gtrace version were skipped"});
  std::stable_sort(out.begin(), out.end(), [](const LossStat& a, const LossStat& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.count > b.count;
  });
  return out;
}

bool HasDataLoss(const TraceModel& model) {
  for (const auto& l : LossSummary(model))
    if (l.severity == uint8_t(Severity::kDataLoss) && l.count > 0) return true;
  return false;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Counting and finding events
// -----------------------------------------------------------------------------------------------------------------

namespace {

// GPU events (kernels, copies, memsets) starting before t, over every stream of every device.
uint64_t GpuEventsBefore(const TraceModel& model, int64_t t) {
  uint64_t n = 0;
  for (const Lane& lane : model.lanes)
    if (model.tracks[lane.track].kind == TrackKind::kGpuStream)
      n += static_cast<uint64_t>(std::lower_bound(lane.start.begin(), lane.start.end(), t) -
                                 lane.start.begin());
  return n;
}

}  // namespace

TimeRange WorkRange(const TraceModel& model) {
  const TimeRange all{model.first_ns, model.last_ns};
  bool any = false;
  TimeRange work{};
  uint64_t gpu_events = 0;
  for (const Track& t : model.tracks) {
    if (t.event_count == 0 || (t.kind != TrackKind::kGpuStream && t.kind != TrackKind::kThreadRanges))
      continue;
    if (t.kind == TrackKind::kGpuStream) gpu_events += t.event_count;
    work.first_ns = any ? std::min(work.first_ns, t.first_ns) : t.first_ns;
    work.last_ns = any ? std::max(work.last_ns, t.last_ns) : t.last_ns;
    any = true;
  }
  if (!any || work.last_ns <= work.first_ns) return all;
  // A few copies while the model loads, then seconds of start-up before the first step: an idle gap that is
  // most of the range with almost nothing (< 2% of the GPU events) on one side is cut off with that side.
  for (const DeviceSummary& d : model.device_summaries)
    for (const auto& [gap_start, gap_end] : d.largest_gaps) {
      const int64_t range = SatSub(work.last_ns, work.first_ns);
      if (SatSub(gap_end, gap_start) < range / 2) break;  // longest first: the rest are shorter still
      if (gap_start < work.first_ns || gap_end > work.last_ns) continue;
      const uint64_t before = GpuEventsBefore(model, gap_end);
      if (before * 50 < gpu_events)
        work.first_ns = gap_end;
      else if ((gpu_events - before) * 50 < gpu_events)
        work.last_ns = gap_start;
    }
  // Work filling most of the trace: the whole is the better view, nothing hides at its ends.
  if (SatSub(work.last_ns, work.first_ns) >= model.span_ns() / 10 * 9) return all;
  return work;
}

uint64_t CountEvents(const TraceModel& model, EventKind kind) {
  uint64_t n = 0;
  if (kind == EventKind::kKernel || kind == EventKind::kMemcpy || kind == EventKind::kMemset) {
    for (const DeviceSummary& d : model.device_summaries)
      n += kind == EventKind::kKernel   ? d.kernel_count
           : kind == EventKind::kMemcpy ? d.memcpy_count
                                        : d.memset_count;
    return n;
  }
  const uint32_t ek = static_cast<uint32_t>(kind);
  for (const Lane& lane : model.lanes) {
    if (model.tracks[lane.track].kind == TrackKind::kThreadApi) {  // API lanes hold API calls only
      if (kind == EventKind::kApi) n += lane.size();
      continue;
    }
    for (uint32_t ref : lane.ref) n += (ref >> kRefKindShift) == ek;
  }
  return n;
}

StringId FindString(const TraceModel& model, std::string_view text) {
  for (StringId id = 0; id < model.strings.size(); ++id)
    if (model.strings[id] == text) return id;
  return 0;
}

EventId FirstKernelEvent(const TraceModel& model, uint32_t pid, StringId name) {
  EventId best;
  int64_t best_start = INT64_MAX;
  for (uint32_t l = 0; l < model.lanes.size(); ++l) {
    const Lane& lane = model.lanes[l];
    if (lane.track == kNone || model.tracks[lane.track].kind != TrackKind::kGpuStream) continue;
    if (pid && model.tracks[lane.track].pid != pid) continue;
    for (uint32_t i = 0; i < lane.size(); ++i) {
      if (lane.name[i] != name || lane.start[i] >= best_start) continue;
      const EventId e{l, i};
      if (model.Kind(e) != EventKind::kKernel) continue;
      best = e;
      best_start = lane.start[i];
      break;  // lanes are sorted by start: the first hit is this lane's earliest
    }
  }
  return best;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Formatting
// -----------------------------------------------------------------------------------------------------------------

std::string FormatTimestamp(const TraceModel& model, int64_t ns) {
  char buf[64];
  // 128-bit: an imported trace may hold times at both int64 limits, so the difference can exceed int64.
  const __int128 rel = static_cast<__int128>(ns) - model.first_ns;
  const uint64_t mag = static_cast<uint64_t>(rel < 0 ? -rel : rel);
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%09" PRIu64 " s", rel < 0 ? "-" : "+", mag / 1000000000,
                mag % 1000000000);
  return buf;
}

}  // namespace gt::viewer
