// [SECTION] state      building the analyses once per loaded trace
// [SECTION] panel      the kernel details section: verdict, SOL bars, occupancy, caches, stall chart, flags
// [SECTION] roofline   the log-log chart: ceilings, roofs, points sized by total GPU time, hover and click
// [SECTION] pc sampling the kernel's PC-sampling histogram (gcollect --pc-sampling) and its hot-spot table
#include "ui/counters/counters_view.h"

#include "ui/app.h"
#include "ui/teamui.h"

#include "gt/viewer/json.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace gt::ui {
namespace {

constexpr ImU32 kMemoryColor = IM_COL32(86, 156, 214, 255);
constexpr ImU32 kComputeColor = IM_COL32(214, 132, 86, 255);
constexpr ImU32 kSuspectColor = IM_COL32(230, 180, 40, 255);
constexpr ImVec4 kFlagText = ImVec4(0.95f, 0.72f, 0.2f, 1.0f);

ImU32 PrecisionColor(Precision p) {
  switch (p) {
    case Precision::kFp64:
      return IM_COL32(200, 90, 200, 255);
    case Precision::kFp32:
      return IM_COL32(230, 120, 60, 255);
    case Precision::kFp16:
    case Precision::kBf16:
      return IM_COL32(220, 200, 60, 255);
    case Precision::kFp64Tensor:
      return IM_COL32(150, 80, 230, 255);
    case Precision::kTf32Tensor:
      return IM_COL32(90, 200, 120, 255);
    case Precision::kFp16Tensor:
    case Precision::kBf16Tensor:
      return IM_COL32(60, 190, 220, 255);
    default:
      return IM_COL32(180, 180, 180, 255);
  }
}

ImVec4 BottleneckColor(Bottleneck b) {
  switch (b) {
    case Bottleneck::kMemory:
      return ImVec4(0.45f, 0.70f, 1.0f, 1.0f);
    case Bottleneck::kCompute:
      return ImVec4(1.0f, 0.62f, 0.40f, 1.0f);
    case Bottleneck::kLatency:
      return ImVec4(0.95f, 0.85f, 0.35f, 1.0f);
    case Bottleneck::kLaunch:
      return ImVec4(0.75f, 0.75f, 0.75f, 1.0f);
    default:
      return ImVec4(0.7f, 0.7f, 0.7f, 1.0f);
  }
}

std::string Title(std::string_view key) {
  const StallReasonInfo* info = FindStallReason(key);
  return info ? info->title : std::string(key);
}

// A labeled bar; suspect values are drawn in amber with a marker and say why on hover.
void PercentBar(const char* label, const Quantity& q, ImU32 color, const char* detail) {
  ImGui::TextUnformatted(label);
  ImGui::SameLine(130);
  if (!q) {
    ImGui::TextDisabled("not collected");
    return;
  }
  char overlay[96];
  snprintf(overlay, sizeof overlay, "%s%s", FormatPercent(q.value).c_str(),
           q.suspect ? "  (!) impossible" : "");
  ImGui::PushStyleColor(ImGuiCol_PlotHistogram, q.suspect ? kSuspectColor : color);
  ImGui::ProgressBar(static_cast<float>(std::clamp(q.value / 100.0, 0.0, 1.0)), ImVec2(-1, 0), overlay);
  ImGui::PopStyleColor();
  if (ImGui::IsItemHovered() && (detail || q.suspect)) {
    ImGui::BeginTooltip();
    if (detail) ImGui::TextUnformatted(detail);
    if (q.suspect)
      ImGui::TextColored(kFlagText,
                         "Raw value %.1f%% is impossible (counters from different replay passes); "
                         "shown clamped.",
                         q.raw);
    ImGui::EndTooltip();
  }
}

void Row(const char* name, const std::string& value, bool suspect = false) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s", name);
  ImGui::TableNextColumn();
  if (suspect)
    ImGui::TextColored(kFlagText, "%s (!)", value.c_str());
  else
    ImGui::TextUnformatted(value.c_str());
}

std::string Pct(const Quantity& q) {
  return q ? FormatPercent(q.value) : std::string("-");
}

// One bar of a warp-stall chart: the reason's key, its share (0..1) and the text on the bar.
struct StallBar {
  std::string reason;
  double share = 0;
  std::string overlay;
};

