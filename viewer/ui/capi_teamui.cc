// The C API of notes, the duration histogram, the regex/filter search and CSV export (ui/teamui.h): what the
// page's browser tests drive and check. Same conventions as capi.cc: strings owned here, valid until the next
// call of the same function; safe with no trace loaded.
#include <cstdint>
#include <string>

#include "gt/viewer/json.h"
#include "ui/app.h"
#include "ui/capi_common.h"
#include "ui/teamui.h"

namespace {

using gt::ui::App;
using gt::ui::GlobalApp;
namespace viewer = gt::viewer;
using viewer::JsonNumber;
using viewer::JsonQuote;

const char* Keep(std::string* slot, std::string value) {
  return gt::ui::KeepString(slot, std::move(value));
}
App* LoadedApp() {
  return GlobalApp() && GlobalApp()->model() ? GlobalApp() : nullptr;
}
std::string g_error;

}  // namespace

// ---- notes ----

// Adds a note on [t0, t1] anchored to the event with key `event_key` ("" = a range note; an event key with
// t0 = t1 = -1 takes the event's span). 1 when added; 0 with gt_teamui_error() saying which limit.
GT_EXPORT int gt_add_note(double t0, double t1, const char* event_key, const char* text) {
  App* app = LoadedApp();
  g_error.clear();
  if (!app) return g_error = "no trace is open", 0;
  viewer::Note n;
  n.t0 = static_cast<int64_t>(t0), n.t1 = static_cast<int64_t>(t1);
  n.event = event_key ? event_key : "";
  n.text = text ? text : "";
  if (!n.event.empty() && t0 < 0 && t1 < 0) {
    const viewer::EventId e = app->model()->FindEventByKey(n.event);
    if (!e.valid()) return g_error = "no event with key " + n.event, 0;
    n.t0 = app->model()->Start(e), n.t1 = app->model()->End(e);
  }
  gt::Status st = gt::ui::AddNote(*app, std::move(n));
  if (!st.ok()) g_error = st.message();
  return st.ok() ? 1 : 0;
}

// Opens the "Add note" editor as the timeline's context menu does: on the selected event when `on_selection`,
// else on the measured range (or the visible one). Typing and the Add button are then the UI's.
GT_EXPORT int gt_begin_note(int on_selection) {
  App* app = LoadedApp();
  if (!app) return 0;
  const gt::ui::View& v = app->view();
  if (on_selection) {
    if (!v.selected.valid()) return 0;
    gt::ui::BeginNoteOnEvent(*app, v.selected);
  } else if (v.measure.active) {
    gt::ui::BeginNoteOnRange(*app, v.measure.start, v.measure.end);
  } else {
    gt::ui::BeginNoteOnRange(*app, v.t0, v.t1);
  }
  return 1;
}

// [{"t0","t1","event","text","target","orphaned"}]: "target" the resolved event's name ("" for range notes
// and orphans).
GT_EXPORT const char* gt_notes() {
  static std::string s;
  App* app = LoadedApp();
  if (!app) return "[]";
  std::string out = "[";
  for (const viewer::Note& n : app->teamui().notes) {
    const viewer::EventId e = viewer::ResolveNote(*app->model(), n);
    if (out.size() > 1) out += ",";
    out += "{\"t0\":" + JsonNumber(static_cast<double>(n.t0)) +
           ",\"t1\":" + JsonNumber(static_cast<double>(n.t1)) + ",\"event\":" + JsonQuote(n.event) +
           ",\"text\":" + JsonQuote(n.text) +
           ",\"target\":" + JsonQuote(e.valid() ? app->model()->Str(app->model()->Name(e)) : "") +
           ",\"orphaned\":" + (!n.event.empty() && !e.valid() ? "true" : "false") + "}";
  }
  return Keep(&s, out + "]");
}

GT_EXPORT int gt_jump_to_note(int i) {
  App* app = LoadedApp();
  return app && i >= 0 && gt::ui::JumpToNote(*app, static_cast<size_t>(i)) ? 1 : 0;
}

GT_EXPORT const char* gt_teamui_error() {
  return g_error.c_str();
}

// ---- search: regex and filter ----

GT_EXPORT void gt_set_search_mode(int regex, int filter) {
  if (GlobalApp()) GlobalApp()->SetSearchMode(regex != 0, filter != 0);
}

