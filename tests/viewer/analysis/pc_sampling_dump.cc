// gt_pcs_dump TRACE...: what a PC-sampling trace holds, as text. Used on the GPU machine and here to read the
// traces of bench runs (docs/benchmarks.md "PC sampling") and to write the golden expectations of the fixture
// test. Per trace: loss records, kernels (launches, median and total duration), then each kernel's
// PC-sampling profile (FormatPcSamplingProfile).
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "gt/reader.h"
#include "gt/trace_data.h"
#include "gt/viewer/analysis.h"

using namespace gt;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gt_pcs_dump TRACE.gtrace...\n");
    return 2;
  }
  int rc = 0;
  for (int a = 1; a < argc; ++a) {
    TraceData t;
    auto bytes = ReadFileBytes(argv[a]);
    if (!bytes.ok()) {
      std::fprintf(stderr, "%s: %s\n", argv[a], bytes.status().ToString().c_str());
      rc = 1;
      continue;
    }
    auto r = ReadTrace(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), t);
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", argv[a], r.status().ToString().c_str());
      rc = 1;
      continue;
    }
    std::printf("== %s: %zu kernels, %zu stall samples, %zu bytes\n", argv[a], t.kernels.size(),
                t.stall_samples.size(), bytes->size());
    for (const auto& l : t.losses)
      std::printf("loss %s sev=%u count=%llu: %s\n", t.Str(l.name).c_str(), unsigned(l.severity),
                  static_cast<unsigned long long>(l.count), t.Str(l.detail).c_str());
    std::map<std::string, std::vector<double>> durations;
    for (const auto& k : t.kernels) durations[t.Str(k.name)].push_back(double(k.end - k.start) * 1e-3);
    for (auto& [name, d] : durations) {
      std::sort(d.begin(), d.end());
      double total = 0;
      for (double x : d) total += x;
      std::printf("kernel %-60.60s launches=%zu median_us=%.1f total_us=%.1f\n", name.c_str(), d.size(),
                  d[d.size() / 2], total);
    }
    for (const auto& p : BuildPcSamplingProfiles(t, 8))
      std::printf("%s\n", FormatPcSamplingProfile(p).c_str());
  }
  return rc;
}
