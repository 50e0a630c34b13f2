// NCCL's NVTX payloads (format 1.2) in the cross-rank analysis: collectives matched by communicator and
// sequence number, message sizes, nccl-tests' algbw/busbw, and the fields in the details of a range and of a
// kernel. The traces are built in code (sim_job.h) with the fields NCCL 2.19+ attaches; no real NCCL run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "gt/viewer/collectives.h"
#include "gt/viewer/csv.h"
#include "gt/viewer/json.h"
#include "gt/viewer/load.h"
#include "gt/viewer/merge.h"
#include "gt/viewer/nvtx_args.h"
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

std::vector<SimRank> TwoRanks(bool payloads, std::map<uint32_t, int64_t> straggle = {},
                              int32_t straggler = -1) {
  SimRank r0{0, 0, 2}, r1{1, 1, 2};
  r1.pid = 2000;
  for (SimRank* r : {&r0, &r1}) {
    r->collectives = 30, r->interval_ns = 50'000'000, r->payloads = payloads;
    r->straggle = straggle, r->straggler = straggler;
  }
  return {r0, r1};
}

std::map<std::string, std::string> Details(const TraceModel& m, EventId e) {
  std::map<std::string, std::string> f;
  for (const DetailField& d : EventDetails(m, e)) f[d.name] = d.value;
  return f;
}

}  // namespace

TEST_CASE("nccl payloads: bus bandwidth factors and sizes follow nccl-tests") {
  CHECK(BusBandwidthFactor("AllReduce", 8) == Approx(2.0 * 7 / 8));
  CHECK(BusBandwidthFactor("AllGather", 8) == Approx(7.0 / 8));
  CHECK(BusBandwidthFactor("ReduceScatter", 4) == Approx(3.0 / 4));
  CHECK(BusBandwidthFactor("Broadcast", 8) == 1.0);
  CHECK(BusBandwidthFactor("Reduce", 8) == 1.0);
  CHECK(BusBandwidthFactor("SendRecv", 2) == 1.0);
  CHECK(BusBandwidthFactor("AllReduce", 0) == 0.0);
  CHECK(AlgorithmBytes("AllReduce", 1000, 8) == 1000);
  CHECK(AlgorithmBytes("AllGather", 1000, 8) == 8000);  // NCCL's payload holds the per-rank size
  CHECK(AlgorithmBytes("ReduceScatter", 1000, 4) == 4000);
}

