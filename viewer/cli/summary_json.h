// Machine-readable `gtrace stats --json` and `gtrace diff --json`: the same tables as the text reports, for
// scripts and CI jobs (times in ns, shares 0..1, percentages as numbers; null where a change has no base).
#pragma once

#include <string>

#include "gt/viewer/model.h"

namespace gt::cli {

std::string StatsJson(const viewer::TraceModel& model);
std::string DiffJson(const viewer::TraceModel& before, const std::string& before_label,
                     const viewer::TraceModel& after, const std::string& after_label);

}  // namespace gt::cli
