// The team features through the real App, headless (ImGui without a renderer, as ui_smoke): a note survives
// the share link's view state into a fresh App and jumps; the regex filter hides tracks in the laid-out
// timeline; the histogram marks the selected instance and a bin click selects in it; every table's CSV
// button writes its file. The windows are drawn with all of it on (ASan in the asan preset).
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "gt/viewer/query.h"
#include "headless_ui.h"
#include "imgui.h"
#include "ui/app.h"
#include "ui/teamui.h"

using namespace gt;

namespace {

using Headless = test::HeadlessUi;

void Frames(ui::App& app, int n) {
  test::UiFrames(app, n);
}

void Load(ui::App& app, const std::string& path) {
  ui::SetGlobalApp(&app);
  app.OpenFile(path);
  for (int i = 0; i < 10000 && app.load_state() == ui::LoadState::kLoading; ++i) Frames(app, 1);
  REQUIRE(app.load_state() == ui::LoadState::kLoaded);
  Frames(app, 2);
}

const std::string kTrace = std::string(GT_TESTS_DATA) + "/h200_streams.gtrace";

}  // namespace

TEST_CASE("a note survives the share link into a fresh viewer and jumps to its event", "[teamui]") {
  Headless h;
  std::string link;
  viewer::EventId target;
  {
    ui::App app;
    Load(app, kTrace);
    const viewer::TraceModel& m = *app.model();
    auto rows = viewer::KernelSummary(m);
    REQUIRE(!rows.empty());
    target = viewer::KernelInstances(m, rows[0].name).back();
    ui::BeginNoteOnEvent(app, target);  // what "Add note to ..." in the context menu does
    Frames(app, 2);                     // the editor is drawn
    viewer::Note n = app.teamui().editor.draft;
    n.text = "this one waits for the copy <b>not bold</b>";
    REQUIRE(ui::AddNote(app, n).ok());
    REQUIRE(ui::AddNote(app, {m.first_ns, m.first_ns + 1000, "", "the first microsecond"}).ok());
    viewer::Note too_long{0, 1, "", std::string(viewer::kMaxNoteBytes + 1, 'x')};
    CHECK_FALSE(ui::AddNote(app, too_long).ok());
    CHECK(app.teamui().notes.size() == 2);
    app.ShowPanel(ui::Panel::kNotes);
    Frames(app, 3);
    link = app.CurrentViewState().Serialize();
  }
  ui::App fresh;
  Load(fresh, kTrace);
  std::string err;
  REQUIRE(fresh.ApplyViewState(link, &err));
  REQUIRE(fresh.teamui().notes.size() == 2);
  CHECK(fresh.teamui().notes[0].text == "this one waits for the copy <b>not bold</b>");
  fresh.Select({}, false);
  REQUIRE(ui::JumpToNote(fresh, 0));
  Frames(fresh, 3);
  CHECK(fresh.view().selected == target);
  const double mid = (fresh.view().t0 + fresh.view().t1) / 2;
  const double ev_mid = (fresh.model()->Start(target) + fresh.model()->End(target)) / 2.0;
  CHECK(std::abs(mid - ev_mid) < (fresh.view().t1 - fresh.view().t0) * 0.01);  // centred
  CHECK(fresh.panel() == ui::Panel::kNotes);
  REQUIRE(ui::JumpToNote(fresh, 1));
  CHECK_FALSE(ui::JumpToNote(fresh, 2));
}

TEST_CASE("the regex filter hides the tracks without a match from the timeline", "[teamui]") {
  Headless h;
  ui::App app;
  Load(app, kTrace);
  const viewer::TraceModel& m = *app.model();
  const size_t all = m.tracks.size();
  app.SetSearchMode(true, true);
  app.SetSearch("^Memcpy");
  Frames(app, 2);
  const ui::SearchState& s = app.search();
  REQUIRE(s.error.empty());
  REQUIRE(s.track_filter.active);
  CHECK(s.track_filter.visible_tracks > 0);
  CHECK(s.track_filter.visible_tracks < all);
  // Laid out: only tracks the filter keeps have lanes on screen.
  for (viewer::TrackId t = 0; t < m.tracks.size(); ++t) {
    const viewer::Track& tr = m.tracks[t];
    if (tr.lane_count == 0) continue;
    INFO(tr.name);
    if (!s.track_filter.ShowsTrack(t)) CHECK(app.view().layout.lane_y[tr.first_lane] < 0);
  }
  app.SetSearch("(");  // a bad pattern: a message, no search, no crash
  Frames(app, 2);
  CHECK(app.search().error.find("regex: ") == 0);
  CHECK(app.search().search.empty());
  app.SetSearch("");
  Frames(app, 2);
  CHECK_FALSE(app.search().track_filter.active);  // cleared: everything back
}

TEST_CASE("the histogram marks the selected instance, a bin click selects in it, CSV buttons write",
          "[teamui]") {
  Headless h;
  ui::App app;
  Load(app, kTrace);
  const viewer::TraceModel& m = *app.model();
  auto rows = viewer::KernelSummary(m);
  ui::OpenHistogram(app, rows[0].name);
  Frames(app, 3);
  const ui::HistogramState& hs = app.teamui().histogram;
  REQUIRE(hs.open);
  REQUIRE(hs.hist.total == rows[0].count);
  int bin = -1;
  for (size_t i = 0; i < hs.hist.bins.size(); ++i)
    if (hs.hist.bins[i].count) bin = static_cast<int>(i);
  REQUIRE(ui::SelectHistogramBin(app, bin));
  Frames(app, 2);
  const viewer::EventId sel = app.view().selected;
  REQUIRE(sel.valid());
  CHECK(m.Name(sel) == rows[0].name);
  CHECK(hs.hist.BinOf(m.End(sel) - m.Start(sel)) == bin);

  const auto dir = std::filesystem::temp_directory_path() / "gt_teamui_csv";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  for (const char* t :
       {"kernels", "api", "copies", "nvtx", "idle-gaps", "counters", "losses", "notes", "histogram"}) {
    INFO(t);
    auto r = ui::ExportUiTable(app, t);
    REQUIRE(r.ok());
    std::ifstream f(*r, std::ios::binary);
    std::string first;
    std::getline(f, first);
    CHECK(!first.empty());
  }
  auto again = ui::ExportUiTable(app, "kernels");  // never over the first file
  REQUIRE(again.ok());
  CHECK(*again == "h200_streams.gtrace.kernels-1.csv");
  std::filesystem::current_path(cwd);
  std::filesystem::remove_all(dir);
}
