// Notes, the duration histogram window and CSV export (ui/teamui.h).
//
// [SECTION] Notes
// [SECTION] Histogram
// [SECTION] CSV
//
// Note text is user input from a link: it is only ever drawn with ImGui's text functions (TextWrapped,
// InputText), which draw glyphs, so nothing in it is interpreted as markup or format directives (no
// printf-style "%s" with the text as format).
#include "ui/teamui.h"

#include "ui/compare_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "gt/units.h"
#include "gt/viewer/query.h"
#include "ui/app.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif

namespace gt::ui {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Notes
// ---------------------------------------------------------------------------------------------------------------

Status AddNote(App& app, viewer::Note note) {
  TeamUiState& s = app.teamui();
  GT_RETURN_IF_ERROR(viewer::CheckNewNote(s.notes, note));
  s.notes.push_back(std::move(note));
  return Status::Ok();
}

void BeginNoteOnEvent(App& app, viewer::EventId e) {
  const viewer::TraceModel* m = app.model();
  if (!m || !e.valid()) return;
  NoteEditor& ed = app.teamui().editor;
  ed = NoteEditor{};
  ed.open = ed.focus = true;
  ed.draft.t0 = m->Start(e);
  ed.draft.t1 = m->End(e);
  ed.draft.event = m->EventKey(e);
  ed.target = m->Str(m->Name(e)) + " at " + FormatDuration(static_cast<double>(m->Start(e) - m->first_ns));
}

void BeginNoteOnRange(App& app, double t0, double t1) {
  const viewer::TraceModel* m = app.model();
  if (!m) return;
  if (t1 < t0) std::swap(t0, t1);
  NoteEditor& ed = app.teamui().editor;
  ed = NoteEditor{};
  ed.open = ed.focus = true;
  ed.draft.t0 = static_cast<int64_t>(std::floor(t0));
  ed.draft.t1 = static_cast<int64_t>(std::ceil(t1));
  ed.target = "range " + FormatDuration(t0 - static_cast<double>(m->first_ns)) + " – " +
              FormatDuration(t1 - static_cast<double>(m->first_ns));
}

bool JumpToNote(App& app, size_t i) {
  const viewer::TraceModel* m = app.model();
  TeamUiState& s = app.teamui();
  if (!m || i >= s.notes.size()) return false;
  const viewer::Note& n = s.notes[i];
  const viewer::EventId e = viewer::ResolveNote(*m, n);
  // Centred, with the note's range a third of the view: context on both sides.
  app.FitRange(static_cast<double>(n.t0), static_cast<double>(std::max(n.t1, n.t0 + 1)), 1.0);
  if (e.valid()) {
    app.Select(e, false);
    app.RevealEvent(e);
    app.FitRange(static_cast<double>(n.t0), static_cast<double>(std::max(n.t1, n.t0 + 1)), 1.0);
  }
  app.ShowPanel(Panel::kNotes);
  return true;
}

namespace {

std::string NoteTarget(const viewer::TraceModel& m, const viewer::Note& n, bool* orphaned) {
  *orphaned = false;
  const double base = static_cast<double>(m.first_ns);
  if (n.event.empty())
    return "range " + FormatDuration(static_cast<double>(n.t0) - base) + " – " +
           FormatDuration(static_cast<double>(n.t1) - base);
  const viewer::EventId e = viewer::ResolveNote(m, n);
  if (!e.valid()) {
    *orphaned = true;
    return "event not in this trace (orphaned), at " + FormatDuration(static_cast<double>(n.t0) - base);
  }
  return m.Str(m.Name(e)) + " at " + FormatDuration(static_cast<double>(n.t0) - base);
}

}  // namespace

void DrawNotesPanel(App& app) {
  const viewer::TraceModel* m = app.model();
  TeamUiState& s = app.teamui();
  if (!m) return;
  size_t bytes = 0;
  for (const auto& n : s.notes) bytes += n.text.size();
  ImGui::TextDisabled(
      "%zu of %zu notes, %zu of %zu bytes. Right-click an event or a measured range to add one; "
      "Share carries them in the link.",
      s.notes.size(), viewer::kMaxNotes, bytes, viewer::kMaxNotesBytes);
  ImGui::SameLine();
  CsvButton(app, "notes");
  if (s.notes.empty()) return;
  if (!ImGui::BeginTable("##notes", 3,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                             ImGuiTableFlags_BordersInnerV))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("On", ImGuiTableColumnFlags_WidthFixed, 260);
  ImGui::TableSetupColumn("Note", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, 60);
  ImGui::TableHeadersRow();
  size_t remove = SIZE_MAX;
  for (size_t i = 0; i < s.notes.size(); ++i) {
    const viewer::Note& n = s.notes[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushID(static_cast<int>(i));
    bool orphaned = false;
    const std::string target = NoteTarget(*m, n, &orphaned);
    if (orphaned) ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(230, 170, 60, 255));
    if (ImGui::Selectable(target.c_str(), false,
                          ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowOverlap))
      JumpToNote(app, i);
    if (orphaned) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Click to jump to it");
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", n.text.c_str());  // plain text: the note is an argument, never the format
    ImGui::TableNextColumn();
    if (ImGui::SmallButton("Delete")) remove = i;
    ImGui::PopID();
  }
  ImGui::EndTable();
  if (remove != SIZE_MAX) s.notes.erase(s.notes.begin() + static_cast<std::ptrdiff_t>(remove));
}

void DrawNoteMarkers(App& app, ImDrawList* dl, const ImVec2& rmin, const ImVec2& rmax) {
  const View& v = app.view();
  TeamUiState& s = app.teamui();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (size_t i = 0; i < s.notes.size(); ++i) {
    const viewer::Note& n = s.notes[i];
    if (static_cast<double>(n.t1) < v.t0 || static_cast<double>(n.t0) > v.t1) continue;
    const float x0 =
        static_cast<float>(rmin.x + (static_cast<double>(n.t0) - v.t0) / (v.t1 - v.t0) * (rmax.x - rmin.x));
    const float x1 = std::max(x0 + 2, static_cast<float>(rmin.x + (static_cast<double>(n.t1) - v.t0) /
                                                                      (v.t1 - v.t0) * (rmax.x - rmin.x)));
    const ImU32 c = IM_COL32(250, 200, 60, 230);
    dl->AddRectFilled(ImVec2(std::max(x0, rmin.x), rmax.y - 4), ImVec2(std::min(x1, rmax.x), rmax.y), c);
    dl->AddTriangleFilled(ImVec2(x0, rmax.y - 4), ImVec2(x0, rmax.y - 14), ImVec2(x0 + 8, rmax.y - 9), c);
    if (mouse.x >= x0 - 3 && mouse.x <= std::max(x1, x0 + 9) && mouse.y >= rmin.y && mouse.y <= rmax.y) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(400);
      ImGui::TextUnformatted(n.text.c_str());
      ImGui::PopTextWrapPos();
      ImGui::TextDisabled("Click to jump to this note");
      ImGui::EndTooltip();
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) JumpToNote(app, i);
    }
  }
}

