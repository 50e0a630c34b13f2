// Nsight Systems import, core half: nsys tables built in code (no SQLite) -> MapNsysTables -> the model.
// Golden: the kernel table, track names and keys (the same as a gcollect trace's), counts, launch -> kernel
// flows by correlation id, NVTX nesting and domains, and hostile rows counted as losses.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gt/viewer/builder.h"
#include "gt/viewer/load.h"
#include "gt/viewer/nsys.h"
#include "gt/viewer/query.h"
#include "test_util.h"

using namespace gt;
using namespace gt::viewer;

namespace {

constexpr int64_t N = kNsysNull;
int64_t Gtid(int64_t pid, int64_t tid) {
  return (pid << 24) | tid;
}

NsysTable Table(std::vector<std::pair<std::string, std::vector<int64_t>>> ints,
                std::vector<std::pair<std::string, std::vector<std::string>>> texts = {}) {
  NsysTable t;
  t.present = true;
  for (auto& [k, v] : ints) t.rows = std::max(t.rows, v.size()), t.ints[k] = std::move(v);
  for (auto& [k, v] : texts) t.rows = std::max(t.rows, v.size()), t.texts[k] = std::move(v);
  return t;
}

// pid 77 "trainer", threads 77 "main" and 78 "loader"; GPUs 0 and 1 (H200).
//   API  (77/77): cudaLaunchKernel [100,110] corr 1, [200,210] corr 2, cudaMemcpyAsync [300,310] corr 3,
//                 cudaMemsetAsync [400,405] corr 4; driver cuLaunchKernel [102,108] corr 5
//   GPU 0 stream 7:  gemm [150,350] corr 1, memcpy HtoD 1 MiB [360,460] corr 3
//   GPU 0 stream 9:  relu [220,260] corr 2
//   GPU 1 stream 21: memset 4 KiB [410,420] corr 4
//   NVTX: domain 3 "train" created; "step" [50,900] in domain 3 > "fwd" [60,300]; mark "tick" at 70;
//         start/end "epoch" [40,1000] category 2; "load" [100,200] on thread 78 named by textId 6
NsysTables Small() {
  NsysTables t;
  t.tables["StringIds"] =
      Table({{"id", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}},
            {{"value",
              {"gemm_kernel(float*)", "relu(float*)", "cudaLaunchKernel", "cudaMemcpyAsync",
               "cudaMemsetAsync", "load", "main", "loader", "cuLaunchKernel", "gemm"}}});
  t.tables["CUPTI_ACTIVITY_KIND_KERNEL"] = Table({{"start", {150, 220}},
                                                  {"end", {350, 260}},
                                                  {"deviceId", {0, 0}},
                                                  {"contextId", {1, 1}},
                                                  {"streamId", {7, 9}},
                                                  {"correlationId", {1, 2}},
                                                  {"globalPid", {Gtid(77, 0), Gtid(77, 0)}},
                                                  {"demangledName", {1, 2}},
                                                  {"shortName", {10, 2}},
                                                  {"gridX", {4, 8}},
                                                  {"blockX", {128, 64}},
                                                  {"registersPerThread", {32, 16}}});
  t.tables["CUPTI_ACTIVITY_KIND_MEMCPY"] = Table({{"start", {360}},
                                                  {"end", {460}},
                                                  {"deviceId", {0}},
                                                  {"contextId", {1}},
                                                  {"streamId", {7}},
                                                  {"correlationId", {3}},
                                                  {"globalPid", {Gtid(77, 0)}},
                                                  {"bytes", {1 << 20}},
                                                  {"copyKind", {1}},
                                                  {"srcKind", {2}},
                                                  {"dstKind", {3}}});
  t.tables["CUPTI_ACTIVITY_KIND_MEMSET"] = Table({{"start", {410}},
                                                  {"end", {420}},
                                                  {"deviceId", {1}},
                                                  {"contextId", {2}},
                                                  {"streamId", {21}},
                                                  {"correlationId", {4}},
                                                  {"globalPid", {Gtid(77, 0)}},
                                                  {"bytes", {4096}},
                                                  {"value", {0}}});
  t.tables["CUPTI_ACTIVITY_KIND_RUNTIME"] = Table({{"start", {100, 200, 300, 400}},
                                                   {"end", {110, 210, 310, 405}},
                                                   {"globalTid", std::vector<int64_t>(4, Gtid(77, 77))},
                                                   {"correlationId", {1, 2, 3, 4}},
                                                   {"nameId", {3, 3, 4, 5}},
                                                   {"returnValue", {0, 0, 0, 0}}});
  t.tables["CUPTI_ACTIVITY_KIND_DRIVER"] = Table({{"start", {102}},
                                                  {"end", {108}},
                                                  {"globalTid", {Gtid(77, 77)}},
                                                  {"correlationId", {5}},
                                                  {"nameId", {9}},
                                                  {"returnValue", {0}}});
  t.tables["NVTX_EVENTS"] = Table(
      {{"start", {0, 50, 60, 70, 40, 100}},
       {"end", {N, 900, 300, N, 1000, 200}},
       {"eventType", {75, 59, 59, 34, 60, 59}},
       {"globalTid", {Gtid(77, 77), Gtid(77, 77), Gtid(77, 77), Gtid(77, 77), Gtid(77, 77), Gtid(77, 78)}},
       {"domainId", {3, 3, 0, 0, 0, 0}},
       {"textId", {N, N, N, N, N, 6}},
       {"category", {0, 0, 0, 0, 2, 0}},
       {"color", {N, 0xFF76B900, N, N, N, N}}},
      {{"text", {"train", "step", "fwd", "tick", "epoch", ""}}});
  t.tables["ThreadNames"] = Table({{"nameId", {7, 8}}, {"globalTid", {Gtid(77, 77), Gtid(77, 78)}}});
  t.tables["PROCESSES"] = Table({{"globalPid", {Gtid(77, 0)}}, {"pid", {77}}}, {{"name", {"trainer"}}});
  t.tables["TARGET_INFO_GPU"] =
      Table({{"id", {0, 1}}, {"smCount", {132, 132}}, {"computeMajor", {9, 9}}, {"computeMinor", {0, 0}}},
            {{"name", {"NVIDIA H200", "NVIDIA H200"}}, {"chipName", {"GH100", "GH100"}}});
  return t;
}

std::unique_ptr<TraceModel> Build(const NsysTables& t, TraceData* data_out = nullptr) {
  TraceData data;
  REQUIRE(MapNsysTables(t, &data).ok());
  ModelBuilder b;
  b.SetFormat(SourceFormat::kNsysSqlite);
  ReplayTraceData(data, b);
  if (data_out) *data_out = data;
  return b.Finish();
}

std::map<std::string, std::string> TrackNames(const TraceModel& m) {
  std::map<std::string, std::string> out;
  for (const auto& t : m.tracks) out[t.key] = t.name;
  return out;
}

uint64_t Loss(const TraceModel& m, const std::string& name) {
  for (const auto& l : m.losses)
    if (l.name == name) return l.count;
  return 0;
}

}  // namespace

