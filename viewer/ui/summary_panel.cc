// The "Summary" tab: NCCL collectives across ranks (who arrives late, who waits; shown when the trace has
// collectives of several ranks), CUDA API calls, memory copies/sets and NVTX ranges (or a PyTorch trace's
// host ops) by name, the same tables as `gtrace stats` (viewer/core summary.h). Clicking a row highlights
// exactly the events of that name and selects the first one.
#include <cstdio>
#include <cstring>

#include "gt/units.h"
#include "gt/viewer/query.h"
#include "ui/app.h"

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
        if (StringId name = app.events_local() ? FindName(*app.model(), r.name) : 0;
            name != 0 && app.HighlightName(name) > 0)
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
        ImGui::Text("%s", FormatBytes(r.bytes).c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%s", FormatBandwidth(r.bytes, r.total_ns).c_str());
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

void DrawGaps(App& app, const std::vector<viewer::IdleGap>& gaps) {
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("##gaps", 4, flags)) return;
  ImGui::TableSetupColumn("Idle");
  ImGui::TableSetupColumn("At");
  ImGui::TableSetupColumn("The CPU meanwhile");
  ImGui::TableSetupColumn("Likely cause", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  const viewer::TraceModel& m = *app.model();
  for (size_t i = 0; i < gaps.size(); ++i) {
    const viewer::IdleGap& g = gaps[i];
    const double gap = double(g.end_ns - g.start_ns);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushID(static_cast<int>(i));
    if (ImGui::Selectable(FormatDuration(gap).c_str(), false, ImGuiSelectableFlags_SpanAllColumns))
      app.FitRange(double(g.start_ns), double(g.end_ns), 0.1);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s\n%s", g.device.c_str(), g.diagnosis.c_str());
    ImGui::PopID();
    ImGui::TableNextColumn();
    ImGui::Text("%s", viewer::FormatTimestamp(m, g.start_ns).c_str());
    ImGui::TableNextColumn();
    if (g.activity.empty() && g.cpu.hot.empty()) ImGui::TextDisabled("nothing recorded");
    std::string what;
    for (size_t a = 0; a < g.activity.size() && a < 2; ++a) {
      char pct[16];
      std::snprintf(pct, sizeof pct, "%.0f%% ", 100.0 * double(g.activity[a].overlap_ns) / gap);
      const viewer::GapActivity& x = g.activity[a];
      what += (a ? ", " : "") + std::string(pct) + (x.api ? "" : x.label() + " ") + x.name +
              (x.thread.empty() ? "" : " (" + x.thread + ")");
    }
    if (!what.empty()) ImGui::Text("%s", what.c_str());
    // Sampled stacks (gcollect --sample=cpu): the hottest frames of the threads that call CUDA, as in stats.
    for (size_t h = 0; h < g.cpu.hot.size() && h < 2; ++h) {
      const viewer::HotFrame& f = g.cpu.hot[h];
      ImGui::Text("%.0f%% %s %s", 100.0 * f.share, f.python ? "py" : "native", f.path.c_str());
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%llu of %llu CPU samples on %llu threads during the gap",
                          static_cast<unsigned long long>(f.samples),
                          static_cast<unsigned long long>(f.python ? g.cpu.python_samples : g.cpu.samples),
                          static_cast<unsigned long long>(g.cpu.threads));
    }
    if (g.cpu.samples > 0) {
      ImGui::PushID(static_cast<int>(i));
      if (ImGui::SmallButton("Flame graph")) {
        SetFlameRange(app, double(g.start_ns), double(g.end_ns), "idle gap " + std::to_string(i + 1));
        app.ShowPanel(Panel::kFlame);
      }
      ImGui::PopID();
    }
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", g.diagnosis.c_str());
  }
  ImGui::EndTable();
}

