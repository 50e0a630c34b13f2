// The counter vocabulary, spelled once for both sides of the collector/viewer wall: the CUPTI Range Profiler
// metric names gcollect asks for and the viewer reads back from the trace, the metric lists of the counter
// sets
// (`gcollect --counters=SET`), and the warp-stall reasons with what they mean. Names are Hopper's (GH100,
// sm_90): the collector validates them against the chip and drops what a chip lacks; the viewer leaves a
// derived value absent when a trace lacks its inputs. Standard library only (the viewer's wasm build compiles
// it).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace gt {

namespace metric {

// Time and clocks.
inline constexpr const char* kTime = "gpu__time_duration.sum";
inline constexpr const char* kSmCycles = "sm__cycles_elapsed.avg";
inline constexpr const char* kSmClock = "sm__cycles_elapsed.avg.per_second";

// Bytes moved and cache sectors per memory level.
inline constexpr const char* kDramBytes = "dram__bytes.sum";
inline constexpr const char* kDramBytesRead = "dram__bytes_read.sum";
inline constexpr const char* kDramBytesWrite = "dram__bytes_write.sum";
inline constexpr const char* kL2Bytes = "lts__t_bytes.sum";
inline constexpr const char* kL1Bytes = "l1tex__t_bytes.sum";
inline constexpr const char* kL2Sectors = "lts__t_sectors.sum";
inline constexpr const char* kL2SectorHits = "lts__t_sectors_lookup_hit.sum";
inline constexpr const char* kL1Sectors = "l1tex__t_sectors.sum";
inline constexpr const char* kL1SectorHits = "l1tex__t_sectors_lookup_hit.sum";

// Thread instructions per precision outside tensor cores (an FMA is 2 FLOPs).
inline constexpr const char* kDfma = "sm__sass_thread_inst_executed_op_dfma_pred_on.sum";
inline constexpr const char* kDadd = "sm__sass_thread_inst_executed_op_dadd_pred_on.sum";
inline constexpr const char* kDmul = "sm__sass_thread_inst_executed_op_dmul_pred_on.sum";
inline constexpr const char* kFfma = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum";
inline constexpr const char* kFadd = "sm__sass_thread_inst_executed_op_fadd_pred_on.sum";
inline constexpr const char* kFmul = "sm__sass_thread_inst_executed_op_fmul_pred_on.sum";
inline constexpr const char* kHfma = "sm__sass_thread_inst_executed_op_hfma_pred_on.sum";
inline constexpr const char* kHadd = "sm__sass_thread_inst_executed_op_hadd_pred_on.sum";
inline constexpr const char* kHmul = "sm__sass_thread_inst_executed_op_hmul_pred_on.sum";

// Tensor-core operations per input type: Hopper's warpgroup MMA (hgmma/igmma), the all-path fp64/fp8
// counters, and legacy mma.sync (hmma).
inline constexpr const char* kTensorHgmmaBf16 = "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum";
inline constexpr const char* kTensorHgmmaFp16 = "sm__ops_path_tensor_op_hgmma_src_fp16.sum";
inline constexpr const char* kTensorHgmmaTf32 = "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum";
inline constexpr const char* kTensorFp64 = "sm__ops_path_tensor_src_fp64.sum";
inline constexpr const char* kTensorFp8 = "sm__ops_path_tensor_src_fp8.sum";
inline constexpr const char* kTensorIgmmaInt8 = "sm__ops_path_tensor_op_igmma_src_int8.sum";
inline constexpr const char* kTensorHmmaBf16 = "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum";
inline constexpr const char* kTensorHmmaFp16 = "sm__ops_path_tensor_op_hmma_src_fp16.sum";
inline constexpr const char* kTensorHmmaTf32 = "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum";

// The hardware's per-cycle peaks and the clocks of each unit (free on GH100: no extra replay pass).
inline constexpr const char* kDramBytesPeak = "dram__bytes.sum.peak_sustained";
inline constexpr const char* kDramClock = "dram__cycles_elapsed.avg.per_second";
inline constexpr const char* kL2BytesPeak = "lts__t_bytes.sum.peak_sustained";
inline constexpr const char* kL2Clock = "lts__cycles_elapsed.avg.per_second";
inline constexpr const char* kL1BytesPeak = "l1tex__t_bytes.sum.peak_sustained";
inline constexpr const char* kDfmaPeak = "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained";
inline constexpr const char* kFfmaPeak = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained";
inline constexpr const char* kHfmaPeak = "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained";
inline constexpr const char* kTensorHgmmaBf16Peak =
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum.peak_sustained";
inline constexpr const char* kTensorHgmmaFp16Peak =
    "sm__ops_path_tensor_op_hgmma_src_fp16.sum.peak_sustained";
inline constexpr const char* kTensorHgmmaTf32Peak =
    "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum.peak_sustained";
inline constexpr const char* kTensorFp64Peak = "sm__ops_path_tensor_src_fp64.sum.peak_sustained";
inline constexpr const char* kTensorFp8Peak = "sm__ops_path_tensor_src_fp8.sum.peak_sustained";
inline constexpr const char* kTensorIgmmaInt8Peak =
    "sm__ops_path_tensor_op_igmma_src_int8.sum.peak_sustained";
inline constexpr const char* kIssuedPeak = "smsp__inst_issued.sum.peak_sustained";

// Issue, occupancy, access patterns.
inline constexpr const char* kIssued = "smsp__inst_issued.sum";
inline constexpr const char* kWarpsActivePct = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kWarpsActivePerCycle = "sm__warps_active.avg.per_cycle_active";
inline constexpr const char* kCtasLaunched = "sm__ctas_launched.sum";
inline constexpr const char* kWarpsLaunched = "smsp__warps_launched.sum";
inline constexpr const char* kGlobalLoadSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
inline constexpr const char* kGlobalLoadRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
inline constexpr const char* kGlobalStoreSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
inline constexpr const char* kGlobalStoreRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
inline constexpr const char* kSharedBankConflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum";
inline constexpr const char* kSharedWavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum";
inline constexpr const char* kThreadInstExecuted = "smsp__thread_inst_executed.sum";
inline constexpr const char* kInstExecuted = "smsp__inst_executed.sum";
inline constexpr const char* kGlobalAtomics = "sm__sass_inst_executed_op_global_atom.sum";
inline constexpr const char* kGlobalReductions = "sm__sass_inst_executed_op_global_red.sum";
inline constexpr const char* kHmmaInstructions = "sm__inst_executed_pipe_tensor_op_hmma.sum";

// Unit throughputs in % of peak (speed of light).
inline constexpr const char* kSmThroughputPct = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kComputeMemoryThroughputPct =
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kDramThroughputPct = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kL2ThroughputPct = "lts__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kL1ThroughputPct = "l1tex__throughput.avg.pct_of_peak_sustained_active";

// Launch attributes the counters module records itself (not hardware counters), named like ncu's so that a
// counters trace is self-describing even without a timeline run to join.
inline constexpr const char* kGridSize = "launch__grid_size";
inline constexpr const char* kBlockSize = "launch__block_size";
inline constexpr const char* kRegisters = "launch__registers_per_thread";
inline constexpr const char* kStaticShared = "launch__shared_mem_per_block_static";
inline constexpr const char* kDynamicShared = "launch__shared_mem_per_block_dynamic";
inline constexpr const char* kPasses = "profiler__passes";          // range-profiler passes of this launch
inline constexpr const char* kCostNs = "profiler__replay_cost_ns";  // wall time the replay added
}  // namespace metric