TEST_CASE("nsys import: kernel table, tracks, counts and flows", "[nsys]") {
  TraceData data;
  auto m = Build(Small(), &data);
  CHECK(m->format == SourceFormat::kNsysSqlite);
  CHECK(data.kernels.size() == 2);
  CHECK(data.memcpys.size() == 1);
  CHECK(data.memsets.size() == 1);
  CHECK(data.api_calls.size() == 5);
  CHECK(data.nvtx.size() == 5);  // the domain-create row names a domain, it is no event
  CHECK(data.devices.size() == 2);
  CHECK(data.streams.size() == 3);

  auto rows = KernelSummary(*m);
  REQUIRE(rows.size() == 2);
  CHECK(m->Str(rows[0].name) == "gemm_kernel(float*)");  // demangledName wins over shortName
  CHECK(rows[0].total_ns == 200);
  CHECK(m->Str(rows[1].name) == "relu(float*)");
  CHECK(rows[1].total_ns == 40);
  CHECK(rows[0].share == Approx(200.0 / 240));

  // The tracks a gcollect trace of the same work has: one per stream under its GPU, API and ranges per
  // thread.
  auto names = TrackNames(*m);
  CHECK(names.count("g0/p77/c1/s7"));
  CHECK(names.count("g0/p77/c1/s9"));
  CHECK(names.count("g1/p77/c2/s21"));
  CHECK(names.count("p77/t77/api"));
  CHECK(names.count("p77/t77/ranges"));
  CHECK(names.count("p77/t78/ranges"));
  CHECK(names.size() == 6);
  bool named_gpu = false, named_process = false;
  for (const auto& g : m->groups) {
    if (g.key == "g0") named_gpu = g.name.find("NVIDIA H200") != std::string::npos;
    if (g.key == "p77") named_process = g.name.find("trainer") != std::string::npos;
  }
  CHECK(named_gpu);
  CHECK(named_process);
  CHECK(names["p77/t78/ranges"] == "loader (78) · Ranges");
  CHECK(names["p77/t77/api"] == "main (77) · CUDA API");
  CHECK(names["g0/p77/c1/s7"] == "Stream 7");

  // Launch -> kernel by correlation id, both ways.
  EventId gemm = test::FindByName(*m, "gemm_kernel(float*)");
  REQUIRE(gemm.valid());
  EventId launch = FlowPartner(*m, gemm);
  REQUIRE(launch.valid());
  CHECK(m->Str(m->lanes[launch.lane].name[launch.index]) == "cudaLaunchKernel");
  CHECK(m->lanes[launch.lane].start[launch.index] == 100);
  CHECK(FlowPartner(*m, launch) == gemm);
  EventId memset = test::FindByName(*m, "Memset");
  EventId memset_api = test::FindByName(*m, "cudaMemsetAsync");
  REQUIRE(memset_api.valid());
  CHECK(FlowPartner(*m, memset_api) == memset);
  CHECK(Loss(*m, "flows_unresolved") == 0);
}

