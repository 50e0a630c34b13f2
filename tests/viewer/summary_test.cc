// Per-name summaries (gtrace stats) and the comparison of two traces (gtrace diff): golden tables over traces
// built in code.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "gt/viewer/json.h"
#include "gt/viewer/load.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"
#include "test_util.h"

using namespace gt;
using namespace gt::viewer;
using nlohmann::json;

namespace {

struct Row {
  std::string name;
  uint64_t count;
  int64_t total, min, max;
  uint64_t bytes;
};

std::vector<Row> Rows(const std::vector<NameSummary>& s) {
  std::vector<Row> out;
  for (const auto& r : s) out.push_back({r.name, r.count, r.total_ns, r.min_ns, r.max_ns, r.bytes});
  return out;
}

bool operator==(const Row& a, const Row& b) {
  return a.name == b.name && a.count == b.count && a.total == b.total && a.min == b.min && a.max == b.max &&
         a.bytes == b.bytes;
}

std::ostream& operator<<(std::ostream& os, const Row& r) {
  return os << "{" << r.name << " n=" << r.count << " total=" << r.total << " min=" << r.min
            << " max=" << r.max << " bytes=" << r.bytes << "}";
}

// One process, one stream: kernels (name, start, end), a HtoD copy of `copy_bytes` over [copy_start,
// copy_end], and one cudaLaunchKernel per kernel lasting `launch_ns`.
struct KernelSpec {
  std::string name;
  int64_t start, end;
};
std::unique_ptr<TraceModel> Build(const std::vector<KernelSpec>& kernels, uint64_t copy_bytes,
                                  int64_t copy_start, int64_t copy_end, int64_t launch_ns) {
  ModelBuilder b;
  std::vector<std::string> strings{"", "app", "NVIDIA H200", "cudaLaunchKernel"};
  for (const auto& k : kernels) strings.push_back(k.name);
  test::FeedStrings(b, strings);
  test::FeedProcessAndGpu(b);
  std::vector<KernelRecord> ks(kernels.size());
  std::vector<ApiCallRecord> api(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    ks[i].start = kernels[i].start, ks[i].end = kernels[i].end, ks[i].name = uint32_t(4 + i);
    ks[i].pid = 1, ks[i].device_id = 0, ks[i].context_id = 1, ks[i].stream_id = 7;
    ks[i].correlation_id = uint32_t(i + 1);
    api[i] = {kernels[i].start - launch_ns - 10, kernels[i].start - 10, 1, 1, uint32_t(i + 1), 211, 3, 0,
              uint8_t(ApiDomain::kRuntime)};
  }
  b.OnApiCalls(api);
  b.OnKernels(ks);
  if (copy_bytes) {
    MemcpyRecord m;
    m.start = copy_start, m.end = copy_end, m.pid = 1, m.device_id = 0, m.context_id = 1, m.stream_id = 7;
    m.correlation_id = 1000, m.bytes = copy_bytes, m.copy_kind = uint8_t(CopyKind::kHtoD);
    b.OnMemcpys({&m, 1});
  }
  return b.Finish();
}

// Process 1 ("app") with kernels "k" at [0, 0.1] and [1.1, 1.2] ms on GPU 0: one idle gap of 1 ms. `names`
// get string ids 4, 5, ...
void OneGapOfOneMs(ModelBuilder& b, const std::vector<std::string>& names) {
  std::vector<std::string> strings{"", "app", "H200", "k"};
  strings.insert(strings.end(), names.begin(), names.end());
  test::FeedStrings(b, strings);
  ProcessRecord p;
  p.pid = 1, p.name = 1;
  b.OnProcesses({&p, 1});
  std::vector<KernelRecord> k(2);
  for (int i = 0; i < 2; ++i) {
    k[i].start = i * 1'100'000, k[i].end = i * 1'100'000 + 100'000, k[i].name = 3;
    k[i].pid = 1, k[i].device_id = 0, k[i].context_id = 1, k[i].stream_id = 7,
    k[i].correlation_id = uint32_t(i + 1);
  }
  b.OnKernels(k);
}

}  // namespace

