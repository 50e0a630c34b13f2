// The viewer application: one loaded trace, the view onto it, and the ImGui windows that draw it.
//
// [SECTION] View: visible range, selection, collapse state, measurement
// [SECTION] Panel state
// [SECTION] App
//
// The model and every query over it live in viewer/core (gt::viewer); this layer only decides what to ask for
// and how to draw the answer. Per-frame work is bounded by the screen: lanes outside the visible rows are
// never queried, and lane queries are LOD-folded by the core.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gt/viewer/collectives.h"
#include "gt/viewer/filter.h"
#include "gt/viewer/index.h"
#include "gt/viewer/load.h"
#include "gt/viewer/model.h"
#include "gt/viewer/query.h"
#include "gt/viewer/remote.h"
#include "gt/viewer/source.h"
#include "gt/viewer/summary.h"
#include "gt/viewer/view_state.h"
#include "imgui.h"
#include "ui/compare_view.h"
#include "ui/counters/counters_view.h"
#include "ui/flame_panel.h"
#include "ui/teamui.h"

namespace gt::ui {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] View: visible range, selection, collapse state, measurement
// ---------------------------------------------------------------------------------------------------------------

struct Measurement {
  bool active = false;    // a range is shown
  bool dragging = false;  // shift-drag in progress
  double start = 0, end = 0;
};

// Where the timeline drew things this frame, for hit-testing from outside (C API, flow arrows, tests).
struct TimelineLayout {
  ImVec2 plot_min{0, 0}, plot_max{0, 0};  // the event area right of the labels, below the ruler (screen px)
  std::vector<float> lane_y;              // per LaneId: top of its row on screen, or -1 when not laid out
  float lane_height = 18;
  double TimeToX(double t, double t0, double t1) const {
    return plot_min.x + (t - t0) / (t1 - t0) * (plot_max.x - plot_min.x);
  }
};

struct View {
  double t0 = 0, t1 = 1;                 // visible range, trace ns (double: smooth zoom at any scale)
  float scroll_y = 0;                    // vertical scroll of the track area
  std::vector<uint8_t> group_collapsed;  // per GroupId
  std::vector<uint8_t> track_collapsed;  // per TrackId: collapsed tracks show depth 0 only
  viewer::EventId selected;
  viewer::EventId hovered;
  Measurement measure;
  TimelineLayout layout;
  viewer::LaneId reveal_lane = kNone;  // scroll this lane into view on the next frame
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Panel state
// ---------------------------------------------------------------------------------------------------------------

enum class Panel : uint8_t {
  kNone = 0,
  kDetails,
  kKernels,
  kSearch,
  kLoss,
  kRoofline,
  kSummary,
  kCompare,
  kNotes,
  kFlame
};
// View-state names: "details", "kernels", "search", "loss", "roofline", "summary", "compare", "notes",
// "flame".
const char* PanelName(Panel p);
Panel PanelFromName(std::string_view name);

struct SearchState {
  char text[256] = {};
  viewer::Search search;
  viewer::EventId current;  // the match last jumped to
  bool focus_request = false;
  // teamui: the box's toggles. regex: the text is a regular expression (gt/viewer/regex.h); filter: tracks
  // and events that do not match are hidden, not dimmed. `error` holds a bad pattern's message (no search
  // then).
  bool regex = false;
  bool filter = false;
  std::string error;
  std::string error_text;            // the pattern `error` is about (not re-tried every frame)
  viewer::TrackFilter track_filter;  // built when filter is on and the search changes
  bool remote_applied = false;       // a remote trace's answer for `text` became `search`
};

struct KernelTableState {
  std::vector<viewer::KernelSummaryRow> rows;
  bool built = false;
  int selected_row = -1;
};

struct SummaryPanelState {
  std::vector<viewer::IdleGap> gaps;  // on first show (a remote trace's: when they arrive)
  bool gaps_built = false;
  std::vector<viewer::NameSummary> api, copies, nvtx;  // built on first show
  viewer::CollectiveReport collectives;                // NCCL across ranks; built on first show
  bool built = false;
  viewer::SummaryOf selected_table = viewer::SummaryOf::kApi;
  int selected_row = -1;
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] App
// ---------------------------------------------------------------------------------------------------------------

enum class LoadState : int { kIdle = 0, kLoading = 1, kLoaded = 2, kFailed = 3 };

class App {
 public:
  App();
  ~App();

