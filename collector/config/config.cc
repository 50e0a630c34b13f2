#include "config/config.h"

#include <time.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "gt/env.h"

namespace gt::config {
namespace {

struct KindName {
  const char* name;
  uint32_t bits;
};
constexpr KindName kKindNames[] = {
    {"cuda", kTraceCuda},
    {"kernel", kTraceKernel},
    {"memcpy", kTraceMemcpy},
    {"memset", kTraceMemset},
    {"runtime", kTraceRuntime},
    {"cuda-api", kTraceRuntime},
    {"api", kTraceRuntime},
    {"driver", kTraceDriver},
    {"cuda-driver", kTraceDriver},
    {"nvtx", kTraceNvtx},
    {"sync", kTraceSync},
    {"memory", kTraceMemory},
    {"overhead", kTraceOverhead},
    {"default", kTraceDefault},
    {"none", 0},
    {"runtime-all", kTraceRuntime | kTraceRuntimeAll},
    {"cublas", kTraceCublas},
    {"cudnn", kTraceCudnn},
    {"nccl", kTraceNccl},
    {"osrt", kTraceOsrt},
};
// Canonical single-bit names, for FormatTraceKinds.
constexpr KindName kBitNames[] = {
    {"kernel", kTraceKernel},     {"memcpy", kTraceMemcpy},
    {"memset", kTraceMemset},     {"runtime", kTraceRuntime},
    {"driver", kTraceDriver},     {"nvtx", kTraceNvtx},
    {"sync", kTraceSync},         {"memory", kTraceMemory},
    {"overhead", kTraceOverhead}, {"runtime-all", kTraceRuntimeAll},
    {"cublas", kTraceCublas},     {"cudnn", kTraceCudnn},
    {"nccl", kTraceNccl},         {"osrt", kTraceOsrt},
};

bool ParseI64(const char* s, int64_t* out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  long long v = std::strtoll(s, &end, 10);
  if (*end != '\0') return false;
  *out = v;
  return true;
}

}  // namespace

bool ParseOverheadPct(std::string_view text, double* pct) {
  const std::string s(text);
  if (s.empty() || s[0] == '-' || s[0] == '+' || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v) || v < 0 || v > 100) return false;
  *pct = v;
  return true;
}

bool ParseTraceKinds(std::string_view list, uint32_t* kinds, std::string* error) {
  uint32_t bits = 0;
  bool any = false;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) continue;
    bool found = false;
    for (const auto& k : kKindNames) {
      if (item == k.name) {
        bits |= k.bits;
        found = true;
        break;
      }
    }
    if (!found) {
      if (error) {
        *error = "unknown trace kind '" + std::string(item) +
                 "' (known: cuda, kernel, memcpy, memset, runtime, runtime-all, driver, nvtx, sync, memory, "
                 "overhead, "
                 "cublas, cudnn, nccl, osrt, default, none)";
      }
      return false;
    }
    any = true;
  }
  if (!any) {
    if (error) *error = "empty --trace list";
    return false;
  }
  *kinds = bits;
  return true;
}

std::string FormatTraceKinds(uint32_t kinds) {
  std::string out;
  for (const auto& k : kBitNames) {
    if (kinds & k.bits) {
      if (!out.empty()) out += ',';
      out += k.name;
    }
  }
  return out.empty() ? "none" : out;
}

const char* NcclPluginModeName(NcclPluginMode m) {
  switch (m) {
    case NcclPluginMode::kOff:
      return "off";
    case NcclPluginMode::kOps:
      return "ops";
    case NcclPluginMode::kChannels:
      return "channels";
  }
  return "ops";
}

bool ParseNcclPluginMode(std::string_view text, NcclPluginMode* m) {
  if (text == "off" || text == "none" || text == "0") return *m = NcclPluginMode::kOff, true;
  if (text == "ops" || text == "on" || text == "1") return *m = NcclPluginMode::kOps, true;
  if (text == "channels") return *m = NcclPluginMode::kChannels, true;
  return false;
}

void ConfigToEnv(const Config& c, void (*set)(void*, const char*, const char*), void* ctx) {
  set(ctx, env::Name(env::Var::kPartsDir), c.parts_dir.c_str());
  set(ctx, env::Name(env::Var::kTrace), FormatTraceKinds(c.kinds).c_str());
  std::string window = std::to_string(c.window_start_ns) + ":" + std::to_string(c.window_end_ns);
  set(ctx, env::Name(env::Var::kWindow), window.c_str());
  std::string capture = c.capture == CaptureMode::kProfilerApi ? "cudaProfilerApi"
                        : c.capture == CaptureMode::kNvtx      ? "nvtx:" + c.capture_nvtx_name
                                                               : "none";
  set(ctx, env::Name(env::Var::kCapture), capture.c_str());
  set(ctx, env::Name(env::Var::kLauncherPid), std::to_string(c.launcher_pid).c_str());
  set(ctx, env::Name(env::Var::kFlushMs), std::to_string(c.flush_interval_ms).c_str());
  set(ctx, env::Name(env::Var::kModules), c.modules.c_str());
  if (c.pc_sampling_period_exp)
    set(ctx, env::Name(env::Var::kPcSamplingPeriod), std::to_string(c.pc_sampling_period_exp).c_str());
  set(ctx, env::Name(env::Var::kNcclPlugin), NcclPluginModeName(c.nccl_plugin));
  set(ctx, env::Name(env::Var::kSampleHz), std::to_string(c.cpu_sample_hz).c_str());
  {
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.9g", c.cpu_sample_max_overhead_pct);
    set(ctx, env::Name(env::Var::kSampleOverhead), pct);
  }
  if (c.kinds & kTraceOsrt)
    set(ctx, env::Name(env::Var::kOsrtThresholdNs), std::to_string(c.osrt_threshold_ns).c_str());
}

