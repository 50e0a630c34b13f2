// Details of the selected event: every field the core knows (EventDetails), the flow partner with a jump to
// it, and the explicit flows in and out.
#include <string>

#include "gt/units.h"
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
  // Through the trace interface: a remote event's details arrive a few frames after the click.
  const viewer::EventInfo* info = app.source()->Event(sel);
  if (!info) {
    ImGui::TextDisabled("Asking the server for this event...");
    return;
  }
  if (!info->found) {
    ImGui::TextDisabled("The trace has no such event (%s).", app.source()->EventKey(sel).c_str());
    return;
  }
  ImGui::TextUnformatted(info->name.c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("(%s)", viewer::EventKindName(info->kind));
  const bool local = app.events_local();

  // Jumps: launch <-> GPU work by correlation id, and explicit flows (a remote trace's come from the server).
  const viewer::PartnerInfo* partner = app.source()->Partner(sel);
  if (partner && partner->id.valid()) {
    const std::string label =
        std::string(partner->launch ? "Go to the launch: " : "Go to the GPU work: ") + partner->name;
    if (ImGui::SmallButton(label.c_str())) app.Select(partner->id, true);
    ImGui::SameLine();
  }
  if (ImGui::SmallButton("Zoom to event (F)"))
    app.FitRange(static_cast<double>(info->start), static_cast<double>(info->end), 0.15);
  if (local) {
    ImGui::SameLine();
    if (ImGui::SmallButton("Find all with this name")) {
      app.SetSearch(info->name);
      app.search().current = sel;
    }
  }

  if (ImGui::BeginTable("##fields", 2,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable)) {
    ImGui::TableSetupColumn("Field", ImGuiTableColumnFlags_WidthFixed, 170);
    ImGui::TableSetupColumn("Value", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    int i = 0;
    for (const viewer::DetailField& f : info->fields) {
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
    // Explicit flows (framework op -> CUDA call, Chrome flow events), each a jump (a remote trace's come with
    // the partner from the server).
    for (const viewer::FlowEnd& f : partner ? partner->flows : std::vector<viewer::FlowEnd>{}) {
      ImGui::PushID(i++);
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", f.outgoing ? "Flow to" : "Flow from");
      ImGui::TableNextColumn();
      if (ImGui::SmallButton(f.name.c_str())) app.Select(f.id, true);
      ImGui::PopID();
    }
    ImGui::EndTable();
  }
  // Hardware counters of a profiled kernel (speed of light, occupancy, stalls): viewer/ui/counters.
  // A remote trace's come from the server's /profiled (the tables and their timeline joins).
  if (info->kind == viewer::EventKind::kKernel) DrawCountersDetails(app);
}

void DrawRemoteFallback(App& app, const char* what) {
  ImGui::TextWrapped(
      "%s needs the whole trace in this page. This trace stays on the server (it has %s events): the "
      "timeline, event details, the kernel table, the summary tables, the counters and the roofline are "
      "fetched as "
      "you look at them.",
      what, FormatCount(app.model() ? app.model()->event_count : 0).c_str());
  if (ImGui::Button("Download the whole trace into this page")) DownloadRemoteTrace();
}

}  // namespace gt::ui
