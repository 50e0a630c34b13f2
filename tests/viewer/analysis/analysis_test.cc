// Golden tests of the counter analysis: synthetic counter values shaped like the H200 ground truth of
// shared/notes/gpu.md (copy, FMA, strided, atomics, barrier + divergence, bank conflicts, tiny kernels) must
// give the known bottleneck, the right roofline side and flags for impossible values.
#include <catch2/catch.hpp>

#include "gt/counter_vocab.h"
#include "gt/viewer/analysis.h"
#include "gt/viewer/load.h"
#include "gt/viewer/profiled.h"
#include "gt/writer.h"

using namespace gt;

namespace {

DeviceRecord H200() {
  DeviceRecord d;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.sm_clock_khz = 1980000;
  d.max_warps_per_sm = 64;
  d.max_blocks_per_sm = 32;
  d.regs_per_sm = 65536;
  d.shared_mem_per_sm = 233472;
  d.warp_size = 32;
  d.dram_bandwidth = 4.8e12;
  d.l2_bandwidth = 12e12;
  return d;  // FLOP and L1 peaks come from WithDefaultPeaks (cc 9.0 table)
}

KernelCounters Make(const char* name, double time_us,
                    std::initializer_list<std::pair<const char*, double>> kv) {
  KernelCounters c;
  c.pid = 7;
  c.kernel_name = name;
  c.launch_ordinal = 0;
  c.Set(gt::metric::kTime, time_us * 1e3);
  c.Set(gt::metric::kSmClock, 1.98e9);
  c.Set(gt::metric::kSmCycles, time_us * 1e-6 * 1.98e9);
  for (const auto& [k, v] : kv) c.Set(k, v);
  return c;
}

void Stalls(KernelCounters& c, double issued,
            std::initializer_list<std::pair<const char*, double>> per_issued) {
  c.Set(gt::metric::kIssued, issued);
  for (const char* r :
       {"long_scoreboard", "barrier", "short_scoreboard", "lg_throttle", "mio_throttle", "wait",
        "math_pipe_throttle", "not_selected", "selected", "branch_resolving", "no_instruction", "drain",
        "membar", "imc_miss", "gmma", "dispatch_stall", "tex_throttle", "sleeping", "misc"})
    c.Set(std::string("smsp__warps_issue_stalled_") + r + ".sum", 0);
  c.Set("smsp__warps_issue_stalled_selected.sum", issued);
  for (const auto& [r, v] : per_issued)
    c.Set(std::string("smsp__warps_issue_stalled_") + r + ".sum", v * issued);
}

KernelCounters CopyKernel() {
  // 1 GiB float4 copy: 532 µs, 2 GiB of DRAM traffic.
  auto c = Make("copy_float4", 532,
                {{gt::metric::kDramBytesRead, 1073741824.0},
                 {gt::metric::kDramBytesWrite, 1073741824.0},
                 {gt::metric::kDramBytes, 2147483648.0},
                 {gt::metric::kL2Bytes, 2147483648.0},
                 {gt::metric::kL1Bytes, 1073741824.0},
                 {gt::metric::kFfma, 0},
                 {gt::metric::kFadd, 268435456.0},
                 {gt::metric::kFmul, 0},
                 {gt::metric::kL2Sectors, 67108864.0},
                 {gt::metric::kL2SectorHits, 33554432.0},
                 {gt::metric::kGlobalLoadSectors, 33554432.0},
                 {gt::metric::kGlobalLoadRequests, 2097152.0},
                 {gt::metric::kWarpsActivePct, 88.0},
                 {gt::metric::kGridSize, 65536},
                 {gt::metric::kBlockSize, 256},
                 {gt::metric::kRegisters, 16}});
  Stalls(c, 1.0e7, {{"long_scoreboard", 289}, {"not_selected", 0.5}, {"wait", 2}, {"drain", 5}});
  return c;
}

KernelCounters FmaKernel() {
  // 65 TFLOP/s of FP32 FMA for 1091 µs.
  auto c = Make("fma_loop", 1091,
                {{gt::metric::kFfma, 65e12 * 1091e-6 / 2},
                 {gt::metric::kFadd, 0},
                 {gt::metric::kFmul, 0},
                 {gt::metric::kDramBytes, 4.0e6},
                 {gt::metric::kL2Bytes, 8.0e6},
                 {gt::metric::kL1Bytes, 8.0e6},
                 {gt::metric::kGridSize, 1056},
                 {gt::metric::kBlockSize, 256},
                 {gt::metric::kRegisters, 32}});
  Stalls(c, 1.1e9, {{"not_selected", 9.3}, {"wait", 2.0}, {"math_pipe_throttle", 1.5}});
  return c;
}

}  // namespace