Config ConfigFromEnv(const char* (*get)(void*, const char*), void* ctx, std::string* warnings) {
  Config c;
  auto warn = [&](const std::string& w) {
    if (warnings) *warnings += w + "\n";
  };
  if (const char* v = get(ctx, env::Name(env::Var::kPartsDir))) c.parts_dir = v;
  if (const char* v = get(ctx, env::Name(env::Var::kTrace))) {
    std::string err;
    if (!ParseTraceKinds(v, &c.kinds, &err)) warn("GTRACE_TRACE: " + err + "; using the default kinds");
  }
  if (const char* v = get(ctx, env::Name(env::Var::kWindow))) {
    std::string s = v;
    size_t colon = s.find(':');
    int64_t a = 0, b = 0;
    if (colon == std::string::npos || !ParseI64(s.substr(0, colon).c_str(), &a) ||
        !ParseI64(s.substr(colon + 1).c_str(), &b) || a < 0 || b < 0) {
      warn("GTRACE_WINDOW: expected START_NS:END_NS, got '" + s + "'; tracing everything");
    } else {
      c.window_start_ns = a;
      c.window_end_ns = b;
    }
  }
  if (const char* v = get(ctx, env::Name(env::Var::kCapture))) {
    std::string s = v;
    if (s == "cudaProfilerApi") {
      c.capture = CaptureMode::kProfilerApi;
    } else if (s.rfind("nvtx:", 0) == 0 && s.size() > 5) {
      c.capture = CaptureMode::kNvtx;
      c.capture_nvtx_name = s.substr(5);
    } else if (s != "none" && !s.empty()) {
      warn("GTRACE_CAPTURE: unknown '" + s + "'; capturing everything");
    }
  }
  if (const char* v = get(ctx, env::Name(env::Var::kLauncherPid))) {
    int64_t p = 0;
    if (ParseI64(v, &p) && p >= 0 && p <= UINT32_MAX) c.launcher_pid = static_cast<uint32_t>(p);
  }
  if (const char* v = get(ctx, env::Name(env::Var::kFlushMs))) {
    int64_t ms = 0;
    if (ParseI64(v, &ms) && ms >= 10 && ms <= 60000)
      c.flush_interval_ms = static_cast<uint32_t>(ms);
    else
      warn("GTRACE_FLUSH_MS: expected 10..60000");
  }
  if (const char* v = get(ctx, env::Name(env::Var::kModules))) c.modules = v;
  if (const char* v = get(ctx, env::Name(env::Var::kPcSamplingPeriod))) {
    int64_t e = 0;
    if (ParseI64(v, &e) && e >= kPcSamplingMinPeriodExp && e <= kPcSamplingMaxPeriodExp)
      c.pc_sampling_period_exp = static_cast<uint32_t>(e);
    else
      warn("GTRACE_PC_SAMPLING_PERIOD: expected 5..31 (period 2^N cycles); using the default");
  }
  if (const char* v = get(ctx, env::Name(env::Var::kNcclPlugin)))
    if (!ParseNcclPluginMode(v, &c.nccl_plugin))
      warn("GTRACE_NCCL_PLUGIN: expected off, ops or channels, got '" + std::string(v) + "'; using ops");
  if (const char* v = get(ctx, env::Name(env::Var::kSampleHz))) {
    int64_t hz = 0;
    if (ParseI64(v, &hz) && hz >= 0 && hz <= kCpuSampleMaxHz)
      c.cpu_sample_hz = static_cast<uint32_t>(hz);
    else
      warn("GTRACE_SAMPLE_HZ: expected 0..10000; using " + std::to_string(kCpuSampleDefaultHz));
  }
  if (const char* v = get(ctx, env::Name(env::Var::kSampleOverhead))) {
    double pct = 0;
    if (ParseOverheadPct(v, &pct))
      c.cpu_sample_max_overhead_pct = pct;
    else
      warn("GTRACE_SAMPLE_OVERHEAD: expected a percentage 0..100; using " +
           std::to_string(kCpuSampleDefaultOverheadPct));
  }
  if (const char* v = get(ctx, env::Name(env::Var::kOsrtThresholdNs))) {
    int64_t ns = 0;
    if (ParseI64(v, &ns) && ns >= 0)
      c.osrt_threshold_ns = ns;
    else
      warn("GTRACE_OSRT_THRESHOLD_NS: expected nanoseconds >= 0; using the default");
  }
  return c;
}

int64_t TraceClockNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

int64_t RealtimeNow() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

ClockSync ReadClockSync() {
  const int64_t before = TraceClockNow(), wall = RealtimeNow(), after = TraceClockNow();
  return {wall, before + (after - before) / 2};
}

}  // namespace gt::config
