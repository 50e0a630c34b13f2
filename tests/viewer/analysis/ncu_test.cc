// Nsight Compute CSV import (viewer/core/src/import_ncu.cc): parsing, units, bad input, the standalone model,
// the join with a timeline. Every CSV here is HAND-WRITTEN in ncu's documented raw-page shape (header row,
// units row, one row per launch); the real ncu CSVs from the H200 are tested in ncu_fixture_test.cc.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "../test_util.h"
#include "gt/viewer/analysis.h"
#include "gt/viewer/builder.h"
#include "gt/viewer/load.h"
#include "gt/viewer/ncu.h"
#include "gt/viewer/profiled.h"
#include "gt/viewer/summary.h"

using namespace gt;
using namespace gt::viewer;

namespace {

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// Hand-written: two launches of a copy kernel and one FMA kernel, ncu's default (scaled) units, with the
// "==PROF==" lines ncu prints to the same stdout, thousands separators and quoted commas in kernel names.
const std::string kDefaultUnits =
    "==PROF== Connected to process 4242 (/work/kernels/probe)\n"
    "==PROF== Profiling \"copy_kernel\": 0%....50%....100% - 38 passes\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block "
    "Size\","
    "\"Grid "
    "Size\",\"Device\",\"CC\",\"device__attribute_display_name\",\"device__attribute_multiprocessor_count\","
    "\"dram__bytes_read.sum\",\"dram__bytes_write.sum\",\"dram__bytes.sum.peak_sustained\","
    "\"dram__cycles_elapsed.avg.per_second\",\"gpu__time_duration.sum\",\"launch__registers_per_thread\","
    "\"sm__cycles_elapsed.avg.per_second\",\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\","
    "\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"smsp__not_in_gtrace.sum\"\n"
    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"SM\",\"Mbyte\",\"Mbyte\",\"byte/cycle\","
    "\"cycle/nsecond\",\"usecond\",\"register/thread\",\"cycle/nsecond\",\"inst\",\"%\",\"Kinst\"\n"
    "\"0\",\"4242\",\"probe\",\"gpu1\",\"copy_kernel(const float *, float *, unsigned long)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\",\"NVIDIA H200\",\"132\",\"4.19\",\"4.20\",\"1,536\","
    "\"3.20\",\"10.00\",\"16\",\"1.98\",\"0\",\"55.5\",\"1.5\"\n"
    "\"1\",\"4242\",\"probe\",\"gpu1\",\"fma_kernel(float *, int)\",\"1\",\"7\",\"(128, 1, 1)\",\"(264, 1, "
    "1)\","
    "\"0\",\"9.0\",\"NVIDIA "
    "H200\",\"132\",\"0.004096\",\"0.004096\",\"1,536\",\"3.20\",\"2.00\",\"32\",\"1.98\","
    "\"1,048,576\",\"90.25\",\"n/a\"\n"
    "\"2\",\"4242\",\"probe\",\"gpu1\",\"copy_kernel(const float *, float *, unsigned long)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\",\"NVIDIA H200\",\"132\",\"4.19\",\"4.20\",\"1,536\","
    "\"3.20\",\"12.00\",\"16\",\"1.98\",\"0\",\"50.5\",\"2\"\n"
    "==PROF== Disconnected from process 4242\n";

// The same launches with --print-units base (hand-written: the values above in bytes, ns, cycle/second).
const std::string kBaseUnits =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block "
    "Size\","
    "\"Grid Size\",\"Device\",\"CC\",\"dram__bytes_read.sum\",\"dram__bytes_write.sum\","
    "\"gpu__time_duration.sum\",\"sm__cycles_elapsed.avg.per_second\","
    "\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\"\n"
    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"byte\",\"byte\",\"nsecond\",\"cycle/"
    "second\",\"inst\"\n"
    "\"0\",\"4242\",\"probe\",\"gpu1\",\"copy_kernel\",\"1\",\"7\",\"(256, 1, 1)\",\"(4096, 1, "
    "1)\",\"0\",\"9.0\","
    "\"4,190,000\",\"4,200,000\",\"10,000\",\"1,980,000,000\",\"0\"\n"
    "\"1\",\"4242\",\"probe\",\"gpu1\",\"fma_kernel\",\"1\",\"7\",\"(128, 1, 1)\",\"(264, 1, "
    "1)\",\"0\",\"9.0\","
    "\"4,096\",\"4,096\",\"2,000\",\"1,980,000,000\",\"1,048,576\"\n"
    "\"2\",\"4242\",\"probe\",\"gpu1\",\"copy_kernel\",\"1\",\"7\",\"(256, 1, 1)\",\"(4096, 1, "
    "1)\",\"0\",\"9.0\","
    "\"4,190,000\",\"4,200,000\",\"12,000\",\"1,980,000,000\",\"0\"\n";

std::string ReadFileForTest(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  std::ostringstream o;
  o << f.rdbuf();
  return o.str();
}

double Value(const NcuReport& r, size_t launch, std::string_view metric) {
  for (const auto& [m, v] : r.launches[launch].values)
    if (r.metrics[m].name == metric) return v;
  return NAN;
}

const KernelAnalysis* FindKernel(const ProfiledKernels& p, std::string_view base) {
  for (const auto& k : p.kernels)
    if (KernelBaseName(k.kernel_name) == base) return &k;
  return nullptr;
}

}  // namespace