// {"text","regex","filter","error","matches","shown_tracks":[names of the tracks the filter keeps] | null}
GT_EXPORT const char* gt_search_state() {
  static std::string s;
  App* app = LoadedApp();
  if (!app) return "null";
  const gt::ui::SearchState& st = app->search();
  std::string out = "{\"text\":" + JsonQuote(st.text) + ",\"regex\":" + (st.regex ? "true" : "false") +
                    ",\"filter\":" + (st.filter ? "true" : "false") + ",\"error\":" + JsonQuote(st.error) +
                    ",\"matches\":" + JsonNumber(static_cast<double>(st.search.match_count())) +
                    ",\"shown_tracks\":";
  if (!st.track_filter.active) {
    out += "null";
  } else {
    out += "[";
    const viewer::TraceModel& m = *app->model();
    bool first = true;
    for (viewer::TrackId t = 0; t < m.tracks.size(); ++t)
      if (st.track_filter.ShowsTrack(t))
        out += (first ? "" : ",") + JsonQuote(m.tracks[t].name), first = false;
    out += "]";
  }
  return Keep(&s, out + "}");
}

// ---- histogram ----

// Opens the duration histogram of the kernel named `name` (as the kernel table's row menu does); its bin
// count, -1 when no kernel has that name.
GT_EXPORT int gt_open_histogram(const char* name) {
  App* app = LoadedApp();
  if (!app || !name) return -1;
  const gt::StringId id = viewer::FindString(*app->model(), name);
  if (id == 0 || viewer::KernelInstances(*app->model(), id).empty()) return -1;
  gt::ui::OpenHistogram(*app, id);
  return static_cast<int>(app->teamui().histogram.hist.bins.size());
}

// {"name","open","total","p50","p90","p99","bins":[{"lo","hi","count"}],"clicked_bin","selected_bin"} or
// null; "selected_bin": the bin of the selected event when it is an instance of this kernel, else -1.
GT_EXPORT const char* gt_histogram() {
  static std::string s;
  App* app = LoadedApp();
  if (!app || app->teamui().histogram.name == 0) return "null";
  const gt::ui::HistogramState& h = app->teamui().histogram;
  const viewer::TraceModel& m = *app->model();
  int sel_bin = -1;
  const viewer::EventId sel = app->view().selected;
  if (sel.valid() && sel.lane < m.lanes.size() && m.Name(sel) == h.name)
    sel_bin = h.hist.BinOf(std::max<int64_t>(m.End(sel) - m.Start(sel), 0));
  std::string out = "{\"name\":" + JsonQuote(m.Str(h.name)) + ",\"open\":" + (h.open ? "true" : "false") +
                    ",\"total\":" + JsonNumber(static_cast<double>(h.hist.total)) +
                    ",\"p50\":" + JsonNumber(static_cast<double>(h.hist.p50_ns)) +
                    ",\"p90\":" + JsonNumber(static_cast<double>(h.hist.p90_ns)) +
                    ",\"p99\":" + JsonNumber(static_cast<double>(h.hist.p99_ns)) + ",\"bins\":[";
  for (size_t i = 0; i < h.hist.bins.size(); ++i) {
    const auto& b = h.hist.bins[i];
    out += (i ? ",{\"lo\":" : "{\"lo\":") + JsonNumber(static_cast<double>(b.lo_ns)) +
           ",\"hi\":" + JsonNumber(static_cast<double>(b.hi_ns)) +
           ",\"count\":" + JsonNumber(static_cast<double>(b.count)) + "}";
  }
  out += "],\"clicked_bin\":" + std::to_string(h.selected_bin) +
         ",\"selected_bin\":" + std::to_string(sel_bin) + "}";
  return Keep(&s, out);
}

// As a click on bin i: selects its first instance (again: the next) and fits the view to its instances.
GT_EXPORT int gt_histogram_click_bin(int bin) {
  App* app = LoadedApp();
  return app && gt::ui::SelectHistogramBin(*app, bin) ? 1 : 0;
}

// ---- CSV ----

// The CSV text of one of the UI's tables ("" with gt_teamui_error() set when there is none).
GT_EXPORT const char* gt_table_csv(const char* table) {
  static std::string s;
  App* app = LoadedApp();
  g_error.clear();
  if (!app || !table) return g_error = "no trace is open", "";
  auto csv = gt::ui::UiTableCsv(*app, table);
  if (!csv.ok()) return g_error = csv.status().message(), "";
  return Keep(&s, viewer::ToCsv(*csv));
}

// As the table's CSV button: the page downloads the file. 1 when written; 0 with gt_teamui_error().
GT_EXPORT int gt_export_csv(const char* table) {
  App* app = LoadedApp();
  g_error.clear();
  if (!app || !table) return g_error = "no trace is open", 0;
  auto r = gt::ui::ExportUiTable(*app, table);
  if (!r.ok()) g_error = r.status().message();
  return r.ok() ? 1 : 0;
}
