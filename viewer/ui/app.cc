// [SECTION] Globals and helpers
// [SECTION] Loading
// [SECTION] Navigation
// [SECTION] Search
// [SECTION] View state (share links)
// [SECTION] Frame: layout, menu bar, keys
#include "ui/app.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <unistd.h>

#include "gt/reader.h"
#include "gt/units.h"
#include "gt/viewer/index_query.h"
#include "gt/viewer/merge.h"
#include "gt/viewer/ncu.h"
#include "ui/counters/counters_view.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif

namespace gt::ui {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Globals and helpers
// ---------------------------------------------------------------------------------------------------------------

namespace {
App* g_app = nullptr;
constexpr double kMinSpanNs = 20.0;  // deepest zoom: a few ns per pixel on a wide screen
}  // namespace

void SetGlobalApp(App* app) {
  g_app = app;
}
App* GlobalApp() {
  return g_app;
}

const char* PanelName(Panel p) {
  switch (p) {
    case Panel::kDetails:
      return "details";
    case Panel::kKernels:
      return "kernels";
    case Panel::kSearch:
      return "search";
    case Panel::kLoss:
      return "loss";
    case Panel::kRoofline:
      return "roofline";
    case Panel::kSummary:
      return "summary";
    case Panel::kCompare:
      return "compare";
    case Panel::kNotes:
      return "notes";
    case Panel::kFlame:
      return "flame";
    default:
      return "";
  }
}

Panel PanelFromName(std::string_view name) {
  for (Panel p : {Panel::kDetails, Panel::kKernels, Panel::kSearch, Panel::kLoss, Panel::kRoofline,
                  Panel::kSummary, Panel::kCompare, Panel::kNotes, Panel::kFlame})
    if (name == PanelName(p)) return p;
  return Panel::kNone;
}

App::App() = default;

App::~App() {
  FreeStaged();
  std::free(load_bytes_);
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Loading
// ---------------------------------------------------------------------------------------------------------------

void App::OpenFile(const std::string& path) {
  const std::string name = path.substr(path.find_last_of('/') + 1);
#if !defined(__EMSCRIPTEN__)
  if (name.size() > 8 && name.ends_with(".gtindex")) {
    OpenIndex(path);
    return;
  }
#endif
  StatusOr<std::string> bytes = ReadFileBytes(path);
  if (!bytes.ok()) {
    loading_name_ = name;
    Fail("Cannot open " + name + ": " + bytes.status().ToString());
    return;
  }
  auto* data = static_cast<uint8_t*>(std::malloc(std::max<size_t>(1, bytes->size())));
  std::memcpy(data, bytes->data(), bytes->size());
  OpenBuffer(name, data, bytes->size());
}

void App::OpenBuffer(std::string name, uint8_t* data, size_t size) {
  CompareClose(*this);  // another trace: the comparison was with the one it replaces
  DropRemote();
  FreeStaged();
  loader_.reset();
  std::free(load_bytes_);
  load_bytes_ = data;
  load_size_ = size;
  loading_name_ = std::move(name);
  last_error_.clear();
  load_warning_.clear();
  loader_ = std::make_unique<viewer::TraceLoader>();  // a load in progress is dropped: the new file wins
  building_ = false;
  viewer::LoadOptions options;
#if !defined(__EMSCRIPTEN__)
  options.threads = 0;  // one per hardware thread
#elif defined(__EMSCRIPTEN_PTHREADS__)
  // The page started this many workers before main() (web/app.js): a thread must never wait for a worker
  // to start, since that needs the page's event loop, which a load blocks.
  options.threads = uint32_t(std::max(1, EM_ASM_INT({ return Module.gtPoolSize | 0; })));
#endif
  load_clock_ = {};
  load_clock_.opened = std::chrono::steady_clock::now();
  Status st = loader_->Open(std::span<const uint8_t>(load_bytes_, load_size_), options);
  if (!st.ok()) {
    Fail("Cannot open " + loading_name_ + ": " + st.ToString());
    return;
  }
  load_state_ = LoadState::kLoading;
}

namespace {
// A loaded model's memory per event (columns, LOD, tables; docs/benchmarks.md's viewer core section), rounded
// up.
constexpr uint64_t kModelBytesPerEvent = 32;

uint64_t IndexDecodeLimit(uint64_t limit) {
  if (limit) return limit;
#if defined(__EMSCRIPTEN__)
  return uint64_t{1} << 30;  // wasm32: a quarter of the 4 GiB address space
#else
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) / 2 : uint64_t{4} << 30;
#endif
}
}  // namespace

void App::OpenIndex(const std::string& path) {
  // An index opened by name was built from some trace: which one is not known here, so the source
  // fingerprint is not checked (an empty tag); version, layout and checksums still are.
  InstallIndex(viewer::MappedIndex::Open(path, viewer::IndexSource{}), path);
}

void App::OpenIndexed(const std::string& trace_path) {
  viewer::LoadOptions load;
  load.threads = 0;  // a rebuild loads the trace on every hardware thread, as OpenBuffer does
  InstallIndex(viewer::OpenOrBuildIndexFile(trace_path, trace_path + ".gtindex", load), trace_path);
}

void App::InstallIndex(StatusOr<std::unique_ptr<viewer::MappedIndex>> index, const std::string& path) {
  CompareClose(*this);
  DropRemote();
  FreeStaged();
  loader_.reset();
  building_ = false;
  std::free(load_bytes_);
  load_bytes_ = nullptr;
  last_error_.clear();
  load_warning_.clear();
  loading_name_ = path.substr(path.find_last_of('/') + 1);
  if (!index.ok()) {
    Fail("Cannot open " + loading_name_ + ": " + index.status().ToString());
    return;
  }
  // The index's lanes are compressed blocks the local views cannot read in place. A model that fits is
  // decoded whole (every panel works on it; as much memory as loading the trace, without its parsing and
  // building); a bigger one is asked for what the view shows, as a remote trace.
  const uint64_t decoded_estimate = uint64_t((*index)->model().event_count) * kModelBytesPerEvent;
  if (decoded_estimate > IndexDecodeLimit(index_decode_limit_)) {
    std::shared_ptr<const viewer::MappedIndex> shared(std::move(*index));
    OpenRemote(loading_name_, [this, shared](uint64_t request, const std::string& url) {
      const auto [what, params] = viewer::SplitIndexUrl(url);
      viewer::IndexAnswer a = viewer::AnswerIndexQuery(*shared, what, params);
      local_answers_.push_back({request, a.status, std::move(a.body)});
    });
    index_ = std::move(shared);  // after OpenRemote, which closes what was open
    return;
  }
  auto whole = (*index)->Materialize();
  if (!whole.ok()) {
    Fail("Cannot open " + loading_name_ + ": " + whole.status().ToString());
    return;
  }
  index_ = std::shared_ptr<const viewer::MappedIndex>(std::move(*index));
  InstallModel(std::shared_ptr<const viewer::TraceModel>(std::move(*whole)), {});
}

void App::OpenRemote(std::string name, viewer::RemoteTrace::Send send) {
  Close();
  loading_name_ = std::move(name);
  remote_ = std::make_shared<viewer::RemoteTrace>(std::move(send));
  load_state_ = LoadState::kLoading;
  remote_->Start();
}

void App::StageInput(std::string name, uint8_t* data, size_t size) {
  if (merging_) ClearStaged();  // a new set of files replaces a merge that has not started
  staged_.push_back({std::move(name), data, size});
}

void App::ClearStaged() {
  const bool was_merging = merging_;
  FreeStaged();
  // A merge waiting for its frame has nothing left to merge: back to what was shown before it.
  if (was_merging && load_state_ == LoadState::kLoading)
    load_state_ = model_ ? LoadState::kLoaded : LoadState::kIdle;
}

void App::FreeStaged() {
  for (StagedInput& in : staged_) std::free(in.data);
  staged_.clear();
  merging_ = false;
}

void App::OpenStaged() {
  if (staged_.empty()) {
    Fail("Nothing to open: no file was staged");
    return;
  }
  if (staged_.size() == 1) {
    StagedInput one = std::move(staged_.front());
    staged_.clear();
    OpenBuffer(std::move(one.name), one.data, one.size);
    return;
  }
  CompareClose(*this);
  DropRemote();
  loader_.reset();
  building_ = false;
  std::free(load_bytes_);
  load_bytes_ = nullptr;
  last_error_.clear();
  load_warning_.clear();
  // The trace's name: its files, the first few by name.
  loading_name_.clear();
  load_size_ = 0;
  for (size_t i = 0; i < staged_.size(); ++i) {
    load_size_ += staged_[i].size;
    if (i < 3) loading_name_ += (i ? " + " : "") + staged_[i].name;
  }
  if (staged_.size() > 3) loading_name_ += " + " + std::to_string(staged_.size() - 3) + " more";
  merging_ = true;
  merge_wait_frames_ = 2;
  load_state_ = LoadState::kLoading;
}

void App::StepMerge() {
  // The merge reads every file twice (plan, then feed) in one call: let the loading screen reach the page
  // first, so the page says what it is doing while it is busy.
  if (merge_wait_frames_-- > 0) return;
  std::vector<viewer::MergeInput> inputs;
  for (const StagedInput& in : staged_)
    inputs.push_back({in.name, std::span<const uint8_t>(in.data, in.size)});
  // Nsight Compute CSVs among them join the timeline the others make (gt/viewer/ncu.h).
  std::vector<std::string> warnings;
  auto model = viewer::LoadTracesWithNcu(inputs, &warnings);
  const size_t files = staged_.size();
  FreeStaged();
  if (!model.ok()) {
    Fail("Cannot merge " + std::to_string(files) + " files (" + loading_name_ +
         "): " + model.status().ToString());
    return;
  }
  index_.reset();
  InstallModel(std::move(*model), warnings);
}

double App::load_progress() const {
  if (load_state_ == LoadState::kLoading && merging_) return 0.0;  // one step: no fraction to show
  if (load_state_ == LoadState::kLoading && loader_) return loader_->progress();
  return load_state_ == LoadState::kIdle ? 0.0 : 1.0;
}

void App::StepLoad() {
  if (remote_) {  // the layout is on its way (answers arrive between frames)
    if (remote_->state() == viewer::RemoteTrace::State::kFailed)
      Fail("Cannot open " + loading_name_ + ": " + remote_->error());
    else if (remote_->state() == viewer::RemoteTrace::State::kReady)
      InstallModel(std::shared_ptr<const viewer::TraceModel>(remote_, &remote_->layout()), {});
    return;
  }
  if (merging_) {
    StepMerge();
    return;
  }
  // A frame's worth of decoding, so the page keeps drawing its progress bar and stays responsive.
  if (building_) {
    FinishLoad();
    return;
  }
  // Between two frames' Steps the browser runs the page's scripts, composites and waits for the next
  // animation frame: about a vsync interval (the page draws nothing while it loads: StepBusy), but 50-100 ms
  // when frames were drawn under a software renderer on a busy machine, where 30 ms of Steps a frame left the
  // loader a third of the wall time (bench/viewer/bench_page_load.mjs). The budget is 4x what the last frame
  // spent outside the loader, so that loading keeps about 4/5 of the wall time, and stays between 30 ms and
  // 250 ms (input and the progress bar still answer a few times a second).
  const auto start = std::chrono::steady_clock::now();
  double budget_ms = 30;
  if (load_clock_.frames > 0)
    budget_ms =
        std::clamp(4 * std::chrono::duration<double, std::milli>(start - load_clock_.last_step_end).count(),
                   30.0, 250.0);
  const auto deadline = start + std::chrono::microseconds(int64_t(budget_ms * 1e3));
  while (!loader_->done() && std::chrono::steady_clock::now() < deadline) loader_->Step();
  load_clock_.last_step_end = std::chrono::steady_clock::now();
  load_clock_.steps_s += std::chrono::duration<double>(load_clock_.last_step_end - start).count();
  ++load_clock_.frames;
  // Finish can take seconds on a large trace and blocks its frame: draw "Building the timeline" first.
  building_ = loader_->done();
}

viewer::TraceLoader::Progress App::load_detail() const {
  if (load_state_ == LoadState::kLoading && loader_) return loader_->progress_detail();
  return {};
}

void App::FinishLoad() {
  building_ = false;
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::unique_ptr<viewer::TraceModel>> model = loader_->Finish();
  load_clock_.finish_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++load_clock_.frames;
  load_clock_.phases = loader_->timings();
  loader_.reset();
  std::free(load_bytes_);
  load_bytes_ = nullptr;
  if (!model.ok()) {
    Fail("Cannot open " + loading_name_ + ": " + model.status().ToString());
    return;
  }
  index_.reset();
  InstallModel(std::move(*model), {});
  load_clock_.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - load_clock_.opened).count();
}

