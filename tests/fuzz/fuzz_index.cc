// libFuzzer: a viewer index (.gtindex) on the server's disk is a cache that may be damaged or written by
// something else. Opening it must refuse what it cannot trust with a reason, never crash or read out of
// bounds; whatever it accepts must answer every query (a block that fails its checks when a query reads it
// makes that answer an error). Checksums are off here, so the fuzzer reaches the structural checks behind
// them and the block decoder (with them on, any damaged byte is refused before those checks run). Seeds:
// `GT_INDEX_SEEDS=DIR test_viewer "[.index-seeds]"` (valid indexes of the current version).
#include <cstdint>
#include <string>

#include "fuzz_sample.h"
#include "gt/viewer/index.h"
#include "gt/viewer/index_query.h"
#include "gt/viewer/profiled.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gt::viewer;
  IndexOpenOptions options;
  options.verify_checksums = false;
  auto index = MappedIndex::FromBytes({data, size}, {}, options);
  if (!index.ok()) return 0;
  const TraceModel& m = (*index)->model();
  const std::string t0 = std::to_string(m.first_ns), t1 = std::to_string(m.last_ns + (m.last_ns < INT64_MAX));
  // An event's details decode the model's tables again (MappedIndex::Shell), the whole model decodes every
  // block, and the summary tables are mostly JSON writing: together ~10x the cost of the rest, so they run on
  // a deterministic sample of the inputs (every reader path still runs on ~1 M inputs in 10 M).
  const bool deep = gt::fuzz::Sampled(data, size, 8);
  for (size_t t = 0; t < m.tracks.size() && t < (deep ? 16 : 4); ++t)
    AnswerIndexQuery(**index, "tiles", {{"track", std::to_string(t)}, {"t0", t0}, {"t1", t1}, {"px", "512"}});
  for (size_t l = 0; l < m.lanes.size() && l < (deep ? 16 : 4); ++l) {
    const uint32_t n = (*index)->lane_size(gt::viewer::LaneId(l));
    for (uint32_t i : {0u, 1u, 2u, n - 1}) {
      if (i >= n || (!deep && i != n - 1)) continue;
      AnswerIndexQuery(**index, "event", {{"lane", std::to_string(l)}, {"index", std::to_string(i)}});
    }
  }
  AnswerIndexQuery(**index, "meta", {});
  if (!deep) return 0;
  AnswerIndexQuery(**index, "kernels", {});
  AnswerIndexQuery(**index, "summary", {});
  // The counter tables' JSON (damaged with the rest of the summaries here) as the page parses and analyses
  // it.
  const IndexAnswer profiled = AnswerIndexQuery(**index, "profiled", {});
  if (auto data = ParseProfiledData(profiled.body); data.ok()) {
    const ProfiledKernels p = AnalyzeProfiledKernels(*data);
    for (const auto& [e, launch] : data->launch_of) (void)p.LaunchOf(e);
  }
  (void)(*index)->Materialize();
  return 0;
}
