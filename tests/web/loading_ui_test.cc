// Loading through the real App, headless (ImGui without a renderer, as ui_smoke): the loading screen counts
// what it read, says when it builds the timeline before the frame that blocks on it, and a file opened while
// another loads replaces it (the page's "drop another file to cancel").
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>

#include "headless_ui.h"
#include "kineto_gen.h"
#include "ui/app.h"

using namespace gt;
using gt::test::KinetoJson;

namespace {

using Headless = test::HeadlessUi;

void Frame(ui::App& app) {
  test::UiFrames(app);
}

void Open(ui::App& app, const std::string& name, const std::string& bytes) {
  auto* data = static_cast<uint8_t*>(std::malloc(bytes.size()));
  std::memcpy(data, bytes.data(), bytes.size());
  app.OpenBuffer(name, data, bytes.size());
}

}  // namespace

TEST_CASE("the loading screen counts records, then says it builds the timeline before it blocks", "[load]") {
  Headless h;
  ui::App app;
  ui::SetGlobalApp(&app);
  const std::string json = KinetoJson(24 << 20, 7);
  Open(app, "big.json", json);
  REQUIRE(app.load_state() == ui::LoadState::kLoading);
  uint64_t last_records = 0, last_bytes = 0, building_frames = 0, building_records = 0;
  for (int i = 0; i < 10000 && app.load_state() == ui::LoadState::kLoading; ++i) {
    const viewer::TraceLoader::Progress p = app.load_detail();
    CHECK(p.records >= last_records);  // counts only grow
    CHECK(p.bytes_read >= last_bytes);
    CHECK(p.bytes_total == json.size());
    last_records = p.records;
    last_bytes = p.bytes_read;
    if (app.load_building()) {
      ++building_frames;
      building_records = p.records;
      CHECK(p.bytes_read == p.bytes_total);  // everything read, the timeline still to build
    }
    Frame(app);
  }
  REQUIRE(app.load_state() == ui::LoadState::kLoaded);
  CHECK(building_frames == 1);  // exactly one frame says so, then Finish runs
  CHECK(building_records > 0);
  CHECK(app.load_detail().records == 0);  // nothing loading any more
  CHECK(!app.load_building());
}

TEST_CASE("a file opened while another loads replaces it", "[load]") {
  Headless h;
  ui::App app;
  ui::SetGlobalApp(&app);
  Open(app, "first.json", KinetoJson(24 << 20, 1));
  Frame(app);  // the first load is under way (or, on a fast machine, already building)
  Open(app, "second.json", KinetoJson(1 << 20, 2));
  CHECK(app.load_detail().records == 0);  // a fresh load: the first one's counts are gone
  for (int i = 0; i < 10000 && app.load_state() == ui::LoadState::kLoading; ++i) Frame(app);
  REQUIRE(app.load_state() == ui::LoadState::kLoaded);
  CHECK(app.trace_name() == "second.json");
  CHECK(app.last_error().empty());
}

TEST_CASE("the viewer asks for frames only while it has work of its own", "[load]") {
  Headless h;
  ui::App app;
  ui::SetGlobalApp(&app);
  Frame(app);
  CHECK(!app.WantsFrames());  // the welcome screen: nothing moves without input
  Open(app, "t.json", KinetoJson(2 << 20, 3));
  CHECK(app.WantsFrames());  // a load advances a step a frame
  for (int i = 0; i < 10000 && app.load_state() == ui::LoadState::kLoading; ++i) {
    CHECK(app.WantsFrames());
    Frame(app);
  }
  REQUIRE(app.load_state() == ui::LoadState::kLoaded);
  Frame(app);
  CHECK(!app.WantsFrames());  // a trace on screen, left alone
  ImGuiIO& io = ImGui::GetIO();
  io.AddKeyEvent(ImGuiKey_D, true);  // D pans every frame while held
  Frame(app);
  CHECK(app.WantsFrames());
  io.AddKeyEvent(ImGuiKey_D, false);
  Frame(app);
  CHECK(!app.WantsFrames());
  io.AddMouseButtonEvent(0, true);  // a press may become a drag
  Frame(app);
  CHECK(app.WantsFrames());
  io.AddMouseButtonEvent(0, false);
  Frame(app);
  CHECK(!app.WantsFrames());
}
