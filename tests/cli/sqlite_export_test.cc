// `gtrace export --sqlite` golden tests: tiny traces built in code, every exported row compared.
#include <sqlite3.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "gt/viewer/builder.h"
#include "sqlite_export.h"
#include "test_util.h"

using namespace gt;
using namespace gt::viewer;

namespace {

// Rows of a query, each cell as text ("NULL" for null): compact to compare against a golden table.
std::vector<std::string> Rows(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK);
  std::vector<std::string> out;
  while (sqlite3_step(s) == SQLITE_ROW) {
    std::string row;
    for (int c = 0; c < sqlite3_column_count(s); ++c) {
      if (c) row += "|";
      const unsigned char* t = sqlite3_column_text(s, c);
      row += t ? reinterpret_cast<const char*>(t) : "NULL";
    }
    out.push_back(row);
  }
  sqlite3_finalize(s);
  return out;
}

// Process 1 "app" (thread 11 named "main") on GPU 0: two launches of a templated kernel, a HtoD copy, a
// memset, runtime and driver calls, a push/pop NVTX range with an int64 payload in a custom domain, and a
// mark.
std::unique_ptr<TraceModel> Tiny() {
  ModelBuilder b;
  test::FeedStrings(b, {"", "app", "NVIDIA H200", "void ns::gemm<float>(float*, int)", "cudaLaunchKernel",
                        "cuMemAlloc_v2", "step", "mydomain", "main", "mark"});
  test::FeedProcessAndGpu(b);
  ThreadRecord th{1, 11, 8};
  b.OnThreads({&th, 1});
  std::vector<KernelRecord> ks(2);
  for (int i = 0; i < 2; ++i) {
    ks[i].start = 1000 + i * 1000, ks[i].end = 1500 + i * 1000, ks[i].pid = 1, ks[i].device_id = 0;
    ks[i].context_id = 1, ks[i].stream_id = 7, ks[i].correlation_id = uint32_t(i + 1), ks[i].name = 3;
    ks[i].grid = {64, 2, 1}, ks[i].block = {256, 1, 1}, ks[i].registers_per_thread = 32;
    ks[i].static_shared_bytes = 1024, ks[i].dynamic_shared_bytes = 2048;
  }
  std::vector<ApiCallRecord> api = {{900, 950, 1, 11, 1, 211, 4, 0, uint8_t(ApiDomain::kRuntime)},
                                    {1900, 1950, 1, 11, 2, 211, 4, 0, uint8_t(ApiDomain::kRuntime)},
                                    {3000, 3100, 1, 11, 3, 1, 5, 2, uint8_t(ApiDomain::kDriver)}};
  b.OnApiCalls(api);
  b.OnKernels(ks);
  MemcpyRecord m;
  m.start = 4000, m.end = 4100, m.pid = 1, m.device_id = 0, m.context_id = 1, m.stream_id = 7;
  m.correlation_id = 10, m.bytes = 1 << 20, m.copy_kind = uint8_t(CopyKind::kHtoD);
  m.src_kind = uint8_t(MemoryKind::kPinned), m.dst_kind = uint8_t(MemoryKind::kDevice);
  b.OnMemcpys({&m, 1});
  MemsetRecord ms;
  ms.start = 5000, ms.end = 5010, ms.pid = 1, ms.device_id = 0, ms.context_id = 1, ms.stream_id = 7;
  ms.correlation_id = 11, ms.bytes = 4096, ms.value = 0, ms.memory_kind = uint8_t(MemoryKind::kDevice);
  b.OnMemsets({&ms, 1});
  NvtxRecord n[2] = {};
  n[0].start = 500, n[0].end = 6000, n[0].pid = 1, n[0].tid = 11, n[0].domain = 7, n[0].message = 6;
  n[0].payload = uint64_t(-5), n[0].payload_kind = uint8_t(NvtxPayloadKind::kI64);
  n[0].color = 0xFF00FF00, n[0].flags = kNvtxHasColor;
  n[1].start = 700, n[1].end = 700, n[1].pid = 1, n[1].tid = 11, n[1].message = 9, n[1].flags = kNvtxMark;
  b.OnNvtx({n, 2});
  return b.Finish();
}

sqlite3* Export(const TraceModel& m) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
  cli::SqliteExportStats stats;
  REQUIRE(cli::ExportSqlite(m, db, &stats).ok());
  CHECK(stats.rows > 20);
  return db;
}

}  // namespace

