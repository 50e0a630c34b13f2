// The viewer's App driven without a window or renderer (ImGui with its font atlas built, nothing drawn), for
// tests of the UI's behaviour: frames run the real App::Frame.
#pragma once

#include "imgui.h"
#include "ui/app.h"

namespace gt::test {

// One ImGui context for a test's lifetime; the global App pointer the C API reads is cleared at the end.
struct HeadlessUi {
  HeadlessUi() {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1400, 800);
    unsigned char* px = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&px, &w, &h);
  }
  ~HeadlessUi() {
    ImGui::DestroyContext();
    ui::SetGlobalApp(nullptr);
  }
};

inline void UiFrames(ui::App& app, int n = 1) {
  for (int i = 0; i < n; ++i) {
    ImGui::GetIO().DeltaTime = 1.0f / 60;
    ImGui::NewFrame();
    app.Frame();
    ImGui::Render();
  }
}

}  // namespace gt::test
