// Nsight Compute's `ncu --csv --page raw` output: parsed into per-launch metric values in base units, then
// either a model of its own (the profiled launches only) or attached to an open timeline, paired launch by
// launch, so the counters panel, the roofline, the verdicts and `gtrace stats` read ncu's values through the
// same KernelMetricRecords a `gcollect --counters` trace has. ncu's metric names are the CUPTI names gtrace's
// counter vocabulary uses (gt/counter_vocab.h); metrics outside it are kept by name. docs/ncu-import.md.
//
// [SECTION] Parse   sniffing, CSV rows, units row -> base units, problems counted
// [SECTION] Model   standalone: the launches back to back on one stream per device, their counters
// [SECTION] Join    pairing with a timeline by kernel base name + per-name launch ordinal
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gt/status.h"
#include "gt/viewer/merge.h"
#include "gt/viewer/model.h"

namespace gt::viewer {

class ModelBuilder;

// ---- [SECTION] Parse ------------------------------------------------------------------------------------

// True when the text, after any "==PROF==" / "==WARNING==" lines ncu prints to the same stdout, starts with
// ncu's CSV header ("ID","Process ID",...).
bool LooksLikeNcuCsv(std::span<const uint8_t> bytes);

struct NcuLaunch {
  uint64_t id = 0;  // ncu's "ID": profiling order
  uint32_t pid = 0;
  std::string process;
  std::string kernel;  // as printed (--print-kernel-base function, demangled or mangled)
  uint32_t device = 0;
  uint32_t stream = 0;
  uint8_t cc_major = 0, cc_minor = 0;
  std::array<uint32_t, 3> block{0, 0, 0}, grid{0, 0, 0};  // 0 = not given
  std::vector<std::pair<uint32_t, double>> values;        // (metric index, value in base units)
  std::vector<std::pair<uint32_t, std::string>> texts;    // (metric index, text) of text-valued metrics
};

struct NcuMetricColumn {
  std::string name;  // "dram__bytes_read.sum"
  std::string unit;  // as ncu printed it ("Mbyte")
  double scale = 1;  // value * scale = gtrace's unit (bytes, ns for durations, per second for rates)
  bool known_unit = true;
  bool in_vocabulary = false;  // one of gt/counter_vocab.h's names (or a stall reason's counter)
  bool derived = false;  // not a column: computed from ncu's columns by an identity (docs/ncu-import.md)
};

struct NcuReport {
  std::vector<NcuMetricColumn> metrics;
  std::vector<NcuLaunch> launches;  // in ID order
  bool base_units = true;           // every unit was already a base unit (--print-units base)
  // What could not be read, each counted; none of these stop the import.
  uint64_t prof_lines = 0;            // "==PROF==" and other non-CSV lines skipped
  uint64_t ragged_rows = 0;           // rows whose cell count differs from the header's: skipped whole
  uint64_t na_cells = 0;              // "n/a" or empty: left absent
  uint64_t non_finite_cells = 0;      // nan, inf, out of range (launch attributes too): left absent
  uint64_t text_cells = 0;            // text in a metric column (kept as text, not a number)
  uint64_t duplicate_columns = 0;     // a metric column repeated: the first kept
  uint64_t unknown_unit_columns = 0;  // unit not understood: its values left out, reported
  uint64_t derived_values = 0;        // values computed from ncu's columns by an identity
  std::vector<std::string> problems;  // human-readable, first 20
};

// Parses the whole CSV. Fails with a clear message when it is not ncu's raw CSV (header), has no units row,
// or no launch row could be read.
StatusOr<NcuReport> ParseNcuCsv(std::string_view text);

// The units ncu prints, to gtrace's: bytes, nanoseconds for a duration, per second for a rate; SI prefixes
// (Kbyte = 1e3 bytes; see docs/ncu-import.md). false when the unit is not understood (*scale = 1).
bool NcuUnitScale(std::string_view unit, double* scale);

// "copy_kernel" for "void ns::copy_kernel<float>(float const*, float*, unsigned long)", "copy_kernel" or a
// mangled "_Z11copy_kernelPKfPfm": the name both sides print whatever --print-kernel-base was.
std::string KernelBaseName(std::string_view name);

// ---- [SECTION] Model ------------------------------------------------------------------------------------

// A model of the report alone: per ncu launch a kernel event (with its launch configuration), placed back
// to back in ID order on one stream per (process, device), each as long as its measured gpu__time_duration
// (a 1 ns placeholder when ncu has none): the times between launches are not real, and an Info entry in the
// losses says so. Every metric becomes a KernelMetricRecord joined to its event by correlation id.
Status ImportNcuCsv(std::string_view text, ModelBuilder& builder);

// ---- [SECTION] Join ---------------------------------------------------------------------------------------

struct NcuJoinResult {
  size_t launches = 0;                // ncu launches offered
  size_t paired = 0;                  // given a timeline kernel
  size_t timeline_kernels = 0;        // kernel events in the timeline
  std::vector<std::string> unpaired;  // "copy_kernel #3 (ID 7): the timeline has 3 launches of it", first 20
  size_t unpaired_count = 0;
  size_t metrics = 0;   // KernelMetricRecords added
  std::string summary;  // one line: "ncu: 12 of 14 launches paired with timeline kernels; 2 not"
};

// Pairs every ncu launch with a kernel event of `timeline`: the i-th ncu process (by first ID) with the i-th
// process that ran kernels (by first kernel start), then within it by kernel base name and per-name launch
// ordinal (ncu's ID order against start order). Each paired launch's metrics join `timeline.kernel_metrics`
// under the timeline kernel's name, process, correlation id and launch ordinal, exactly as a
// `gcollect --counters` trace joins them; devices the timeline lacks come from ncu's device attributes. The
// summary and the unpaired launches land in the model's losses (Info / Warning).
NcuJoinResult AttachNcuReport(const NcuReport& report, TraceModel& timeline, std::string_view source_name);

// Several files opened at once (a drop, several ?url=, `gtrace stats T --ncu X.csv`): the ncu CSVs among them
// are attached to the timeline the others make (one: loaded as it is, any format; several: merged as one
// job, merge.h), or, with no other input, one CSV opens standalone. `warnings` receives the merge's warnings
// and, per CSV, what did not pair or could not be read (a bad CSV is reported, the timeline still opens).
// Without any CSV this is LoadMergedTraces.
StatusOr<std::unique_ptr<TraceModel>> LoadTracesWithNcu(std::span<const MergeInput> inputs,
                                                        std::vector<std::string>* warnings,
                                                        MergePlan* plan_out = nullptr);

}  // namespace gt::viewer
