// libFuzzer: `gtrace merge` on arbitrary inputs. The bytes split into up to 8 inputs at each .gtrace segment
// magic (so the reader's seeds, and files concatenated from them, are merge jobs), then the whole merge runs:
// the plan (scan, host grouping, clock fit, job checks), every input fed through its transform, the report.
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "gt/trace_data.h"
#include "gt/viewer/merge.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static constexpr uint8_t kMagic[] = {'G', 'T', 'R', 'A', 'C', 'E', '\r', '\n', 0x1a, '\n'};
  std::vector<size_t> cuts{0};
  for (size_t i = 1; i + sizeof kMagic <= size && cuts.size() < 8; ++i)
    if (std::memcmp(data + i, kMagic, sizeof kMagic) == 0) cuts.push_back(i);
  cuts.push_back(size);
  std::vector<gt::viewer::MergeInput> inputs;
  for (size_t k = 0; k + 1 < cuts.size(); ++k)
    inputs.push_back(
        {"input" + std::to_string(k), std::span<const uint8_t>(data + cuts[k], cuts[k + 1] - cuts[k])});
  // One alignment per input (by its length: a reproducer always takes the same one), not both: the merge is
  // the slowest target, and the two share all but the clock fit.
  for (auto align : {size % 2 ? gt::viewer::AlignMode::kCollectives : gt::viewer::AlignMode::kAuto}) {
    gt::viewer::MergeOptions options;
    options.align = align;
    auto plan = gt::viewer::PlanMerge(inputs, options);
    if (!plan.ok()) return 0;
    gt::TraceData merged;
    gt::StringId base = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto next = gt::viewer::FeedMergeInput(*plan, i, inputs[i].bytes, merged, base);
      if (next.ok()) base = *next;
    }
    (void)gt::viewer::MergedMetadata(*plan);
    (void)gt::viewer::FormatMergeReport(*plan);
  }
  return 0;
}