TEST_CASE("nsys import: NVTX ranges, marks, domains, registered strings", "[nsys]") {
  TraceData data;
  Build(Small(), &data);
  std::map<std::string, NvtxRecord> by;
  for (const auto& n : data.nvtx) by[data.Str(n.message)] = n;
  REQUIRE(by.size() == 5);
  CHECK(data.Str(by["step"].domain) == "train");
  CHECK((by["step"].flags & kNvtxHasColor));
  CHECK(by["step"].color == 0xFF76B900u);
  CHECK(by["fwd"].domain == 0);
  CHECK((by["tick"].flags & kNvtxMark));
  CHECK(by["tick"].end == 70);
  CHECK((by["epoch"].flags & kNvtxStartEnd));
  CHECK(by["epoch"].category == 2);
  CHECK(by["load"].tid == 78);  // text from StringIds (textId), on the loader thread
  // fwd nests inside step on one thread: two depth lanes on that ranges track.
  auto m = Build(Small());
  for (const auto& t : m->tracks)
    if (t.key == "p77/t77/ranges") CHECK(t.lane_count >= 2);
}

TEST_CASE("nsys import: missing tables load what exists", "[nsys]") {
  NsysTables t = Small();
  t.tables.erase("CUPTI_ACTIVITY_KIND_MEMSET");
  t.tables.erase("NVTX_EVENTS");
  t.tables.erase("TARGET_INFO_GPU");
  t.tables.erase("ThreadNames");
  auto m = Build(t);
  CHECK(KernelSummary(*m).size() == 2);
  auto names = TrackNames(*m);
  CHECK(names.count("g1/p77/c2/s21") == 0);  // its only work was the memset
  CHECK(names.count("p77/t77/ranges") == 0);
  CHECK(m->losses.empty());

  NsysTables only_strings;
  only_strings.tables["StringIds"] = Small().tables["StringIds"];
  TraceData data;
  Status s = MapNsysTables(only_strings, &data);
  CHECK(!s.ok());
  CHECK(s.message().find("not an Nsight Systems export") != std::string::npos);
  CHECK(s.message().find("CUPTI_ACTIVITY_KIND_KERNEL") != std::string::npos);
}