  // Draws one frame of UI (between ImGui::NewFrame and Render); advances a load in progress.
  void Frame();
  // Advances a local load without drawing (the page's progress overlay covers the view meanwhile); false
  // when there is none, and the frame should be drawn. A remote trace's opening is drawn: its answers are
  // handed over by Frame().
  bool StepBusy();
  // Work that moves on without input (platform::Callbacks::wants_frames): a load, a comparison loading,
  // remote answers awaited or retried, an event to reveal, a held key or mouse button.
  bool WantsFrames() const;

  // Starts loading. Both replace the current trace once the new one is in; a failed load keeps nothing of the
  // previous trace (the error names the new file). OpenBuffer takes ownership of `data` (malloc'ed).
  void OpenFile(const std::string& path);
  void OpenBuffer(std::string name, uint8_t* data, size_t size);
  // Native only: a viewer index (.gtindex, gt/viewer/index.h) opened memory-mapped, so a trace bigger than
  // RAM opens: the model's lanes are the file's pages. OpenIndexed opens TRACE's index TRACE.gtindex, built
  // (once, which loads the trace) when it is missing, stale or damaged. Both open in the calling frame.
  // OpenFile opens a path ending in .gtindex this way.
  void OpenIndex(const std::string& path);
  void OpenIndexed(const std::string& trace_path);
  // An index whose decoded model would take more than `bytes` (default: half the machine's memory) is not
  // decoded: the view asks it for what it shows, in process, as the page asks `gtrace serve` (RemoteTrace),
  // so memory stays bounded by the block and tile caches.
  void SetIndexDecodeLimit(uint64_t bytes) { index_decode_limit_ = bytes; }
  // A trace that stays on the server (issue 17, gt/viewer/remote.h): the layout is asked for now, tiles and
  // details as the view needs them. `send` hands a request (id, URL relative to the trace's API base) to
  // the transport (the page's fetch), whose answers come back through remote()->OnAnswer. Loading until
  // the layout arrives; a failure is a load failure.
  void OpenRemote(std::string name, viewer::RemoteTrace::Send send);
  // Several files of one distributed job, opened as one trace through the merge (gt/viewer/merge.h): stage
  // each file (ownership of the malloc'ed `data` passes here), then OpenStaged. One staged file opens as
  // OpenBuffer does. The merge runs in one step a frame after it starts, so "Merging N files" is drawn first;
  // what the merge had to say (an input left out, missing ranks) becomes load_warning() and the Data loss
  // panel's entries.
  void StageInput(std::string name, uint8_t* data, size_t size);
  void OpenStaged();
  void ClearStaged();  // drops the staged files (and a merge of them that has not run yet)
  size_t staged_inputs() const { return staged_.size(); }
  void Close();

  LoadState load_state() const { return load_state_; }
  double load_progress() const;
  // What the loading screen says besides the fraction: bytes and records read, and whether reading is over
  // and the timeline is being built (Finish runs in the next frame, so that screen is on the page first).
  viewer::TraceLoader::Progress load_detail() const;
  bool load_building() const { return load_state_ == LoadState::kLoading && building_; }
  const std::string& last_error() const { return last_error_; }
  const std::string& load_warning() const { return load_warning_; }
  const std::string& trace_name() const { return trace_name_; }
  uint64_t frame_count() const { return frame_count_; }
  // CPU time of the last Frame() (UI + queries, not GL or the browser): the viewer's own per-frame cost.
  double last_frame_ms() const { return last_frame_ms_; }
  // Where the last single-file load's wall time went (gt_load_timings, bench/viewer/bench_page_load.mjs):
  // the wall time from OpenBuffer to the installed model, the part spent inside the loader (Steps, then
  // Finish) and the frames it spanned; the rest is the page drawing frames and waiting for the next one.
  struct LoadClock {
    std::chrono::steady_clock::time_point opened, last_step_end;
    double wall_s = 0, steps_s = 0, finish_s = 0;
    uint32_t frames = 0;
    viewer::LoadTimings phases;
  };
  const LoadClock& load_clock() const { return load_clock_; }

