// The "Summary" tab: CUDA API calls, memory copies/sets and NVTX ranges (or a PyTorch trace's host ops) by
// name, the same tables as `gtrace stats` (viewer/core summary.h). Clicking a row highlights exactly the
// events of that name and selects the first one.
#include <cstdio>
#include <cstring>

#include "gt/viewer/query.h"
#include "ui/app.h"
#include "ui/format.h"

namespace gt::ui {

namespace {

StringId FindName(const viewer::TraceModel& m, const std::string& text) {
  for (StringId id = 1; id < m.strings.size(); ++id)
    if (m.strings[id] == text) return id;
  return 0;
}

void DrawTable(App& app, const char* id, const std::vector<viewer::NameSummary>& rows,
               viewer::SummaryOf what) {
  const bool copies = what == viewer::SummaryOf::kCopies, nested = what == viewer::SummaryOf::kNvtx;
  const int columns = 6 + (nested ? 0 : 1) + (copies ? 2 : 0);
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit |
                                ImGuiTableFlags_ScrollY;
  // At most ~12 rows tall, so the three tables fit in the panel one below the other.
  const float height =
      ImGui::GetTextLineHeightWithSpacing() * (float(std::min<size_t>(rows.size(), 12)) + 2.2f);
  if (!ImGui::BeginTable(id, columns, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_WidthStretch);
  for (const char* c : {"Count", "Total", "Average", "Min", "Max"}) ImGui::TableSetupColumn(c);
  if (copies) {
    ImGui::TableSetupColumn("Bytes");
    ImGui::TableSetupColumn("Bandwidth");
  }
  if (!nested) ImGui::TableSetupColumn(what == viewer::SummaryOf::kApi ? "API time" : "GPU time");
  ImGui::TableHeadersRow();
  SummaryPanelState& st = app.summary_panel();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(rows.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const viewer::NameSummary& r = rows[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(i);
      const bool selected = st.selected_table == what && st.selected_row == i;
      if (ImGui::Selectable(r.name.c_str(), selected, ImGuiSelectableFlags_SpanAllColumns)) {
        st.selected_table = what;
        st.selected_row = i;
        if (StringId name = FindName(*app.model(), r.name); name != 0 && app.HighlightName(name) > 0)
          app.SearchStep(true);
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.name.c_str());
      ImGui::PopID();
      ImGui::TableNextColumn();
      ImGui::Text("%s", FormatCount(r.count).c_str());
      for (double ns : {double(r.total_ns), r.avg_ns, double(r.min_ns), double(r.max_ns)}) {
        ImGui::TableNextColumn();
        ImGui::Text("%s", FormatDuration(ns).c_str());
      }
      if (copies) {
        ImGui::TableNextColumn();
        ImGui::Text("%s", viewer::FormatBytes(r.bytes).c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%s", viewer::FormatBandwidth(r.bytes, r.total_ns).c_str());
      }
      if (!nested) {
        ImGui::TableNextColumn();
        char pct[32];
        std::snprintf(pct, sizeof pct, "%.1f%%", r.share * 100);
        ImGui::ProgressBar(static_cast<float>(r.share), ImVec2(90, 0), pct);
      }
    }
  }
  ImGui::EndTable();
}

}  // namespace

void DrawSummaryPanel(App& app) {
  const viewer::TraceModel* m = app.model();
  if (!m) return;
  SummaryPanelState& st = app.summary_panel();
  if (!st.built) {
    st.api = viewer::SummarizeByName(*m, viewer::SummaryOf::kApi);
    st.copies = viewer::SummarizeByName(*m, viewer::SummaryOf::kCopies);
    st.nvtx = viewer::SummarizeByName(*m, viewer::SummaryOf::kNvtx);
    st.built = true;
  }
  ImGui::TextDisabled(
      "By total time (kernels: the Kernels tab). Click a row to highlight every event of that name.");
  struct Section {
    const char* title;
    const char* empty;
    const std::vector<viewer::NameSummary>* rows;
    viewer::SummaryOf what;
  };
  const Section sections[] = {
      {"CUDA API calls (CPU time; calls made inside other calls are part of them)",
       "No CUDA API calls recorded.", &st.api, viewer::SummaryOf::kApi},
      {"Memory copies and sets", "No memcpy or memset.", &st.copies, viewer::SummaryOf::kCopies},
      {"NVTX ranges and host ops (nested ranges overlap)", "No NVTX ranges or host ops.", &st.nvtx,
       viewer::SummaryOf::kNvtx},
  };
  for (const Section& s : sections) {
    char header[160];
    std::snprintf(header, sizeof header, "%s: %zu name%s###%s", s.title, s.rows->size(),
                  s.rows->size() == 1 ? "" : "s", viewer::SummaryOfName(s.what));
    if (!ImGui::CollapsingHeader(header, ImGuiTreeNodeFlags_DefaultOpen)) continue;
    if (s.rows->empty())
      ImGui::TextDisabled("%s", s.empty);
    else
      DrawTable(app, viewer::SummaryOfName(s.what), *s.rows, s.what);
  }
}

}  // namespace gt::ui
