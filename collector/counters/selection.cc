#include "counters/selection.h"

#include <cstdio>
#include <cstdlib>

#include "counters/metric_sets.h"
#include "gt/env.h"

namespace gt::counters {

void CountersOptionsToEnv(const CountersOptions& o,
                          void (*set)(void* ctx, const char* name, const char* value), void* ctx) {
  set(ctx, env::Name(env::Var::kCounters), CounterSetsToString(o.sets).c_str());
  set(ctx, env::Name(env::Var::kKernelRegex), o.kernel_regex.c_str());
  set(ctx, env::Name(env::Var::kLaunchSkip), std::to_string(o.launch_skip).c_str());
  set(ctx, env::Name(env::Var::kLaunchCount), std::to_string(o.launch_count).c_str());
  set(ctx, env::Name(env::Var::kCountersPerName), std::to_string(o.per_name_limit).c_str());
  set(ctx, env::Name(env::Var::kCountersCache), o.flush_caches ? "all" : "none");
  set(ctx, env::Name(env::Var::kCountersSubset),
      o.subset == MetricSubset::kCacheSensitive ? "cache"
      : o.subset == MetricSubset::kOther        ? "other"
                                                : "all");
}

bool IsCacheSensitiveMetric(std::string_view m) {
  for (std::string_view prefix : {"dram__", "lts__", "gpu__time_duration", "sm__cycles_elapsed"})
    if (m.substr(0, prefix.size()) == prefix) return true;
  return false;
}

std::vector<std::string> MetricsOfSubset(const std::vector<std::string>& metrics, MetricSubset subset) {
  std::vector<std::string> out;
  for (const auto& m : metrics)
    if (subset == MetricSubset::kAll ||
        IsCacheSensitiveMetric(m) == (subset == MetricSubset::kCacheSensitive))
      out.push_back(m);
  return out;
}

namespace {
Status ParseU64(const char* name, const char* text, uint64_t* out) {
  if (!text || !*text) return Status::Ok();
  char* end = nullptr;
  unsigned long long v = strtoull(text, &end, 10);
  if (*end || text[0] == '-') return InvalidArgument(std::string(name) + ": not a count: '" + text + "'");
  *out = v;
  return Status::Ok();
}
}  // namespace

StatusOr<CountersOptions> CountersOptionsFromEnv(const char* (*get)(void* ctx, const char* name), void* ctx) {
  CountersOptions o;
  const char* sets = get(ctx, env::Name(env::Var::kCounters));
  if (!sets) return o;  // counters off
  auto bits = ParseCounterSets(sets);
  if (!bits.ok()) return bits.status();
  o.sets = *bits;
  if (const char* re = get(ctx, env::Name(env::Var::kKernelRegex))) o.kernel_regex = re;
  GT_RETURN_IF_ERROR(
      ParseU64(env::Name(env::Var::kLaunchSkip), get(ctx, env::Name(env::Var::kLaunchSkip)), &o.launch_skip));
  GT_RETURN_IF_ERROR(ParseU64(env::Name(env::Var::kLaunchCount), get(ctx, env::Name(env::Var::kLaunchCount)),
                              &o.launch_count));
  uint64_t per_name = o.per_name_limit;
  GT_RETURN_IF_ERROR(ParseU64(env::Name(env::Var::kCountersPerName),
                              get(ctx, env::Name(env::Var::kCountersPerName)), &per_name));
  o.per_name_limit = static_cast<uint32_t>(per_name);
  if (const char* cache = get(ctx, env::Name(env::Var::kCountersCache)); cache && *cache) {
    std::string c = cache;
    if (c != "all" && c != "none")
      return InvalidArgument("GTRACE_COUNTERS_CACHE: expected all or none, got '" + c + "'");
    o.flush_caches = c == "all";
  }
  if (const char* subset = get(ctx, env::Name(env::Var::kCountersSubset)); subset && *subset) {
    std::string v = subset;
    if (v == "all")
      o.subset = MetricSubset::kAll;
    else if (v == "cache")
      o.subset = MetricSubset::kCacheSensitive;
    else if (v == "other")
      o.subset = MetricSubset::kOther;
    else
      return InvalidArgument("GTRACE_COUNTERS_SUBSET: expected all, cache or other, got '" + v + "'");
  }
  return o;
}

StatusOr<std::unique_ptr<LaunchSelector>> LaunchSelector::Create(const CountersOptions& options) {
  std::unique_ptr<LaunchSelector> s(new LaunchSelector(options));
  if (!options.kernel_regex.empty()) {
    // std::regex reports bad patterns by throwing; the collector is built with exceptions, the viewer is not,
    // and this file is collector-only.
    try {
      s->regex_ =
          std::make_unique<std::regex>(options.kernel_regex, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return InvalidArgument("--kernel-regex '" + options.kernel_regex + "': " + e.what());
    }
  }
  return s;
}

LaunchSelector::Decision LaunchSelector::OnLaunch(std::string_view name, Source source, bool can_profile) {
  Decision d;
  ++launches_;
  const int space = source == Source::kGraph ? 1 : 0;
  auto& ordinals = ordinal_[space];
  auto it = ordinals.find(name);
  if (it == ordinals.end()) it = ordinals.emplace(std::string(name), 0).first;
  d.ordinal = it->second++ | (source == Source::kGraph ? kGraphOrdinalBit : 0);
  if (regex_ && !std::regex_search(name.begin(), name.end(), *regex_)) return d;
  uint64_t index = matched_++;
  if (index < options_.launch_skip) return d;
  if (options_.launch_count && profiled_ >= options_.launch_count) return d;
  auto& per_name = profiled_per_name_[space];
  auto pit = per_name.find(name);
  if (pit == per_name.end()) pit = per_name.emplace(std::string(name), 0).first;
  if (options_.per_name_limit && pit->second >= options_.per_name_limit) return d;
  if (!can_profile) {
    d.wanted = true;
    return d;
  }
  ++pit->second;
  ++profiled_;
  d.profile = true;
  return d;
}

CostEstimate EstimateCost(size_t passes, double gib) {
  CostEstimate c;
  // Measured on the H200 with the default set (docs/benchmarks.md, Counters): ~14 ms per pass per launch,
  // more with device memory to save and restore; the first profiled launch of a process adds ~0.15 s of
  // setup.
  c.per_launch_s = passes * (0.014 + 0.0013 * gib);
  c.setup_s = 0.5 + 0.15;
  return c;
}

std::string CostEstimate::Describe(size_t passes, uint32_t per_name_limit) const {
  char buf[256];
  snprintf(buf, sizeof buf, "%zu replay passes: about %.0f ms per profiled launch + %.1f s setup%s", passes,
           per_launch_s * 1e3, setup_s, per_name_limit ? "" : " (every matching launch is profiled)");
  std::string s = buf;
  if (per_name_limit) s += "; at most " + std::to_string(per_name_limit) + " launches per kernel name";
  return s;
}

}  // namespace gt::counters
