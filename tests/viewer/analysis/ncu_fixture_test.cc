// The ncu import on real Nsight Compute CSVs from an H200 (tests/data/ncu/README.md: ncu 2025.3.1, --set full
// --csv --page raw, stdout captured with the app's output and ==PROF== lines; the gcollect timeline of the
// same program). Expected values are read here straight from the CSV text, independently of the importer, and
// checked against what the kernels in kernels/ must do (bytes moved, FLOPs executed).
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gt/viewer/analysis.h"
#include "gt/viewer/load.h"
#include "gt/viewer/ncu.h"
#include "gt/viewer/profiled.h"

using namespace gt;
using namespace gt::viewer;

namespace {

std::string Read(const std::string& name) {
  std::ifstream f(std::string(GT_NCU_FIXTURES) + "/" + name, std::ios::binary);
  REQUIRE(f.good());
  std::ostringstream o;
  o << f.rdbuf();
  return o.str();
}

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// The test's own reading of ncu's CSV: every line that starts with a quote is a row, every cell is quoted and
// none of these cells holds a quote, so rows split at "," (kernel names hold commas, but inside quotes).
struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // launch rows (the units row dropped)
  std::string Cell(size_t row, const std::string& column) const {
    for (size_t c = 0; c < header.size(); ++c)
      if (header[c] == column) return rows[row][c];
    FAIL("no column " << column);
    return "";
  }
  double Number(size_t row, const std::string& column) const {
    std::string s;
    for (char c : Cell(row, column))
      if (c != ',') s += c;
    return std::stod(s);
  }
};

Csv ReadCsv(const std::string& text) {
  Csv out;
  std::istringstream in(text);
  std::string line;
  bool units = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '"') continue;
    std::vector<std::string> cells;
    size_t pos = 1;
    while (true) {
      const size_t end = line.find("\",\"", pos);
      if (end == std::string::npos) {
        cells.push_back(line.substr(pos, line.rfind('"') - pos));
        break;
      }
      cells.push_back(line.substr(pos, end - pos));
      pos = end + 3;
    }
    if (out.header.empty()) {
      out.header = cells;
    } else if (!units) {
      units = true;
    } else {
      out.rows.push_back(cells);
    }
  }
  return out;
}

double Value(const NcuReport& r, size_t launch, std::string_view metric) {
  for (const auto& [m, v] : r.launches[launch].values)
    if (r.metrics[m].name == metric) return v;
  return NAN;
}

const char* const kWorkloads[] = {"fma", "copy", "strided", "syncdiv", "bank_conflicts"};
const std::map<std::string, size_t> kLaunches = {
    {"fma", 1}, {"copy", 4}, {"strided", 2}, {"syncdiv", 1}, {"bank_conflicts", 2}};  // README.md's table

}  // namespace

TEST_CASE("ncu fixtures: every value as the CSV says, in base units", "[ncu][fixture]") {
  for (const char* w : kWorkloads) {
    for (const char* variant : {".ncu.csv", ".ncu_base.csv"}) {
      const std::string name = std::string(w) + variant;
      INFO(name);
      const std::string text = Read(name);
      const Csv csv = ReadCsv(text);
      auto r = ParseNcuCsv(text);
      REQUIRE(r.ok());
      REQUIRE(r->launches.size() == kLaunches.at(w));
      REQUIRE(csv.rows.size() == r->launches.size());
      CHECK(r->prof_lines > 0);  // the app's output and ==PROF== lines were skipped
      CHECK(r->ragged_rows == 0);
      CHECK(r->unknown_unit_columns == 0);
      for (size_t i = 0; i < csv.rows.size(); ++i) {
        CHECK(r->launches[i].kernel == csv.Cell(i, "Kernel Name"));
        CHECK(r->launches[i].id == static_cast<uint64_t>(csv.Number(i, "ID")));
        // The raw page prints base units (README): byte, ns, hz. Values come through unchanged.
        for (const char* m :
             {"dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum",
              "sm__cycles_elapsed.avg.per_second", "smsp__inst_executed.sum", "launch__registers_per_thread",
              "sm__throughput.avg.pct_of_peak_sustained_elapsed"}) {
          INFO(m << " launch " << i);
          CHECK(Value(*r, i, m) == Approx(csv.Number(i, m)));
        }
      }
    }
  }
}

