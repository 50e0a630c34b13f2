// Kernel-counter analysis: what the details panel, the roofline and the verdicts show.
//
// Pure functions over the format's records (KernelMetricRecord, StallSample, KernelRecord, DeviceRecord): no
// UI, no CUPTI, deterministic, so golden tests pin every number and every sentence. Metric names are CUPTI's
// (the counter vocabulary, gt/counter_vocab.h, shared with the collector); metrics a trace lacks leave the
// derived quantity absent rather than zero, and impossible values are clamped for display *and* flagged,
// never shown as truth.
//
// [SECTION] Inputs       KernelCounters, grouping records per launch, launch shape
// [SECTION] Occupancy    theoretical occupancy + limiting resource from the launch and DeviceRecord limits
// [SECTION] Stalls       the reason table (meaning + usual fix) and per-kernel shares
// [SECTION] Analysis     derived metrics, SOL, flags, the one-line verdict
// [SECTION] Roofline     ceilings per memory level, roofs per precision, point placement
// [SECTION] PC sampling  per-kernel stall histograms and hot spots (PC offset / source line) from gcollect
//                        --pc-sampling
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gt/counter_vocab.h"
#include "gt/model.h"
#include "gt/units.h"

namespace gt {

struct TraceData;

// ---- [SECTION] Inputs
// ----------------------------------------------------------------------------------------

// Every counter value of one profiled launch (or of several launches merged), looked up by CUPTI name.
struct KernelCounters {
  uint32_t pid = 0;
  std::string kernel_name;
  uint32_t launch_ordinal = kNone;  // kNone once several launches are merged; kGraphOrdinalBit: graph kernel
  uint32_t correlation_id = 0;      // the timeline kernel's, once joined (a graph launch's kernels share it)
  uint32_t launches = 1;            // how many launches the values cover (sums are totals over them)
  struct Value {
    std::string name;
    double value = 0;
    uint8_t flags = 0;  // KernelMetricFlags from the collector
  };
  std::vector<Value> values;  // sorted by name

  const Value* Find(std::string_view name) const;
  bool Has(std::string_view name) const { return Find(name) != nullptr; }
  double Get(std::string_view name, double fallback = 0) const;
  void Set(std::string_view name, double value, uint8_t flags = 0);  // keeps `values` sorted
};

using StringLookup = std::function<std::string_view(StringId)>;

// Groups metric records per (pid, kernel name, launch ordinal), ordered by pid, name, ordinal. Whole-kernel
// StallSamples of a launch fill in stall counters the metric records lack (same name as the range
// profiler's).
std::vector<KernelCounters> GroupKernelCounters(std::span<const KernelMetricRecord> metrics,
                                                std::span<const StallSample> stalls, const StringLookup& str);
std::vector<KernelCounters> GroupKernelCounters(const TraceData& trace);

// "launch 3", or "graph launch 3" (model.h, kGraphOrdinalBit).
std::string LaunchOrdinalLabel(uint32_t ordinal);

// Sums counters (".sum") and averages everything else (".avg", ".pct_of_...", ".per_second", ratios) over the
// profiled launches of one kernel name: one point per name on the roofline.
KernelCounters MergeLaunches(std::span<const KernelCounters> launches);

struct LaunchShape {
  uint64_t grid_blocks = 0;
  uint32_t block_threads = 0;
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_bytes = 0;
  bool known() const { return block_threads > 0; }
};
LaunchShape LaunchShapeOf(const KernelRecord& k);
LaunchShape LaunchShapeOf(const KernelCounters& c);  // from the collector's launch__* values

// ---- [SECTION] Occupancy
// -------------------------------------------------------------------------------------

enum class OccupancyLimiter : uint8_t { kUnknown, kWarps, kRegisters, kSharedMemory, kBlocks, kInvalid };
const char* OccupancyLimiterName(OccupancyLimiter l);

struct Occupancy {
  bool valid = false;
  uint32_t warps_per_block = 0;
  uint32_t blocks_by_warps = 0, blocks_by_registers = 0, blocks_by_shared = 0, blocks_by_limit = 0;
  uint32_t blocks_per_sm = 0;
  uint32_t theoretical_warps = 0;
  double theoretical_pct = 0;  // of max_warps_per_sm
  OccupancyLimiter limiter = OccupancyLimiter::kUnknown;
  double waves = 0;             // grid blocks / (blocks_per_sm * sm_count)
  bool grid_too_small = false;  // fewer blocks than the SMs could hold at once
  std::string explanation;      // "registers: 128 regs/thread x 256 threads -> 2 blocks/SM"
};
// Hopper rules (CUDA occupancy calculator): registers allocated per warp in units of 256, shared memory in
// units of 128 B plus 1 KiB reserved per block, at most max_blocks_per_sm blocks.
Occupancy ComputeOccupancy(const LaunchShape& launch, const DeviceRecord& device);

// ---- [SECTION] Stalls
// ----------------------------------------------------------------------------------------

// StallReasonInfo (key, title, meaning, fix) is the counter vocabulary's: gt/counter_vocab.h.
std::span<const StallReasonInfo> StallReasonTable();  // every GH100 reason, in display order
const StallReasonInfo* FindStallReason(std::string_view key);

struct StallShare {
  std::string reason;      // key
  double count = 0;        // raw counter (warp-cycles)
  double per_issued = 0;   // cycles per issued instruction (ncu's "warp cycles per issued instruction")
  double share = 0;        // of all warp cycles (all reasons incl. selected), 0..1
  double stall_share = 0;  // of stalled cycles only (reasons with is_stall), 0..1; 0 for non-stalls
};
// Sorted by count, largest first. Empty when the trace has no stall counters.
std::vector<StallShare> ComputeStallShares(const KernelCounters& c);

// ---- [SECTION] Analysis
// --------------------------------------------------------------------------------------

// A derived number with provenance: absent (not collected), or present and maybe suspect.
struct Quantity {
  double value = 0;  // what to display (clamped when suspect)
  double raw = 0;    // what the counters said
  bool present = false;
  bool suspect = false;
  explicit operator bool() const { return present; }
};

enum class MemoryLevel : uint8_t { kDram = 0, kL2 = 1, kL1 = 2, kCount = 3 };
inline constexpr size_t kMemoryLevelCount = 3;
const char* MemoryLevelName(MemoryLevel l);

enum class Bottleneck : uint8_t { kUnknown, kMemory, kCompute, kLatency, kLaunch };
const char* BottleneckName(Bottleneck b);

struct AnalysisFlag {
  std::string metric;   // the derived quantity or counter that is impossible
  std::string message;  // why it is flagged
};

struct KernelAnalysis {
  std::string kernel_name;
  uint32_t pid = 0;
  uint32_t launch_ordinal = kNone;
  uint32_t launches = 1;