TEST_CASE("summaries by name: kernels, copies, top-level API calls, NVTX", "[summary]") {
  auto m = test::SmallTrace();
  CHECK(Rows(SummarizeByName(*m, SummaryOf::kKernels)) ==
        std::vector<Row>{{"gemm", 1, 1000, 1000, 1000, 0}, {"relu", 1, 200, 200, 200, 0}});
  auto kernels = SummarizeByName(*m, SummaryOf::kKernels);
  CHECK(kernels[0].share == Approx(1000.0 / 1200));
  CHECK(Rows(SummarizeByName(*m, SummaryOf::kCopies)) ==
        std::vector<Row>{{"Memcpy HtoD", 1, 200, 200, 200, 1u << 20}});
  // cuLaunchKernel runs inside the first cudaLaunchKernel: its time is part of that call, not a row.
  CHECK(Rows(SummarizeByName(*m, SummaryOf::kApi)) ==
        std::vector<Row>{{"cudaLaunchKernel", 2, 170, 70, 100, 0}, {"cudaMemcpyAsync", 1, 100, 100, 100, 0}});
  CHECK(Rows(SummarizeByName(*m, SummaryOf::kNvtx)) == std::vector<Row>{{"epoch", 1, 1950, 1950, 1950, 0},
                                                                        {"fwd", 1, 440, 440, 440, 0},
                                                                        {"inner", 1, 20, 20, 20, 0}});
}

TEST_CASE("summaries add up instances and break ties by name", "[summary]") {
  auto m = Build({{"b", 100, 200}, {"a", 300, 400}, {"b", 500, 530}, {"c", 600, 730}}, 4096, 800, 1800, 50);
  // b (2 instances) and c tie at 130 ns: by name.
  CHECK(Rows(SummarizeByName(*m, SummaryOf::kKernels)) ==
        std::vector<Row>{{"b", 2, 130, 30, 100, 0}, {"c", 1, 130, 130, 130, 0}, {"a", 1, 100, 100, 100, 0}});
  auto copies = SummarizeByName(*m, SummaryOf::kCopies);
  REQUIRE(copies.size() == 1);
  CHECK(copies[0].bytes == 4096);
  CHECK(copies[0].avg_ns == 1000);
}

TEST_CASE("two traces compared by name: changes, new and vanished names", "[summary][diff]") {
  auto before =
      Build({{"gemm", 100, 1100}, {"relu", 1200, 1300}, {"old_kernel", 1400, 1450}}, 1 << 20, 2000, 2500, 40);
  auto after =
      Build({{"gemm", 100, 700}, {"relu", 800, 910}, {"fused", 1000, 1020}}, 1 << 20, 2000, 2100, 40);
  auto changes = CompareSummaries(SummarizeByName(*before, SummaryOf::kKernels),
                                  SummarizeByName(*after, SummaryOf::kKernels));
  REQUIRE(changes.size() == 4);
  CHECK(changes[0].name == "gemm");  // -400: the largest change first
  CHECK(changes[0].delta_ns() == -400);
  CHECK(changes[1].name == "old_kernel");  // -50 (gone)
  CHECK(changes[1].only_before());
  CHECK(changes[2].name == "fused");  // +20 (new)
  CHECK(changes[2].only_after());
  CHECK(changes[3].name == "relu");  // +10
  CHECK(changes[3].delta_ns() == 10);
  CHECK(PercentChange(1000, 600) == Approx(-40));
  CHECK(PercentChange(0, 0) == 0);
  CHECK(std::isinf(PercentChange(0, 5)));

  const std::string r = DiffReport(*before, "before.gtrace", *after, "after.gtrace");
  INFO(r);
  CHECK(r.find("Before: before.gtrace (gtrace, ") != std::string::npos);
  CHECK(r.find("Total kernel time: 1.15 µs -> 730 ns (-36.5%), kernels 3 -> 3") != std::string::npos);
  CHECK(r.find("   1 µs      600 ns     -400 ns     -40.0%         1 -> 1        1 µs      600 ns  gemm\n") !=
        std::string::npos);
  CHECK(r.find("old_kernel  (only before)") != std::string::npos);
  CHECK(r.find("fused  (only after)") != std::string::npos);
  CHECK(r.find("new") != std::string::npos);
  CHECK(r.find("Memcpy HtoD") != std::string::npos);  // 500 -> 100 ns
  CHECK(r.find("-80.0%") != std::string::npos);
  CHECK(r.find("GPU 0: NVIDIA H200") != std::string::npos);
}

