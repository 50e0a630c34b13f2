#include "gt/reader.h"
#include "gt/server/server.h"

namespace gt::server {

StatusOr<Validation> ValidateGtrace(std::span<const uint8_t> bytes) {
  if (!LooksLikeGtrace(bytes))
    return InvalidArgument(
        "not a .gtrace file (the first bytes are not the gtrace magic); this server stores .gtrace only: "
        "Chrome/Kineto JSON opens by dropping it into the viewer page");
  // Decoding every chunk is the only proof that the viewer will be able to open the file. The records are
  // discarded as they arrive: the base sink ignores them, so memory stays at one chunk.
  TraceSink discard;
  auto report = ReadTrace(bytes, discard);
  if (!report.ok()) return report.status();
  Validation v;
  v.records = report->records;
  v.chunks_lost = report->chunks_lost;
  v.bytes_lost = report->bytes_lost;
  v.truncated = report->truncated;
  for (size_t i = 0; i < report->problems.size() && i < 10; ++i) v.problems.push_back(report->problems[i]);
  if (report->chunks_ok == 0 && !report->clean()) {
    std::string why = report->problems.empty() ? "no intact chunk" : report->problems.front();
    return Corrupt("nothing in the file is readable (" + why + ")");
  }
  return v;
}

}  // namespace gt::server
