// The C API of in-process recording: what `gtrace.profile()` / `gtrace.start()` in Python call through ctypes
// (python/gtrace/profile.py), and what any C/C++ program may call after dlopen. The same injection library as
// under gcollect, started by the app instead of the CUDA driver: CUPTI attaches to a process whose CUDA may
// already be running (as torch.profiler does), recording is switched on and off per step, and the trace is
// published at stop.
//
// Every function returns kOk, kUnderLauncher (gcollect traces this process: the call did nothing, the
// gcollect trace has everything) or kError with a message in `error` (NUL-terminated, truncated to
// error_len). None of them throws or aborts: bad input is a message.
#include <cuda.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "inject/injection.h"

namespace gt::inject {
namespace {

enum Result : int { kOk = 0, kError = 1, kUnderLauncher = 2 };

// What gtrace_inproc_state reports.
enum State : int { kIdle = 0, kPaused = 1, kRecording = 2, kLauncher = 3, kStopped = 4 };

int Fail(const std::string& message, char* error, size_t error_len) {
  if (error && error_len) {
    size_t n = std::min(message.size(), error_len - 1);
    std::memcpy(error, message.data(), n);
    error[n] = '\0';
  }
  return kError;
}

// "trace=kernel,nvtx;flush_ms=500": the subset of gcollect's options that applies in-process.
bool ParseOptions(std::string_view spec, config::Config* c, std::string* error) {
  while (!spec.empty()) {
    size_t end = spec.find(';');
    std::string_view item = spec.substr(0, end);
    spec = end == std::string_view::npos ? std::string_view() : spec.substr(end + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string_view key = item.substr(0, eq);
    std::string value(eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1));
    if (key == "trace") {
      if (!config::ParseTraceKinds(value, &c->kinds, error)) return false;
    } else if (key == "flush_ms") {
      char* rest = nullptr;
      long ms = std::strtol(value.c_str(), &rest, 10);
      if (value.empty() || *rest || ms < 10 || ms > 600000) {
        *error = "flush_ms must be a whole number of milliseconds from 10 to 600000, not '" + value + "'";
        return false;
      }
      c->flush_interval_ms = static_cast<uint32_t>(ms);
    } else {
      *error = "unknown option '" + std::string(key) + "' (known: trace, flush_ms)";
      return false;
    }
  }
  return true;
}

// NVTX ranges reach CUPTI only through NVTX's injection hook, which each NVTX user reads on its first call:
// point it at this library before the app (or gtrace.range) makes one.
void OfferNvtxInjection() {
  if (std::getenv("NVTX_INJECTION64_PATH")) return;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&OfferNvtxInjection), &info) && info.dli_fname)
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