TEST_CASE("ncu units: SI prefixes to bytes, durations to ns, rates to per second", "[ncu]") {
  double s = 0;
  CHECK((NcuUnitScale("byte", &s) && s == 1));
  CHECK((NcuUnitScale("Kbyte", &s) && s == 1e3));
  CHECK((NcuUnitScale("Mbyte", &s) && s == 1e6));
  CHECK((NcuUnitScale("Gbyte", &s) && s == 1e9));
  CHECK((NcuUnitScale("nsecond", &s) && s == Approx(1)));
  CHECK((NcuUnitScale("usecond", &s) && s == Approx(1e3)));
  CHECK((NcuUnitScale("msecond", &s) && s == Approx(1e6)));
  CHECK((NcuUnitScale("second", &s) && s == Approx(1e9)));
  CHECK((NcuUnitScale("cycle/nsecond", &s) && s == Approx(1e9)));
  CHECK((NcuUnitScale("cycle/usecond", &s) && s == Approx(1e6)));
  CHECK((NcuUnitScale("Gbyte/second", &s) && s == Approx(1e9)));
  CHECK((NcuUnitScale("Tbyte/second", &s) && s == Approx(1e12)));
  CHECK((NcuUnitScale("Ghz", &s) && s == Approx(1e9)));
  CHECK((NcuUnitScale("%", &s) && s == 1));
  CHECK((NcuUnitScale("inst", &s) && s == 1));
  CHECK((NcuUnitScale("Kbyte/block", &s) && s == 1e3));
  CHECK((NcuUnitScale("register/thread", &s) && s == 1));
  CHECK((NcuUnitScale("SM", &s) && s == 1));  // a word, not a prefix
  CHECK_FALSE(NcuUnitScale("µs", &s));
  CHECK_FALSE(NcuUnitScale("xsecond", &s));
}

TEST_CASE("ncu kernel base names: whatever --print-kernel-base printed", "[ncu]") {
  CHECK(KernelBaseName("copy_kernel") == "copy_kernel");
  CHECK(KernelBaseName("copy_kernel(const float *, float *, unsigned long)") == "copy_kernel");
  CHECK(KernelBaseName("void ns::gemm<float, 128>(float const*, int)") == "gemm");
  CHECK(
      KernelBaseName("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                     "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
                     "at::detail::Array<char*, 3>)") == "vectorized_elementwise_kernel");
#ifdef __GLIBCXX__
  CHECK(KernelBaseName("_Z11copy_kernelPKfPfm") == "copy_kernel");  // mangled, demangled first
#endif
}

