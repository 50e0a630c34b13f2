// The `gtrace info` summary, as text or JSON. A library function so the golden test checks the exact output.
#pragma once

#include <string>

#include "gt/trace_data.h"

namespace gt::cli {

struct InfoInput {
  std::string path;  // shown as given
  const TraceData* data = nullptr;
  const LoadReport* report = nullptr;
  size_t max_threads_listed = 16;  // per process; the rest are counted
};

std::string FormatInfoText(const InfoInput& in);
std::string FormatInfoJson(const InfoInput& in);

// Helpers shared with other commands.
std::string FormatWallClock(int64_t realtime_ns);  // "2026-11-22 10:00:00.123 UTC"

}  // namespace gt::cli
