// The "Flame graph" tab (ui/flame_panel.h): header (range, samples, thread filter, reset), then the icicle
// graph laid out by the core, drawn rectangle by rectangle, with a tooltip and click-to-zoom.
#include "ui/flame_panel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>

#include "gt/units.h"
#include "gt/viewer/json.h"
#include "gt/viewer/query.h"
#include "ui/app.h"
#include "ui/colors.h"

namespace gt::ui {

namespace {

// Rectangles narrower than this share of the width are not drawn (nor reported): under a pixel each.
constexpr double kMinWidth = 1.0 / 4000;

void ResetFor(FlameState& st, const viewer::TraceModel* m) {
  st = FlameState{};
  st.model = m;
  if (!m) return;
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (size_t i = 0; i < m->cpu.size(); ++i) seen.insert({m->cpu.pid[i], m->cpu.tid[i]});
  for (const auto& [pid, tid] : seen) st.threads.push_back({pid, tid});
  for (const viewer::Track& t : m->tracks)
    if (t.kind == viewer::TrackKind::kThreadApi && seen.count({t.pid, t.tid}))
      st.feeders.push_back({t.pid, t.tid});
  st.first_sample = m->first_ns, st.last_sample = m->last_ns;
  if (m->cpu.size()) {
    st.first_sample = std::min(st.first_sample, m->cpu.ts.front());
    st.last_sample = std::max(st.last_sample, m->cpu.ts.back());
  }
}

const char* FilterName(const FlameState& st) {
  return st.cuda_threads ? "cuda" : st.pid == 0 ? "all" : st.tid == 0 ? "process" : "thread";
}

// Python frames warm, native ones cool, each name its own shade (stable across frames and zooms).
ImU32 FrameColor(const std::string& frame, uint8_t kind, bool root) {
  if (root) return IM_COL32(90, 90, 100, 255);
  const size_t h = std::hash<std::string>{}(frame);
  const float t = float(h % 1000) / 1000.0f;
  float r, g, b;
  if (kind == uint8_t(FrameKind::kPython))
    ImGui::ColorConvertHSVtoRGB(0.03f + 0.11f * t, 0.62f, 0.95f, r, g, b);
  else
    ImGui::ColorConvertHSVtoRGB(0.55f + 0.1f * t, 0.45f, 0.85f, r, g, b);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(r, g, b, 1));
}

std::string RangeLabel(const FlameState& st, const viewer::TraceModel& m) {
  if (!st.has_range) return "whole trace";
  return st.source + " " + viewer::FormatTimestamp(m, int64_t(st.start)) + " + " +
         FormatDuration(st.end - st.start);
}

std::string ThreadLabel(uint32_t pid, uint32_t tid, bool cuda = false) {
  if (cuda) return "threads that call CUDA";
  if (pid == 0) return "all threads";
  if (tid == 0) return "process " + std::to_string(pid);
  return "thread " + std::to_string(tid) + " (process " + std::to_string(pid) + ")";
}

}  // namespace

void SetFlameRange(App& app, double start, double end, std::string source) {
  FlameState& st = app.flame();
  if (st.model != app.model()) ResetFor(st, app.model());
  st.has_range = true;
  st.start = std::min(start, end), st.end = std::max(start, end);
  st.source = std::move(source);
  st.focus = 0;
  st.dirty = true;
}

void SetFlameThread(App& app, uint32_t pid, uint32_t tid) {
  FlameState& st = app.flame();
  if (st.model != app.model()) ResetFor(st, app.model());
  st.cuda_threads = false;
  st.pid = pid, st.tid = pid ? tid : 0;
  st.focus = 0;
  st.dirty = true;
}

void SetFlameCudaThreads(App& app) {
  FlameState& st = app.flame();
  if (st.model != app.model()) ResetFor(st, app.model());
  st.cuda_threads = true;
  st.pid = st.tid = 0;
  st.focus = 0;
  st.dirty = true;
}

bool SetFlameFocus(App& app, uint32_t node) {
  UpdateFlame(app);
  FlameState& st = app.flame();
  if (node >= st.graph.size()) return false;
  st.focus = node;
  st.layout = viewer::LayoutFlameGraph(st.graph, st.focus, kMinWidth);
  return true;
}

