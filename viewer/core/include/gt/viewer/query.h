// Queries over a TraceModel for the UI and the CLI: search, kernel summary, flows, event details,
// hit-testing, loss statistics. All are headless and deterministic.
//
// [SECTION] Search
// [SECTION] Kernel summary
// [SECTION] Flows
// [SECTION] Details
// [SECTION] Hit-testing
// [SECTION] Counting and finding events
// [SECTION] Loss and formatting helpers
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gt/status.h"
#include "gt/units.h"
#include "gt/viewer/lod.h"
#include "gt/viewer/model.h"

namespace gt {
class NameAggregator;
}

namespace gt::viewer {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Search
// ---------------------------------------------------------------------------------------------------------------

// Substring search over event names (case-insensitive by default). Matching runs over the interned strings
// first (O(strings)); counts come from TraceModel::name_counts, so a search costs nothing per event.
class Search {
 public:
  Search() = default;
  Search(const TraceModel& model, std::string_view needle, bool case_sensitive = false);
  // Matches the one interned name `name` and nothing else (the kernel table's row highlight): a name that is
  // a prefix or substring of another stays apart from it. needle() is the name's text.
  static Search ExactName(const TraceModel& model, StringId name);
  // A regular expression (gt/viewer/regex.h: linear time, bounded pattern) over the names, a match anywhere
  // in a name. A bad pattern is InvalidArgument with the reason, never a crash.
  static StatusOr<Search> MatchRegex(const TraceModel& model, std::string_view pattern,
                                     bool case_sensitive = false);

  // A search answered elsewhere (a remote trace's server, which has the events): its counts and the ids of
  // the names that match. Matches() then highlights; Next/Prev/Ordinal/List need the events and find
  // nothing on a model without them (the layout of a remote trace).
  static Search FromMatches(std::string_view needle, bool regex, const std::vector<StringId>& ids,
                            uint64_t match_count, uint32_t matching_names);

  bool empty() const { return needle_.empty(); }
  bool exact() const { return exact_; }  // made by ExactName
  bool regex() const { return regex_; }  // made by MatchRegex
  const std::string& needle() const { return needle_; }
  uint64_t match_count() const { return match_count_; }
  uint32_t matching_names() const { return matching_names_; }
  bool Matches(StringId name) const { return name < match_.size() && match_[name]; }  // for highlighting
  // The next match strictly after (`from_ns`, `from`) in time order (ties broken by EventId), or after the
  // start when `from` is invalid; wraps around. Invalid EventId when there is no match.
  EventId Next(const TraceModel& model, EventId from) const;
  EventId Prev(const TraceModel& model, EventId from) const;
  // 1-based position of `e` among all matches in time order (for "3 / 120"); 0 if e is no match.
  uint64_t Ordinal(const TraceModel& model, EventId e) const;
  // All matches in [t0, t1), time order, at most `limit`.
  std::vector<EventId> List(const TraceModel& model, int64_t t0, int64_t t1, size_t limit) const;
  // Whether any of events [first, first + count) of `lane` matches (a folded draw block: highlight it or
  // not). Exact for ExactName searches, through the per-lane index of matches they build (O(log matches)); a
  // substring search keeps no per-event index and looks at the first `probe` events only.
  bool AnyMatchIn(const TraceModel& model, LaneId lane, uint32_t first, uint32_t count,
                  uint32_t probe = 16) const;

