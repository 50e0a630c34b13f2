// Browser platform layer: Emscripten's GLFW emulation on the page's <canvas id="canvas">, WebGL2 through
// ImGui's OpenGL3 backend (GLSL ES 3.00). The browser drives the loop (requestAnimationFrame); files arrive
// from the page's JS glue (web/app.js) through the exported C API, not through GLFW's drop callback.
//
// Hi-DPI: the page gives the canvas a backing store of devicePixelRatio x its CSS size, and Emscripten's GLFW
// reports window size and mouse positions in those backing pixels. ImGui works in CSS pixels instead (so
// every size in the UI, and every coordinate the C API reports, means the same on any screen): DisplaySize is
// the CSS size, DisplayFramebufferScale the ratio, mouse positions are divided by it, and the font atlas is
// rasterized at ratio x the font size and drawn at 1/ratio, so text is as sharp as the screen.
#include <GLFW/glfw3.h>
#include <emscripten.h>
#include <emscripten/html5.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_impl_opengl3.h"
#include "platform/platform.h"

namespace gt::platform {
namespace {

GLFWwindow* g_window = nullptr;
Callbacks g_callbacks;
float g_scale = 1;               // backing pixels per CSS pixel of the canvas
float g_font_scale = 0;          // the scale the font atlas was built for (0: not yet)
bool g_mouse_inside = true;      // the canvas fills the page: assume the pointer is over it until it leaves
constexpr float kFontSize = 13;  // CSS pixels (ImGui's default font)

// Backing pixels per CSS pixel, measured (not window.devicePixelRatio): exact even when the page rounded the
// backing size, and right for mouse positions, which Emscripten scales by the same measured ratio.
float MeasureScale() {
  double css_w = 0, css_h = 0;
  int fb_w = 0, fb_h = 0;
  emscripten_get_element_css_size("#canvas", &css_w, &css_h);
  glfwGetFramebufferSize(g_window, &fb_w, &fb_h);
  if (!(css_w > 0) || fb_w <= 0) return 1;
  const float s = static_cast<float>(fb_w / css_w);
  return std::isfinite(s) && s >= 0.25f && s <= 8 ? s : 1;
}

void BuildFonts(float scale) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  ImFontConfig cfg;
  cfg.SizePixels = std::round(kFontSize * scale);
  io.Fonts->AddFontDefault(&cfg);
  io.FontGlobalScale = kFontSize / cfg.SizePixels;  // laid out at kFontSize CSS pixels
  if (g_font_scale > 0) {  // a texture exists (the first NewFrame creates it along with the shaders)
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
  g_font_scale = scale;
}

void CursorPos(GLFWwindow* window, double x, double y) {
  ImGui_ImplGlfw_CursorPosCallback(window, x / g_scale, y / g_scale);
}
void CursorEnter(GLFWwindow* window, int entered) {
  g_mouse_inside = entered != 0;
  ImGui_ImplGlfw_CursorEnterCallback(window, entered);
}

// Whether the page saw input or a C API call lately (web/app.js sets Module.gtAwakeUntil, in
// performance.now() milliseconds). A page that does not say draws every frame.
EM_JS(int, PageAwake, (), {
  const until = Module.gtAwakeUntil;  // (no strict equality here: clang-format splits "===")
  return until == null || until > performance.now() ? 1 : 0;
});

int g_frames_requested = 1;  // RequestFrame(): drawn even when the page is idle

void Frame() {
  if (g_callbacks.busy_step && g_callbacks.busy_step())
    return;  // nothing is drawn: the canvas keeps its image
  // Idle: the canvas keeps its image. Under a software renderer an ImGui frame costs tens of milliseconds of
  // CPU, so an idle page drawing every animation frame took a core (the one a second page's load needed).
  if (g_frames_requested > 0) {
    --g_frames_requested;
  } else if (!PageAwake() && !(g_callbacks.wants_frames && g_callbacks.wants_frames())) {
    return;
  }
  g_scale = MeasureScale();
  if (std::fabs(g_scale - g_font_scale) > 0.01f) BuildFonts(g_scale);
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  {
    ImGuiIO& io = ImGui::GetIO();
    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(g_window, &fb_w, &fb_h);
    io.DisplaySize = ImVec2(static_cast<float>(fb_w) / g_scale, static_cast<float>(fb_h) / g_scale);
    io.DisplayFramebufferScale = ImVec2(g_scale, g_scale);
    // The backend's own fallback (when it has seen no cursor-enter) queues the position in backing pixels;
    // this later event in CSS pixels wins.
    double x = 0, y = 0;
    glfwGetCursorPos(g_window, &x, &y);
    if (g_mouse_inside)
      io.AddMousePosEvent(static_cast<float>(x / g_scale), static_cast<float>(y / g_scale));
    else
      io.AddMousePosEvent(-FLT_MAX, -FLT_MAX);
  }
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

void RequestFrame() {
  g_frames_requested = std::max(g_frames_requested, 3);
}

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
  // Replace the backend's cursor callbacks with ones that convert backing pixels to CSS pixels (they call the
  // backend's, which would chain to these if installed before it).
  glfwSetCursorPosCallback(g_window, CursorPos);
  glfwSetCursorEnterCallback(g_window, CursorEnter);
  // The page sizes the canvas (web/app.js: Module.setCanvasSize on resize), not ImGui's resize callback: that
  // one goes through glfwSetWindowSize, which asks for fullscreen whenever the window matches the screen
  // size.
  ImGui_ImplOpenGL3_Init("#version 300 es");

  // simulate_infinite_loop=0: main() returns and the runtime stays alive for the exported C API.
  emscripten_set_main_loop(Frame, 0, false);
  return 0;
}

}  // namespace gt::platform