namespace {
viewer::EventId g_ctx_event;
double g_ctx_t = 0;
}  // namespace

void OpenTimelineContextMenu(App& app, viewer::EventId hit, double mouse_t) {
  (void)app;
  g_ctx_event = hit;
  g_ctx_t = mouse_t;
  ImGui::OpenPopup("##timeline_ctx");
}

void DrawTimelineContextMenu(App& app) {
  if (!ImGui::BeginPopup("##timeline_ctx")) return;
  const viewer::TraceModel* m = app.model();
  const View& v = app.view();
  if (m && g_ctx_event.valid() && g_ctx_event.lane < m->lanes.size()) {
    const std::string label = "Add note to " + m->Str(m->Name(g_ctx_event)) + "...";
    if (ImGui::MenuItem(label.c_str())) BeginNoteOnEvent(app, g_ctx_event);
  }
  const double a = std::min(v.measure.start, v.measure.end), b = std::max(v.measure.start, v.measure.end);
  if (ImGui::MenuItem("Add note to the measured range...", nullptr, false, v.measure.active))
    BeginNoteOnRange(app, a, b);
  if (ImGui::MenuItem("Add note to the visible range...")) BeginNoteOnRange(app, v.t0, v.t1);
  if (m && g_ctx_event.valid() && m->Kind(g_ctx_event) == viewer::EventKind::kKernel &&
      ImGui::MenuItem("Duration histogram of this kernel"))
    OpenHistogram(app, m->Name(g_ctx_event));
  ImGui::EndPopup();
}

