// What `gtrace serve` accepts as an upload: what the viewer page can open is what a link can share.
#pragma once

#include <cstdint>
#include <span>

#include "gt/server/server.h"

namespace gt::cli {

// .gtrace through gt::server::ValidateGtrace (every chunk decoded); Chrome and PyTorch profiler (Kineto)
// JSON, plain or gzipped, through the viewer core's importer: it must yield at least one event.
// `max_inflated_bytes` bounds what a gzipped upload may expand to, `max_tracks` the timeline tracks its model
// may hold (LoadOptions::max_tracks; past it: kResourceExhausted, HTTP 413). Format: "gtrace", "chrome" or
// "kineto".
//
// The default track limit keeps a JSON upload's model under about 600 MB while it is built: a track costs
// ~2.4 KB however few events it holds, so a file of one event per thread costs ~40x its size, and 4 GiB of
// such JSON (what a gzipped upload may inflate to) would take ~170 GB. Real traces hold thousands.
constexpr uint32_t kMaxUploadTracks = 250'000;
StatusOr<server::Validation> ValidateViewerTrace(std::span<const uint8_t> bytes, uint64_t max_inflated_bytes,
                                                 uint32_t max_tracks = kMaxUploadTracks);

}  // namespace gt::cli
