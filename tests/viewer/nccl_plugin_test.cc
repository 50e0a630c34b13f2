// NCCL's profiler plugin records (format 1.3) in the cross-rank analysis: collectives matched exactly by
// communicator, function and NCCL's sequence number, NCCL's algorithm/protocol/channels in the details, the
// stats text and JSON; the NVTX/ordinal matching kept where a process has no plugin records. Traces built in
// code (sim_job.h), written and loaded as files; no real NCCL run.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "gt/viewer/collectives.h"
#include "gt/viewer/json.h"
#include "gt/viewer/load.h"
#include "gt/viewer/query.h"
#include "sim_job.h"

using namespace gt;
using namespace gt::viewer;
using namespace gt::simjob;

namespace {

std::unique_ptr<TraceModel> Load(const std::string& file) {
  auto m = LoadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(file.data()), file.size()));
  REQUIRE(m.ok());
  return std::move(*m);
}

std::vector<SimRank> TwoRanks(bool plugin, bool payloads = false) {
  SimRank r0{0, 0, 2}, r1{1, 1, 2};
  r1.pid = 2000;
  for (SimRank* r : {&r0, &r1})
    r->collectives = 30, r->interval_ns = 50'000'000, r->plugin = plugin, r->payloads = payloads;
  return {r0, r1};
}

std::map<std::string, std::string> Details(const TraceModel& m, EventId e) {
  std::map<std::string, std::string> f;
  for (const DetailField& d : EventDetails(m, e)) f[d.name] = d.value;
  return f;
}

}  // namespace

TEST_CASE("nccl plugin: 2 ranks matched by communicator, function and NCCL's sequence number") {
  auto m = Load(RankFile(SimHost{"node-a", "boot-a"}, TwoRanks(true)));
  REQUIRE(m->nccl_colls.size() == 60);
  const CollectiveReport& r = CollectivesOf(*m);
  REQUIRE(r.collectives.size() == 30);
  CHECK(r.by_plugin == 30);
  CHECK(r.by_comm == 30);
  CHECK(r.unmatched == 0);
  for (const Collective& c : r.collectives) {
    CHECK(c.by_plugin);
    CHECK(c.comm == 0x5eedc0ffee000001ull);
    CHECK(c.op == "AllReduce");
    CHECK(c.algo == "Ring");
    CHECK(c.proto == "LL");
    CHECK(c.n_channels == 2);
    CHECK(c.n_warps == 16);
    CHECK(c.datatype == "ncclFloat32");
    CHECK(c.bytes == 64ull << 20);  // count x 4 bytes
    CHECK(c.comm_ranks == 2);       // the plugin's nranks
    CHECK(c.algbw > 0);
    REQUIRE(c.ranks.size() == 2);
    for (const CollectiveRank& cr : c.ranks) CHECK(cr.plugin >= 0);
    CHECK(m->nccl_colls[c.ranks[0].plugin].seq == c.seq);
  }
  const Collective& c = r.collectives[3];
  auto d = Details(*m, c.ranks[0].kernel);
  CHECK(d["Algorithm"] == "Ring, LL, 2 channels, 16 warps");
  CHECK(d["Communicator"].find("AllReduce #3 (NCCL's sequence)") != std::string::npos);
  CHECK(d["Elements"] == "16777216 × ncclFloat32");

  const std::string text = FormatCollectiveReport(r);
  CHECK(text.find("30 of them matched by communicator, function and NCCL's sequence number") !=
        std::string::npos);
  CHECK(text.find("Algorithms (NCCL profiler plugin)") != std::string::npos);
  CHECK(text.find("Ring/LL") != std::string::npos);  // the bandwidth table's algorithm column
  const nlohmann::json jc = nlohmann::json::parse(CollectivesJson(r));
  CHECK(jc["matched_by_plugin"] == 30);
  REQUIRE(jc["algorithms"].size() == 1);
  CHECK(jc["algorithms"][0]["algo"] == "Ring");
  CHECK(jc["algorithms"][0]["count"] == 30);
  CHECK(jc["bandwidth"][0]["algo"] == "Ring/LL");
}

TEST_CASE("nccl plugin: exact where ordinals are not (a rank's file starts a collective later)") {
  std::vector<SimRank> ranks = TwoRanks(true);
  ranks[1].skip = 1;             // rank 1 missed the first all-reduce
  ranks[1].plugin_seq_base = 0;  // but NCCL's numbers are the communicator's own
  auto m = Load(RankFile(SimHost{"node-a", "boot-a"}, ranks));
  const CollectiveReport& r = CollectivesOf(*m);
  REQUIRE(r.collectives.size() == 29);
  CHECK(r.unmatched == 1);  // rank 0's first
  for (const Collective& c : r.collectives) {
    REQUIRE(c.ranks.size() == 2);
    CHECK(std::llabs(c.ranks[0].end - c.ranks[1].end) <=
          2 * 1'000);  // one true collective: ends within jitter
  }
  // The same trace without the plugin matches by ordinal: off by one on every collective.
  for (SimRank& s : ranks) s.plugin = false;
  auto o = Load(RankFile(SimHost{"node-a", "boot-a"}, ranks));
  const CollectiveReport& ro = CollectivesOf(*o);
  REQUIRE(!ro.collectives.empty());
  CHECK(std::llabs(ro.collectives[0].ranks[0].end - ro.collectives[0].ranks[1].end) > 1'000'000);
}

TEST_CASE("nccl plugin: a process without plugin records keeps everyone on the NVTX payload match") {
  std::vector<SimRank> ranks = TwoRanks(true, /*payloads=*/true);
  ranks[1].plugin = false;
  auto m = Load(RankFile(SimHost{"node-a", "boot-a"}, ranks));
  const CollectiveReport& r = CollectivesOf(*m);
  REQUIRE(r.collectives.size() == 30);
  CHECK(r.by_plugin == 0);
  CHECK(r.by_comm == 30);  // NCCL's payloads
  CHECK(r.unmatched == 0);
  for (const Collective& c : r.collectives) CHECK(c.algo.empty());
}

TEST_CASE("nccl plugin: per-channel GPU spans in the cross-rank table") {
  std::vector<SimRank> ranks = TwoRanks(true);
  for (SimRank& s : ranks) s.channels = true;
  auto m = Load(RankFile(SimHost{"node-a", "boot-a"}, ranks));
  REQUIRE(m->nccl_channels.size() == 120);
  const CollectiveReport& r = CollectivesOf(*m);
  REQUIRE(r.collectives.size() == 30);
  for (const Collective& c : r.collectives)
    for (const CollectiveRank& cr : c.ranks) {
      CHECK(cr.channels == 2);
      CHECK(cr.gpu_start == cr.start + 1'000);
      CHECK(cr.gpu_end == cr.end - 1'000 + 1);
    }
  auto d = Details(*m, r.collectives[0].ranks[1].kernel);
  CHECK(d["rank 1 (this)"].find("on GPU (2)") != std::string::npos);
}
