// Metric names and pass counts through CUPTI's host API for the H200's chip, without a GPU. Guards the
// issue's budget: the default set (roofline + stalls + occupancy + access) fits in 8 replay passes on GH100.
#include <catch2/catch.hpp>

#include "counters/host_config.h"
#include "counters/metric_sets.h"
#include "gt/counter_vocab.h"

using namespace gt::counters;

TEST_CASE("every metric of every set exists on GH100", "[counters][host]") {
  auto plan = PlanMetricsForChip("GH100", MetricsForSets(kAllSets));
  REQUIRE(plan.ok());
  for (const auto& r : plan->rejected) FAIL_CHECK("rejected: " << r);
  CHECK(plan->metrics.size() == MetricsForSets(kAllSets).size());
}

TEST_CASE("pass budget on GH100", "[counters][host]") {
  auto passes = [](uint32_t sets) { return PlanMetricsForChip("GH100", MetricsForSets(sets))->passes; };
  CHECK(passes(kSetRoofline) <= 3);
  CHECK(passes(kDefaultSets) <= 8);
  CHECK(passes(kDefaultSets | kSetSol) > passes(kDefaultSets));  // sol is costly: on request only
}

TEST_CASE("bad names and chips are reported, not guessed", "[counters][host]") {
  auto plan = PlanMetricsForChip("GH100", {gt::metric::kTime, "no__such_metric.sum", "dram__bytes"});
  REQUIRE(plan.ok());
  CHECK(plan->metrics.size() == 1);
  REQUIRE(plan->rejected.size() == 2);
  CHECK(plan->rejected[1].find("suffix") != std::string::npos);
  CHECK_FALSE(PlanMetricsForChip("NOT_A_CHIP", {gt::metric::kTime}).ok());
  CHECK_FALSE(PlanMetricsForChip("GH100", {"bogus.sum"}).ok());
}
