// Details of the selected event: every field the core knows (EventDetails), the flow partner with a jump to
// it, and the explicit flows in and out.
#include <string>

#include "gt/viewer/query.h"
#include "ui/app.h"
#include "ui/counters/counters_view.h"

namespace gt::ui {

void DrawDetailsPanel(App& app) {
  const viewer::TraceModel* m = app.model();
  const viewer::EventId sel = app.view().selected;
  if (!m || !sel.valid()) {
    ImGui::TextDisabled("Click an event in the timeline to see every field of it here.");
    return;
  }
  ImGui::TextUnformatted(m->Str(m->Name(sel)).c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("(%s)", viewer::EventKindName(m->Kind(sel)));

  // Jumps: launch <-> GPU work by correlation id, and explicit flows.
  const viewer::EventId partner = viewer::FlowPartner(*m, sel);
  if (partner.valid()) {
    const bool to_gpu = m->IsGpuActivity(partner);
    const std::string label =
        std::string(to_gpu ? "Go to the GPU work: " : "Go to the launch: ") + m->Str(m->Name(partner));
    if (ImGui::SmallButton(label.c_str())) app.Select(partner, true);
    ImGui::SameLine();
  }
  if (ImGui::SmallButton("Zoom to event (F)"))
    app.FitRange(static_cast<double>(m->Start(sel)), static_cast<double>(m->End(sel)), 0.15);
  ImGui::SameLine();
  if (ImGui::SmallButton("Find all with this name")) {
    app.SetSearch(m->Str(m->Name(sel)));
    app.search().current = sel;
  }

  if (ImGui::BeginTable("##fields", 2,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable)) {
    ImGui::TableSetupColumn("Field", ImGuiTableColumnFlags_WidthFixed, 170);
    ImGui::TableSetupColumn("Value", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    int i = 0;
    for (const viewer::DetailField& f : viewer::EventDetails(*m, sel)) {
      ImGui::PushID(i++);
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", f.name.c_str());
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", f.value.c_str());
      if (ImGui::BeginPopupContextItem("##copy")) {
        if (ImGui::MenuItem("Copy value")) ImGui::SetClipboardText(f.value.c_str());
        ImGui::EndPopup();
      }
      ImGui::PopID();
    }
    // Explicit flows (framework op -> CUDA call, Chrome flow events), each a jump.
    for (const viewer::FlowArrow& f : viewer::FlowsOf(*m, sel)) {
      if (f.correlation) continue;
      const viewer::EventId other = f.from == sel ? f.to : f.from;
      if (!other.valid()) continue;
      ImGui::PushID(i++);
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", f.from == sel ? "Flow to" : "Flow from");
      ImGui::TableNextColumn();
      if (ImGui::SmallButton(m->Str(m->Name(other)).c_str())) app.Select(other, true);
      ImGui::PopID();
    }
    ImGui::EndTable();
  }
  // Hardware counters of a profiled kernel (speed of light, occupancy, stalls): viewer/ui/counters.
  if (m->Kind(sel) == viewer::EventKind::kKernel) DrawCountersDetails(app);
}

}  // namespace gt::ui