TEST_CASE("nccl payloads: 2 ranks matched by communicator, with algbw and busbw") {
  auto m = Load(RankFile(SimHost{"node-a", "boot-a"}, TwoRanks(true, {{4, 20'000'000}}, 1)));
  REQUIRE(m->nvtx_args.size() == 2 * (4 + 30 * 3));
  const CollectiveReport& r = CollectivesOf(*m);
  REQUIRE(r.collectives.size() == 30);
  CHECK(r.by_comm == 30);
  CHECK(r.unmatched == 0);
  for (const Collective& c : r.collectives) {
    CHECK(c.by_comm);
    CHECK(c.comm == 0x5eedc0ffee000001ull);
    CHECK(c.op == "AllReduce");
    CHECK(c.redop == "Sum");
    CHECK(c.bytes == 64ull << 20);
    CHECK(c.comm_ranks == 2);  // from ncclCommInitRankConfig's payload
    for (const CollectiveRank& cr : c.ranks) CHECK(cr.call.valid());
    int64_t last_end = 0;
    for (const CollectiveRank& cr : c.ranks) last_end = std::max(last_end, cr.end);
    REQUIRE(c.time_ns == last_end - c.last_arrival);
    CHECK(c.algbw == Approx(double(64ull << 20) / (double(c.time_ns) * 1e-9)));
    CHECK(c.busbw == Approx(c.algbw));  // 2(n-1)/n = 1 on two ranks
  }
  // Sequence numbers on the communicator are the ordinals, so the straggler analysis is unchanged.
  CHECK(r.collectives[4].ordinal == 4);
  CHECK(r.collectives[4].step == "step 4");
  REQUIRE(r.diagnosis.size() == 1);
  CHECK(r.diagnosis[0].rfind("rank 1 arrives late at 1 of 30 AllReduce collectives", 0) == 0);

  REQUIRE(r.bandwidth.size() == 1);
  const CollectiveBandwidth& b = r.bandwidth[0];
  CHECK(b.op == "AllReduce");
  CHECK(b.bytes == 64ull << 20);
  CHECK(b.ranks == 2);
  CHECK(b.count == 30);
  // The sim's collectives take about 1.2 ms once both ranks arrived: ~56 GB/s for 64 MiB.
  CHECK(b.median_ns > 1'100'000);
  CHECK(b.median_ns < 1'300'000);
  CHECK(b.algbw == Approx(double(64ull << 20) / (double(b.median_ns) * 1e-9)));

  const std::string text = FormatCollectiveReport(r);
  CHECK(text.find("30 of them matched by communicator and sequence number") != std::string::npos);
  CHECK(text.find("Bandwidth (nccl-tests' algbw and busbw") != std::string::npos);
  CHECK(text.find("AllReduce") != std::string::npos);
  CHECK(text.find("64.0 MiB") != std::string::npos);
  const std::string json = CollectivesJson(r);
  CHECK(json.find("\"matched_by_communicator\":30") != std::string::npos);
  CHECK(json.find("\"busbw_bytes_per_s\":") != std::string::npos);

  // The kernel's details carry the collective's size and bandwidth; the range's its payload fields.
  const Collective& late = r.collectives[4];
  auto k = Details(*m, late.ranks[0].kernel);
  CHECK(k["Communicator"] == "0x5eedc0ffee000001, call #4");
  CHECK(k["Message size"] == "64.0 MiB (67108864), Sum");
  CHECK(k["Bandwidth"].rfind("algbw ", 0) == 0);
  CHECK(k["Bandwidth"].find("on 2 ranks") != std::string::npos);
  auto n = Details(*m, late.ranks[0].call);
  CHECK(n["Domain"] == "NCCL");
  CHECK(n["NCCL communicator ID"] == "0x5eedc0ffee000001");
  CHECK(n["Message size [bytes]"] == "64.0 MiB (67108864)");
  CHECK(n["Reduction operation"] == "Sum");

  auto csv = TraceTableCsv(*m, "collectives");  // gtrace export --csv: the size and bandwidth per row
  REQUIRE(csv.ok());
  const auto col = [&](std::string_view name) {
    return size_t(std::find(csv->header.begin(), csv->header.end(), name) - csv->header.begin());
  };
  REQUIRE(col("busbw") < csv->header.size());
  CHECK(csv->rows[0][col("bytes")].value == "67108864");
  CHECK(csv->rows[0][col("comm")].value == std::to_string(0x5eedc0ffee000001ull));

  const std::vector<NcclCall> calls = NcclCalls(*m);
  REQUIRE(calls.size() == 2 * 31);
  CHECK(calls[0].op == "CommInitRankConfig");
  CHECK(calls[0].nranks == 2);
  CHECK_FALSE(calls[0].has_bytes);
  CHECK(calls[1].op == "AllReduce");
}

TEST_CASE("nccl payloads: without them, kernels still match by name and ordinal, with no bandwidth") {
  auto m = Load(RankFile(SimHost{"node-a", "boot-a"}, TwoRanks(false)));
  const CollectiveReport& r = CollectivesOf(*m);
  REQUIRE(r.collectives.size() == 30);
  CHECK(r.by_comm == 0);
  CHECK(r.bandwidth.empty());
  CHECK_FALSE(r.collectives[0].by_comm);
  CHECK(r.collectives[0].bytes == 0);
  CHECK(FormatCollectiveReport(r).find("Bandwidth") == std::string::npos);
}

