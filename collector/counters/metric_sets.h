// Metric sets of `gcollect --counters[=SET]`: which CUPTI Range Profiler metrics each set asks for.
//
// Parsing and set membership, no CUPTI: the metric names and each set's list are the counter vocabulary's
// (gt/counter_vocab.h), which the viewer's analysis reads back from the trace; host_config.h validates them
// against the chip (and counts passes). Metrics a chip lacks are dropped with a warning at setup, never
// guessed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gt/counter_vocab.h"
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
// The default keeps to <= 8 range-profiler passes on GH100 (checked by tests/collector/counters/metric_sets_test.cc).
inline constexpr uint32_t kDefaultSets = kSetRoofline | kSetStalls | kSetOccupancy | kSetAccess;
inline constexpr uint32_t kAllSets = kDefaultSets | kSetSol | kSetHmma;

// "roofline,stalls" / "default" / "all" / "" (= default). Unknown words are an error naming the valid ones.
StatusOr<uint32_t> ParseCounterSets(std::string_view spec);
std::string CounterSetsToString(uint32_t sets);

// The metrics of `sets`, in a stable order, without duplicates.
std::vector<std::string> MetricsForSets(uint32_t sets);

// Warp-stall reasons the GH100 range profiler reports (smsp__warps_issue_stalled_<reason>.sum), in the order
// the stall metrics are configured.
const std::vector<std::string>& StallReasons();
using gt::StallReasonOfMetric;  // the vocabulary's, gt/counter_vocab.h

// Launch attributes recorded by the counters module itself (gt/counter_vocab.h names them).
namespace launch_metric = gt::metric;

}  // namespace gt::counters
