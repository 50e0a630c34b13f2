// One platform layer for the viewer: GLFW + desktop GL natively (platform_glfw.cc), Emscripten's GLFW +
// WebGL2 in the browser (platform_web.cc). It owns the window, the GL context and the ImGui backends; the UI
// owns everything drawn inside.
#pragma once

#include <functional>
#include <string>

namespace gt::platform {

struct Callbacks {
  std::function<void()> frame;                           // between ImGui::NewFrame() and ImGui::Render()
  std::function<void(const std::string& path)> on_drop;  // native only: the browser's drop is handled in JS
  // Web only: called at the start of each animation frame; true = it advanced background work (a load behind
  // the page's progress overlay) and this frame draws nothing. Under a software renderer a drawn frame cost
  // as much CPU as the loader's step, and the same two cores ran both (bench/viewer/bench_page_load.mjs).
  std::function<bool()> busy_step;
  // True while the UI has work that moves on frame by frame without input (a load, remote answers awaited, a
  // held key or button). Idle windows draw nothing (the browser: for a second after the last input or C API
  // call, then only when this says so) so that an open trace costs no CPU or GPU while nobody looks at it.
  std::function<bool()> wants_frames;
};

struct WindowOptions {
  const char* title = "gtrace";
  int width = 1600;
  int height = 900;
};

// Creates the window and runs frames until it closes (native) or forever (web: returns at once and the
// browser drives the loop). Returns a process exit code; non-zero when no window could be created.
int Run(const WindowOptions& options, Callbacks callbacks);

// Asks the platform to draw another frame soon even without input (loading progress, animations).
void RequestFrame();

}  // namespace gt::platform