  Quantity time_s;  // per launch
  Quantity sm_clock_hz;
  std::array<double, kPrecisionCount> flops{};  // per launch, per precision
  double total_flops = 0;
  Precision main_precision = Precision::kFp32;        // the precision with the most FLOPs (or % of its roof)
  Quantity flops_per_s;                               // all precisions
  std::array<Quantity, kPrecisionCount> flops_pct{};  // of each precision's peak
  std::array<double, kMemoryLevelCount> bytes{};
  std::array<Quantity, kMemoryLevelCount> bandwidth;      // bytes/s
  std::array<Quantity, kMemoryLevelCount> bandwidth_pct;  // of peak
  std::array<Quantity, kMemoryLevelCount> intensity;      // FLOP per byte at that level

  Quantity issue_pct;    // issue slots used, % of peak (instructions issued / SMSP-cycles)
  Quantity compute_pct;  // SOL compute: sm__throughput when collected, else max(FLOP %, issue %)
  Quantity memory_pct;   // SOL memory: gpu__compute_memory_throughput when collected, else max level %
  MemoryLevel memory_level = MemoryLevel::kDram;  // the level that sets memory_pct
  bool sol_from_hardware = false;                 // true when the SOL bars are ncu's own throughput metrics

  Quantity l1_hit_pct, l2_hit_pct;
  Quantity dram_read_bytes, dram_write_bytes;
  Quantity achieved_occupancy_pct;
  Occupancy occupancy;
  Quantity sectors_per_request_ld, sectors_per_request_st;  // global; 4 is ideal for 4-byte coalesced access
  Quantity bank_conflict_ratio;                             // shared-memory conflicts per wavefront
  Quantity active_threads_per_warp;                         // 32 = no divergence
  Quantity atomics;                                         // global atom + red instructions
  Quantity hmma_instructions;                               // legacy mma.sync: FLOPs not counted by default

