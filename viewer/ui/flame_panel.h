// The "Flame graph" tab: the sampled CPU stacks (gcollect --sample=cpu) of a time range as an icicle graph.
// The range is the measured one (shift-drag on the timeline; the panel follows it), an idle gap picked in
// the Summary tab, or the whole trace until one of those is chosen; a process or thread narrows it. The
// graph and its layout come from the viewer core (gt/viewer/cpu_samples.h): this file keeps the choice and
// draws, and the C API (gt_flame_*) reports what is drawn.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gt/viewer/cpu_samples.h"
#include "imgui.h"

namespace gt::ui {

class App;

struct FlameState {
  const viewer::TraceModel* model = nullptr;  // what the rest was computed for
  bool has_range = false;                     // false: the whole trace
  double start = 0, end = 0;
  std::string source = "whole trace";  // or "measured range", "idle gap 2"
  // Whose samples: by default the threads that call CUDA (the ones that feed the GPU, as the idle-gap
  // attribution counts them; a PyTorch process has dozens of threads parked in waits that would bury them).
  // cuda_threads off: pid (0: every process) and tid (0: every thread of pid).
  bool cuda_threads = true;
  uint32_t pid = 0, tid = 0;
  uint32_t focus = 0;  // the node zoomed into (0: the whole graph)
  // The measurement the panel last followed: a new one replaces the range.
  bool seen_measure = false;
  double seen_start = 0, seen_end = 0;
  bool dirty = true;
  std::vector<viewer::FlameNode> graph;
  std::vector<viewer::FlameRect> layout;
  std::vector<viewer::ThreadKey> threads;     // the sampled threads, for the filter (once per trace)
  std::vector<viewer::ThreadKey> feeders;     // the threads that call CUDA (and were sampled)
  int64_t first_sample = 0, last_sample = 0;  // samples may outlast the events (process exit)
  // Where the graph was drawn in the last frame (screen px), for the C API's hit positions.
  ImVec2 canvas_min{0, 0};
  float canvas_width = 0, row_height = 0;
  bool drawn = false;
  int64_t hovered = -1;  // the node under the mouse in the last frame (its tooltip is up), -1: none
};

// Replace what the graph counts; each resets the zoom. `source` names the range in the panel's header.
void SetFlameRange(App& app, double start, double end, std::string source);
void SetFlameThread(App& app, uint32_t pid, uint32_t tid);
void SetFlameCudaThreads(App& app);           // back to the default filter
bool SetFlameFocus(App& app, uint32_t node);  // false: no such node
// Rebuilds the graph if the trace, range or filter changed, and follows a new measurement.
void UpdateFlame(App& app);
// {"start","end","source","threads" ("cuda"|"all"|"process"|"thread"),"pid","tid",
// "sampled_threads":[{"pid","tid","cuda"}],"drawn","hovered"} + the core's flame graph JSON of the current
// zoom (gt/viewer/json.h).
std::string FlameJson(App& app);
// Where `node` was drawn in the last frame: {"x","y","w","h"} (CSS px), null when it was not.
std::string FlameNodeScreenJson(const App& app, uint32_t node);
void DrawFlamePanel(App& app);

}  // namespace gt::ui