 private:
  std::string needle_;
  std::vector<uint8_t> match_;  // per StringId
  uint64_t match_count_ = 0;
  uint32_t matching_names_ = 0;
  bool exact_ = false;
  bool regex_ = false;
  std::vector<std::vector<uint32_t>> lane_hits_;  // ExactName: per lane, ascending indices of its matches
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Kernel summary
// ---------------------------------------------------------------------------------------------------------------

struct KernelSummaryRow {
  StringId name = 0;
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double avg_ns = 0;
  double share = 0;                   // total_ns / sum over all kernels of total_ns (0..1)
  int64_t first_ns = 0, last_ns = 0;  // zoom range covering all instances
};

enum class KernelColumn : uint8_t { kName = 0, kCount, kTotal, kAverage, kMin, kMax, kShare };

// One row per kernel name, sorted by total time (descending). device_id = kNone: all devices.
std::vector<KernelSummaryRow> KernelSummary(const TraceModel& model, uint32_t device_id = kNone);
// The rows of kernel events someone else aggregated (SummarizeAll: the index build's one pass).
std::vector<KernelSummaryRow> KernelSummaryRows(const NameAggregator& kernels);
void SortKernelSummary(const TraceModel& model, std::vector<KernelSummaryRow>* rows, KernelColumn column,
                       bool descending);
// All instances of a kernel name in time order (a summary row's "zoom to instances").
std::vector<EventId> KernelInstances(const TraceModel& model, StringId name, uint32_t device_id = kNone);

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Flows
// ---------------------------------------------------------------------------------------------------------------

// The other end of a launch: API call -> the kernel/memcpy/memset with its correlation id (same process; one
// of them for a cudaGraphLaunch, whose kernels all carry its id), and GPU activity -> its API call. Invalid
// when there is none.
EventId FlowPartner(const TraceModel& model, EventId e);

struct FlowArrow {
  EventId from, to;
  bool correlation = true;  // true: launch -> GPU work by correlation id; false: explicit flow record
};
// Every arrow touching `e`: its correlation partner plus explicit flows (Chrome/Kineto/FlowRecord).
std::vector<FlowArrow> FlowsOf(const TraceModel& model, EventId e);
// Only the explicit flow records touching `e` (outgoing in the table's order, then incoming), appended.
void AppendExplicitFlows(const TraceModel& model, EventId e, std::vector<FlowArrow>* out);

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Details
// ---------------------------------------------------------------------------------------------------------------

struct DetailField {
  std::string name;   // "Grid", "Registers/thread", "Bandwidth"
  std::string value;  // "(128, 1, 1)", "64", "812.3 GB/s"
};

// Every field of the event, in display order: name, kind, track, start, duration, then kind-specific fields
// (kernel: grid, block, cluster, registers, shared memory static/dynamic, local memory, launch type, graph,
// correlation; memcpy: bytes, bandwidth, copy kind, src/dst memory; API: name, domain, return code,
// correlation; NVTX: domain, category, color, payload), then imported args.
std::vector<DetailField> EventDetails(const TraceModel& model, EventId e);
// A merged draw block: count, span, busy time, top names.
std::vector<DetailField> BlockDetails(const TraceModel& model, LaneId lane, const DrawItem& item);

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Hit-testing
// ---------------------------------------------------------------------------------------------------------------

// The event of `lane` under time t, or the nearest one within tolerance_px pixels. Invalid if none.
EventId HitTest(const TraceModel& model, LaneId lane, int64_t t, double ns_per_px, double tolerance_px = 2.0);

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Counting and finding events
// ---------------------------------------------------------------------------------------------------------------

// Events of `kind` in the whole trace. Kernels, memcpys and memsets come from the device summaries; the other
// kinds are counted over the lanes (O(events): for tests and the C API, not for a frame).
uint64_t CountEvents(const TraceModel& model, EventKind kind);
// The StringId whose text is `text`, 0 (the empty string) when none is (O(strings)).
StringId FindString(const TraceModel& model, std::string_view text);
// Where the work is, for the first view of a trace: the extent of GPU activity and NVTX / imported host
// ranges, when it is a small part of the trace (a Python process's seconds of imports before the first
// kernel, a long tail after the last); else the whole trace. A viewer opening on 99.96% idle time shows
// nothing.
struct TimeRange {
  int64_t first_ns = 0, last_ns = 0;
};
TimeRange WorkRange(const TraceModel& model);
// The earliest kernel named `name` on any GPU stream of process `pid` (0: any process); invalid if none.
EventId FirstKernelEvent(const TraceModel& model, uint32_t pid, StringId name);

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Loss and formatting helpers
// ---------------------------------------------------------------------------------------------------------------

// LossRecords + reader report + importer problems, most severe first.
std::vector<LossStat> LossSummary(const TraceModel& model);
bool HasDataLoss(const TraceModel& model);

// Durations, sizes and rates read through gt/units.h (FormatDuration, FormatBytes, ...).
std::string FormatTimestamp(const TraceModel& model, int64_t ns);  // relative to first_ns: "+1.234567 s"

// The text reports of `gtrace stats` and `gtrace diff` live in gt/viewer/summary.h.

}  // namespace gt::viewer
