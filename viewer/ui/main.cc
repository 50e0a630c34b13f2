// Entry point of the viewer, native (gtrace-ui [trace]) and web (the page's gtrace.js).
#include <cstdio>
#include <string>
#include <vector>

#include "imgui.h"
#include "platform/platform.h"
#ifdef GT_HAVE_NSYS_SQLITE
#include "gt/nsys/sqlite_reader.h"
#endif
#include "ui/app.h"

int main(int argc, char** argv) {
  static gt::ui::App app;  // static: on the web main() returns while the browser keeps drawing frames
  gt::ui::SetGlobalApp(&app);
#ifdef GT_HAVE_NSYS_SQLITE
  gt::nsys::RegisterNsysReader();  // Nsight Systems .sqlite exports open like any trace
#endif
  std::vector<std::string> traces;
  bool indexed = false;  // --index: the traces open through their index (gt/viewer/index.h)
  std::string compare;   // --compare B: a second trace under the first, aligned (ui/compare_view.h)
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::printf(
          "usage: gtrace-ui [trace.gtrace | trace.json[.gz] | nsys-export.sqlite | trace.gtindex] "
          "[--index] [--compare OTHER]\n\n"
          "  trace.gtindex  a viewer index (gtrace index build), opened memory-mapped: traces bigger than "
          "RAM\n"
          "  --index        open the trace through its index TRACE.gtindex, built next to it when missing "
          "or\n"
          "                 stale (once: that loads the trace), reused after\n");
      return 0;
    }
    if (arg == "--index") {
      indexed = true;
      continue;
    }
    if (arg == "--compare" && i + 1 < argc) {
      compare = argv[++i];
      continue;
    }
    traces.push_back(arg);
  }
  for (const std::string& t : traces) indexed ? app.OpenIndexed(t) : app.OpenFile(t);
  if (!compare.empty()) gt::ui::CompareOpenFile(app, compare);
  gt::platform::Callbacks callbacks;
  callbacks.frame = [] { gt::ui::GlobalApp()->Frame(); };
  callbacks.busy_step = [] { return gt::ui::GlobalApp()->StepBusy(); };
  callbacks.wants_frames = [] { return gt::ui::GlobalApp()->WantsFrames(); };
  // Shift held while dropping on an open trace: compare with the dropped one (as on the page).
  callbacks.on_drop = [](const std::string& path) {
    gt::ui::App& a = *gt::ui::GlobalApp();
    if (ImGui::GetCurrentContext() && ImGui::GetIO().KeyShift && a.model())
      gt::ui::CompareOpenFile(a, path);
    else
      a.OpenFile(path);
  };
  return gt::platform::Run({}, std::move(callbacks));
}