TEST_CASE("stats report: every table with bytes and bandwidth of copies", "[summary][stats]") {
  auto m = test::SmallTrace();
  const std::string r = StatsReport(*m);
  INFO(r);
  CHECK(r.find("Kernels (by total GPU time):") != std::string::npos);
  CHECK(r.find("83.3%") != std::string::npos);  // gemm share
  CHECK(r.find("3.7%") != std::string::npos);   // idle 50 / 1350
  // 1 MiB in 200 ns = 5.24 TB/s (a synthetic copy; the arithmetic is what is checked).
  CHECK(r.find("100.0%      200 ns        1      200 ns      200 ns      200 ns    1.00 MiB   5.24 TB/s  "
               "Memcpy HtoD") != std::string::npos);
  CHECK(r.find("cudaMemcpyAsync") != std::string::npos);
  CHECK(r.find("cuLaunchKernel") == std::string::npos);
  CHECK(r.find("1.95 µs        1     1.95 µs     1.95 µs     1.95 µs  epoch") != std::string::npos);
}

TEST_CASE("idle gaps: what the CPU did while the GPU waited, and the likely cause", "[summary][gaps]") {
  // One process, one stream. Kernels at [0,100], [1000,1100], [3000,3100], [6000,6100], [10000,10100] (µs
  // scale, in ns x 1000), so the gaps are 0.9, 1.9, 2.9 and 3.9 ms long. During them, the thread was:
  //   gap 1 (0.9 ms): in cudaStreamSynchronize for 0.6 ms;
  //   gap 2 (1.9 ms): in cudaMalloc for 1.0 ms;
  //   gap 3 (2.9 ms): inside NVTX "load batch" for all of it, and nothing else;
  //   gap 4 (3.9 ms): nothing recorded.
  using test::FeedStrings;
  ModelBuilder b;
  FeedStrings(b, {"", "train.py", "H200", "gemm", "cudaStreamSynchronize", "cudaMalloc", "load batch",
                  "cudaLaunchKernel"});
  test::FeedProcessAndGpu(b);
  const int64_t us = 1000;
  std::vector<KernelRecord> k(5);
  const int64_t starts[] = {0, 1000, 3000, 6000, 10000};
  for (int i = 0; i < 5; ++i) {
    k[i].start = starts[i] * us, k[i].end = (starts[i] + 100) * us, k[i].name = 3;
    k[i].pid = 1, k[i].device_id = 0, k[i].context_id = 1, k[i].stream_id = 7,
    k[i].correlation_id = uint32_t(i + 1);
  }
  b.OnKernels(k);
  std::vector<ApiCallRecord> api = {
      {200 * us, 800 * us, 1, 1, 100, 131, 4, 0, uint8_t(ApiDomain::kRuntime)},   // sync in gap 1
      {1500 * us, 2500 * us, 1, 1, 101, 20, 5, 0, uint8_t(ApiDomain::kRuntime)},  // malloc in gap 2
      {2990 * us, 2995 * us, 1, 1, 3, 211, 7, 0, uint8_t(ApiDomain::kRuntime)},   // a launch: 0.2% of gap 2
  };
  b.OnApiCalls(api);
  NvtxRecord r;
  r.start = 3100 * us, r.end = 6000 * us, r.message = 6, r.pid = 1, r.tid = 1;
  b.OnNvtx({&r, 1});
  auto m = b.Finish();

  auto gaps = ExplainIdleGaps(*m, 10);
  REQUIRE(gaps.size() == 4);
  CHECK(gaps[0].end_ns - gaps[0].start_ns == 3900 * us);  // longest first
  CHECK(gaps[0].activity.empty());
  CHECK(gaps[0].diagnosis.find("no CUDA call or annotated range") != std::string::npos);

  CHECK(gaps[1].start_ns == 3100 * us);
  REQUIRE(gaps[1].activity.size() == 1);
  CHECK(gaps[1].activity[0].name == "load batch");
  CHECK_FALSE(gaps[1].activity[0].api);
  CHECK(gaps[1].activity[0].overlap_ns == 2900 * us);
  CHECK(gaps[1].diagnosis.find("host work inside 'load batch'") != std::string::npos);

  CHECK(gaps[2].start_ns == 1100 * us);
  REQUIRE(gaps[2].activity.size() == 1);  // the 5 µs launch is under 1% of the gap: left out
  CHECK(gaps[2].activity[0].name == "cudaMalloc");
  CHECK(gaps[2].activity[0].overlap_ns == 1000 * us);
  CHECK(gaps[2].diagnosis.find("memory allocation in the hot path") != std::string::npos);

  CHECK(gaps[3].start_ns == 100 * us);
  CHECK(gaps[3].activity[0].name == "cudaStreamSynchronize");
  CHECK(gaps[3].diagnosis.find("waited in cudaStreamSynchronize") != std::string::npos);

  CHECK(ExplainIdleGaps(*m, 2).size() == 2);
  CHECK(ExplainIdleGaps(*m, 10, 2000 * us).size() == 2);  // gaps of at least 2 ms: 3.9 and 2.9

  const std::string report = StatsReport(*m);
  INFO(report);
  CHECK(report.find("3.9 ms idle on GPU 0") != std::string::npos);
  CHECK(report.find("100.0%  range   load batch") != std::string::npos);
  CHECK(report.find("52.6%  API     cudaMalloc") != std::string::npos);  // 1.0 of 1.9 ms
}

