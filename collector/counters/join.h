// The two-run join: counters cannot come from the launches the timeline records (kernels replayed by the
// range profiler lose their timestamps), so `gcollect --counters` with a timeline runs the app twice and this
// pure function moves the counters run's per-launch metrics onto the timeline run's kernels.
//
// Keys: processes pair up by (executable name, occurrence in start order); kernels by (name, per-name launch
// ordinal in launch order = correlation-id order), and the launch shape (grid, block) must agree. Anything
// that does not pair up is reported and dropped, never guessed. No CUPTI, no GPU: tests feed TraceData built
// in code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gt/trace_data.h"

namespace gt::counters {

struct JoinReport {
  uint32_t profiled_launches = 0;   // launches with counters in the counters run
  uint32_t matched_launches = 0;    // of those, found in the timeline run
  uint32_t unmatched_launches = 0;  // reported in `problems`, their records dropped
  uint32_t unmatched_processes = 0;
  std::vector<std::string> problems;  // one line each, first 200
  // Graph-launched kernels the counters run selected but could not profile (a graph it cannot replay node by
  // node, same-name kernels with no order between them, ...): one line per kernel name and reason, from the
  // counters run's `counters_not_profiled` loss records, which the joined trace keeps.
  uint32_t graph_kernels = 0;
  std::vector<std::string> not_profiled;
  std::string Summary() const;  // "joined 12 of 14 profiled launches; 2 unmatched: ..."
};

// Loss records of the counters run about graph launches: how many it replayed node by node, and per kernel
// name and reason the graph kernels it could not profile ("not profiled: graph launch: NAME (N launches):
// REASON").
inline constexpr const char kGraphLaunchesLoss[] = "counters_graph_launches";
inline constexpr const char kNotProfiledLoss[] = "counters_not_profiled";

// The kernel the counters module launches before each profiled launch to clean the L2 (--cache-control all).
// It appears in the counters run's activity records; nothing keeps it.
inline constexpr const char kL2FlushKernel[] = "gtrace_l2_flush";

// Moves the counters' KernelMetricRecords and StallSamples into `timeline` (pids, string ids and correlation
// ids rewritten to the timeline's), adds a LossRecord "counters_unmatched" when something did not pair up,
// and fills the timeline's DeviceRecord peaks from the counters' hardware peaks (ApplyCounterPeaks).
//
// kSupplement joins a second counters run of the same app (--cache-control all: the metrics of CUPTI's kernel
// replay, selection.h MetricSubset) into a trace that already holds the first one's: metrics the trace
// already has for a kernel are not added twice, except the replay passes and cost, which add up; graph
// kernels are not reported again.
enum class JoinMode : uint8_t { kPrimary, kSupplement };
JoinReport JoinCountersIntoTimeline(TraceData& timeline, const TraceData& counters,
                                    JoinMode mode = JoinMode::kPrimary);

// Per-launch ordinal of every timeline kernel (index into trace.kernels -> n-th launch of its name in its
// pid). Kernels run by a graph launch (graph_id != 0) are counted apart, with kGraphOrdinalBit (model.h), in
// graph launch order and, within one launch, start time order.
std::vector<uint32_t> KernelLaunchOrdinals(const TraceData& trace);

// "NAME launch 3", or "NAME graph launch 3" for a graph ordinal: how reports name one launch.
std::string LaunchLabel(const std::string& kernel_name, uint32_t ordinal);

// `gcollect --counters-only`: turns a counters run's own records into a trace without a timeline run. Keeps
// the profiled launches only (their activity records carry no timestamps: replayed kernels get start = end =
// 0), pairs each with its counters by (pid, name, ordinal) and gives it its correlation id, and lays the
// profiled kernels of each device end to end in launch order with gpu__time_duration.sum as the duration.
// Positions on the time axis are therefore not measured: the trace says so in its metadata
// ("timeline" = "none: counters only ...") and in a `counters_only` info record the viewer's loss panel
// shows; gaps, overlap and host activity are absent, not invented. The flush kernel is dropped.
JoinReport BuildCountersOnlyTrace(TraceData& counters_run);

// Sets DeviceRecord bandwidth/FLOP peaks from the range profiler's own `*.peak_sustained` metrics times the
// clock measured during the kernels (the denominators ncu uses), where the counters carry them. Returns how
// many devices were updated.
int ApplyCounterPeaks(TraceData& trace);

// Reads several .gtrace files (e.g. one part per process of the counters run) into one TraceData with
// consistent string ids. Damaged files contribute what is intact and add a line to `warnings`.
Status LoadTraceFiles(const std::vector<std::string>& paths, TraceData* out,
                      std::vector<std::string>* warnings);

}  // namespace gt::counters
