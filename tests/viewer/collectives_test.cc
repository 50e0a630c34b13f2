// Cross-rank NCCL analysis: collectives matched across ranks, arrival skew, waiting, and the straggler named
// in words with the NVTX steps it was late in.
#include <catch2/catch.hpp>

#include <algorithm>

#include "gt/viewer/collectives.h"
#include "gt/viewer/csv.h"
#include "gt/viewer/load.h"
#include "gt/viewer/profiled.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"
#include "sim_job.h"

using namespace gt;
using namespace gt::viewer;
using namespace gt::simjob;

namespace {

std::unique_ptr<TraceModel> Job(const std::vector<SimRank>& ranks) {
  const std::string file = RankFile(SimHost{"node-a", "boot-a"}, ranks);
  auto m = LoadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(file.data()), file.size()));
  REQUIRE(m.ok());
  return std::move(*m);
}

std::vector<SimRank> TwoRanks(std::map<uint32_t, int64_t> straggle, int32_t straggler) {
  SimRank r0{0, 0, 2}, r1{1, 1, 2};
  r1.pid = 2000;
  for (SimRank* r : {&r0, &r1}) {
    r->collectives = 30, r->interval_ns = 50'000'000;
    r->straggle = straggle, r->straggler = straggler;
  }
  return {r0, r1};
}

}  // namespace

