#include "gt/env.h"

#include <cstdlib>

namespace gt::env {
namespace {

constexpr VarInfo kVars[] = {
    {Var::kPartsDir, "GTRACE_PARTS_DIR", "(none: nothing is written)",
     "directory where each traced process writes its part, `<pid>.gtrace`", Kind::kInternal},
    {Var::kTrace, "GTRACE_TRACE", "default", "record kinds, a comma list as in `gcollect --trace`",
     Kind::kInternal},
    {Var::kWindow, "GTRACE_WINDOW", "0:0 (everything)",
     "START_NS:END_NS on the trace clock (CLOCK_MONOTONIC); 0 = open end (`--delay`, `--duration`)",
     Kind::kInternal},
    {Var::kCapture, "GTRACE_CAPTURE", "none",
     "`cudaProfilerApi` or `nvtx:NAME`: record only inside those ranges (`--capture-range`)",
     Kind::kInternal},
    {Var::kLauncherPid, "GTRACE_LAUNCHER_PID", "0",
     "gcollect's pid: its direct child is the root app, whose process record gcollect writes",
     Kind::kInternal},
    {Var::kFlushMs, "GTRACE_FLUSH_MS", "1000", "how often each process flushes its records, 10..60000 ms",
     Kind::kInternal},
    {Var::kModules, "GTRACE_MODULES", "(none)",
     "optional injection modules, a comma list: `counters`, `pcsampling`", Kind::kInternal},
    {Var::kPcSamplingPeriod, "GTRACE_PC_SAMPLING_PERIOD", "10",
     "PC sampling period 2^N SM cycles, N in 5..31 (`--pc-sampling=N`)", Kind::kInternal},
    {Var::kNcclPlugin, "GTRACE_NCCL_PLUGIN", "ops",
     "what NCCL's profiler plugin records when NCCL loads it: `off`, `ops` (collectives and point-to-point) "
     "or "
     "`channels` (+ per-channel GPU times) (`--nccl-plugin`)",
     Kind::kInternal},
    {Var::kSampleHz, "GTRACE_SAMPLE_HZ", "0",
     "CPU stack sampling rate of every thread, 1..10000 Hz; 0 = off (`--sample=cpu|none`, `--sample-hz=N`)",
     Kind::kInternal},
    {Var::kSampleOverhead, "GTRACE_SAMPLE_OVERHEAD", "1.5",
     "the most of a busy thread's time CPU sampling may take, in percent; the rate comes down to keep it "
     "(never below 20 Hz); 0 = the rate as given (`--sample-overhead=PCT`)",
     Kind::kInternal},
    {Var::kOsrtThresholdNs, "GTRACE_OSRT_THRESHOLD_NS", "1000",
     "OS runtime waits shorter than this many ns are not recorded (`--osrt-threshold`; read by "
     "libgtrace_osrt.so)",
     Kind::kInternal},
    {Var::kCounters, "GTRACE_COUNTERS", "default", "counter sets of the counters run (`--counters=SET`)",
     Kind::kInternal},
    {Var::kKernelRegex, "GTRACE_KERNEL_REGEX", "(all kernels)",
     "profile only kernels whose name matches (`--kernel-regex`)", Kind::kInternal},
    {Var::kLaunchSkip, "GTRACE_LAUNCH_SKIP", "0",
     "matching launches to let run before profiling starts (`--launch-skip`)", Kind::kInternal},
    {Var::kLaunchCount, "GTRACE_LAUNCH_COUNT", "0 (no limit)",
     "matching launches to profile in all (`--launch-count`)", Kind::kInternal},
    {Var::kCountersPerName, "GTRACE_COUNTERS_PER_NAME", "3",
     "profiled launches per kernel name; 0 = no limit (`--counters-per-kernel`)", Kind::kInternal},
    {Var::kCountersCache, "GTRACE_COUNTERS_CACHE", "none",
     "`all`: gtrace's own replay with the L2 flushed before each pass; `none`: CUPTI's kernel replay "
     "(`--cache-control`)",
     Kind::kInternal},
    {Var::kCountersSubset, "GTRACE_COUNTERS_SUBSET", "all",
     "which metrics of the sets this run collects: `all`, `cache` or `other`", Kind::kInternal},
    {Var::kQuiet, "GTRACE_QUIET", "(unset)", "set: the injection prints nothing on stderr (`gcollect -q`)",
     Kind::kUser},
    {Var::kDisable, "GTRACE_DISABLE", "(unset)", "set: the injection library does nothing", Kind::kUser},
    {Var::kInjectLib, "GTRACE_INJECT_LIB", "libgtrace_inject.so beside gcollect",
     "the injection library gcollect loads into the app", Kind::kUser},
    {Var::kCli, "GTRACE_CLI", "gtrace beside gcollect", "the `gtrace` CLI gcollect runs for `--upload`",
     Kind::kUser},
    {Var::kNoPreload, "GTRACE_NO_PRELOAD", "(unset)",
     "set: gcollect does not LD_PRELOAD the injection (sanitizer runtimes stay first)", Kind::kUser},
    {Var::kClock, "GTRACE_CLOCK", "(unset: CUPTI's stamps shifted by a measured offset)",
     "`monotonic`: CUPTI's timestamp callback gives monotonic stamps directly (slower launches)",
     Kind::kDebug},
    {Var::kApi, "GTRACE_API", "(unset: API calls from callbacks)",
     "`activity`: API calls and syncs from CUPTI's RUNTIME/SYNCHRONIZATION kinds (the previous design)",
     Kind::kDebug},
    {Var::kNoDriverLaunch, "GTRACE_NO_DRIVER_LAUNCH", "(unset)", "set: no driver launch records",
     Kind::kDebug},
    {Var::kKernelActivity, "GTRACE_KERNEL_ACTIVITY", "(unset: CONCURRENT_KERNEL)",
     "`serial`: CUPTI's serialized KERNEL kind (kernels no longer overlap, ~2.4 us per kernel)",
     Kind::kDebug},
    {Var::kCuptiAttrs, "GTRACE_CUPTI_ATTRS", "(unset: CUPTI's defaults)",
     "device_buffer_mb=N,prealloc=N,pool_limit=N,host_pinned=0|1: CUPTI's device-buffer attributes",
     Kind::kDebug},
    {Var::kDebugMarkers, "GTRACE_DEBUG_MARKERS", "(unset)", "set: print NVTX marker records", Kind::kDebug},
    {Var::kDebugBacktrace, "GTRACE_DEBUG_BACKTRACE", "(unset)",
     "set: a crash in a traced process prints its backtrace", Kind::kDebug},
    {Var::kCountersDebug, "GTRACE_COUNTERS_DEBUG", "(unset)", "set: print each pass of gtrace's own replay",
     Kind::kDebug},
    {Var::kPcsVerbose, "GTRACE_PCS_VERBOSE", "(unset)",
     "set: PC sampling prints its steps and installs a crash handler", Kind::kDebug},
    {Var::kPcsNoLines, "GTRACE_PCS_NO_LINES", "(unset)", "set: PC sampling does not resolve source lines",
     Kind::kDebug},
    {Var::kPcsGetData, "GTRACE_PCS_GETDATA", "(unset: from the flush thread)",
     "`launch`: PC sampling takes its data in the app's launch callbacks", Kind::kDebug},
    {Var::kSampleVerbose, "GTRACE_SAMPLE_VERBOSE", "(unset)",
     "set: CPU sampling prints its costs per process at exit (handler, signal delivery, drain)",
     Kind::kDebug},
    {Var::kSampleUnwind, "GTRACE_SAMPLE_UNWIND", "(unset: cached rules)",
     "`libgcc`: CPU sampling unwinds every sample with libgcc's _Unwind_Backtrace, as its first version did "
     "(for comparisons)",
     Kind::kDebug},
    {Var::kSampleAlternateMs, "GTRACE_SAMPLE_ALTERNATE_MS", "(unset: sample all the time)",
     "N: CPU sampling samples only in every other N-ms window of CLOCK_MONOTONIC from its start (an A/B "
     "measure of its cost inside one process: scripts/gpu/sampling_ab.py); the verbose line gives the start",
     Kind::kDebug},
    {Var::kStore, "GTRACE_STORE", "$XDG_DATA_HOME/gtrace/store, else ~/.local/share/gtrace/store",
     "`gtrace serve`: where traces live (`--store`)", Kind::kUser},
    {Var::kWebRoot, "GTRACE_WEB_ROOT", "<bin>/../share/gtrace/web or build/wasm/web",
     "`gtrace serve`: the built web page (`--web-root`)", Kind::kUser},
    {Var::kServer, "GTRACE_SERVER", "(none)", "`gtrace upload`: the server URL (`--server`)", Kind::kUser},
    {Var::kTokenFile, "GTRACE_TOKEN_FILE", "(none)",
     "`gtrace upload`: the upload token's file (`--token-file`)", Kind::kUser},
};
static_assert(sizeof(kVars) / sizeof(kVars[0]) == static_cast<size_t>(Var::kCount), "one row per Var");

constexpr bool InVarOrder() {
  for (size_t i = 0; i < sizeof(kVars) / sizeof(kVars[0]); ++i)
    if (static_cast<size_t>(kVars[i].var) != i) return false;
  return true;
}
static_assert(InVarOrder(), "kVars is indexed by Var");

}  // namespace

std::span<const VarInfo> AllVars() {
  return kVars;
}

const VarInfo& Info(Var v) {
  return kVars[static_cast<size_t>(v)];
}

const char* Get(Var v) {
  return std::getenv(Info(v).name);
}

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kUser:
      return "user";
    case Kind::kInternal:
      return "internal";
    case Kind::kDebug:
      return "debug";
  }
  return "?";
}

}  // namespace gt::env
