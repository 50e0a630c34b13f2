// Headless smoke test of the viewer UI: the real App and its windows drawn by Dear ImGui without a renderer
// (no window, no GL), fed synthetic mouse/keyboard input, over every trace given on the command line. Native
// (ASan in the asan preset) so a UI bug is a stack trace here, not "memory access out of bounds" in the
// browser.
//   gt_ui_smoke TRACE... [--bad TRACE...]   (TRACE may be A,B,...: files opened together, merged; or A+B: A
//                                           compared with B, B's tracks under A's) exit 0 when
//   every TRACE loads and draws 120 frames of wandering
//                                           input, and every --bad one fails with an error on the welcome
//                                           screen
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gt/reader.h"

#include "imgui.h"
#include "ui/app.h"

namespace {

void Frame(gt::ui::App& app, float t) {
  ImGuiIO& io = ImGui::GetIO();
  io.DeltaTime = 1.0f / 60;
  ImGui::NewFrame();
  app.Frame();
  ImGui::Render();
  (void)t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gt_ui_smoke TRACE... [--bad TRACE...]\n");
    return 64;
  }
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.DisplaySize = ImVec2(1400, 800);
  unsigned char* pixels = nullptr;
  int w = 0, h = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  int failures = 0;
  bool expect_failure = false;  // --bad: the traces after it must fail cleanly instead of loading
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--bad") {
      expect_failure = true;
      continue;
    }
    gt::ui::App app;
    gt::ui::SetGlobalApp(&app);
    std::string arg = argv[i];
    std::string compare;  // A+B: B compared with A
    if (const size_t plus = arg.find('+'); plus != std::string::npos)
      compare = arg.substr(plus + 1), arg = arg.substr(0, plus);
    if (arg.find(',') == std::string::npos) {
      app.OpenFile(arg);
      if (!compare.empty()) gt::ui::CompareOpenFile(app, compare);
    } else {  // A,B,...: the files of one job, opened together (merged) as the page does for a multi-file
              // drop
      for (size_t at = 0; at <= arg.size();) {
        const size_t end = std::min(arg.find(',', at), arg.size());
        const std::string path = arg.substr(at, end - at);
        auto bytes = gt::ReadFileBytes(path);
        if (!bytes.ok()) {
          std::printf("%s: %s\n", path.c_str(), bytes.status().ToString().c_str());
          return 1;
        }
        auto* data = static_cast<uint8_t*>(std::malloc(std::max<size_t>(1, bytes->size())));
        std::memcpy(data, bytes->data(), bytes->size());
        app.StageInput(path, data, bytes->size());
        at = end + 1;
      }
      app.OpenStaged();
    }
    int frames = 0;
    while ((app.load_state() == gt::ui::LoadState::kLoading || app.compare().loading()) && frames < 10000)
      Frame(app, 0), ++frames;
    Frame(app, 0);
    if (!compare.empty()) {
      const gt::ui::CompareState& c = app.compare();
      std::printf("  compare with %s: %s %s%s\n", compare.c_str(), c.computed ? "computed" : "not computed",
                  c.error.c_str(), c.align.reason.c_str());
      // A bad B (--bad) must say why and leave A open; a good one must compare.
      if (c.computed == expect_failure || (expect_failure && c.error.empty())) ++failures;
      if (app.load_state() != gt::ui::LoadState::kLoaded) ++failures;
    }
    std::printf("%s: state %d %s%s\n", argv[i], static_cast<int>(app.load_state()), app.last_error().c_str(),
                app.load_warning().c_str());
    if (app.load_state() != gt::ui::LoadState::kLoaded) {
      for (int f = 0; f < 5; ++f) Frame(app, 0);  // the welcome screen with the error must draw too
      if (!expect_failure) ++failures;
      continue;
    }
    // Every row of a comparison is on screen: B's tracks are drawn under A's, so the wander reaches them.
    if (app.compare().computed) app.view().scroll_y = 0;
    // Wander: hover, wheel, drag, shift-drag, keys, select, search, every panel.
    const gt::ui::TimelineLayout& lay = app.view().layout;
    for (int f = 0; f < 120; ++f) {
      Frame(app, 0);
      const float x = lay.plot_min.x + (lay.plot_max.x - lay.plot_min.x) * ((f * 37) % 100) / 100.0f;
      float y = lay.plot_min.y + 5 + (f * 11) % 200;
      // Half the clicks of a comparison land on B's rows (selection there, counterpart in A).
      if (app.compare().computed && f % 30 >= 15)
        for (float ly : app.compare().lane_y)
          if (ly >= lay.plot_min.y && ly < lay.plot_max.y - 10) {
            y = ly + 5;
            break;
          }
      io.AddMousePosEvent(x, y);
      if (f % 10 == 3) io.AddMouseWheelEvent(0, f % 20 == 3 ? 1.0f : -1.0f);
      if (f % 15 == 5) io.AddMouseButtonEvent(0, true);
      if (f % 15 == 7) io.AddMouseButtonEvent(0, false);
      if (f % 30 == 11) io.AddKeyEvent(ImGuiKey_W, true);
      if (f % 30 == 14) io.AddKeyEvent(ImGuiKey_W, false);
      if (f == 40) app.SetSearch("a");
      if (f == 41) app.SearchStep(true);
      if (f == 50) app.ShowPanel(gt::ui::Panel::kSummary);
      if (f == 60) app.ShowPanel(gt::ui::Panel::kKernels);
      if (f == 70) app.ShowPanel(gt::ui::Panel::kSearch);
      if (f == 75) app.ShowPanel(gt::ui::Panel::kFlame);  // the mouse events below then land on the graph
      if (f == 80) app.ShowPanel(gt::ui::Panel::kLoss);
      if (f == 85 && app.compare().computed) app.ShowPanel(gt::ui::Panel::kCompare);
      if (f == 95 && app.compare().computed) gt::ui::CompareSetAlign(app, "start", nullptr);
      if (f == 105 && app.compare().computed) app.ShowPanel(gt::ui::Panel::kCompare);
      if (f == 90) app.FitAll();
      if (f == 100) {
        std::string err;
        if (!app.ApplyViewState(app.CurrentViewState().Serialize(), &err)) {
          std::printf("  view state round trip failed: %s\n", err.c_str());
          ++failures;
        }
      }
    }
    std::printf("  ok: %zu tracks, range %.0f..%.0f\n", app.model()->tracks.size(), app.view().t0,
                app.view().t1);
  }
  ImGui::DestroyContext();
  gt::ui::SetGlobalApp(nullptr);
  return failures ? 1 : 0;
}