namespace {

void DrawNoteEditor(App& app) {
  NoteEditor& ed = app.teamui().editor;
  if (!ed.open) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + vp->Size.x / 2, vp->Pos.y + vp->Size.y / 3), ImGuiCond_Appearing,
                          ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(460, 0), ImGuiCond_Appearing);
  if (ImGui::Begin("Add note", &ed.open, ImGuiWindowFlags_NoCollapse)) {
    ImGui::TextUnformatted(("On " + ed.target).c_str());
    if (ed.focus) ImGui::SetKeyboardFocusHere(), ed.focus = false;
    // Enter adds the note (Ctrl+Enter: a new line), as a chat box does.
    const bool enter = ImGui::InputTextMultiline(
        "##note_text", ed.text, sizeof ed.text, ImVec2(-1, 90),
        ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_CtrlEnterForNewLine);
    const size_t len = std::strlen(ed.text);
    ImGui::TextDisabled("%zu / %zu bytes", len, viewer::kMaxNoteBytes);
    if (!ed.error.empty()) ImGui::TextColored(ImVec4(1, 0.45f, 0.35f, 1), "%s", ed.error.c_str());
    if (ImGui::Button("Add") || enter) {
      viewer::Note n = ed.draft;
      n.text.assign(ed.text, len);
      Status st = AddNote(app, std::move(n));
      if (st.ok()) {
        ed.open = false;
        app.ShowPanel(Panel::kNotes);
      } else {
        ed.error = st.message();  // refused, text kept: the user shortens it
      }
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ed.open = false;
  }
  ImGui::End();
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Histogram
// ---------------------------------------------------------------------------------------------------------------

void OpenHistogram(App& app, StringId name) {
  const viewer::TraceModel* m = app.model();
  if (!m || name == 0 || name >= m->strings.size()) return;
  HistogramState& h = app.teamui().histogram;
  const int bpd = h.bins_per_decade;
  h = HistogramState{};
  h.bins_per_decade = bpd;
  h.open = true;
  h.name = name;
  h.hist = viewer::KernelDurationHistogram(*m, name, h.bins_per_decade);
}

bool SelectHistogramBin(App& app, int bin) {
  const viewer::TraceModel* m = app.model();
  HistogramState& h = app.teamui().histogram;
  if (!m || bin < 0 || static_cast<size_t>(bin) >= h.hist.bins.size() || h.hist.bins[bin].count == 0)
    return false;
  if (bin != h.selected_bin) {
    h.selected_bin = bin;
    h.in_bin = viewer::InstancesInBin(*m, h.name, h.hist, bin);
    h.in_bin_pos = 0;
  } else if (!h.in_bin.empty()) {
    h.in_bin_pos = (h.in_bin_pos + 1) % h.in_bin.size();  // a repeated click steps through the bin
  }
  if (h.in_bin.empty()) return false;
  const viewer::EventId e = h.in_bin[h.in_bin_pos];
  if (h.in_bin.size() == 1) {
    app.Select(e, true);
  } else {
    app.FitRange(static_cast<double>(m->Start(h.in_bin.front())),
                 static_cast<double>(m->End(h.in_bin.back())), 0.03);
    app.Select(e, false);
    app.view().reveal_lane = e.lane;
  }
  return true;
}

namespace {

void DrawHistogramWindow(App& app) {
  HistogramState& h = app.teamui().histogram;
  const viewer::TraceModel* m = app.model();
  if (!h.open || !m) return;
  ImGui::SetNextWindowSize(ImVec2(640, 340), ImGuiCond_FirstUseEver);
  const std::string title = "Duration histogram: " + m->Str(h.name) + "###histogram";
  if (!ImGui::Begin(title.c_str(), &h.open)) {
    ImGui::End();
    return;
  }
  const viewer::DurationHistogram& d = h.hist;
  ImGui::Text("%s instances   min %s   p50 %s   p90 %s   p99 %s   max %s   mean %s",
              FormatCount(d.total).c_str(), FormatDuration(static_cast<double>(d.min_ns)).c_str(),
              FormatDuration(static_cast<double>(d.p50_ns)).c_str(),
              FormatDuration(static_cast<double>(d.p90_ns)).c_str(),
              FormatDuration(static_cast<double>(d.p99_ns)).c_str(),
              FormatDuration(static_cast<double>(d.max_ns)).c_str(), FormatDuration(d.mean_ns).c_str());
  ImGui::SetNextItemWidth(120);
  if (ImGui::SliderInt("bins per decade", &h.bins_per_decade, 1, 20)) {
    const int bpd = h.bins_per_decade;
    OpenHistogram(app, h.name);
    h.bins_per_decade = bpd;
  }
  ImGui::SameLine();
  CsvButton(app, "histogram");
  // The selected event, when it is an instance of this kernel: its bin is marked, and a line at its duration.
  const viewer::EventId sel = app.view().selected;
  int sel_bin = -1;
  int64_t sel_dur = 0;
  if (sel.valid() && sel.lane < m->lanes.size() && m->Name(sel) == h.name &&
      m->Kind(sel) == viewer::EventKind::kKernel) {
    sel_dur = m->End(sel) - m->Start(sel);
    sel_bin = d.BinOf(std::max<int64_t>(sel_dur, 0));
    ImGui::SameLine();
    ImGui::Text("selected: %s", FormatDuration(static_cast<double>(sel_dur)).c_str());
  }
  if (d.bins.empty()) {
    ImGui::TextDisabled("No instances.");
    ImGui::End();
    return;
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float label_h = ImGui::GetTextLineHeightWithSpacing() + 2;
  const float w = std::max(100.0f, avail.x), hgt = std::max(60.0f, avail.y - label_h);
  ImGui::InvisibleButton("##hist_plot", ImVec2(w, hgt + label_h));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p0, ImVec2(p0.x + w, p0.y + hgt), IM_COL32(30, 30, 36, 255));
  uint64_t peak = 1;
  for (const auto& b : d.bins) peak = std::max(peak, b.count);
  const float bw = w / static_cast<float>(d.bins.size());
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (size_t i = 0; i < d.bins.size(); ++i) {
    const float x0 = p0.x + bw * static_cast<float>(i), x1 = x0 + bw - 1;
    const float top =
        p0.y + hgt - (hgt - 14) * static_cast<float>(d.bins[i].count) / static_cast<float>(peak);
    const bool is_sel = static_cast<int>(i) == sel_bin, is_clicked = static_cast<int>(i) == h.selected_bin;
    const ImU32 c = is_sel       ? IM_COL32(250, 200, 60, 255)
                    : is_clicked ? IM_COL32(120, 190, 255, 255)
                                 : IM_COL32(90, 140, 210, 255);
    if (d.bins[i].count) dl->AddRectFilled(ImVec2(x0, top), ImVec2(x1, p0.y + hgt), c);
    if (hovered && mouse.x >= x0 && mouse.x < x0 + bw) {
      dl->AddRect(ImVec2(x0, p0.y), ImVec2(x1, p0.y + hgt), IM_COL32(255, 255, 255, 120));
      ImGui::SetTooltip("[%s, %s): %s instance%s\nClick: select and zoom to them (again: the next one)",
                        FormatDuration(static_cast<double>(d.bins[i].lo_ns)).c_str(),
                        FormatDuration(static_cast<double>(d.bins[i].hi_ns)).c_str(),
                        FormatCount(d.bins[i].count).c_str(), d.bins[i].count == 1 ? "" : "s");
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) SelectHistogramBin(app, static_cast<int>(i));
    }
    // Edge labels where there is room (log scale: every decade fits, finer edges when wide).
    if (i % std::max<size_t>(1, static_cast<size_t>(70 / bw) + 1) == 0) {
      const std::string lbl = FormatDuration(static_cast<double>(d.bins[i].lo_ns));
      dl->AddText(ImVec2(x0, p0.y + hgt + 2), IM_COL32(170, 170, 180, 255), lbl.c_str());
    }
  }
  if (sel_bin >= 0) {
    const auto& b = d.bins[sel_bin];
    const double lo = std::log10(std::max<double>(1, static_cast<double>(b.lo_ns)));
    const double hi = std::log10(static_cast<double>(b.hi_ns));
    const double f =
        hi > lo ? (std::log10(std::max<double>(1, static_cast<double>(sel_dur))) - lo) / (hi - lo) : 0.5;
    const float x = p0.x + bw * (static_cast<float>(sel_bin) + static_cast<float>(std::clamp(f, 0.0, 1.0)));
    dl->AddLine(ImVec2(x, p0.y), ImVec2(x, p0.y + hgt), IM_COL32(255, 230, 120, 255), 2);
    dl->AddText(ImVec2(x + 3, p0.y + 2), IM_COL32(255, 230, 120, 255), "selected");
  }
  ImGui::End();
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] CSV
// ---------------------------------------------------------------------------------------------------------------

StatusOr<viewer::CsvTable> UiTableCsv(App& app, std::string_view table) {
  const viewer::TraceModel* m = app.model();
  if (!m) return InvalidArgument("no trace is open");
  if (table == "kernels") {
    KernelTableState& k = app.kernel_table();
    if (!k.built) k.rows = viewer::KernelSummary(*m), k.built = true;
    return viewer::KernelTableCsv(*m, k.rows);  // in the table's current order
  }
  SummaryPanelState& sp = app.summary_panel();
  if (table == "idle-gaps")
    return viewer::IdleGapsCsv(sp.gaps_built ? sp.gaps : viewer::ExplainIdleGaps(*m, 5));
  if (table == "api" || table == "copies" || table == "nvtx") {
    const auto what = table == "api"      ? viewer::SummaryOf::kApi
                      : table == "copies" ? viewer::SummaryOf::kCopies
                                          : viewer::SummaryOf::kNvtx;
    if (sp.built)
      return viewer::NameSummaryCsv(what == viewer::SummaryOf::kApi      ? sp.api
                                    : what == viewer::SummaryOf::kCopies ? sp.copies
                                                                         : sp.nvtx);
    return viewer::NameSummaryCsv(viewer::SummarizeByName(*m, what));
  }
  if (table == "notes") return viewer::NotesCsv(m, app.teamui().notes);
  if (table == "histogram") {
    const HistogramState& h = app.teamui().histogram;
    if (h.name == 0) return InvalidArgument("no histogram is open (Kernels tab: right-click a kernel)");
    return viewer::HistogramCsv(h.hist);
  }
  if (table == "compare-kernels" || table == "compare-steps") {
    const CompareState& c = app.compare();
    if (!c.active() || !c.computed) return InvalidArgument("no comparison is open (File > Compare with...)");
    return table == "compare-kernels" ? viewer::CompareKernelsCsv(c.rows) : viewer::CompareStepsCsv(c.steps);
  }
  if (table == "roofline" || table == "counters") {  // a remote trace's counters come from the server
    const viewer::ProfiledKernels* p = ProfiledKernelsOf(app);
    if (!p) return InvalidArgument("the hardware counters are still on their way from the server");
    return table == "roofline" ? viewer::RooflineCsv(*p) : viewer::KernelCountersCsv(p->launches);
  }
  if (table == "losses" || table == "collectives" || table == "collective-ranks")
    return viewer::TraceTableCsv(*m, table);
  return InvalidArgument("unknown table '" + std::string(table) + "'");
}

namespace {

std::string SafeStem(const std::string& name) {
  std::string s =
      name.substr(name.find_last_of("/\\") == std::string::npos ? 0 : name.find_last_of("/\\") + 1);
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  return s.empty() ? "trace" : s;
}

}  // namespace

StatusOr<std::string> ExportUiTable(App& app, std::string_view table) {
  auto csv = UiTableCsv(app, table);
  if (!csv.ok()) return csv.status();
  const std::string text = viewer::ToCsv(*csv);
  std::string file = SafeStem(app.trace_name()) + "." + std::string(table) + ".csv";
#ifdef __EMSCRIPTEN__
  EM_ASM(
      {
        if (window.gtDownload) window.gtDownload(UTF8ToString($0), UTF8ToString($1), $2);
      },
      file.c_str(), text.c_str(), static_cast<int>(text.size()));
#else
  const std::string stem = file.substr(0, file.size() - 4);
  for (int i = 1; std::FILE* f = std::fopen(file.c_str(), "rb"); ++i) {  // never over an existing file
    std::fclose(f);
    file = stem + "-" + std::to_string(i) + ".csv";
  }
  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (!f) return InvalidArgument("cannot write " + file + ": " + std::strerror(errno));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok)
    return InvalidArgument("cannot write " + file + ": " + std::strerror(errno));
#endif
  return file;
}

void CsvButton(App& app, const char* table) {
  ImGui::PushID(table);
  if (ImGui::SmallButton("CSV")) {
    auto r = ExportUiTable(app, table);
    app.teamui().message = r.ok() ? "Saved " + *r : "CSV: " + r.status().message();
    app.teamui().message_table = table;
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Save this table as CSV (%s)", table);
  if (app.teamui().message_table == table) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", app.teamui().message.c_str());
  }
  ImGui::PopID();
}

void DrawTeamUiWindows(App& app) {
  DrawNoteEditor(app);
  DrawHistogramWindow(app);
}

}  // namespace gt::ui