void UpdateFlame(App& app) {
  FlameState& st = app.flame();
  const viewer::TraceModel* m = app.events_local() ? app.model() : nullptr;
  if (st.model != m) ResetFor(st, m);
  if (!m) return;
  const Measurement& mm = app.view().measure;
  if (mm.active && (!st.seen_measure || mm.start != st.seen_start || mm.end != st.seen_end)) {
    st.seen_measure = true, st.seen_start = mm.start, st.seen_end = mm.end;
    SetFlameRange(app, mm.start, mm.end, "measured range");
  } else if (!mm.active) {
    st.seen_measure = false;
  }
  if (!st.dirty) return;
  const int64_t a = st.has_range ? int64_t(std::floor(st.start)) : st.first_sample;
  const int64_t b = st.has_range ? int64_t(std::ceil(st.end)) : st.last_sample + 1;
  const uint32_t pids[] = {st.pid};
  const viewer::ThreadKey thread[] = {{st.pid, st.tid}};
  std::span<const uint32_t> p;
  std::span<const viewer::ThreadKey> t;
  if (st.cuda_threads && !st.feeders.empty())  // none called CUDA (a CPU-only trace): every thread
    t = st.feeders;
  else if (!st.cuda_threads && st.tid)
    t = thread;
  else if (!st.cuda_threads && st.pid)
    p = pids;
  st.graph = viewer::BuildFlameGraph(*m, a, b, p, t);
  if (st.focus >= st.graph.size()) st.focus = 0;
  st.layout = viewer::LayoutFlameGraph(st.graph, st.focus, kMinWidth);
  st.dirty = false;
}

std::string FlameJson(App& app) {
  UpdateFlame(app);
  const FlameState& st = app.flame();
  const viewer::TraceModel* m = st.model;
  if (!m) return "null";
  const double a = st.has_range ? st.start : double(st.first_sample);
  const double b = st.has_range ? st.end : double(st.last_sample);
  std::string core = viewer::FlameGraphJson(*m, st.graph, st.focus, st.layout);
  std::string threads = "[";  // what the filter offers
  for (const viewer::ThreadKey& t : st.threads) {
    const bool cuda = std::any_of(st.feeders.begin(), st.feeders.end(), [&](const viewer::ThreadKey& f) {
      return f.pid == t.pid && f.tid == t.tid;
    });
    threads += std::string(threads.size() > 1 ? "," : "") + "{\"pid\":" + std::to_string(t.pid) +
               ",\"tid\":" + std::to_string(t.tid) + ",\"cuda\":" + (cuda ? "true" : "false") + "}";
  }
  threads += "]";
  // The core's object, with what the panel's header says first.
  return "{\"start\":" + viewer::JsonNumber(a) + ",\"end\":" + viewer::JsonNumber(b) +
         ",\"source\":" + viewer::JsonQuote(st.has_range ? st.source : "whole trace") + ",\"threads\":\"" +
         FilterName(st) + "\",\"pid\":" + std::to_string(st.pid) + ",\"tid\":" + std::to_string(st.tid) +
         ",\"sampled_threads\":" + threads + ",\"drawn\":" + (st.drawn ? "true" : "false") +
         ",\"hovered\":" + (st.drawn && st.hovered >= 0 ? std::to_string(st.hovered) : "null") + "," +
         core.substr(1);
}

std::string FlameNodeScreenJson(const App& app, uint32_t node) {
  const FlameState& st = app.flame();
  if (!st.drawn) return "null";
  for (const viewer::FlameRect& r : st.layout)
    if (r.node == node)
      return "{\"x\":" + viewer::JsonNumber(st.canvas_min.x + r.x0 * st.canvas_width) +
             ",\"y\":" + viewer::JsonNumber(st.canvas_min.y + float(r.row) * st.row_height) +
             ",\"w\":" + viewer::JsonNumber((r.x1 - r.x0) * st.canvas_width) +
             ",\"h\":" + viewer::JsonNumber(st.row_height - 1) + "}";
  return "null";
}

