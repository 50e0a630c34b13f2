// Native platform layer: GLFW window, desktop OpenGL 3.3 core context, ImGui GLFW + OpenGL3 backends.
// Used for local viewing and for compiling the UI in CI; the browser build uses platform_web.cc.
#include <GLFW/glfw3.h>

#include <atomic>
#include <cstdio>

#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_impl_opengl3.h"
#include "platform/platform.h"

namespace gt::platform {
namespace {

std::atomic<int> g_frames_requested{1};
Callbacks* g_callbacks = nullptr;

void OnGlfwError(int code, const char* description) {
  std::fprintf(stderr, "glfw error %d: %s\n", code, description);
}

void OnDrop(GLFWwindow*, int count, const char** paths) {
  if (!g_callbacks || !g_callbacks->on_drop) return;
  // One trace at a time: the last dropped file wins, like a file dialog with a single selection.
  if (count > 0) g_callbacks->on_drop(paths[count - 1]);
  RequestFrame();
}

}  // namespace

void RequestFrame() {
  g_frames_requested.store(3);
}

int Run(const WindowOptions& options, Callbacks callbacks) {
  glfwSetErrorCallback(OnGlfwError);
  if (!glfwInit()) {
    std::fprintf(stderr, "gtrace-ui: cannot initialise GLFW (no display?)\n");
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  GLFWwindow* window = glfwCreateWindow(options.width, options.height, options.title, nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "gtrace-ui: cannot create an OpenGL 3.3 window\n");
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");

  g_callbacks = &callbacks;
  glfwSetDropCallback(window, OnDrop);

  while (!glfwWindowShouldClose(window)) {
    // Idle windows sleep until input arrives; loading and animations ask for frames explicitly.
    const bool wanted = callbacks.wants_frames && callbacks.wants_frames();
    if (g_frames_requested.load() > 0 || wanted) {
      if (!wanted) g_frames_requested.fetch_sub(1);
      glfwPollEvents();
    } else {
      glfwWaitEventsTimeout(0.25);
    }
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    if (callbacks.frame) callbacks.frame();
    ImGui::Render();
    int width = 0, height = 0;
    glfwGetFramebufferSize(window, &width, &height);
    glViewport(0, 0, width, height);
    glClearColor(0.09f, 0.09f, 0.10f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    glfwSwapBuffers(window);
  }

  g_callbacks = nullptr;
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return 0;
}

}  // namespace gt::platform