void App::InstallModel(std::shared_ptr<const viewer::TraceModel> model,
                       const std::vector<std::string>& warnings) {
  model_ = std::move(model);
  if (remote_)
    source_ = remote_;
  else
    source_ = std::make_shared<viewer::LocalSource>(model_.get(), index_ ? &index_->summaries() : nullptr);
  trace_name_ = loading_name_;
  load_state_ = LoadState::kLoaded;
  ResetView();
  if (!warnings.empty()) {
    // A merge that left an input out or found ranks missing still opens: say so now, the Data loss panel
    // lists each warning.
    std::string all;
    for (size_t i = 0; i < warnings.size() && i < 3; ++i) all += (i ? "; " : "") + warnings[i];
    if (warnings.size() > 3) all += "; and " + std::to_string(warnings.size() - 3) + " more";
    load_warning_ = "Merged with warnings: " + all + ". See the Data loss panel.";
    ShowPanel(Panel::kLoss);
  } else if (viewer::HasDataLoss(*model_)) {
    // A partly damaged trace: say so right away, the details are in the Data loss panel.
    std::string summary;
    int shown = 0;
    for (const viewer::LossStat& loss : viewer::LossSummary(*model_)) {
      if (loss.severity < static_cast<uint8_t>(Severity::kError)) continue;
      if (shown++ == 3) break;
      if (!summary.empty()) summary += "; ";
      summary += loss.name + " x" + std::to_string(loss.count);
      if (!loss.detail.empty()) summary += " (" + loss.detail + ")";
    }
    if (!summary.empty()) {
      load_warning_ = trace_name_ + " is incomplete: " + summary +
                      ". Showing everything that could be read; see the Data loss panel.";
      ShowPanel(Panel::kLoss);
    }
  }
  if (has_pending_view_) {
    has_pending_view_ = false;
    ApplyViewStateNow(pending_view_);
  }
}