  std::vector<StallShare> stalls;
  Bottleneck bottleneck = Bottleneck::kUnknown;
  std::string verdict;  // one line
  std::vector<AnalysisFlag> flags;
};

// `launch` may be unknown (occupancy then from the counters' launch__* values, else absent).
KernelAnalysis AnalyzeKernel(const KernelCounters& counters, const DeviceRecord& device,
                             const LaunchShape& launch = {});

// Peaks the device record lacks, from the chip's per-SM-per-clock rates x SM count x SM clock (see
// docs/counters.md). Returns a copy; fields already set (derived or measured by the collector) are kept.
DeviceRecord WithDefaultPeaks(const DeviceRecord& device);

// The panel's and the verdicts' numbers ("84%", "1.2 TB/s", "3.2 µs") read through gt/units.h; durations
// there take nanoseconds (an analysis's seconds times 1e9).

// ---- [SECTION] Roofline
// --------------------------------------------------------------------------------------

struct RooflineCeiling {
  MemoryLevel level;
  double bytes_per_s;
};
struct RooflineRoof {
  Precision precision;
  double flops_per_s;
};

struct RooflineModel {
  std::vector<RooflineCeiling> ceilings;  // known levels only, DRAM first
  std::vector<RooflineRoof> roofs;        // known precisions only, highest first
  // min(bandwidth(level) * intensity, peak(precision)); 0 when either is unknown.
  double Attainable(double intensity, MemoryLevel level, Precision precision) const;
  double Ridge(MemoryLevel level, Precision precision) const;  // intensity where the roofs meet
  double Bandwidth(MemoryLevel level) const;
  double Peak(Precision precision) const;
  // Axis ranges (log10 space) covering every ceiling, roof, ridge and the given points, with margins.
  void Bounds(std::span<const struct RooflinePoint> points, double* x_min, double* x_max, double* y_min,
              double* y_max) const;
};
RooflineModel BuildRoofline(const DeviceRecord& device);

struct RooflinePoint {
  size_t analysis_index = 0;  // into the analyses passed to PlaceOnRoofline
  std::string kernel_name;
  MemoryLevel level = MemoryLevel::kDram;
  Precision precision = Precision::kFp32;
  double intensity = 0;  // FLOP/byte
  double flops_per_s = 0;
  double attainable = 0;     // the roof at this intensity
  double pct_of_roof = 0;    // flops_per_s / attainable
  bool memory_side = false;  // left of the ridge: bandwidth limits it
  double total_time_s = 0;   // what the point is sized by
  double radius = 0;         // 0..1, sqrt of its share of the largest total time
};

// One point per analysis with FLOPs and bytes at `level`; kernels without either are left out (they cannot be
// placed; the panel says so). `total_time_s[i]` is analyses[i]'s total GPU time (all launches, from the
// timeline); when empty, time per launch x launches is used.
std::vector<RooflinePoint> PlaceOnRoofline(const RooflineModel& model,
                                           std::span<const KernelAnalysis> analyses, MemoryLevel level,
                                           std::span<const double> total_time_s = {});

// The point under (x, y) in log10 axis space within `pick_radius` (log10 units), or -1. For hover and click.
int PickRooflinePoint(std::span<const RooflinePoint> points, double log_x, double log_y, double pick_radius);

// ---- [SECTION] PC sampling
// -----------------------------------------------------------------------------------

// gcollect --pc-sampling writes StallSamples with launch_ordinal = kNone (aggregated over all launches of a
// kernel name), one per (kernel, PC offset, reason) and flush; the same key can repeat across flushes, so
// everything here sums. Counters-run StallSamples (one launch each, launch_ordinal set) are not PC samples.
inline bool IsPcSample(const StallSample& s) {
  return s.launch_ordinal == kNone;
}

struct PcStallBin {
  std::string reason;  // key, as in StallReasonTable()
  uint64_t samples = 0;
  double share = 0;        // of all the kernel's samples (issuing ones included), 0..1
  double stall_share = 0;  // of the samples in a stall reason (is_stall), 0..1; 0 for non-stalls
};

// One hot spot: a SASS offset, or a source line (all the PCs compiled from it).
struct PcHotSpot {
  uint64_t pc_offset = 0;   // the PC; for a line, its hottest PC
  std::string source_file;  // "" when the cubin had no line info
  uint32_t source_line = 0;
  uint32_t pcs = 1;  // PCs folded into this spot (lines)
  uint64_t samples = 0;
  double share = 0;             // of the kernel's samples
  std::string dominant_reason;  // the reason with the most samples here
  double dominant_share = 0;    // of this spot's samples
};

struct PcSamplingProfile {
  uint32_t pid = 0;
  std::string kernel_name;
  uint64_t samples = 0;
  uint32_t distinct_pcs = 0;
  std::vector<PcStallBin> reasons;  // largest first
  std::vector<PcHotSpot> by_pc;     // hottest first, at most `top` entries
  std::vector<PcHotSpot> by_line;   // hottest first, at most `top`; empty when no PC had a line
  double line_coverage = 0;         // share of samples at PCs with a source line
  std::string summary;              // one line: dominant stall, its usual fix, the hottest line or PC
};

// One profile per (pid, kernel name) with PC samples, ordered by samples (largest first).
std::vector<PcSamplingProfile> BuildPcSamplingProfiles(std::span<const StallSample> samples,
                                                       const StringLookup& str, size_t top = 20);
std::vector<PcSamplingProfile> BuildPcSamplingProfiles(const TraceData& trace, size_t top = 20);
const PcSamplingProfile* FindPcSamplingProfile(std::span<const PcSamplingProfile> profiles, uint32_t pid,
                                               std::string_view kernel_name);
// "copy.cu:42" (basename) or "pc 0x1a0": how a hot spot is named in the table and the summary.
std::string HotSpotLabel(const PcHotSpot& h);
// The histogram and both hot-spot tables as aligned text (golden tests, `gtrace` text output).
std::string FormatPcSamplingProfile(const PcSamplingProfile& p);

}  // namespace gt