TEST_CASE("copy kernel is memory-bound on DRAM with long-scoreboard stalls", "[analysis][verdict]") {
  KernelAnalysis a = AnalyzeKernel(CopyKernel(), H200());
  CHECK(a.bottleneck == Bottleneck::kMemory);
  CHECK(a.memory_level == MemoryLevel::kDram);
  REQUIRE(a.bandwidth_pct[0]);
  CHECK(a.bandwidth_pct[0].value == Approx(100.0 * 2147483648.0 / 532e-6 / 4.8e12).epsilon(1e-9));
  CHECK(a.verdict ==
        "memory-bound: 84% of DRAM peak (4.04 TB/s); 98% of stalls are long-scoreboard: improve locality / "
        "coalescing");
  CHECK(a.flags.empty());
  REQUIRE(a.l2_hit_pct);
  CHECK(a.l2_hit_pct.value == Approx(50));
  CHECK(a.sectors_per_request_ld.value == Approx(16));
  CHECK(a.occupancy.valid);
  CHECK(a.occupancy.theoretical_pct == Approx(100));
  CHECK(a.stalls.front().reason == "long_scoreboard");
  CHECK(a.stalls.front().per_issued == Approx(289));
}

TEST_CASE("FMA loop is compute-bound on FP32 with ready warps", "[analysis][verdict]") {
  KernelAnalysis a = AnalyzeKernel(FmaKernel(), H200());
  CHECK(a.bottleneck == Bottleneck::kCompute);
  CHECK(a.main_precision == Precision::kFp32);
  // Peak FP32 = 256 FLOP/clk/SM x 132 SMs x 1.98 GHz = 66.9 TFLOP/s.
  CHECK(a.flops_pct[1].value == Approx(100.0 * 65e12 / (256.0 * 132 * 1.98e9)).epsilon(1e-9));
  CHECK(a.verdict.rfind("compute-bound: 97% of FP32 peak (65.0 TFLOP/s); warps are ready", 0) == 0);
  CHECK(a.verdict.find("the math pipes are the limit") != std::string::npos);
}

TEST_CASE("strided read is memory-bound and uncoalesced", "[analysis][verdict]") {
  auto c = Make("strided_read", 304,
                {{gt::metric::kDramBytes, 0.774 * 4.8e12 * 304e-6},
                 {gt::metric::kL2Bytes, 0.774 * 4.8e12 * 304e-6},
                 {gt::metric::kGlobalLoadSectors, 32.0 * 1e6},
                 {gt::metric::kGlobalLoadRequests, 1e6}});
  Stalls(c, 2e7, {{"long_scoreboard", 269}});
  KernelAnalysis a = AnalyzeKernel(c, H200());
  CHECK(a.bottleneck == Bottleneck::kMemory);
  CHECK(a.verdict.rfind("memory-bound: 77% of DRAM peak", 0) == 0);
  CHECK(a.verdict.find("uncoalesced loads: 32.0 sectors per request") != std::string::npos);
}

TEST_CASE("atomics on one address are latency-bound by atomic contention", "[analysis][verdict]") {
  auto c = Make("atomic_one_address", 7361,
                {{gt::metric::kDramBytes, 1e5},
                 {gt::metric::kL2Bytes, 1.3e9},
                 {gt::metric::kGlobalAtomics, 0},
                 {gt::metric::kGlobalReductions, 4.2e6},
                 {gt::metric::kInstExecuted, 5.0e7},
                 {gt::metric::kThreadInstExecuted, 32 * 5.0e7}});
  Stalls(c, 5.0e7, {{"lg_throttle", 400}, {"drain", 40}, {"long_scoreboard", 10}});
  KernelAnalysis a = AnalyzeKernel(c, H200());
  CHECK(a.bottleneck == Bottleneck::kLatency);
  CHECK(a.verdict.find("of stalls are lg-throttle: fewer, wider memory ops; aggregate atomics") !=
        std::string::npos);
  CHECK(a.verdict.find("atomic contention: 4.20 M global atomics") != std::string::npos);
}

