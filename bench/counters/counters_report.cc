// counters_report: per profiled kernel of a joined .gtrace, the analysis the viewer shows (verdict, SOL,
// roofline side, flags), one line each. run_device.sh's output goes through it for docs/benchmarks.md.
//   counters_report TRACE.gtrace...
#include <cstdio>
#include <map>
#include <string>

#include "gt/reader.h"
#include "gt/trace_data.h"
#include "gt/viewer/analysis.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: counters_report TRACE.gtrace...\n");
    return 2;
  }
  int rc = 0;
  for (int i = 1; i < argc; ++i) {
    auto bytes = gt::ReadFileBytes(argv[i]);
    gt::TraceData t;
    if (!bytes.ok() ||
        !gt::ReadTrace(
             std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), t)
             .ok()) {
      fprintf(stderr, "counters_report: cannot read %s\n", argv[i]);
      rc = 1;
      continue;
    }
    gt::DeviceRecord device = t.devices.empty() ? gt::DeviceRecord{} : t.devices.front();
    auto launches = gt::GroupKernelCounters(t);
    std::map<std::pair<uint32_t, std::string>, std::vector<gt::KernelCounters>> by_name;
    for (auto& c : launches) by_name[{c.pid, c.kernel_name}].push_back(c);
    std::vector<gt::KernelAnalysis> analyses;
    for (auto& [key, v] : by_name) analyses.push_back(gt::AnalyzeKernel(gt::MergeLaunches(v), device));
    gt::RooflineModel model = gt::BuildRoofline(device);
    auto points = gt::PlaceOnRoofline(model, analyses, gt::MemoryLevel::kDram);
    printf("## %s: %zu profiled launches, %zu kernels, peaks %s\n", argv[i], launches.size(), analyses.size(),
           device.peak_source == uint8_t(gt::PeakSource::kDerived)
               ? "derived from the profiler's peak_sustained"
               : "from the device record / table");
    for (size_t k = 0; k < analyses.size(); ++k) {
      const auto& a = analyses[k];
      std::string side = "not placed (no FLOPs)";
      for (const auto& p : points)
        if (p.analysis_index == k)
          side = std::string(p.memory_side ? "memory" : "compute") + " side, " +
                 gt::FormatPercent(100 * p.pct_of_roof) + " of roof";
      printf("| %s | %u | %s | %s | %s | %s |\n", a.kernel_name.substr(0, 60).c_str(), a.launches,
             a.time_s ? gt::FormatDuration(a.time_s.value).c_str() : "-", gt::BottleneckName(a.bottleneck),
             side.c_str(), a.verdict.c_str());
      for (const auto& f : a.flags) printf("|   flag | | | | | %s |\n", f.message.c_str());
    }
  }
  return rc;
}