// With NCCL's payloads: per op, message size and rank count, nccl-tests' algbw and busbw at the median time
// (computed in the core: CollectiveReport::bandwidth, the rows `gtrace stats` prints).
void DrawCollectiveBandwidth(const viewer::CollectiveReport& r) {
  if (r.bandwidth.empty()) return;
  ImGui::TextDisabled("Bandwidth (nccl-tests' algbw and busbw; time = last end - last arrival, median)");
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit |
                                ImGuiTableFlags_ScrollY;
  const float height =
      ImGui::GetTextLineHeightWithSpacing() * (float(std::min<size_t>(r.bandwidth.size(), 12)) + 2.2f);
  if (!ImGui::BeginTable("##collective_bandwidth", 7, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  for (const char* c : {"Op", "Size", "Ranks", "Count", "Time", "algbw"}) ImGui::TableSetupColumn(c);
  ImGui::TableSetupColumn("busbw", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  for (const viewer::CollectiveBandwidth& b : r.bandwidth) {
    ImGui::TableNextRow();
    for (const std::string& cell :
         {b.op, FormatBytes(double(b.bytes)), std::to_string(b.ranks), FormatCount(b.count),
          FormatDuration(double(b.median_ns)), FormatRate(b.algbw, "B/s"), FormatRate(b.busbw, "B/s")}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(cell.c_str());
    }
  }
  ImGui::EndTable();
}

// Per rank, the columns of `gtrace stats` (FormatCollectiveReport), then the straggler diagnosis in words.
void DrawCollectives(const viewer::CollectiveReport& r) {
  for (const std::string& line : r.diagnosis) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(240, 200, 80, 255));
    ImGui::Bullet();
    ImGui::TextWrapped("%s", line.c_str());
    ImGui::PopStyleColor();
  }
  if (r.diagnosis.empty())
    ImGui::TextDisabled("No straggler: no rank arrives last by more than %s.",
                        FormatDuration(double(r.late_threshold_ns)).c_str());
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit |
                                ImGuiTableFlags_ScrollY;
  const float height =
      ImGui::GetTextLineHeightWithSpacing() * (float(std::min<size_t>(r.ranks.size(), 12)) + 2.2f);
  if (!ImGui::BeginTable("##collectives", 8, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  for (const char* c : {"Rank", "Collectives", "Late at", "Late total", "Waiting", "In NCCL", "Compute"})
    ImGui::TableSetupColumn(c);
  ImGui::TableSetupColumn("Hidden", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  for (const viewer::RankCollectiveStats& s : r.ranks) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (s.rank >= 0)
      ImGui::Text("rank %d", s.rank);
    else
      ImGui::Text("pid %u", s.pid);
    ImGui::TableNextColumn();
    ImGui::Text("%s", FormatCount(s.collectives).c_str());
    ImGui::TableNextColumn();
    if (s.last_arrivals)
      ImGui::Text("%s", FormatCount(s.last_arrivals).c_str());
    else
      ImGui::TextDisabled("-");
    ImGui::TableNextColumn();
    if (s.last_arrivals)
      ImGui::Text("%s", FormatDuration(double(s.late_ns)).c_str());
    else
      ImGui::TextDisabled("-");
    for (int64_t ns : {s.wait_ns, s.comm_ns, s.compute_ns}) {
      ImGui::TableNextColumn();
      ImGui::Text("%s", FormatDuration(double(ns)).c_str());
    }
    // Share of NCCL time during which this rank's compute ran too: communication the GPU hid.
    ImGui::TableNextColumn();
    const double hidden = s.comm_ns > 0 ? double(s.overlap_ns) / double(s.comm_ns) : 0.0;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.0f%%", hidden * 100);
    ImGui::ProgressBar(static_cast<float>(hidden), ImVec2(90, 0), pct);
  }
  ImGui::EndTable();
  DrawCollectiveBandwidth(r);
}

}  // namespace

void DrawSummaryPanel(App& app) {
  const viewer::TraceModel* m = app.model();
  if (!m) return;
  SummaryPanelState& st = app.summary_panel();
  if (!st.built) {
    // The per-name tables and the idle gaps through the trace interface (a remote trace's come from the
    // server); collectives scan the events, so a remote trace has none here.
    viewer::TraceSource& src = *app.source();
    const auto* api = src.Summary(viewer::SummaryOf::kApi);
    if (!api) {
      ImGui::TextDisabled("Asking the server for the summary tables...");
      return;
    }
    st.api = *api;
    st.copies = *src.Summary(viewer::SummaryOf::kCopies);
    st.nvtx = *src.Summary(viewer::SummaryOf::kNvtx);
    if (app.events_local()) st.collectives = viewer::CollectivesOf(*m);
    st.built = true;
  }
  if (!st.gaps_built) {  // a remote trace's may come after the tables
    if (const auto* gaps = app.source()->IdleGaps()) st.gaps = *gaps, st.gaps_built = true;
  }
  ImGui::TextDisabled(
      "Click a gap to zoom to it, a name to highlight its events. Tables by total time (kernels: the Kernels "
      "tab).");
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
  // Only when collectives were matched across ranks: a one-process trace has nothing to compare.
  if (!st.collectives.collectives.empty()) {
    char header[160];
    std::snprintf(header, sizeof header, "NCCL collectives across %zu ranks: %zu matched%s###collectives",
                  st.collectives.ranks.size(), st.collectives.collectives.size(),
                  st.collectives.diagnosis.empty() ? "" : ", straggler found");
    if (ImGui::CollapsingHeader(header, ImGuiTreeNodeFlags_DefaultOpen)) {
      ImGui::TextDisabled("Per rank:");
      ImGui::SameLine();
      CsvButton(app, "collective-ranks");
      ImGui::SameLine();
      ImGui::TextDisabled("Every collective on every rank:");
      ImGui::SameLine();
      CsvButton(app, "collectives");
      DrawCollectives(st.collectives);
    }
  }
  if (!app.events_local())
    ImGui::TextDisabled("NCCL collectives need the whole trace in the page (it stays on the server).");
  char gap_header[96];
  std::snprintf(gap_header, sizeof gap_header, "Largest GPU idle gaps: %zu###gaps", st.gaps.size());
  if (ImGui::CollapsingHeader(gap_header, ImGuiTreeNodeFlags_DefaultOpen)) {
    if (!st.gaps_built) {
      ImGui::TextDisabled("Asking the server for the idle gaps...");
    } else if (st.gaps.empty()) {
      ImGui::TextDisabled("No idle gap of 10 µs or more between GPU work.");
    } else {
      CsvButton(app, "idle-gaps");
      DrawGaps(app, st.gaps);
    }
  }
  for (const Section& s : sections) {
    char header[160];
    std::snprintf(header, sizeof header, "%s: %zu name%s###%s", s.title, s.rows->size(),
                  s.rows->size() == 1 ? "" : "s", viewer::SummaryOfName(s.what));
    if (!ImGui::CollapsingHeader(header, ImGuiTreeNodeFlags_DefaultOpen)) continue;
    if (s.rows->empty())
      ImGui::TextDisabled("%s", s.empty);
    else
      CsvButton(app, viewer::SummaryOfName(s.what)),
          DrawTable(app, viewer::SummaryOfName(s.what), *s.rows, s.what);
  }
}

}  // namespace gt::ui