TEST_CASE("barrier + divergence kernel names both", "[analysis][verdict]") {
  auto c = Make("sync_divergence", 1496,
                {{gt::metric::kDramBytes, 1e6},
                 {gt::metric::kInstExecuted, 1e9},
                 {gt::metric::kThreadInstExecuted, 12.5 * 1e9}});
  Stalls(c, 1e9, {{"barrier", 5.05}, {"wait", 1.2}, {"branch_resolving", 0.6}});
  KernelAnalysis a = AnalyzeKernel(c, H200());
  CHECK(a.verdict.find("of stalls are barrier: balance work before __syncthreads") != std::string::npos);
  CHECK(a.verdict.find("branch divergence: 12.5 of 32 threads active") != std::string::npos);
}

TEST_CASE("bank conflicts are named", "[analysis][verdict]") {
  auto c = Make("smem_bank_conflicts", 400,
                {{gt::metric::kDramBytes, 1e6},
                 {gt::metric::kSharedBankConflicts, 31e6},
                 {gt::metric::kSharedWavefronts, 32e6}});
  Stalls(c, 1e8, {{"mio_throttle", 20}, {"short_scoreboard", 12}});
  KernelAnalysis a = AnalyzeKernel(c, H200());
  CHECK(a.verdict.find("of stalls are mio-throttle") != std::string::npos);
  CHECK(a.verdict.find("shared-memory bank conflicts: 97% of shared wavefronts are conflicts") !=
        std::string::npos);
}

TEST_CASE("tiny kernels are launch-bound", "[analysis][verdict]") {
  auto c = Make("tiny", 2.1,
                {{gt::metric::kDramBytes, 4096}, {gt::metric::kGridSize, 1}, {gt::metric::kBlockSize, 32}});
  Stalls(c, 100, {{"no_instruction", 3}});
  KernelAnalysis a = AnalyzeKernel(c, H200());
  CHECK(a.bottleneck == Bottleneck::kLaunch);
  CHECK(a.verdict ==
        "launch-bound: 2.1 \xC2\xB5s per launch at 0.04% of peak, 1 block for 132 SMs: too little work per "
        "launch, "
        "fuse kernels or use CUDA Graphs");
}

TEST_CASE("impossible ratios are clamped and flagged, not shown as truth", "[analysis][flags]") {
  auto c = CopyKernel();
  c.Set(gt::metric::kL2Sectors, 100);
  c.Set(gt::metric::kL2SectorHits, 108);  // 108%: hits and lookups from different passes
  KernelAnalysis a = AnalyzeKernel(c, H200());
  REQUIRE(a.l2_hit_pct);
  CHECK(a.l2_hit_pct.suspect);
  CHECK(a.l2_hit_pct.raw == Approx(108));
  CHECK(a.l2_hit_pct.value == Approx(100));
  REQUIRE(a.flags.size() == 1);
  CHECK(a.flags[0].metric == "L2 hit rate");
  CHECK(a.verdict.find("1 value flagged as impossible") != std::string::npos);

  // The collector's own flag travels through as well.
  auto d = CopyKernel();
  d.Set(gt::metric::kWarpsActivePct, 88.0, kMetricSuspect);
  CHECK(AnalyzeKernel(d, H200()).flags.size() == 1);

  // More DRAM bytes than the peak allows.
  auto e = CopyKernel();
  e.Set(gt::metric::kDramBytes, 5e12 * 532e-6 * 1.2);
  KernelAnalysis ea = AnalyzeKernel(e, H200());
  CHECK(ea.bandwidth_pct[0].suspect);
  CHECK(ea.bandwidth_pct[0].value == Approx(100));
}

TEST_CASE("hardware peak_sustained values set the denominators like ncu", "[analysis][peaks]") {
  auto c = CopyKernel();
  // 2 DRAM partitions... whatever the chip says: 1536 B/cycle at 3.2 GHz = 4.9152 TB/s.
  c.Set(gt::metric::kDramBytesPeak, 1536);
  c.Set(gt::metric::kDramClock, 3.2e9);
  KernelAnalysis a = AnalyzeKernel(c, H200());
  CHECK(a.bandwidth_pct[0].value == Approx(100.0 * 2147483648.0 / 532e-6 / (1536 * 3.2e9)).epsilon(1e-9));
}