TEST_CASE("idle gaps: partly covered by recorded activity, no single cause", "[summary][gaps]") {
  ModelBuilder b;
  OneGapOfOneMs(b, {"prepare", "cudaMemcpyAsync"});  // ids 4, 5
  NvtxRecord r;                                      // 40% of the 1 ms gap
  r.start = 300'000, r.end = 700'000, r.message = 4, r.pid = 1, r.tid = 1;
  b.OnNvtx({&r, 1});
  ApiCallRecord a{800'000, 900'000, 1, 1, 9, 41, 5, 0, uint8_t(ApiDomain::kRuntime)};  // 10%
  b.OnApiCalls({&a, 1});
  auto m = b.Finish();
  auto gaps = ExplainIdleGaps(*m, 5);
  REQUIRE(gaps.size() == 1);
  REQUIRE(gaps[0].activity.size() == 2);
  CHECK(gaps[0].activity[0].name == "prepare");
  CHECK(gaps[0].diagnosis.find("no single cause: the CPU spent 40% in prepare") == 0);
}

TEST_CASE("idle gaps: of nested ranges covering the same time, the innermost names the cause",
          "[summary][gaps]") {
  ModelBuilder b;
  OneGapOfOneMs(b, {"loop", "load batch"});  // ids 4, 5
  std::vector<NvtxRecord> r(2);
  r[0].start = 0, r[0].end = 1'300'000, r[0].message = 4;        // "loop" around everything
  r[1].start = 100'000, r[1].end = 1'100'000, r[1].message = 5;  // "load batch": exactly the gap
  for (auto& x : r) x.pid = 1, x.tid = 1;
  b.OnNvtx(r);
  auto m = b.Finish();
  auto gaps = ExplainIdleGaps(*m, 5);
  REQUIRE(gaps.size() == 1);
  REQUIRE(gaps[0].activity.size() == 2);
  CHECK(gaps[0].activity[0].name == "load batch");
  CHECK(gaps[0].activity[1].name == "loop");
  CHECK(gaps[0].diagnosis.find("host work inside 'load batch'") == 0);
}

