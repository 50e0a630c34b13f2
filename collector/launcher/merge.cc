// Per-process parts -> one .gtrace: gcollect's own part first (metadata, the root process, GPU metrics), then
// each traced process (common/include/gt/parts.h does the concatenation; `gtrace recover` uses it too).
#include "gt/parts.h"
#include "launcher/launcher.h"

#include <algorithm>

namespace gt::launcher {

StatusOr<MergeResult> MergeParts(const std::string& first, const std::string& parts_dir,
                                 const std::string& output, bool overwrite) {
  std::vector<std::string> parts = ListParts(parts_dir);
  parts.erase(std::remove(parts.begin(), parts.end(), first), parts.end());
  if (!first.empty()) parts.insert(parts.begin(), first);
  auto done = ConcatenateParts(parts, output, overwrite);
  if (!done.ok()) return done.status();
  MergeResult result;
  result.bytes = done->bytes;
  result.parts = done->parts;
  result.injected_processes = done->parts - (first.empty() ? 0 : 1);
  result.problems = std::move(done->problems);
  return result;
}

}  // namespace gt::launcher