TEST_CASE("missing counters leave quantities absent, not zero", "[analysis]") {
  KernelCounters c;
  c.kernel_name = "k";
  c.Set(gt::metric::kTime, 1000);
  KernelAnalysis a = AnalyzeKernel(c, H200());
  CHECK_FALSE(a.l1_hit_pct);
  CHECK_FALSE(a.flops_per_s);
  CHECK_FALSE(a.achieved_occupancy_pct);
  CHECK(a.bottleneck == Bottleneck::kUnknown);
  CHECK(a.verdict == "no throughput counters: collect --counters=roofline");
}

TEST_CASE("grouping records per launch and merging launches", "[analysis][inputs]") {
  std::vector<std::string> strings = {
      "", "kern", gt::metric::kTime, gt::metric::kDramBytes, "long_scoreboard", gt::metric::kWarpsActivePct};
  auto str = [&](StringId id) -> std::string_view {
    return id < strings.size() ? std::string_view(strings[id]) : std::string_view();
  };
  std::vector<KernelMetricRecord> m;
  for (uint32_t ord = 0; ord < 2; ++ord) {
    m.push_back({1, 0, 1, ord, 2, 1000.0 * (ord + 1), 0});
    m.push_back({1, 0, 1, ord, 3, 5000.0, 0});
    m.push_back({1, 0, 1, ord, 5, 40.0 + 20 * ord, 0});
  }
  std::vector<StallSample> s = {{1, 0, 1, 1, 4, UINT64_MAX, 0, 0, 77}};
  auto groups = GroupKernelCounters(m, s, str);
  REQUIRE(groups.size() == 2);
  CHECK(groups[1].launch_ordinal == 1);
  CHECK(groups[1].Get("smsp__warps_issue_stalled_long_scoreboard.sum") == 77);
  KernelCounters merged = MergeLaunches(groups);
  CHECK(merged.launches == 2);
  CHECK(merged.launch_ordinal == kNone);
  CHECK(merged.Get(gt::metric::kTime) == 3000);
  CHECK(merged.Get(gt::metric::kDramBytes) == 10000);
  CHECK(merged.Get(gt::metric::kWarpsActivePct) == 50);
  KernelAnalysis a = AnalyzeKernel(merged, H200());
  CHECK(a.time_s.value == Approx(1.5e-6));  // per launch
}

TEST_CASE("each profiled kernel is judged against the peaks of the GPU that ran it", "[analysis][peaks]") {
  // Two GPUs in one trace (two ranks, or a merge of two hosts); the copy ran on the second, which has twice
  // the DRAM bandwidth, so it uses half as much of it.
  DeviceRecord first = H200(), second = H200();
  second.device_id = 1;
  second.dram_bandwidth = 9.6e12;
  first.pid = second.pid = 7;
  const KernelCounters copy = CopyKernel();
  std::string bytes;
  {
    auto w = TraceWriter::Create(MakeStringSink(&bytes));
    REQUIRE(w.ok());
    TraceWriter& tw = **w;
    first.name = second.name = tw.Intern("NVIDIA H200");
    tw.Add(first);
    tw.Add(second);
    KernelRecord k;
    k.pid = 7, k.device_id = 1, k.stream_id = 3, k.correlation_id = 5;
    k.name = tw.Intern(copy.kernel_name);
    k.start = 1'000'000, k.end = 1'532'000;
    k.grid = {65536, 1, 1}, k.block = {256, 1, 1}, k.registers_per_thread = 16;
    tw.Add(k);
    for (const auto& v : copy.values) {
      KernelMetricRecord r;
      r.pid = 7, r.correlation_id = 5, r.kernel_name = k.name, r.metric = tw.Intern(v.name),
      r.value = v.value;
      tw.Add(r);
    }
    REQUIRE(tw.Finish().ok());
  }
  auto m = viewer::LoadTrace(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  REQUIRE(m.ok());
  const viewer::ProfiledKernels p = viewer::AnalyzeProfiledKernels(**m);
  REQUIRE(p.kernels.size() == 1);
  REQUIRE(p.kernels[0].memory_pct);
  const KernelAnalysis on_first = AnalyzeKernel(copy, first, {});
  REQUIRE(on_first.memory_pct);
  CHECK(p.kernels[0].memory_pct.value == Approx(on_first.memory_pct.value / 2).epsilon(0.02));
  CHECK(p.launch_analyses[0].memory_pct.value == Approx(p.kernels[0].memory_pct.value));
}
