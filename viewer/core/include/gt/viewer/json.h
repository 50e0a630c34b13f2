// The one JSON encoding of the viewer core's results, for `gtrace stats --json` / `gtrace diff --json` and
// for the wasm C API (viewer/ui/capi.cc) the web page and its tests read. One shape per result, whoever asks:
// times in ns, shares 0..1, percentages as numbers, null where a value has no base. nlohmann-json stays
// inside the core (json.cc); callers get text.
//
// Shapes:
//   name row     {"name","count","total_ns","avg_ns","min_ns","max_ns","share","bytes"}
//   idle gap     {"device_id","start_ns","duration_ns","activity":[names],
//                 "cpu_activity":[{"name","kind":"api"|"range"|"library"|"os_wait","overlap_ns",
//                                  "source" (library or OS wait),"thread" (OS wait)}],"diagnosis"}
//   loss         {"name","severity","count","pid","detail"}
//   event        {"name","kind","track","key","start","end","fields":{name: value}}
//   flame graph  {"samples","focus","nodes":[{"node","frame","function","location","kind":"python"|"native"|
//                 "root","depth","parent","samples","self_samples","share","x0","x1","above_focus"}]}
//                (nodes: those laid out, in the graph's depth-first order; share: of all the graph's samples)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gt/viewer/analysis.h"
#include "gt/viewer/collectives.h"
#include "gt/viewer/compare.h"
#include "gt/viewer/cpu_samples.h"
#include "gt/viewer/model.h"
#include "gt/viewer/profiled.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"

namespace gt::viewer {

// Scalars, for the C API's replies about UI state (display, layout, selection position): the same escaping
// and number spelling as the results below.
std::string JsonQuote(std::string_view s);  // a JSON string literal
std::string JsonNumber(double v);           // shortest round-trip spelling; null when not finite

// [name row], the first `limit` rows.
std::string NameSummaryJson(const std::vector<NameSummary>& rows, size_t limit = SIZE_MAX);
// [name row] of the kernel table (KernelSummary), names resolved through `model`.
std::string KernelSummaryJson(const TraceModel& model, const std::vector<KernelSummaryRow>& rows);
std::string IdleGapsJson(const std::vector<IdleGap>& gaps);  // [idle gap]
// {"gaps":[idle gap],"devices":[each gap's device name]}: the server's /gaps answer (a remote trace's Summary
// tab), read back by ParseIdleGapsJson into what ExplainIdleGaps gave.
std::string IdleGapsWithDevicesJson(const std::vector<IdleGap>& gaps);
StatusOr<std::vector<IdleGap>> ParseIdleGapsJson(std::string_view json);
std::string LossesJson(const std::vector<LossStat>& losses);  // [loss]
// The idle gap's "cpu_samples" object: {"samples","threads","python_samples","not_unwound",
// "hot":[{"frame","path","kind","samples","share"}]}.
std::string CpuRangeProfileJson(const CpuRangeProfile& profile);
// The `limit` stacks with the most samples (a flame graph's leaves, as a folded-stacks line each):
// [{"samples","share" (of the graph's),"frames":[outermost .. innermost]}].
std::string HotStacksJson(const TraceModel& model, std::span<const FlameNode> graph, size_t limit);
// flame graph: `layout` (LayoutFlameGraph of `graph`, zoomed into `focus`) with each node's frame.
std::string FlameGraphJson(const TraceModel& model, std::span<const FlameNode> graph, uint32_t focus,
                           std::span<const FlameRect> layout);
std::string DevicesJson(const TraceModel& model);           // [device: span, busy, idle share, counts]
std::string EventJson(const TraceModel& model, EventId e);  // event; "null" when e is invalid

// The counters panel's results (the C API's gt_counters):
// {"profiled_launches","kernels":[{"name","bottleneck",
// "verdict","flags"[,"intensity","flops_per_s","memory_side": its roofline point, if it has one]}],
// "selected":{"name","verdict","compute_pct","memory_pct","top_stall","launch"} | null,
// "pc_sampling":{"samples","top_reason","hot_spot","summary"} | null}. `selected`, `pc_sampling`: of the
// selected kernel, null for none; `launch`: which profiled launch it is ("graph launch 0"), null for none.
std::string KernelCountersJson(const ProfiledKernels& profiled, const std::vector<RooflinePoint>& points,
                               const KernelAnalysis* selected, const std::string* launch,
                               const PcSamplingProfile* pc_sampling);

// The cross-rank NCCL report (the Summary tab's, the C API's gt_summary("collectives")), in the shape of
// `gtrace stats --json`'s "collectives": {"matched","unmatched_kernels","late_threshold_ns","ranks":[...],
// "late":[...],"diagnosis":[...]}.
std::string CollectivesJson(const CollectiveReport& report);

// `gtrace stats --json`: trace facts, devices, losses, idle gaps, per-kernel counter verdicts, and the name
// tables (kernels, copies, api, nvtx).
std::string StatsJson(const TraceModel& model);
// `gtrace diff --json`: both traces' facts and the name tables' changes; with `align` (--align) also
// "alignment" and "steps" as below.
std::string DiffJson(const TraceModel& before, const std::string& before_label, const TraceModel& after,
                     const std::string& after_label, const Alignment* align = nullptr,
                     const std::vector<StepDelta>* steps = nullptr);

// Two traces on one screen (gt/viewer/compare.h), for the C API's gt_compare_state / gt_compare_rows:
//   change row  {"name","delta_ns","change_pct","before":{"count","total_ns","avg_ns"}|null,"after":...}
//               (a row of `gtrace diff --json`'s tables)
//   alignment   {"name"|null,"ordinal" (1-based),"offset_ns","a_anchor_ns","b_anchor_ns","reason"}
//   step        {"ordinal" (1-based),"a_ns","b_ns","delta_ns","a_kernel_ns","b_kernel_ns","kernel_delta_ns"}
//               (null on the side that lacks it)
std::string NameChangesJson(const std::vector<NameChange>& changes, size_t limit = SIZE_MAX);
std::string AlignmentJson(const Alignment& align);
std::string StepDeltasJson(const std::vector<StepDelta>& steps);
// [{"name","a":{...},"b":{...}}] with per side {"compute_pct","memory_pct","bottleneck","verdict",
// "time_per_launch_s","stalls":[{"reason","stall_share"}] (top
// 5),"roofline":{"intensity","flops_per_s"}|null}.
std::string CounterPairsJson(const std::vector<CounterPair>& pairs);

}  // namespace gt::viewer