// CUPTI reports a device when a context is created on it: attached to a CUDA that already runs, the trace
// would name no device (no chip, no peaks for the roofline). Devices with an active primary context are
// described from the driver instead, in CUPTI's own record, through the same decoding. A CUDA not yet
// initialized is left alone: its devices are reported as usual when it starts.
void DescribeRunningDevices(Injection& inj) {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!cuda) return;
  auto sym = [cuda](const char* name) { return dlsym(cuda, name); };
  auto get_count = reinterpret_cast<CUresult (*)(int*)>(sym("cuDeviceGetCount"));
  auto get = reinterpret_cast<CUresult (*)(CUdevice*, int)>(sym("cuDeviceGet"));
  auto attr = reinterpret_cast<CUresult (*)(int*, CUdevice_attribute, CUdevice)>(sym("cuDeviceGetAttribute"));
  auto name_of = reinterpret_cast<CUresult (*)(char*, int, CUdevice)>(sym("cuDeviceGetName"));
  auto total_mem = reinterpret_cast<CUresult (*)(size_t*, CUdevice)>(sym("cuDeviceTotalMem_v2"));
  auto uuid_of = reinterpret_cast<CUresult (*)(CUuuid*, CUdevice)>(sym("cuDeviceGetUuid_v2"));
  auto ctx_state =
      reinterpret_cast<CUresult (*)(CUdevice, unsigned*, int*)>(sym("cuDevicePrimaryCtxGetState"));
  int count = 0;
  if (!get_count || !get || !attr || !name_of || !total_mem || !ctx_state ||
      get_count(&count) != CUDA_SUCCESS)
    return;  // not initialized (or an old driver): CUPTI reports devices as their contexts start
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice dev;
    unsigned flags = 0;
    int active = 0;
    if (get(&dev, ordinal) != CUDA_SUCCESS || ctx_state(dev, &flags, &active) != CUDA_SUCCESS || !active)
      continue;
    auto a = [&](CUdevice_attribute which) {
      int v = 0;
      return attr(&v, which, dev) == CUDA_SUCCESS ? static_cast<uint32_t>(v) : 0u;
    };
    CUpti_ActivityDevice5 d{};
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.id = static_cast<uint32_t>(ordinal);
    d.computeCapabilityMajor = a(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    d.computeCapabilityMinor = a(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d.numMultiprocessors = a(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d.coreClockRate = a(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    d.l2CacheSize = a(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    d.maxSharedMemoryPerMultiprocessor = a(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    d.maxSharedMemoryPerBlock = a(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    d.maxRegistersPerMultiprocessor = a(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    d.maxRegistersPerBlock = a(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    d.numThreadsPerWarp = a(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    d.maxWarpsPerMultiprocessor = a(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) /
                                  (d.numThreadsPerWarp ? d.numThreadsPerWarp : 32);
    d.maxBlocksPerMultiprocessor = a(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    d.maxThreadsPerBlock = a(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    // KB/s, as CUPTI reports it: memory clock (kHz) x bus width (bytes) x 2 (double data rate).
    d.globalMemoryBandwidth = uint64_t(a(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)) *
                              (a(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH) / 8) * 2;
    size_t bytes = 0;
    if (total_mem(&bytes, dev) == CUDA_SUCCESS) d.globalMemorySize = bytes;
    char name[256] = {0};
    if (name_of(name, sizeof name - 1, dev) == CUDA_SUCCESS) d.name = name;
    if (uuid_of) uuid_of(&d.uuid, dev);
    std::lock_guard<std::mutex> lock(inj.mu);
    if (!inj.finished) inj.decoder->Decode(reinterpret_cast<const CUpti_Activity*>(&d));
  }
}

}  // namespace
}  // namespace gt::inject

#define GT_EXPORT extern "C" __attribute__((visibility("default")))

GT_EXPORT int gtrace_inproc_abi_version(void) {
  return 1;
}

GT_EXPORT int gtrace_inproc_state(void) {
  using namespace gt::inject;
  Injection* inj = GetInjection();
  if (inj && inj->inproc_output.empty()) return kLauncher;
  if (!inj) return TracedByLauncher() ? kLauncher : kIdle;
  std::lock_guard<std::mutex> lock(inj->mu);
  if (inj->finished) return kStopped;
  return inj->tracing_enabled.load() ? kRecording : kPaused;
}

// Attaches (or re-opens a trace) with recording paused; `output` is the .gtrace written at stop, replaced if
// it exists. A crash before stop leaves OUTPUT.parts/, which `gtrace recover` turns into a trace.
GT_EXPORT int gtrace_inproc_start(const char* output, const char* options, char* error, size_t error_len) {
  using namespace gt::inject;
  if (!output || !*output) return Fail("an output path is required", error, error_len);
  if (TracedByLauncher() && (!GetInjection() || GetInjection()->inproc_output.empty())) return kUnderLauncher;
  gt::config::Config c;
  std::string message;
  if (!ParseOptions(options ? options : "", &c, &message)) return Fail(message, error, error_len);
  std::string out = output;
  c.parts_dir = out + ".parts";
  OfferNvtxInjection();
  if (!StartInProcess(c, out, &message)) return Fail(message, error, error_len);
  DescribeRunningDevices(*GetInjection());
  return kOk;
}

// Switches recording on (1) or off (0) between steps: what a schedule's warmup and active steps do.
GT_EXPORT int gtrace_inproc_record(int on, char* error, size_t error_len) {
  using namespace gt::inject;
  Injection* inj = GetInjection();
  if (inj && inj->inproc_output.empty()) return kUnderLauncher;
  if (!inj || inj->finished)
    return Fail("no recording is running in this process (start one first)", error, error_len);
  if (inj->tracing_enabled.load() != (on != 0)) EnableTraceKinds(*inj, on != 0);
  return kOk;
}

GT_EXPORT int gtrace_inproc_stop(char* error, size_t error_len) {
  using namespace gt::inject;
  Injection* inj = GetInjection();
  if ((inj && inj->inproc_output.empty()) || (!inj && TracedByLauncher())) return kUnderLauncher;
  std::string message;
  if (!StopInProcess(&message)) return Fail(message, error, error_len);
  return kOk;
}

// NVTX ranges for gtrace.range(): through NVTX itself, so gcollect and in-process recording see them alike.
GT_EXPORT int gtrace_inproc_range_push(const char* name) {
  gt::inject::OfferNvtxInjection();
  return nvtxRangePushA(name ? name : "");
}

GT_EXPORT int gtrace_inproc_range_pop(void) {
  return nvtxRangePop();
}
