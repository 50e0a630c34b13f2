// Two traces on one screen: where B goes on A's time axis (aligned on the Nth instance of an NVTX range, or
// on the start), the kernel table's before/after/delta rows (the rows of `gtrace diff`: CompareSummaries),
// the per-step delta summary, the counterpart of a kernel in the other trace and the counters of a kernel
// profiled in both. Headless; the viewer (viewer/ui/compare_view.cc), its C API and `gtrace diff --align`
// read it.
//
// [SECTION] Alignment
// [SECTION] Kernel rows and steps
// [SECTION] Counterparts
// [SECTION] Counters side by side
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gt/status.h"
#include "gt/viewer/analysis.h"
#include "gt/viewer/model.h"
#include "gt/viewer/profiled.h"
#include "gt/viewer/summary.h"

namespace gt::viewer {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Alignment
// ---------------------------------------------------------------------------------------------------------------

// One instance of a named range (NVTX or imported host op, any thread, any depth). Numbered ranges are
// instances of one name: "step 0", "step 1" (or "ProfilerStep#7", "iter_12") are instances of "step".
struct RangeSpan {
  int64_t start = 0, end = 0;
};
// Every instance of ranges named `name`, by start (ties: longer first).
std::vector<RangeSpan> RangeInstances(const TraceModel& model, std::string_view name);

// What the user asked to align on: the `ordinal`th (0-based) instance of range `name` in both traces, or the
// traces' starts when `name` is empty.
struct AlignRequest {
  std::string name;
  uint32_t ordinal = 0;
  bool automatic = true;  // pick the range (DefaultAlignRequest) rather than use name/ordinal
};

struct Alignment {
  std::string name;         // "" = aligned on the starts
  uint32_t ordinal = 0;     // 0-based instance of `name`
  int64_t a_anchor_ns = 0;  // in A's clock: that instance's start (or A's first_ns)
  int64_t b_anchor_ns = 0;
  int64_t offset_ns = 0;  // added to B's times to draw them on A's axis: a_anchor_ns - b_anchor_ns
  std::string reason;     // one line for the screen: what it aligned on and why
};

// The default: the range name that both traces have at least twice and whose first instance in A starts first
// (the outermost loop body, e.g. "step"), on its second instance so warm-up is skipped; nothing common: the
// starts.
AlignRequest DefaultAlignRequest(const TraceModel& a, const TraceModel& b);
// Resolves a request. A range name missing from either trace or an ordinal past its instances falls back to
// the starts, and `reason` says so (the screen shows it; no error: the comparison still opens).
Alignment Align(const TraceModel& a, const TraceModel& b, const AlignRequest& request);
// "step:2" (1-based instance: the user's count) or "step" (its first instance) -> a request; "" -> automatic.
// "start" aligns on the starts. A ':' not followed by digits belongs to the name ("domain:work").
StatusOr<AlignRequest> ParseAlignSpec(std::string_view spec);

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Kernel rows and steps
// ---------------------------------------------------------------------------------------------------------------

// The kernel table's before/after/delta rows: exactly `gtrace diff`'s kernel table (CompareSummaries over
// SummarizeByName(kKernels) of both traces), by |delta| (descending).
std::vector<NameChange> CompareKernels(const TraceModel& a, const TraceModel& b);

// One step (an instance of the alignment range), paired by ordinal between the traces.
struct StepDelta {
  uint32_t ordinal = 0;  // 0-based
  bool in_a = false, in_b = false;
  int64_t a_ns = 0, b_ns = 0;                // the range's duration
  int64_t a_kernel_ns = 0, b_kernel_ns = 0;  // kernel time inside the range's time span (clipped to it)
  int64_t delta_ns() const { return b_ns - a_ns; }
  int64_t kernel_delta_ns() const { return b_kernel_ns - a_kernel_ns; }
};
// Instances of range `name` in both traces paired by ordinal (at most `limit` rows); empty for "".
std::vector<StepDelta> CompareSteps(const TraceModel& a, const TraceModel& b, std::string_view name,
                                    size_t limit = 10'000);
// Sum of kernel durations of every GPU stream clipped to [t0, t1).
int64_t KernelTimeIn(const TraceModel& model, int64_t t0, int64_t t1);
// `gtrace diff --align`'s text: the alignment, then one line per step (at most top_n, 0 = all): duration in
// A and B, its change, kernel time in A and B and its change; a total line.
std::string StepDeltaReport(const Alignment& align, const std::vector<StepDelta>& steps, size_t top_n);

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Counterparts
// ---------------------------------------------------------------------------------------------------------------

// Where a kernel is among the kernels of its name: the step it runs in (the last instance of the alignment
// range that starts at or before it; -1 when none or aligned on the starts) and its ordinal among that name's
// kernels starting in that step (or in the whole trace for step -1).
struct KernelPlace {
  int64_t step = -1;
  uint64_t ordinal = 0;
};
std::optional<KernelPlace> PlaceOfKernel(const TraceModel& model, EventId kernel,
                                         std::string_view align_name);

// The kernel of `to` at the same place as `kernel` of `from`: same name, same step, same ordinal within the
// step; by overall ordinal when the step is missing in `to` (or there is none). Invalid when `kernel` is no
// kernel or `to` has fewer kernels of that name.
EventId Counterpart(const TraceModel& from, EventId kernel, const TraceModel& to,
                    std::string_view align_name);

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Counters side by side
// ---------------------------------------------------------------------------------------------------------------

// A kernel (by name) profiled in both traces: its merged analysis in each (ncu's baseline view).
struct CounterPair {
  std::string name;
  const KernelAnalysis* a = nullptr;  // into the ProfiledKernels passed in
  const KernelAnalysis* b = nullptr;
};
// Kernel names profiled in both, in A's order; the first analysis of a name when several processes ran it.
std::vector<CounterPair> PairProfiledKernels(const ProfiledKernels& a, const ProfiledKernels& b);

}  // namespace gt::viewer