TEST_CASE("ncu fixtures: default and --print-units base runs agree", "[ncu][fixture]") {
  for (const char* w : kWorkloads) {
    INFO(w);
    auto a = ParseNcuCsv(Read(std::string(w) + ".ncu.csv"));
    auto b = ParseNcuCsv(Read(std::string(w) + ".ncu_base.csv"));
    REQUIRE((a.ok() && b.ok()));
    REQUIRE(a->launches.size() == b->launches.size());
    for (size_t i = 0; i < a->launches.size(); ++i) {
      CHECK(KernelBaseName(a->launches[i].kernel) == KernelBaseName(b->launches[i].kernel));
      // Two runs: instruction counts are the program's, DRAM traffic nearly so.
      CHECK(Value(*a, i, "smsp__inst_executed.sum") == Value(*b, i, "smsp__inst_executed.sum"));
      CHECK(Value(*a, i, "dram__bytes_read.sum") ==
            Approx(Value(*b, i, "dram__bytes_read.sum")).epsilon(0.02));
    }
  }
}

TEST_CASE("ncu fixtures: the physics of the probe kernels", "[ncu][fixture]") {
  constexpr double kMiB = 1 << 20;
  SECTION("copy: copy_float4 reads its 64 MiB buffer once, saxpy reads two") {
    auto m = LoadTrace(Bytes(Read("copy.ncu.csv")));
    REQUIRE(m.ok());
    ProfiledKernels p = AnalyzeProfiledKernels(**m);
    REQUIRE(p.launches.size() == 4);
    for (const KernelCounters& c : p.launches) {
      INFO(c.kernel_name);
      const double buffers = KernelBaseName(c.kernel_name) == "copy_float4" ? 1 : 2;
      CHECK(c.Get(metric::kDramBytesRead) == Approx(buffers * 64 * kMiB).epsilon(0.01));
      // Writes: at most the 64 MiB written; the rest still sits in the 60 MiB L2 when the kernel ends.
      CHECK(c.Get(metric::kDramBytesWrite) <= 64 * kMiB * 1.01);
      CHECK(c.Get(metric::kDramBytesWrite) >= 0.5 * 64 * kMiB);
    }
    for (const KernelAnalysis& k : p.kernels) {
      INFO(k.kernel_name);
      CHECK(k.bottleneck == Bottleneck::kMemory);
      CHECK(k.bandwidth_pct[0].value > 50);  // of DRAM peak: a copy runs near it
      CHECK(k.bandwidth_pct[0].value <= 100);
    }
  }
  SECTION("fma: 8 chains x 16 x 256 loops of FFMA per thread, 1056 x 256 threads") {
    auto m = LoadTrace(Bytes(Read("fma.ncu.csv")));
    REQUIRE(m.ok());
    ProfiledKernels p = AnalyzeProfiledKernels(**m);
    REQUIRE(p.kernels.size() == 1);
    const double ffma = 8.0 * 16 * 256 * 1056 * 256;
    CHECK(p.launches[0].Get(metric::kFfma) == Approx(ffma).epsilon(1e-4));  // derived: per cycle x cycles
    const KernelAnalysis& k = p.kernels[0];
    CHECK(k.flops[static_cast<size_t>(Precision::kFp32)] == Approx(2 * ffma).epsilon(1e-3));
    CHECK(k.bottleneck == Bottleneck::kCompute);
    CHECK(k.flops_pct[static_cast<size_t>(Precision::kFp32)].value > 80);
    // The roofline: far right of the ridge, on the compute side.
    auto points =
        PlaceOnRoofline(BuildRoofline(p.device), p.kernels, MemoryLevel::kDram, p.kernel_total_time_s);
    REQUIRE(points.size() == 1);
    CHECK_FALSE(points[0].memory_side);
    CHECK(points[0].intensity > 1000);
    CHECK(points[0].pct_of_roof > 0.8);
  }
  SECTION("strided: 32 sectors per request strided, 4 coalesced") {
    auto m = LoadTrace(Bytes(Read("strided.ncu.csv")));
    REQUIRE(m.ok());
    ProfiledKernels p = AnalyzeProfiledKernels(**m);
    for (const KernelAnalysis& k : p.kernels) {
      INFO(k.kernel_name);
      const bool strided = KernelBaseName(k.kernel_name) == "strided_read";
      CHECK(k.sectors_per_request_ld.value == Approx(strided ? 32 : 4).epsilon(0.05));
    }
  }
  SECTION("syncdiv: divergence and barrier stalls; stalls per issued instruction are ncu's ratios") {
    const std::string text = Read("syncdiv.ncu.csv");
    const Csv csv = ReadCsv(text);
    auto m = LoadTrace(Bytes(text));
    REQUIRE(m.ok());
    ProfiledKernels p = AnalyzeProfiledKernels(**m);
    REQUIRE(p.kernels.size() == 1);
    const KernelAnalysis& k = p.kernels[0];
    CHECK(k.active_threads_per_warp.value ==
          Approx(csv.Number(0, "smsp__thread_inst_executed_per_inst_executed.ratio")).epsilon(1e-3));
    CHECK(k.active_threads_per_warp.value < 32);
    bool barrier = false;
    for (const StallShare& s : k.stalls) {
      INFO(s.reason);
      const std::string ratio = "smsp__average_warps_issue_stalled_" + s.reason + "_per_issue_active.ratio";
      // per_issued divides by smsp__inst_issued.sum; ncu's ratio by issue-active cycles: the same on GH100.
      CHECK(s.per_issued == Approx(csv.Number(0, ratio)).epsilon(1e-3).margin(1e-3));
      barrier |= s.reason == "barrier" && s.stall_share > 0.1;
    }
    CHECK(barrier);
  }
  SECTION("bank_conflicts: the conflicted kernel has more conflicts per wavefront than the padded one") {
    auto m = LoadTrace(Bytes(Read("bank_conflicts.ncu.csv")));
    REQUIRE(m.ok());
    ProfiledKernels p = AnalyzeProfiledKernels(**m);
    double conflicted = -1, padded = -1;
    for (const KernelAnalysis& k : p.kernels)
      (KernelBaseName(k.kernel_name) == "smem_conflicted" ? conflicted : padded) =
          k.bank_conflict_ratio.value;
    CHECK(conflicted > padded);
    CHECK(padded >= 0);
  }
}