TEST_CASE("collectives: rank 1 arrives 20 ms late at 3 of 30 all-reduces") {
  auto m = Job(TwoRanks({{4, 20'000'000}, {9, 20'000'000}, {17, 20'000'000}}, 1));
  CollectiveReport r = AnalyzeCollectives(*m);
  REQUIRE(r.collectives.size() == 30);
  CHECK(r.unmatched == 0);
  REQUIRE(r.ranks.size() == 2);
  CHECK(r.ranks[0].rank == 0);
  CHECK(r.ranks[1].rank == 1);
  CHECK(r.ranks[0].last_arrivals == 0);
  CHECK(r.ranks[1].last_arrivals == 3);
  // The straggler's lateness over the other rank: 20 ms plus the 30 us each rank's arrival is set apart by.
  CHECK(std::llabs(r.ranks[1].max_late_ns - 20'030'000) < 5'000);
  CHECK(r.collectives[4].op == "AllReduce");
  CHECK(r.collectives[4].ranks[r.collectives[4].last].rank == 1);
  CHECK(r.collectives[4].step == "step 4");
  REQUIRE(r.diagnosis.size() == 1);
  const std::string& d = r.diagnosis[0];
  INFO(d);
  CHECK(d.rfind("rank 1 arrives late at 3 of 30 AllReduce collectives (by ", 0) == 0);
  // The three steps, worst first, each with how late (all about 20 ms here).
  CHECK(d.find("most in step ") != std::string::npos);
  for (const char* step : {"step 4 (20 ms)", "step 9 (20 ms)", "step 17 (20 ms)"})
    CHECK(d.find(step) != std::string::npos);
  CHECK(d.find("the other ranks wait ") != std::string::npos);
  // Rank 0 waits through every late collective (3 x 20.03 ms) plus the ordinary 30 us at the others.
  CHECK(std::llabs(r.ranks[0].wait_ns - (3 * 20'030'000 + 27 * 30'000)) < 50'000);
  CHECK(r.ranks[0].comm_ns > 0);
  CHECK(r.ranks[0].compute_ns > 0);
  CHECK(r.ranks[0].overlap_ns == 0);  // compute and communication never run together here
  const std::string text = FormatCollectiveReport(r);
  CHECK(text.find("NCCL collectives: 30 matched across 2 ranks") != std::string::npos);
  CHECK(text.find("straggler: rank 1 arrives late") != std::string::npos);
}

TEST_CASE("collectives: ordinary jitter is no straggler; one process is no job") {
  auto m = Job(TwoRanks({}, -1));
  CollectiveReport r = AnalyzeCollectives(*m);
  CHECK(r.collectives.size() == 30);
  CHECK(r.diagnosis.empty());
  CHECK(FormatCollectiveReport(r).find("no straggler") != std::string::npos);

  auto one = Job({TwoRanks({}, -1)[0]});
  CHECK(AnalyzeCollectives(*one).collectives.empty());
  CHECK(FormatCollectiveReport(AnalyzeCollectives(*one)).empty());
}

TEST_CASE("collectives: per-rank kernel time and waiting, and gtrace diff's per-rank table") {
  auto before = Job(TwoRanks({}, -1));
  auto after = Job(TwoRanks({{4, 20'000'000}, {9, 20'000'000}, {17, 20'000'000}}, 1));
  const auto a = KernelTimeByRank(*before), b = KernelTimeByRank(*after);
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 2);
  CHECK(a[0].rank == 0);
  CHECK(a[1].rank == 1);
  CHECK(a[0].kernels == 60);  // 30 compute kernels + 30 all-reduces
  CHECK(a[0].nccl_ns > 0);
  CHECK(a[0].nccl_ns < a[0].kernel_ns);
  // Rank 0 waits 3 x 20 ms longer once rank 1 straggles; rank 1's own waiting does not grow.
  CHECK(std::llabs((b[0].wait_ns - a[0].wait_ns) - 3 * 20'000'000) < 100'000);
  CHECK(b[1].wait_ns <= a[1].wait_ns + 10'000);
  const std::string diff = DiffReport(*before, "before", *after, "after", 10);
  CHECK(diff.find("Per rank (kernel time on its GPUs") != std::string::npos);
}

TEST_CASE("collectives: the model links each collective across ranks, from the rank that arrived last") {
  auto m = Job(TwoRanks({{4, 20'000'000}}, 1));
  const CollectiveReport r = AnalyzeCollectives(*m);
  REQUIRE(r.collectives.size() == 30);
  CHECK(m->flows.size() == 30);  // two ranks: one arrow per collective
  const Collective& late = r.collectives[4];
  const EventId waiting = late.ranks[0].kernel;  // rank 0 waited for rank 1 here
  bool from_straggler = false;
  for (const FlowArrow& a : FlowsOf(*m, waiting))
    from_straggler |= !a.correlation && a.from == late.ranks[late.last].kernel && a.to == waiting;
  CHECK(from_straggler);
}

TEST_CASE("collectives: a selected NCCL kernel's details show the collective on every rank") {
  auto m = Job(TwoRanks({{4, 20'000'000}}, 1));
  const CollectiveReport& r = CollectivesOf(*m);
  REQUIRE(r.collectives.size() == 30);
  const Collective& late = r.collectives[4];
  std::map<std::string, std::string> f;
  for (const DetailField& d : EventDetails(*m, late.ranks[0].kernel)) f[d.name] = d.value;
  CHECK(f["Collective"] == "AllReduce #4 across 2 ranks, in step 4");
  CHECK(f["Arrived last"].rfind("rank 1, 20", 0) == 0);
  CHECK(f["rank 0 (this)"].find("waited 20") != std::string::npos);
  CHECK(f.count("rank 1"));
  // A compute kernel is no collective.
  CHECK(r.Find(EventId{late.ranks[0].kernel.lane, late.ranks[0].kernel.index + 1000}) == nullptr);
}

// The Summary tab's collectives and the roofline tab as CSV (gtrace export --csv): one row per collective and
// rank with the report's own numbers, one per rank, and the roofline's points.
TEST_CASE("collectives and roofline CSV carry the report's rows") {
  auto m = Job(TwoRanks({{4, 20'000'000}}, 1));
  const CollectiveReport& r = CollectivesOf(*m);
  auto all = TraceTableCsv(*m, "collectives");
  REQUIRE(all.ok());
  REQUIRE(all->rows.size() == 30 * 2);
  const auto col = [&](std::string_view name) {
    return size_t(std::find(all->header.begin(), all->header.end(), name) - all->header.begin());
  };
  // Collective 4, the late one: rank 1 is last, and the row's wait is the report's.
  const auto& late = all->rows[4 * 2 + r.collectives[4].last];
  CHECK(late[col("last_to_arrive")].value == "1");
  CHECK(late[col("rank")].value == "1");
  CHECK(late[col("skew_ns")].value == std::to_string(r.collectives[4].skew_ns()));
  CHECK(all->rows[4 * 2 + (1 - r.collectives[4].last)][col("wait_ns")].value ==
        std::to_string(r.collectives[4].ranks[1 - r.collectives[4].last].wait_ns));
  auto ranks = TraceTableCsv(*m, "collective-ranks");
  REQUIRE(ranks.ok());
  REQUIRE(ranks->rows.size() == 2);
  CHECK(ranks->rows[1][3].value == std::to_string(r.ranks[1].last_arrivals));  // last_arrivals

  auto counters = LoadTraceFile(std::string(GT_TESTS_DATA) + "/counters_h200.gtrace");
  REQUIRE(counters.ok());
  auto roof = TraceTableCsv(**counters, "roofline");
  REQUIRE(roof.ok());
  const ProfiledKernels p = AnalyzeProfiledKernels(**counters);
  const auto dram =
      PlaceOnRoofline(BuildRoofline(p.device), p.kernels, MemoryLevel::kDram, p.kernel_total_time_s);
  REQUIRE(!dram.empty());
  size_t dram_rows = 0;
  for (const auto& row : roof->rows) dram_rows += row[1].value == "DRAM";
  CHECK(dram_rows == dram.size());
  CHECK(roof->rows[0][0].value == dram[0].kernel_name);
  auto none = TraceTableCsv(*m, "roofline");  // no counters: a header and no rows, not an error
  REQUIRE(none.ok());
  CHECK(none->rows.empty());
}
