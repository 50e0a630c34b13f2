// Browser platform layer: Emscripten's GLFW emulation on the page's <canvas id="canvas">, WebGL2 through
// ImGui's OpenGL3 backend (GLSL ES 3.00). The browser drives the loop (requestAnimationFrame); files arrive
// from the page's JS glue (web/app.js) through the exported C API, not through GLFW's drop callback.
#include <GLFW/glfw3.h>
#include <emscripten.h>
#include <emscripten/html5.h>

#include <cstdio>

#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_impl_opengl3.h"
#include "platform/platform.h"

namespace gt::platform {
namespace {

GLFWwindow* g_window = nullptr;
Callbacks g_callbacks;

void Frame() {
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  if (g_callbacks.frame) g_callbacks.frame();
  ImGui::Render();
  int width = 0, height = 0;
  glfwGetFramebufferSize(g_window, &width, &height);
  glViewport(0, 0, width, height);
  glClearColor(0.09f, 0.09f, 0.10f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

}  // namespace

void RequestFrame() {}  // the browser draws every animation frame anyway

int Run(const WindowOptions& options, Callbacks callbacks) {
  g_callbacks = std::move(callbacks);
  if (!glfwInit()) {
    std::fprintf(stderr, "gtrace: cannot initialise GLFW\n");
    return 1;
  }
  glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  // Any size but the screen's (see below); the page resizes the canvas to the window right after.
  g_window = glfwCreateWindow(options.width / 2, options.height / 2, options.title, nullptr, nullptr);
  if (!g_window) {
    std::fprintf(stderr, "gtrace: cannot create a WebGL2 context\n");
    return 1;
  }
  glfwMakeContextCurrent(g_window);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  // No imgui.ini in the browser: window layout is recomputed from the canvas size, and the view travels in
  // links.
  ImGui::GetIO().IniFilename = nullptr;
  ImGui_ImplGlfw_InitForOpenGL(g_window, true);
  // The page sizes the canvas (web/app.js: Module.setCanvasSize on resize), not ImGui's resize callback: that
  // one goes through glfwSetWindowSize, which asks for fullscreen whenever the window matches the screen size.
  ImGui_ImplOpenGL3_Init("#version 300 es");

  // simulate_infinite_loop=0: main() returns and the runtime stays alive for the exported C API.
  emscripten_set_main_loop(Frame, 0, false);
  return 0;
}

}  // namespace gt::platform