TEST_CASE("nccl payloads: 4 hosts x 2 ranks merged; the fields follow their ranges across clocks") {
  const SimHost hosts[] = {{"n0", "b0", 0, 0, 0},
                           {"n1", "b1", 5'000'000'000, 2e-6, 300'000},
                           {"n2", "b2", -3'000'000'000, -4e-6, -500'000},
                           {"n3", "b3", 42'000, 8e-6, 1'000'000}};
  std::vector<std::string> files;
  for (int h = 0; h < 4; ++h) {
    std::vector<SimRank> ranks;
    for (int l = 0; l < 2; ++l) {
      SimRank r;
      r.rank = 2 * h + l, r.local_rank = l, r.world = 8, r.pid = uint32_t(100 * h + l + 1);
      r.collectives = 200, r.interval_ns = 30'000'000, r.jitter_ns = 2'000, r.payloads = true;
      r.bytes = 256ull << 20;
      ranks.push_back(r);
    }
    files.push_back(RankFile(hosts[h], ranks));
  }
  std::vector<MergeInput> in;
  for (size_t i = 0; i < files.size(); ++i)
    in.push_back(
        {"host" + std::to_string(i) + ".gtrace",
         std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(files[i].data()), files[i].size())});
  auto m = LoadMergedTraces(in);
  REQUIRE(m.ok());
  const TraceModel& model = **m;
  const CollectiveReport& r = CollectivesOf(model);
  REQUIRE(r.collectives.size() == 200);
  CHECK(r.by_comm == 200);
  CHECK(r.unmatched == 0);
  for (const Collective& c : r.collectives) {
    REQUIRE(c.ranks.size() == 8);
    CHECK(c.comm_ranks == 8);
    CHECK(c.bytes == 256ull << 20);
    CHECK(c.busbw == Approx(c.algbw * 2.0 * 7 / 8));
  }
  REQUIRE(r.bandwidth.size() == 1);
  CHECK(r.bandwidth[0].ranks == 8);
  CHECK(r.bandwidth[0].count == 200);
  CHECK(r.bandwidth[0].busbw == Approx(r.bandwidth[0].algbw * 1.75));
  // Every rank's range found its fields after the clock mapping (same mapping for both records).
  for (const CollectiveRank& cr : r.collectives[100].ranks) {
    REQUIRE(cr.call.valid());
    CHECK(NvtxArgsOf(model, cr.call).size() == 3);
  }
}

// Two communicators running the same kernel, called in a different order on each rank (each on its own
// stream): the kernel name + ordinal would pair rank 0's first call on A with rank 1's first call on B; the
// communicator + sequence number pairs the calls that belong together.
TEST_CASE("nccl payloads: two communicators with one kernel name stay apart") {
  std::string file;
  auto w = TraceWriter::Create(MakeStringSink(&file));
  REQUIRE(w.ok());
  TraceWriter& tw = **w;
  const StringId kernel =
      tw.Intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  const StringId launch = tw.Intern("cudaLaunchKernelExC"), domain = tw.Intern("NCCL");
  const StringId call_name = tw.Intern("ncclAllReduce");
  const uint64_t kA = 0xA, kB = 0xB;
  for (int32_t rank = 0; rank < 2; ++rank) {
    const uint32_t pid = 100 + uint32_t(rank);
    ProcessRecord p;
    p.pid = pid, p.rank = rank, p.world_size = 2, p.start_ns = 0, p.end_ns = 1'000'000'000;
    tw.Add(p);
    // Rank 0: A, B, A, B; rank 1: B, A, B, A. Communicator A moves 1 MiB, B 4 MiB.
    for (uint32_t i = 0; i < 4; ++i) {
      const uint64_t comm = ((i % 2 == 0) == (rank == 0)) ? kA : kB;
      const int64_t t = 1'000'000 + int64_t(i) * 1'000'000 + rank * 10'000;
      NvtxRecord call;
      call.pid = pid, call.tid = pid, call.domain = domain, call.message = call_name;
      call.start = t, call.end = t + 20'000;
      tw.Add(call);
      for (auto [name, value] : {std::pair<const char*, uint64_t>{"NCCL communicator ID", comm},
                                 {"Message size [bytes]", comm == kA ? 1ull << 20 : 4ull << 20}}) {
        NvtxArgRecord a;
        a.pid = pid, a.tid = pid, a.start = call.start, a.name = tw.Intern(name);
        a.kind = uint8_t(NvtxArgKind::kUint), a.value = value;
        tw.Add(a);
      }
      ApiCallRecord api;
      api.pid = pid, api.tid = pid, api.name = launch, api.correlation_id = i + 1;
      api.start = t + 5'000, api.end = t + 10'000;
      tw.Add(api);
      KernelRecord k;
      k.pid = pid, k.name = kernel, k.correlation_id = i + 1, k.stream_id = comm == kA ? 7 : 8;
      k.start = t + 15'000, k.end = t + 300'000;
      tw.Add(k);
    }
  }
  REQUIRE(tw.Finish().ok());
  auto m = Load(file);
  const CollectiveReport& r = CollectivesOf(*m);
  REQUIRE(r.collectives.size() == 4);
  CHECK(r.by_comm == 4);
  std::map<uint64_t, int> per_comm;
  for (const Collective& c : r.collectives) {
    per_comm[c.comm]++;
    CHECK(c.bytes == (c.comm == kA ? 1ull << 20 : 4ull << 20));
    REQUIRE(c.ranks.size() == 2);
    // Both ranks' kernels of one collective ran on the communicator's stream.
    CHECK(m->TrackOf(c.ranks[0].kernel).stream_id == m->TrackOf(c.ranks[1].kernel).stream_id);
  }
  CHECK(per_comm[kA] == 2);
  CHECK(per_comm[kB] == 2);
}
