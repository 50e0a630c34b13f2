// The native viewer over a viewer index (gt/viewer/index.h), headless: `gtrace-ui --index TRACE` builds
// TRACE.gtindex once and reuses it, `gtrace-ui FILE.gtindex` maps it, and what the App shows from the
// mapped model (tracks, the kernel table, a selected event's details, a share link) is what it shows from
// the loaded trace. A damaged index is refused when named, rebuilt when reached through its trace.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "gt/viewer/csv.h"
#include "gt/viewer/index_query.h"
#include "gt/viewer/json.h"
#include "gt/viewer/query.h"
#include "headless_ui.h"
#include "ui/app.h"
#include "ui/teamui.h"

using namespace gt;
namespace fs = std::filesystem;

namespace {

using Headless = test::HeadlessUi;

const std::string kTrace = std::string(GT_TESTS_DATA) + "/h200_torch_train.gtrace";

void LoadLocal(ui::App& app, const std::string& path) {
  ui::SetGlobalApp(&app);
  app.OpenFile(path);
  for (int i = 0; i < 10000 && app.load_state() == ui::LoadState::kLoading; ++i) test::UiFrames(app);
  REQUIRE(app.load_state() == ui::LoadState::kLoaded);
  test::UiFrames(app, 2);
}

fs::path Scratch(const char* name) {
  const fs::path dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// kTrace copied into a fresh scratch folder `name` (its index is written next to it).
fs::path TraceCopy(const char* name) {
  const fs::path trace = Scratch(name) / "train.gtrace";
  fs::copy_file(kTrace, trace);
  return trace;
}

// The first kernel of the trace: a GPU event with details worth comparing.
viewer::EventId FirstKernel(const viewer::TraceModel& m) {
  for (viewer::LaneId l = 0; l < m.lanes.size(); ++l)
    for (uint32_t i = 0; i < m.lanes[l].size(); ++i)
      if (m.Kind({l, i}) == viewer::EventKind::kKernel) return {l, i};
  return {};
}

// An App showing `local`'s trace as a remote one, its requests answered in process from the trace's mapped
// index (as `gtrace serve` answers them), frames drawn between answers.
struct InProcessPage {
  std::vector<uint8_t> bytes;
  std::unique_ptr<viewer::MappedIndex> index;
  std::vector<std::pair<uint64_t, std::string>> queue;
  ui::App app;
  InProcessPage(const viewer::TraceModel& local, const std::string& name) {
    bytes = viewer::EncodeIndex(local, {1, "t"});
    auto opened = viewer::MappedIndex::FromBytes(bytes, {1, "t"});
    REQUIRE(opened.ok());
    index = std::move(*opened);
    ui::SetGlobalApp(&app);
    app.OpenRemote(name, [this](uint64_t id, const std::string& url) { queue.push_back({id, url}); });
  }
  void Pump() {
    for (int round = 0; round < 20 && !queue.empty(); ++round) {
      auto batch = std::move(queue);
      queue.clear();
      for (auto& [id, url] : batch) {
        const auto [what, params] = viewer::SplitIndexUrl(url);
        const viewer::IndexAnswer a = viewer::AnswerIndexQuery(*index, what, params);
        app.remote()->OnAnswer(id, a.status, a.body);
      }
      test::UiFrames(app, 1);
    }
  }
};

}  // namespace

TEST_CASE("gtrace-ui --index builds the index next to the trace once and shows what the trace shows",
          "[index]") {
  Headless h;
  const fs::path trace = TraceCopy("gt_index_ui");

  ui::App local;
  LoadLocal(local, kTrace);
  const viewer::TraceModel& lm = *local.model();

  ui::App app;
  ui::SetGlobalApp(&app);
  app.OpenIndexed(trace.string());
  REQUIRE(app.load_state() == ui::LoadState::kLoaded);
  REQUIRE(app.index() != nullptr);
  REQUIRE(fs::exists(trace.string() + ".gtindex"));
  const auto built_at = fs::last_write_time(trace.string() + ".gtindex");
  test::UiFrames(app, 3);
  const viewer::TraceModel& m = *app.model();
  CHECK(m.tracks.size() == lm.tracks.size());
  CHECK(m.event_count == lm.event_count);
  CHECK(app.trace_name() == "train.gtrace");

  // The kernel table comes from the index's precomputed rows, equal to the loaded trace's.
  app.ShowPanel(ui::Panel::kKernels);
  test::UiFrames(app, 2);
  const auto& rows = app.kernel_table().rows;
  const auto want = viewer::KernelSummary(lm);
  REQUIRE(rows.size() == want.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(m.Str(rows[i].name) == lm.Str(want[i].name));
    CHECK(rows[i].total_ns == want[i].total_ns);
  }

  // A selected kernel: the same details, the same key in the share link, the link opens the same view.
  const viewer::EventId k = FirstKernel(m);
  REQUIRE(k.valid());
  app.Select(k, true);
  local.Select(k, true);
  test::UiFrames(app, 2);
  CHECK(viewer::EventJson(m, k) == viewer::EventJson(lm, k));
  const std::string link = app.CurrentViewState().Serialize();
  CHECK(link == local.CurrentViewState().Serialize());

  // Opened again: the index is reused, not rebuilt. Opening the .gtindex by name maps the same file.
  ui::App again;
  ui::SetGlobalApp(&again);
  again.OpenIndexed(trace.string());
  REQUIRE(again.load_state() == ui::LoadState::kLoaded);
  CHECK(fs::last_write_time(trace.string() + ".gtindex") == built_at);
  ui::App named;
  ui::SetGlobalApp(&named);
  named.OpenFile(trace.string() + ".gtindex");
  REQUIRE(named.load_state() == ui::LoadState::kLoaded);
  REQUIRE(named.ApplyViewState(link, nullptr));
  test::UiFrames(named, 2);
  CHECK(named.view().selected == k);
  CHECK(named.trace_name() == "train.gtrace.gtindex");
}

TEST_CASE("gtrace-ui --index of a trace bigger than the decode limit asks the index for what it shows",
          "[index][remote]") {
  Headless h;
  const fs::path trace = TraceCopy("gt_index_ui_big");
  ui::App local;
  LoadLocal(local, kTrace);
  const viewer::TraceModel& lm = *local.model();

  ui::App app;
  ui::SetGlobalApp(&app);
  app.SetIndexDecodeLimit(1);  // as if the trace were bigger than half the machine's memory
  app.OpenIndexed(trace.string());
  for (int i = 0; i < 50 && app.load_state() == ui::LoadState::kLoading; ++i) test::UiFrames(app);
  REQUIRE(app.load_state() == ui::LoadState::kLoaded);
  REQUIRE(app.remote());  // not decoded: tiles, details and tables come from the index in process
  CHECK_FALSE(app.events_local());
  CHECK(app.model()->tracks.size() == lm.tracks.size());
  test::UiFrames(app, 5);
  CHECK(app.remote()->stats().tiles > 0);
  CHECK(app.remote()->stats().failures == 0);

  const viewer::EventId k = FirstKernel(lm);
  app.Select(app.source()->FindEventByKey(lm.EventKey(k)), true);
  test::UiFrames(app, 5);
  CHECK(app.view().selected == k);
  const viewer::EventInfo* info = app.source()->Event(k);
  REQUIRE(info);
  CHECK(info->name == lm.Str(lm.Name(k)));
  app.ShowPanel(ui::Panel::kKernels);
  test::UiFrames(app, 5);
  REQUIRE(app.kernel_table().built);
  CHECK(app.kernel_table().rows.size() == viewer::KernelSummary(lm).size());
  // Another trace opened after it: nothing of the in-process answers leaks into it.
  app.OpenFile(kTrace);
  for (int i = 0; i < 10000 && app.load_state() == ui::LoadState::kLoading; ++i) test::UiFrames(app);
  REQUIRE(app.load_state() == ui::LoadState::kLoaded);
  CHECK_FALSE(app.remote());
}

TEST_CASE("a damaged index is refused by name and rebuilt through its trace", "[index]") {
  Headless h;
  const fs::path trace = TraceCopy("gt_index_ui_bad");
  const fs::path dir = trace.parent_path();
  const std::string idx = trace.string() + ".gtindex";
  {
    ui::App app;
    ui::SetGlobalApp(&app);
    app.OpenIndexed(trace.string());
    REQUIRE(app.load_state() == ui::LoadState::kLoaded);
  }
  {  // one byte flipped in the middle of the file
    std::fstream f(idx, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    const auto size = f.tellg();
    f.seekp(size / 2);
    char c = 0;
    f.seekg(size / 2);
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x5a);
    f.seekp(size / 2);
    f.write(&c, 1);
  }
  ui::App named;
  ui::SetGlobalApp(&named);
  named.OpenFile(idx);
  CHECK(named.load_state() == ui::LoadState::kFailed);
  CHECK(named.last_error().find("damaged") != std::string::npos);
  CHECK(named.model() == nullptr);

  ui::App rebuilt;
  ui::SetGlobalApp(&rebuilt);
  rebuilt.OpenIndexed(trace.string());
  REQUIRE(rebuilt.load_state() == ui::LoadState::kLoaded);
  ui::App ok;
  ui::SetGlobalApp(&ok);
  ok.OpenFile(idx);  // the rebuilt file opens by name again
  CHECK(ok.load_state() == ui::LoadState::kLoaded);

  ui::App missing;
  ui::SetGlobalApp(&missing);
  missing.OpenFile((dir / "nothing.gtindex").string());
  CHECK(missing.load_state() == ui::LoadState::kFailed);
  CHECK(missing.last_error().find("nothing.gtindex") != std::string::npos);
}

// The page's remote path through the real App, headless: requests answered in-process from the mapped
// index (as `gtrace serve` answers them), frames drawn between answers.
TEST_CASE("a remote trace opens, draws from tiles, selects an event, searches, and links it like a local one",
          "[remote]") {
  Headless h;
  ui::App local;
  LoadLocal(local, kTrace);
  const viewer::TraceModel& lm = *local.model();
  InProcessPage page(lm, "train (remote)");
  ui::App& app = page.app;
  auto pump = [&] { page.Pump(); };
  test::UiFrames(app);
  CHECK(app.load_state() == ui::LoadState::kLoading);
  pump();
  REQUIRE(app.load_state() == ui::LoadState::kLoaded);
  REQUIRE(app.remote());
  CHECK_FALSE(app.events_local());
  CHECK(app.model()->tracks.size() == lm.tracks.size());
  pump();
  CHECK(app.remote()->stats().tiles > 0);

  const viewer::EventId k = FirstKernel(lm);
  const std::string key = lm.EventKey(k);
  app.Select(app.source()->FindEventByKey(key), true);
  pump();
  CHECK(app.view().selected == k);
  const viewer::EventInfo* info = app.source()->Event(k);
  REQUIRE(info);
  CHECK(info->name == lm.Str(lm.Name(k)));
  CHECK(app.view().t0 <= double(info->start));  // revealed once its times arrived
  CHECK(app.view().t1 >= double(info->end));
  // The share link is the local one's: the same view opens either way.
  local.Select(k, true);
  CHECK(app.CurrentViewState().selected == local.CurrentViewState().selected);

  // Every panel draws: remote ones from the server, the others say they need the download.
  for (ui::Panel p : {ui::Panel::kKernels, ui::Panel::kSummary, ui::Panel::kSearch, ui::Panel::kLoss,
                      ui::Panel::kRoofline, ui::Panel::kNotes, ui::Panel::kDetails}) {
    app.ShowPanel(p);
    test::UiFrames(app, 2);
    pump();
  }
  app.ShowPanel(ui::Panel::kKernels);
  test::UiFrames(app, 2);
  REQUIRE(app.kernel_table().built);
  CHECK(app.kernel_table().rows.size() == viewer::KernelSummary(lm).size());
  // Search, asked of the server: the count and the highlight, then Enter / N selects the next match after
  // the selection, as the local search finds it, and the link keeps the text.
  const std::string needle = lm.Str(lm.Name(k)).substr(0, 12);
  const viewer::Search want(lm, needle);
  REQUIRE(want.match_count() > 1);
  app.SetSearch(needle);
  CHECK(app.search().search.match_count() == 0);  // on its way
  pump();
  CHECK(app.search().search.match_count() == want.match_count());
  CHECK(app.search().search.Matches(lm.Name(k)));  // what the timeline highlights tile items by
  app.SearchStep(true);
  pump();
  CHECK(app.view().selected == want.Next(lm, k));
  app.SearchStep(false);
  pump();
  CHECK(app.view().selected == want.Prev(lm, want.Next(lm, k)));
  CHECK(app.CurrentViewState().search == needle);
  // The Search results tab lists the matches in the visible range, asked of the server for that window.
  app.ShowPanel(ui::Panel::kSearch);
  for (int i = 0; i < 4; ++i) test::UiFrames(app, 1), pump();
  const viewer::RemoteSearchList& list = app.remote()->search_list();
  REQUIRE(list.ready);
  CHECK(list.complete);
  CHECK(list.hits == want.List(lm, int64_t(app.view().t0), int64_t(app.view().t1) + 1, 2000));
  CHECK_FALSE(list.hits.empty());
  // The Filter toggle hides the tracks without a match, as the loaded trace's filter does.
  app.SetSearchMode(false, true);
  local.SetSearch(needle);
  local.SetSearchMode(false, true);
  REQUIRE(app.search().track_filter.active);
  CHECK(app.search().track_filter.track_visible == local.search().track_filter.track_visible);
  CHECK(app.search().track_filter.visible_tracks < lm.tracks.size());
  test::UiFrames(app, 2);
  pump();
  app.SetSearchMode(false, false);
  CHECK_FALSE(app.search().track_filter.active);
  // A kernel row click: the server's search for its name.
  const viewer::KernelSummaryRow row = viewer::KernelSummary(lm).front();
  app.ZoomToKernel(row);
  pump();
  CHECK(app.search().search.match_count() == row.count);
  // "Go to the launch": the server's partner of the selected kernel.
  app.Select(k, false);
  test::UiFrames(app, 1);
  pump();
  const viewer::PartnerInfo* partner = app.source()->Partner(k);
  REQUIRE(partner);
  CHECK(partner->id == viewer::FlowPartner(lm, k));
  // The Summary tab's idle gaps, from the server.
  app.ShowPanel(ui::Panel::kSummary);
  test::UiFrames(app, 2);
  pump();
  test::UiFrames(app, 1);
  CHECK(app.summary_panel().gaps_built);
  CHECK(viewer::IdleGapsJson(app.summary_panel().gaps) ==
        viewer::IdleGapsJson(viewer::ExplainIdleGaps(lm, 5)));
  // Zoomed far in and out: tiles at other levels, never a crash, a bounded cache.
  app.ZoomAround((app.view().t0 + app.view().t1) / 2, 1e-3);
  test::UiFrames(app, 2);
  pump();
  app.FitAll();
  test::UiFrames(app, 2);
  pump();
  CHECK(app.remote()->stats().failures == 0);
}

// The counters section, PC sampling and the roofline of a remote trace: the server's what=profiled (built
// with the index) analysed in the page, equal to the loaded trace's for every kernel event, graph launches
// too.
TEST_CASE("a remote trace's counters section and roofline are the loaded trace's", "[remote][counters]") {
  Headless h;
  size_t compared = 0, this_launch = 0;
  for (const char* name : {"counters_torch_graph_h200.gtrace", "pcsampling_h200.gtrace"}) {
    INFO(name);
    ui::App local;
    LoadLocal(local, std::string(GT_TESTS_DATA) + "/" + name);
    const viewer::TraceModel& lm = *local.model();
    InProcessPage page(lm, name);
    ui::App& app = page.app;
    auto pump = [&] { page.Pump(); };
    test::UiFrames(app);
    pump();
    REQUIRE(app.load_state() == ui::LoadState::kLoaded);
    REQUIRE(app.remote());
    // The roofline tab draws from the server's tables (not the download offer): the same points, the same
    // CSV.
    app.ShowPanel(ui::Panel::kRoofline);
    test::UiFrames(app, 2);
    pump();
    test::UiFrames(app, 1);
    ui::SetGlobalApp(&local);
    const std::string want_all = ui::CountersJson(local);
    ui::SetGlobalApp(&app);
    CHECK(ui::CountersJson(app) == want_all);
    auto csv = ui::UiTableCsv(app, "roofline");
    auto want_csv = ui::UiTableCsv(local, "roofline");
    REQUIRE((csv.ok() && want_csv.ok()));
    CHECK(viewer::ToCsv(*csv) == viewer::ToCsv(*want_csv));
    // Every kernel event selected in both: the details' counters (this launch's when it was profiled) and
    // PC sampling are the same.
    for (viewer::LaneId l = 0; l < lm.lanes.size(); ++l)
      for (uint32_t i = 0; i < lm.lanes[l].size(); ++i) {
        const viewer::EventId e{l, i};
        if (lm.Kind(e) != viewer::EventKind::kKernel) continue;
        local.Select(e, false);
        app.Select(e, false);
        app.ShowPanel(ui::Panel::kDetails);
        test::UiFrames(app, 1);
        pump();
        test::UiFrames(app, 1);
        ui::SetGlobalApp(&local);
        const std::string want = ui::CountersJson(local);
        ui::SetGlobalApp(&app);
        CHECK(ui::CountersJson(app) == want);
        ++compared;
        this_launch += want.find("\"launch\":\"") != std::string::npos;
      }
    CHECK(app.remote()->stats().failures == 0);
  }
  CHECK(compared > 20);
  CHECK(this_launch >= 15);  // graph launches among them, each its own profiled launch
}
