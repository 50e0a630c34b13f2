// The exported C API: what the page's JS glue and the browser tests use to drive the viewer and to ask what
// it shows. Strings returned are owned here and valid until the next call of the same function; JSON where
// the answer has structure. Every function is safe to call with no trace loaded.
//
// [SECTION] Loading
// [SECTION] What is shown: tracks, range, counts
// [SECTION] Selection, search, summary, loss
// [SECTION] Flame graph of sampled CPU stacks (ui/flame_panel.h)
// [SECTION] View state (share links)
// [SECTION] Two traces compared (ui/compare_view.h)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

#include "gt/viewer/collectives.h"
#include "gt/viewer/json.h"
#include "gt/viewer/query.h"
#include "ui/app.h"
#include "ui/capi_common.h"
#include "ui/compare_view.h"
#include "ui/counters/counters_view.h"

namespace {

using gt::ui::App;
using gt::ui::GlobalApp;
namespace viewer = gt::viewer;

// Results of the viewer core are encoded by gt/viewer/json.h (the CLI's --json uses the same); the replies
// about UI state below (display, layout, selection position) spell their scalars through its
// JsonQuote/JsonNumber.
using viewer::JsonNumber;

void AppendJsonString(std::string* out, std::string_view s) {
  *out += viewer::JsonQuote(s);
}

const char* Keep(std::string* slot, std::string value) {
  return gt::ui::KeepString(slot, std::move(value));
}

const viewer::TraceModel* Model() {
  return GlobalApp() ? GlobalApp()->model() : nullptr;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Loading
// ---------------------------------------------------------------------------------------------------------------

// Takes ownership of `data` (from malloc). Returns 0 when loading started (progress: gt_load_progress), else
// non-zero with gt_last_error() set.
GT_EXPORT int gt_open_buffer(const char* name, uint8_t* data, uint32_t size) {
  App* app = GlobalApp();
  if (!app) {
    std::free(data);
    return -1;
  }
  app->OpenBuffer(name ? name : "trace", data, size);
  return app->load_state() == gt::ui::LoadState::kFailed ? 1 : 0;
}

// Several files of one job, opened as one trace through the merge: gt_stage_buffer for each (takes ownership
// of `data`, from malloc), then gt_open_staged. Returns as gt_open_buffer; the merge's warnings (an input
// left out, missing ranks) arrive as gt_load_warning and in gt_losses once loaded.
GT_EXPORT int gt_stage_buffer(const char* name, uint8_t* data, uint32_t size) {
  App* app = GlobalApp();
  if (!app) {
    std::free(data);
    return -1;
  }
  app->StageInput(name ? name : "trace", data, size);
  return 0;
}
// Drops files staged by an open that was abandoned half way (the page ran out of memory copying the next).
GT_EXPORT void gt_clear_staged() {
  if (GlobalApp()) GlobalApp()->ClearStaged();
}
GT_EXPORT int gt_open_staged() {
  App* app = GlobalApp();
  if (!app) return -1;
  app->OpenStaged();
  return app->load_state() == gt::ui::LoadState::kFailed ? 1 : 0;
}

// A path in the wasm file system (MEMFS) or, natively, on disk.
GT_EXPORT int gt_open_file(const char* path) {
  App* app = GlobalApp();
  if (!app || !path) return -1;
  app->OpenFile(path);
  return app->load_state() == gt::ui::LoadState::kFailed ? 1 : 0;
}

// 0 idle (nothing opened), 1 loading, 2 loaded, 3 failed (gt_last_error says why).
GT_EXPORT int gt_load_state() {
  return GlobalApp() ? static_cast<int>(GlobalApp()->load_state()) : 0;
}
GT_EXPORT double gt_load_progress() {
  return GlobalApp() ? GlobalApp()->load_progress() : 0;
}
// Records (.gtrace) or events (JSON) read so far by the load in progress.
GT_EXPORT double gt_load_records() {
  return GlobalApp() ? double(GlobalApp()->load_detail().records) : 0;
}
// 1 while reading is over and the timeline is being built (the fraction says 100% but the load goes on).
GT_EXPORT int gt_load_building() {
  return GlobalApp() && GlobalApp()->load_building() ? 1 : 0;
}
// Where the last single-file load's time went, in seconds: {"wall","steps","finish","frames","walk","route",
// "merge","lanes","lod","devices","other"}. "wall" runs from gt_open_buffer to the installed model; "steps"
// and "finish" are the loader's share of it (the rest is frames drawn and waited for between Steps); the
// phases are the loader's own (gt::viewer::LoadTimings). For benchmarks (bench/viewer/bench_page_load.mjs).
GT_EXPORT const char* gt_load_timings() {
  static std::string s;
  if (!GlobalApp()) return "null";
  const App::LoadClock& c = GlobalApp()->load_clock();
  const viewer::LoadTimings& p = c.phases;
  return Keep(&s, "{\"wall\":" + JsonNumber(c.wall_s) + ",\"steps\":" + JsonNumber(c.steps_s) +
                      ",\"finish\":" + JsonNumber(c.finish_s) + ",\"frames\":" + JsonNumber(c.frames) +
                      ",\"walk\":" + JsonNumber(p.walk) + ",\"route\":" + JsonNumber(p.route) +
                      ",\"merge\":" + JsonNumber(p.merge) + ",\"lanes\":" + JsonNumber(p.lanes) +
                      ",\"lod\":" + JsonNumber(p.lod) + ",\"devices\":" + JsonNumber(p.devices) +
                      ",\"other\":" + JsonNumber(p.other) + "}");
}
GT_EXPORT const char* gt_last_error() {
  return GlobalApp() ? GlobalApp()->last_error().c_str() : "";
}
// Non-empty when the trace loaded but parts of it were lost (damaged or truncated file, collector drops).
GT_EXPORT const char* gt_load_warning() {
  return GlobalApp() ? GlobalApp()->load_warning().c_str() : "";
}
GT_EXPORT const char* gt_trace_name() {
  return GlobalApp() ? GlobalApp()->trace_name().c_str() : "";
}
// CPU milliseconds of the last UI frame inside the wasm (layout + LOD queries + ImGui draw lists), excluding
// WebGL and the browser: the viewer's own cost, unlike frame rates under SwiftShader.
GT_EXPORT double gt_last_frame_ms() {
  return GlobalApp() ? GlobalApp()->last_frame_ms() : 0;
}
GT_EXPORT double gt_frame_count() {
  return GlobalApp() ? static_cast<double>(GlobalApp()->frame_count()) : 0;
}
// The display as ImGui last saw it: {"width","height"} in CSS pixels (the coordinates every other function
// reports), "framebuffer_scale" (backing pixels per CSS pixel: devicePixelRatio on the page), "font_pixels"
// (the size the font atlas is rasterized at) and "font_size" (the size text is laid out at, CSS pixels).
GT_EXPORT const char* gt_display_info() {
  static std::string s;
  if (!ImGui::GetCurrentContext()) return "null";
  const ImGuiIO& io = ImGui::GetIO();
  const ImFont* font = io.Fonts->Fonts.empty() ? nullptr : io.Fonts->Fonts[0];
  return Keep(&s, "{\"width\":" + JsonNumber(io.DisplaySize.x) +
                      ",\"height\":" + JsonNumber(io.DisplaySize.y) +
                      ",\"framebuffer_scale\":" + JsonNumber(io.DisplayFramebufferScale.x) +
                      ",\"font_pixels\":" + JsonNumber(font ? font->FontSize : 0) +
                      ",\"font_size\":" + JsonNumber(font ? font->FontSize * io.FontGlobalScale : 0) + "}");
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] What is shown: tracks, range, counts
// ---------------------------------------------------------------------------------------------------------------

GT_EXPORT int gt_track_count() {
  const viewer::TraceModel* m = Model();
  return m ? static_cast<int>(m->tracks.size()) : 0;
}

// Tracks in display order (group by group).
GT_EXPORT const char* gt_track_name(int i) {
  static std::string s;
  const viewer::TraceModel* m = Model();
  if (!m || i < 0) return "";
  int k = 0;
  for (const viewer::TrackGroup& g : m->groups)
    for (viewer::TrackId t : g.tracks)
      if (k++ == i) return Keep(&s, m->tracks[t].name);
  return "";
}

// [{"name","kind","group","key","events","lanes","collapsed","visible"}] in display order; "visible": laid
// out on screen in the current frame (group expanded and scrolled into view).
GT_EXPORT const char* gt_tracks() {
  static std::string s;
  const viewer::TraceModel* m = Model();
  if (!m) return "[]";
  const App& app = *GlobalApp();
  const gt::ui::TimelineLayout& lay = app.view().layout;
  std::string out = "[";
  for (size_t gi = 0; gi < m->groups.size(); ++gi) {
    const viewer::TrackGroup& g = m->groups[gi];
    for (viewer::TrackId t : g.tracks) {
      const viewer::Track& tr = m->tracks[t];
      if (out.size() > 1) out += ",";
      out += "{\"name\":";
      AppendJsonString(&out, tr.name);
      out += ",\"kind\":";
      AppendJsonString(&out, viewer::TrackKindName(tr.kind));
      out += ",\"group\":";
      AppendJsonString(&out, g.name);
      out += ",\"key\":";
      AppendJsonString(&out, tr.key);
      out += ",\"events\":" + JsonNumber(static_cast<double>(tr.event_count));
      out += ",\"lanes\":" + std::to_string(tr.lane_count);
      const bool collapsed =
          app.IsGroupCollapsed(static_cast<viewer::GroupId>(gi)) || app.IsTrackCollapsed(t);
      out += std::string(",\"collapsed\":") + (collapsed ? "true" : "false");
      bool visible = false;
      if (tr.lane_count > 0 && tr.first_lane < lay.lane_y.size()) {
        const float y = lay.lane_y[tr.first_lane];
        visible = y >= lay.plot_min.y - lay.lane_height && y < lay.plot_max.y;
      }
      out += std::string(",\"visible\":") + (visible ? "true" : "false") + "}";
    }
  }
  out += "]";
  return Keep(&s, std::move(out));
}

// Collapses (1) or expands (0) the track or group with this key, as a click on its header would.
// 1 when the key names a track or group of the loaded trace.
GT_EXPORT int gt_set_collapsed(const char* key, int collapsed) {
  const viewer::TraceModel* m = Model();
  if (!m || !key) return 0;
  for (size_t g = 0; g < m->groups.size(); ++g)
    if (m->groups[g].key == key) {
      GlobalApp()->SetGroupCollapsed(static_cast<viewer::GroupId>(g), collapsed != 0);
      return 1;
    }
  for (size_t t = 0; t < m->tracks.size(); ++t)
    if (m->tracks[t].key == key) {
      GlobalApp()->SetTrackCollapsed(static_cast<viewer::TrackId>(t), collapsed != 0);
      return 1;
    }
  return 0;
}

GT_EXPORT double gt_visible_range_start() {
  return GlobalApp() ? GlobalApp()->view().t0 : 0;
}
GT_EXPORT double gt_visible_range_end() {
  return GlobalApp() ? GlobalApp()->view().t1 : 0;
}
GT_EXPORT void gt_set_visible_range(double t0, double t1) {
  if (GlobalApp()) GlobalApp()->SetVisibleRange(t0, t1);
}
GT_EXPORT void gt_fit_all() {
  if (GlobalApp()) GlobalApp()->FitAll();
}
GT_EXPORT double gt_trace_start() {
  return Model() ? static_cast<double>(Model()->first_ns) : 0;
}
GT_EXPORT double gt_trace_end() {
  return Model() ? static_cast<double>(Model()->last_ns) : 0;
}

// The timeline's event area in page (CSS) pixels: {"x","y","w","h"}; zeros before a trace is shown.
GT_EXPORT const char* gt_timeline_rect() {
  static std::string s;
  if (!GlobalApp()) return "null";
  const gt::ui::TimelineLayout& lay = GlobalApp()->view().layout;
  return Keep(&s, "{\"x\":" + JsonNumber(lay.plot_min.x) + ",\"y\":" + JsonNumber(lay.plot_min.y) +
                      ",\"w\":" + JsonNumber(lay.plot_max.x - lay.plot_min.x) +
                      ",\"h\":" + JsonNumber(lay.plot_max.y - lay.plot_min.y) + "}");
}

// Events of a kind in the whole trace: "kernel", "memcpy", "memset", "api", "nvtx", "sync", "overhead",
// "host_op", "annotation", "instant", "all" (timeline events), "counter_samples". -1 for an unknown kind.
GT_EXPORT double gt_event_count(const char* kind) {
  const viewer::TraceModel* m = Model();
  if (!m || !kind) return 0;
  const std::string k = kind;
  if (k == "all") return static_cast<double>(m->event_count);
  if (k == "counter_samples") return static_cast<double>(m->sample_count);
  static constexpr const char* kTokens[] = {"kernel", "memcpy",   "memset",  "api",        "nvtx",
                                            "sync",   "overhead", "host_op", "annotation", "instant"};
  static_assert(std::size(kTokens) == static_cast<size_t>(viewer::EventKind::kCount));
  if (!GlobalApp()->events_local()) return -1;  // a remote trace's counts per kind are not asked for
  for (uint32_t ek = 0; ek < std::size(kTokens); ++ek)
    if (k == kTokens[ek])
      return static_cast<double>(viewer::CountEvents(*m, static_cast<viewer::EventKind>(ek)));
  return -1;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Selection, search, summary, loss
// ---------------------------------------------------------------------------------------------------------------

// The selected event as {"name","kind","track","key","start","end","fields":{...every detail field...}}, or
// null.
GT_EXPORT const char* gt_selection() {
  static std::string s;
  const viewer::TraceModel* m = Model();
  if (!m || !GlobalApp()->view().selected.valid()) return "null";
  // A remote trace: the server's answer (the same encoder), once it is here.
  if (viewer::RemoteTrace* r = GlobalApp()->remote()) {
    if (!r->Event(GlobalApp()->view().selected)) return "null";
    const std::string& j = r->EventJsonOf(GlobalApp()->view().selected);
    return Keep(&s, j.empty() ? "null" : j);
  }
  return Keep(&s, viewer::EventJson(*m, GlobalApp()->view().selected));
}

// Selects by stable event key (TraceModel::EventKey) and reveals it; "" clears. 1 when found.
GT_EXPORT int gt_select(const char* key) {
  const viewer::TraceModel* m = Model();
  if (!m || !key) return 0;
  if (!*key) {
    GlobalApp()->Select({}, false);
    return 1;
  }
  const viewer::EventId e = GlobalApp()->source()->FindEventByKey(key);
  if (!e.valid()) return 0;
  GlobalApp()->Select(e, true);
  return 1;
}

// Selects the other end of the selected event's launch -> GPU work link (FlowPartner) and reveals it.
// 1 when there was one.
// A remote trace's partner comes from the server: 0 until it is here (call again), -1 once it says there is
// none (locally: 0 for none).
GT_EXPORT int gt_jump_to_partner() {
  const viewer::TraceModel* m = Model();
  if (!m || !GlobalApp()->view().selected.valid()) return 0;
  const viewer::PartnerInfo* p = GlobalApp()->source()->Partner(GlobalApp()->view().selected);
  if (!p) return 0;
  if (!p->id.valid()) return GlobalApp()->events_local() ? 0 : -1;
  GlobalApp()->Select(p->id, true);
  return 1;
}

// Where the selected event is drawn: {"x","y","visible"} in page pixels (middle of its visible part), or
// null.
GT_EXPORT const char* gt_selection_screen_pos() {
  static std::string s;
  const viewer::TraceModel* m = Model();
  if (!m) return "null";
  const gt::ui::View& v = GlobalApp()->view();
  const viewer::EventId e = v.selected;
  if (!e.valid() || e.lane >= v.layout.lane_y.size() || v.layout.lane_y[e.lane] < 0) return "null";
  const viewer::EventInfo* info = GlobalApp()->source()->Event(e);
  if (!info || !info->found) return "null";
  const double a = std::max(static_cast<double>(info->start), v.t0);
  const double b = std::min(static_cast<double>(info->end), v.t1);
  const double x = v.layout.TimeToX((a + b) / 2, v.t0, v.t1);
  const double y = v.layout.lane_y[e.lane] + v.layout.lane_height / 2;
  const bool visible = b >= a && x >= v.layout.plot_min.x && x < v.layout.plot_max.x &&
                       y >= v.layout.plot_min.y && y < v.layout.plot_max.y;
  return Keep(&s, "{\"x\":" + JsonNumber(x) + ",\"y\":" + JsonNumber(y) +
                      ",\"visible\":" + (visible ? "true" : "false") + "}");
}

// The selected NCCL kernel's collective on every rank, as the timeline outlines them: [{"rank","pid","key",
// "start","end","wait_ns","selected","x","y","visible"}] (x, y: page pixels of the kernel's start; visible:
// on screen), or [] when the selection is no matched collective (or the trace is remote).
GT_EXPORT const char* gt_collective_peers() {
  static std::string s;
  const viewer::TraceModel* m = Model();
  const gt::ui::View& v = GlobalApp()->view();
  if (!m || !v.selected.valid() || !GlobalApp()->events_local()) return "[]";
  const viewer::CollectiveReport& report = viewer::CollectivesOf(*m);
  const auto* ref = report.Find(v.selected);
  if (!ref) return "[]";
  std::string out = "[";
  for (const viewer::CollectiveRank& r : report.collectives[ref->collective].ranks) {
    const bool laid_out = r.kernel.lane < v.layout.lane_y.size() && v.layout.lane_y[r.kernel.lane] >= 0;
    const double x = v.layout.TimeToX(double(r.start), v.t0, v.t1);
    const double y = laid_out ? v.layout.lane_y[r.kernel.lane] + v.layout.lane_height / 2 : -1;
    const bool visible = laid_out && x >= v.layout.plot_min.x && x < v.layout.plot_max.x &&
                         y >= v.layout.plot_min.y && y < v.layout.plot_max.y;
    if (out.size() > 1) out += ",";
    out += "{\"rank\":" + std::to_string(r.rank) + ",\"pid\":" + std::to_string(r.pid) + ",\"key\":";
    AppendJsonString(&out, m->EventKey(r.kernel));
    out += ",\"start\":" + JsonNumber(double(r.start)) + ",\"end\":" + JsonNumber(double(r.end)) +
           ",\"wait_ns\":" + JsonNumber(double(r.wait_ns)) +
           ",\"selected\":" + (r.kernel == v.selected ? "true" : "false") + ",\"x\":" + JsonNumber(x) +
           ",\"y\":" + JsonNumber(y) + ",\"visible\":" + (visible ? "true" : "false") + "}";
  }
  return Keep(&s, out + "]");
}

// The measured (shift-drag) range {"start","end"} in trace ns, or null.
GT_EXPORT const char* gt_measurement() {
  static std::string s;
  if (!GlobalApp() || !GlobalApp()->view().measure.active) return "null";
  const gt::ui::Measurement& mm = GlobalApp()->view().measure;
  return Keep(&s, "{\"start\":" + JsonNumber(std::min(mm.start, mm.end)) +
                      ",\"end\":" + JsonNumber(std::max(mm.start, mm.end)) + "}");
}

// Sets the search text (as typed in the search box); returns the match count.
GT_EXPORT double gt_search(const char* text) {
  if (!GlobalApp() || !text) return 0;
  return static_cast<double>(GlobalApp()->SetSearch(text));
}
// Jumps to (selects, reveals) the next / previous match; returns its 1-based ordinal, 0 if none. On a remote
// trace the server finds it: 0 now, the match is selected when its answer arrives (gt_highlight's pending).
GT_EXPORT double gt_search_next() {
  const viewer::TraceModel* m = Model();
  if (!m) return 0;
  const viewer::EventId e = GlobalApp()->SearchStep(true);
  return e.valid() ? static_cast<double>(GlobalApp()->search().search.Ordinal(*m, e)) : 0;
}
GT_EXPORT double gt_search_prev() {
  const viewer::TraceModel* m = Model();
  if (!m) return 0;
  const viewer::EventId e = GlobalApp()->SearchStep(false);
  return e.valid() ? static_cast<double>(GlobalApp()->search().search.Ordinal(*m, e)) : 0;
}

// The kernel table as name rows (gt/viewer/json.h), by total time.
GT_EXPORT const char* gt_kernel_summary() {
  static std::string s;
  const viewer::TraceModel* m = Model();
  if (!m) return "[]";
  if (viewer::RemoteTrace* r = GlobalApp()->remote()) {  // rows with their names from the server
    const auto* rows = r->Kernels();
    if (!rows) return "[]";
    std::string out = "[";
    for (const viewer::KernelSummaryRow& k : *rows)
      out += std::string(out.size() > 1 ? "," : "") + "{\"name\":" + viewer::JsonQuote(r->Str(k.name)) +
             ",\"count\":" + JsonNumber(double(k.count)) + ",\"total_ns\":" + JsonNumber(double(k.total_ns)) +
             "}";
    return Keep(&s, out + "]");
  }
  return Keep(&s, viewer::KernelSummaryJson(*m, *GlobalApp()->source()->Kernels()));
}

// Does what clicking the kernel table row of kernel `name` does: zooms to the span of its instances and
// highlights exactly them (by interned name, so "relu" does not light up "relu_bwd"). Returns the highlighted
// count, -1 when no row has that name.
GT_EXPORT double gt_kernel_row_click(const char* name) {
  const viewer::TraceModel* m = Model();
  if (!m || !name) return -1;
  const auto* rows = GlobalApp()->source()->Kernels();
  if (!rows) return -1;
  for (const viewer::KernelSummaryRow& r : *rows)
    if (GlobalApp()->source()->Str(r.name) == name) return static_cast<double>(GlobalApp()->ZoomToKernel(r));
  return -1;
}

// What the timeline highlights now: {"text" (the search box), "exact" (a kernel row's exact name), "count",
// "names" (matching names), "pending" (a remote trace's search answer or step is on its way)}.
GT_EXPORT const char* gt_highlight() {
  static std::string s;
  if (!GlobalApp()) return "null";
  const gt::ui::SearchState& st = GlobalApp()->search();
  std::string out = "{\"text\":";
  AppendJsonString(&out, st.text);
  out += std::string(",\"exact\":") + (st.search.exact() ? "true" : "false");
  out += ",\"count\":" + JsonNumber(static_cast<double>(st.search.match_count()));
  out += ",\"names\":" + JsonNumber(static_cast<double>(st.search.matching_names()));
  // A remote trace: the server's count, or a step's match, is still on its way.
  const viewer::RemoteTrace* r = GlobalApp()->remote();
  const bool pending = r && ((st.text[0] && !st.remote_applied) || r->search_step_pending());
  out += std::string(",\"pending\":") + (pending ? "true" : "false") + "}";
  return Keep(&s, std::move(out));
}

// [loss] (gt/viewer/json.h), most severe first (what the Data loss panel shows).
GT_EXPORT const char* gt_losses() {
  static std::string s;
  const viewer::TraceModel* m = Model();
  if (!m) return "[]";
  return Keep(&s, viewer::LossesJson(viewer::LossSummary(*m)));
}

// Kernel-counter analysis (viewer/ui/counters): {"profiled_launches","kernels":[...],"selected":{...}|null}.
// "selected" holds the selected kernel's merged analysis and "launch": which profiled launch the selected
// event is ("launch 2", "graph launch 0"), or null when that launch was not profiled.
GT_EXPORT const char* gt_counters() {
  static std::string s;
  if (!GlobalApp()) return "null";
  return Keep(&s, gt::ui::CountersJson(*GlobalApp()));
}

// The open bottom panel: "details", "kernels", "summary", "search", "loss", "roofline".
GT_EXPORT const char* gt_panel() {
  return GlobalApp() ? gt::ui::PanelName(GlobalApp()->panel()) : "";
}
GT_EXPORT int gt_show_panel(const char* name) {
  if (!GlobalApp() || !name) return 0;
  const gt::ui::Panel p = gt::ui::PanelFromName(name);
  if (p == gt::ui::Panel::kNone) return 0;
  GlobalApp()->ShowPanel(p);
  return 1;
}

// The Summary tab's table `what` ("api", "copies", "nvtx"; also "kernels"), at most 100 rows by total time,
// as name rows (gt/viewer/json.h: the rows of `gtrace stats --json`); "gaps": its idle gaps, as idle gaps
// ("[]" while a remote trace's are on their way). "collectives": the NCCL report across ranks, an object in
// the shape of `gtrace stats --json`'s "collectives" (per-rank rows, late collectives, the straggler
// diagnosis). "[]" with no trace or an unknown table.
GT_EXPORT const char* gt_summary(const char* what) {
  static std::string s;
  const viewer::TraceModel* m = Model();
  if (!m || !what) return "[]";
  if (!GlobalApp()->events_local() && std::string_view(what) == "collectives") return "[]";  // scans events
  if (std::string_view(what) == "gaps") {  // a remote trace's from the server (computed at its index build)
    const auto* gaps = GlobalApp()->source()->IdleGaps();
    return gaps ? Keep(&s, viewer::IdleGapsJson(*gaps)) : "[]";
  }
  if (std::string_view(what) == "collectives")
    return Keep(&s, viewer::CollectivesJson(viewer::CollectivesOf(*m)));
  for (auto kind : {viewer::SummaryOf::kKernels, viewer::SummaryOf::kCopies, viewer::SummaryOf::kApi,
                    viewer::SummaryOf::kNvtx})
    if (std::string_view(what) == viewer::SummaryOfName(kind))
      if (const auto* rows = GlobalApp()->source()->Summary(kind))  // a remote trace's: once here
        return Keep(&s, viewer::NameSummaryJson(*rows, 100));
  return "[]";
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Flame graph of sampled CPU stacks (ui/flame_panel.h)
// ---------------------------------------------------------------------------------------------------------------

// What the Flame graph tab shows: {"start","end","source","threads" ("cuda"|"all"|"process"|"thread"),"pid",
// "tid","sampled_threads" ([{"pid","tid","cuda"}]: what the filter offers),"drawn" (its tab was drawn in the
// last frame),"hovered" (the node under the mouse, its tooltip up, or null),"samples","focus","nodes":[...]}
// (nodes as gt/viewer/json.h's flame graph), null with no trace.
GT_EXPORT const char* gt_flame_graph() {
  static std::string s;
  if (!Model()) return "null";
  return Keep(&s, gt::ui::FlameJson(*GlobalApp()));
}
// Measures [t0, t1] (as a shift-drag does; the flame graph follows the measurement).
GT_EXPORT void gt_flame_select_range(double t0, double t1) {
  if (!Model()) return;
  GlobalApp()->view().measure = gt::ui::Measurement{true, false, t0, t1};
  gt::ui::UpdateFlame(*GlobalApp());
}
// The flame graph of idle gap `i` of gt_summary("gaps") (what its "Flame graph" button does); 0: no such gap.
GT_EXPORT int gt_flame_select_gap(int i) {
  const viewer::TraceModel* m = Model();
  if (!m || i < 0 || !GlobalApp()->events_local()) return 0;
  const auto gaps = viewer::ExplainIdleGaps(*m, 5);
  if (size_t(i) >= gaps.size()) return 0;
  gt::ui::SetFlameRange(*GlobalApp(), double(gaps[i].start_ns), double(gaps[i].end_ns),
                        "idle gap " + std::to_string(i + 1));
  GlobalApp()->ShowPanel(gt::ui::Panel::kFlame);
  return 1;
}
// Whose samples: process `pid` (0: all) and thread `tid` of it (0: all its threads); pid -1: the threads that
// call CUDA (the default).
GT_EXPORT void gt_flame_filter(double pid, double tid) {
  if (!Model()) return;
  if (pid < 0)
    gt::ui::SetFlameCudaThreads(*GlobalApp());
  else
    gt::ui::SetFlameThread(*GlobalApp(), uint32_t(pid), uint32_t(tid));
}
// Zooms into node `node` of gt_flame_graph (0: the whole graph); 0 when there is no such node.
GT_EXPORT int gt_flame_zoom(int node) {
  return Model() && node >= 0 && gt::ui::SetFlameFocus(*GlobalApp(), uint32_t(node)) ? 1 : 0;
}
// Where node `node` was drawn in the last frame {"x","y","w","h"} (CSS px), null when it was not.
GT_EXPORT const char* gt_flame_node_rect(int node) {
  static std::string s;
  if (!Model() || node < 0) return "null";
  return Keep(&s, gt::ui::FlameNodeScreenJson(*GlobalApp(), uint32_t(node)));
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] View state (share links)
// ---------------------------------------------------------------------------------------------------------------

// The current view as a URL-safe ViewState string ("" with no trace).
GT_EXPORT const char* gt_view_state() {
  static std::string s;
  if (!Model()) return "";
  return Keep(&s, GlobalApp()->CurrentViewState().Serialize());
}

// Applies a ViewState string now, or after the load in progress finishes. 1 on success; 0 with
// gt_last_view_error() set for a malformed string (the view is left as it was).
static std::string g_view_error;
GT_EXPORT int gt_apply_view_state(const char* text) {
  if (!GlobalApp() || !text) return 0;
  g_view_error.clear();
  return GlobalApp()->ApplyViewState(text, &g_view_error) ? 1 : 0;
}
GT_EXPORT const char* gt_last_view_error() {
  return g_view_error.c_str();
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Two traces compared (ui/compare_view.h)
// ---------------------------------------------------------------------------------------------------------------

// Opens a second trace (B) to compare with the loaded or loading one (A); takes ownership of `data` (malloc).
// B loads over the next frames; a bad B sets gt_compare_state's "error" and A stays as it was. Returns 0
// when the load started, 1 when the bytes are no trace at all.
GT_EXPORT int gt_compare_open_buffer(const char* name, uint8_t* data, uint32_t size) {
  App* app = GlobalApp();
  if (!app) {
    std::free(data);
    return -1;
  }
  gt::ui::CompareOpenBuffer(*app, name ? name : "trace", data, size);
  return app->compare().loading() ? 0 : 1;
}
GT_EXPORT void gt_compare_close() {
  if (GlobalApp()) gt::ui::CompareClose(*GlobalApp());
}
// {"active","loading","error","warning"} and, while comparing, "a","b" (file names), "align_spec",
// "align" (alignment, gt/viewer/json.h), "steps" ([step]), "selected" and "counterpart" ({"side" "a"|"b",
// "key","name","start","end" (its own clock), "x","y" (page pixels, on A's axis),"visible"} or null),
// "b_tracks", "b_tracks_laid_out", "b_highlight" (B's events highlighted by A's search or kernel row).
GT_EXPORT const char* gt_compare_state() {
  static std::string s;
  if (!GlobalApp()) return "null";
  return Keep(&s, gt::ui::CompareStateJson(*GlobalApp()));
}
// The kernel table's rows while comparing: `gtrace diff --json`'s kernel change rows, by |delta|.
GT_EXPORT const char* gt_compare_rows() {
  static std::string s;
  App* app = GlobalApp();
  if (!app || !app->compare().computed) return "[]";
  return Keep(&s, viewer::NameChangesJson(app->compare().rows));
}
// Sets the alignment: "" automatic, "start", "name" or "name:N" (N 1-based). 1 on success, 0 on a bad spec.
GT_EXPORT int gt_compare_align(const char* spec) {
  if (!GlobalApp() || !spec) return 0;
  return gt::ui::CompareSetAlign(*GlobalApp(), spec, &g_view_error) ? 1 : 0;
}
// Selects the `n`th (0-based, time order) kernel named `name` in trace "a" or "b" and reveals it; its
// counterpart in the other trace is then in gt_compare_state. 1 when found.
GT_EXPORT int gt_compare_select_kernel(const char* side, const char* name, int n) {
  App* app = GlobalApp();
  if (!app || !side || !name || n < 0 || !app->model() || !app->compare().computed) return 0;
  const bool b = std::string_view(side) == "b";
  const viewer::TraceModel& m = b ? *app->compare().model : *app->model();
  const gt::StringId id = viewer::FindString(m, name);
  if (id == 0) return 0;
  const std::vector<viewer::EventId> all = viewer::KernelInstances(m, id);
  if (size_t(n) >= all.size()) return 0;
  if (b)
    gt::ui::CompareSelectB(*app, all[size_t(n)], true);
  else
    app->Select(all[size_t(n)], true);
  return 1;
}
// Counters of the kernels profiled in both traces, side by side (gt/viewer/json.h CounterPairsJson).
GT_EXPORT const char* gt_compare_counters() {
  static std::string s;
  if (!GlobalApp()) return "[]";
  return Keep(&s, gt::ui::CompareCountersJson(*GlobalApp()));
}
