// Log-binned duration histograms (gt/viewer/histogram.h).
#include "gt/viewer/histogram.h"

#include <algorithm>
#include <cmath>

#include "gt/viewer/query.h"

namespace gt::viewer {

namespace {

// Edge k of the log scale: 10^(k / b) ns, rounded. k = 0 is 1 ns; durations of 0 get their own [0, 1).
int64_t Edge(int k, int b) {
  return static_cast<int64_t>(std::llround(std::pow(10.0, static_cast<double>(k) / b)));
}

int EdgeIndex(int64_t d, int b) {  // the largest k with Edge(k) <= d (d >= 1)
  int k = static_cast<int>(std::floor(std::log10(static_cast<double>(d)) * b));
  while (k > 0 && Edge(k, b) > d) --k;  // rounding of log10/pow: settle on integers
  while (Edge(k + 1, b) <= d) ++k;
  return k;
}

}  // namespace

int DurationHistogram::BinOf(int64_t d) const {
  if (bins.empty() || d < bins.front().lo_ns || d >= bins.back().hi_ns) return -1;
  auto it =
      std::upper_bound(bins.begin(), bins.end(), d, [](int64_t v, const Bin& b) { return v < b.lo_ns; });
  return static_cast<int>(it - bins.begin()) - 1;
}

int64_t Percentile(std::span<const int64_t> sorted, double p) {
  if (sorted.empty()) return 0;
  double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  size_t i = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(i, sorted.size() - 1)];
}

DurationHistogram BuildDurationHistogram(std::span<const int64_t> durations, int b) {
  b = std::clamp(b, 1, 20);
  DurationHistogram h;
  if (durations.empty()) return h;
  std::vector<int64_t> sorted(durations.begin(), durations.end());
  for (auto& d : sorted)
    d = std::max<int64_t>(d, 0);  // a negative duration is a broken record: count it as 0
  std::sort(sorted.begin(), sorted.end());
  h.total = sorted.size();
  h.min_ns = sorted.front();
  h.max_ns = sorted.back();
  h.p50_ns = Percentile(sorted, 50);
  h.p90_ns = Percentile(sorted, 90);
  h.p99_ns = Percentile(sorted, 99);
  long double sum = 0;
  for (int64_t d : sorted) sum += d;
  h.mean_ns = static_cast<double>(sum / sorted.size());

  if (h.min_ns == 0) h.bins.push_back({0, 1, 0});
  if (h.max_ns >= 1) {
    const int k0 = EdgeIndex(std::max<int64_t>(h.min_ns, 1), b), k1 = EdgeIndex(h.max_ns, b);
    int64_t lo = Edge(k0, b);
    for (int k = k0 + 1; k <= k1 + 1; ++k) {
      const int64_t hi = Edge(k, b);
      if (hi <= lo) continue;  // rounding made two edges equal (small k, many bins per decade)
      h.bins.push_back({lo, hi, 0});
      lo = hi;
    }
  }
  size_t j = 0;
  for (int64_t d : sorted) {
    while (j + 1 < h.bins.size() && d >= h.bins[j].hi_ns) ++j;
    ++h.bins[j].count;
  }
  return h;
}

DurationHistogram KernelDurationHistogram(const TraceModel& model, StringId name, int b) {
  std::vector<int64_t> d;
  for (EventId e : KernelInstances(model, name)) d.push_back(model.End(e) - model.Start(e));
  return BuildDurationHistogram(d, b);
}

std::vector<EventId> InstancesInBin(const TraceModel& model, StringId name, const DurationHistogram& h,
                                    int bin) {
  std::vector<EventId> out;
  if (bin < 0 || static_cast<size_t>(bin) >= h.bins.size()) return out;
  for (EventId e : KernelInstances(model, name))
    if (h.BinOf(std::max<int64_t>(model.End(e) - model.Start(e), 0)) == bin) out.push_back(e);
  return out;
}

}  // namespace gt::viewer
