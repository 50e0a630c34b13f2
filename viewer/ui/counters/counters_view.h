// Kernel-counter views of the ImGui UI: the counters section of a kernel's details panel (speed of light,
// occupancy, caches, warp-stall breakdown with meanings and fixes, verdict, flags) and the roofline window.
// All numbers come from gt/viewer/analysis.h; this file only draws them.
//
// The App (ui/app.h) owns a CountersState and a PcSamplingState like every other panel's state and resets
// them with each load; both are built on first use from the trace's ProfiledData (gt/viewer/profiled.h),
// which a remote trace asks the server for, so the section and the roofline work the same on both.
// DrawCountersDetails() draws inside the details panel, DrawRooflineTab() as a tab of its own (a click on a
// point selects that kernel's first launch).
#pragma once

#include <string>
#include <vector>

#include "gt/viewer/analysis.h"
#include "gt/viewer/model.h"
#include "gt/viewer/profiled.h"

namespace gt::ui {

class App;

void DrawCountersDetails(App& app);  // counters of the selected kernel, if any
void DrawRooflineTab(App& app);  // the roofline; a click selects that kernel's first launch in the timeline
// The profiled kernels' analyses for the roofline CSV; null while a remote trace's counters are on their way.
const viewer::ProfiledKernels* ProfiledKernelsOf(App& app);
// {"profiled_launches":N,"kernels":[{"name","bottleneck","verdict","intensity","flops_per_s","memory_side",
//  "flags"}...],"selected":{"name","verdict","compute_pct","memory_pct","top_stall"} | null,
//  "pc_sampling":{"samples","top_reason","hot_spot","summary"} | null (of the selected kernel)}
std::string CountersJson(App& app);

// The kernel event a panel shows counters for: what the details panel knows of it on any trace (local or
// remote: the name from its details, the process from its lane's track).
struct SelectedKernel {
  viewer::EventId event;
  uint32_t pid = 0;
  std::string name;
};
// The selected event as a SelectedKernel; false when nothing is selected, it is not a kernel, or (remote) its
// details have not arrived yet.
bool SelectedKernelOf(App& app, SelectedKernel* out);

struct CountersState {
  const viewer::ProfiledData* built_for = nullptr;  // rebuilt when the trace changes
  viewer::ProfiledKernels profiled;  // every profiled launch and kernel, analyzed (viewer core)
  RooflineModel roofline;
  MemoryLevel level = MemoryLevel::kDram;
  std::vector<RooflinePoint> points;
  int hovered = -1;
  int selected = -1;  // index into points
};

void ResetCountersState(CountersState& s);
// Analyses every profiled kernel of the trace (cheap: once per load). Returns the number of profiled
// launches.
size_t BuildCountersState(CountersState& s, const viewer::ProfiledData& data);

// The counters section for a selected kernel event; draws nothing and returns false when the trace has no
// counters for its name.
bool DrawKernelCountersPanel(CountersState& s, const SelectedKernel& kernel);

// The roofline chart. Returns the event to select in the timeline when a point was clicked (the kernel's
// first launch), or an invalid id.
viewer::EventId DrawRooflineWindow(CountersState& s);

// PC sampling (gcollect --pc-sampling): profiles per (pid, kernel name), built once per loaded trace.
struct PcSamplingState {
  const viewer::ProfiledData* built_for = nullptr;
  std::vector<PcSamplingProfile> profiles;
  bool by_line = true;  // hot-spot table: source lines (when the cubin had line info) or SASS offsets
};
void BuildPcSamplingState(PcSamplingState& s, const viewer::ProfiledData& data);
// The PC-sampling section for a selected kernel: stall histogram (meaning + fix per reason) and hot spots.
// Draws nothing and returns false when the trace has no PC samples for the kernel's name.
bool DrawPcSamplingPanel(PcSamplingState& s, const SelectedKernel& kernel);

}  // namespace gt::ui
