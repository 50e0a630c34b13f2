// Counter-set parsing, metric lists, launch selection and the cost model (pure, no CUPTI).
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>

#include "counters/metric_sets.h"
#include "counters/selection.h"
#include "gt/counter_vocab.h"

using namespace gt::counters;

TEST_CASE("counter set specs", "[counters][sets]") {
  CHECK(*ParseCounterSets("") == kDefaultSets);
  CHECK(*ParseCounterSets("default") == kDefaultSets);
  CHECK(*ParseCounterSets("roofline, stalls") == (kSetRoofline | kSetStalls));
  CHECK(*ParseCounterSets("all") == kAllSets);
  auto bad = ParseCounterSets("roofline,bogus");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("unknown counter set 'bogus'") != std::string::npos);
  CHECK(bad.status().message().find("sol") != std::string::npos);
  CHECK(CounterSetsToString(kSetRoofline | kSetSol) == "roofline,sol");
  CHECK(*ParseCounterSets(CounterSetsToString(kSetStalls | kSetOccupancy)) == (kSetStalls | kSetOccupancy));
}

TEST_CASE("metric lists", "[counters][sets]") {
  auto def = MetricsForSets(kDefaultSets);
  auto has = [&](const std::vector<std::string>& v, const char* m) {
    return std::find(v.begin(), v.end(), m) != v.end();
  };
  CHECK(has(def, gt::metric::kTime));
  CHECK(has(def, gt::metric::kDramBytesRead));
  CHECK(has(def, gt::metric::kTensorHgmmaBf16));
  CHECK(has(def, "smsp__warps_issue_stalled_long_scoreboard.sum"));
  CHECK(has(def, gt::metric::kWarpsActivePct));
  CHECK_FALSE(has(def, gt::metric::kSmThroughputPct));  // sol is on request only
  CHECK(has(MetricsForSets(kSetSol), gt::metric::kSmThroughputPct));
  std::vector<std::string> sorted = def;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // no duplicates
  for (const auto& m : def) {
    INFO(m);
    CHECK(m.find('.') != std::string::npos);  // a bare base name fails in ConfigAddMetrics
  }
  CHECK(StallReasons().size() == 19);
  CHECK(StallReasonOfMetric("smsp__warps_issue_stalled_long_scoreboard.sum") == "long_scoreboard");
  CHECK(StallReasonOfMetric("smsp__warps_issue_stalled_long_scoreboard_not_issued.sum").empty());
  CHECK(StallReasonOfMetric(gt::metric::kDramBytes).empty());
}

TEST_CASE("launch selection: per-name cap, regex, skip, count", "[counters][selection]") {
  CountersOptions o;
  o.sets = kDefaultSets;
  auto sel = LaunchSelector::Create(o).value();
  std::vector<bool> got;
  for (int i = 0; i < 5; ++i) got.push_back(sel->OnLaunch("a").profile);
  CHECK(got == std::vector<bool>{true, true, true, false, false});
  auto d = sel->OnLaunch("b");
  CHECK(d.profile);
  CHECK(d.ordinal == 0);
  CHECK(sel->OnLaunch("a").ordinal == 5);  // every launch counts for the ordinal, profiled or not

  o.kernel_regex = "^gemm";
  o.launch_skip = 1;
  o.launch_count = 2;
  o.per_name_limit = 0;
  sel = LaunchSelector::Create(o).value();
  CHECK_FALSE(sel->OnLaunch("gemm_a").profile);  // skipped
  CHECK_FALSE(sel->OnLaunch("copy").profile);    // no match
  CHECK(sel->OnLaunch("gemm_a").profile);
  CHECK(sel->OnLaunch("gemm_b").profile);
  CHECK_FALSE(sel->OnLaunch("gemm_a").profile);  // count reached
  CHECK(sel->profiled() == 2);

  o.kernel_regex = "([";
  auto bad = LaunchSelector::Create(o);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("--kernel-regex") != std::string::npos);
}

