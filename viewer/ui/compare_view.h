// Two traces on one screen: the second trace (B) loaded next to the App's trace (A), B's tracks drawn under
// A's on A's time axis (shifted by the alignment offset), the Compare panel (alignment, per-step deltas, the
// selected kernel and its counterpart, counters side by side) and the kernel table's before/after/delta rows.
// The numbers come from viewer/core compare.h (the same code as `gtrace diff`); this layer holds B and draws.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gt/viewer/compare.h"
#include "gt/viewer/load.h"
#include "gt/viewer/model.h"
#include "gt/viewer/profiled.h"
#include "gt/viewer/query.h"
#include "ui/counters/counters_view.h"

namespace gt::ui {

class App;

struct CompareState {
  // ---- B and its load ----
  std::unique_ptr<viewer::TraceModel> model;  // null: no comparison
  std::string name;                           // B's file name
  std::unique_ptr<viewer::TraceLoader> loader;
  uint8_t* bytes = nullptr;  // malloc'ed; owned while loading
  size_t size = 0;
  std::string loading_name;
  std::string error;    // why the last B could not be opened (A stays open)
  std::string warning;  // B opened with losses

  // ---- what the comparison shows (Recompute) ----
  viewer::AlignRequest request;  // what the user asked for (automatic by default)
  viewer::Alignment align;
  std::vector<viewer::NameChange> rows;  // the kernel table's before/after/delta rows
  std::vector<viewer::StepDelta> steps;  // per instance of align.name
  bool computed = false;
  std::unique_ptr<viewer::ProfiledKernels> profiled_a, profiled_b;  // built when the panel first needs them
  std::vector<viewer::CounterPair> counter_pairs;
  int counter_pair = 0;                          // the pair shown side by side
  std::unique_ptr<viewer::ProfiledData> data_b;  // B's counter tables and timeline joins, for its panel
  std::unique_ptr<CountersState> counters_b;     // B's counters panel state

  // ---- B's view: collapse state, layout, selection, highlight ----
  std::vector<uint8_t> group_collapsed, track_collapsed;
  std::vector<float> lane_y;        // per B lane: top of its row on screen this frame, -1 when not laid out
  viewer::EventId b_selected;       // selected event of B (a click on B's tracks)
  viewer::EventId a_counterpart;    // A's kernel at B's selection's place
  viewer::EventId b_counterpart;    // B's kernel at A's selection's place
  viewer::EventId a_selected_seen;  // A's selection the counterpart was computed for
  viewer::Search search;            // A's highlight applied to B (same needle / exact name)
  std::string search_for;           // the A needle `search` was built for
  std::string pending_selected;     // a share link's B selection, applied once B is in
  bool has_pending_view = false;
  bool show_panel_when_computed = false;  // a share link opened on the Compare tab, before B was in

  CompareState() = default;
  ~CompareState();
  CompareState(const CompareState&) = delete;
  CompareState& operator=(const CompareState&) = delete;

  bool active() const { return model != nullptr; }
  bool loading() const { return loader != nullptr; }
  double offset() const { return static_cast<double>(align.offset_ns); }
};

// ---- loading B (A must be open or opening; opening another A ends the comparison) ----
void CompareOpenBuffer(App& app, std::string name, uint8_t* data, size_t size);  // takes `data` (malloc'ed)
void CompareOpenFile(App& app, const std::string& path);
void CompareClose(App& app);
// Per frame: a step of B's load; the comparison is computed once both traces are in.
void CompareStep(App& app);
// Sets the alignment ("" automatic, "start", "name", "name:N" with N 1-based); false on a bad spec.
bool CompareSetAlign(App& app, const std::string& spec, std::string* error);
std::string CompareAlignSpec(const CompareState& c);  // the request as such a spec ("" when automatic)

// ---- selection across the traces ----
void CompareOnSelectA(App& app);  // A's selection changed: find its counterpart in B
void CompareSelectB(App& app, viewer::EventId e, bool reveal);

// ---- drawing ----
void DrawComparePanel(App& app);        // the Compare tab
void DrawCompareKernelTable(App& app);  // the Kernels tab while comparing

// ---- C API (JSON) ----
std::string CompareStateJson(App& app);
std::string CompareCountersJson(App& app);

}  // namespace gt::ui
