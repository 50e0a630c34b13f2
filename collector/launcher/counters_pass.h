// The launcher's counters run (gcollect --counters): runs the app a second time with the injection's counters
// module and joins what it recorded into the timeline run's trace (join.h).
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "counters/selection.h"

namespace gt::launcher {

struct LaunchOptions;

// `base_env` is the injection environment of the timeline run without its Config variables; `output` is the
// finished timeline trace, rewritten in place with the counters joined. Returns false (having said why on
// stderr) when no counters could be added; the timeline trace is then left untouched.
bool RunCountersPass(const LaunchOptions& options, const config::Config& timeline_config,
                     const std::vector<config::EnvVar>& base_env, const std::string& output);

// The environment of a counters run (Config with modules = "counters", kernel records only, plus the counters
// options) appended to `env`. `self_describing_root`: every process writes its own process record (the join
// pairs processes by those names); off when gcollect writes the root's record itself (--counters-only).
void AppendCountersRunEnv(const LaunchOptions& options, config::Config config, bool self_describing_root,
                          std::vector<config::EnvVar>* env);
void AppendCountersRunEnv(const counters::CountersOptions& options, config::Config config,
                          bool self_describing_root, std::vector<config::EnvVar>* env);

// One line before a counters run: the set, the selection, the flush, the cost per pass.
void PrintCountersPlan(const LaunchOptions& options, const char* run);

// gcollect --counters-only: `output` holds the merged counters run; rewrites it in place as a counters-only
// trace (join.h BuildCountersOnlyTrace) and prints what was profiled and what was not. With
// --cache-control all the app runs once more for the SASS-patched metrics (`config`/`base_env` as for
// RunCountersPass).
bool FinishCountersOnly(const LaunchOptions& options, const config::Config& config,
                        const std::vector<config::EnvVar>& base_env, const std::string& output);

}  // namespace gt::launcher