TEST_CASE("sqlite export: kernels, copies, memsets as nsys's CUPTI tables") {
  auto m = Tiny();
  sqlite3* db = Export(*m);
  CHECK(
      Rows(db,
           "SELECT start, end, deviceId, contextId, streamId, correlationId, globalPid, gridX, gridY, gridZ, "
           "blockX, registersPerThread, staticSharedMemory, dynamicSharedMemory, pid FROM "
           "CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start") ==
      std::vector<std::string>{"1000|1500|0|1|7|1|16777216|64|2|1|256|32|1024|2048|1",
                               "2000|2500|0|1|7|2|16777216|64|2|1|256|32|1024|2048|1"});
  CHECK(Rows(db,
             "SELECT d.value, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d ON d.id = "
             "k.demangledName "
             "JOIN StringIds s ON s.id = k.shortName LIMIT 1") ==
        std::vector<std::string>{"void ns::gemm<float>(float*, int)|gemm"});
  // copyKind in CUPTI's numbering (HtoD = 1), memory kinds too (pinned 2, device 3).
  CHECK(Rows(db,
             "SELECT c.start, c.end, c.bytes, copyKind, srcKind, dstKind, o.label, s.value "
             "FROM CUPTI_ACTIVITY_KIND_MEMCPY c JOIN ENUM_CUDA_MEMCPY_OPER o ON o.id = c.copyKind "
             "JOIN StringIds s ON s.id = c.nameId") ==
        std::vector<std::string>{"4000|4100|1048576|1|2|3|Host-to-Device|Memcpy HtoD"});
  CHECK(Rows(db, "SELECT start, end, bytes, memKind FROM CUPTI_ACTIVITY_KIND_MEMSET") ==
        std::vector<std::string>{"5000|5010|4096|3"});
  CHECK(Rows(db, "SELECT kind, name, bytes, duration FROM COPIES ORDER BY start") ==
        std::vector<std::string>{"memcpy|Memcpy HtoD|1048576|100", "memset|Memset|4096|10"});
  sqlite3_close(db);
}

TEST_CASE("sqlite export: runtime and driver calls, NVTX, threads") {
  auto m = Tiny();
  sqlite3* db = Export(*m);
  CHECK(Rows(db,
             "SELECT start, end, globalTid, correlationId, s.value, returnValue, depth FROM "
             "CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId ORDER BY start") ==
        std::vector<std::string>{"900|950|16777227|1|cudaLaunchKernel|0|0",
                                 "1900|1950|16777227|2|cudaLaunchKernel|0|0"});
  CHECK(Rows(db, "SELECT api, name, returnValue, pid, tid FROM API_CALLS WHERE api = 'driver'") ==
        std::vector<std::string>{"driver|cuMemAlloc_v2|2|1|11"});
  // nsys eventType: 59 push/pop range, 34 mark; the payload in its typed column, the domain by name.
  CHECK(Rows(db,
             "SELECT start, end, eventType, text, color, int64Value, uint64Value, domain, kind FROM NVTX "
             "ORDER BY start") ==
        std::vector<std::string>{"500|6000|59|step|4278255360|-5|NULL|mydomain|nvtx",
                                 "700|700|34|mark|0|NULL|NULL|NULL|nvtx"});
  CHECK(Rows(db, "SELECT globalTid, pid, tid, name FROM THREADS") ==
        std::vector<std::string>{"16777227|1|11|main"});
  CHECK(Rows(db, "SELECT globalPid, pid, name, rank FROM PROCESSES") ==
        std::vector<std::string>{"16777216|1|app|-1"});
  sqlite3_close(db);
}

TEST_CASE("sqlite export: devices, idle gaps, meta") {
  auto m = Tiny();
  sqlite3* db = Export(*m);
  // GPU busy 1000..1500, 2000..2500, 4000..4100, 5000..5010 of span 1000..5010.
  CHECK(Rows(db,
             "SELECT deviceId, start, end, spanNs, busyNs, idleNs, kernels, memcpys, memsets FROM "
             "DEVICE_ACTIVITY") == std::vector<std::string>{"0|1000|5010|4010|1110|2900|2|1|1"});
  CHECK(Rows(db, "SELECT id, name FROM TARGET_INFO_GPU") == std::vector<std::string>{"0|NVIDIA H200"});
  // Its gaps (500, 1500 and 900 ns) are all under ExplainIdleGaps' 10 µs floor: none is listed.
  CHECK(Rows(db, "SELECT count(*) FROM IDLE_GAPS") == std::vector<std::string>{"0"});
  auto meta = Rows(db,
                   "SELECT value FROM META WHERE name IN ('gtrace_sqlite_schema_version', 'events', "
                   "'source_format') ORDER BY name");
  CHECK(meta == std::vector<std::string>{"9", "2", "gtrace"});
  CHECK(Rows(db, "SELECT count(*) FROM LOSSES") == std::vector<std::string>{"0"});
  sqlite3_close(db);
}

