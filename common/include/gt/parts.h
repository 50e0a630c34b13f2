// The part files of one gcollect run (OUTPUT.parts/): gcollect's own part (gcollect.gtrace) and one per
// traced process (<pid>.gtrace). A .gtrace is a sequence of segments, so the trace is the parts one after
// another: gcollect concatenates them when the app ends, and `gtrace recover` does the same for a run whose
// gcollect was killed (kill -9, power loss) before it could. A part cut short still reads up to its last
// flush.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gt/status.h"

namespace gt {

// gcollect.gtrace first, then the other *.gtrace files by pid (the number their name starts with).
std::vector<std::string> ListParts(const std::string& parts_dir);

struct ConcatResult {
  uint64_t bytes = 0;
  uint32_t parts = 0;                 // parts copied
  std::vector<std::string> problems;  // parts that could not be read (skipped), fsync failures
};

// Writes `parts` one after another into `output`, through output + ".tmp" and a rename (never replacing an
// existing `output` unless `overwrite`). A part that cannot be read is skipped and named in `problems`.
StatusOr<ConcatResult> ConcatenateParts(const std::vector<std::string>& parts, const std::string& output,
                                        bool overwrite);

// A trace file's bytes, or, for a NAME.gtrace.parts directory, its parts joined in memory (what `gtrace
// recover` would write), so `gtrace info`, `stats` and the native viewer open an interrupted run as it is.
// *was_parts tells which (may be null).
StatusOr<std::string> ReadTraceOrParts(const std::string& path, bool* was_parts = nullptr);

}  // namespace gt
