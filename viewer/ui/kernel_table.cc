// The kernel summary: one row per kernel name with count, total, average, min, max and share of GPU time,
// sortable by any column. Clicking a row zooms to the span of its instances and highlights them.
#include <cstdio>

#include "gt/units.h"
#include "gt/viewer/query.h"
#include "ui/app.h"

namespace gt::ui {

void DrawKernelTable(App& app) {
  const viewer::TraceModel* m = app.model();
  if (!m) return;
  if (app.compare().active() && app.compare().computed) {  // before/after/delta rows of gtrace diff
    DrawCompareKernelTable(app);
    return;
  }
  KernelTableState& st = app.kernel_table();
  if (!st.built) {
    // From the trace interface: a mapped index's precomputed rows, the server's, or computed here.
    const std::vector<viewer::KernelSummaryRow>* rows = app.source()->Kernels();
    if (!rows) {
      ImGui::TextDisabled("Asking the server for the kernel table...");
      return;
    }
    st.rows = *rows;
    st.built = true;
  }
  if (st.rows.empty()) {
    ImGui::TextDisabled("No kernels in this trace.");
    return;
  }
  ImGui::TextDisabled(
      "%zu kernel names. Click a row to zoom to its instances and highlight them; right-click "
      "for its duration histogram.",
      st.rows.size());
  ImGui::SameLine();
  ImGui::BeginDisabled(!app.events_local() || st.selected_row < 0 ||
                       st.selected_row >= static_cast<int>(st.rows.size()));
  if (ImGui::SmallButton("Histogram")) OpenHistogram(app, st.rows[st.selected_row].name);
  ImGui::EndDisabled();
  ImGui::SameLine();
  CsvButton(app, "kernels");
  if (const viewer::ProfiledData* d = app.source()->Profiled(); d && !d->kernel_metrics.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("counters:");
    ImGui::SameLine();
    CsvButton(app, "counters");
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("##kernels", 7, flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("Kernel", ImGuiTableColumnFlags_WidthStretch, 0,
                          static_cast<ImGuiID>(viewer::KernelColumn::kName));
  ImGui::TableSetupColumn("Count", ImGuiTableColumnFlags_PreferSortDescending, 0,
                          static_cast<ImGuiID>(viewer::KernelColumn::kCount));
  ImGui::TableSetupColumn("Total",
                          ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending, 0,
                          static_cast<ImGuiID>(viewer::KernelColumn::kTotal));
  ImGui::TableSetupColumn("Average", ImGuiTableColumnFlags_PreferSortDescending, 0,
                          static_cast<ImGuiID>(viewer::KernelColumn::kAverage));
  ImGui::TableSetupColumn("Min", ImGuiTableColumnFlags_PreferSortDescending, 0,
                          static_cast<ImGuiID>(viewer::KernelColumn::kMin));
  ImGui::TableSetupColumn("Max", ImGuiTableColumnFlags_PreferSortDescending, 0,
                          static_cast<ImGuiID>(viewer::KernelColumn::kMax));
  ImGui::TableSetupColumn("GPU time", ImGuiTableColumnFlags_PreferSortDescending, 0,
                          static_cast<ImGuiID>(viewer::KernelColumn::kShare));
  ImGui::TableHeadersRow();
  if (ImGuiTableSortSpecs* sort = ImGui::TableGetSortSpecs();
      sort && sort->SpecsDirty && sort->SpecsCount > 0) {
    viewer::SortKernelSummary(*m, &st.rows, static_cast<viewer::KernelColumn>(sort->Specs[0].ColumnUserID),
                              sort->Specs[0].SortDirection == ImGuiSortDirection_Descending);
    sort->SpecsDirty = false;
  }
  ImGuiListClipper clipper;  // rows are per kernel *name*, but a trace can have thousands of names
  clipper.Begin(static_cast<int>(st.rows.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const viewer::KernelSummaryRow& r = st.rows[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(i);
      const std::string& name = app.source()->Str(r.name);
      if (ImGui::Selectable(name.c_str(), st.selected_row == i, ImGuiSelectableFlags_SpanAllColumns)) {
        st.selected_row = i;
        app.ZoomToKernel(r);
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", name.c_str());
      if (ImGui::BeginPopupContextItem("##row_ctx")) {
        if (ImGui::MenuItem("Duration histogram", nullptr, false, app.events_local()))
          st.selected_row = i, OpenHistogram(app, r.name);
        ImGui::EndPopup();
      }
      ImGui::PopID();
      ImGui::TableNextColumn();
      ImGui::Text("%s", FormatCount(r.count).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%s", FormatDuration(static_cast<double>(r.total_ns)).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%s", FormatDuration(r.avg_ns).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%s", FormatDuration(static_cast<double>(r.min_ns)).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%s", FormatDuration(static_cast<double>(r.max_ns)).c_str());
      ImGui::TableNextColumn();
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.1f%%", r.share * 100);
      ImGui::ProgressBar(static_cast<float>(r.share), ImVec2(90, 0), pct);
    }
  }
  ImGui::EndTable();
}

}  // namespace gt::ui