TEST_CASE("sqlite export: idle gaps keep their causes") {
  ModelBuilder b;
  test::FeedStrings(b, {"", "app", "NVIDIA H200", "k", "cudaMalloc"});
  test::FeedProcessAndGpu(b);
  std::vector<KernelRecord> ks(2);
  for (int i = 0; i < 2; ++i) {
    ks[i].start = i * 1'100'000, ks[i].end = ks[i].start + 100'000, ks[i].pid = 1, ks[i].stream_id = 7;
    ks[i].correlation_id = uint32_t(i + 1), ks[i].name = 3;
  }
  b.OnKernels(ks);
  ApiCallRecord malloc_call{200'000, 1'000'000, 1, 11, 9, 20, 4, 0, uint8_t(ApiDomain::kRuntime)};
  b.OnApiCalls({&malloc_call, 1});
  auto m = b.Finish();
  sqlite3* db = Export(*m);
  CHECK(Rows(db, "SELECT deviceId, start, end, duration FROM IDLE_GAPS") ==
        std::vector<std::string>{"0|100000|1100000|1000000"});
  CHECK(Rows(db, "SELECT gapId, name, kind, overlapNs FROM IDLE_GAP_ACTIVITY") ==
        std::vector<std::string>{"1|cudaMalloc|api|800000"});
  CHECK(Rows(db, "SELECT diagnosis LIKE '%cudaMalloc%' FROM IDLE_GAPS") == std::vector<std::string>{"1"});
  sqlite3_close(db);
}

// Sampled CPU stacks: the frame tree, one row per sample, and the view that lists each sample's frames.
TEST_CASE("sqlite export: cpu samples with their stacks") {
  ModelBuilder b;
  test::FeedStrings(b, {"", "app", "NVIDIA H200", "train.py:main:10", "data.py:Loader.__getitem__:5",
                        "libc.so.6!clock_nanosleep"});
  test::FeedProcessAndGpu(b);
  const auto py = uint8_t(FrameKind::kPython), native = uint8_t(FrameKind::kNative);
  const CpuStackNodeRecord nodes[] = {{1, 1, 0, 3, py}, {1, 2, 1, 4, py}, {1, 3, 2, 5, native}};
  b.OnCpuStackNodes(nodes);
  const CpuSampleRecord samples[] = {{1000, 1, 11, 3, uint8_t(kSamplePython)},
                                     {2000, 1, 11, 1, uint8_t(kSamplePython)},
                                     {3000, 1, 12, 0, uint8_t(kSampleUnwindFailed)}};
  b.OnCpuSamples(samples);
  auto m = b.Finish();
  sqlite3* db = Export(*m);
  CHECK(Rows(db,
             "SELECT f.id, f.parentId, s.value, f.kind FROM CPU_STACK_FRAMES f JOIN StringIds s ON "
             "s.id = f.frameId ORDER BY f.id") ==
        std::vector<std::string>{"1|0|train.py:main:10|python", "2|1|data.py:Loader.__getitem__:5|python",
                                 "3|2|libc.so.6!clock_nanosleep|native"});
  CHECK(Rows(db, "SELECT id, start, globalTid, stackId, flags, pid, tid FROM CPU_SAMPLES ORDER BY id") ==
        std::vector<std::string>{"1|1000|16777227|3|2|1|11", "2|2000|16777227|1|2|1|11",
                                 "3|3000|16777228|0|16|1|12"});
  CHECK(
      Rows(db,
           "SELECT stackId, stackDepth, frame FROM CPU_STACK_PATHS WHERE stackId = 2 ORDER BY stackDepth") ==
      std::vector<std::string>{"2|0|data.py:Loader.__getitem__:5", "2|1|train.py:main:10"});
  // Innermost first (stackDepth 0), as nsys's SAMPLING_CALLCHAINS; nothing for the sample not unwound.
  CHECK(
      Rows(db,
           "SELECT sampleId, stackDepth, frame, kind FROM CPU_SAMPLE_FRAMES ORDER BY sampleId, stackDepth") ==
      std::vector<std::string>{"1|0|libc.so.6!clock_nanosleep|native",
                               "1|1|data.py:Loader.__getitem__:5|python", "1|2|train.py:main:10|python",
                               "2|0|train.py:main:10|python"});
  sqlite3_close(db);
}

TEST_CASE(
    "sqlite export to a file: refuses to overwrite, reports unwritable places, leaves no partial file") {
  auto m = Tiny();
  const std::string dir = std::filesystem::temp_directory_path() / ("gt_sqlite_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/t.sqlite";
  REQUIRE(cli::ExportSqliteFile(*m, path, false).ok());
  Status again = cli::ExportSqliteFile(*m, path, false);
  CHECK_FALSE(again.ok());
  CHECK(again.message().find("--force") != std::string::npos);
  CHECK(cli::ExportSqliteFile(*m, path, true).ok());
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  CHECK(Rows(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") == std::vector<std::string>{"2"});
  sqlite3_close(db);
  Status bad = cli::ExportSqliteFile(*m, dir + "/no/such/dir/t.sqlite", false);
  CHECK_FALSE(bad.ok());
  CHECK(bad.message().find("cannot write") != std::string::npos);
  // A database that already holds the tables: the export fails and the file it made is removed.
  sqlite3* twice = nullptr;
  REQUIRE(sqlite3_open(":memory:", &twice) == SQLITE_OK);
  REQUIRE(cli::ExportSqlite(*m, twice).ok());
  CHECK_FALSE(cli::ExportSqlite(*m, twice).ok());
  sqlite3_close(twice);
  std::filesystem::remove_all(dir);
}
