// Data loss, Perfetto-style: every named statistic of what the trace is missing (collector drops, lost or
// truncated chunks, importer skips), most severe first, plus a badge in the menu bar when anything was lost.
#include "gt/units.h"
#include "gt/viewer/query.h"
#include "ui/app.h"

namespace gt::ui {
namespace {

ImU32 SeverityColor(uint8_t severity) {
  switch (static_cast<Severity>(severity)) {
    case Severity::kDataLoss:
      return IM_COL32(255, 95, 95, 255);
    case Severity::kError:
      return IM_COL32(255, 140, 80, 255);
    case Severity::kWarning:
      return IM_COL32(240, 200, 80, 255);
    default:
      return IM_COL32(160, 160, 170, 255);
  }
}

}  // namespace

bool DrawLossBadge(const App& app) {
  const viewer::TraceModel* m = app.model();
  if (!m || !viewer::HasDataLoss(*m)) return false;
  ImGui::PushStyleColor(ImGuiCol_Text, SeverityColor(static_cast<uint8_t>(Severity::kDataLoss)));
  const bool clicked = ImGui::MenuItem("Data loss!");
  ImGui::PopStyleColor();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Parts of this trace are missing: click for the statistics");
  return clicked;
}

void DrawLossPanel(App& app) {
  const viewer::TraceModel* m = app.model();
  if (!m) return;
  const std::vector<viewer::LossStat> stats = viewer::LossSummary(*m);
  const LoadReport& r = m->report;
  if (m->format == viewer::SourceFormat::kGtrace)
    ImGui::TextDisabled("Format %u.%u, %u segment(s), %s chunks read, %s lost, %s bytes%s", r.version_major,
                        r.version_minor, r.segments, FormatCount(r.chunks_ok).c_str(),
                        FormatCount(r.chunks_lost).c_str(), FormatCount(r.bytes_total).c_str(),
                        r.truncated ? ", truncated" : "");
  if (stats.empty()) {
    ImGui::TextUnformatted("Nothing lost: every record the collector produced is in the timeline.");
    return;
  }
  CsvButton(app, "losses");
  if (ImGui::BeginTable("##loss", 5,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                            ImGuiTableFlags_BordersInnerV)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("Severity", ImGuiTableColumnFlags_WidthFixed, 80);
    ImGui::TableSetupColumn("Statistic", ImGuiTableColumnFlags_WidthFixed, 220);
    ImGui::TableSetupColumn("Count", ImGuiTableColumnFlags_WidthFixed, 90);
    ImGui::TableSetupColumn("Process", ImGuiTableColumnFlags_WidthFixed, 70);
    ImGui::TableSetupColumn("Detail", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    for (const viewer::LossStat& s : stats) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushStyleColor(ImGuiCol_Text, SeverityColor(s.severity));
      ImGui::TextUnformatted(SeverityName(s.severity));
      ImGui::PopStyleColor();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(s.name.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(FormatCount(s.count).c_str());
      ImGui::TableNextColumn();
      if (s.pid)
        ImGui::Text("%u", s.pid);
      else
        ImGui::TextDisabled("all");
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", s.detail.c_str());
    }
    ImGui::EndTable();
  }
  for (size_t i = 0; i < r.problems.size() && i < 20; ++i) ImGui::BulletText("%s", r.problems[i].c_str());
}

}  // namespace gt::ui
