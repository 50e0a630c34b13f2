// Two traces on one screen (ui/compare_view.h): B's load, the comparison's numbers (viewer/core compare.h),
// selection across the traces, the Compare tab and the kernel table's delta rows, and their C API JSON.
//
// [SECTION] Loading B
// [SECTION] Alignment and the numbers
// [SECTION] Selection across the traces
// [SECTION] The Compare tab
// [SECTION] The kernel table while comparing
// [SECTION] JSON for the C API
#include "ui/compare_view.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

#include "gt/reader.h"
#include "gt/units.h"
#include "gt/viewer/json.h"
#include "gt/viewer/summary.h"
#include "ui/app.h"
#include "ui/counters/counters_view.h"
#include "ui/teamui.h"

namespace gt::ui {

using viewer::SignedDuration;
using viewer::SignedPercent;

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Loading B
// ---------------------------------------------------------------------------------------------------------------

namespace {

void FreeLoad(CompareState& c) {
  c.loader.reset();
  std::free(c.bytes);
  c.bytes = nullptr;
  c.size = 0;
}

void ResetShown(CompareState& c) {
  c.computed = false;
  c.rows.clear();
  c.steps.clear();
  c.profiled_a.reset();
  c.profiled_b.reset();
  c.counter_pairs.clear();
  c.counter_pair = 0;
  c.counters_b.reset();
  c.data_b.reset();
  c.b_selected = c.a_counterpart = c.b_counterpart = c.a_selected_seen = {};
  c.search = viewer::Search();
  c.search_for.clear();
}

}  // namespace

CompareState::~CompareState() {
  std::free(bytes);
}

void CompareOpenBuffer(App& app, std::string name, uint8_t* data, size_t size) {
  CompareState& c = app.compare();
  FreeLoad(c);
  c.bytes = data;
  c.size = size;
  c.loading_name = std::move(name);
  c.error.clear();
  c.warning.clear();
  c.loader = std::make_unique<viewer::TraceLoader>();
  // One thread: B loads while A is shown (or still loading on the page's worker pool).
  Status st = c.loader->Open(std::span<const uint8_t>(c.bytes, c.size), viewer::LoadOptions{});
  if (!st.ok()) {
    c.error = "Cannot compare with " + c.loading_name + ": " + st.ToString() +
              (c.model ? " (the comparison with " + c.name + " stays)" : "");
    FreeLoad(c);
  }
}

void CompareOpenFile(App& app, const std::string& path) {
  const std::string name = path.substr(path.find_last_of('/') + 1);
  StatusOr<std::string> bytes = ReadFileBytes(path);
  if (!bytes.ok()) {
    app.compare().error = "Cannot compare with " + name + ": " + bytes.status().ToString();
    return;
  }
  auto* data = static_cast<uint8_t*>(std::malloc(std::max<size_t>(1, bytes->size())));
  std::memcpy(data, bytes->data(), bytes->size());
  CompareOpenBuffer(app, name, data, bytes->size());
}

void CompareClose(App& app) {
  CompareState& c = app.compare();
  FreeLoad(c);
  c.model.reset();
  c.name.clear();
  c.warning.clear();
  c.request = viewer::AlignRequest{};
  c.align = viewer::Alignment{};
  c.pending_selected.clear();
  c.has_pending_view = false;
  c.show_panel_when_computed = false;
  ResetShown(c);
}

namespace {

void Recompute(App& app) {
  CompareState& c = app.compare();
  const viewer::TraceModel& a = *app.model();
  const viewer::TraceModel& b = *c.model;
  ResetShown(c);
  c.align = viewer::Align(a, b, c.request);
  c.rows = viewer::CompareKernels(a, b);
  c.steps = viewer::CompareSteps(a, b, c.align.name);
  c.computed = true;
  if (c.show_panel_when_computed) {
    c.show_panel_when_computed = false;
    app.ShowPanel(Panel::kCompare);
  }
  if (c.has_pending_view) {
    c.has_pending_view = false;
    const viewer::EventId e = b.FindEventByKey(c.pending_selected);
    if (e.valid()) CompareSelectB(app, e, false);
    c.pending_selected.clear();
  }
  CompareOnSelectA(app);
}

void InstallB(App& app, std::unique_ptr<viewer::TraceModel> model) {
  CompareState& c = app.compare();
  c.model = std::move(model);
  c.name = c.loading_name;
  c.group_collapsed.assign(c.model->groups.size(), 0);
  c.track_collapsed.resize(c.model->tracks.size());
  for (size_t i = 0; i < c.model->tracks.size(); ++i)
    c.track_collapsed[i] = c.model->tracks[i].default_collapsed;
  c.lane_y.assign(c.model->lanes.size(), -1.0f);
  c.warning.clear();
  if (viewer::HasDataLoss(*c.model))
    c.warning = c.name + " is incomplete (damaged or truncated): its numbers miss what was lost.";
  ResetShown(c);
}

}  // namespace

void CompareStep(App& app) {
  CompareState& c = app.compare();
  if (c.loader) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
    while (!c.loader->done() && std::chrono::steady_clock::now() < deadline) c.loader->Step();
    if (c.loader->done()) {
      StatusOr<std::unique_ptr<viewer::TraceModel>> m = c.loader->Finish();
      FreeLoad(c);
      if (!m.ok())
        c.error = "Cannot compare with " + c.loading_name + ": " + m.status().ToString();
      else
        InstallB(app, std::move(*m));
    }
  }
  if (c.model && app.model() && app.load_state() == LoadState::kLoaded && !c.computed) Recompute(app);
  if (!c.computed) return;
  // A's highlight (search box, kernel row) applies to B too: the same needle, or the same exact name.
  const viewer::Search& sa = app.search().search;
  const std::string key = (sa.exact() ? "=" : "~") + sa.needle();
  if (key != c.search_for) {
    c.search_for = key;
    if (sa.empty())
      c.search = viewer::Search();
    else if (sa.exact())
      c.search = viewer::Search::ExactName(*c.model, viewer::FindString(*c.model, sa.needle()));
    else
      c.search = viewer::Search(*c.model, sa.needle());
    if (sa.exact() && viewer::FindString(*c.model, sa.needle()) == 0) c.search = viewer::Search();
  }
  if (!(app.view().selected == c.a_selected_seen)) CompareOnSelectA(app);
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Alignment and the numbers
// ---------------------------------------------------------------------------------------------------------------

bool CompareSetAlign(App& app, const std::string& spec, std::string* error) {
  StatusOr<viewer::AlignRequest> r = viewer::ParseAlignSpec(spec);
  if (!r.ok()) {
    if (error) *error = r.status().message();
    return false;
  }
  CompareState& c = app.compare();
  c.request = *r;
  c.computed = false;
  if (c.model && app.model() && app.load_state() == LoadState::kLoaded) Recompute(app);
  return true;
}

std::string CompareAlignSpec(const CompareState& c) {
  if (c.request.automatic) return "";
  if (c.request.name.empty()) return "start";
  return c.request.name + ":" + std::to_string(c.request.ordinal + 1);
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Selection across the traces
// ---------------------------------------------------------------------------------------------------------------

void CompareOnSelectA(App& app) {
  CompareState& c = app.compare();
  const viewer::EventId e = app.view().selected;
  c.a_selected_seen = e;
  c.b_counterpart = {};
  if (!c.computed || !e.valid()) return;
  c.b_selected = {};  // one selection at a time: A's now
  c.a_counterpart = {};
  c.b_counterpart = viewer::Counterpart(*app.model(), e, *c.model, c.align.name);
}

void CompareSelectB(App& app, viewer::EventId e, bool reveal) {
  CompareState& c = app.compare();
  if (!c.model) return;
  c.b_selected = e;
  c.a_counterpart = {};
  if (e.valid()) {
    app.Select({}, false);
    c.a_selected_seen = {};
    c.b_counterpart = {};
    c.a_counterpart = viewer::Counterpart(*c.model, e, *app.model(), c.align.name);
    app.ShowPanel(Panel::kCompare);
    if (reveal) {
      const viewer::Lane& lane = c.model->lanes[e.lane];
      const viewer::Track& track = c.model->tracks[lane.track];
      if (track.group < c.group_collapsed.size()) c.group_collapsed[track.group] = 0;
      const double s = double(c.model->Start(e)) + c.offset(), end = double(c.model->End(e)) + c.offset();
      const double span = app.view().t1 - app.view().t0;
      if (s < app.view().t0 || end > app.view().t1 || (end - s) > span)
        app.FitRange(s, end + std::max(0.0, span * 0.5 - (end - s)), 0.1);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] The Compare tab
// ---------------------------------------------------------------------------------------------------------------

namespace {

ImVec4 DeltaColor(int64_t delta) {
  if (delta < 0) return ImVec4(0.45f, 0.85f, 0.45f, 1);  // faster
  if (delta > 0) return ImVec4(0.95f, 0.45f, 0.40f, 1);  // slower
  return ImVec4(0.7f, 0.7f, 0.7f, 1);
}

void DrawAlignControls(App& app) {
  CompareState& c = app.compare();
  ImGui::TextWrapped("%s", c.align.reason.c_str());
  ImGui::TextDisabled("B is shifted by %s to sit on A's time axis.",
                      SignedDuration(c.align.offset_ns).c_str());
  static char name[128] = {};
  static int ordinal = 2;
  static const CompareState* seeded = nullptr;
  if (seeded != &c || (name[0] == 0 && !c.align.name.empty())) {
    seeded = &c;
    std::snprintf(name, sizeof name, "%s", c.align.name.c_str());
    ordinal = int(c.align.ordinal) + 1;
  }
  ImGui::SetNextItemWidth(180);
  ImGui::InputTextWithHint("##alignname", "NVTX range name", name, sizeof name);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  ImGui::InputInt("instance##alignord", &ordinal);
  ordinal = std::max(1, ordinal);
  ImGui::SameLine();
  if (ImGui::Button("Align") && name[0])
    CompareSetAlign(app, std::string(name) + ":" + std::to_string(ordinal), nullptr);
  ImGui::SameLine();
  if (ImGui::Button("Align on start")) CompareSetAlign(app, "start", nullptr);
  ImGui::SameLine();
  if (ImGui::Button("Automatic")) {
    CompareSetAlign(app, "", nullptr);
    name[0] = 0;
  }
}

void DrawSteps(App& app) {
  CompareState& c = app.compare();
  if (c.align.name.empty()) {
    ImGui::TextDisabled("Per-step deltas need an NVTX range to align on.");
    return;
  }
  ImGui::Text("Per '%s' (%zu instances, paired by ordinal)", c.align.name.c_str(), c.steps.size());
  ImGui::SameLine();
  CsvButton(app, "compare-steps");
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("##steps", 7, flags, ImVec2(0, 160))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* h : {"#", "A", "B", "Delta", "Kernels A", "Kernels B", "Kernel delta"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  auto dur = [](bool in, int64_t ns) { return in ? FormatDuration(double(ns)) : std::string("-"); };
  ImGuiListClipper clip;
  clip.Begin(int(c.steps.size()));
  while (clip.Step())
    for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
      const viewer::StepDelta& s = c.steps[size_t(i)];
      const bool both = s.in_a && s.in_b;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(i);
      if (ImGui::Selectable(std::to_string(s.ordinal + 1).c_str(), s.ordinal == c.align.ordinal,
                            ImGuiSelectableFlags_SpanAllColumns) &&
          s.in_a) {
        const auto inst = viewer::RangeInstances(*app.model(), c.align.name);
        if (s.ordinal < inst.size())
          app.FitRange(double(inst[s.ordinal].start), double(inst[s.ordinal].end), 0.05);
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("Click: zoom to this step of A (B's is drawn under it)");
      ImGui::PopID();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(dur(s.in_a, s.a_ns).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(dur(s.in_b, s.b_ns).c_str());
      ImGui::TableNextColumn();
      if (both)
        ImGui::TextColored(DeltaColor(s.delta_ns()), "%s (%s)", SignedDuration(s.delta_ns()).c_str(),
                           SignedPercent(double(s.a_ns), double(s.b_ns)).c_str());
      else
        ImGui::TextDisabled("-");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(dur(s.in_a, s.a_kernel_ns).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(dur(s.in_b, s.b_kernel_ns).c_str());
      ImGui::TableNextColumn();
      if (both)
        ImGui::TextColored(DeltaColor(s.kernel_delta_ns()), "%s",
                           SignedDuration(s.kernel_delta_ns()).c_str());
      else
        ImGui::TextDisabled("-");
    }
  ImGui::EndTable();
}

void DrawSelectionPair(App& app) {
  CompareState& c = app.compare();
  const viewer::TraceModel& a = *app.model();
  const viewer::TraceModel& b = *c.model;
  viewer::EventId ea = app.view().selected, eb = c.b_counterpart;
  if (c.b_selected.valid()) ea = c.a_counterpart, eb = c.b_selected;
  if (!ea.valid() && !eb.valid()) {
    ImGui::TextDisabled("Select a kernel in either trace: its counterpart in the other is outlined.");
    return;
  }
  const std::string& name = ea.valid() ? a.Str(a.Name(ea)) : b.Str(b.Name(eb));
  ImGui::Text("Selected: %s", name.c_str());
  const auto place =
      ea.valid() ? viewer::PlaceOfKernel(a, ea, c.align.name) : viewer::PlaceOfKernel(b, eb, c.align.name);
  if (place) {
    if (place->step >= 0)
      ImGui::TextDisabled("instance %llu of this name in '%s' %lld", (unsigned long long)place->ordinal + 1,
                          c.align.name.c_str(), (long long)place->step + 1);
    else
      ImGui::TextDisabled("instance %llu of this name", (unsigned long long)place->ordinal + 1);
  }
  const int64_t da = ea.valid() ? a.End(ea) - a.Start(ea) : 0, db = eb.valid() ? b.End(eb) - b.Start(eb) : 0;
  ImGui::Text("A: %s", ea.valid() ? FormatDuration(double(da)).c_str() : "no counterpart");
  ImGui::SameLine(220);
  ImGui::Text("B: %s", eb.valid() ? FormatDuration(double(db)).c_str() : "no counterpart");
  if (ea.valid() && eb.valid()) {
    ImGui::SameLine(440);
    ImGui::TextColored(DeltaColor(db - da), "%s (%s)", SignedDuration(db - da).c_str(),
                       SignedPercent(double(da), double(db)).c_str());
  }
}

// ncu's baseline view of one kernel: A's roofline (DRAM ceiling and the roof of the kernel's main precision),
// A's point and B's, and an arrow from A to B, so a change reads as a move (right: fewer bytes per FLOP, up:
// faster).
void DrawPairRoofline(const viewer::ProfiledKernels& pa, const KernelAnalysis* a, const KernelAnalysis* b) {
  const auto dram = static_cast<size_t>(MemoryLevel::kDram);
  auto placed = [&](const KernelAnalysis* k) {
    return k && k->intensity[dram] && k->flops_per_s && k->intensity[dram].value > 0 &&
           k->flops_per_s.value > 0;
  };
  const RooflineModel model = BuildRoofline(pa.device);
  if (!placed(a) && !placed(b)) return;
  if (model.ceilings.empty() || model.roofs.empty()) return;
  RooflinePoint pts[2];
  size_t n = 0;
  for (const KernelAnalysis* k : {a, b})
    if (placed(k))
      pts[n].intensity = k->intensity[dram].value, pts[n].flops_per_s = k->flops_per_s.value, ++n;
  double x0, x1, y0, y1;
  model.Bounds(std::span<const RooflinePoint>(pts, n), &x0, &x1, &y0, &y1);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const ImVec2 size(std::min(ImGui::GetContentRegionAvail().x, 520.0f), 170.0f);
  ImGui::Dummy(size);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 lo(p0.x + 4, p0.y + 4), hi(p0.x + size.x - 4, p0.y + size.y - 16);
  dl->AddRectFilled(lo, hi, IM_COL32(25, 25, 30, 255));
  auto X = [&](double lx) { return lo.x + float((lx - x0) / (x1 - x0)) * (hi.x - lo.x); };
  auto Y = [&](double ly) { return hi.y - float((ly - y0) / (y1 - y0)) * (hi.y - lo.y); };
  dl->PushClipRect(lo, hi, true);
  const Precision prec = (a && placed(a)) ? a->main_precision : b->main_precision;
  const double peak = model.Peak(prec) > 0 ? model.Peak(prec) : model.roofs.front().flops_per_s;
  const double bw = model.Bandwidth(MemoryLevel::kDram);
  const double ridge = std::log10(peak / bw);
  const ImU32 roof = IM_COL32(120, 180, 255, 255);
  dl->AddLine(ImVec2(X(x0), Y(std::log10(bw) + x0)), ImVec2(X(ridge), Y(std::log10(peak))), roof, 2.0f);
  dl->AddLine(ImVec2(X(ridge), Y(std::log10(peak))), ImVec2(X(x1), Y(std::log10(peak))), roof, 2.0f);
  const ImU32 col_a = IM_COL32(80, 200, 255, 255), col_b = IM_COL32(230, 110, 230, 255);
  ImVec2 at[2];
  for (size_t i = 0, j = 0; i < 2; ++i) {
    const KernelAnalysis* k = i == 0 ? a : b;
    if (!placed(k)) continue;
    at[i] = ImVec2(X(std::log10(pts[j].intensity)), Y(std::log10(pts[j].flops_per_s)));
    ++j;
  }
  if (placed(a) && placed(b)) dl->AddLine(at[0], at[1], IM_COL32(220, 220, 220, 200), 1.5f);
  for (size_t i = 0; i < 2; ++i) {
    if (!placed(i == 0 ? a : b)) continue;
    dl->AddCircleFilled(at[i], 6, i == 0 ? col_a : col_b);
    dl->AddText(ImVec2(at[i].x + 8, at[i].y - 8), i == 0 ? col_a : col_b, i == 0 ? "A" : "B");
  }
  dl->PopClipRect();
  char label[96];
  std::snprintf(label, sizeof label, "DRAM %s, %s %s (A's GPU)", FormatRate(bw, "B/s").c_str(),
                PrecisionName(prec), FormatRate(peak, "FLOP/s").c_str());
  dl->AddText(ImVec2(lo.x, hi.y + 2), IM_COL32(170, 170, 170, 255), label);
}

void DrawCountersSideBySide(App& app) {
  CompareState& c = app.compare();
  const viewer::TraceModel& a = *app.model();
  const viewer::TraceModel& b = *c.model;
  if (a.kernel_metrics.empty() || b.kernel_metrics.empty()) {
    ImGui::TextDisabled("Counters side by side: both traces need hardware counters (gcollect --counters).");
    return;
  }
  if (!c.profiled_a) {
    c.profiled_a = std::make_unique<viewer::ProfiledKernels>(viewer::AnalyzeProfiledKernels(a));
    c.profiled_b = std::make_unique<viewer::ProfiledKernels>(viewer::AnalyzeProfiledKernels(b));
    c.counter_pairs = viewer::PairProfiledKernels(*c.profiled_a, *c.profiled_b);
  }
  if (c.counter_pairs.empty()) {
    ImGui::TextDisabled("No kernel is profiled in both traces.");
    return;
  }
  // The selected kernel's pair when it has one.
  viewer::EventId ea = c.b_selected.valid() ? c.a_counterpart : app.view().selected;
  if (ea.valid())
    for (size_t i = 0; i < c.counter_pairs.size(); ++i)
      if (c.counter_pairs[i].name == a.Str(a.Name(ea))) c.counter_pair = int(i);
  c.counter_pair = std::clamp(c.counter_pair, 0, int(c.counter_pairs.size()) - 1);
  const viewer::CounterPair& p = c.counter_pairs[size_t(c.counter_pair)];
  ImGui::SetNextItemWidth(420);
  if (ImGui::BeginCombo("Kernel profiled in both", p.name.c_str())) {
    for (size_t i = 0; i < c.counter_pairs.size(); ++i)
      if (ImGui::Selectable(c.counter_pairs[i].name.c_str(), int(i) == c.counter_pair))
        c.counter_pair = int(i);
    ImGui::EndCombo();
  }
  // Roofline points: where each run sits (DRAM intensity, achieved FLOP/s).
  auto point = [](const KernelAnalysis* k) {
    const auto lv = static_cast<size_t>(MemoryLevel::kDram);
    if (!k || !k->intensity[lv] || !k->flops_per_s) return std::string("not placed (no FLOPs or bytes)");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g FLOP/B, ", k->intensity[lv].value);
    return buf + FormatRate(k->flops_per_s.value, "FLOP/s");
  };
  ImGui::TextDisabled("Roofline point  A: %s   B: %s", point(p.a).c_str(), point(p.b).c_str());
  DrawPairRoofline(*c.profiled_a, p.a, p.b);
  // ncu's baseline view: each run's speed of light, stalls and verdict in its own column.
  const StringId ida = viewer::FindString(a, p.name), idb = viewer::FindString(b, p.name);
  const viewer::EventId ka = viewer::FirstKernelEvent(a, p.a->pid, ida);
  const viewer::EventId kb = viewer::FirstKernelEvent(b, p.b->pid, idb);
  if (!ImGui::BeginTable("##counterpair", 2,
                         ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchSame))
    return;
  ImGui::TableSetupColumn(("A: " + app.trace_name()).c_str());
  ImGui::TableSetupColumn(("B: " + c.name).c_str());
  ImGui::TableHeadersRow();
  ImGui::TableNextColumn();
  // Each side's counters panel as the details panel draws it (A: the open trace's state).
  const viewer::ProfiledData* da = app.source()->Profiled();
  CountersState& sa = app.counters();
  if (da && sa.built_for != da) BuildCountersState(sa, *da);
  ImGui::PushID("a");
  if (!da || !ka.valid() || !DrawKernelCountersPanel(sa, {ka, p.a->pid, p.name}))
    ImGui::TextDisabled("%s", p.a->verdict.c_str());
  ImGui::PopID();
  ImGui::TableNextColumn();
  if (!c.counters_b) c.counters_b = std::make_unique<CountersState>();
  if (!c.data_b) c.data_b = std::make_unique<viewer::ProfiledData>(viewer::CollectProfiledData(b));
  CountersState& sb = *c.counters_b;
  if (sb.built_for != c.data_b.get()) BuildCountersState(sb, *c.data_b);
  ImGui::PushID("b");
  if (!kb.valid() || !DrawKernelCountersPanel(sb, {kb, p.b->pid, p.name}))
    ImGui::TextDisabled("%s", p.b->verdict.c_str());
  ImGui::PopID();
  ImGui::EndTable();
}

}  // namespace

void DrawComparePanel(App& app) {
  CompareState& c = app.compare();
  if (!c.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 120, 120, 255));
    ImGui::TextWrapped("%s", c.error.c_str());
    ImGui::PopStyleColor();
  }
  if (c.loading()) {
    ImGui::Text("Loading %s to compare... %.0f%%", c.loading_name.c_str(), c.loader->progress() * 100);
    return;
  }
  if (!c.active() || !c.computed || !app.model()) {
    ImGui::TextDisabled(
        "Compare two traces: File > Compare with..., drop a second file with Shift held, or a "
        "link with ?url=A&compare=B.");
    return;
  }
  ImGui::Text("A: %s", app.trace_name().c_str());
  ImGui::SameLine();
  ImGui::Text("  vs  B: %s", c.name.c_str());
  ImGui::SameLine();
  if (ImGui::SmallButton("Stop comparing")) {
    CompareClose(app);
    return;
  }
  if (!c.warning.empty()) ImGui::TextColored(ImVec4(0.95f, 0.72f, 0.2f, 1), "%s", c.warning.c_str());
  int64_t ta = 0, tb = 0;
  for (const viewer::NameChange& r : c.rows) ta += r.before.total_ns, tb += r.after.total_ns;
  ImGui::Text("Total kernel time: %s -> %s", FormatDuration(double(ta)).c_str(),
              FormatDuration(double(tb)).c_str());
  ImGui::SameLine();
  ImGui::TextColored(DeltaColor(tb - ta), "%s (%s)", SignedDuration(tb - ta).c_str(),
                     SignedPercent(double(ta), double(tb)).c_str());
  ImGui::Separator();
  DrawAlignControls(app);
  ImGui::Separator();
  DrawSelectionPair(app);
  ImGui::Separator();
  DrawSteps(app);
  ImGui::Separator();
  DrawCountersSideBySide(app);
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] The kernel table while comparing
// ---------------------------------------------------------------------------------------------------------------

void DrawCompareKernelTable(App& app) {
  CompareState& c = app.compare();
  const viewer::TraceModel* m = app.model();
  ImGui::TextDisabled(
      "%zu kernel names, A: %s vs B: %s (the rows of gtrace diff, by |delta|). Click a row to "
      "highlight the kernel in both.",
      c.rows.size(), app.trace_name().c_str(), c.name.c_str());
  ImGui::SameLine();
  CsvButton(app, "compare-kernels");
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Resizable | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("##cmpkernels", 8, flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("Kernel", ImGuiTableColumnFlags_WidthStretch);
  for (const char* h :
       {"Count A -> B", "Total A (before)", "Total B (after)", "Delta", "Change", "Avg A", "Avg B"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  static int selected_row = -1;
  ImGuiListClipper clip;
  clip.Begin(int(c.rows.size()));
  while (clip.Step())
    for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
      const viewer::NameChange& r = c.rows[size_t(i)];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(i);
      std::string label = r.name;
      if (r.only_before()) label += "  (only in A)";
      if (r.only_after()) label += "  (only in B)";
      if (ImGui::Selectable(label.c_str(), selected_row == i, ImGuiSelectableFlags_SpanAllColumns)) {
        selected_row = i;
        const StringId id = viewer::FindString(*m, r.name);
        bool zoomed = false;
        if (id != 0)
          for (const viewer::KernelSummaryRow& k : viewer::KernelSummary(*m))
            if (k.name == id) app.ZoomToKernel(k), zoomed = true;
        if (!zoomed) app.SetSearch(r.name);  // only in B: its name still highlights B's instances
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.name.c_str());
      ImGui::PopID();
      ImGui::TableNextColumn();
      ImGui::Text("%s -> %s", FormatCount(r.before.count).c_str(), FormatCount(r.after.count).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.before.count ? FormatDuration(double(r.before.total_ns)).c_str() : "-");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.after.count ? FormatDuration(double(r.after.total_ns)).c_str() : "-");
      ImGui::TableNextColumn();
      ImGui::TextColored(DeltaColor(r.delta_ns()), "%s", SignedDuration(r.delta_ns()).c_str());
      ImGui::TableNextColumn();
      ImGui::TextColored(DeltaColor(r.delta_ns()), "%s",
                         SignedPercent(double(r.before.total_ns), double(r.after.total_ns)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.before.count ? FormatDuration(r.before.avg_ns).c_str() : "-");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.after.count ? FormatDuration(r.after.avg_ns).c_str() : "-");
    }
  ImGui::EndTable();
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] JSON for the C API
// ---------------------------------------------------------------------------------------------------------------

namespace {

// {"side","key","name","start","end","x","y","visible"} of an event drawn on A's axis, or null.
std::string EventOnScreen(App& app, const viewer::TraceModel& m, viewer::EventId e,
                          const std::vector<float>& lane_y, double shift, const char* side) {
  if (!e.valid()) return "null";
  const View& v = app.view();
  const double s = double(m.Start(e)) + shift, end = double(m.End(e)) + shift;
  const bool laid_out = e.lane < lane_y.size() && lane_y[e.lane] >= 0;
  const double x = v.layout.TimeToX((std::max(s, v.t0) + std::min(end, v.t1)) / 2, v.t0, v.t1);
  const double y = laid_out ? lane_y[e.lane] + v.layout.lane_height / 2 : -1;
  const bool visible =
      laid_out && end >= v.t0 && s <= v.t1 && y >= v.layout.plot_min.y && y < v.layout.plot_max.y;
  return std::string("{\"side\":") + viewer::JsonQuote(side) +
         ",\"key\":" + viewer::JsonQuote(m.EventKey(e)) + ",\"name\":" + viewer::JsonQuote(m.Str(m.Name(e))) +
         ",\"start\":" + viewer::JsonNumber(double(m.Start(e))) +
         ",\"end\":" + viewer::JsonNumber(double(m.End(e))) + ",\"x\":" + viewer::JsonNumber(x) +
         ",\"y\":" + viewer::JsonNumber(y) + ",\"visible\":" + (visible ? "true" : "false") + "}";
}

}  // namespace

std::string CompareStateJson(App& app) {
  CompareState& c = app.compare();
  std::string o = "{\"active\":";
  o += c.active() && c.computed && app.model() ? "true" : "false";
  o += ",\"loading\":" + std::string(c.loading() ? "true" : "false");
  o += ",\"error\":" + viewer::JsonQuote(c.error) + ",\"warning\":" + viewer::JsonQuote(c.warning);
  if (!(c.active() && c.computed && app.model())) return o + "}";
  const viewer::TraceModel& a = *app.model();
  const viewer::TraceModel& b = *c.model;
  o += ",\"a\":" + viewer::JsonQuote(app.trace_name()) + ",\"b\":" + viewer::JsonQuote(c.name);
  o += ",\"align_spec\":" + viewer::JsonQuote(CompareAlignSpec(c));
  o += ",\"align\":" + viewer::AlignmentJson(c.align);
  o += ",\"steps\":" + viewer::StepDeltasJson(c.steps);
  const bool on_b = c.b_selected.valid();
  const viewer::EventId sel = on_b ? c.b_selected : app.view().selected;
  o += ",\"selected\":" + (on_b ? EventOnScreen(app, b, sel, c.lane_y, c.offset(), "b")
                                : EventOnScreen(app, a, sel, app.view().layout.lane_y, 0, "a"));
  o += ",\"counterpart\":" + (on_b ? EventOnScreen(app, a, c.a_counterpart, app.view().layout.lane_y, 0, "a")
                                   : EventOnScreen(app, b, c.b_counterpart, c.lane_y, c.offset(), "b"));
  size_t b_tracks = 0, b_visible = 0;
  for (size_t t = 0; t < b.tracks.size(); ++t) {
    ++b_tracks;
    const viewer::Track& tr = b.tracks[t];
    if (tr.lane_count && tr.first_lane < c.lane_y.size() && c.lane_y[tr.first_lane] >= 0) ++b_visible;
  }
  o += ",\"b_tracks\":" + std::to_string(b_tracks) + ",\"b_tracks_laid_out\":" + std::to_string(b_visible);
  o += ",\"b_highlight\":" + viewer::JsonNumber(double(c.search.match_count()));
  return o + "}";
}

std::string CompareCountersJson(App& app) {
  CompareState& c = app.compare();
  if (!c.active() || !app.model()) return "[]";
  if (!c.profiled_a) {
    c.profiled_a = std::make_unique<viewer::ProfiledKernels>(viewer::AnalyzeProfiledKernels(*app.model()));
    c.profiled_b = std::make_unique<viewer::ProfiledKernels>(viewer::AnalyzeProfiledKernels(*c.model));
    c.counter_pairs = viewer::PairProfiledKernels(*c.profiled_a, *c.profiled_b);
  }
  return viewer::CounterPairsJson(c.counter_pairs);
}

}  // namespace gt::ui