// ---- metric lists of the counter sets (collector/counters/metric_sets.h names the sets) ----

// "roofline": time, clocks, FLOPs per precision (tensor cores included), bytes per level, hit rates. Counters
// (.sum / .avg) rather than ratios wherever the viewer can divide itself: a ratio hides the raw numbers, and
// one whose halves come from different replay passes must be flagged, not trusted. The all-paths
// sm__ops_path_tensor_src_fp16 / _int8 aggregates cost 2 passes each on GH100, so the fp16/int8 tensor FLOPs
// are the warpgroup-MMA ones; legacy mma.sync FLOPs are the "hmma" set (the default counts HMMA instructions
// to say when they matter).
inline constexpr const char* kRooflineMetrics[] = {
    metric::kTime,
    metric::kSmCycles,
    metric::kSmClock,
    metric::kDramBytesRead,
    metric::kDramBytesWrite,
    metric::kL2Bytes,
    metric::kL1Bytes,
    metric::kL2Sectors,
    metric::kL2SectorHits,
    metric::kL1Sectors,
    metric::kL1SectorHits,
    metric::kDfma,
    metric::kDadd,
    metric::kDmul,
    metric::kFfma,
    metric::kFadd,
    metric::kFmul,
    metric::kHfma,
    metric::kHadd,
    metric::kHmul,
    metric::kTensorHgmmaBf16,
    metric::kTensorHgmmaFp16,
    metric::kTensorHgmmaTf32,
    metric::kTensorFp64,
    metric::kTensorFp8,
    metric::kTensorIgmmaInt8,
};

