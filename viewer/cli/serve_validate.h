// What `gtrace serve` accepts as an upload: what the viewer page can open is what a link can share.
#pragma once

#include <cstdint>
#include <span>

#include "gt/server/server.h"

namespace gt::cli {

// .gtrace through gt::server::ValidateGtrace (every chunk decoded); Chrome and PyTorch profiler (Kineto)
// JSON, plain or gzipped, through the viewer core's importer: it must yield at least one event.
// `max_inflated_bytes` bounds what a gzipped upload may expand to. Format: "gtrace", "chrome" or "kineto".
StatusOr<server::Validation> ValidateViewerTrace(std::span<const uint8_t> bytes, uint64_t max_inflated_bytes);

}  // namespace gt::cli
