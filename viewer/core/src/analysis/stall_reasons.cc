// [SECTION] Stalls of analysis.h: the warp-stall reasons (their meanings and usual fixes are the counter
// vocabulary's, gt/counter_vocab.h) and the shares.
#include <algorithm>

#include "gt/counter_vocab.h"
#include "gt/viewer/analysis.h"

namespace gt {

std::span<const StallReasonInfo> StallReasonTable() {
  return StallReasonVocabulary();
}

const StallReasonInfo* FindStallReason(std::string_view key) {
  return FindStallReasonInfo(key);
}

std::vector<StallShare> ComputeStallShares(const KernelCounters& c) {
  std::vector<StallShare> out;
  double total = 0, stalled = 0;
  const double issued = c.Get(metric::kIssued);
  for (const auto& r : StallReasonVocabulary()) {
    const auto* v = c.Find(StallMetricName(r.key));
    if (!v) continue;
    StallShare s;
    s.reason = r.key;
    s.count = v->value > 0 ? v->value : 0;
    s.per_issued = issued > 0 ? s.count / issued : 0;
    total += s.count;
    if (r.is_stall) stalled += s.count;
    out.push_back(s);
  }
  for (auto& s : out) {
    s.share = total > 0 ? s.count / total : 0;
    const auto* info = FindStallReason(s.reason);
    s.stall_share = info && info->is_stall && stalled > 0 ? s.count / stalled : 0;
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const StallShare& a, const StallShare& b) { return a.count > b.count; });
  return out;
}

}  // namespace gt
