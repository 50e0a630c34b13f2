// [SECTION] Roofline of analysis.h: ceilings per memory level, roofs per precision, point placement, picking.
#include <algorithm>
#include <cmath>

#include "gt/viewer/analysis.h"

namespace gt {

RooflineModel BuildRoofline(const DeviceRecord& device_in) {
  const DeviceRecord d = WithDefaultPeaks(device_in);
  RooflineModel m;
  const double bw[kMemoryLevelCount] = {d.dram_bandwidth, d.l2_bandwidth, d.l1_bandwidth};
  for (size_t l = 0; l < kMemoryLevelCount; ++l)
    if (bw[l] > 0) m.ceilings.push_back({static_cast<MemoryLevel>(l), bw[l]});
  for (size_t p = 0; p < kPrecisionCount; ++p)
    if (d.peak_flops[p] > 0) m.roofs.push_back({static_cast<Precision>(p), d.peak_flops[p]});
  std::stable_sort(m.roofs.begin(), m.roofs.end(), [](const RooflineRoof& a, const RooflineRoof& b) {
    return a.flops_per_s > b.flops_per_s;
  });
  return m;
}

double RooflineModel::Bandwidth(MemoryLevel level) const {
  for (const auto& c : ceilings)
    if (c.level == level) return c.bytes_per_s;
  return 0;
}

double RooflineModel::Peak(Precision precision) const {
  for (const auto& r : roofs)
    if (r.precision == precision) return r.flops_per_s;
  return 0;
}

double RooflineModel::Attainable(double intensity, MemoryLevel level, Precision precision) const {
  double bw = Bandwidth(level), peak = Peak(precision);
  if (bw <= 0 || peak <= 0 || intensity <= 0) return 0;
  return std::min(bw * intensity, peak);
}

double RooflineModel::Ridge(MemoryLevel level, Precision precision) const {
  double bw = Bandwidth(level), peak = Peak(precision);
  return bw > 0 && peak > 0 ? peak / bw : 0;
}

void RooflineModel::Bounds(std::span<const RooflinePoint> points, double* x_min, double* x_max, double* y_min,
                           double* y_max) const {
  double lx0 = 1e300, lx1 = -1e300, ly0 = 1e300, ly1 = -1e300;
  auto take = [&](double x, double y) {
    if (x > 0) lx0 = std::min(lx0, std::log10(x)), lx1 = std::max(lx1, std::log10(x));
    if (y > 0) ly0 = std::min(ly0, std::log10(y)), ly1 = std::max(ly1, std::log10(y));
  };
  for (const auto& c : ceilings)
    for (const auto& r : roofs) take(r.flops_per_s / c.bytes_per_s, r.flops_per_s);
  for (const auto& p : points) take(p.intensity, p.flops_per_s);
  if (lx0 > lx1) lx0 = -2, lx1 = 3;
  if (ly0 > ly1) ly0 = 9, ly1 = 15;
  *x_min = std::floor(lx0) - 1;
  *x_max = std::ceil(lx1) + 1;
  *y_max = std::ceil(ly1 + 0.1);
  *y_min = std::min(std::floor(ly0) - 0.5, *y_max - 6);
}

std::vector<RooflinePoint> PlaceOnRoofline(const RooflineModel& model,
                                           std::span<const KernelAnalysis> analyses, MemoryLevel level,
                                           std::span<const double> total_time_s) {
  std::vector<RooflinePoint> out;
  const size_t l = static_cast<size_t>(level);
  for (size_t i = 0; i < analyses.size(); ++i) {
    const KernelAnalysis& a = analyses[i];
    if (!a.intensity[l] || !a.flops_per_s || a.total_flops <= 0) continue;
    RooflinePoint p;
    p.analysis_index = i;
    p.kernel_name = a.kernel_name;
    p.level = level;
    p.precision = a.main_precision;
    p.intensity = a.intensity[l].value;
    p.flops_per_s = a.flops_per_s.value;
    p.attainable = model.Attainable(p.intensity, level, p.precision);
    p.pct_of_roof = p.attainable > 0 ? p.flops_per_s / p.attainable : 0;
    double ridge = model.Ridge(level, p.precision);
    p.memory_side = ridge > 0 && p.intensity < ridge;
    p.total_time_s = i < total_time_s.size() ? total_time_s[i] : (a.time_s ? a.time_s.value * a.launches : 0);
    out.push_back(p);
  }
  double largest = 0;
  for (const auto& p : out) largest = std::max(largest, p.total_time_s);
  for (auto& p : out) p.radius = largest > 0 ? std::sqrt(p.total_time_s / largest) : 1;
  return out;
}

int PickRooflinePoint(std::span<const RooflinePoint> points, double log_x, double log_y, double pick_radius) {
  int best = -1;
  double best_d = pick_radius * pick_radius;
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].intensity <= 0 || points[i].flops_per_s <= 0) continue;
    double dx = std::log10(points[i].intensity) - log_x;
    double dy = std::log10(points[i].flops_per_s) - log_y;
    double d = dx * dx + dy * dy;
    if (d <= best_d) {
      best_d = d;
      best = static_cast<int>(i);
    }
  }
  return best;
}

}  // namespace gt
