// The launcher's counters run (gcollect --counters): runs the app a second time with the injection's counters
// module and joins what it recorded into the timeline run's trace (join.h).
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace gt::collector {

struct LaunchOptions;

// `base_env` is the injection environment of the timeline run without its Config variables; `output` is the
// finished timeline trace, rewritten in place with the counters joined. Returns false (having said why on
// stderr) when no counters could be added; the timeline trace is then left untouched.
bool RunCountersPass(const LaunchOptions& options, const Config& timeline_config,
                     const std::vector<EnvVar>& base_env, const std::string& output);

}  // namespace gt::collector
