// Trace options shared by the launcher (parses flags, exports them) and the injection library (reads them
// from the environment of every traced process, children included). One place decides names and defaults.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gt/model.h"
#include "gt/nvtx_domains.h"

namespace gt::config {

// Record kinds a run can ask for. Bits travel in GTRACE_TRACE as a comma list of names.
enum TraceKind : uint32_t {
  kTraceKernel = 1u << 0,      // CONCURRENT_KERNEL
  kTraceMemcpy = 1u << 1,      // MEMCPY
  kTraceMemset = 1u << 2,      // MEMSET
  kTraceRuntime = 1u << 3,     // RUNTIME API calls
  kTraceDriver = 1u << 4,      // DRIVER API calls (opt-in: mostly noise under PyTorch)
  kTraceNvtx = 1u << 5,        // MARKER + MARKER_DATA
  kTraceSync = 1u << 6,        // SYNCHRONIZATION
  kTraceMemory = 1u << 7,      // MEMORY2 (allocations / frees)
  kTraceOverhead = 1u << 8,    // OVERHEAD (CUPTI's own cost)
  kTraceRuntimeAll = 1u << 9,  // also the noisy runtime queries skipped by default (cudaGetDevice, ...)
  // Library calls as ranges: the libraries' own NVTX ranges (domains "cuBLAS", "cuDNN", "NCCL"), switched on
  // by gcollect through their *_NVTX_LEVEL variables (docs/collector.md, "Library calls and OS waits").
  kTraceCublas = 1u << 10,  // cuBLAS and cuBLASLt API calls
  kTraceCudnn = 1u << 11,   // cuDNN API calls
  kTraceNccl = 1u << 12,    // NCCL API calls (NCCL's NVTX is on unless NCCL_NVTX_DISABLE is set)
  kTraceOsrt = 1u << 13,    // OS runtime waits above a threshold (the preloaded libgtrace_osrt.so)
};
inline constexpr uint32_t kTraceLibraries = kTraceCublas | kTraceCudnn | kTraceNccl;
// NVTX records are needed for user ranges or for the libraries' own ranges.
inline bool WantsNvtx(uint32_t kinds) {
  return kinds & (kTraceNvtx | kTraceLibraries);
}
// The NVTX domains library calls arrive in, and the one gtrace gives OS runtime waits (gt/model.h spells
// them).
inline constexpr const char* kCublasDomain = kCublasNvtxDomain;
inline constexpr const char* kCudnnDomain = kCudnnNvtxDomain;
inline constexpr const char* kNcclDomain = kNcclNvtxDomain;
inline constexpr const char* kOsrtDomain = kOsRuntimeNvtxDomain;
// Default --osrt-threshold: as Nsight Systems', waits shorter than this are not recorded.
inline constexpr int64_t kOsrtDefaultThresholdNs = 1000;

inline constexpr uint32_t kTraceCuda =
    kTraceKernel | kTraceMemcpy | kTraceMemset | kTraceRuntime | kTraceSync | kTraceMemory;
inline constexpr uint32_t kTraceDefault = kTraceCuda | kTraceNvtx | kTraceOverhead;

// --pc-sampling[=N]: the sampling period is 2^N SM cycles; CUPTI accepts 5..31.
inline constexpr uint32_t kPcSamplingMinPeriodExp = 5;
inline constexpr uint32_t kPcSamplingMaxPeriodExp = 31;
inline constexpr uint32_t kPcSamplingDefaultPeriodExp = 10;  // 2.9 M samples, 0 dropped on the H200 suite

// --sample=cpu|none, --sample-hz=N: CPU stack sampling of every thread of the traced processes, on by
// default: its governor (--sample-overhead) keeps its cost at +1.0-1.4% against the trace without it,
// measured inside one process on the H200 hosts (docs/benchmarks.md "in-process A/B"), and long sampled
// PyTorch runs there (3 x 514 s at once) ran to their end since the handler stopped calling libgcc.
inline constexpr uint32_t kCpuSampleDefaultHz = 1000;  // gcollect's rate unless --sample-hz or --sample=none
inline constexpr uint32_t kCpuSampleMaxHz = 10000;
// --sample-overhead=PCT: the most of a busy thread's time sampling may take (inject/cpu_sampler.h's
// governor).
inline constexpr double kCpuSampleDefaultOverheadPct = 1.5;

// kInProcess: the app switches recording itself (gtrace.profile in Python, collector/inject/inproc.cc); never
// travels in the environment.
enum class CaptureMode : uint8_t { kNone = 0, kProfilerApi = 1, kNvtx = 2, kInProcess = 3 };
// A capture range that the injection's callbacks open and close (cudaProfilerStart/Stop or a named NVTX
// range).
inline bool HasCaptureRange(CaptureMode m) {
  return m == CaptureMode::kProfilerApi || m == CaptureMode::kNvtx;
}

// What NCCL's profiler plugin records (gcollect --nccl-plugin; inject/nccl_profiler.h).
enum class NcclPluginMode : uint8_t { kOff = 0, kOps = 1, kChannels = 2 };
const char* NcclPluginModeName(NcclPluginMode m);                    // "off", "ops", "channels"
bool ParseNcclPluginMode(std::string_view text, NcclPluginMode* m);  // also "on" = ops
bool ParseOverheadPct(std::string_view text, double* pct);           // "1.5" -> 1.5; 0..100, finite

struct Config {
  uint32_t kinds = kTraceDefault;
  std::string parts_dir;        // where each traced process writes <pid>.gtrace
  int64_t window_start_ns = 0;  // trace clock (CLOCK_MONOTONIC); 0 = from the start
  int64_t window_end_ns = 0;    // 0 = until the end
  CaptureMode capture = CaptureMode::kNone;
  std::string capture_nvtx_name;  // for kNvtx
  uint32_t launcher_pid =
      0;  // gcollect's pid: its direct child is the root app, whose ProcessRecord gcollect writes
  uint32_t flush_interval_ms = 1000;
  std::string modules;  // optional injection modules, comma list (e.g. "counters"); see inject/modules.cc
  uint32_t pc_sampling_period_exp =
      0;  // --pc-sampling=N: period 2^N cycles (module "pcsampling"); 0 = default
  NcclPluginMode nccl_plugin = NcclPluginMode::kOps;  // when NCCL loads the plugin (NCCL_PROFILER_PLUGIN)
  uint32_t cpu_sample_hz = 0;                         // sampled CPU stacks (inject/cpu_sampler.h); 0 = off
  double cpu_sample_max_overhead_pct = kCpuSampleDefaultOverheadPct;  // --sample-overhead; 0 = fixed rate
  int64_t osrt_threshold_ns = kOsrtDefaultThresholdNs;  // --osrt-threshold (read by libgtrace_osrt.so itself)
};

// "cuda,nvtx" -> bits. Names: cuda, kernel, memcpy, memset, runtime (alias cuda-api, api), driver
// (cuda-driver), nvtx, sync, memory, overhead, cublas, cudnn, nccl, osrt, default, none. Returns false with
// `error` set on an unknown name.
bool ParseTraceKinds(std::string_view list, uint32_t* kinds, std::string* error);
std::string FormatTraceKinds(uint32_t kinds);

// Environment round trip. Names: GTRACE_PARTS_DIR, GTRACE_TRACE, GTRACE_WINDOW, GTRACE_CAPTURE,
// GTRACE_LAUNCHER_PID, GTRACE_FLUSH_MS, GTRACE_MODULES, GTRACE_PC_SAMPLING_PERIOD, GTRACE_NCCL_PLUGIN,
// GTRACE_OSRT_THRESHOLD_NS (with osrt only).
struct EnvVar {
  std::string name, value;
};
void ConfigToEnv(const Config& config, void (*set)(void* ctx, const char* name, const char* value),
                 void* ctx);
// Reads through `get` (getenv in production, a map in tests). Malformed values fall back to defaults and are
// described in `warnings` (the injection must never abort the app over a bad variable).
Config ConfigFromEnv(const char* (*get)(void* ctx, const char* name), void* ctx, std::string* warnings);

// Trace clock: CLOCK_MONOTONIC nanoseconds, the same in every process of the machine.
int64_t TraceClockNow();
int64_t RealtimeNow();
// One anchor of the trace clock to the wall clock: the wall clock read between two trace-clock reads, paired
// with their midpoint. Merges place hosts from these (and fit drift when a run records one every few
// seconds).
ClockSync ReadClockSync();

}  // namespace gt::config