TEST_CASE("idle gaps of a real trace with known causes (kernels/idle.cu on the H200)",
          "[summary][gaps][fixture]") {
  // Per step: a 3 ms sleep inside NVTX "load batch", 8 x cudaMalloc/cudaFree of 256 MiB, a 4 ms sleep outside
  // any range or call; a 50 us kernel between them. Three steps: nine gaps of 1.4-4.2 ms, three of each
  // cause.
  auto m = LoadTraceFile(std::string(GT_TESTS_DATA) + "/h200_idle.gtrace");
  REQUIRE(m.ok());
  auto gaps = ExplainIdleGaps(*m.value(), 9, 1'000'000);
  REQUIRE(gaps.size() == 9);
  int unrecorded = 0, loading = 0, allocation = 0;
  for (const auto& g : gaps) {
    INFO(g.diagnosis);
    const int64_t ms = (g.end_ns - g.start_ns) / 1'000'000;
    if (g.diagnosis.rfind("no CUDA call or annotated range", 0) == 0) {
      ++unrecorded;
      CHECK(ms >= 4);
      CHECK(g.activity.empty());
    } else if (g.diagnosis.rfind("host work inside 'load batch'", 0) == 0) {
      ++loading;
      CHECK(ms == 3);
    } else if (g.diagnosis.rfind("memory allocation in the hot path", 0) == 0) {
      ++allocation;
      CHECK(g.diagnosis.find("cudaMalloc") != std::string::npos);
    }
  }
  CHECK(unrecorded == 3);
  CHECK(loading == 3);
  CHECK(allocation == 3);
}

TEST_CASE("stats report: per-kernel counters of a real counters trace, like ncu --print-summary",
          "[summary][stats][fixture]") {
  auto m = LoadTraceFile(std::string(GT_TESTS_DATA) + "/counters_h200.gtrace");
  REQUIRE(m.ok());
  const std::string r = StatsReport(*m.value());
  const size_t at = r.find("Kernel counters (14 profiled launches, merged per kernel");
  REQUIRE(at != std::string::npos);
  const std::string section = r.substr(at, r.find("\nMemory copies", at) - at);
  INFO(section);
  // Each workload's known bottleneck, next to its kernel.
  auto row_of = [&](const std::string& kernel) {
    const size_t name = section.find("  " + kernel + "(");
    REQUIRE(name != std::string::npos);
    const size_t begin = section.rfind('\n', name) + 1;
    const size_t verdict_end = section.find('\n', section.find('\n', name) + 1);
    return section.substr(begin, verdict_end - begin);
  };
  CHECK(row_of("fma_chains").find("compute-bound") != std::string::npos);
  CHECK(row_of("copy_float4").find("memory-bound") != std::string::npos);
  CHECK(row_of("strided_read").find("uncoalesced loads") != std::string::npos);
  CHECK(row_of("atomic_one_address").find("atomic contention") != std::string::npos);
  CHECK(row_of("smem_conflicted").find("bank conflicts") != std::string::npos);
  CHECK(row_of("tiny_kernel").find("launch-bound") != std::string::npos);
  // A trace without counters has no such section.
  auto plain = LoadTraceFile(std::string(GT_TESTS_DATA) + "/h200_idle.gtrace");
  REQUIRE(plain.ok());
  CHECK(StatsReport(*plain.value()).find("Kernel counters") == std::string::npos);
}

// The index build's one pass (SummarizeAll) must give exactly what the per-table queries give: the server
// answers /kernels and /summary from it, the local viewer from the queries.
TEST_CASE("one pass over the lanes gives every summary table exactly", "[summary][index]") {
  std::vector<std::unique_ptr<TraceModel>> models;
  models.push_back(test::SmallTrace());
  // A kernel longer than 2^32 ns (its duration in the lane's side table) and a copy with bytes.
  models.push_back(Build({{"b", 100, 200}, {"long", 300, 300 + (int64_t{5} << 32)}, {"b", 500, 530}}, 4096,
                         800, 1800, 50));
  for (const char* f : {"h200_nvtx.gtrace", "h200_torch_train.gtrace", "h200_multithread.gtrace",
                        "h200x2_ddp_job.gtrace", "h200_idle.gtrace"}) {
    auto m = LoadTraceFile(std::string(GT_TESTS_DATA) + "/" + f);
    REQUIRE(m.ok());
    models.push_back(std::move(m.value()));
  }
  size_t rows_seen[4] = {};
  for (const auto& m : models) {
    std::vector<KernelSummaryRow> kernels;
    std::vector<NameSummary> by_name[4];
    SummarizeAll(*m, &kernels, by_name);
    const auto want = KernelSummary(*m);
    REQUIRE(kernels.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      CHECK(kernels[i].name == want[i].name);
      CHECK(kernels[i].count == want[i].count);
      CHECK(kernels[i].total_ns == want[i].total_ns);
      CHECK(kernels[i].min_ns == want[i].min_ns);
      CHECK(kernels[i].max_ns == want[i].max_ns);
      CHECK(kernels[i].share == want[i].share);
      CHECK(kernels[i].first_ns == want[i].first_ns);
      CHECK(kernels[i].last_ns == want[i].last_ns);
    }
    for (size_t k = 0; k < 4; ++k) {
      const auto table = SummarizeByName(*m, SummaryOf(k));
      INFO(SummaryOfName(SummaryOf(k)));
      CHECK(Rows(by_name[k]) == Rows(table));
      for (size_t i = 0; i < table.size() && i < by_name[k].size(); ++i) {
        CHECK(by_name[k][i].share == table[i].share);
        CHECK(by_name[k][i].avg_ns == table[i].avg_ns);
      }
      rows_seen[k] += table.size();
    }
  }
  // Every table had rows somewhere, so each branch of the pass was compared.
  for (size_t k = 0; k < 4; ++k) CHECK(rows_seen[k] > 0);
}