// The warp-stall chart of the counters and of PC sampling: one bar per reason (largest first, at most 10,
// stopping after 3 once they fall under 0.5%), meaning and usual fix on hover, then the top real stall's.
void DrawStallChart(const std::vector<StallBar>& bars) {
  if (bars.empty()) return;
  const float width = ImGui::GetContentRegionAvail().x;
  const float label_w = std::min(190.0f, width * 0.4f);
  const double max_share = bars.front().share;
  int shown = 0;
  for (const StallBar& bar : bars) {
    if (bar.share < 0.005 && shown >= 3) break;
    if (++shown > 10) break;
    ImGui::PushID(bar.reason.c_str());
    const StallReasonInfo* info = FindStallReason(bar.reason);
    ImGui::TextUnformatted(Title(bar.reason).c_str());
    ImGui::SameLine(label_w);
    ImGui::PushStyleColor(ImGuiCol_PlotHistogram, info && !info->is_stall ? IM_COL32(120, 170, 120, 255)
                                                                          : IM_COL32(200, 110, 90, 255));
    ImGui::ProgressBar(static_cast<float>(max_share > 0 ? bar.share / max_share : 0), ImVec2(-1, 0),
                       bar.overlay.c_str());
    ImGui::PopStyleColor();
    if (info && ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32);
      ImGui::Text("%s", info->title);
      ImGui::TextWrapped("Meaning: %s", info->meaning);
      ImGui::TextWrapped("Usual fix: %s", info->fix);
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
    ImGui::PopID();
  }
  for (const StallBar& bar : bars) {
    const StallReasonInfo* info = FindStallReason(bar.reason);
    if (!info || !info->is_stall) continue;
    ImGui::TextWrapped("Top stall, %s: %s", info->title, info->meaning);
    ImGui::TextWrapped("Usual fix: %s", info->fix);
    break;
  }
}

}  // namespace

// ---- [SECTION] state
// ------------------------------------------------------------------------------------------

void ResetCountersState(CountersState& s) {
  s = CountersState{};
}

size_t BuildCountersState(CountersState& s, const viewer::ProfiledData& data) {
  ResetCountersState(s);
  s.built_for = &data;
  s.profiled = viewer::AnalyzeProfiledKernels(data);
  s.roofline = BuildRoofline(s.profiled.device);
  s.points = PlaceOnRoofline(s.roofline, s.profiled.kernels, s.level, s.profiled.kernel_total_time_s);
  return s.profiled.launches.size();
}

// ---- [SECTION] panel
// ------------------------------------------------------------------------------------------

bool SelectedKernelOf(App& app, SelectedKernel* out) {
  const viewer::EventId e = app.view().selected;
  if (!app.source() || !e.valid()) return false;
  const viewer::TraceModel& layout = app.source()->layout();
  if (e.lane >= layout.lanes.size() || layout.lanes[e.lane].track >= layout.tracks.size()) return false;
  const viewer::EventInfo* info = app.source()->Event(e);
  if (!info || !info->found || info->kind != viewer::EventKind::kKernel) return false;
  *out = {e, layout.tracks[layout.lanes[e.lane].track].pid, info->name};
  return true;
}

