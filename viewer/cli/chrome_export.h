// Chrome trace-event JSON export (chrome://tracing, Perfetto UI): the interop path and the size baseline.
//
// Layout: host threads under their process (pid/tid); each GPU of each process is a pseudo-process named
// "GPU 0 (NVIDIA H200)" with one thread per stream ("stream 7"); API call -> GPU work flows (ph s/f) by
// correlation id; counters as ph C; metadata events name every process and thread.
#pragma once

#include <functional>
#include <string_view>

#include "gt/trace_data.h"

namespace gt {

struct ChromeExportOptions {
  bool flows = true;              // s/f arrows from a launch API call to its GPU work
  size_t buffer_bytes = 1 << 20;  // output is handed to `write` in pieces of about this size
};

// Streams the JSON to `write` (never holds the whole document). Stops at the first write error.
Status ExportChromeJson(const TraceData& trace, const std::function<Status(std::string_view)>& write,
                        const ChromeExportOptions& options = {});

}  // namespace gt
