// The one per-name aggregation of timed events: count, total, min, max, average, share and time extents per
// interned name, sorted by total time. The launcher's end-of-run "top kernels", the viewer core's kernel
// table (KernelSummary: rows keyed by StringId, with extents to zoom to) and its per-name reports
// (SummarizeByName: kernels, copies, API calls, NVTX ranges) all add their events here; only which events
// they feed differs. It lives in common/ because the collector may depend on common/ but never on the viewer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "gt/sat_math.h"

namespace gt {

// What the instances of one name add up to.
struct NameStats {
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0, max_ns = 0;
  int64_t first_ns = 0, last_ns = 0;  // earliest start, latest end: a zoom range covering every instance
  uint64_t bytes = 0;                 // copies: bytes moved or set

  double avg_ns() const { return count ? double(total_ns) / double(count) : 0; }
  void Add(int64_t start_ns, int64_t dur_ns, uint64_t add_bytes = 0);
  void Merge(const NameStats& o);
};

struct NameRow {
  uint32_t name = 0;  // the interned name (StringId)
  NameStats stats;
  double share = 0;  // stats.total_ns / the total over all rows (0..1)
};

// Adds events by interned name (StringIds are dense, so a vector indexes them).
class NameAggregator {
 public:
  void Add(uint32_t name, int64_t start_ns, int64_t dur_ns, uint64_t bytes = 0);
  int64_t total_ns() const { return all_ns_; }
  // One row per name, by total time (descending); equal totals ordered by tie_less(a.name, b.name).
  template <typename TieLess>
  std::vector<NameRow> Rows(TieLess tie_less) const {
    std::vector<NameRow> rows = rows_;
    for (NameRow& r : rows) r.share = all_ns_ > 0 ? double(r.stats.total_ns) / double(all_ns_) : 0;
    std::sort(rows.begin(), rows.end(), [&](const NameRow& a, const NameRow& b) {
      if (a.stats.total_ns != b.stats.total_ns) return a.stats.total_ns > b.stats.total_ns;
      return tie_less(a.name, b.name);
    });
    return rows;
  }
  std::vector<NameRow> Rows() const {
    return Rows([](uint32_t a, uint32_t b) { return a < b; });
  }

 private:
  std::vector<uint32_t> row_of_;  // per name: index into rows_, or kAbsent
  std::vector<NameRow> rows_;     // first-seen order
  int64_t all_ns_ = 0;
  static constexpr uint32_t kAbsent = std::numeric_limits<uint32_t>::max();
};

}  // namespace gt