  const viewer::TraceModel* model() const { return model_.get(); }
  // The mapped index the model lives in (OpenIndex), else null: its precomputed tables spare a scan.
  const viewer::MappedIndex* index() const { return index_.get(); }
  // What the timeline and the panels draw from (gt/viewer/source.h): the model in memory, or the remote
  // trace. Null with no trace.
  viewer::TraceSource* source() const { return source_.get(); }
  viewer::RemoteTrace* remote() const { return remote_.get(); }
  // The events are in memory: the search filter and list, explicit flows, counters, notes, comparison and the
  // data-loss panel work (search, idle gaps and launch partners also work remotely, asked of the server).
  bool events_local() const { return !remote_; }
  View& view() { return view_; }
  const View& view() const { return view_; }
  SearchState& search() { return search_; }
  const SearchState& search() const { return search_; }
  KernelTableState& kernel_table() { return kernels_; }
  SummaryPanelState& summary_panel() { return summary_; }
  CountersState& counters() { return counters_; }
  PcSamplingState& pc_sampling() { return pc_sampling_; }
  CompareState& compare() { return compare_; }  // the second trace of a comparison (ui/compare_view.h)
  TeamUiState& teamui() { return teamui_; }
  FlameState& flame() { return flame_; }
  const FlameState& flame() const { return flame_; }
  Panel panel() const { return panel_; }
  void ShowPanel(Panel p) { panel_ = p, panel_requested_ = true; }

  // ---- navigation (also used by the C API and the panels) ----
  void SetVisibleRange(double t0, double t1);  // clamped to a sane zoom range around the trace
  void FitAll();
  void FitRange(double t0, double t1, double margin = 0.05);  // with a margin on each side
  void ZoomAround(double anchor_t, double factor);            // factor < 1 zooms in
  void Select(viewer::EventId e, bool reveal);                // reveal: scroll/zoom so it is on screen
  void RevealEvent(viewer::EventId e);
  // Search: (re)runs when the text changes; returns the match count.
  uint64_t SetSearch(std::string_view text);
  // The search box's regex / filter toggles (re-runs the search; a bad regex leaves search().error set).
  void SetSearchMode(bool regex, bool filter);
  // Highlights exactly the events named `name` (interned id, not a substring) and shows the name in the
  // search box; returns the match count. The kernel table's row click. A remote trace: the server's search
  // for the name's text (0 until its count arrives).
  uint64_t HighlightName(StringId name);
  // A kernel table row click: zooms to the span of the row's instances and highlights exactly them.
  uint64_t ZoomToKernel(const viewer::KernelSummaryRow& row);
  viewer::EventId SearchStep(bool forward);  // selects and reveals the next/previous match

  // ---- share links ----
  viewer::ViewState CurrentViewState() const;
  // Applies now when a trace is loaded, else after the next successful load. Returns false on a bad string.
  bool ApplyViewState(std::string_view text, std::string* error);

  // ---- layout helpers for the panels ----
  bool IsGroupCollapsed(viewer::GroupId g) const;
  bool IsTrackCollapsed(viewer::TrackId t) const;
  void SetGroupCollapsed(viewer::GroupId g, bool collapsed);
  void SetTrackCollapsed(viewer::TrackId t, bool collapsed);

 private:
  void StepLoad();
  void FinishLoad();
  void StepMerge();
  void InstallModel(std::shared_ptr<const viewer::TraceModel> model,
                    const std::vector<std::string>& warnings);
  void InstallIndex(StatusOr<std::unique_ptr<viewer::MappedIndex>> index, const std::string& name);
  void FreeStaged();
  void Fail(std::string message);
  void ResetView();
  void ApplyViewStateNow(const viewer::ViewState& vs);
  void DrawMenuBar(float* height);
  void DrawWelcome(const ImVec2& pos, const ImVec2& size);
  void DrawLoading(const ImVec2& pos, const ImVec2& size);
  void HandleGlobalKeys();
  void TakeRemoteSearch();