bool DrawKernelCountersPanel(CountersState& s, const SelectedKernel& k) {
  if (s.profiled.launches.empty()) return false;
  const size_t launch = s.profiled.LaunchOf(k.event);
  const bool this_launch = launch != SIZE_MAX;
  const KernelAnalysis* a =
      this_launch ? &s.profiled.launch_analyses[launch] : s.profiled.KernelOf(k.pid, k.name);
  if (!a) return false;

  ImGui::SeparatorText("Hardware counters");
  if (this_launch)
    ImGui::TextDisabled("%s of this kernel, profiled (range profiler%s).",
                        LaunchOrdinalLabel(a->launch_ordinal).c_str(),
                        IsGraphOrdinal(a->launch_ordinal) ? "; the graph was replayed node by node" : "");
  else
    ImGui::TextDisabled("This launch was not profiled: values of the %u profiled launch%s of this kernel.",
                        a->launches, a->launches == 1 ? "" : "es");
  ImGui::PushStyleColor(ImGuiCol_Text, BottleneckColor(a->bottleneck));
  ImGui::TextWrapped("%s", a->verdict.c_str());
  ImGui::PopStyleColor();

  // Speed of light.
  char detail[256];
  snprintf(detail, sizeof detail, "%s",
           a->sol_from_hardware ? "sm__throughput (% of peak)"
                                : "max of FLOP/s of each precision and issue slots, "
                                  "in % of peak");
  PercentBar("Compute (SM)", a->compute_pct, kComputeColor, detail);
  snprintf(detail, sizeof detail, "busiest memory level: %s", MemoryLevelName(a->memory_level));
  PercentBar("Memory", a->memory_pct, kMemoryColor, detail);
  for (size_t l = 0; l < kMemoryLevelCount; ++l) {
    if (!a->bandwidth_pct[l]) continue;
    std::string label = std::string("  ") + MemoryLevelName(static_cast<MemoryLevel>(l)) + " bandwidth";
    PercentBar(label.c_str(), a->bandwidth_pct[l], kMemoryColor, nullptr);
  }

  if (ImGui::BeginTable("##counters", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
    ImGui::TableSetupColumn("Metric", ImGuiTableColumnFlags_WidthFixed, 190);
    ImGui::TableSetupColumn("Value", ImGuiTableColumnFlags_WidthStretch);
    if (a->time_s) Row("Duration (replayed)", FormatDuration(a->time_s.value * 1e9));
    if (a->flops_per_s) {
      size_t p = static_cast<size_t>(a->main_precision);
      Row("Compute", FormatRate(a->flops_per_s.value, "FLOP/s") + "  (" + PrecisionName(a->main_precision) +
                         (a->flops_pct[p] ? ": " + FormatPercent(a->flops_pct[p].value) + " of peak)" : ")"));
    }
    if (a->intensity[0]) {
      char buf[64];
      snprintf(buf, sizeof buf, "%.3g FLOP/B (DRAM)", a->intensity[0].value);
      Row("Arithmetic intensity", buf);
    }
    if (a->dram_read_bytes || a->dram_write_bytes)
      Row("DRAM bytes", FormatBytes(a->dram_read_bytes.value) + " read, " +
                            FormatBytes(a->dram_write_bytes.value) + " written");
    if (a->bandwidth[0]) Row("DRAM throughput", FormatRate(a->bandwidth[0].value, "B/s"));
    Row("L1 hit rate", Pct(a->l1_hit_pct), a->l1_hit_pct.suspect);
    Row("L2 hit rate", Pct(a->l2_hit_pct), a->l2_hit_pct.suspect);
    if (a->achieved_occupancy_pct || a->occupancy.valid) {
      std::string occ = Pct(a->achieved_occupancy_pct) + " achieved";
      if (a->occupancy.valid) occ += " of " + FormatPercent(a->occupancy.theoretical_pct) + " theoretical";
      Row("Occupancy", occ, a->achieved_occupancy_pct.suspect);
      if (a->occupancy.valid) {
        Row("Limited by",
            std::string(OccupancyLimiterName(a->occupancy.limiter)) + ": " + a->occupancy.explanation);
        if (a->occupancy.grid_too_small) {
          char buf[96];
          snprintf(buf, sizeof buf, "%.2f waves: the grid does not fill the GPU", a->occupancy.waves);
          Row("Grid", buf);
        }
      }
    }
    if (a->sectors_per_request_ld) {
      char buf[64];
      snprintf(buf, sizeof buf, "%.1f per load request (4 ideal for 4-byte loads)",
               a->sectors_per_request_ld.value);
      Row("Global sectors", buf, a->sectors_per_request_ld.suspect);
    }
    if (a->bank_conflict_ratio && a->bank_conflict_ratio.value > 0)
      Row("Shared bank conflicts", FormatPercent(100 * a->bank_conflict_ratio.value) + " of wavefronts",
          a->bank_conflict_ratio.suspect);
    if (a->active_threads_per_warp) {
      char buf[64];
      snprintf(buf, sizeof buf, "%.1f of 32", a->active_threads_per_warp.value);
      Row("Active threads / instr.", buf, a->active_threads_per_warp.suspect);
    }
    if (a->atomics && a->atomics.value > 0) Row("Global atomics", FormatRate(a->atomics.value, ""));
    ImGui::EndTable();
  }

  // Warp-stall breakdown: one bar per reason (share of warp cycles), meaning + fix on hover and for the top
  // one.
  if (!a->stalls.empty()) {
    ImGui::SeparatorText("Warp stalls (share of warp cycles, cycles per issued instruction)");
    std::vector<StallBar> bars;
    for (const auto& st : a->stalls) {
      char overlay[64];
      snprintf(overlay, sizeof overlay, "%s  (%.3g cyc/instr)", FormatPercent(100 * st.share).c_str(),
               st.per_issued);
      bars.push_back({st.reason, st.share, overlay});
    }
    DrawStallChart(bars);
  }

  if (!a->flags.empty()) {
    ImGui::SeparatorText("Flagged values");
    for (const auto& f : a->flags) ImGui::TextColored(kFlagText, "(!) %s", f.message.c_str());
  }
  return true;
}

// ---- [SECTION] roofline
// ---------------------------------------------------------------------------------------

namespace {

// Labels on the chart must not cover each other: when kernels sit close (or two roofs have the same height,
// such as FP32 and FP64 tensor on Hopper) drawn-where-it-falls text overprints into an unreadable blot.
// Greedy placement, most important first: each label takes the first candidate spot that stays inside the
// plot and touches no box taken so far (points, earlier labels); a kernel label that finds none is left out
// (hovering the point names it).
struct LabelBoxes {
  std::vector<ImVec4> taken;  // (x0, y0, x1, y1)
  ImVec2 lo, hi;              // the plot area
  bool Free(const ImVec4& r) const {
    if (r.x < lo.x || r.y < lo.y || r.z > hi.x || r.w > hi.y) return false;
    for (const ImVec4& t : taken)
      if (r.x < t.z && t.x < r.z && r.y < t.w && t.y < r.w) return false;
    return true;
  }
  // The first free spot among `candidates` (top-left corners) for a label of `size`; takes it.
  bool Place(std::span<const ImVec2> candidates, ImVec2 size, ImVec2* at) {
    for (const ImVec2& c : candidates) {
      ImVec4 r(c.x, c.y, c.x + size.x, c.y + size.y);
      if (!Free(r)) continue;
      taken.push_back(r);
      *at = c;
      return true;
    }
    return false;
  }
};

// "copy_float4(float4 const*, float4*, unsigned long)" -> "copy_float4"; templates and namespaces cut too.
std::string ShortKernelName(const std::string& name) {
  std::string n = name.substr(0, name.find('('));
  if (size_t lt = n.find('<'); lt != std::string::npos) n = n.substr(0, lt);
  if (size_t ns = n.rfind("::"); ns != std::string::npos) n = n.substr(ns + 2);
  if (size_t sp = n.rfind(' '); sp != std::string::npos) n = n.substr(sp + 1);
  if (n.empty()) n = name;
  // Middle cut: kernels of one family differ at the end (_variant_10 vs _variant_11).
  if (n.size() > 30) n = n.substr(0, 13) + "~" + n.substr(n.size() - 16);
  return n;
}

constexpr size_t kMaxPointLabels = 12;  // the rest are named on hover

}  // namespace

viewer::EventId DrawRooflineWindow(CountersState& s) {
  viewer::EventId clicked;
  if (s.profiled.kernels.empty()) {
    ImGui::TextDisabled("No kernel counters in this trace: collect them with gcollect --counters -- ./app");
    return clicked;
  }
  if (s.roofline.ceilings.empty() || s.roofline.roofs.empty()) {
    ImGui::TextDisabled("The trace has no device peaks, so there is no roofline to draw.");
    return clicked;
  }
  int level = static_cast<int>(s.level);
  ImGui::SetNextItemWidth(120);
  if (ImGui::Combo("Bytes at", &level, "DRAM\0L2\0L1\0")) {
    s.level = static_cast<MemoryLevel>(level);
    s.points = PlaceOnRoofline(s.roofline, s.profiled.kernels, s.level, s.profiled.kernel_total_time_s);
    s.hovered = s.selected = -1;
  }
  ImGui::SameLine();
  ImGui::TextDisabled(
      "%zu of %zu profiled kernels placed; size = total GPU time; click selects it in the timeline",
      s.points.size(), s.profiled.kernels.size());

  ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImVec2 size = ImGui::GetContentRegionAvail();
  size.x = std::max(size.x, 200.0f);
  size.y = std::max(size.y, 160.0f);
  ImGui::InvisibleButton("##roofline", size);
  const bool hovered_canvas = ImGui::IsItemHovered();
  const bool clicked_canvas = ImGui::IsItemClicked(ImGuiMouseButton_Left);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float left = 60, bottom = 30;
  ImVec2 a(p0.x + left, p0.y + 6), b(p0.x + size.x - 10, p0.y + size.y - bottom);
  dl->AddRectFilled(a, b, IM_COL32(25, 25, 30, 255));
  double x0, x1, y0, y1;
  s.roofline.Bounds(s.points, &x0, &x1, &y0, &y1);
  auto X = [&](double lx) { return a.x + float((lx - x0) / (x1 - x0)) * (b.x - a.x); };
  auto Y = [&](double ly) { return b.y - float((ly - y0) / (y1 - y0)) * (b.y - a.y); };
  // Grid and decade labels.
  char buf[64];
  for (double d = std::ceil(x0); d <= x1; d += 1) {
    dl->AddLine(ImVec2(X(d), a.y), ImVec2(X(d), b.y), IM_COL32(60, 60, 70, 255));
    snprintf(buf, sizeof buf, "%g", std::pow(10.0, d));
    dl->AddText(ImVec2(X(d) - 8, b.y + 4), IM_COL32(170, 170, 170, 255), buf);
  }
  for (double d = std::ceil(y0); d <= y1; d += 1) {
    dl->AddLine(ImVec2(a.x, Y(d)), ImVec2(b.x, Y(d)), IM_COL32(60, 60, 70, 255));
    dl->AddText(ImVec2(p0.x + 2, Y(d) - 7), IM_COL32(170, 170, 170, 255),
                FormatRate(std::pow(10.0, d), "FLOP/s").c_str());
  }
  dl->AddText(ImVec2(b.x - 190, b.y + 14), IM_COL32(170, 170, 170, 255), "arithmetic intensity (FLOP/byte)");
  dl->PushClipRect(a, b, true);
  LabelBoxes boxes;
  boxes.lo = ImVec2(a.x + 2, a.y + 2);
  boxes.hi = ImVec2(b.x - 2, b.y - 2);
  const float line_h = ImGui::GetTextLineHeight();
  // Points first, so that no roof or kernel label hides one.
  for (const RooflinePoint& pt : s.points) {
    ImVec2 c(X(std::log10(pt.intensity)), Y(std::log10(pt.flops_per_s)));
    float r = 4.0f + 14.0f * static_cast<float>(pt.radius);
    boxes.taken.push_back(ImVec4(c.x - r, c.y - r, c.x + r, c.y + r));
  }
  // Ceilings: bandwidth x intensity up to the highest roof; roofs: flat from their ridge with this level.
  const double top = s.roofline.roofs.front().flops_per_s;
  for (const auto& c : s.roofline.ceilings) {
    const bool active = c.level == s.level;
    ImU32 col = active ? IM_COL32(120, 180, 255, 255) : IM_COL32(90, 120, 160, 140);
    double lx_end = std::log10(top / c.bytes_per_s);
    dl->AddLine(ImVec2(X(x0), Y(std::log10(c.bytes_per_s) + x0)), ImVec2(X(lx_end), Y(std::log10(top))), col,
                active ? 2.0f : 1.0f);
    snprintf(buf, sizeof buf, "%s %s", MemoryLevelName(c.level), FormatRate(c.bytes_per_s, "B/s").c_str());
    // Along its line, further right when the spot near the left edge is taken.
    const ImVec2 ts = ImGui::CalcTextSize(buf);
    ImVec2 spots[8], at;
    for (int k = 0; k < 8; ++k) {
      double lx = x0 + 0.3 + 0.45 * k;
      spots[k] = ImVec2(X(lx), Y(std::log10(c.bytes_per_s) + lx) - ts.y - 2);
    }
    if (boxes.Place(spots, ts, &at)) dl->AddText(at, col, buf);
  }
  const double bw = s.roofline.Bandwidth(s.level);
  for (const auto& r : s.roofline.roofs) {
    if (r.precision == Precision::kBf16 || r.precision == Precision::kFp16Tensor)
      continue;  // same as fp16 / bf16 tc
    ImU32 col = PrecisionColor(r.precision);
    double ridge = bw > 0 ? std::log10(r.flops_per_s / bw) : x0;
    dl->AddLine(ImVec2(X(ridge), Y(std::log10(r.flops_per_s))), ImVec2(X(x1), Y(std::log10(r.flops_per_s))),
                col, 1.5f);
    snprintf(buf, sizeof buf, "%s %s", PrecisionName(r.precision),
             FormatRate(r.flops_per_s, "FLOP/s").c_str());
    // Above its line at the right edge; equal or close roofs (the tensor roofs crowd the top of a short
    // chart) take the next free spot: below the line, then further left along it, then one line further away.
    const ImVec2 ts = ImGui::CalcTextSize(buf);
    const float ry = Y(std::log10(r.flops_per_s));
    ImVec2 spots[24];
    int n_spots = 0;
    for (int away = 0; away < 2; ++away)
      for (int k = 0; k < 6; ++k) {
        const float rx = X(x1) - 6 - ts.x - k * (ts.x + 10);
        const float up = ry - ts.y - 1 - away * (ts.y + 1), down = ry + 2 + away * (ts.y + 1);
        spots[n_spots++] = ImVec2(rx, up);
        spots[n_spots++] = ImVec2(rx, down);
      }
    ImVec2 at;
    if (boxes.Place(std::span<const ImVec2>(spots, n_spots), ts, &at)) dl->AddText(at, col, buf);
  }
  // Points.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  s.hovered = -1;
  if (hovered_canvas) {
    double lx = x0 + (mouse.x - a.x) / (b.x - a.x) * (x1 - x0);
    double ly = y0 + (b.y - mouse.y) / (b.y - a.y) * (y1 - y0);
    double per_px = (x1 - x0) / std::max(1.0f, b.x - a.x);
    s.hovered = PickRooflinePoint(s.points, lx, ly, 14 * per_px);
  }
  for (size_t i = 0; i < s.points.size(); ++i) {
    const RooflinePoint& pt = s.points[i];
    ImVec2 c(X(std::log10(pt.intensity)), Y(std::log10(pt.flops_per_s)));
    float r = 4.0f + 14.0f * static_cast<float>(pt.radius);
    dl->AddCircleFilled(c, r, (PrecisionColor(pt.precision) & 0x00FFFFFF) | 0xB0000000);
    const bool flagged = !s.profiled.kernels[pt.analysis_index].flags.empty();
    dl->AddCircle(c, r, flagged ? kSuspectColor : IM_COL32(255, 255, 255, 200), 0,
                  (int(i) == s.hovered || int(i) == s.selected) ? 2.5f : 1.0f);
  }
  // Kernel names: the selected point, then the largest by total GPU time, up to kMaxPointLabels; each at the
  // first free spot around its point, with a leader line when it had to move away; no free spot, no label.
  std::vector<size_t> order(s.points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if ((int(x) == s.selected) != (int(y) == s.selected)) return int(x) == s.selected;
    return s.points[x].total_time_s > s.points[y].total_time_s;
  });
  size_t labeled = 0;
  for (size_t i : order) {
    if (labeled >= kMaxPointLabels) break;
    const RooflinePoint& pt = s.points[i];
    const std::string label = ShortKernelName(pt.kernel_name);
    const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    const ImVec2 c(X(std::log10(pt.intensity)), Y(std::log10(pt.flops_per_s)));
    const float r = 4.0f + 14.0f * static_cast<float>(pt.radius) + 3;
    const float far = r + line_h;
    const ImVec2 spots[] = {ImVec2(c.x + r, c.y - ts.y / 2),
                            ImVec2(c.x - r - ts.x, c.y - ts.y / 2),
                            ImVec2(c.x - ts.x / 2, c.y - r - ts.y),
                            ImVec2(c.x - ts.x / 2, c.y + r),
                            ImVec2(c.x + r, c.y - r - ts.y),
                            ImVec2(c.x + r, c.y + r),
                            ImVec2(c.x - r - ts.x, c.y - r - ts.y),
                            ImVec2(c.x - r - ts.x, c.y + r),
                            ImVec2(c.x + far, c.y - far - ts.y),
                            ImVec2(c.x + far, c.y + far),
                            ImVec2(c.x - far - ts.x, c.y - far - ts.y),
                            ImVec2(c.x - far - ts.x, c.y + far),
                            ImVec2(c.x - ts.x / 2, c.y - far - 2 * ts.y),
                            ImVec2(c.x - ts.x / 2, c.y + far + ts.y)};
    ImVec2 at;
    if (!boxes.Place(spots, ts, &at)) continue;
    ++labeled;
    const ImVec2 mid(at.x + ts.x / 2, at.y + ts.y / 2);
    const float dx = mid.x - c.x, dy = mid.y - c.y;
    if (dx * dx + dy * dy > (r + ts.x / 2 + 4) * (r + ts.x / 2 + 4)) {  // moved off its point: leader line
      const ImVec2 end(std::clamp(c.x, at.x, at.x + ts.x), std::clamp(c.y, at.y, at.y + ts.y));
      dl->AddLine(c, end, IM_COL32(200, 200, 200, 120));
    }
    dl->AddText(at, int(i) == s.selected ? IM_COL32(255, 255, 255, 255) : IM_COL32(220, 220, 220, 230),
                label.c_str());
  }
  dl->PopClipRect();
  if (labeled < s.points.size()) {
    char note[96];
    snprintf(note, sizeof note, "%zu of %zu named (largest first); hover for the rest", labeled,
             s.points.size());
    dl->AddText(ImVec2(a.x + 4, b.y + 14), IM_COL32(150, 150, 150, 255), note);
  }
  if (s.hovered >= 0) {
    const RooflinePoint& pt = s.points[s.hovered];
    const KernelAnalysis& k = s.profiled.kernels[pt.analysis_index];
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(pt.kernel_name.c_str());
    ImGui::Text("%s at %.3g FLOP/B (%s)  -  %s of the roof", FormatRate(pt.flops_per_s, "FLOP/s").c_str(),
                pt.intensity, MemoryLevelName(pt.level), FormatPercent(100 * pt.pct_of_roof).c_str());
    ImGui::Text("%s side of the %s ridge; total GPU time %s over %u profiled launch%s",
                pt.memory_side ? "memory" : "compute", PrecisionName(pt.precision),
                FormatDuration(pt.total_time_s * 1e9).c_str(), k.launches, k.launches == 1 ? "" : "es");
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
    ImGui::TextWrapped("%s", k.verdict.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
    if (clicked_canvas) {
      s.selected = s.hovered;
      if (pt.analysis_index < s.profiled.kernel_first_event.size())
        clicked = s.profiled.kernel_first_event[pt.analysis_index];
    }
  }
  return clicked;
}

// ---- [SECTION] pc sampling
// ------------------------------------------------------------------------------------------

void BuildPcSamplingState(PcSamplingState& s, const viewer::ProfiledData& data) {
  s = PcSamplingState{};
  s.built_for = &data;
  s.profiles = BuildPcSamplingProfiles(data.stall_samples,
                                       [&](StringId id) -> std::string_view { return data.Str(id); });
}

bool DrawPcSamplingPanel(PcSamplingState& s, const SelectedKernel& k) {
  if (s.profiles.empty()) return false;
  const PcSamplingProfile* p = FindPcSamplingProfile(s.profiles, k.pid, k.name);
  if (!p) return false;

  ImGui::SeparatorText("Warp states (PC sampling, all launches of this kernel)");
  ImGui::TextDisabled("%llu samples at %u PCs; %s of them with a source line%s",
                      static_cast<unsigned long long>(p->samples), p->distinct_pcs,
                      FormatPercent(100 * p->line_coverage).c_str(),
                      p->line_coverage == 0 ? " (build with -lineinfo to see lines)" : "");
  ImGui::TextWrapped("%s", p->summary.c_str());

  // Same chart as the counters' stall breakdown: one bar per reason, meaning and fix on hover.
  std::vector<StallBar> bars;
  for (const auto& r : p->reasons) {
    char overlay[64];
    snprintf(overlay, sizeof overlay, "%s  (%llu samples)", FormatPercent(100 * r.share).c_str(),
             static_cast<unsigned long long>(r.samples));
    bars.push_back({r.reason, r.share, overlay});
  }
  DrawStallChart(bars);

  // Hot spots: source lines when the cubin had line info, else SASS offsets.
  const bool have_lines = !p->by_line.empty();
  if (!have_lines) s.by_line = false;
  ImGui::SeparatorText("Hot spots");
  if (have_lines) {
    if (ImGui::RadioButton("by source line", s.by_line)) s.by_line = true;
    ImGui::SameLine();
    if (ImGui::RadioButton("by SASS offset", !s.by_line)) s.by_line = false;
  }
  const std::vector<PcHotSpot>& spots = s.by_line ? p->by_line : p->by_pc;
  if (ImGui::BeginTable(
          "##pc_hot_spots", 4,
          ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn(s.by_line ? "Line" : "PC offset");
    ImGui::TableSetupColumn("Samples");
    ImGui::TableSetupColumn("Share");
    ImGui::TableSetupColumn("Dominant reason");
    ImGui::TableHeadersRow();
    int rows = 0;
    for (const auto& h : spots) {
      if (++rows > 15) break;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      std::string label = HotSpotLabel(h);
      if (!s.by_line && h.source_line) {
        char pc[32];
        snprintf(pc, sizeof pc, "0x%llx  ", static_cast<unsigned long long>(h.pc_offset));
        label = pc + label;
      }
      ImGui::TextUnformatted(label.c_str());
      if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        if (!h.source_file.empty()) ImGui::Text("%s:%u", h.source_file.c_str(), h.source_line);
        ImGui::Text(
            "%s PC 0x%llx%s", s.by_line ? "hottest" : "SASS", static_cast<unsigned long long>(h.pc_offset),
            s.by_line && h.pcs > 1 ? (" of " + std::to_string(h.pcs) + " PCs on this line").c_str() : "");
        ImGui::EndTooltip();
      }
      ImGui::TableNextColumn();
      ImGui::Text("%llu", static_cast<unsigned long long>(h.samples));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(FormatPercent(100 * h.share).c_str());
      ImGui::TableNextColumn();
      const StallReasonInfo* info = FindStallReason(h.dominant_reason);
      ImGui::Text("%s %s", info ? info->title : h.dominant_reason.c_str(),
                  FormatPercent(100 * h.dominant_share).c_str());
      if (info && ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32);
        ImGui::TextWrapped("Meaning: %s", info->meaning);
        ImGui::TextWrapped("Usual fix: %s", info->fix);
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
      }
    }
    ImGui::EndTable();
  }
  return true;
}

