// The timeline: ruler, track groups and tracks, LOD-folded events, counters, GPU idle gaps, selection, search
// highlight, flow arrows, measurement, and the mouse navigation of Perfetto / chrome://tracing.
//
// [SECTION] Rows: the vertical layout of groups, tracks and lanes
// [SECTION] Ruler
// [SECTION] Lanes and counters
// [SECTION] Overlays: selection, flows, measurement
// [SECTION] Input: wheel zoom, drag pan, shift-drag measure, click select
// [SECTION] DrawTimeline
//
// Per-frame cost: O(tracks) for the layout plus, per visible lane, the core's LOD query (O(width · log n)).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "gt/units.h"
#include "gt/viewer/lod.h"
#include "gt/viewer/query.h"
#include "gt/viewer/source.h"
#include "imgui_internal.h"
#include "ui/app.h"
#include "ui/colors.h"

namespace gt::ui {
namespace {

using viewer::DrawItem;
using viewer::EventId;
using viewer::LaneId;
using viewer::SignedDuration;
using viewer::TraceModel;
using viewer::TrackId;

constexpr float kLabelWidth = 280;
constexpr float kRulerHeight = 24;
constexpr float kLaneHeight = 18;
constexpr float kGroupHeight = 22;
constexpr float kCounterHeight = 38;
constexpr float kTrackGap = 3;
// Hover tracking must keep working while the plot's own button is held (drag, and the release of a click).
constexpr ImGuiHoveredFlags kHoverFlags = ImGuiHoveredFlags_AllowWhenBlockedByActiveItem;

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Rows: the vertical layout of groups, tracks and lanes
// ---------------------------------------------------------------------------------------------------------------

// One of the traces on screen: the App's own (A), or while comparing the second (B), drawn under A's tracks
// with its times shifted by the alignment offset onto A's axis (ui/compare_view.h).
struct Side {
  const TraceModel* m = nullptr;
  viewer::TraceSource* src = nullptr;  // what its lanes are drawn from (gt/viewer/source.h)
  uint8_t which = 0;                   // 0 = A, 1 = B
  double shift = 0;                    // added to this trace's times to place them on the axis
  const viewer::Search* search = nullptr;
  const viewer::TrackFilter* filter = nullptr;  // the search filter's tracks, while it is on (A only)
  EventId selected;
  std::vector<uint8_t>* group_collapsed = nullptr;
  std::vector<uint8_t>* track_collapsed = nullptr;
  bool GroupCollapsed(uint32_t g) const { return g < group_collapsed->size() && (*group_collapsed)[g]; }
  bool TrackCollapsed(uint32_t t) const { return t < track_collapsed->size() && (*track_collapsed)[t]; }
};

constexpr float kSideHeight = 24;  // the "A: file" / "B: file" header of each trace while comparing

struct Row {
  enum Type : uint8_t { kGroup, kTrack, kSide } type = kGroup;
  uint32_t id = 0;  // GroupId or TrackId
  float y = 0;      // content y (0 = top of the track area)
  float height = 0;
  uint32_t lanes = 0;  // lanes shown (tracks): all, or 1 when collapsed
  uint8_t side = 0;    // which trace (Side::which)
};

// Appends the rows of one trace from content y `y`; returns the y after them.
float BuildRows(const Side& side, float y, std::vector<Row>* rows, std::vector<float>* lane_content_y) {
  const TraceModel& m = *side.m;
  lane_content_y->assign(m.lanes.size(), -1.0f);
  for (size_t g = 0; g < m.groups.size(); ++g) {
    const viewer::TrackGroup& group = m.groups[g];
    // The search filter hides what does not match (A's tracks only: B keeps all of its own).
    if (side.filter && !side.filter->ShowsGroup(static_cast<viewer::GroupId>(g))) continue;
    rows->push_back({Row::kGroup, static_cast<uint32_t>(g), y, kGroupHeight, 0, side.which});
    y += kGroupHeight;
    if (side.GroupCollapsed(static_cast<viewer::GroupId>(g))) continue;
    for (TrackId t : group.tracks) {
      if (side.filter && !side.filter->ShowsTrack(t)) continue;
      const viewer::Track& track = m.tracks[t];
      Row row{Row::kTrack, t, y, 0, 0, side.which};
      if (track.kind == viewer::TrackKind::kCounter) {
        row.height = kCounterHeight;
      } else {
        row.lanes = side.TrackCollapsed(t) ? std::min<uint32_t>(1, track.lane_count) : track.lane_count;
        row.height = std::max<uint32_t>(1, row.lanes) * kLaneHeight;
        for (uint32_t d = 0; d < row.lanes; ++d)
          (*lane_content_y)[track.first_lane + d] = y + d * kLaneHeight;
      }
      row.height += kTrackGap;
      rows->push_back(row);
      y += row.height;
    }
  }
  return y;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Ruler
// ---------------------------------------------------------------------------------------------------------------

// 1-2-5 steps so that major ticks are at least `min_px` apart.
double TickStep(double ns_per_px, double min_px) {
  const double want = ns_per_px * min_px;
  double step = std::pow(10.0, std::floor(std::log10(std::max(want, 1.0))));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (step * m >= want) return step * m;
  return step * 10;
}

void DrawRuler(ImDrawList* dl, const App& app, const ImVec2& min, const ImVec2& max, float plot_bottom) {
  const View& v = app.view();
  const TraceModel& m = *app.model();
  dl->AddRectFilled(min, max, colors::kRulerBg);
  const double width = max.x - min.x;
  const double ns_per_px = (v.t1 - v.t0) / width;
  const double step = TickStep(ns_per_px, 100);
  const double minor = step / 5;
  const double origin = static_cast<double>(m.first_ns);
  // Ticks at multiples of the step relative to the trace start, so labels are round numbers.
  const double first = std::floor((v.t0 - origin) / minor) * minor + origin;
  for (double t = first; t <= v.t1; t += minor) {
    const float x = static_cast<float>(min.x + (t - v.t0) / ns_per_px);
    if (x < min.x) continue;
    const double rel = t - origin;
    const bool major = std::fabs(std::remainder(rel, step)) < minor * 0.5;
    dl->AddLine(ImVec2(x, max.y - (major ? 9.0f : 4.0f)), ImVec2(x, max.y), colors::kRulerTick);
    if (major) {
      dl->AddLine(ImVec2(x, max.y), ImVec2(x, plot_bottom), colors::kGrid);
      const std::string label = FormatRulerTime(rel, step);
      // A label cut by the right edge reads as another number ("10" for "10 ms"): leave it out.
      if (x + 3 + ImGui::CalcTextSize(label.c_str()).x <= max.x)
        dl->AddText(ImVec2(x + 3, min.y + 2), IM_COL32(200, 200, 210, 255), label.c_str());
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Lanes and counters
// ---------------------------------------------------------------------------------------------------------------

struct Hover {
  bool valid = false;
  uint8_t side = 0;  // which trace (Side::which)
  const TraceModel* m = nullptr;
  double shift = 0;
  LaneId lane = kNone;
  DrawItem item;
  viewer::LaneItem drawn;  // the item with its name and kind (a remote trace has no events to look up)
  TrackId counter_track = kNone;
  viewer::CounterColumn column;
};

// Text clipped to [x0, x1) with an ellipsis, centred vertically in the row.
void DrawClippedText(ImDrawList* dl, float x0, float x1, float y, ImU32 color, const std::string& text) {
  const float avail = x1 - x0 - 6;
  if (avail < 12) return;
  const char* begin = text.c_str();
  const char* end = begin + text.size();
  ImFont* font = ImGui::GetFont();
  const float size = ImGui::GetFontSize();
  const char* fit_end = nullptr;
  const float w = font->CalcTextSizeA(size, avail, 0, begin, end, &fit_end).x;
  (void)w;
  if (fit_end >= end) {
    dl->AddText(ImVec2(x0 + 3, y), color, begin, end);
    return;
  }
  const float dots = font->CalcTextSizeA(size, FLT_MAX, 0, "...").x;
  font->CalcTextSizeA(size, std::max(0.0f, avail - dots), 0, begin, end, &fit_end);
  if (fit_end == begin) return;
  std::string shown(begin, fit_end);
  shown += "...";
  dl->AddText(ImVec2(x0 + 3, y), color, shown.c_str());
}

// "49.8%", but never "100.0%" for a GPU that did run something (a few kernels in a long trace: "99.97%").
std::string FormatIdleShare(double share) {
  const double pct = share * 100;
  int digits = 1;
  auto rounds_to_100 = [&](int d) {
    return pct < 100 && std::round(pct * std::pow(10, d)) >= 100 * std::pow(10, d);
  };
  while (digits < 3 && rounds_to_100(digits)) ++digits;
  if (rounds_to_100(digits)) return ">99.999%";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f%%", digits, pct);
  return buf;
}

void DrawLane(ImDrawList* dl, App& app, const Side& side, LaneId lane_id, float y, const ImVec2& plot_min,
              const ImVec2& plot_max, std::vector<viewer::LaneItem>* items, Hover* hover) {
  const TraceModel& m = *side.m;
  const View& v = app.view();
  const viewer::Lane& lane = m.lanes[lane_id];
  const double t0 = v.t0 - side.shift;  // the visible range in this trace's clock
  const double span = v.t1 - v.t0;
  const double ns_per_px = span / (plot_max.x - plot_min.x);
  const int64_t q0 = static_cast<int64_t>(std::floor(t0));
  const int64_t q1 = static_cast<int64_t>(std::ceil(t0 + span)) + 1;
  const bool local = side.src->events_local();
  if (side.filter && local) {
    // The search filter: only the matching events are drawn, one by one (an LOD block would fold hidden
    // events in); events that would land on the pixel just drawn are skipped, and at most kMaxFiltered per
    // lane.
    constexpr size_t kMaxFiltered = 50000;
    items->clear();
    int64_t last_px = INT64_MIN;
    for (uint32_t i : viewer::MatchingEventsIn(m, *side.search, lane_id, q0, q1, kMaxFiltered)) {
      const int64_t px =
          static_cast<int64_t>(std::floor((static_cast<double>(lane.End(i)) - t0) / ns_per_px));
      if (px == last_px && lane.Duration(i) < ns_per_px) continue;
      last_px = px;
      const EventId e{lane_id, i};
      items->push_back(
          {{lane.start[i], lane.End(i), i, 1}, lane.name[i], m.Kind(e), viewer::EventStyle(m, e)});
    }
  } else if (!side.src->LaneItems(lane_id, q0, q1, ns_per_px, items) && items->empty()) {
    // A remote tile on its way and nothing coarser cached: a placeholder, so an empty row does not read
    // as "nothing ran here".
    dl->AddRectFilled(ImVec2(plot_min.x, y + 6), ImVec2(plot_max.x, y + kLaneHeight - 6),
                      IM_COL32(255, 255, 255, 16));
  }

  const viewer::Search& search = *side.search;
  const bool searching = !search.empty();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool mouse_in_row = mouse.y >= y && mouse.y < y + kLaneHeight && mouse.x >= plot_min.x &&
                            mouse.x < plot_max.x && ImGui::IsWindowHovered(kHoverFlags);
  const float y0 = y + 1, y1 = y + kLaneHeight - 1;
  for (const viewer::LaneItem& li : *items) {
    const DrawItem& it = li.item;
    float x0 = static_cast<float>(plot_min.x + (static_cast<double>(it.start) - t0) / ns_per_px);
    float x1 = static_cast<float>(plot_min.x + (static_cast<double>(it.end) - t0) / ns_per_px);
    x0 = std::max(x0, plot_min.x - 2);
    x1 = std::min(x1, plot_max.x + 2);
    if (x1 - x0 < 1) x1 = x0 + 1;  // everything that exists gets at least a pixel
    const EventId first{lane_id, it.first};
    // A remote trace's filter: the tile's items that do not match are left out (a folded run by its first
    // event's name, as the highlight judges it).
    if (side.filter && !local && !side.search->Matches(li.name)) continue;
    const ImU32 base = EventColor(li.kind, side.src->Str(li.name), li.style);
    if (it.merged()) {
      // Folded run of tiny events: muted color, a lighter top edge, and the count when there is room.
      // Exact for a kernel-table highlight; the first 16 events for a typed substring search.
      const bool any_match =
          searching && (local ? search.AnyMatchIn(m, lane_id, it.first, it.count) : search.Matches(li.name));
      ImU32 c = MergedColor(base);
      if (searching && !any_match) c = Dim(c, 0.3f);
      dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), c);
      dl->AddLine(ImVec2(x0, y0), ImVec2(x1, y0), Dim(base, searching && !any_match ? 0.3f : 1.0f));
      if (any_match) dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), colors::kSearchMatch);
      if (x1 - x0 > 40) {
        char label[32];
        std::snprintf(label, sizeof label, "%u events", it.count);
        DrawClippedText(dl, std::max(x0, plot_min.x), std::min(x1, plot_max.x), y0,
                        IM_COL32(230, 230, 230, 200), label);
      }
    } else {
      const bool match = searching && search.Matches(li.name);
      // The selected event keeps its colour while a search dims the rest (Perfetto does the same).
      const bool dim = searching && !match && !(first == side.selected);
      const ImU32 c = dim ? Dim(base, 0.3f) : base;
      dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), c);
      if (match) dl->AddRect(ImVec2(x0 - 1, y0 - 1), ImVec2(x1 + 1, y1 + 1), colors::kSearchMatch, 0, 0, 2);
      if (x1 - x0 > 18)
        DrawClippedText(dl, std::max(x0, plot_min.x), std::min(x1, plot_max.x), y0,
                        dim ? IM_COL32(255, 255, 255, 90) : TextColorOn(base), side.src->Str(li.name));
    }
    if (mouse_in_row && mouse.x >= x0 - 1 && mouse.x <= x1 + 1) {
      hover->valid = true;
      hover->side = side.which, hover->m = side.m, hover->shift = side.shift;
      hover->lane = lane_id;
      hover->item = it;
      hover->drawn = li;
    }
  }
}