// --trace=cublas,cudnn,nccl and --trace=osrt: library calls arrive as their libraries' NVTX domains, OS waits
// as the "OS runtime" domain (collector/config/config.h spells both; these strings must match it).
TEST_CASE("idle gaps: an OS wait on the thread that feeds the GPU names the cause", "[summary][gaps][osrt]") {
  ModelBuilder b;
  // ids 4..: the wait, its domain, a helper thread's poll, the thread's name, a library call and its domain
  OneGapOfOneMs(b, {"pthread_cond_wait", "OS runtime", "poll", "pt_main_thread",
                    "cublasLtMatmulAlgoGetHeuristic", "cuBLAS", "cudaLaunchKernel"});
  ThreadRecord t{1, 1, 7};
  b.OnThreads({&t, 1});
  std::vector<ApiCallRecord> launches = {
      {1'099'000, 1'100'000, 1, 1, 2, 211, 10, 0, uint8_t(ApiDomain::kRuntime)},  // 0.1% of the gap
      // Thread 3 launches 50 ms later only: it did not feed the GPU around the gap, so its wait is not the
      // cause.
      {50'000'000, 50'001'000, 1, 3, 3, 211, 10, 0, uint8_t(ApiDomain::kRuntime)}};
  b.OnApiCalls(launches);
  std::vector<NvtxRecord> r(4);
  r[3].start = 0, r[3].end = 1'100'000, r[3].tid = 3, r[3].message = 4, r[3].domain = 5;
  r[0].start = 120'000, r[0].end = 1'080'000, r[0].tid = 1, r[0].message = 4, r[0].domain = 5;  // 96% wait
  r[1].start = 0, r[1].end = 1'100'000, r[1].tid = 2, r[1].message = 6,
  r[1].domain = 5;  // helper thread's poll
  r[2].start = 100'000, r[2].end = 150'000, r[2].tid = 1, r[2].message = 8, r[2].domain = 9;  // 5% cuBLAS
  for (auto& x : r) x.pid = 1;
  b.OnNvtx(r);
  auto m = b.Finish();
  auto gaps = ExplainIdleGaps(*m, 5);
  REQUIRE(gaps.size() == 1);
  const IdleGap& g = gaps[0];
  INFO(g.diagnosis);
  // The poll of a thread that made no CUDA call (CUDA's or NCCL's helpers poll all the time) is left out, and
  // so is the wait of thread 3 (its only call is 50 ms away).
  for (const auto& a : g.activity) CHECK(a.name != "poll");
  for (const auto& a : g.activity) CHECK(a.thread != "thread 3");
  REQUIRE(g.activity.size() == 2);
  CHECK(g.activity[0].name == "pthread_cond_wait");
  CHECK(g.activity[0].os_wait());
  CHECK(std::string(g.activity[0].kind()) == "os_wait");
  CHECK(g.activity[0].thread == "pt_main_thread");
  CHECK(g.activity[0].overlap_ns == 960'000);
  CHECK(g.activity[1].library());
  CHECK(g.activity[1].source == "cuBLAS");
  CHECK(std::string(g.activity[1].kind()) == "library");
  CHECK(g.diagnosis.find("96% of the gap in OS wait pthread_cond_wait on thread pt_main_thread") == 0);
  CHECK(g.diagnosis.find("waiting on another thread") != std::string::npos);
  const std::string report = StatsReport(*m);
  INFO(report);
  CHECK(report.find("96.0%  OS wait pthread_cond_wait (pt_main_thread)") != std::string::npos);
  CHECK(report.find("5.0%  cuBLAS  cublasLtMatmulAlgoGetHeuristic") != std::string::npos);
  const auto calls = SummarizeLibraryCalls(*m);
  REQUIRE(calls.size() == 3);  // the helpers' waits are OS waits too, only not the gap's cause
  CHECK(calls[0].name == "OS wait: pthread_cond_wait");
  CHECK(calls[0].total_ns == 960'000 + 1'100'000);
  CHECK(calls[1].name == "OS wait: poll");
  CHECK(calls[2].name == "cuBLAS: cublasLtMatmulAlgoGetHeuristic");
  CHECK(calls[2].total_ns == 50'000);
  CHECK(report.find("Library calls and OS runtime waits") != std::string::npos);
  const json j = json::parse(IdleGapsJson(gaps));
  CHECK(j[0]["cpu_activity"][0]["kind"] == "os_wait");
  CHECK(j[0]["cpu_activity"][0]["thread"] == "pt_main_thread");
  CHECK(j[0]["cpu_activity"][1]["source"] == "cuBLAS");
}

TEST_CASE("idle gaps: a library call covering the gap, the innermost one named", "[summary][gaps][osrt]") {
  ModelBuilder b;
  OneGapOfOneMs(b, {"cublasSgemm_v2", "cuBLAS", "cublasLtSSSMatmulAlgoGetHeuristic", "step"});
  std::vector<NvtxRecord> r(3);
  r[0].start = 0, r[0].end = 1'100'000, r[0].message = 7;  // the app's own range around it all
  r[1].start = 105'000, r[1].end = 1'090'000, r[1].message = 4, r[1].domain = 5;
  r[2].start = 110'000, r[2].end = 1'080'000, r[2].message = 6, r[2].domain = 5;  // nested, 97% of the gap
  for (auto& x : r) x.pid = 1, x.tid = 1;
  b.OnNvtx(r);
  auto m = b.Finish();
  auto gaps = ExplainIdleGaps(*m, 5);
  REQUIRE(gaps.size() == 1);
  INFO(gaps[0].diagnosis);
  CHECK(gaps[0].diagnosis.find("97% of the gap inside cuBLAS call cublasLtSSSMatmulAlgoGetHeuristic") == 0);
  // The app's range still shows, as a range; library calls never count as the app's ranges.
  bool step = false;
  for (const auto& a : gaps[0].activity) {
    if (a.name == "step") step = !a.library() && !a.os_wait() && std::string(a.kind()) == "range";
    if (a.name.rfind("cublas", 0) == 0) CHECK(a.library());
  }
  CHECK(step);
}

TEST_CASE("library calls and OS waits: the real H200 fixture", "[summary][gaps][osrt][fixture]") {
  // tests/data/README.md: gcollect --trace=default,cublas,cudnn,osrt on a PyTorch matmul + conv script.
  auto m = LoadTraceFile(std::string(GT_TESTS_DATA) + "/libcalls_osrt_h200.gtrace");
  REQUIRE(m.ok());
  std::map<std::string, int> domains;
  for (const auto& n : m.value()->nvtx) domains[std::string(m.value()->Str(n.domain))]++;
  CHECK(domains["cuBLAS"] > 0);
  CHECK(domains["cuDNN"] > 0);
  CHECK(domains["OS runtime"] > 0);
  const auto gaps = ExplainIdleGaps(*m.value(), 5);
  bool heuristic = false;
  for (const auto& g : gaps)
    heuristic |=
        g.diagnosis.find("inside cuBLAS call cublasLtSSSMatmulAlgoGetHeuristic") != std::string::npos;
  CHECK(heuristic);
}