TEST_CASE("ncu CSV sniffing: after ==PROF== lines, never other CSV", "[ncu]") {
  CHECK(LooksLikeNcuCsv(Bytes(kDefaultUnits)));
  CHECK(LooksLikeNcuCsv(Bytes(kBaseUnits)));
  CHECK(DetectFormat(Bytes(kDefaultUnits)) == DetectedFormat::kNcuCsv);
  CHECK_FALSE(LooksLikeNcuCsv(Bytes(std::string("name,value\nfoo,1\n"))));
  CHECK_FALSE(LooksLikeNcuCsv(Bytes(std::string("\"Kernel Name\",\"ID\"\n"))));
  CHECK_FALSE(LooksLikeNcuCsv(Bytes(std::string(""))));
  auto other = LoadTrace(Bytes(std::string("time,value\n1,2\n")));
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().message().find("Nsight Compute CSV") != std::string::npos);  // what it accepts
}

TEST_CASE("ncu CSV parse: default units converted to bytes, ns and Hz", "[ncu]") {
  auto r = ParseNcuCsv(kDefaultUnits);
  REQUIRE(r.ok());
  REQUIRE(r->launches.size() == 3);
  CHECK(r->prof_lines == 3);
  CHECK(r->launches[0].kernel == "copy_kernel(const float *, float *, unsigned long)");  // quoted commas
  CHECK(r->launches[0].pid == 4242);
  CHECK(r->launches[0].stream == 7);
  CHECK(r->launches[0].block == std::array<uint32_t, 3>{256, 1, 1});
  CHECK(r->launches[0].grid == std::array<uint32_t, 3>{4096, 1, 1});
  CHECK((r->launches[0].cc_major == 9 && r->launches[0].cc_minor == 0));
  CHECK(Value(*r, 0, "dram__bytes_read.sum") == Approx(4.19e6));
  CHECK(Value(*r, 0, "gpu__time_duration.sum") == Approx(10'000));  // 10 usecond in ns
  CHECK(Value(*r, 0, "sm__cycles_elapsed.avg.per_second") == Approx(1.98e9));
  CHECK(Value(*r, 1, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum") == 1'048'576);  // "1,048,576"
  CHECK(Value(*r, 0, "smsp__not_in_gtrace.sum") == 1500);                                 // kept, 1.5 Kinst
  CHECK(std::isnan(Value(*r, 1, "smsp__not_in_gtrace.sum")));  // n/a: absent, not 0
  CHECK(r->na_cells == 1);
  CHECK_FALSE(r->base_units);
  size_t vocab = 0;
  for (const auto& m : r->metrics) vocab += m.in_vocabulary;
  CHECK(r->metrics.size() == 12);
  CHECK(vocab == 9);  // all but the two device attributes and smsp__not_in_gtrace.sum
}

TEST_CASE("ncu CSV: default and base units give the same values", "[ncu]") {
  auto a = ParseNcuCsv(kDefaultUnits);
  auto b = ParseNcuCsv(kBaseUnits);
  REQUIRE((a.ok() && b.ok()));
  CHECK(b->base_units);
  for (const char* m :
       {"dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum",
        "sm__cycles_elapsed.avg.per_second", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"})
    for (size_t i = 0; i < 3; ++i) {
      INFO(m << " launch " << i);
      CHECK(Value(*a, i, m) == Approx(Value(*b, i, m)));
    }
}

TEST_CASE("ncu CSV standalone: launches, counters panel values, roofline point, stats", "[ncu]") {
  auto model = LoadTrace(Bytes(kDefaultUnits));
  REQUIRE(model.ok());
  const TraceModel& m = **model;
  CHECK(m.format == SourceFormat::kNcuCsv);
  CHECK(m.event_count == 3);  // one kernel event per profiled launch
  ProfiledKernels p = AnalyzeProfiledKernels(m);
  REQUIRE(p.launches.size() == 3);
  REQUIRE(p.kernels.size() == 2);
  // Device from ncu's attributes, ceilings from its per-cycle peaks: 1536 B/cycle x 3.2 GHz.
  CHECK(m.Str(p.device.name) == "NVIDIA H200");
  CHECK(p.device.sm_count == 132);
  CHECK(p.device.dram_bandwidth == Approx(1536 * 3.2e9));
  const KernelAnalysis* copy = FindKernel(p, "copy_kernel");
  const KernelAnalysis* fma = FindKernel(p, "fma_kernel");
  REQUIRE((copy && fma));
  CHECK(copy->launches == 2);
  CHECK(copy->time_s.value == Approx(11e-6));        // (10 + 12) us / 2
  CHECK(copy->bytes[0] == Approx(4.19e6 + 4.20e6));  // DRAM bytes per launch
  CHECK(fma->flops[static_cast<size_t>(Precision::kFp32)] == Approx(2.0 * 1'048'576));
  CHECK(fma->bytes[0] == Approx(8192));
  CHECK(fma->intensity[0].value == Approx(2.0 * 1'048'576 / 8192));  // 256 FLOP/byte
  CHECK(fma->sol_from_hardware);
  CHECK(fma->compute_pct.value == Approx(90.25));
  // Each launch selectable on the timeline with its counters (the counters panel's lookup).
  size_t found = 0;
  for (uint32_t l = 0; l < m.lanes.size(); ++l)
    for (uint32_t i = 0; i < m.lanes[l].size(); ++i)
      if (m.Kind({l, i}) == EventKind::kKernel && p.LaunchOf({l, i}) != SIZE_MAX) ++found;
  CHECK(found == 3);
  // The roofline places the FMA kernel at 256 FLOP/byte, 2 MFLOP in 2 us.
  RooflineModel roof = BuildRoofline(p.device);
  auto points = PlaceOnRoofline(roof, p.kernels, MemoryLevel::kDram, p.kernel_total_time_s);
  const RooflinePoint* fp = nullptr;
  for (const auto& pt : points)
    if (KernelBaseName(pt.kernel_name) == "fma_kernel") fp = &pt;
  REQUIRE(fp);
  CHECK(fp->intensity == Approx(256));
  CHECK(fp->flops_per_s == Approx(2.0 * 1'048'576 / 2e-6));
  // `gtrace stats` on the CSV: the counters table, and the honest word about the placement.
  const std::string stats = StatsReport(m, 30);
  CHECK(stats.find("Kernel counters (3 profiled launches") != std::string::npos);
  CHECK(stats.find("ncu_standalone") != std::string::npos);
  CHECK(stats.find("Nsight Compute CSV") != std::string::npos);
}

TEST_CASE("ncu CSV bad input: counted and reported, never a crash or a wrong number", "[ncu]") {
  const std::string head =
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block "
      "Size\","
      "\"Grid Size\",\"Device\",\"CC\",\"dram__bytes_read.sum\",\"gpu__time_duration.sum\","
      "\"dram__bytes_read.sum\",\"lts__t_bytes.sum\"\n";
  const std::string units =
      "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"Kbyte\",\"nsecond\",\"byte\",\"µbyte\"\n";
  auto row = [](int id, const std::string& bytes, const std::string& time) {
    return "\"" + std::to_string(id) +
           "\",\"1\",\"a\",\"h\",\"k\",\"1\",\"7\",\"(32, 1, 1)\",\"(1, 1, 1)\",\"0\","
           "\"9.0\",\"" +
           bytes + "\",\"" + time + "\",\"5\",\"6\"\n";
  };
  SECTION("missing units row: a clear error, no unconverted numbers") {
    auto r = ParseNcuCsv(head + row(0, "1", "2"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("units row") != std::string::npos);
  }
  SECTION("header only") {
    auto r = ParseNcuCsv(head);
    REQUIRE_FALSE(r.ok());
  }
  SECTION("ragged rows, duplicate columns, unknown units, nan, inf, huge numbers") {
    const std::string csv =
        head + units + row(0, "1.5", "100") + "\"1\",\"1\",\"a\"\n" + row(2, "nan", "inf") +
        row(3, "1e400", "-inf") + row(4, "2,000", "300") +
        "\"5\",\"1\",\"a\",\"h\",\"k\",\"1\",\"7\",\"x\",\"y\",\"0\",\"9.0\",\"1\",\"2\",\"3\",\"4\","
        "\"extra\"\n";
    auto r = ParseNcuCsv(csv);
    REQUIRE(r.ok());
    CHECK(r->launches.size() == 4);
    CHECK(r->ragged_rows == 2);
    CHECK(r->duplicate_columns == 1);
    CHECK(r->unknown_unit_columns == 1);
    CHECK(r->non_finite_cells == 4);
    CHECK(Value(*r, 0, "dram__bytes_read.sum") == Approx(1500));  // the first column, in Kbyte
    CHECK(std::isnan(Value(*r, 0, "lts__t_bytes.sum")));          // unknown unit: left out, not guessed
    CHECK(std::isnan(Value(*r, 1, "dram__bytes_read.sum")));
    CHECK(std::isnan(Value(*r, 2, "gpu__time_duration.sum")));
    CHECK(Value(*r, 3, "dram__bytes_read.sum") == Approx(2e6));
    auto model = LoadTrace(Bytes(csv));
    REQUIRE(model.ok());
    bool reported = false;
    for (const auto& l : (*model)->losses) reported |= l.name == "ncu_rows_skipped" && l.count == 2;
    CHECK(reported);
  }
  SECTION("a launch without a time still opens, 1 ns long, and says so") {
    auto model = LoadTrace(Bytes(head + units + row(0, "1", "n/a")));
    REQUIRE(model.ok());
    CHECK((*model)->event_count == 1);
    bool said = false;
    for (const auto& l : (*model)->losses) said |= l.detail.find("1 without one") != std::string::npos;
    CHECK(said);
  }
}

namespace {

// A timeline of process 1: copy_kernel x3 and fma_kernel x1 on stream 7 (correlation ids 1..4), and a kernel
// ncu did not profile.
std::unique_ptr<TraceModel> Timeline() {
  ModelBuilder b;
  test::FeedStrings(b, {"", "app", "NVIDIA H200", "copy_kernel(float const*, float*, unsigned long)",
                        "fma_kernel(float*, int)", "other_kernel()"});
  test::FeedProcessAndGpu(b);
  std::vector<KernelRecord> ks;
  const uint32_t names[] = {3, 4, 3, 5, 3};
  for (uint32_t i = 0; i < 5; ++i) {
    KernelRecord k;
    k.start = 1000 + i * 100'000, k.end = k.start + 20'000, k.name = names[i];
    k.pid = 1, k.device_id = 0, k.context_id = 1, k.stream_id = 7, k.correlation_id = 11 + i;
    ks.push_back(k);
  }
  b.OnKernels(ks);
  return b.Finish();
}

}  // namespace

TEST_CASE("ncu join: launches paired with timeline kernels by base name and ordinal", "[ncu]") {
  auto m = Timeline();
  auto r = ParseNcuCsv(kDefaultUnits);
  REQUIRE(r.ok());
  NcuJoinResult j = AttachNcuReport(*r, *m, "probe.csv");
  CHECK(j.paired == 3);
  CHECK(j.unpaired_count == 0);
  CHECK(j.timeline_kernels == 5);
  ProfiledKernels p = AnalyzeProfiledKernels(*m);
  REQUIRE(p.launches.size() == 3);
  // The selected timeline kernel finds ncu's values: the 2nd copy_kernel launch is ncu's ID 2 (12 us).
  std::vector<EventId> copies;
  for (uint32_t l = 0; l < m->lanes.size(); ++l)
    for (uint32_t i = 0; i < m->lanes[l].size(); ++i)
      if (m->Kind({l, i}) == EventKind::kKernel && m->Str(m->Name({l, i})).starts_with("copy_kernel"))
        copies.push_back({l, i});
  REQUIRE(copies.size() == 3);
  std::sort(copies.begin(), copies.end(), [&](EventId a, EventId b) { return m->Start(a) < m->Start(b); });
  const size_t second = p.LaunchOf(copies[1]);
  REQUIRE(second != SIZE_MAX);
  CHECK(p.launches[second].Get(metric::kTime) == Approx(12'000));
  CHECK(p.launches[second].Get(metric::kDramBytesRead) == Approx(4.19e6));
  CHECK(p.LaunchOf(copies[2]) == SIZE_MAX);  // ncu profiled two of three
  // Merged per kernel with the timeline's total time (all three launches, 60 us), not ncu's.
  const KernelAnalysis* copy = FindKernel(p, "copy_kernel");
  REQUIRE(copy);
  for (size_t k = 0; k < p.kernels.size(); ++k)
    if (&p.kernels[k] == copy) CHECK(p.kernel_total_time_s[k] == Approx(60e-6));
  bool summary = false;
  for (const auto& l : m->losses) summary |= l.name == "ncu_join" && l.count == 3;
  CHECK(summary);
}

TEST_CASE("ncu join: unpaired launches are listed", "[ncu]") {
  auto m = Timeline();
  std::string csv = kBaseUnits;
  // A fourth copy launch (the timeline has three) and a kernel the timeline never ran.
  csv +=
      "\"3\",\"4242\",\"probe\",\"gpu1\",\"copy_kernel\",\"1\",\"7\",\"(256, 1, 1)\",\"(4096, 1, 1)\",\"0\","
      "\"9.0\",\"1\",\"1\",\"1\",\"1\",\"0\"\n";
  csv +=
      "\"4\",\"4242\",\"probe\",\"gpu1\",\"missing_kernel\",\"1\",\"7\",\"(256, 1, 1)\",\"(4096, 1, "
      "1)\",\"0\","
      "\"9.0\",\"1\",\"1\",\"1\",\"1\",\"0\"\n";
  csv +=
      "\"5\",\"4242\",\"probe\",\"gpu1\",\"copy_kernel\",\"1\",\"7\",\"(256, 1, 1)\",\"(4096, 1, 1)\",\"0\","
      "\"9.0\",\"1\",\"1\",\"1\",\"1\",\"0\"\n";
  auto r = ParseNcuCsv(csv);
  REQUIRE(r.ok());
  NcuJoinResult j = AttachNcuReport(*r, *m, "x.csv");
  CHECK(j.paired == 4);  // copy x3, fma x1
  CHECK(j.unpaired_count == 2);
  REQUIRE(j.unpaired.size() == 2);
  CHECK(j.unpaired[0] == "missing_kernel (ncu ID 4): no kernel of that name in the timeline");
  CHECK(j.unpaired[1] == "copy_kernel (ncu ID 5): launch #4 of it, the timeline has 3");
  bool listed = false;
  for (const auto& l : m->losses) listed |= l.name == "ncu_unpaired" && l.count == 2;
  CHECK(listed);
}

TEST_CASE("ncu with a timeline opened together: LoadTracesWithNcu", "[ncu]") {
  // A Kineto timeline (tests/viewer/data) and a hand-written ncu CSV of its one kernel.
  auto timeline = ReadFileForTest(GT_VIEWER_TEST_DATA "/kineto_small.json");
  const std::string csv =
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block "
      "Size\","
      "\"Grid Size\",\"Device\",\"CC\",\"gpu__time_duration.sum\",\"dram__bytes_read.sum\"\n"
      "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"usecond\",\"Kbyte\"\n"
      "\"0\",\"99\",\"python\",\"h\",\"volta_sgemm_64x64_nn\",\"1\",\"7\",\"(256, 1, 1)\",\"(2, 2, "
      "1)\",\"0\","
      "\"7.0\",\"11.5\",\"32.768\"\n";
  std::vector<MergeInput> inputs = {{"ncu.csv", Bytes(csv)}, {"kineto_small.json", Bytes(timeline)}};
  std::vector<std::string> warnings;
  auto m = LoadTracesWithNcu(inputs, &warnings);
  REQUIRE(m.ok());
  CHECK(warnings.empty());
  ProfiledKernels p = AnalyzeProfiledKernels(**m);
  REQUIRE(p.launches.size() == 1);
  CHECK(p.launches[0].kernel_name == "volta_sgemm_64x64_nn");
  CHECK(p.launches[0].Get(metric::kDramBytesRead) == Approx(32768));
  EventId e = test::FindByName(**m, "volta_sgemm_64x64_nn");
  REQUIRE(e.valid());
  CHECK(p.LaunchOf(e) == 0);
  // A bad CSV next to a timeline: the timeline opens, the CSV is named as left out.
  const std::string bad = "\"ID\",\"Process ID\",\"Kernel Name\"\n\"0\",\"1\",\"k\"\n";
  std::vector<MergeInput> with_bad = {{"bad.csv", Bytes(bad)}, {"kineto_small.json", Bytes(timeline)}};
  warnings.clear();
  auto m2 = LoadTracesWithNcu(with_bad, &warnings);
  REQUIRE(m2.ok());
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("bad.csv: ") == 0);
  CHECK(warnings[0].find("units row") != std::string::npos);
  // Two CSVs and no timeline: said plainly.
  std::vector<MergeInput> two = {{"a.csv", Bytes(csv)}, {"b.csv", Bytes(csv)}};
  CHECK_FALSE(LoadTracesWithNcu(two, &warnings).ok());
}

TEST_CASE("ncu stalls: raw counters from WarpStateStats' per-issue-active ratios", "[ncu]") {
  // Hand-written: ncu --set full reports stalls as ratios to issue-active cycles, not raw counters.
  const std::string csv =
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block "
      "Size\","
      "\"Grid Size\",\"Device\",\"CC\",\"smsp__issue_active.sum\",\"smsp__inst_issued.sum\","
      "\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\","
      "\"smsp__average_warps_issue_stalled_selected_per_issue_active.ratio\","
      "\"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio\"\n"
      "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"cycle\",\"inst\",\"\",\"\",\"\"\n"
      "\"0\",\"1\",\"a\",\"h\",\"copy_kernel\",\"1\",\"7\",\"(256, 1, 1)\",\"(8, 1, 1)\",\"0\",\"9.0\","
      "\"1,000\",\"1,000\",\"6.5\",\"1\",\"n/a\"\n";
  auto r = ParseNcuCsv(csv);
  REQUIRE(r.ok());
  CHECK(r->derived_values == 2);  // wait is n/a: not derived
  CHECK(Value(*r, 0, "smsp__warps_issue_stalled_long_scoreboard.sum") == Approx(6500));
  CHECK(Value(*r, 0, "smsp__warps_issue_stalled_selected.sum") == Approx(1000));
  CHECK(std::isnan(Value(*r, 0, "smsp__warps_issue_stalled_wait.sum")));
  auto model = LoadTrace(Bytes(csv));
  REQUIRE(model.ok());
  ProfiledKernels p = AnalyzeProfiledKernels(**model);
  REQUIRE(p.kernels.size() == 1);
  const auto& stalls = p.kernels[0].stalls;
  REQUIRE(stalls.size() == 2);
  CHECK(stalls[0].reason == "long_scoreboard");
  CHECK(stalls[0].per_issued == Approx(6.5));   // ncu's own number back
  CHECK(stalls[0].stall_share == Approx(1.0));  // selected is not a stall
}

TEST_CASE(
    "counters grouping: thousands of metrics per launch sorted once, a repeated metric keeps its last value",
    "[ncu]") {
  const std::vector<std::string> names = {"", "k", "b.sum", "a.sum", "c.sum"};
  auto str = [&](StringId id) -> std::string_view { return names[id]; };
  std::vector<KernelMetricRecord> records;
  for (StringId metric : {2u, 3u, 4u, 3u}) {  // a.sum twice: 2 then 9
    KernelMetricRecord r;
    r.pid = 1, r.kernel_name = 1, r.launch_ordinal = 0, r.metric = metric;
    r.value = metric == 3 && !records.empty() && records.back().metric == 4 ? 9 : metric;
    records.push_back(r);
  }
  auto groups = GroupKernelCounters(records, {}, str);
  REQUIRE(groups.size() == 1);
  REQUIRE(groups[0].values.size() == 3);
  CHECK(groups[0].values[0].name == "a.sum");
  CHECK(groups[0].values[0].value == 9);
  CHECK(groups[0].values[1].name == "b.sum");
  CHECK(groups[0].values[2].name == "c.sum");
  // Merged over launches: sums add, the rest average; a launch with other metrics still counts.
  KernelCounters one = groups[0], two = groups[0], other;
  other.kernel_name = "k";
  other.Set("a.sum", 1);
  other.Set("x.pct", 50);
  two.Set("x.pct", 70);
  std::vector<KernelCounters> launches = {one, two, other};
  KernelCounters merged = MergeLaunches(launches);
  CHECK(merged.Get("a.sum") == 9 + 9 + 1);
  CHECK(merged.Get("b.sum") == 2 + 2);
  CHECK(merged.Get("x.pct") == 60);
  CHECK(merged.launches == 3);
}
