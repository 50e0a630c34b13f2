// Metric sets of `gcollect --counters[=SET]`: which CUPTI Range Profiler metrics each set asks for.
//
// Pure data + parsing, no CUPTI: the names are validated against the chip by host_config.h (which also counts
// passes), and the viewer's analysis (viewer/core/src/analysis) reads the same names back from the trace. The
// names are Hopper's (GH100, sm_90); metrics a chip lacks are dropped with a warning at setup, never guessed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gt/status.h"

namespace gt::counters {

enum CounterSet : uint32_t {
  kSetRoofline =
      1u << 0,  // time, clocks, FLOPs per precision (incl. tensor cores), DRAM/L2/L1 bytes, hit rates
  kSetStalls = 1u << 1,     // raw warp-stall counters per reason + instructions issued
  kSetOccupancy = 1u << 2,  // achieved warps, launched warps/CTAs
  kSetAccess =
      1u << 3,         // access-pattern diagnostics: sectors per request, bank conflicts, divergence, atomics
  kSetSol = 1u << 4,   // unit throughputs in % of peak (costly: on request only)
  kSetHmma = 1u << 5,  // legacy mma.sync (HMMA) tensor FLOPs per input type (+3 passes on GH100)
};
// The default keeps to <= 8 range-profiler passes on GH100 (checked by tests/analysis/metric_sets_test.cc).
inline constexpr uint32_t kDefaultSets = kSetRoofline | kSetStalls | kSetOccupancy | kSetAccess;
inline constexpr uint32_t kAllSets = kDefaultSets | kSetSol | kSetHmma;

// "roofline,stalls" / "default" / "all" / "" (= default). Unknown words are an error naming the valid ones.
StatusOr<uint32_t> ParseCounterSets(std::string_view spec);
std::string CounterSetsToString(uint32_t sets);

// The metrics of `sets`, in a stable order, without duplicates.
std::vector<std::string> MetricsForSets(uint32_t sets);

// Warp-stall reasons the GH100 range profiler reports (smsp__warps_issue_stalled_<reason>.sum).
const std::vector<std::string>& StallReasons();
inline constexpr std::string_view kStallMetricPrefix = "smsp__warps_issue_stalled_";
inline constexpr std::string_view kStallMetricSuffix = ".sum";
// "long_scoreboard" for "smsp__warps_issue_stalled_long_scoreboard.sum", else "".
std::string_view StallReasonOfMetric(std::string_view metric);

// Launch attributes recorded by the counters module itself (not hardware counters), named like ncu's so that
// a counters trace is self-describing even without a timeline run to join.
namespace launch_metric {
inline constexpr const char* kGridSize = "launch__grid_size";
inline constexpr const char* kBlockSize = "launch__block_size";
inline constexpr const char* kRegisters = "launch__registers_per_thread";
inline constexpr const char* kStaticShared = "launch__shared_mem_per_block_static";
inline constexpr const char* kDynamicShared = "launch__shared_mem_per_block_dynamic";
inline constexpr const char* kPasses = "profiler__passes";          // range-profiler passes of this launch
inline constexpr const char* kCostNs = "profiler__replay_cost_ns";  // wall time the replay added
}  // namespace launch_metric

}  // namespace gt::counters
