// The Flame graph tab through the real App, headless, on the H200 slow-DataLoader fixture: the steady-state
// range is SlowDataset.__getitem__ sleeping, the gap button and the C API agree with the panel, hovering
// draws a tooltip and a click zooms into the frame under the mouse.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "gt/viewer/summary.h"
#include "headless_ui.h"
#include "imgui_internal.h"  // the tooltip window

extern "C" {
const char* gt_flame_graph();
void gt_flame_select_range(double t0, double t1);
int gt_flame_select_gap(int i);
void gt_flame_filter(double pid, double tid);
int gt_flame_zoom(int node);
const char* gt_flame_node_rect(int node);
}

using namespace gt;
using json = nlohmann::json;

namespace {

json Flame() {
  return json::parse(gt_flame_graph());
}

// The laid-out node whose function is `name` with the most samples, or null.
const json* Find(const json& g, const std::string& name) {
  const json* best = nullptr;
  for (const json& n : g["nodes"])
    if (n["function"] == name && (!best || n["samples"] > (*best)["samples"])) best = &n;
  return best;
}

}  // namespace

TEST_CASE("the flame graph of a measured range names the slow DataLoader, zooms and filters", "[flame]") {
  test::HeadlessUi ui;
  ui::App app;
  ui::SetGlobalApp(&app);
  app.OpenFile(std::string(GT_TESTS_DATA) + "/cpu_h200_loader.gtrace");
  for (int i = 0; i < 200 && app.load_state() == ui::LoadState::kLoading; ++i) test::UiFrames(app);
  REQUIRE(app.load_state() == ui::LoadState::kLoaded);
  app.ShowPanel(ui::Panel::kFlame);
  test::UiFrames(app, 2);

  // Before any choice: the whole trace, drawn.
  json g = Flame();
  CHECK(g["source"] == "whole trace");
  CHECK(g["drawn"] == true);
  CHECK(g["threads"] == "cuda");
  const uint64_t cuda = g["samples"];
  gt_flame_filter(0, 0);  // every thread: the samples outlast the events, the whole trace has them all
  CHECK(uint64_t(Flame()["samples"]) == app.model()->cpu.size());
  CHECK(cuda < app.model()->cpu.size());
  gt_flame_filter(-1, 0);

  // The steady state (past the 6.4 s start-up gap and the first step's warm-up) on the main thread (the
  // sampled thread that calls CUDA and runs Python; PyTorch's autograd thread calls CUDA too): most of its
  // samples sleep in SlowDataset.__getitem__, at the line that calls time.sleep
  // (bench/collector/cpu_gaps.py).
  const auto start_up = viewer::ExplainIdleGaps(*app.model(), 1);
  REQUIRE(start_up.size() == 1);
  const double t0 = double(start_up[0].end_ns) + 3e8;
  gt_flame_select_range(t0, t0 + 5e8);
  test::UiFrames(app, 2);
  g = Flame();
  CHECK(g["source"] == "measured range");
  CHECK(uint64_t(g["samples"]) < cuda);
  json main_thread;  // a copy: g is replaced below
  for (const json& t : g["sampled_threads"])
    if (t["cuda"] == true && t["pid"] == t["tid"]) main_thread = t;
  REQUIRE(main_thread.is_object());
  gt_flame_filter(double(main_thread["pid"]), double(main_thread["tid"]));
  test::UiFrames(app, 2);
  g = Flame();
  CHECK(g["threads"] == "thread");
  const json* hot = Find(g, "SlowDataset.__getitem__");
  REQUIRE(hot);
  CHECK(double((*hot)["share"]) > 0.5);
  CHECK((*hot)["kind"] == "python");
  CHECK(std::string((*hot)["location"]).ends_with("cpu_gaps.py:24"));  // time.sleep(0.002)
  const int node = (*hot)["node"];

  // Hover it: the tooltip is up; click: the graph zooms into it (it spans the width, its callers above).
  const json r = json::parse(gt_flame_node_rect(node));
  REQUIRE(r.is_object());
  ImGui::GetIO().MousePos = ImVec2(float(r["x"]) + float(r["w"]) / 2, float(r["y"]) + float(r["h"]) / 2);
  test::UiFrames(app, 2);
  ImGuiContext& ctx = *ImGui::GetCurrentContext();
  bool tooltip = false;
  for (ImGuiWindow* w : ctx.Windows) tooltip |= w->Active && (w->Flags & ImGuiWindowFlags_Tooltip);
  CHECK(tooltip);
  CHECK(Flame()["hovered"] == node);
  ImGui::GetIO().MouseDown[0] = true;
  test::UiFrames(app);
  ImGui::GetIO().MouseDown[0] = false;
  test::UiFrames(app, 2);
  g = Flame();
  CHECK(g["focus"] == node);
  const json* zoomed = Find(g, "SlowDataset.__getitem__");
  REQUIRE(zoomed);
  CHECK(double((*zoomed)["x0"]) == 0);
  CHECK(double((*zoomed)["x1"]) == 1);
  CHECK(g["nodes"][0]["above_focus"] == true);
  // Reset (as the button and right click do).
  CHECK(gt_flame_zoom(0) == 1);
  CHECK(Flame()["focus"] == 0);
  CHECK(gt_flame_zoom(1 << 30) == 0);

  // Its process (more threads, more samples), a thread that does not exist (none), back to the default.
  const uint64_t range = g["samples"];
  gt_flame_filter(double(main_thread["pid"]), 0);
  CHECK(Flame()["threads"] == "process");
  CHECK(uint64_t(Flame()["samples"]) > range);
  gt_flame_filter(double(main_thread["pid"]), 1);
  CHECK(Flame()["samples"] == 0);
  gt_flame_filter(-1, 0);
  CHECK(Flame()["threads"] == "cuda");

  // A gap from the Summary's list: the largest is the start-up (imports).
  REQUIRE(gt_flame_select_gap(0) == 1);
  test::UiFrames(app, 2);
  g = Flame();
  CHECK(g["source"] == "idle gap 1");
  CHECK(uint64_t(g["samples"]) > 1000);
  CHECK(gt_flame_select_gap(99) == 0);
  CHECK(app.panel() == ui::Panel::kFlame);
}

TEST_CASE("the flame graph tab of a trace without samples says so", "[flame]") {
  test::HeadlessUi ui;
  ui::App app;
  ui::SetGlobalApp(&app);
  app.OpenFile(std::string(GT_TESTS_DATA) + "/h200_nvtx.gtrace");
  for (int i = 0; i < 200 && app.load_state() == ui::LoadState::kLoading; ++i) test::UiFrames(app);
  REQUIRE(app.load_state() == ui::LoadState::kLoaded);
  app.ShowPanel(ui::Panel::kFlame);
  test::UiFrames(app, 2);
  const json g = Flame();
  CHECK(g["samples"] == 0);
  CHECK(g["nodes"].size() == 1);  // the root alone
  gt_flame_select_range(0, 1e9);
  CHECK(Flame()["samples"] == 0);
}