void DrawFlamePanel(App& app) {
  FlameState& st = app.flame();
  st.drawn = false;
  if (!app.model()) return;
  UpdateFlame(app);
  const viewer::TraceModel& m = *app.model();
  if (m.cpu.size() == 0) {
    ImGui::TextDisabled("No CPU samples in this trace: record it with gcollect --sample=cpu.");
    return;
  }
  // Header: what is counted, the filter, the zoom.
  const uint64_t total = st.graph.empty() ? 0 : st.graph[0].samples;
  ImGui::Text("%s: %s samples", RangeLabel(st, m).c_str(), FormatCount(total).c_str());
  ImGui::SameLine();
  ImGui::SetNextItemWidth(260);
  if (ImGui::BeginCombo("##flame_threads", ThreadLabel(st.pid, st.tid, st.cuda_threads).c_str())) {
    if (ImGui::Selectable("threads that call CUDA", st.cuda_threads)) SetFlameCudaThreads(app);
    if (ImGui::Selectable("all threads", !st.cuda_threads && st.pid == 0)) SetFlameThread(app, 0, 0);
    uint32_t last_pid = 0;
    for (const viewer::ThreadKey& t : st.threads) {
      ImGui::PushID(int(t.pid * 31 + t.tid));
      const bool on = !st.cuda_threads && st.pid == t.pid;
      if (t.pid != last_pid && ImGui::Selectable(ThreadLabel(t.pid, 0).c_str(), on && st.tid == 0))
        SetFlameThread(app, t.pid, 0);
      last_pid = t.pid;
      if (ImGui::Selectable(("  " + ThreadLabel(t.pid, t.tid)).c_str(), on && st.tid == t.tid))
        SetFlameThread(app, t.pid, t.tid);
      ImGui::PopID();
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(st.focus == 0);
  if (ImGui::Button("Reset zoom")) SetFlameFocus(app, 0);
  ImGui::EndDisabled();
  if (st.has_range) {
    ImGui::SameLine();
    if (ImGui::Button("Whole trace")) {
      st.has_range = false, st.focus = 0, st.dirty = true;
      UpdateFlame(app);
    }
  }
  ImGui::SameLine();
  ImGui::TextDisabled("shift-drag on the timeline or pick an idle gap in Summary; click a frame to zoom");
  if (total == 0) {
    ImGui::TextDisabled("No samples in this range.");
    return;
  }

  // The graph: one row per depth, the root on top, widths by samples.
  const float row_h = ImGui::GetTextLineHeight() + 6;
  uint32_t rows = 0;
  for (const viewer::FlameRect& r : st.layout) rows = std::max(rows, r.row + 1);
  ImGui::BeginChild("##flame_canvas", ImVec2(0, 0), false, ImGuiWindowFlags_None);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(ImGui::GetContentRegionAvail().x, 50.0f);
  ImGui::InvisibleButton("##flame_area", ImVec2(width, float(rows) * row_h));
  const bool hovered_area = ImGui::IsItemHovered();
  const bool left_click = ImGui::IsItemClicked(ImGuiMouseButton_Left);
  const bool right_click = ImGui::IsItemClicked(ImGuiMouseButton_Right);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const viewer::FlameRect* hovered = nullptr;
  const uint64_t focus_samples = st.graph[st.focus].samples;
  for (const viewer::FlameRect& r : st.layout) {
    const viewer::FlameNode& f = st.graph[r.node];
    const ImVec2 a(origin.x + float(r.x0) * width, origin.y + float(r.row) * row_h);
    const ImVec2 b(origin.x + float(r.x1) * width - 1, a.y + row_h - 1);
    if (b.x - a.x < 0.5f) continue;
    const std::string& frame = m.Str(f.frame);
    ImU32 fill = FrameColor(frame, f.kind, r.node == 0);
    if (r.above_focus) fill = Dim(fill, 0.45f);
    dl->AddRectFilled(a, ImVec2(std::max(b.x, a.x + 1), b.y), fill);
    if (hovered_area && mouse.x >= a.x && mouse.x < b.x + 1 && mouse.y >= a.y && mouse.y < b.y + 1) {
      hovered = &r;
      dl->AddRect(a, b, colors::kSelection);
    }
    if (b.x - a.x > 24) {
      const viewer::FrameParts p = viewer::SplitFrame(frame, f.kind);
      const std::string label = r.node == 0 ? "all (" + FormatCount(f.samples) + " samples)" : p.function;
      dl->PushClipRect(ImVec2(a.x + 3, a.y), ImVec2(b.x - 2, b.y), true);
      dl->AddText(ImVec2(a.x + 3, a.y + 3), TextColorOn(fill), label.c_str());
      dl->PopClipRect();
    }
  }
  st.hovered = hovered ? int64_t(hovered->node) : -1;
  if (hovered) {
    const viewer::FlameNode& f = st.graph[hovered->node];
    if (hovered->node == 0) {
      ImGui::SetTooltip("all samples: %s\n%s not unwound", FormatCount(f.samples).c_str(),
                        FormatCount(f.self_samples).c_str());
    } else {
      const std::string& frame = m.Str(f.frame);
      const viewer::FrameParts p = viewer::SplitFrame(frame, f.kind);
      ImGui::SetTooltip("%s\n%s%s\n%s samples (%.1f%% of all, %.1f%% of the zoomed frame), %s in itself",
                        p.function.c_str(), p.location.empty() ? "" : p.location.c_str(),
                        f.kind == uint8_t(FrameKind::kPython) ? "  (Python)" : "  (native)",
                        FormatCount(f.samples).c_str(), 100.0 * double(f.samples) / double(total),
                        focus_samples ? 100.0 * double(f.samples) / double(focus_samples) : 0.0,
                        FormatCount(f.self_samples).c_str());
    }
    if (left_click) SetFlameFocus(app, hovered->node);
  }
  if (right_click) SetFlameFocus(app, 0);
  st.canvas_min = origin, st.canvas_width = width, st.row_height = row_h, st.drawn = true;
  ImGui::EndChild();
}

}  // namespace gt::ui