// Also in "roofline": the hardware's own per-cycle peaks and the clocks the kernel ran at, the denominators
// ncu uses for "% of peak" and what the trace's roofline ceilings come from.
inline constexpr const char* kPeakMetrics[] = {
    metric::kDramBytesPeak,
    metric::kDramClock,
    metric::kL2BytesPeak,
    metric::kL2Clock,
    metric::kL1BytesPeak,
    metric::kDfmaPeak,
    metric::kFfmaPeak,
    metric::kHfmaPeak,
    metric::kTensorHgmmaBf16Peak,
    metric::kTensorHgmmaFp16Peak,
    metric::kTensorHgmmaTf32Peak,
    metric::kTensorFp64Peak,
    metric::kTensorFp8Peak,
    metric::kTensorIgmmaInt8Peak,
    metric::kIssuedPeak,
};

// "hmma": legacy mma.sync (HMMA) tensor FLOPs per input type (+3 passes on GH100).
inline constexpr const char* kHmmaMetrics[] = {
    metric::kTensorHmmaBf16,
    metric::kTensorHmmaFp16,
    metric::kTensorHmmaTf32,
};

// "occupancy": achieved warps, launched warps and CTAs.
inline constexpr const char* kOccupancyMetrics[] = {
    metric::kWarpsActivePct,
    metric::kWarpsActivePerCycle,
    metric::kCtasLaunched,
    metric::kWarpsLaunched,
};

// "access": sectors per request, shared-memory bank conflicts, divergence, atomics, HMMA instructions.
inline constexpr const char* kAccessMetrics[] = {
    metric::kGlobalLoadSectors,   metric::kGlobalLoadRequests,  metric::kGlobalStoreSectors,
    metric::kGlobalStoreRequests, metric::kSharedBankConflicts, metric::kSharedWavefronts,
    metric::kThreadInstExecuted,  metric::kInstExecuted,        metric::kGlobalAtomics,
    metric::kGlobalReductions,    metric::kHmmaInstructions,
};

// "sol": unit throughputs in % of peak (costly: on request only).
inline constexpr const char* kSolMetrics[] = {
    metric::kSmThroughputPct,   metric::kComputeMemoryThroughputPct,
    metric::kDramThroughputPct, metric::kL2ThroughputPct,
    metric::kL1ThroughputPct,
};

// "stalls": smsp__inst_issued.sum plus one raw counter per warp-stall reason,
// smsp__warps_issue_stalled_<reason>.sum.
inline constexpr std::string_view kStallMetricPrefix = "smsp__warps_issue_stalled_";
inline constexpr std::string_view kStallMetricSuffix = ".sum";
std::string StallMetricName(std::string_view reason);  // "long_scoreboard" -> its counter
// "long_scoreboard" for "smsp__warps_issue_stalled_long_scoreboard.sum", else "" (the "<reason>_not_issued"
// and other variants are other metrics).
std::string_view StallReasonOfMetric(std::string_view metric);

// ---- warp-stall reasons ----

struct StallReasonInfo {
  const char* key;        // "long_scoreboard" (CUPTI's suffix)
  const char* title;      // "Long Scoreboard"
  const char* meaning;    // what the warp waits for
  const char* fix;        // the usual fix
  const char* short_fix;  // for the one-line verdict: "improve locality"
  bool is_stall;          // false for "selected" (issuing) and "not_selected" (ready, normal when busy)
};
// Every GH100 warp-stall reason, in display order (the usual limiters first).
std::span<const StallReasonInfo> StallReasonVocabulary();
const StallReasonInfo* FindStallReasonInfo(std::string_view key);  // nullptr for an unknown key

}  // namespace gt
