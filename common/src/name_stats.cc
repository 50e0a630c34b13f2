#include "gt/name_stats.h"

namespace gt {

void NameStats::Add(int64_t start_ns, int64_t dur_ns, uint64_t add_bytes) {
  const int64_t end_ns = SatAdd(start_ns, dur_ns);  // sums saturate: untrusted traces carry any int64
  if (count == 0) {
    min_ns = max_ns = dur_ns;
    first_ns = start_ns;
    last_ns = end_ns;
  } else {
    min_ns = std::min(min_ns, dur_ns);
    max_ns = std::max(max_ns, dur_ns);
    first_ns = std::min(first_ns, start_ns);
    last_ns = std::max(last_ns, end_ns);
  }
  ++count;
  total_ns = SatAdd(total_ns, dur_ns);
  bytes += add_bytes;
}

void NameStats::Merge(const NameStats& o) {
  if (o.count == 0) return;
  if (count == 0) {
    *this = o;
    return;
  }
  count += o.count;
  total_ns = SatAdd(total_ns, o.total_ns);
  min_ns = std::min(min_ns, o.min_ns);
  max_ns = std::max(max_ns, o.max_ns);
  first_ns = std::min(first_ns, o.first_ns);
  last_ns = std::max(last_ns, o.last_ns);
  bytes += o.bytes;
}

void NameAggregator::Add(uint32_t name, int64_t start_ns, int64_t dur_ns, uint64_t bytes) {
  if (name >= row_of_.size()) row_of_.resize(size_t(name) + 1, kAbsent);
  if (row_of_[name] == kAbsent) {
    row_of_[name] = static_cast<uint32_t>(rows_.size());
    rows_.push_back(NameRow{name, {}, 0});
  }
  rows_[row_of_[name]].stats.Add(start_ns, dur_ns, bytes);
  all_ns_ = SatAdd(all_ns_, dur_ns);
}

}  // namespace gt
