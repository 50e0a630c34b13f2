// Which launches the counters run profiles (ncu's --kernel-name regex / --launch-skip / --launch-count, plus
// a per-name cap so only the first few launches of each kernel pay for replay) and what it will cost. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "gt/model.h"
#include "gt/status.h"

namespace gt::counters {

// --cache-control all splits the metrics over two runs of the app. Gtrace's own replay (L2 flushed before
// each pass, as ncu does) gives the metrics that depend on the cache state at the kernel's start: DRAM and L2
// traffic, duration and elapsed cycles. It cannot give the rest: under user replay CUPTI adds about 14
// instructions per warp to the counted kernel and does not patch re-issued launches for the SASS metrics, and
// its kernel replay crashed after a user-replay session in the same process (all measured on the H200). So
// the rest (instruction and stall counts, occupancy, SASS-patched FLOP counts) comes from a second run under
// CUPTI's kernel replay.
enum class MetricSubset : uint8_t {
  kAll = 0,             // every metric of the sets
  kCacheSensitive = 1,  // DRAM, L2, duration, elapsed cycles (gtrace's own replay)
  kOther = 2,           // everything else (CUPTI's kernel replay)
};
bool IsCacheSensitiveMetric(std::string_view metric);
// The sets' metrics (MetricsForSets) restricted to `subset`.
std::vector<std::string> MetricsOfSubset(const std::vector<std::string>& metrics, MetricSubset subset);

struct CountersOptions {
  uint32_t sets = 0;            // CounterSet bits; 0 = counters off
  std::string kernel_regex;     // ECMAScript, searched in the demangled name; "" = every kernel
  uint64_t launch_skip = 0;     // matching launches to let run before profiling starts
  uint64_t launch_count = 0;    // matching launches to profile in all; 0 = no total limit
  uint32_t per_name_limit = 3;  // profiled launches per kernel name; 0 = no limit
  bool flush_caches = false;    // --cache-control all: gtrace's own replay, the L2 flushed before each pass
  MetricSubset subset = MetricSubset::kAll;  // which of the sets' metrics this run collects
};

// Environment round trip (the launcher exports, the injection reads): GTRACE_COUNTERS (sets),
// GTRACE_KERNEL_REGEX, GTRACE_LAUNCH_SKIP, GTRACE_LAUNCH_COUNT, GTRACE_COUNTERS_PER_NAME,
// GTRACE_COUNTERS_CACHE (all|none), GTRACE_COUNTERS_SUBSET (all|cache|other).
void CountersOptionsToEnv(const CountersOptions& o,
                          void (*set)(void* ctx, const char* name, const char* value), void* ctx);
StatusOr<CountersOptions> CountersOptionsFromEnv(const char* (*get)(void* ctx, const char* name), void* ctx);

class LaunchSelector {
 public:
  // Fails on a regex that does not compile.
  static StatusOr<std::unique_ptr<LaunchSelector>> Create(const CountersOptions& options);

  struct Decision {
    bool profile = false;
    bool wanted = false;   // selected, but the caller said it cannot be profiled (it should say why)
    uint32_t ordinal = 0;  // per-name launch ordinal in this process (every launch counts, profiled or not);
                           // graph kernels: kGraphOrdinalBit set, counted apart (model.h)
  };
  enum class Source : uint8_t { kDirect, kGraph };
  // Called once per kernel launch, in launch order; a graph launch's kernels in the order of GraphPlan.
  // `can_profile` false: the launch is counted and may be `wanted`, but takes none of the profiling quotas.
  Decision OnLaunch(std::string_view kernel_name, Source source = Source::kDirect, bool can_profile = true);

  uint64_t profiled() const { return profiled_; }
  uint64_t launches() const { return launches_; }

 private:
  explicit LaunchSelector(const CountersOptions& o) : options_(o) {}
  CountersOptions options_;
  std::unique_ptr<std::regex> regex_;
  std::map<std::string, uint32_t, std::less<>> ordinal_[2];  // next ordinal per name, per Source
  std::map<std::string, uint32_t, std::less<>> profiled_per_name_[2];
  uint64_t matched_ = 0, profiled_ = 0, launches_ = 0;
};

// Cost model measured on the H200 (docs/benchmarks.md): ~14 ms per replay pass per
// profiled launch, plus ~1.3 ms per GiB of device memory the app holds per pass (the replay saves and
// restores it), plus setup (the first profiled launch of a process included).
struct CostEstimate {
  double per_launch_s = 0;
  double setup_s = 0;
  std::string Describe(size_t passes, uint32_t per_name_limit) const;
};
CostEstimate EstimateCost(size_t passes, double device_memory_gib_in_use);

}  // namespace gt::counters
