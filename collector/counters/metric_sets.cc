#include "counters/metric_sets.h"

#include <algorithm>

namespace gt::counters {
namespace {

struct SetName {
  const char* name;
  uint32_t bits;
};
constexpr SetName kSetNames[] = {
    {"roofline", kSetRoofline}, {"stalls", kSetStalls}, {"occupancy", kSetOccupancy}, {"access", kSetAccess},
    {"sol", kSetSol},           {"hmma", kSetHmma},     {"default", kDefaultSets},    {"all", kAllSets},
};

// Counters (.sum / .avg / .max) rather than ratios wherever the viewer can divide itself: ratios hide the raw
// numbers, and a ratio whose two halves come from different replay passes must be flagged, not trusted.
const char* const kRooflineMetrics[] = {
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg",
    "sm__cycles_elapsed.avg.per_second",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_bytes.sum",
    "l1tex__t_bytes.sum",
    "lts__t_sectors.sum",
    "lts__t_sectors_lookup_hit.sum",
    "l1tex__t_sectors.sum",
    "l1tex__t_sectors_lookup_hit.sum",
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
    "sm__sass_thread_inst_executed_op_dadd_pred_on.sum",
    "sm__sass_thread_inst_executed_op_dmul_pred_on.sum",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "sm__sass_thread_inst_executed_op_hfma_pred_on.sum",
    "sm__sass_thread_inst_executed_op_hadd_pred_on.sum",
    "sm__sass_thread_inst_executed_op_hmul_pred_on.sum",
    // Tensor cores: Hopper's warpgroup MMA (what cuBLAS / PyTorch / CUTLASS 3 use) per input type. The
    // all-paths sm__ops_path_tensor_src_fp16 / _int8 aggregates cost 2 passes each on GH100; legacy mma.sync
    // (HMMA) FLOPs are in the "hmma" set, and the default counts HMMA instructions to say when they matter.
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum",
    "sm__ops_path_tensor_op_hgmma_src_fp16.sum",
    "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp64.sum",
    "sm__ops_path_tensor_src_fp8.sum",
    "sm__ops_path_tensor_op_igmma_src_int8.sum",
};

// The hardware's own per-cycle peaks and the clocks the kernel ran at: the same denominators ncu uses for
// "% of peak", free (they add no replay pass on GH100), and what the trace's roofline ceilings come from.
const char* const kPeakMetrics[] = {
    "dram__bytes.sum.peak_sustained",
    "dram__cycles_elapsed.avg.per_second",
    "lts__t_bytes.sum.peak_sustained",
    "lts__cycles_elapsed.avg.per_second",
    "l1tex__t_bytes.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained",
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum.peak_sustained",
    "sm__ops_path_tensor_op_hgmma_src_fp16.sum.peak_sustained",
    "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum.peak_sustained",
    "sm__ops_path_tensor_src_fp64.sum.peak_sustained",
    "sm__ops_path_tensor_src_fp8.sum.peak_sustained",
    "sm__ops_path_tensor_op_igmma_src_int8.sum.peak_sustained",
    "smsp__inst_issued.sum.peak_sustained",
};

const char* const kHmmaMetrics[] = {
    "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum",
    "sm__ops_path_tensor_op_hmma_src_fp16.sum",
    "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum",
};

const char* const kOccupancyMetrics[] = {
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.per_cycle_active",
    "sm__ctas_launched.sum",
    "smsp__warps_launched.sum",
};

const char* const kAccessMetrics[] = {
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "smsp__thread_inst_executed.sum",
    "smsp__inst_executed.sum",
    "sm__sass_inst_executed_op_global_atom.sum",
    "sm__sass_inst_executed_op_global_red.sum",
    "sm__inst_executed_pipe_tensor_op_hmma.sum",
};

const char* const kSolMetrics[] = {
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
};

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

const std::vector<std::string>& StallReasons() {
  static const std::vector<std::string> kReasons = {
      "long_scoreboard",
      "barrier",
      "branch_resolving",
      "dispatch_stall",
      "drain",
      "gmma",
      "imc_miss",
      "lg_throttle",
      "math_pipe_throttle",
      "membar",
      "mio_throttle",
      "misc",
      "no_instruction",
      "not_selected",
      "selected",
      "short_scoreboard",
      "sleeping",
      "tex_throttle",
      "wait",
  };
  return kReasons;
}

std::string_view StallReasonOfMetric(std::string_view metric) {
  if (metric.substr(0, kStallMetricPrefix.size()) != kStallMetricPrefix) return {};
  metric.remove_prefix(kStallMetricPrefix.size());
  if (metric.size() <= kStallMetricSuffix.size() ||
      metric.substr(metric.size() - kStallMetricSuffix.size()) != kStallMetricSuffix)
    return {};
  metric.remove_suffix(kStallMetricSuffix.size());
  // Only the raw per-reason counters: "<reason>_not_issued" and friends are other metrics.
  for (const auto& r : StallReasons())
    if (metric == r) return metric;
  return {};
}

StatusOr<uint32_t> ParseCounterSets(std::string_view spec) {
  if (Trim(spec).empty()) return kDefaultSets;
  uint32_t bits = 0;
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string word = Trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (word.empty()) continue;
    bool found = false;
    for (const auto& s : kSetNames) {
      if (word == s.name) {
        bits |= s.bits;
        found = true;
      }
    }
    if (!found) {
      std::string valid;
      for (const auto& s : kSetNames) valid += std::string(valid.empty() ? "" : ", ") + s.name;
      return InvalidArgument("unknown counter set '" + word + "' (valid: " + valid + ")");
    }
  }
  if (bits == 0) return kDefaultSets;
  return bits;
}

std::string CounterSetsToString(uint32_t sets) {
  if (sets == kAllSets) return "all";
  if (sets == kDefaultSets) return "default";
  std::string out;
  for (const auto& s : kSetNames) {
    if (s.bits == kDefaultSets || s.bits == kAllSets) continue;
    if (sets & s.bits) out += std::string(out.empty() ? "" : ",") + s.name;
  }
  return out;
}

std::vector<std::string> MetricsForSets(uint32_t sets) {
  std::vector<std::string> out;
  auto add = [&](const char* m) {
    if (std::find(out.begin(), out.end(), m) == out.end()) out.emplace_back(m);
  };
  // Every set needs the time: it is what the roofline sizes points by and what the cost report compares.
  add("gpu__time_duration.sum");
  if (sets & kSetRoofline) {
    for (const char* m : kRooflineMetrics) add(m);
    for (const char* m : kPeakMetrics) add(m);
  }
  if (sets & kSetStalls) {
    add("smsp__inst_issued.sum");
    for (const auto& r : StallReasons())
      add((std::string(kStallMetricPrefix) + r + std::string(kStallMetricSuffix)).c_str());
  }
  if (sets & kSetOccupancy)
    for (const char* m : kOccupancyMetrics) add(m);
  if (sets & kSetAccess)
    for (const char* m : kAccessMetrics) add(m);
  if (sets & kSetSol)
    for (const char* m : kSolMetrics) add(m);
  if (sets & kSetHmma)
    for (const char* m : kHmmaMetrics) add(m);
  return out;
}

}  // namespace gt::counters
