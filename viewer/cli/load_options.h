// How the offline commands (stats, diff, export, mcp) load a trace: on every hardware thread, as the viewer
// and the Python package do. The model is the same for any thread count, and the loader falls back to one
// thread where the threaded load's peak would not fit in the memory free (LoadOptions::threads).
#pragma once

#include "gt/viewer/load.h"

namespace gt::cli {

inline viewer::LoadOptions CommandLoadOptions() {
  viewer::LoadOptions o;
  o.threads = 0;
  return o;
}

}  // namespace gt::cli
