// gcollect: runs an app under the injection library and turns what its processes wrote into one .gtrace.
//
// [SECTION] options      flag parsing (pure; tests cover every flag and every error)
// [SECTION] supervisor   fork/exec, signal forwarding, waiting for descendants (child subreaper)
// [SECTION] merge        concatenating per-process parts into the output
// [SECTION] summary      the short report printed when the app ends
// [SECTION] nvml         GPU metrics over time (libnvidia-ml.so.1 loaded at run time)
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "config/config.h"
#include "gt/name_stats.h"
#include "gt/status.h"
#include "gt/trace_data.h"
#include "gt/writer.h"

namespace gt::launcher {

// ---- [SECTION] options
// -------------------------------------------------------------------------------------------

struct LaunchOptions {
  std::string output;  // "" = default name chosen by DefaultOutputPath
  bool force_overwrite = false;
  uint32_t kinds = config::kTraceDefault;
  double delay_s = 0;
  double duration_s = 0;  // 0 = until the app ends
  config::CaptureMode capture = config::CaptureMode::kNone;
  std::string capture_nvtx_name;
  bool gpu_metrics = false;
  uint32_t gpu_metrics_interval_ms = 100;
  bool quiet = false;
  bool keep_parts = false;
  double wait_children_s = 5;  // how long to wait for descendants still running after the app exits
  std::string inject_lib;      // "" = beside the gcollect binary
  // Kernel counters: a second run of the app under the range profiler, joined into the trace.
  uint32_t counter_sets = 0;         // counters::CounterSet bits; 0 = no counters run
  std::string kernel_regex;          // --kernel-regex
  uint64_t launch_skip = 0;          // --launch-skip
  uint64_t launch_count = 0;         // --launch-count (0 = no total limit)
  int64_t counters_per_kernel = -1;  // --counters-per-kernel; -1 = 3, or no limit with --launch-count
  bool counters_only = false;        // --counters-only: no timeline run; kernels from the counters run
  bool cache_control_all = true;     // --cache-control all|none: own replay with the L2 flushed per pass
  bool cache_control_set = false;    // --cache-control given (it needs --counters)
  uint32_t pc_sampling_period_exp =
      0;  // --pc-sampling[=N]: PC sampling in the timeline run, 2^N cycles; 0 = off
  config::NcclPluginMode nccl_plugin = config::NcclPluginMode::kOps;  // --nccl-plugin
  uint32_t cpu_sample_hz = config::kCpuSampleDefaultHz;  // --sample=cpu|none, --sample-hz=N (0: off)
  double cpu_sample_max_overhead_pct = config::kCpuSampleDefaultOverheadPct;  // --sample-overhead=PCT
  int64_t osrt_threshold_ns = config::kOsrtDefaultThresholdNs;                // --osrt-threshold
  std::string upload_url;  // --upload URL: hand the finished trace to `gtrace upload` (a link is printed)
  std::vector<std::string> app;  // argv of the app
  bool help = false;
  bool version = false;
};

// NCCL_PROFILER_PLUGIN for the timeline run: the injection library's own path (NCCL dlopen's it and finds
// the plugin tables inside; nccl_profiler.h), unless --nccl-plugin=off or the user set the variable
// already (then `warning` says theirs is kept). "" = leave the variable alone.
std::string NcclProfilerPluginValue(config::NcclPluginMode mode, const char* user_value,
                                    const std::string& inject_path, std::string* warning);

// --trace=cublas,cudnn: the libraries' own NVTX ranges are off unless their *_NVTX_LEVEL variable is set
// (checked on the H200 with cuBLAS 13.1 and cuDNN 9: docs/collector.md). Appends the variables for the kinds
// asked for, each at level kLibraryNvtxLevel, unless the user set it already (theirs is kept).
inline constexpr const char* kLibraryNvtxLevel = "1";
void AppendLibraryTraceEnv(uint32_t kinds, const std::function<const char*(const char*)>& get_env,
                           std::vector<config::EnvVar>* env);
// libgtrace_osrt.so beside the injection library (how both are built and installed), or "" when missing.
std::string OsrtShimPath(const std::string& inject_path);
// What processes that never started CUDA left in the parts directory (osrt_abi.h): their waits, counted by
// the shim at exit.
struct OsrtUnrecorded {
  uint64_t waits = 0;
  uint64_t processes = 0;
};
OsrtUnrecorded CollectOsrtUnrecorded(const std::string& parts_dir);

// Returns kInvalidArgument with a one-line message naming the bad flag; never exits.
StatusOr<LaunchOptions> ParseOptions(const std::vector<std::string>& args);
std::string UsageText();
// "100ms", "0.5s", "2" (seconds) -> ms. False when malformed.
bool ParseDurationMs(const std::string& text, bool plain_is_seconds, double* ms);

// "<app>.gtrace" in the current directory, or "<app>-2.gtrace", "<app>-3.gtrace"... when taken.
std::string DefaultOutputPath(const std::string& app, const std::function<bool(const std::string&)>& exists);
// Appends ".gtrace" when missing.
std::string NormalizeOutputPath(const std::string& path);

// ---- [SECTION] supervisor
// ----------------------------------------------------------------------------------------

struct AppExit {
  bool started = false;
  int exit_code = 0;  // valid when !signaled
  bool signaled = false;
  int signal = 0;
  std::string error;                 // why it could not start ("No such file or directory")
  int64_t start_ns = 0, end_ns = 0;  // trace clock
  pid_t pid = 0;
  int still_running = 0;  // descendants alive when gcollect stopped waiting
  int ShellStatus() const { return !started ? 127 : signaled ? 128 + signal : exit_code; }
};

// One run of the app with `env_extra` added to the environment. Ctrl-C on gcollect reaches the app once (the
// terminal's signal, or gcollect's forwarding of a signal sent to gcollect alone); a third Ctrl-C kills it.
// `on_started(pid)` runs once the child exists (the caller writes its process record).
AppExit RunApp(const std::vector<std::string>& argv, const std::vector<config::EnvVar>& env_extra,
               double wait_children_s, const std::function<void(pid_t)>& on_started);

// Resolves argv[0] through PATH like execvp; "" when not found or not executable (with `why`).
std::string ResolveProgram(const std::string& name, std::string* why);

// ---- [SECTION] merge
// ---------------------------------------------------------------------------------------------

struct MergeResult {
  uint64_t bytes = 0;
  uint32_t parts = 0;
  uint32_t injected_processes = 0;  // parts written by the injection library (not gcollect's own)
  std::vector<std::string> problems;
};

// Concatenates `first` (gcollect's own part) and every *.gtrace in `parts_dir` (by pid order) into `output`,
// written to output + ".tmp" first and renamed without replacing an existing file unless `overwrite`.
StatusOr<MergeResult> MergeParts(const std::string& first, const std::string& parts_dir,
                                 const std::string& output, bool overwrite);

// ---- [SECTION] summary
// -------------------------------------------------------------------------------------------

struct KernelStat {
  std::string name;
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t max_ns = 0;
};
struct CopyStat {
  uint8_t copy_kind = 0;
  uint64_t count = 0, bytes = 0;
  int64_t total_ns = 0;
  double GBps() const { return total_ns > 0 ? double(bytes) / double(total_ns) : 0; }
};
struct TraceSummary {
  uint32_t processes = 0, devices = 0;
  uint64_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, nvtx = 0, syncs = 0, memory = 0;
  int64_t kernel_ns = 0;
  std::vector<KernelStat> top_kernels;  // by total GPU time, descending
  std::vector<CopyStat> copies;         // by copy kind
  int64_t gpu_span_ns = 0;              // first GPU activity start .. last end (summed over devices)
  int64_t gpu_busy_ns = 0;              // union of kernel/memcpy/memset intervals (summed over devices)
  double gpu_idle_share() const {
    return gpu_span_ns > 0 ? 1.0 - double(gpu_busy_ns) / double(gpu_span_ns) : 0;
  }
  std::vector<std::string> losses;    // "cupti_dropped_records: 12 (...)"
  std::vector<std::string> warnings;  // second CUPTI client, CUPTI unavailable, ...
};

// Built while the trace is read (a TraceSink), so gcollect's end-of-run report holds per-name aggregates and
// 16 bytes per GPU operation (for the idle share), never the records themselves: a 50 M-kernel run would
// otherwise need ~9 GB to print its summary.
class SummaryBuilder : public TraceSink {
 public:
  void OnStrings(StringId first_id, std::span<const std::string_view> strings) override;
  void OnProcesses(std::span<const ProcessRecord> r) override;
  void OnDevices(std::span<const DeviceRecord> r) override;
  void OnKernels(std::span<const KernelRecord> r) override;
  void OnMemcpys(std::span<const MemcpyRecord> r) override;
  void OnMemsets(std::span<const MemsetRecord> r) override;
  void OnApiCalls(std::span<const ApiCallRecord> r) override;
  void OnNvtx(std::span<const NvtxRecord> r) override { summary_.nvtx += r.size(); }
  void OnSyncs(std::span<const SyncRecord> r) override { summary_.syncs += r.size(); }
  void OnMemory(std::span<const MemoryRecord> r) override { summary_.memory += r.size(); }
  void OnLoss(std::span<const LossRecord> r) override;
  TraceSummary Finish(size_t top_n = 5);
  bool saw_devices() const { return !device_keys_.empty(); }