TEST_CASE("nsys import: hostile values are counted, never trusted", "[nsys]") {
  NsysTables t;
  t.tables["StringIds"] = Table({{"id", {1}}}, {{"value", {"k"}}});
  // Rows: fine; end < start; unknown string id; device id over 32 bits; negative globalPid; NULL start.
  t.tables["CUPTI_ACTIVITY_KIND_KERNEL"] =
      Table({{"start", {10, 50, 60, 70, 80, N}},
             {"end", {20, 40, 65, 75, 85, 90}},
             {"deviceId", {0, 0, 0, int64_t(1) << 40, 0, 0}},
             {"streamId", {7, 7, 7, 7, 7, 7}},
             {"globalPid", {Gtid(5, 0), Gtid(5, 0), Gtid(5, 0), Gtid(5, 0), -1, Gtid(5, 0)}},
             {"demangledName", {1, 1, 999999, 1, 1, 1}},
             {"gridX", {-3, 1, 1, 1, 1, 1}}});
  t.tables["CUPTI_ACTIVITY_KIND_MEMCPY"] = Table({{"start", {30}},
                                                  {"end", {35}},
                                                  {"deviceId", {0}},
                                                  {"streamId", {7}},
                                                  {"globalPid", {Gtid(5, 0)}},
                                                  {"bytes", {-8}},
                                                  {"copyKind", {4242}},
                                                  {"srcKind", {-1}}});
  t.tables["NVTX_EVENTS"] = Table({{"start", {1, 2}},
                                   {"end", {5, 1}},
                                   {"eventType", {12345, 59}},
                                   {"globalTid", {Gtid(5, 5), Gtid(5, 5)}}},
                                  {{"text", {"x", "y"}}});
  TraceData data;
  REQUIRE(MapNsysTables(t, &data).ok());
  REQUIRE(data.kernels.size() == 2);    // the fine one and the one with the unknown name
  CHECK(data.kernels[0].grid[0] == 1);  // a negative grid is no grid: 1
  CHECK(data.Str(data.kernels[1].name) == "<kernel string 999999>");
  REQUIRE(data.memcpys.size() == 1);
  CHECK(data.memcpys[0].bytes == 0);
  CHECK(data.memcpys[0].copy_kind == uint8_t(CopyKind::kUnknown));
  CHECK(data.nvtx.empty());
  std::map<std::string, uint64_t> losses;
  for (const auto& l : data.losses) losses[data.Str(l.name)] = l.count;
  CHECK(losses["nsys_negative_durations"] == 2);  // kernel 50 > 40, NVTX 2 > 1
  CHECK(losses["nsys_bad_rows"] == 3);            // device over 32 bits, negative globalPid, NULL start
  CHECK(losses["nsys_string_ids_missing"] == 1);
  CHECK(losses["nsys_unknown_enum_values"] == 2);  // copyKind 4242, srcKind -1
  CHECK(losses["nsys_nvtx_other_events"] == 1);
  auto m = Build(t);
  CHECK(m->event_count == 3);

  // Times past any session's length (the fuzzer's find: their sums overflowed the summaries' totals).
  NsysTables far;
  far.tables["CUPTI_ACTIVITY_KIND_MEMSET"] = Table({{"start", {0, 10}},
                                                    {"end", {INT64_MAX, 20}},
                                                    {"deviceId", {0, 0}},
                                                    {"streamId", {7, 7}},
                                                    {"globalPid", {Gtid(5, 0), Gtid(5, 0)}}});
  TraceData far_data;
  REQUIRE(MapNsysTables(far, &far_data).ok());
  CHECK(far_data.memsets.size() == 1);
  REQUIRE(far_data.losses.size() == 1);
  CHECK(far_data.Str(far_data.losses[0].name) == "nsys_times_out_of_range");
}

TEST_CASE("nsys import: SQLite content without a reader says so", "[nsys]") {
  std::string bytes("SQLite format 3\0", 16);
  bytes.resize(4096);
  std::span<const uint8_t> span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  CHECK(DetectFormat(span) == DetectedFormat::kSqlite);
  CHECK(LooksLikeSqlite(span));
  CHECK(!LooksLikeSqlite(span.subspan(0, 15)));
  NsysTableReader saved = GetNsysTableReader();
  SetNsysTableReader(nullptr);
  auto m = LoadTrace(span);
  SetNsysTableReader(saved);
  REQUIRE(!m.ok());
  CHECK(m.status().message().find("no SQLite reader") != std::string::npos);
}