// ---- [SECTION] hooks
// ------------------------------------------------------------------------------------------

namespace {
// The app owns both states and resets them with every load; they are built for the trace's ProfiledData on
// first use (null: a remote trace's are on their way, or the server could not send them).
CountersState* Counters(App& app) {
  const viewer::ProfiledData* data = app.source() ? app.source()->Profiled() : nullptr;
  if (!data) return nullptr;
  CountersState& s = app.counters();
  if (s.built_for != data) BuildCountersState(s, *data);
  return &s;
}

PcSamplingState* PcSampling(App& app) {
  const viewer::ProfiledData* data = app.source() ? app.source()->Profiled() : nullptr;
  if (!data) return nullptr;
  PcSamplingState& s = app.pc_sampling();
  if (s.built_for != data) BuildPcSamplingState(s, *data);
  return &s;
}

// Says why a remote trace's counters are not drawn yet; true when there is nothing to draw.
bool CountersPending(App& app) {
  if (!app.remote() || app.source()->Profiled()) return false;
  const std::string& error = app.remote()->profiled_error();
  if (error.empty())
    ImGui::TextDisabled("Asking the server for the hardware counters...");
  else
    ImGui::TextDisabled("The server could not send the hardware counters: %s", error.c_str());
  return true;
}
}  // namespace

