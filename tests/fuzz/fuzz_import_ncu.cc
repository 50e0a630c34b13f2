// libFuzzer: Nsight Compute CSV import (viewer/core/src/import_ncu.cc). Any bytes: no crash, no hang, no
// sanitizer report; what parses holds only finite numbers, in ID order; the standalone model is well-formed
// and every analysis runs on it; the join onto a small timeline pairs no more launches than it was given.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_sample.h"
#include "fuzz_viewer_common.h"
#include "gt/viewer/builder.h"
#include "gt/viewer/load.h"
#include "gt/viewer/ncu.h"
#include "gt/viewer/profiled.h"
#include "gt/viewer/summary.h"

namespace {

// Process 1 with three kernels whose base names the seeds use.
std::unique_ptr<gt::viewer::TraceModel> Timeline() {
  gt::viewer::ModelBuilder b;
  const std::string_view strings[] = {
      "", "app", "GPU", "copy_kernel(float const*, float*, unsigned long)", "fma_kernel(float*, int)", "k"};
  b.OnStrings(0, strings);
  gt::ProcessRecord p;
  p.pid = 1, p.name = 1;
  b.OnProcesses({&p, 1});
  gt::KernelRecord ks[4];
  for (uint32_t i = 0; i < 4; ++i) {
    ks[i].start = i * 1000, ks[i].end = i * 1000 + 500, ks[i].pid = 1, ks[i].stream_id = 7;
    ks[i].correlation_id = i + 1, ks[i].name = 3 + i % 3;
  }
  b.OnKernels(ks);
  return b.Finish();
}

void Analyze(const gt::viewer::TraceModel& m) {
  gt::fuzz::ExerciseModel(m);
  const gt::viewer::ProfiledKernels p = gt::viewer::AnalyzeProfiledKernels(m);
  const gt::RooflineModel roof = gt::BuildRoofline(p.device);
  (void)gt::PlaceOnRoofline(roof, p.kernels, gt::MemoryLevel::kDram, p.kernel_total_time_s);
  (void)gt::viewer::StatsReport(m, 10);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::span<const uint8_t> bytes(data, size);
  (void)gt::viewer::LooksLikeNcuCsv(bytes);
  auto report = gt::viewer::ParseNcuCsv(text);
  if (!report.ok()) return 0;
  uint64_t last_id = 0;
  for (const auto& l : report->launches) {
    if (l.id < last_id) std::abort();  // launches are in ID order
    last_id = l.id;
    for (const auto& [metric, value] : l.values)
      if (metric >= report->metrics.size() || !std::isfinite(value)) std::abort();
  }
  auto model = gt::viewer::LoadTrace(bytes);
  // The analyses (summaries, roofline, the stats report) over both models took most of each execution
  // (~460 exec/s per worker on CSVs of ~2,200 columns): they run on a deterministic sample of the inputs, the
  // parse, load and join on every one.
  const bool analyze = gt::fuzz::Sampled(data, size, 8);
  if (model.ok() && analyze) Analyze(**model);
  auto timeline = Timeline();
  const gt::viewer::NcuJoinResult j = gt::viewer::AttachNcuReport(*report, *timeline, "fuzz.csv");
  if (j.paired + j.unpaired_count != report->launches.size()) std::abort();
  if (analyze) Analyze(*timeline);
  return 0;
}
