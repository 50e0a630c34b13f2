// One trace from many: the files of a distributed job (one per rank, per node, or per gcollect) placed on one
// clock. `gtrace merge` writes the result; the viewer opens several files through the same plan.
//
// Clocks: processes of one boot of one host share CLOCK_MONOTONIC (the trace clock), so files with the same
// boot id are merged as they are, and ranks of one host never move apart. Each other host is placed by its
// wall-clock anchors (ClockSync pairs: NTP-grade, milliseconds), then by the job itself: the same NCCL
// collective ends within microseconds on every rank, so the ends of matched collectives (same kernel name,
// same ordinal in each process) give the host's offset and, over a long run, its drift.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gt/reader.h"
#include "gt/status.h"
#include "gt/transform.h"
#include "gt/viewer/model.h"

namespace gt::viewer {

struct MergeInput {
  std::string name;  // shown in messages (a file name)
  std::span<const uint8_t> bytes;
};

enum class AlignMode : uint8_t {
  kAuto,         // same boot id: as is; other hosts: wall clock, refined by collectives
  kCollectives,  // every input placed by collectives, even inputs of one host (to check against the truth)
  kWallClock,    // anchors only
  kNone,         // trace clocks as recorded
};

struct MergeOptions {
  AlignMode align = AlignMode::kAuto;
};

// Where one host's clock went.
struct HostAlignment {
  std::string host, boot_id;
  std::vector<uint32_t> inputs;  // indices into the inputs
  std::vector<int32_t> ranks;    // ranks recorded on it, sorted
  std::string method;            // "reference", "same boot", "collectives", "wall clock", "none"
  ClockMap clock;                // applied to its timestamps
  int64_t wall_offset_ns = 0;    // what the anchors alone said (0 when either side has none)
  bool has_wall = false;
  double residual_ns = 0;       // RMS of matched collective ends around the fit
  uint32_t collectives = 0;     // matched collective ends that support the fit
  uint32_t rejected = 0;        // matched ends too far from the rest to trust (other communicators)
  uint32_t reference_last = 0;  // inliers where the reference's rank clearly arrived last
  uint32_t placed_last = 0;     // inliers where this host's rank clearly arrived last
};

struct MergeInputInfo {
  std::string name, host, boot_id, job;
  std::vector<int32_t> ranks;
  uint32_t processes = 0;
  uint64_t events = 0;
  uint32_t collectives = 0;  // NCCL kernels recorded
  bool usable = false;
  std::string error;  // why it is left out (not usable)
  LoadReport report;
  TraceMetadata metadata;
};

struct MergePlan {
  std::vector<MergeInputInfo> inputs;
  std::vector<HostAlignment> hosts;
  std::vector<RecordTransform> transforms;  // per input (string_base set by the feeder)
  std::vector<std::string> warnings;        // said to the user; the merge goes on
  uint32_t usable_inputs() const;
};

// Reads every input once (records are decoded, nothing is kept but processes, metadata and NCCL kernel ends),
// decides each host's clock and every process's id. Fails only when no input is usable.
StatusOr<MergePlan> PlanMerge(std::span<const MergeInput> inputs, const MergeOptions& options = {});

// Feeds input `index` of the plan into `sink`, its string ids starting after `string_base`; returns the
// highest string id it used (the next input's base). Unusable inputs feed nothing. With `interner` (one for
// all inputs fed into one sink) a text has one id in every input, and string_base is not used: for a sink
// that groups by string id, as the viewer's model does (a writer interns texts itself).
StatusOr<StringId> FeedMergeInput(const MergePlan& plan, size_t index, std::span<const uint8_t> bytes,
                                  TraceSink& sink, StringId string_base, StringInterner* interner = nullptr);

// The merged trace's metadata: the reference host's entries, what was merged and how each host was placed.
TraceMetadata MergedMetadata(const MergePlan& plan);

// The viewer's way to open several files at once: plans the merge, then feeds every usable input straight
// into one model (no merged .gtrace is written: the wasm build has no zstd compressor, and one pass is
// enough). The plan's warnings become named entries of the model's losses (an input left out is an error, the
// rest warnings), so a bad input shows in the Data loss panel rather than disappearing. Fails only when no
// input is a readable .gtrace. `plan_out`, when given, receives the plan (for FormatMergeReport).
StatusOr<std::unique_ptr<TraceModel>> LoadMergedTraces(std::span<const MergeInput> inputs,
                                                       const MergeOptions& options = {},
                                                       MergePlan* plan_out = nullptr);

// A few lines for a terminal: per host its ranks, method, offset, drift, residual and support; then warnings.
std::string FormatMergeReport(const MergePlan& plan);

}  // namespace gt::viewer