void App::Fail(std::string message) {
  FreeStaged();
  loader_.reset();
  building_ = false;
  std::free(load_bytes_);
  load_bytes_ = nullptr;
  DropTrace();
  last_error_ = std::move(message);
  load_state_ = LoadState::kFailed;
}

void App::DropTrace() {
  source_.reset();
  model_.reset();
  index_.reset();
  remote_.reset();
  local_answers_.clear();
  trace_name_.clear();
  ResetView();
}

void App::DropRemote() {
  if (remote_) DropTrace();
}

void App::Close() {
  CompareClose(*this);
  Fail("");
  last_error_.clear();
  load_state_ = LoadState::kIdle;
}

void App::ResetView() {
  view_ = View{};
  {
    const bool regex = search_.regex, filter = search_.filter;  // toggles are the user's, not the trace's
    search_ = SearchState{};
    search_.regex = regex, search_.filter = filter;
  }
  teamui_ = TeamUiState{};
  kernels_ = KernelTableState{};
  summary_ = SummaryPanelState{};
  counters_ = CountersState{};
  pc_sampling_ = PcSamplingState{};
  if (!model_) return;
  view_.group_collapsed.assign(model_->groups.size(), 0);
  view_.track_collapsed.resize(model_->tracks.size());
  for (size_t i = 0; i < model_->tracks.size(); ++i)
    view_.track_collapsed[i] = model_->tracks[i].default_collapsed;
  view_.layout.lane_y.assign(model_->lanes.size(), -1.0f);
  // The first view opens on the work, not on seconds of start-up before it ("Fit all" shows everything).
  const viewer::TimeRange work = viewer::WorkRange(*model_);
  if (work.last_ns > work.first_ns)
    FitRange(static_cast<double>(work.first_ns), static_cast<double>(work.last_ns), 0.02);
  else
    FitAll();
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Navigation
// ---------------------------------------------------------------------------------------------------------------

void App::SetVisibleRange(double t0, double t1) {
  if (!(t1 > t0) || !std::isfinite(t0) || !std::isfinite(t1)) return;
  double span = t1 - t0;
  double lo = 0, hi = 1;
  if (model_) lo = static_cast<double>(model_->first_ns), hi = static_cast<double>(model_->last_ns);
  if (compare_.computed && compare_.model) {  // B's tracks, shifted onto A's axis, are on the screen too
    lo = std::min(lo, static_cast<double>(compare_.model->first_ns) + compare_.offset());
    hi = std::max(hi, static_cast<double>(compare_.model->last_ns) + compare_.offset());
  }
  const double trace_span = std::max(hi - lo, 1000.0);
  const double max_span = trace_span * 4.0;
  if (span < kMinSpanNs) {
    const double mid = (t0 + t1) / 2;
    t0 = mid - kMinSpanNs / 2, t1 = mid + kMinSpanNs / 2, span = kMinSpanNs;
  }
  if (span > max_span) {
    const double mid = (t0 + t1) / 2;
    t0 = mid - max_span / 2, t1 = mid + max_span / 2, span = max_span;
  }
  // Keep some of the trace on screen: panning stops half a view beyond either end.
  const double min_t0 = lo - span / 2, max_t0 = hi - span / 2;
  if (t0 < min_t0) t0 = min_t0;
  if (t0 > max_t0) t0 = max_t0;
  view_.t0 = t0;
  view_.t1 = t0 + span;
}

void App::FitAll() {
  if (!model_ || model_->last_ns <= model_->first_ns) {
    view_.t0 = model_ ? static_cast<double>(model_->first_ns) - 500 : 0;
    view_.t1 = view_.t0 + 1000;
    return;
  }
  double lo = static_cast<double>(model_->first_ns), hi = static_cast<double>(model_->last_ns);
  if (compare_.computed && compare_.model) {  // both traces, B where the alignment puts it
    lo = std::min(lo, static_cast<double>(compare_.model->first_ns) + compare_.offset());
    hi = std::max(hi, static_cast<double>(compare_.model->last_ns) + compare_.offset());
  }
  FitRange(lo, hi, 0.02);
}

void App::FitRange(double t0, double t1, double margin) {
  double span = std::max(t1 - t0, kMinSpanNs);
  SetVisibleRange(t0 - span * margin, t0 + span * (1 + margin));
}

void App::ZoomAround(double anchor_t, double factor) {
  SetVisibleRange(anchor_t - (anchor_t - view_.t0) * factor, anchor_t + (view_.t1 - anchor_t) * factor);
}

void App::Select(viewer::EventId e, bool reveal) {
  view_.selected = e;
  if (compare_.computed) CompareOnSelectA(*this);
  if (e.valid()) {
    if (panel_ != Panel::kDetails && panel_ != Panel::kSearch) ShowPanel(Panel::kDetails);
    if (reveal) RevealEvent(e);
  }
}

void App::RevealEvent(viewer::EventId e) {
  if (!model_ || !source_ || !e.valid() || e.lane >= model_->lanes.size()) return;
  const viewer::Lane& lane = model_->lanes[e.lane];
  const viewer::Track& track = model_->tracks[lane.track];
  if (track.group < view_.group_collapsed.size()) view_.group_collapsed[track.group] = 0;
  if (lane.depth > 0 && lane.track < view_.track_collapsed.size()) view_.track_collapsed[lane.track] = 0;
  const viewer::EventInfo* info = source_->Event(e);
  if (!info) {  // a remote event: where it is comes with its details (Frame retries)
    reveal_pending_ = e;
    return;
  }
  reveal_pending_ = {};
  if (!info->found) return;
  const double s = static_cast<double>(info->start), end = static_cast<double>(info->end);
  const double span = view_.t1 - view_.t0;
  const double px = std::max(1.0f, view_.layout.plot_max.x - view_.layout.plot_min.x);
  if (end - s > span * 0.8)
    FitRange(s, end, 0.1);
  else if ((end - s) / span * px < 2)  // a sub-pixel event: zoom until it is ~5% of the view
    SetVisibleRange((s + end) / 2 - std::max(end - s, 50.0) * 10,
                    (s + end) / 2 + std::max(end - s, 50.0) * 10);
  else if (s < view_.t0 || end > view_.t1)
    SetVisibleRange((s + end) / 2 - span / 2, (s + end) / 2 + span / 2);
  view_.reveal_lane = e.lane;
}

bool App::IsGroupCollapsed(viewer::GroupId g) const {
  return g < view_.group_collapsed.size() && view_.group_collapsed[g];
}
bool App::IsTrackCollapsed(viewer::TrackId t) const {
  return t < view_.track_collapsed.size() && view_.track_collapsed[t];
}
void App::SetGroupCollapsed(viewer::GroupId g, bool collapsed) {
  if (g < view_.group_collapsed.size()) view_.group_collapsed[g] = collapsed;
}
void App::SetTrackCollapsed(viewer::TrackId t, bool collapsed) {
  if (t < view_.track_collapsed.size()) view_.track_collapsed[t] = collapsed;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Search
// ---------------------------------------------------------------------------------------------------------------

// The filter follows the search it was built from (ui: hides what does not match when the toggle is on). A
// remote trace's tracks with a match are the server's answer (its events on them are drawn from tiles,
// matching items only).
static void RebuildFilter(const viewer::TraceModel& m, SearchState& s,
                          const viewer::RemoteTrace* remote = nullptr) {
  if (!s.filter || s.search.empty())
    s.track_filter = viewer::TrackFilter{};
  else if (!remote)
    s.track_filter = viewer::BuildTrackFilter(m, s.search);
  else if (remote->search().tracks_known && s.remote_applied)
    s.track_filter = viewer::TrackFilterOf(m, remote->search().tracks);
  else
    s.track_filter = viewer::TrackFilter{};  // not known (yet): everything shows
}

// A remote trace's search is the server's (what=search): its counts and matching names arrive later, and
// become the Search the timeline highlights with; a step's match is selected when it arrives.
void App::TakeRemoteSearch() {
  const viewer::RemoteSearch& rs = remote_->search();
  if (rs.ready && !rs.text.empty() && rs.text == search_.text && rs.regex == search_.regex &&
      !search_.remote_applied) {
    search_.remote_applied = true;
    if (!rs.error.empty()) {
      search_.error = rs.error, search_.error_text = rs.text;
      search_.search = viewer::Search();
    } else {
      search_.search = viewer::Search::FromMatches(rs.text, rs.regex, rs.ids, rs.count, rs.names);
    }
    RebuildFilter(*model_, search_, remote_.get());
  }
  if (const viewer::EventId hit = remote_->TakeSearchHit(); hit.valid()) {
    search_.current = hit;
    Select(hit, true);
  }
}

uint64_t App::SetSearch(std::string_view text) {
  if (text.size() >= sizeof search_.text) text = text.substr(0, sizeof search_.text - 1);
  if (text != search_.text) {
    std::memcpy(search_.text, text.data(), text.size());
    search_.text[text.size()] = 0;
  }
  if (!model_) return 0;
  if (remote_) {
    if (text != remote_->search().text || search_.regex != remote_->search().regex) {
      remote_->SetSearch(text, search_.regex);
      search_.search = viewer::Search();
      search_.track_filter = viewer::TrackFilter{};  // until the server's answer names the tracks
      search_.remote_applied = false;
      search_.current = {};
      search_.error.clear();
    }
    return search_.search.match_count();  // 0 until the server's answer is in (TakeRemoteSearch)
  }
  // An exact-name highlight stays while the box shows its name (a long kernel name may show truncated).
  const std::string& needle = search_.search.needle();
  const bool shown_exact = search_.search.exact() && needle.compare(0, text.size(), text) == 0 &&
                           (text.size() == needle.size() || text.size() == sizeof search_.text - 1);
  const bool same_failure = !search_.error.empty() && search_.error_text == text;
  if ((needle != text || search_.search.regex() != search_.regex) && !shown_exact && !same_failure) {
    search_.error.clear();
    if (text.empty()) {
      search_.search = viewer::Search();
    } else if (search_.regex) {
      auto r = viewer::Search::MatchRegex(*model_, text);
      search_.search = r.ok() ? std::move(*r) : viewer::Search();
      if (!r.ok()) search_.error = r.status().message(), search_.error_text = std::string(text);
    } else {
      search_.search = viewer::Search(*model_, text);
    }
    search_.current = {};
    RebuildFilter(*model_, search_);
  }
  return search_.search.match_count();
}

void App::SetSearchMode(bool regex, bool filter) {
  const bool regex_changed = regex != search_.regex;
  search_.regex = regex;
  search_.filter = filter;
  if (!model_) return;
  if (remote_) {
    SetSearch(std::string(search_.text));  // re-asks when the regex mode changed
    RebuildFilter(*model_, search_, remote_.get());
    return;
  }
  if (regex_changed) {
    search_.search = viewer::Search();
    search_.error.clear();
    search_.error_text.clear();
    const std::string text = search_.text;
    search_.text[0] = 0;
    SetSearch(text);  // re-runs, and rebuilds the filter
  } else {
    RebuildFilter(*model_, search_);
  }
}

uint64_t App::HighlightName(StringId name) {
  if (!model_) return 0;
  // A remote trace: the server's search for the name's text (a substring match: a kernel's full name is
  // rarely part of another's); the count arrives with its answer.
  if (remote_) return SetSearch(source_->Str(name));
  const std::string& text = model_->Str(name);
  const size_t n = std::min(text.size(), sizeof search_.text - 1);
  std::memcpy(search_.text, text.data(), n);
  search_.text[n] = 0;
  search_.search = viewer::Search::ExactName(*model_, name);
  search_.current = {};
  search_.error.clear();
  RebuildFilter(*model_, search_);
  return search_.search.match_count();
}

uint64_t App::ZoomToKernel(const viewer::KernelSummaryRow& row) {
  FitRange(static_cast<double>(row.first_ns), static_cast<double>(row.last_ns), 0.03);
  return HighlightName(row.name);
}

viewer::EventId App::SearchStep(bool forward) {
  if (!model_ || search_.search.empty()) return {};
  const viewer::EventId from = search_.current.valid() ? search_.current : view_.selected;
  if (remote_) {
    // The server steps from the event where it starts; without one (or its details not in yet) from the
    // visible range's start (end, backward). The match is selected when it arrives (TakeRemoteSearch).
    const viewer::EventInfo* info = from.valid() ? source_->Event(from) : nullptr;
    if (info && info->found)
      remote_->SearchStep(forward, from, info->start);
    else
      remote_->SearchStep(forward, {}, static_cast<int64_t>(forward ? view_.t0 : view_.t1));
    return {};
  }
  const viewer::EventId next =
      forward ? search_.search.Next(*model_, from) : search_.search.Prev(*model_, from);
  if (next.valid()) {
    search_.current = next;
    Select(next, true);
  }
  return next;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] View state (share links)
// ---------------------------------------------------------------------------------------------------------------

viewer::ViewState App::CurrentViewState() const {
  viewer::ViewState vs;
  if (!model_) return vs;
  vs.t0 = static_cast<int64_t>(std::floor(view_.t0));
  vs.t1 = static_cast<int64_t>(std::ceil(view_.t1));
  if (vs.t1 <= vs.t0) vs.t1 = vs.t0 + 1;
  for (size_t g = 0; g < model_->groups.size(); ++g)
    if (IsGroupCollapsed(static_cast<viewer::GroupId>(g))) vs.collapsed.push_back(model_->groups[g].key);
  for (size_t t = 0; t < model_->tracks.size(); ++t) {
    const bool collapsed = IsTrackCollapsed(static_cast<viewer::TrackId>(t));
    if (collapsed == model_->tracks[t].default_collapsed) continue;
    (collapsed ? vs.collapsed : vs.expanded).push_back(model_->tracks[t].key);
  }
  if (view_.selected.valid() && source_) vs.selected = source_->EventKey(view_.selected);
  vs.panel = PanelName(panel_);
  vs.search = search_.text;
  if (compare_.active()) {
    vs.compared = true;
    vs.compare_align = CompareAlignSpec(compare_);
    if (compare_.b_selected.valid()) vs.compare_selected = compare_.model->EventKey(compare_.b_selected);
  }
  vs.notes = teamui_.notes;
  return vs;
}

bool App::ApplyViewState(std::string_view text, std::string* error) {
  StatusOr<viewer::ViewState> vs = viewer::ViewState::Parse(text);
  if (!vs.ok()) {
    if (error) *error = vs.status().ToString();
    return false;
  }
  if (load_state_ == LoadState::kLoaded && model_) {
    ApplyViewStateNow(*vs);
  } else {
    pending_view_ = std::move(*vs);
    has_pending_view_ = true;
  }
  return true;
}

void App::ApplyViewStateNow(const viewer::ViewState& vs) {
  if (vs.compared) {  // B may still be loading: its selection applies once the comparison is computed
    compare_.pending_selected = vs.compare_selected;
    compare_.has_pending_view = !vs.compare_selected.empty();
    CompareSetAlign(*this, vs.compare_align, nullptr);
    compare_.show_panel_when_computed = PanelFromName(vs.panel) == Panel::kCompare && !compare_.computed;
  }
  for (const std::string& key : vs.collapsed) {
    for (size_t g = 0; g < model_->groups.size(); ++g)
      if (model_->groups[g].key == key) SetGroupCollapsed(static_cast<viewer::GroupId>(g), true);
    const viewer::TrackId t = model_->FindTrackByKey(key);
    if (t != kNone) SetTrackCollapsed(t, true);
  }
  for (const std::string& key : vs.expanded) {
    for (size_t g = 0; g < model_->groups.size(); ++g)
      if (model_->groups[g].key == key) SetGroupCollapsed(static_cast<viewer::GroupId>(g), false);
    const viewer::TrackId t = model_->FindTrackByKey(key);
    if (t != kNone) SetTrackCollapsed(t, false);
  }
  if (!vs.search.empty()) SetSearch(vs.search);  // remote: asked of the server
  teamui_.notes = vs.notes;
  if (!vs.selected.empty() && source_) {
    const viewer::EventId e = source_->FindEventByKey(vs.selected);
    if (e.valid()) Select(e, false), view_.reveal_lane = e.lane;
  }
  const Panel p = PanelFromName(vs.panel);
  if (p != Panel::kNone) ShowPanel(p);
  if (vs.t1 > vs.t0) SetVisibleRange(static_cast<double>(vs.t0), static_cast<double>(vs.t1));
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Frame: layout, menu bar, keys
// ---------------------------------------------------------------------------------------------------------------

namespace {

#ifdef __EMSCRIPTEN__
// The page's JS glue (web/app.js) owns the file input and the share link.
void OpenFileDialog() {
  EM_ASM({
    if (window.gtOpenFileDialog) window.gtOpenFileDialog();
  });
}
void CompareFileDialog() {
  EM_ASM({
    if (window.gtOpenCompareDialog) window.gtOpenCompareDialog();
  });
}
void ShareLink() {
  EM_ASM({
    if (window.gtShare) window.gtShare();
  });
}
#endif

}  // namespace

void DownloadRemoteTrace() {
#ifdef __EMSCRIPTEN__
  EM_ASM({
    if (window.gtDownloadRemote) window.gtDownloadRemote();
  });
#endif
}

namespace {

constexpr ImGuiWindowFlags kPaneFlags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                        ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                        ImGuiWindowFlags_NoBringToFrontOnFocus;

}  // namespace

void App::DrawMenuBar(float* height) {
  *height = 0;
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
#ifdef __EMSCRIPTEN__
    if (ImGui::MenuItem("Open trace...", "Ctrl+O")) OpenFileDialog();
#else
    ImGui::MenuItem("Open: drop a file on the window", nullptr, false, false);
#endif
#ifdef __EMSCRIPTEN__
    if (ImGui::MenuItem("Compare with...", nullptr, false, model_ != nullptr)) CompareFileDialog();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("Open a second trace under this one, aligned (or drop it with Shift held)");
#else
    ImGui::MenuItem("Compare: gtrace-ui A --compare B", nullptr, false, false);
#endif
    if (ImGui::MenuItem("Stop comparing", nullptr, false, compare_.active())) CompareClose(*this);
    if (ImGui::MenuItem("Close", nullptr, false, model_ != nullptr)) Close();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    if (ImGui::MenuItem("Fit all", "F / 0", false, model_ != nullptr)) FitAll();
    if (ImGui::MenuItem("Clear selection", "Esc", false, view_.selected.valid())) Select({}, false);
    ImGui::Separator();
    if (ImGui::MenuItem("Expand all groups", nullptr, false, model_ != nullptr))
      std::fill(view_.group_collapsed.begin(), view_.group_collapsed.end(), 0);
    if (ImGui::MenuItem("Collapse all groups", nullptr, false, model_ != nullptr))
      std::fill(view_.group_collapsed.begin(), view_.group_collapsed.end(), 1);
    ImGui::Separator();
    if (ImGui::MenuItem("Details", nullptr, panel_ == Panel::kDetails)) ShowPanel(Panel::kDetails);
    if (ImGui::MenuItem("Kernels", nullptr, panel_ == Panel::kKernels)) ShowPanel(Panel::kKernels);
    if (ImGui::MenuItem("Summary", nullptr, panel_ == Panel::kSummary)) ShowPanel(Panel::kSummary);
    if (ImGui::MenuItem("Flame graph", nullptr, panel_ == Panel::kFlame)) ShowPanel(Panel::kFlame);
    if (ImGui::MenuItem("Search results", nullptr, panel_ == Panel::kSearch)) ShowPanel(Panel::kSearch);
    if (ImGui::MenuItem("Data loss", nullptr, panel_ == Panel::kLoss)) ShowPanel(Panel::kLoss);
    if (ImGui::MenuItem("Roofline", nullptr, panel_ == Panel::kRoofline)) ShowPanel(Panel::kRoofline);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Keyboard and mouse", "?")) show_help_ = true;
    if (ImGui::MenuItem("Dear ImGui demo", nullptr, show_demo_)) show_demo_ = !show_demo_;
    ImGui::EndMenu();
  }
  // Share: the page builds the link (web/app.js: gtShare) from the trace's URL/id and this view's state.
#ifdef __EMSCRIPTEN__
  if (ImGui::MenuItem("Share", nullptr, false, model_ != nullptr)) ShareLink();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Copy a link to this trace at this view");
#endif
  if (model_) {
    ImGui::Separator();
    ImGui::TextDisabled("%s", trace_name_.c_str());
    if (compare_.active()) ImGui::TextDisabled("vs %s", compare_.name.c_str());
    if (remote_)
      ImGui::TextDisabled("%s events, on the server", FormatCount(model_->event_count).c_str());
    else
      ImGui::TextDisabled("%s events  %s", FormatCount(model_->event_count).c_str(),
                          viewer::SourceFormatName(model_->format));
    if (DrawLossBadge(*this)) ShowPanel(Panel::kLoss);
  } else if (load_state_ == LoadState::kLoading) {
    if (merging_)
      ImGui::TextDisabled("Merging %s...", loading_name_.c_str());
    else
      ImGui::TextDisabled("Loading %s... %.0f%%", loading_name_.c_str(), load_progress() * 100);
  }
  *height = ImGui::GetWindowSize().y;
  ImGui::EndMainMenuBar();
}

void App::DrawWelcome(const ImVec2& pos, const ImVec2& size) {
  ImGui::SetNextWindowPos(pos);
  ImGui::SetNextWindowSize(size);
  ImGui::Begin("##welcome", nullptr, kPaneFlags | ImGuiWindowFlags_NoTitleBar);
  const float w = 600;
  ImGui::SetCursorPos(ImVec2(std::max(20.0f, (size.x - w) / 2), std::max(20.0f, size.y * 0.25f)));
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + w);
  ImGui::TextUnformatted("gtrace: the CUDA timeline in your browser");
  ImGui::Spacing();
  ImGui::TextDisabled("Drop a trace anywhere on this page, or open one.");
  // Two lines rather than one that wraps a lone ".gz" onto its own line.
  ImGui::TextDisabled("Formats: .gtrace (gcollect), Chrome trace JSON, PyTorch profiler (Kineto) JSON,");
  ImGui::TextDisabled("Nsight Compute CSV (ncu --csv --page raw), plain or gzipped (.gz),");
  ImGui::TextDisabled("and Nsight Systems SQLite exports (.sqlite).");
  ImGui::Spacing();
#ifdef __EMSCRIPTEN__
  if (ImGui::Button("Open trace...", ImVec2(160, 0))) OpenFileDialog();
  ImGui::SameLine();
  ImGui::TextDisabled("or link one: ?url=<trace URL>");
#endif
  if (load_state_ == LoadState::kFailed && !last_error_.empty()) {
    ImGui::Spacing();
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 120, 120, 255));
    ImGui::TextWrapped("%s", last_error_.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
  ImGui::End();
}

void App::DrawLoading(const ImVec2& pos, const ImVec2& size) {
  ImGui::SetNextWindowPos(pos);
  ImGui::SetNextWindowSize(size);
  ImGui::Begin("##loading", nullptr, kPaneFlags | ImGuiWindowFlags_NoTitleBar);
  const float w = 420;
  ImGui::SetCursorPos(ImVec2(std::max(20.0f, (size.x - w) / 2), size.y * 0.35f));
  ImGui::BeginGroup();
  if (remote_) {
    ImGui::Text("Opening %s on the server", loading_name_.c_str());
    ImGui::TextDisabled(
        "The trace stays there: the view asks for what it shows (its index may be building).");
    ImGui::ProgressBar(float(std::fmod(ImGui::GetTime() * 0.5, 1.0)), ImVec2(w, 0), "waiting");
  } else if (merging_) {
    ImGui::Text("Merging %zu files (%s)", staged_.size(), FormatBytes(load_size_).c_str());
    ImGui::TextDisabled("%s", loading_name_.c_str());
    ImGui::TextDisabled("Placing hosts on one clock by wall clock and NCCL collectives...");
    // No fraction to show (one step): a bar that moves says the page is alive.
    ImGui::ProgressBar(float(std::fmod(ImGui::GetTime() * 0.5, 1.0)), ImVec2(w, 0), "merging");
  } else {
    const viewer::TraceLoader::Progress p = load_detail();
    ImGui::Text("Loading %s (%s)", loading_name_.c_str(), FormatBytes(load_size_).c_str());
    if (building_) {
      ImGui::TextDisabled("Read %s records. Building the timeline: lanes, levels of detail, summaries...",
                          FormatCount(p.records).c_str());
      ImGui::ProgressBar(float(std::fmod(ImGui::GetTime() * 0.5, 1.0)), ImVec2(w, 0), "building");
    } else {
      ImGui::TextDisabled("%s of %s read, %s records", FormatBytes(p.bytes_read).c_str(),
                          FormatBytes(p.bytes_total).c_str(), FormatCount(p.records).c_str());
      ImGui::ProgressBar(static_cast<float>(load_progress()), ImVec2(w, 0));
    }
  }
  ImGui::EndGroup();
  ImGui::End();
}

void App::HandleGlobalKeys() {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  if (ImGui::IsKeyPressed(ImGuiKey_Slash) && io.KeyShift) show_help_ = !show_help_;
  if (!model_) return;
  if (io.KeyCtrl && ImGui::IsKeyPressed(ImGuiKey_F)) {
    search_.focus_request = true;
    return;
  }
  if (io.KeyCtrl || io.KeySuper) return;
  // WASD like chrome://tracing and Perfetto: W/S zoom around the mouse (or the centre), A/D pan.
  const double span = view_.t1 - view_.t0;
  const ImVec2 mouse = io.MousePos;
  const TimelineLayout& lay = view_.layout;
  const bool mouse_in_plot = mouse.x >= lay.plot_min.x && mouse.x < lay.plot_max.x &&
                             mouse.y >= lay.plot_min.y && mouse.y < lay.plot_max.y;
  const double anchor = mouse_in_plot ? view_.t0 + (mouse.x - lay.plot_min.x) /
                                                       std::max(1.0f, lay.plot_max.x - lay.plot_min.x) * span
                                      : (view_.t0 + view_.t1) / 2;
  const double dt = std::clamp(static_cast<double>(io.DeltaTime), 0.001, 0.1);
  if (ImGui::IsKeyDown(ImGuiKey_W)) ZoomAround(anchor, std::pow(0.1, dt));  // 10x per second held
  if (ImGui::IsKeyDown(ImGuiKey_S)) ZoomAround(anchor, std::pow(10.0, dt));
  if (ImGui::IsKeyDown(ImGuiKey_A)) SetVisibleRange(view_.t0 - span * dt, view_.t1 - span * dt);
  if (ImGui::IsKeyDown(ImGuiKey_D)) SetVisibleRange(view_.t0 + span * dt, view_.t1 + span * dt);
  if (ImGui::IsKeyPressed(ImGuiKey_0) || ImGui::IsKeyPressed(ImGuiKey_Home)) FitAll();
  if (ImGui::IsKeyPressed(ImGuiKey_F, false)) {
    if (const viewer::EventInfo* info =
            view_.selected.valid() && source_ ? source_->Event(view_.selected) : nullptr;
        info && info->found)
      FitRange(static_cast<double>(info->start), static_cast<double>(info->end), 0.15);
    else
      FitAll();
  }
  if (ImGui::IsKeyPressed(ImGuiKey_M, false) && view_.measure.active)
    FitRange(std::min(view_.measure.start, view_.measure.end),
             std::max(view_.measure.start, view_.measure.end), 0.02);
  if (ImGui::IsKeyPressed(ImGuiKey_Escape)) {
    if (view_.measure.active) {
      view_.measure = Measurement{};
    } else {
      Select({}, false);
      if (compare_.active()) CompareSelectB(*this, {}, false);
    }
  }
  if (ImGui::IsKeyPressed(ImGuiKey_N)) SearchStep(!io.KeyShift);
}

bool App::StepBusy() {
  if (load_state_ != LoadState::kLoading || remote_) return false;
  StepLoad();
  return true;
}

bool App::WantsFrames() const {
  if (load_state_ == LoadState::kLoading || compare_.loader) return true;
  if (remote_ && remote_->busy()) return true;
  if (reveal_pending_.valid()) return true;
  if (!ImGui::GetCurrentContext()) return false;
  // WASD move the view every frame while held (key repeat may be off); a held button may be a drag.
  for (const ImGuiKey k : {ImGuiKey_W, ImGuiKey_A, ImGuiKey_S, ImGuiKey_D})
    if (ImGui::IsKeyDown(k)) return true;
  return ImGui::IsAnyMouseDown();
}

void App::Frame() {
  const auto frame_start = std::chrono::steady_clock::now();
  struct Timer {
    const std::chrono::steady_clock::time_point& start;
    double* out;
    ~Timer() {
      *out = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
  } timer{frame_start, &last_frame_ms_};
  ++frame_count_;
  if (remote_) {
    for (LocalAnswer& a : std::exchange(local_answers_, {})) remote_->OnAnswer(a.request, a.status, a.body);
    remote_->Tick();  // what waits for its retry (an index still being built)
    TakeRemoteSearch();
  }
  if (load_state_ == LoadState::kLoading) StepLoad();
  if (reveal_pending_.valid() && source_ && source_->Event(reveal_pending_)) RevealEvent(reveal_pending_);
  CompareStep(*this);

  const ImGuiViewport* vp = ImGui::GetMainViewport();
  float menu_h = 0;
  DrawMenuBar(&menu_h);
  const ImVec2 origin(vp->Pos.x, vp->Pos.y + menu_h);
  const ImVec2 avail(vp->Size.x, vp->Size.y - menu_h);

  if (!model_) {
    if (load_state_ == LoadState::kLoading)
      DrawLoading(origin, avail);
    else
      DrawWelcome(origin, avail);
  } else {
    HandleGlobalKeys();
    // Perfetto's layout: toolbar (search, range), the timeline, and a tabbed details area below.
    const float toolbar_h = ImGui::GetFrameHeight() + 2 * ImGui::GetStyle().WindowPadding.y;
    if (bottom_height_ <= 0) bottom_height_ = std::max(200.0f, avail.y * 0.32f);
    bottom_height_ = std::clamp(bottom_height_, 80.0f, std::max(80.0f, avail.y - toolbar_h - 120.0f));
    const float timeline_h = avail.y - toolbar_h - bottom_height_;

    ImGui::SetNextWindowPos(origin);
    ImGui::SetNextWindowSize(ImVec2(avail.x, toolbar_h));
    ImGui::Begin("##toolbar", nullptr,
                 kPaneFlags | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar);
    DrawSearchBar(*this);
    ImGui::End();

    DrawTimeline(*this, ImVec2(origin.x, origin.y + toolbar_h), ImVec2(avail.x, timeline_h));

    // Splitter between the timeline and the bottom panel.
    const float split_y = origin.y + toolbar_h + timeline_h;
    ImGui::SetNextWindowPos(ImVec2(origin.x, split_y));
    ImGui::SetNextWindowSize(ImVec2(avail.x, bottom_height_));
    ImGui::Begin("##bottom", nullptr, kPaneFlags | ImGuiWindowFlags_NoTitleBar);
    ImGui::SetCursorScreenPos(ImVec2(origin.x, split_y));
    ImGui::InvisibleButton("##split", ImVec2(avail.x, 5));
    if (ImGui::IsItemHovered() || ImGui::IsItemActive()) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeNS);
    if (ImGui::IsItemActive()) bottom_height_ -= ImGui::GetIO().MouseDelta.y;
    flame_.drawn = false;  // set again if its tab draws this frame
    if (ImGui::BeginTabBar("##panels")) {
      struct Tab {
        Panel panel;
        const char* label;
        void (*draw)(App&);
      };
      static constexpr Tab kTabs[] = {{Panel::kDetails, "Details", DrawDetailsPanel},
                                      {Panel::kKernels, "Kernels", DrawKernelTable},
                                      {Panel::kSummary, "Summary", DrawSummaryPanel},
                                      {Panel::kFlame, "Flame graph", DrawFlamePanel},
                                      {Panel::kSearch, "Search results", DrawSearchResults},
                                      {Panel::kLoss, "Data loss", DrawLossPanel},
                                      {Panel::kRoofline, "Roofline", DrawRooflineTab},
                                      {Panel::kCompare, "Compare", DrawComparePanel},
                                      {Panel::kNotes, "Notes", DrawNotesPanel}};
      for (const Tab& tab : kTabs) {
        if (tab.panel == Panel::kCompare && !compare_.active() && !compare_.loading() &&
            compare_.error.empty())
          continue;  // a tab of its own only while comparing (or to say why a comparison failed)
        const ImGuiTabItemFlags flags =
            panel_requested_ && panel_ == tab.panel ? ImGuiTabItemFlags_SetSelected : 0;
        if (ImGui::BeginTabItem(tab.label, nullptr, flags)) {
          if (!panel_requested_) panel_ = tab.panel;
          ImGui::BeginChild("##panel");
          // Panels that scan events need them in memory; on a remote trace they offer the download.
          if (remote_ && tab.panel != Panel::kDetails && tab.panel != Panel::kKernels &&
              tab.panel != Panel::kSummary && tab.panel != Panel::kRoofline && tab.panel != Panel::kSearch)
            DrawRemoteFallback(*this, tab.label);
          else
            tab.draw(*this);
          ImGui::EndChild();
          ImGui::EndTabItem();
        }
      }
      panel_requested_ = false;
      ImGui::EndTabBar();
    }
    ImGui::End();
  }

  if (show_help_) {
    ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + vp->Size.x / 2, vp->Pos.y + vp->Size.y / 3),
                            ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    if (ImGui::Begin("Keyboard and mouse", &show_help_, ImGuiWindowFlags_AlwaysAutoResize)) {
      static constexpr const char* kHelp[][2] = {
          {"W / S", "zoom in / out around the mouse"},
          {"A / D", "pan left / right"},
          {"Mouse wheel", "zoom around the mouse"},
          {"Drag", "pan (and scroll the tracks)"},
          {"Shift + drag", "measure a time range (M zooms to it)"},
          {"Click", "select an event; details below"},
          {"F", "fit the selection, or everything"},
          {"0 / Home", "fit everything"},
          {"Ctrl+F", "search; Enter / Shift+Enter or N / Shift+N: next / previous match"},
          {"Esc", "clear measurement, then selection"},
          {"Ctrl+O", "open a trace (or drop one on the page)"},
          {"Shift + drop", "compare the open trace with the dropped one (drawn under it, aligned)"},
      };
      if (ImGui::BeginTable("##help", 2, ImGuiTableFlags_RowBg)) {
        for (const auto& row : kHelp) {
          ImGui::TableNextRow();
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(row[0]);
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(row[1]);
        }
        ImGui::EndTable();
      }
    }
    ImGui::End();
  }
  if (model_) DrawTeamUiWindows(*this);
  if (show_demo_) ImGui::ShowDemoWindow(&show_demo_);
}

}  // namespace gt::ui
