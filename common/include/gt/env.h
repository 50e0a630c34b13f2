// Every GTRACE_* environment variable gtrace reads, with its default and meaning, in one table. Code reads
// them through env::Get / env::Name, never getenv("GTRACE_...") itself, so the table stays complete;
// docs/user-guide.md lists the same variables (tests/common/env_test.cc checks it names every entry).
#pragma once

#include <cstdint>
#include <span>

namespace gt::env {

enum class Var : uint8_t {
  // gcollect -> injection: the trace options of a run (collector/config/config.h round-trips them).
  kPartsDir,
  kTrace,
  kWindow,
  kCapture,
  kLauncherPid,
  kFlushMs,
  kModules,
  kPcSamplingPeriod,
  kNcclPlugin,
  kSampleHz,
  kSampleOverhead,
  kOsrtThresholdNs,
  // gcollect -> injection: the counters run (collector/counters/selection.h round-trips them).
  kCounters,
  kKernelRegex,
  kLaunchSkip,
  kLaunchCount,
  kCountersPerName,
  kCountersCache,
  kCountersSubset,
  // User settings of the collector.
  kQuiet,
  kDisable,
  kInjectLib,
  kCli,
  kNoPreload,
  // Measurement alternatives and debugging of the collector.
  kClock,
  kApi,
  kNoDriverLaunch,
  kKernelActivity,
  kCuptiAttrs,
  kDebugMarkers,
  kDebugBacktrace,
  kCountersDebug,
  kPcsVerbose,
  kPcsNoLines,
  kPcsGetData,
  kSampleVerbose,
  kSampleUnwind,
  kSampleAlternateMs,
  // The gtrace CLI and server.
  kStore,
  kWebRoot,
  kServer,
  kTokenFile,
  kCount
};

enum class Kind : uint8_t {
  kUser,      // a setting users may set
  kInternal,  // set by gcollect for the processes it traces; setting it by hand is for running the injection
              // alone
  kDebug,     // a debugging knob or measurement alternative, not for normal use
};

struct VarInfo {
  Var var;
  const char* name;           // "GTRACE_TRACE"
  const char* default_value;  // what an unset variable means
  const char* meaning;
  Kind kind;
};

std::span<const VarInfo> AllVars();  // in Var order
const VarInfo& Info(Var v);
inline const char* Name(Var v) {
  return Info(v).name;
}
const char* Get(Var v);  // the variable's value, nullptr when unset
inline bool IsSet(Var v) {
  return Get(v) != nullptr;
}
const char* KindName(Kind k);  // "user", "internal", "debug"

}  // namespace gt::env
