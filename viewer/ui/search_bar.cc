// Search by name: the toolbar's box (substring, case-insensitive) with match count, next/previous, and the
// "Search results" panel listing the matches in the visible range.
#include <cstdio>

#include "gt/units.h"
#include "gt/viewer/query.h"
#include "ui/app.h"

namespace gt::ui {

void DrawSearchBar(App& app) {
  SearchState& s = app.search();
  const viewer::TraceModel* m = app.model();
  if (s.focus_request) {
    ImGui::SetKeyboardFocusHere();
    s.focus_request = false;
  }
  ImGui::SetNextItemWidth(320);
  const bool enter = ImGui::InputTextWithHint("##search", "Search events by name (Ctrl+F)", s.text,
                                              sizeof s.text, ImGuiInputTextFlags_EnterReturnsTrue);
  app.SetSearch(s.text);  // cheap when unchanged: re-runs only on a new needle
  if (enter) {
    app.SearchStep(!ImGui::GetIO().KeyShift);
    ImGui::SetKeyboardFocusHere(-1);  // keep typing / pressing Enter
  }
  ImGui::SameLine();
  // teamui: regular expression and hide-what-does-not-match toggles.
  bool regex = s.regex, filter = s.filter;
  const bool r_changed = ImGui::Checkbox("Regex", &regex);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("The text is a regular expression (linear time; no back-references or look-around)");
  ImGui::SameLine();
  const bool f_changed = ImGui::Checkbox("Filter", &filter);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(app.events_local()
                          ? "Hide tracks and events that do not match (instead of dimming)"
                          : "Hide tracks and events that do not match (instead of dimming); on "
                            "this remote trace a folded run of tiny events shows when its "
                            "first event matches");
  if (r_changed || f_changed) app.SetSearchMode(regex, filter);
  ImGui::SameLine();
  if (!s.error.empty()) {
    ImGui::TextColored(ImVec4(1, 0.45f, 0.35f, 1), "%s", s.error.c_str());
    ImGui::SameLine();
  } else if (s.filter && s.track_filter.active && m) {
    ImGui::TextDisabled("%u of %zu tracks", s.track_filter.visible_tracks, m->tracks.size());
    ImGui::SameLine();
  }
  if (!s.search.empty() && m) {
    const uint64_t n = s.search.match_count();
    const uint64_t ord = s.current.valid() ? s.search.Ordinal(*m, s.current) : 0;
    if (app.remote() && app.remote()->search_step_pending())
      ImGui::Text("%s match%s, searching...", FormatCount(n).c_str(), n == 1 ? "" : "es");
    else if (ord > 0)
      ImGui::Text("%s / %s", FormatCount(ord).c_str(), FormatCount(n).c_str());
    else
      ImGui::Text("%s match%s", FormatCount(n).c_str(), n == 1 ? "" : "es");
    ImGui::SameLine();
    ImGui::BeginDisabled(n == 0);
    if (ImGui::ArrowButton("##prev", ImGuiDir_Left)) app.SearchStep(false);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Previous match (Shift+Enter, Shift+N)");
    ImGui::SameLine();
    if (ImGui::ArrowButton("##next", ImGuiDir_Right)) app.SearchStep(true);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Next match (Enter, N)");
    ImGui::SameLine();
    if (ImGui::SmallButton("List")) app.ShowPanel(Panel::kSearch);
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::SmallButton("Clear")) app.SetSearch("");
    ImGui::SameLine();
  } else if (app.remote() && s.text[0] && s.error.empty()) {
    ImGui::TextDisabled("searching...");  // the server's count is on its way
    ImGui::SameLine();
  }
  // Measurement and selection summary on the right of the toolbar.
  const View& v = app.view();
  if (v.measure.active) {
    ImGui::TextDisabled("|");
    ImGui::SameLine();
    ImGui::Text("Measured %s", FormatDuration(std::abs(v.measure.end - v.measure.start)).c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("(M: zoom to it, Esc: clear)");
    ImGui::SameLine();
  }
  static constexpr const char* kHint = "W/S zoom  A/D pan  drag: pan  shift-drag: measure  ?: help";
  const float hint_w = ImGui::CalcTextSize(kHint).x + ImGui::GetStyle().WindowPadding.x;
  if (ImGui::GetCursorPosX() + hint_w < ImGui::GetWindowWidth()) {
    ImGui::SameLine(ImGui::GetWindowWidth() - hint_w);
    ImGui::TextDisabled("%s", kHint);
  }
}

void DrawSearchResults(App& app) {
  SearchState& s = app.search();
  const viewer::TraceModel* m = app.model();
  if (!m || s.search.empty()) {
    ImGui::TextDisabled("Type in the search box above; matches in the visible range are listed here.");
    return;
  }
  constexpr size_t kLimit = 2000;  // a list, not a dump: narrow the range to see more
  const View& v = app.view();
  const int64_t t0 = static_cast<int64_t>(v.t0), t1 = static_cast<int64_t>(v.t1) + 1;
  // One list for both: a loaded trace's from its events, a remote trace's from the server (the answer for
  // the last window asked stays on screen while the next is on its way).
  struct Hit {
    viewer::EventId id;
    int64_t start = 0, end = 0;
  };
  std::vector<Hit> hits;
  viewer::RemoteTrace* remote = app.remote();
  if (remote) {
    remote->AskSearchList(t0, t1);
    const viewer::RemoteSearchList& list = remote->search_list();
    if (!list.ready) {
      ImGui::TextDisabled("Asking the server for the matches in the visible range...");
      return;
    }
    for (size_t i = 0; i < list.hits.size(); ++i) hits.push_back({list.hits[i], list.start[i], list.end[i]});
  } else {
    for (const viewer::EventId e : s.search.List(*m, t0, t1, kLimit))
      hits.push_back({e, m->Start(e), m->End(e)});
  }
  const bool partial = remote && !remote->search_list().complete;
  ImGui::TextDisabled("%zu%s matches in the visible range (%s in the trace)%s", hits.size(),
                      hits.size() >= kLimit || partial ? "+" : "",
                      FormatCount(s.search.match_count()).c_str(),
                      partial ? ": the server listed part of this range, zoom in to list them all" : "");
  auto name_of = [&](size_t i) -> const std::string& {
    return remote ? remote->search_list().name[i] : m->Str(m->Name(hits[i].id));
  };
  if (!ImGui::BeginTable("##hits", 4,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                             ImGuiTableFlags_BordersInnerV))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("Track", ImGuiTableColumnFlags_WidthFixed, 260);
  ImGui::TableSetupColumn("Start", ImGuiTableColumnFlags_WidthFixed, 130);
  ImGui::TableSetupColumn("Duration", ImGuiTableColumnFlags_WidthFixed, 100);
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(hits.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const viewer::EventId e = hits[i].id;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(i);
      if (ImGui::Selectable(name_of(size_t(i)).c_str(), v.selected == e,
                            ImGuiSelectableFlags_SpanAllColumns)) {
        s.current = e;
        app.Select(e, true);
      }
      ImGui::PopID();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(m->TrackOf(e).name.c_str());  // the layout knows every lane's track
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(viewer::FormatTimestamp(*m, hits[i].start).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(FormatDuration(hits[i].end - hits[i].start).c_str());
    }
  }
  ImGui::EndTable();
}

}  // namespace gt::ui