const viewer::ProfiledKernels* ProfiledKernelsOf(App& app) {
  CountersState* s = Counters(app);
  return s ? &s->profiled : nullptr;
}

void DrawCountersDetails(App& app) {
  SelectedKernel k;
  if (!SelectedKernelOf(app, &k) || CountersPending(app)) return;
  if (CountersState* s = Counters(app)) DrawKernelCountersPanel(*s, k);
  if (PcSamplingState* s = PcSampling(app)) DrawPcSamplingPanel(*s, k);
}

void DrawRooflineTab(App& app) {
  if (!app.model()) {
    ImGui::TextDisabled("Open a trace to see its roofline.");
    return;
  }
  if (CountersPending(app)) return;
  CountersState* s = Counters(app);
  if (!s) return;
  if (!s->profiled.launches.empty()) CsvButton(app, "roofline");
  const viewer::EventId e = DrawRooflineWindow(*s);
  if (e.valid() && e.lane < app.source()->layout().lanes.size()) app.Select(e, true);
}

std::string CountersJson(App& app) {
  CountersState* s = Counters(app);
  if (!s) return viewer::KernelCountersJson({}, {}, nullptr, nullptr, nullptr);
  SelectedKernel k;
  const bool kernel = SelectedKernelOf(app, &k);
  const KernelAnalysis* sel = kernel ? s->profiled.KernelOf(k.pid, k.name) : nullptr;
  std::string launch;
  const size_t launch_index = sel ? s->profiled.LaunchOf(k.event) : SIZE_MAX;
  if (launch_index != SIZE_MAX)
    launch = LaunchOrdinalLabel(s->profiled.launches[launch_index].launch_ordinal);
  // PC sampling of the selected kernel (gcollect --pc-sampling), independent of the range-profiler counters.
  PcSamplingState* pc = kernel ? PcSampling(app) : nullptr;
  const PcSamplingProfile* pcs = pc ? FindPcSamplingProfile(pc->profiles, k.pid, k.name) : nullptr;
  return viewer::KernelCountersJson(s->profiled, s->points, sel, launch_index != SIZE_MAX ? &launch : nullptr,
                                    pcs);
}

}  // namespace gt::ui