 private:
  const std::string& Str(StringId id) const;
  void NotePid(uint32_t pid);
  TraceSummary summary_;
  std::vector<std::string> strings_{""};
  std::vector<uint32_t> pids_;
  std::vector<std::pair<StringId, uint32_t>> device_keys_;  // (uuid, device id)
  NameAggregator kernel_names_;
  std::map<uint8_t, CopyStat> copies_;
  std::map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> busy_;  // per device: GPU operations
  std::vector<LossRecord> losses_;
};

TraceSummary Summarize(const TraceData& data, size_t top_n = 5);
std::string FormatSummary(const TraceSummary& s, const std::string& path, uint64_t bytes);

// ---- [SECTION] nvml
// ----------------------------------------------------------------------------------------------

// Samples every GPU through NVML on its own thread into `writer` (guarded by `mu`). Start() fails (with a
// reason) when libnvidia-ml.so.1 is missing or no GPU answers; gcollect then warns and runs without metrics.
class NvmlSampler {
 public:
  NvmlSampler();
  ~NvmlSampler();
  Status Start(TraceWriter* writer, std::mutex* mu, uint32_t interval_ms);
  void Stop();
  uint64_t samples() const;

  class Impl;

 private:
  Impl* impl_;
};

}  // namespace gt::launcher
