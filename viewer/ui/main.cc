// Entry point of the viewer, native (gtrace-ui [trace]) and web (the page's gtrace.js).
#include <cstdio>
#include <string>

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
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::printf("usage: gtrace-ui [trace.gtrace | trace.json[.gz] | nsys-export.sqlite]\n");
      return 0;
    }
    app.OpenFile(arg);
  }
  gt::platform::Callbacks callbacks;
  callbacks.frame = [] { gt::ui::GlobalApp()->Frame(); };
  callbacks.on_drop = [](const std::string& path) { gt::ui::GlobalApp()->OpenFile(path); };
  return gt::platform::Run({}, std::move(callbacks));
}