TEST_CASE("options travel through the environment", "[counters][selection]") {
  std::map<std::string, std::string> env;
  CountersOptions o;
  o.sets = kSetRoofline | kSetStalls;
  o.kernel_regex = "k.*";
  o.launch_skip = 4;
  o.launch_count = 9;
  o.per_name_limit = 1;
  CountersOptionsToEnv(
      o,
      [](void* ctx, const char* n, const char* v) {
        (*static_cast<std::map<std::string, std::string>*>(ctx))[n] = v;
      },
      &env);
  auto get = [](void* ctx, const char* n) -> const char* {
    auto& e = *static_cast<std::map<std::string, std::string>*>(ctx);
    auto it = e.find(n);
    return it == e.end() ? nullptr : it->second.c_str();
  };
  auto back = CountersOptionsFromEnv(get, &env);
  REQUIRE(back.ok());
  CHECK(back->sets == o.sets);
  CHECK(back->kernel_regex == "k.*");
  CHECK(back->launch_skip == 4);
  CHECK(back->launch_count == 9);
  CHECK(back->per_name_limit == 1);
  env["GTRACE_LAUNCH_SKIP"] = "-3";
  CHECK_FALSE(CountersOptionsFromEnv(get, &env).ok());
  std::map<std::string, std::string> none;
  CHECK(CountersOptionsFromEnv(get, &none)->sets == 0);
}

TEST_CASE("cost model follows the H200 measurements", "[counters][cost]") {
  // H200: 113 ms for a small kernel's 8 passes (smem_padded), ~14 ms per pass + 1.3 ms per GiB per pass.
  CHECK(EstimateCost(8, 0).per_launch_s == Approx(0.112));
  CHECK(EstimateCost(8, 10).per_launch_s == Approx(8 * (0.014 + 0.013)));
  CHECK(EstimateCost(8, 0).Describe(8, 3).find("at most 3 launches per kernel name") != std::string::npos);
}

TEST_CASE("cache-control all splits the metrics between the two replays", "[counters][sets]") {
  const auto all = MetricsForSets(kDefaultSets);
  const auto cache = MetricsOfSubset(all, MetricSubset::kCacheSensitive);
  const auto other = MetricsOfSubset(all, MetricSubset::kOther);
  CHECK(cache.size() + other.size() == all.size());
  CHECK(MetricsOfSubset(all, MetricSubset::kAll) == all);
  auto has = [](const std::vector<std::string>& v, const char* m) {
    return std::find(v.begin(), v.end(), m) != v.end();
  };
  // Traffic and time depend on what the caches hold at the kernel's start: gtrace's own replay flushes.
  for (const char* m : {gt::metric::kDramBytesWrite, gt::metric::kL2Bytes, gt::metric::kTime}) {
    CHECK(has(cache, m));
    CHECK_FALSE(has(other, m));
  }
  // Instruction counts (SASS-patched ones included) and stalls come from CUPTI's kernel replay.
  for (const char* m : {gt::metric::kFfma, gt::metric::kIssued,
                        "smsp__warps_issue_stalled_long_scoreboard.sum", gt::metric::kL1Bytes}) {
    CHECK(has(other, m));
    CHECK_FALSE(has(cache, m));
  }
}

TEST_CASE("the metric subset travels through the environment; bad values are refused",
          "[counters][options]") {
  std::map<std::string, std::string> env;
  auto set = [](void* ctx, const char* n, const char* v) {
    (*static_cast<std::map<std::string, std::string>*>(ctx))[n] = v;
  };
  auto get = [](void* ctx, const char* n) -> const char* {
    auto& m = *static_cast<std::map<std::string, std::string>*>(ctx);
    auto it = m.find(n);
    return it == m.end() ? nullptr : it->second.c_str();
  };
  CountersOptions o;
  o.sets = kDefaultSets;
  o.flush_caches = true;
  o.subset = MetricSubset::kCacheSensitive;
  CountersOptionsToEnv(o, set, &env);
  CHECK(env["GTRACE_COUNTERS_SUBSET"] == "cache");
  auto back = CountersOptionsFromEnv(get, &env);
  REQUIRE(back.ok());
  CHECK(back->subset == MetricSubset::kCacheSensitive);
  CHECK(back->flush_caches);
  env["GTRACE_COUNTERS_SUBSET"] = "some";
  auto bad = CountersOptionsFromEnv(get, &env);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("GTRACE_COUNTERS_SUBSET") != std::string::npos);
}
