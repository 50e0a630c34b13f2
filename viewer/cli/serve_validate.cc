#include "serve_validate.h"

#include <algorithm>
#include <semaphore>
#include <thread>

#include "gt/reader.h"
#include "gt/viewer/load.h"

namespace gt::cli {

StatusOr<server::Validation> ValidateViewerTrace(std::span<const uint8_t> bytes, uint64_t max_inflated_bytes,
                                                 uint32_t max_tracks) {
  if (LooksLikeGtrace(bytes)) return server::ValidateGtrace(bytes);
  // The import builds the whole model once, on this upload's thread: the same work the receiver's page will
  // do, and the only proof that it can. A model takes several times the JSON's size in memory, so only a few
  // imports run at once (the others wait their turn); .gtrace validation streams and needs no such limit.
  static std::counting_semaphore<64> slots(
      std::clamp<std::ptrdiff_t>(std::ptrdiff_t(std::thread::hardware_concurrency()) / 4, 1, 4));
  slots.acquire();
  struct Release {
    ~Release() { slots.release(); }
  } release;
  viewer::LoadOptions options;
  options.threads = 1;
  options.max_inflated_bytes = max_inflated_bytes;
  options.max_tracks = max_tracks;
  auto model = viewer::LoadTrace(bytes, options);
  if (!model.ok()) return model.status();
  const viewer::TraceModel& m = *model.value();
  if (m.event_count == 0 && m.sample_count == 0)
    return InvalidArgument(
        "no trace events in the upload (a Chrome/Kineto JSON needs a \"traceEvents\" array)");
  server::Validation v;
  v.format = m.format == viewer::SourceFormat::kKinetoJson   ? "kineto"
             : m.format == viewer::SourceFormat::kNsysSqlite ? "nsys"
             : m.format == viewer::SourceFormat::kGtrace     ? "gtrace"  // gzipped
             : m.format == viewer::SourceFormat::kNcuCsv     ? "ncu"
                                                             : "chrome";
  v.records = m.event_count + m.sample_count;
  for (const auto& loss : m.losses)
    if (loss.name == "json_truncated") v.truncated = true;
  for (size_t i = 0; i < m.problems.size() && v.problems.size() < 10; ++i)
    v.problems.push_back(m.problems[i]);
  return v;
}

}  // namespace gt::cli