  LoadState load_state_ = LoadState::kIdle;
  std::unique_ptr<viewer::TraceLoader> loader_;
  uint8_t* load_bytes_ = nullptr;  // malloc'ed; owned while loading
  size_t load_size_ = 0;
  std::string loading_name_;
  struct StagedInput {
    std::string name;
    uint8_t* data = nullptr;  // malloc'ed; owned
    size_t size = 0;
  };
  std::vector<StagedInput> staged_;  // files waiting for OpenStaged, then the merge's inputs
  bool merging_ = false;
  int merge_wait_frames_ = 0;  // frames drawn before the merge blocks, so its screen is on the page
  bool building_ = false;      // reading done; Finish (lanes, LOD, summaries) runs in the next frame
  std::string trace_name_;
  std::string last_error_;
  std::string load_warning_;
  // Shared so that an index's model keeps its mapping alive (an aliasing pointer into index_).
  std::shared_ptr<const viewer::TraceModel> model_;
  std::shared_ptr<const viewer::MappedIndex> index_;
  std::shared_ptr<viewer::RemoteTrace> remote_;  // a remote trace: model_ is its layout
  // Answers of a local index to remote_'s requests, handed over at the start of the next frame (not inside
  // the request: RemoteTrace may be issuing more).
  struct LocalAnswer {
    uint64_t request;
    int status;
    std::string body;
  };
  std::vector<LocalAnswer> local_answers_;
  // A remote trace's layout has no events to draw: when another trace starts loading it goes at once (a local
  // trace stays on screen until its successor is in). Opening a file over a remote trace drew the layout as a
  // local model in the frames of the load and crashed.
  void DropRemote();
  void DropTrace();                  // the shown trace and its view (not a load in progress)
  uint64_t index_decode_limit_ = 0;  // 0: half the physical memory
  std::shared_ptr<viewer::TraceSource> source_;
  viewer::EventId reveal_pending_;  // a remote event to reveal once its details arrive
  bool has_pending_view_ = false;
  viewer::ViewState pending_view_;

  View view_;
  SearchState search_;
  KernelTableState kernels_;
  SummaryPanelState summary_;
  CountersState counters_;       // the counters panel and roofline (ui/counters)
  PcSamplingState pc_sampling_;  // the PC-sampling section (ui/counters)
  CompareState compare_;         // a second trace compared with this one (ui/compare_view)
  TeamUiState teamui_;           // notes, histogram, CSV (ui/teamui.h)
  FlameState flame_;             // the flame graph of sampled CPU stacks (ui/flame_panel.h)
  Panel panel_ = Panel::kDetails;
  bool panel_requested_ = false;  // select panel_'s tab on the next frame
  float bottom_height_ = 0;       // bottom panel height; 0 = default share of the window
  bool show_help_ = false;
  bool show_demo_ = false;
  uint64_t frame_count_ = 0;
  double last_frame_ms_ = 0;
  LoadClock load_clock_;
};

// The one App of the process (the C API and the platform callbacks reach it through this).
void SetGlobalApp(App* app);
App* GlobalApp();

// ---- windows (one file each) ----
void DrawTimeline(App& app, const ImVec2& pos, const ImVec2& size);
void DrawDetailsPanel(App& app);
void DrawKernelTable(App& app);
void DrawSummaryPanel(App& app);
void DrawSearchBar(App& app);
void DrawSearchResults(App& app);
void DrawLossPanel(App& app);
// A panel that scans events, on a remote trace: says so and offers to download the trace.
void DrawRemoteFallback(App& app, const char* what);
// The page downloads the remote trace and opens it in memory (web/app.js gtDownloadRemote; the view is kept).
void DownloadRemoteTrace();
// (ui/teamui.h: DrawNotesPanel, DrawTeamUiWindows)
// Status-bar badge for data loss (Perfetto-style): returns true when clicked.
bool DrawLossBadge(const App& app);

}  // namespace gt::ui