TEST_CASE("ncu fixtures: joined to the gcollect timeline of the same program", "[ncu][fixture]") {
  for (const char* w : kWorkloads) {
    INFO(w);
    const std::string timeline = Read(std::string(w) + ".gtrace");
    const std::string text = Read(std::string(w) + ".ncu.csv");
    const Csv csv = ReadCsv(text);
    std::vector<std::string> warnings;
    std::vector<MergeInput> inputs = {{"t.gtrace", Bytes(timeline)}, {"n.csv", Bytes(text)}};
    auto m = LoadTracesWithNcu(inputs, &warnings);
    REQUIRE(m.ok());
    CHECK(warnings.empty());
    const TraceModel& model = **m;
    ProfiledKernels p = AnalyzeProfiledKernels(model);
    REQUIRE(p.launches.size() == kLaunches.at(w));
    // Every timeline kernel of a profiled name finds its launch, whose time is ncu's for that ID.
    std::map<std::string, std::vector<EventId>> by_base;
    for (uint32_t l = 0; l < model.lanes.size(); ++l)
      for (uint32_t i = 0; i < model.lanes[l].size(); ++i)
        if (model.Kind({l, i}) == EventKind::kKernel)
          by_base[KernelBaseName(model.Str(model.Name({l, i})))].push_back({l, i});
    size_t checked = 0;
    std::map<std::string, size_t> ordinal;
    for (size_t row = 0; row < csv.rows.size(); ++row) {
      const std::string base = KernelBaseName(csv.Cell(row, "Kernel Name"));
      auto& events = by_base[base];
      std::sort(events.begin(), events.end(),
                [&](EventId a, EventId b) { return model.Start(a) < model.Start(b); });
      const size_t n = ordinal[base]++;
      REQUIRE(n < events.size());
      const size_t launch = p.LaunchOf(events[n]);
      REQUIRE(launch != SIZE_MAX);
      CHECK(p.launches[launch].Get(metric::kTime) == Approx(csv.Number(row, "gpu__time_duration.sum")));
      CHECK(p.launches[launch].Get(metric::kDramBytesRead) ==
            Approx(csv.Number(row, "dram__bytes_read.sum")));
      ++checked;
    }
    CHECK(checked == kLaunches.at(w));
    bool said = false;
    for (const LossStat& l : model.losses)
      said |=
          l.name == "ncu_join" && l.detail.find(std::to_string(checked) + " of " + std::to_string(checked) +
                                                " profiled launches paired") != std::string::npos;
    CHECK(said);
  }
}