void DrawCounter(ImDrawList* dl, App& app, const Side& side, const viewer::Track& track, float y,
                 float height, const ImVec2& plot_min, const ImVec2& plot_max,
                 std::vector<viewer::CounterColumn>* cols, Hover* hover, TrackId track_id) {
  const TraceModel& m = *side.m;
  const View& v = app.view();
  const double ns_per_px = (v.t1 - v.t0) / (plot_max.x - plot_min.x);
  const double t0 = v.t0 - side.shift;  // the visible range in this trace's clock
  side.src->CounterColumns(track_id, static_cast<int64_t>(std::floor(t0)),
                           static_cast<int64_t>(std::ceil(t0 + (v.t1 - v.t0))) + 1, ns_per_px, cols);
  // The scale: the counter's whole range when its samples are here, else the visible columns' (remote).
  double lo = 0, hi = 0;
  if (track.counter < m.counters.size()) {
    lo = std::min(0.0, m.counters[track.counter].min), hi = m.counters[track.counter].max;
  } else {
    for (const viewer::CounterColumn& c : *cols) lo = std::min(lo, c.min), hi = std::max(hi, c.max);
  }
  if (!(hi > lo)) hi = lo + 1;
  const float top = y + 2, bottom = y + height - 2;
  auto vy = [&](double val) { return static_cast<float>(bottom - (val - lo) / (hi - lo) * (bottom - top)); };
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool mouse_in_row = mouse.y >= y && mouse.y < y + height && ImGui::IsWindowHovered(kHoverFlags);
  for (size_t i = 0; i < cols->size(); ++i) {
    const viewer::CounterColumn& c = (*cols)[i];
    const float x0 = std::max(plot_min.x, static_cast<float>(plot_min.x + (c.t0 - t0) / ns_per_px));
    float x1 = i + 1 < cols->size() ? static_cast<float>(plot_min.x + ((*cols)[i + 1].t0 - t0) / ns_per_px)
                                    : plot_max.x;
    x1 = std::min(x1, plot_max.x);
    if (x1 < x0) continue;
    // A step chart: the held value fills, the column's min..max shows as a bar where samples vary.
    dl->AddRectFilled(ImVec2(x0, vy(c.last)), ImVec2(std::max(x1, x0 + 1), bottom), colors::kCounterFill);
    dl->AddLine(ImVec2(x0, vy(c.last)), ImVec2(std::max(x1, x0 + 1), vy(c.last)), colors::kCounter);
    if (c.samples > 1) dl->AddLine(ImVec2(x0, vy(c.min)), ImVec2(x0, vy(c.max)), colors::kCounter);
    if (mouse_in_row && mouse.x >= x0 && mouse.x < std::max(x1, x0 + 1)) {
      hover->valid = true;
      hover->side = side.which, hover->m = side.m, hover->shift = side.shift;
      hover->counter_track = track_id;
      hover->column = c;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Overlays: selection, flows, measurement
// ---------------------------------------------------------------------------------------------------------------

ImVec2 EventAnchor(const App& app, EventId e, bool at_end) {
  const TraceModel& m = *app.model();
  const View& v = app.view();
  const TimelineLayout& lay = v.layout;
  const double t = static_cast<double>(at_end ? m.End(e) : m.Start(e));
  return ImVec2(static_cast<float>(lay.TimeToX(t, v.t0, v.t1)), lay.lane_y[e.lane] + kLaneHeight / 2);
}

void DrawArrow(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 color) {
  const float dx = std::max(30.0f, std::fabs(b.x - a.x) * 0.4f);
  const ImVec2 c1(a.x + dx * 0.3f, a.y + (b.y - a.y) * 0.5f), c2(b.x - dx * 0.3f, b.y - (b.y - a.y) * 0.5f);
  dl->AddBezierCubic(a, c1, c2, b, color, 2.0f);
  dl->AddCircleFilled(a, 3, color);
  // Arrowhead along the curve's end tangent.
  ImVec2 dir(b.x - c2.x, b.y - c2.y);
  const float len = std::sqrt(dir.x * dir.x + dir.y * dir.y);
  if (len < 1e-3f) return;
  dir.x /= len, dir.y /= len;
  const ImVec2 n(-dir.y, dir.x);
  dl->AddTriangleFilled(b, ImVec2(b.x - dir.x * 9 + n.x * 4.5f, b.y - dir.y * 9 + n.y * 4.5f),
                        ImVec2(b.x - dir.x * 9 - n.x * 4.5f, b.y - dir.y * 9 - n.y * 4.5f), color);
}

void DrawSelectionAndFlows(ImDrawList* dl, const App& app) {
  const TraceModel& m = *app.model();
  const View& v = app.view();
  const EventId sel = v.selected;
  if (!sel.valid() || sel.lane >= v.layout.lane_y.size()) return;
  if (!app.events_local()) {
    // A remote trace: the outline once the event's details (its times) are here, and the arrow between the
    // launch and its GPU work once the server named the partner (explicit flow records need the download).
    const viewer::EventInfo* info = app.source()->Event(sel);
    if (!info || !info->found || v.layout.lane_y[sel.lane] < 0) return;
    const float xa = static_cast<float>(v.layout.TimeToX(double(info->start), v.t0, v.t1));
    const float xb = static_cast<float>(v.layout.TimeToX(double(info->end), v.t0, v.t1));
    const float y0 = v.layout.lane_y[sel.lane], y1 = y0 + kLaneHeight;
    dl->AddRect(ImVec2(xa - 1, y0), ImVec2(std::max(xb, xa + 2) + 1, y1), colors::kSelection, 0, 0, 2.5f);
    const viewer::PartnerInfo* p = app.source()->Partner(sel);
    if (!p) return;
    const ImVec2 here(xa, y0 + kLaneHeight / 2);
    auto there = [&](viewer::EventId id, int64_t start, ImVec2* at) {
      if (id.lane >= v.layout.lane_y.size() || v.layout.lane_y[id.lane] < 0) return false;  // collapsed
      *at = ImVec2(static_cast<float>(v.layout.TimeToX(double(start), v.t0, v.t1)),
                   v.layout.lane_y[id.lane] + kLaneHeight / 2);
      return true;
    };
    ImVec2 at;
    if (p->id.valid() && there(p->id, p->start, &at))
      DrawArrow(dl, p->launch ? at : here, p->launch ? here : at, colors::kFlow);
    for (const viewer::FlowEnd& f : p->flows)
      if (there(f.id, f.start, &at))
        DrawArrow(dl, f.outgoing ? here : at, f.outgoing ? at : here, colors::kFlow);
    return;
  }
  if (v.layout.lane_y[sel.lane] >= 0) {
    const ImVec2 a = EventAnchor(app, sel, false), b = EventAnchor(app, sel, true);
    const float y0 = a.y - kLaneHeight / 2, y1 = a.y + kLaneHeight / 2;
    dl->AddRect(ImVec2(a.x - 1, y0), ImVec2(std::max(b.x, a.x + 2) + 1, y1), colors::kSelection, 0, 0, 2.5f);
  }
  for (const viewer::FlowArrow& f : viewer::FlowsOf(m, sel)) {
    if (!f.from.valid() || !f.to.valid()) continue;
    if (v.layout.lane_y[f.from.lane] < 0 || v.layout.lane_y[f.to.lane] < 0)
      continue;  // inside a collapsed group
    DrawArrow(dl, EventAnchor(app, f.from, false), EventAnchor(app, f.to, false), colors::kFlow);
  }
  // A selected NCCL kernel: the same collective on every other rank outlined (the flow arrows above already
  // run from the rank that arrived last to the ranks that waited for it).
  if (const viewer::CollectiveReport::KernelRef* ref = viewer::CollectivesOf(m).Find(sel)) {
    for (const viewer::CollectiveRank& r : viewer::CollectivesOf(m).collectives[ref->collective].ranks) {
      if (r.kernel == sel || r.kernel.lane >= v.layout.lane_y.size() || v.layout.lane_y[r.kernel.lane] < 0)
        continue;
      const ImVec2 a = EventAnchor(app, r.kernel, false), b = EventAnchor(app, r.kernel, true);
      dl->AddRect(ImVec2(a.x - 1, a.y - kLaneHeight / 2),
                  ImVec2(std::max(b.x, a.x + 2) + 1, a.y + kLaneHeight / 2), colors::kCollectivePeer, 0, 0,
                  2.0f);
    }
  }
}

// An event of either trace outlined where it is drawn (`lane_y`: that trace's layout, `shift`: its offset).
void OutlineEvent(ImDrawList* dl, const App& app, const TraceModel& m, EventId e,
                  const std::vector<float>& lane_y, double shift, ImU32 color, float thickness) {
  if (!e.valid() || e.lane >= lane_y.size() || lane_y[e.lane] < 0) return;
  const View& v = app.view();
  const float xa = static_cast<float>(v.layout.TimeToX(static_cast<double>(m.Start(e)) + shift, v.t0, v.t1));
  const float xb = static_cast<float>(v.layout.TimeToX(static_cast<double>(m.End(e)) + shift, v.t0, v.t1));
  const float y0 = lane_y[e.lane], y1 = y0 + kLaneHeight;
  dl->AddRect(ImVec2(xa - 2, y0 - 1), ImVec2(std::max(xb, xa + 2) + 2, y1 + 1), color, 0, 0, thickness);
}

// While comparing: B's selection, and the counterpart of the selection in the other trace (a dashed-looking
// double outline in the compare colour, and a line joining the pair).
void DrawCompareOverlay(ImDrawList* dl, App& app) {
  CompareState& c = app.compare();
  if (!c.computed || !c.model) return;
  const TraceModel& a = *app.model();
  const TraceModel& b = *c.model;
  const std::vector<float>& ay = app.view().layout.lane_y;
  OutlineEvent(dl, app, b, c.b_selected, c.lane_y, c.offset(), colors::kSelection, 2.5f);
  OutlineEvent(dl, app, b, c.b_counterpart, c.lane_y, c.offset(), colors::kCounterpart, 2.5f);
  OutlineEvent(dl, app, a, c.a_counterpart, ay, 0, colors::kCounterpart, 2.5f);
  // Join the pair so the eye finds the counterpart however far down B's tracks are.
  const View& v = app.view();
  auto anchor = [&](const TraceModel& m, EventId e, const std::vector<float>& lane_y, double shift,
                    ImVec2* p) {
    if (!e.valid() || e.lane >= lane_y.size() || lane_y[e.lane] < 0) return false;
    *p = ImVec2(static_cast<float>(v.layout.TimeToX(static_cast<double>(m.Start(e)) + shift, v.t0, v.t1)),
                lane_y[e.lane] + kLaneHeight / 2);
    return true;
  };
  ImVec2 pa, pb;
  const bool on_b = c.b_selected.valid();
  const bool ok =
      on_b ? anchor(a, c.a_counterpart, ay, 0, &pa) && anchor(b, c.b_selected, c.lane_y, c.offset(), &pb)
           : anchor(a, app.view().selected, ay, 0, &pa) &&
                 anchor(b, c.b_counterpart, c.lane_y, c.offset(), &pb);
  if (ok) dl->AddLine(pa, pb, colors::kCounterpart, 1.5f);
}

void DrawMeasurement(ImDrawList* dl, const App& app, const ImVec2& ruler_min, const ImVec2& plot_max) {
  const View& v = app.view();
  if (!v.measure.active && !v.measure.dragging) return;
  const double a = std::min(v.measure.start, v.measure.end), b = std::max(v.measure.start, v.measure.end);
  const float x0 = static_cast<float>(v.layout.TimeToX(a, v.t0, v.t1));
  const float x1 = static_cast<float>(v.layout.TimeToX(b, v.t0, v.t1));
  dl->AddRectFilled(ImVec2(x0, ruler_min.y), ImVec2(x1, plot_max.y), colors::kMeasure);
  dl->AddLine(ImVec2(x0, ruler_min.y), ImVec2(x0, plot_max.y), colors::kMeasureEdge);
  dl->AddLine(ImVec2(x1, ruler_min.y), ImVec2(x1, plot_max.y), colors::kMeasureEdge);
  const std::string label = FormatDuration(b - a);
  const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
  const float lx = std::clamp((x0 + x1 - ts.x) / 2, ruler_min.x, plot_max.x - ts.x - 4);
  dl->AddRectFilled(ImVec2(lx - 4, ruler_min.y + 2), ImVec2(lx + ts.x + 4, ruler_min.y + 4 + ts.y),
                    IM_COL32(40, 90, 170, 255), 3);
  dl->AddText(ImVec2(lx, ruler_min.y + 3), IM_COL32(255, 255, 255, 255), label.c_str());
}

void DrawHoverTooltip(App& app, const Hover& hover) {
  const TraceModel& m = hover.m ? *hover.m : *app.model();
  if (hover.counter_track != kNone) {
    const viewer::Track& track = m.tracks[hover.counter_track];
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(track.name.c_str());
    ImGui::Text("value %.4g %s", hover.column.last,
                track.counter < m.counters.size() ? m.Str(m.counters[track.counter].unit).c_str() : "");
    if (hover.column.samples > 1)
      ImGui::Text("min %.4g  max %.4g over %u samples", hover.column.min, hover.column.max,
                  hover.column.samples);
    ImGui::EndTooltip();
    return;
  }
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
  if (hover.side == 0 && !app.events_local()) {
    // A remote trace: what the tile says (the details come with a click).
    const viewer::LaneItem& li = hover.drawn;
    if (li.item.merged()) {
      ImGui::Text("%u events from %s", li.item.count, app.source()->Str(li.name).c_str());
      ImGui::Text("Span %s", FormatDuration(double(li.item.end - li.item.start)).c_str());
      ImGui::TextDisabled("Zoom in (wheel / W) or double-click to see the events");
    } else {
      ImGui::TextUnformatted(app.source()->Str(li.name).c_str());
      ImGui::TextDisabled("%s  %s", viewer::EventKindName(li.kind), m.TrackOf({hover.lane, 0}).name.c_str());
      ImGui::Text("Duration %s", FormatDuration(double(li.item.end - li.item.start)).c_str());
      ImGui::Text("Start %s", viewer::FormatTimestamp(m, li.item.start).c_str());
    }
  } else if (hover.item.merged()) {
    for (const viewer::DetailField& f : viewer::BlockDetails(m, hover.lane, hover.item))
      ImGui::Text("%s: %s", f.name.c_str(), f.value.c_str());
    ImGui::TextDisabled("Zoom in (wheel / W) or double-click to see the events");
  } else {
    const EventId e{hover.lane, hover.item.first};
    ImGui::TextUnformatted(m.Str(m.Name(e)).c_str());
    if (app.compare().computed) ImGui::TextDisabled("in %s", hover.side ? "B" : "A");
    ImGui::TextDisabled("%s  %s", viewer::EventKindName(m.Kind(e)), m.TrackOf(e).name.c_str());
    ImGui::Text("Duration %s", FormatDuration(m.End(e) - m.Start(e)).c_str());
    ImGui::Text("Start %s", viewer::FormatTimestamp(m, m.Start(e)).c_str());
    if (viewer::FlowPartner(m, e).valid()) ImGui::TextDisabled("Click to select; flow arrow to its partner");
  }
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Input: wheel zoom, drag pan, shift-drag measure, click select
// ---------------------------------------------------------------------------------------------------------------

struct InputState {
  bool dragging = false;  // left button held since a press inside the plot
  bool measuring = false;
};
InputState g_input;

void HandlePlotInput(App& app, const ImVec2& plot_min, const ImVec2& plot_max, float visible_h,
                     float content_h, const Hover& hover) {
  ImGuiIO& io = ImGui::GetIO();
  View& v = app.view();
  const double width = plot_max.x - plot_min.x;
  const double ns_per_px = (v.t1 - v.t0) / width;
  const double mouse_t = v.t0 + (io.MousePos.x - plot_min.x) * ns_per_px;

  ImGui::SetCursorScreenPos(plot_min);
  ImGui::InvisibleButton("##plot", ImVec2(static_cast<float>(width), plot_max.y - plot_min.y),
                         ImGuiButtonFlags_MouseButtonLeft);
  const bool hovered = ImGui::IsItemHovered();

  if (hovered && io.MouseWheel != 0) app.ZoomAround(mouse_t, std::pow(0.8, io.MouseWheel));
  if (hovered && io.MouseWheelH != 0) {
    const double shift = -io.MouseWheelH * 0.1 * (v.t1 - v.t0);
    app.SetVisibleRange(v.t0 + shift, v.t1 + shift);
  }

  if (ImGui::IsItemActivated()) {
    g_input.dragging = true;
    g_input.measuring = io.KeyShift;
    if (g_input.measuring) v.measure = Measurement{false, true, mouse_t, mouse_t};
  }
  if (g_input.dragging && ImGui::IsItemActive()) {
    if (g_input.measuring) {
      v.measure.end = mouse_t;
    } else if (!ImGui::IsItemActivated() && (io.MouseDelta.x != 0 || io.MouseDelta.y != 0)) {
      // Pan by exactly the distance moved (no drag threshold), so the grabbed time stays under the mouse. Not
      // on the press's own frame: its delta is the move *to* the press (a quick move-and-click), not a drag.
      const double shift = -io.MouseDelta.x * ns_per_px;
      app.SetVisibleRange(v.t0 + shift, v.t1 + shift);
      v.scroll_y = std::clamp(v.scroll_y - io.MouseDelta.y, 0.0f, std::max(0.0f, content_h - visible_h));
      ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeAll);
    }
  }
  if (g_input.dragging && ImGui::IsItemDeactivated()) {
    g_input.dragging = false;
    const bool click = io.MouseDragMaxDistanceSqr[0] < 9.0f;
    if (g_input.measuring) {
      g_input.measuring = false;
      v.measure.dragging = false;
      v.measure.active = std::fabs(v.measure.end - v.measure.start) >= 3 * ns_per_px;
    } else if (click) {
      EventId hit;
      if (hover.valid && hover.lane != kNone && hover.side == 0 && !app.events_local()) {
        // A remote trace: the event under the mouse is the drawn item (a merged block selects nothing).
        if (!hover.item.merged()) hit = {hover.lane, hover.item.first};
      } else if (hover.valid && hover.lane != kNone) {
        hit = viewer::HitTest(*hover.m, hover.lane, static_cast<int64_t>(mouse_t - hover.shift), ns_per_px,
                              2.0);
      }
      if (hover.valid && hover.side == 1 && hit.valid()) {
        CompareSelectB(app, hit, false);
      } else {
        // The filter hides non-matching events: a click never selects one it did not draw.
        if (hit.valid() && app.search().track_filter.active &&
            !app.search().search.Matches(app.model()->Name(hit)))
          hit = {};
        app.Select(hit, false);
        if (app.compare().active()) CompareSelectB(app, {}, false);
      }
    }
  }
  if (hovered && ImGui::IsMouseDoubleClicked(0) && hover.valid && hover.lane != kNone && hover.item.merged())
    app.FitRange(static_cast<double>(hover.item.start) + hover.shift,
                 static_cast<double>(hover.item.end) + hover.shift, 0.05);
  // Right-click: add a note to the event under the mouse or to a range, or a kernel's histogram (trace A).
  if (ImGui::IsWindowHovered(kHoverFlags) && ImGui::IsMouseClicked(ImGuiMouseButton_Right) &&
      io.MousePos.x >= plot_min.x && io.MousePos.x < plot_max.x && io.MousePos.y >= plot_min.y &&
      io.MousePos.y < plot_max.y) {
    EventId hit;
    if (hover.valid && hover.lane != kNone && hover.side == 0 && app.events_local())
      hit = viewer::HitTest(*app.model(), hover.lane, static_cast<int64_t>(mouse_t), ns_per_px, 2.0);
    OpenTimelineContextMenu(app, hit, mouse_t);
  }
  DrawTimelineContextMenu(app);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] DrawTimeline
// ---------------------------------------------------------------------------------------------------------------

void DrawTimeline(App& app, const ImVec2& pos, const ImVec2& size) {
  const TraceModel& m = *app.model();
  View& v = app.view();
  ImGui::SetNextWindowPos(pos);
  ImGui::SetNextWindowSize(size);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::Begin("##timeline", nullptr,
               ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                   ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse |
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus);
  ImGui::PopStyleVar();
  ImDrawList* dl = ImGui::GetWindowDrawList();

  const ImVec2 ruler_min(pos.x + kLabelWidth, pos.y);
  const ImVec2 plot_min(pos.x + kLabelWidth, pos.y + kRulerHeight);
  const ImVec2 plot_max(pos.x + size.x - 8, pos.y + size.y);  // 8 px: the scroll indicator
  const float visible_h = plot_max.y - plot_min.y;
  if (plot_max.x - plot_min.x < 50 || visible_h < 20) {
    ImGui::End();
    return;
  }

  // The trace, and while comparing the second one under it (a header row above each).
  CompareState& cmp = app.compare();
  const bool comparing = cmp.computed && cmp.model != nullptr;
  Side sides[2];
  const viewer::TrackFilter* filter = app.search().track_filter.active ? &app.search().track_filter : nullptr;
  sides[0] = {&m,         app.source(),         0,
              0.0,        &app.search().search, filter,
              v.selected, &v.group_collapsed,   &v.track_collapsed};
  std::optional<viewer::LocalSource> b_source;  // B is always in memory
  if (comparing) {
    b_source.emplace(cmp.model.get());
    sides[1] = {cmp.model.get(), &*b_source,           1,
                cmp.offset(),    &cmp.search,          nullptr,
                cmp.b_selected,  &cmp.group_collapsed, &cmp.track_collapsed};
  }
  std::vector<Row> rows;
  std::vector<float> side_lane_y[2];
  float content_h = 0;
  for (int sd = 0; sd < (comparing ? 2 : 1); ++sd) {
    if (comparing) {
      rows.push_back({Row::kSide, uint32_t(sd), content_h, kSideHeight, 0, uint8_t(sd)});
      content_h += kSideHeight;
    }
    content_h = BuildRows(sides[sd], content_h, &rows, &side_lane_y[sd]);
  }
  const std::vector<float>& lane_content_y = side_lane_y[0];

  // Reveal a lane requested by a jump (search, flow partner, share link).
  if (v.reveal_lane != kNone && v.reveal_lane < lane_content_y.size() && lane_content_y[v.reveal_lane] >= 0) {
    const float ly = lane_content_y[v.reveal_lane];
    if (ly < v.scroll_y || ly + kLaneHeight > v.scroll_y + visible_h) v.scroll_y = ly - visible_h / 3;
    v.reveal_lane = kNone;
  }
  v.scroll_y = std::clamp(v.scroll_y, 0.0f, std::max(0.0f, content_h - visible_h));
  if (ImGui::IsWindowHovered(kHoverFlags) && ImGui::GetIO().MousePos.x < plot_min.x &&
      ImGui::GetIO().MouseWheel != 0)
    v.scroll_y = std::clamp(v.scroll_y - ImGui::GetIO().MouseWheel * 3 * kLaneHeight, 0.0f,
                            std::max(0.0f, content_h - visible_h));

  // Screen positions of every laid-out lane (flows and the C API need off-screen ones too).
  TimelineLayout& lay = v.layout;
  lay.plot_min = plot_min;
  lay.plot_max = plot_max;
  lay.lane_height = kLaneHeight;
  lay.lane_y.assign(m.lanes.size(), -1.0f);
  for (size_t i = 0; i < lane_content_y.size(); ++i)
    if (lane_content_y[i] >= 0) lay.lane_y[i] = plot_min.y + lane_content_y[i] - v.scroll_y;
  cmp.lane_y.assign(comparing ? cmp.model->lanes.size() : 0, -1.0f);
  for (size_t i = 0; i < cmp.lane_y.size(); ++i)
    if (side_lane_y[1][i] >= 0) cmp.lane_y[i] = plot_min.y + side_lane_y[1][i] - v.scroll_y;

  DrawRuler(dl, app, ruler_min, ImVec2(plot_max.x, plot_min.y), plot_max.y);
  DrawNoteMarkers(app, dl, ruler_min, ImVec2(plot_max.x, plot_min.y));  // teamui
  dl->AddRectFilled(ImVec2(pos.x, pos.y), ImVec2(pos.x + kLabelWidth, plot_min.y), colors::kRulerBg);
  {
    const std::string range = FormatDuration(v.t1 - v.t0) + " visible";
    dl->AddText(ImVec2(pos.x + 6, pos.y + 4), IM_COL32(150, 150, 160, 255), range.c_str());
  }

  // Idle gaps per GPU over the visible range: drawn under that GPU's stream rows.
  struct GpuGaps {
    uint8_t side = 0;
    uint32_t device = kNone;
    std::vector<std::pair<int64_t, int64_t>> gaps;
  };
  std::vector<GpuGaps> gpu_gaps;
  const double ns_per_px = (v.t1 - v.t0) / (plot_max.x - plot_min.x);
  auto gaps_for = [&](const Side& sd, uint32_t device) -> const std::vector<std::pair<int64_t, int64_t>>& {
    for (const GpuGaps& g : gpu_gaps)
      if (g.side == sd.which && g.device == device) return g.gaps;
    gpu_gaps.push_back({sd.which, device, {}});
    if (!sd.src->events_local()) return gpu_gaps.back().gaps;  // they fold the events: none remotely
    viewer::QueryIdleGaps(*sd.m, device, static_cast<int64_t>(std::floor(v.t0 - sd.shift)),
                          static_cast<int64_t>(std::ceil(v.t1 - sd.shift)), ns_per_px, &gpu_gaps.back().gaps,
                          2.0);
    return gpu_gaps.back().gaps;
  };

  Hover hover;
  std::vector<viewer::LaneItem> items;
  std::vector<viewer::CounterColumn> cols;
  dl->PushClipRect(ImVec2(pos.x, plot_min.y), plot_max, true);
  for (const Row& row : rows) {
    const float y = plot_min.y + row.y - v.scroll_y;
    if (y + row.height < plot_min.y || y > plot_max.y) continue;
    const Side& sd = sides[row.side];
    const TraceModel& rm = *sd.m;
    ImGui::PushID(static_cast<int>(row.side));
    ImGui::PushID(static_cast<int>(row.type) * 1000003 + static_cast<int>(row.id));
    if (row.type == Row::kSide) {
      // Which trace the tracks below belong to; B's header is also the separator between the two.
      dl->AddRectFilled(ImVec2(pos.x, y), ImVec2(plot_max.x, y + kSideHeight),
                        row.side ? colors::kCompareB : colors::kCompareA);
      if (row.side == 1)
        dl->AddLine(ImVec2(pos.x, y + 1), ImVec2(plot_max.x, y + 1), colors::kCounterpart, 3.0f);
      const std::string label = row.side
                                    ? "B: " + cmp.name + "   (shifted " +
                                          SignedDuration(cmp.align.offset_ns) + "; " + cmp.align.reason + ")"
                                    : "A: " + app.trace_name();
      dl->AddText(ImVec2(pos.x + 8, y + 5), IM_COL32(255, 255, 255, 255), label.c_str());
    } else if (row.type == Row::kGroup) {
      const viewer::TrackGroup& group = rm.groups[row.id];
      const bool collapsed = sd.GroupCollapsed(row.id);
      dl->AddRectFilled(ImVec2(pos.x, y), ImVec2(plot_max.x, y + kGroupHeight), colors::kGroupBg);
      ImGui::SetCursorScreenPos(ImVec2(pos.x, y));
      if (ImGui::InvisibleButton("##group", ImVec2(kLabelWidth, kGroupHeight)) &&
          row.id < sd.group_collapsed->size())
        (*sd.group_collapsed)[row.id] = !collapsed;
      ImGui::RenderArrow(dl, ImVec2(pos.x + 4, y + 4), IM_COL32(220, 220, 220, 255),
                         collapsed ? ImGuiDir_Right : ImGuiDir_Down, 0.8f);
      std::string label = group.name;
      if (group.kind == viewer::GroupKind::kGpu) {
        for (const viewer::DeviceSummary& d : rm.device_summaries)
          if (d.device_id == group.device_id) {
            label += "  idle " + FormatIdleShare(d.idle_share());
          }
        // The idle strip: the group header shows where this GPU had nothing to do, even when collapsed.
        dl->PushClipRect(ImVec2(plot_min.x, y), ImVec2(plot_max.x, y + kGroupHeight), true);
        for (const auto& [g0, g1] : gaps_for(sd, group.device_id)) {
          const float x0 = static_cast<float>(lay.TimeToX(static_cast<double>(g0) + sd.shift, v.t0, v.t1));
          const float x1 = static_cast<float>(lay.TimeToX(static_cast<double>(g1) + sd.shift, v.t0, v.t1));
          dl->AddRectFilled(ImVec2(x0, y + kGroupHeight - 6),
                            ImVec2(std::max(x1, x0 + 1), y + kGroupHeight - 1), colors::kIdleGapEdge);
        }
        dl->PopClipRect();
      }
      dl->PushClipRect(ImVec2(pos.x, y), ImVec2(pos.x + kLabelWidth + 400, y + kGroupHeight), true);
      dl->AddText(ImVec2(pos.x + 20, y + 4), IM_COL32(235, 235, 240, 255), label.c_str());
      dl->PopClipRect();
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s\n%s", label.c_str(), collapsed ? "Click to expand" : "Click to collapse");
    } else {
      const viewer::Track& track = rm.tracks[row.id];
      dl->AddLine(ImVec2(pos.x, y + row.height - 1), ImVec2(plot_max.x, y + row.height - 1),
                  colors::kTrackSep);
      // GPU idle bands behind the stream's events.
      if (track.kind == viewer::TrackKind::kGpuStream && track.device_id != kNone) {
        dl->PushClipRect(ImVec2(plot_min.x, y), ImVec2(plot_max.x, y + row.height), true);
        for (const auto& [g0, g1] : gaps_for(sd, track.device_id)) {
          const float x0 = static_cast<float>(lay.TimeToX(static_cast<double>(g0) + sd.shift, v.t0, v.t1));
          const float x1 = static_cast<float>(lay.TimeToX(static_cast<double>(g1) + sd.shift, v.t0, v.t1));
          dl->AddRectFilled(ImVec2(x0, y), ImVec2(std::max(x1, x0 + 1), y + row.height - kTrackGap),
                            colors::kIdleGap);
        }
        dl->PopClipRect();
      }
      dl->PushClipRect(ImVec2(plot_min.x, std::max(y, plot_min.y)), plot_max, true);
      if (track.kind == viewer::TrackKind::kCounter) {
        DrawCounter(dl, app, sd, track, y, row.height - kTrackGap, plot_min, plot_max, &cols, &hover, row.id);
      } else {
        for (uint32_t d = 0; d < row.lanes; ++d) {
          const float ly = y + d * kLaneHeight;
          if (ly + kLaneHeight < plot_min.y || ly > plot_max.y) continue;
          DrawLane(dl, app, sd, track.first_lane + d, ly, plot_min, plot_max, &items, &hover);
        }
      }
      dl->PopClipRect();
      // Label column: name, and a toggle for tracks with nested rows.
      const bool nested = track.lane_count > 1;
      ImGui::SetCursorScreenPos(ImVec2(pos.x, y));
      if (ImGui::InvisibleButton("##track", ImVec2(kLabelWidth, std::max(4.0f, row.height - kTrackGap))) &&
          nested && row.id < sd.track_collapsed->size())
        (*sd.track_collapsed)[row.id] = !sd.TrackCollapsed(row.id);
      if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("%s\n%s events%s", track.name.c_str(), FormatCount(track.event_count).c_str(),
                          nested ? (sd.TrackCollapsed(row.id) ? "\nClick to show all nesting levels"
                                                              : "\nClick to show the top level only")
                                 : "");
      }
      dl->PushClipRect(ImVec2(pos.x, std::max(y, plot_min.y)), ImVec2(pos.x + kLabelWidth - 4, plot_max.y),
                       true);
      if (nested)
        ImGui::RenderArrow(dl, ImVec2(pos.x + 12, y + 4), IM_COL32(170, 170, 180, 255),
                           sd.TrackCollapsed(row.id) ? ImGuiDir_Right : ImGuiDir_Down, 0.6f);
      // Long names ("pt_autograd_0 (702) • Sync & overhead") end in "..." rather than a cut glyph; the
      // tooltip has the whole name.
      DrawClippedText(dl, pos.x + 23, pos.x + kLabelWidth - 4, y + 2, IM_COL32(200, 200, 208, 255),
                      track.name);
      dl->PopClipRect();
    }
    ImGui::PopID();
    ImGui::PopID();
  }
  dl->PopClipRect();

  dl->PushClipRect(ImVec2(plot_min.x, pos.y), plot_max, true);
  DrawSelectionAndFlows(dl, app);
  DrawCompareOverlay(dl, app);
  DrawMeasurement(dl, app, ruler_min, plot_max);
  dl->PopClipRect();

  // Scroll indicator on the right edge.
  if (content_h > visible_h) {
    const float bar_h = std::max(20.0f, visible_h * visible_h / content_h);
    const float bar_y = plot_min.y + (visible_h - bar_h) * (v.scroll_y / (content_h - visible_h));
    dl->AddRectFilled(ImVec2(plot_max.x + 2, bar_y), ImVec2(plot_max.x + 7, bar_y + bar_h),
                      IM_COL32(120, 120, 130, 160), 2);
  }

  HandlePlotInput(app, plot_min, plot_max, visible_h, content_h, hover);
  v.hovered = hover.valid && hover.side == 0 && hover.lane != kNone && !hover.item.merged()
                  ? EventId{hover.lane, hover.item.first}
                  : EventId{};
  if (hover.valid && !g_input.dragging && ImGui::IsItemHovered()) DrawHoverTooltip(app, hover);
  ImGui::End();
}

}  // namespace gt::ui
