// The counters module: CUPTI Range Profiler per kernel launch (see counters_module.h for the why).
//
// Sequence (the order CUPTI accepts, checked on the H200): lazily at the first launch of a context,
// cuptiProfilerInitialize -> DeviceSupported -> chip name -> counter availability -> host config
// (host_config.h)
// -> cuptiRangeProfilerEnable -> counter data image -> SetConfig(auto range, kernel replay). A selected
// launch is profiled between Start (launch ENTER) and Stop (launch EXIT); then decode, evaluate range 0,
// write the values and re-arm. Launches that are not selected run with the profiler stopped, at full speed.
//
// Two ways to replay a profiled launch once per pass:
// - CUPTI's kernel replay (--cache-control none, and the second counters run of --cache-control all). CUPTI
//   saves and restores device memory itself, through the L2, so each pass starts with the restore's dirty
//   lines (DRAM writes read high) and with the kernel's code and constants cached.
// - Our own replay (the cache-sensitive metrics of --cache-control all, what ncu does by default). The
//   launch's ENTER callback saves device memory (CUPTI checkpoint API), and for each pass restores it, runs a
//   kernel that leaves the L2 holding only clean lines of a buffer the app never touches, and re-issues the
//   app's launch with the same arguments between cuptiRangeProfilerStart/Stop (user replay). Memory is
//   restored once more and the app's own launch then runs unprofiled. The re-issued launches are ours: their
//   kernel records are dropped (NoteOwnLaunch). Why the metrics are split over two runs: selection.h,
//   MetricSubset.
//
// Graph launches run their kernel nodes without launch calls, so neither way sees them. The module reads each
// executable graph when it is instantiated (graph_nodes.h) and, at a cuGraphLaunch whose kernels the selector
// picks, saves device memory, issues the graph's nodes itself one by one (the picked kernels profiled as
// above), restores memory and lets the app's graph launch run (graph_plan.h has the order and the pairing).
//
// [SECTION] Driver entry points
// [SECTION] L2 flush kernel
// [SECTION] Per-context sessions
// [SECTION] Launch parameters and re-issue
// [SECTION] Own replay (--cache-control all)
// [SECTION] Graph launches
// [SECTION] Module entry points
#include <cupti_checkpoint.h>  // NV::Cupti::Checkpoint
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <vector>

#include "counters/host_config.h"
#include "counters/join.h"
#include "counters/metric_sets.h"
#include "counters/selection.h"
#include "cupti/cupti_result.h"
#include "decode/cupti_decode.h"
#include "decode/launch_cbids.h"
#include "gt/env.h"
#include "inject/counters_module.h"
#include "inject/graph_nodes.h"
#include "inject/injection.h"

namespace gt::inject {

using decode::Demangle;

namespace {

using counters::MetricHost;
using counters::MetricPlan;
using NV::Cupti::Checkpoint::CUpti_Checkpoint;

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Driver entry points
// ---------------------------------------------------------------------------------------------------------------

// The driver entry points the module calls itself. The driver is loaded (it is calling us); libcudart dlopens
// it privately (RTLD_LOCAL), so look in libcuda itself, without loading it again and without a link-time
// dependency.

using LaunchKernelFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, CUstream, void**, void**);
using LaunchKernelExFn = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
using LaunchCooperativeFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                         unsigned, unsigned, CUstream, void**);

struct DriverApi {
  CUresult (*func_get_attribute)(int*, CUfunction_attribute, CUfunction) = nullptr;
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  // Every launch entry point the callbacks profile, so a pass re-issues the app's launch exactly as made.
  LaunchKernelFn launch_kernel = nullptr, launch_kernel_ptsz = nullptr;
  LaunchKernelExFn launch_kernel_ex = nullptr, launch_kernel_ex_ptsz = nullptr;
  LaunchCooperativeFn launch_cooperative = nullptr, launch_cooperative_ptsz = nullptr;
  CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus*) = nullptr;
  CUresult (*ctx_get_device)(CUdevice*) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
};

const DriverApi& Driver() {
  static DriverApi api = [] {
    DriverApi a;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    auto sym = [&](const char* name) { return lib ? dlsym(lib, name) : dlsym(RTLD_DEFAULT, name); };
    a.func_get_attribute = reinterpret_cast<decltype(a.func_get_attribute)>(sym("cuFuncGetAttribute"));
    a.module_load_data = reinterpret_cast<decltype(a.module_load_data)>(sym("cuModuleLoadData"));
    a.module_get_function = reinterpret_cast<decltype(a.module_get_function)>(sym("cuModuleGetFunction"));
    a.mem_alloc = reinterpret_cast<decltype(a.mem_alloc)>(sym("cuMemAlloc_v2"));
    a.launch_kernel = reinterpret_cast<LaunchKernelFn>(sym("cuLaunchKernel"));
    a.launch_kernel_ptsz = reinterpret_cast<LaunchKernelFn>(sym("cuLaunchKernel_ptsz"));
    a.launch_kernel_ex = reinterpret_cast<LaunchKernelExFn>(sym("cuLaunchKernelEx"));
    a.launch_kernel_ex_ptsz = reinterpret_cast<LaunchKernelExFn>(sym("cuLaunchKernelEx_ptsz"));
    a.launch_cooperative = reinterpret_cast<LaunchCooperativeFn>(sym("cuLaunchCooperativeKernel"));
    a.launch_cooperative_ptsz = reinterpret_cast<LaunchCooperativeFn>(sym("cuLaunchCooperativeKernel_ptsz"));
    a.ctx_synchronize = reinterpret_cast<decltype(a.ctx_synchronize)>(sym("cuCtxSynchronize"));
    a.stream_is_capturing = reinterpret_cast<decltype(a.stream_is_capturing)>(sym("cuStreamIsCapturing"));
    a.ctx_get_device = reinterpret_cast<decltype(a.ctx_get_device)>(sym("cuCtxGetDevice"));
    a.device_get_attribute = reinterpret_cast<decltype(a.device_get_attribute)>(sym("cuDeviceGetAttribute"));
    return a;
  }();
  return api;
}

// Launches the module makes itself (the L2 flush, replay passes) come back through the same launch callbacks;
// they must not be counted, selected or profiled.
thread_local bool t_internal_launch = false;

// Marks the driver calls made in its scope as the module's own; nests.
class OwnCalls {
 public:
  OwnCalls() : outer_(t_internal_launch) { t_internal_launch = true; }
  ~OwnCalls() { t_internal_launch = outer_; }
  OwnCalls(const OwnCalls&) = delete;
  OwnCalls& operator=(const OwnCalls&) = delete;

 private:
  bool outer_;
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] L2 flush kernel
// ---------------------------------------------------------------------------------------------------------------

// --cache-control all: before each replay pass a kernel reads a buffer three times the L2's size with
// L2-allocating loads (ld.global.cg), so dirty lines (the app's, and the memory restore's) are written back
// during the flush and the L2 holds only clean lines of a buffer the app never touches. It runs on the
// profiled launch's stream before cuptiRangeProfilerStart, so it is not counted; being another kernel, it
// also leaves the profiled kernel's code and constants out of the SM's caches, as ncu's flush does.
// Hand-written from the equivalent CUDA (grid-stride __ldcg(uint4) xor-reduction) compiled with `nvcc -ptx`;
// PTX ISA 7.0 so any driver since CUDA 11 JITs it.
constexpr const char kFlushPtx[] = R"PTX(.version 7.0
.target sm_75
.address_size 64
  // .globl	gtrace_l2_flush
.visible .entry gtrace_l2_flush(
  .param .u64 gtrace_l2_flush_param_0,
  .param .u64 gtrace_l2_flush_param_1,
  .param .u64 gtrace_l2_flush_param_2
)
{
  .reg .pred 	%p<4>;
  .reg .b32 	%r<17>;
  .reg .b64 	%rd<16>;
  ld.param.u64 	%rd7, [gtrace_l2_flush_param_0];
  ld.param.u64 	%rd8, [gtrace_l2_flush_param_1];
  ld.param.u64 	%rd9, [gtrace_l2_flush_param_2];
  mov.u32 	%r3, %ctaid.x;
  mov.u32 	%r4, %ntid.x;
  cvt.u64.u32 	%rd1, %r4;
  mul.wide.u32 	%rd10, %r3, %r4;
  mov.u32 	%r5, %tid.x;
  cvt.u64.u32 	%rd11, %r5;
  add.s64 	%rd15, %rd10, %rd11;
  setp.ge.u64 	%p1, %rd15, %rd8;
  @%p1 bra 	$L__BB0_5;
  mov.u32 	%r7, %nctaid.x;
  cvt.u64.u32 	%rd12, %r7;
  mul.lo.s64 	%rd3, %rd12, %rd1;
  cvta.to.global.u64 	%rd4, %rd9;
  mov.u32 	%r16, 0;
$L__BB0_2:
  shl.b64 	%rd14, %rd15, 4;
  add.s64 	%rd13, %rd7, %rd14;
  ld.global.cg.v4.u32 {%r8,%r9,%r10,%r11}, [%rd13];
  xor.b32  	%r12, %r9, %r16;
  xor.b32  	%r13, %r12, %r8;
  xor.b32  	%r14, %r13, %r10;
  xor.b32  	%r16, %r14, %r11;
  add.s64 	%rd15, %rd15, %rd3;
  setp.lt.u64 	%p2, %rd15, %rd8;
  @%p2 bra 	$L__BB0_2;
  setp.ne.s32 	%p3, %r16, -1640531527;
  @%p3 bra 	$L__BB0_5;
  mov.u32 	%r15, -1640531527;
  st.global.u32 	[%rd4], %r15;
$L__BB0_5:
  ret;
}
)PTX";

struct L2Flush {
  bool tried = false;
  bool ok = false;
  std::string error;
  CUfunction fn = nullptr;
  CUdeviceptr buffer = 0;
  unsigned long long vectors = 0;  // 16-byte elements
  unsigned blocks = 0;
};

bool SetUpFlush(L2Flush& f) {
  f.tried = true;
  const DriverApi& d = Driver();
  if (!d.module_load_data || !d.module_get_function || !d.mem_alloc || !d.launch_kernel ||
      !d.ctx_get_device || !d.device_get_attribute) {
    f.error = "driver entry points not found";
    return false;
  }
  OwnCalls own;  // module loading must not look like app activity either
  CUdevice dev = 0;
  int l2 = 0, sms = 0;
  CUmodule mod = nullptr;
  CUresult r = d.ctx_get_device(&dev);
  if (r == CUDA_SUCCESS) r = d.device_get_attribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
  if (r == CUDA_SUCCESS) r = d.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  if (r == CUDA_SUCCESS) r = d.module_load_data(&mod, kFlushPtx);
  if (r == CUDA_SUCCESS) r = d.module_get_function(&f.fn, mod, "gtrace_l2_flush");
  size_t bytes = 3 * size_t(l2 > 0 ? l2 : 64 << 20);
  if (r == CUDA_SUCCESS) r = d.mem_alloc(&f.buffer, bytes);
  if (r != CUDA_SUCCESS) {
    f.error = "setting up the L2 flush failed (CUresult " + std::to_string(int(r)) + ")";
    return false;
  }
  f.vectors = bytes / 16;
  f.blocks = static_cast<unsigned>(std::max(1, sms) * 8);
  f.ok = true;
  return true;
}

bool Flush(const L2Flush& f, CUstream stream, std::string* error) {
  CUdeviceptr buffer = f.buffer;
  unsigned long long vectors = f.vectors;
  void* args[] = {&buffer, &vectors, &buffer};
  OwnCalls own;
  CUresult r = Driver().launch_kernel(f.fn, f.blocks, 1, 1, 256, 1, 1, 0, stream, args, nullptr);
  if (r != CUDA_SUCCESS) *error = "L2 flush launch failed (CUresult " + std::to_string(int(r)) + ")";
  return r == CUDA_SUCCESS;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Per-context sessions
// ---------------------------------------------------------------------------------------------------------------

// The CUPTI checkpoint API lives in its own library beside libcupti; loaded only when --cache-control all
// needs it, so the injection library has no link-time dependency on it.
struct CheckpointApi {
  using Fn = CUptiResult (*)(CUpti_Checkpoint*);
  Fn save = nullptr, restore = nullptr, free = nullptr;
  std::string error;
  bool ok() const { return save && restore && free; }
};

const CheckpointApi& Checkpoints() {
  static CheckpointApi api = [] {
    CheckpointApi a;
    void* lib = nullptr;
    Dl_info info{};
    // Beside the libcupti we run with (the toolkit's), then wherever the loader finds it.
    if (dladdr(reinterpret_cast<void*>(&cuptiGetResultString), &info) && info.dli_fname) {
      std::string dir = info.dli_fname;
      dir = dir.substr(0, dir.find_last_of('/') + 1);
      lib = dlopen((dir + "libcheckpoint.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (!lib) lib = dlopen("libcheckpoint.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      a.error = std::string("CUPTI's checkpoint library (libcheckpoint.so) not found: ") + (e ? e : "?");
      return a;
    }
    a.save = reinterpret_cast<CheckpointApi::Fn>(dlsym(lib, "cuptiCheckpointSave"));
    a.restore = reinterpret_cast<CheckpointApi::Fn>(dlsym(lib, "cuptiCheckpointRestore"));
    a.free = reinterpret_cast<CheckpointApi::Fn>(dlsym(lib, "cuptiCheckpointFree"));
    if (!a.ok()) a.error = "libcheckpoint.so lacks the cuptiCheckpoint* entry points";
    return a;
  }();
  return api;
}

// A set of metrics collected together: its host object (which plans and evaluates them), config image and
// counter data image.
struct Collection {
  std::unique_ptr<MetricHost> host;
  MetricPlan plan;
  std::vector<uint8_t> counter_data;
  std::vector<const char*> names;
};

struct ContextSession {
  bool ok = false;
  std::string error;
  std::string chip;
  std::vector<uint8_t> availability;  // the device's counter availability image
  CUpti_RangeProfiler_Object* object = nullptr;
  Collection all;  // this run's metrics
  // A user-replay session (our own replay) ran in this context: CUPTI's kernel replay must not follow, it
  // crashed in the next launch (H200, CUPTI 2025.3.1), also with a fresh range profiler object.
  bool user_replay_ran = false;
  L2Flush flush;
  // --cache-control all: set when our own replay cannot work in this context (no checkpoint library, the
  // checkpoint does not fit, ...); its launches then use CUPTI's kernel replay, and the reason is reported.
  std::string own_replay_error;
};

struct PendingLaunch {
  bool active = false;  // a kernel-replay session runs from this launch's ENTER to its EXIT
  CUcontext ctx = nullptr;
  std::string name;
  uint32_t ordinal = 0;
  double grid = 0, block = 0, registers = 0, static_smem = 0, dynamic_smem = 0;
  std::chrono::steady_clock::time_point start;
  bool own_replay = false;     // profiled by our own replay (else by CUPTI's kernel replay)
  std::vector<double> values;  // evaluated, in the order of the session's plan
  size_t passes = 0;
};

struct CostRow {
  uint32_t launches = 0;
  double seconds = 0;
};

struct State {
  std::mutex mu;  // one profiled launch at a time: Start/Stop must not interleave across threads
  counters::CountersOptions options;
  std::unique_ptr<counters::LaunchSelector> selector;
  std::vector<std::string> metrics;
  bool profiler_initialized = false;
  std::map<CUcontext, ContextSession> sessions;
  PendingLaunch pending;
  std::map<std::string, CostRow> cost;
  bool announced = false;
  std::atomic<uint64_t> captured_launches{0};  // launches into capturing streams (graph nodes, not run)
  GraphCatalog graphs;
  uint64_t graph_launches = 0;         // cuGraphLaunch calls
  uint64_t graph_replays = 0;          // of them, replayed node by node to profile kernels
  uint64_t graph_launches_unread = 0;  // of them, of graphs whose kernels could not be read (and after)
  std::string graph_unread_reason;
  std::map<std::pair<std::string, std::string>, uint64_t> graph_not_profiled;  // (kernel, why) -> launches
  uint64_t flushes = 0;         // L2 flushes before replay passes (--cache-control all)
  uint64_t own_replays = 0;     // launches profiled by our own replay (checkpoint + flush per pass)
  uint64_t cupti_replays = 0;   // launches profiled by CUPTI's kernel replay
  std::string own_replay_note;  // why some launches fell back to CUPTI's kernel replay
  uint64_t failures = 0;
  std::string last_failure;
};
State* g_state = nullptr;

using cupti::Check;

// Counter data images are sized for this many ranges; a profiled launch decodes one.
constexpr size_t kMaxRanges = 64;

bool ResetCounterData(ContextSession& s, std::string* error, size_t ranges = 1,
                      CUpti_ProfilerReplayMode replay = CUPTI_KernelReplay) {
  Collection& c = s.all;
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  init.pRangeProfilerObject = s.object;
  init.counterDataSize = c.counter_data.size();
  init.pCounterData = c.counter_data.data();
  if (!Check(cuptiRangeProfilerCounterDataImageInitialize(&init),
             "cuptiRangeProfilerCounterDataImageInitialize", error))
    return false;
  CUpti_RangeProfiler_SetConfig_Params cfg{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  cfg.pRangeProfilerObject = s.object;
  cfg.configSize = c.plan.config_image.size();
  cfg.pConfig = c.plan.config_image.data();
  cfg.counterDataImageSize = c.counter_data.size();
  cfg.pCounterDataImage = c.counter_data.data();
  cfg.range = CUPTI_AutoRange;
  cfg.replayMode = replay;
  cfg.maxRangesPerPass = ranges;
  cfg.numNestingLevels = 1;
  cfg.minNestingLevel = 1;
  cfg.passIndex = 0;
  cfg.targetNestingLevel = 1;
  return Check(cuptiRangeProfilerSetConfig(&cfg), "cuptiRangeProfilerSetConfig", error);
}

// Plans `metrics` on a host object of its own and sizes the counter data image (needs s.object).
bool PlanCollection(ContextSession& s, const std::vector<std::string>& metrics, Collection& c,
                    std::string* error) {
  c = Collection{};
  if (metrics.empty()) return true;
  auto host = MetricHost::Create(s.chip, s.availability);
  if (!host.ok()) {
    *error = host.status().ToString();
    return false;
  }
  c.host = std::move(*host);
  auto plan = c.host->Plan(metrics);
  if (!plan.ok()) {
    *error = plan.status().ToString();
    return false;
  }
  c.plan = std::move(*plan);
  for (const auto& m : c.plan.metrics) c.names.push_back(m.c_str());
  CUpti_RangeProfiler_GetCounterDataSize_Params size{
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  size.pRangeProfilerObject = s.object;
  size.pMetricNames = c.names.data();
  size.numMetrics = c.names.size();
  size.maxNumOfRanges = kMaxRanges;
  size.maxNumRangeTreeNodes = kMaxRanges;
  if (!Check(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize", error))
    return false;
  c.counter_data.assign(size.counterDataSize, 0);
  return true;
}

bool SetUpContext(State& st, CUcontext ctx, ContextSession& s) {
  std::string& error = s.error;
  if (!st.profiler_initialized) {
    CUpti_Profiler_Initialize_Params p{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    if (!Check(cuptiProfilerInitialize(&p), "cuptiProfilerInitialize", &error)) return false;
    st.profiler_initialized = true;
  }
  uint32_t device = 0;
  if (!Check(cuptiGetDeviceId(ctx, &device), "cuptiGetDeviceId", &error)) return false;
  CUpti_Profiler_DeviceSupported_Params sup{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
  sup.cuDevice = static_cast<CUdevice>(device);
  sup.api = CUPTI_PROFILER_RANGE_PROFILING;
  if (!Check(cuptiProfilerDeviceSupported(&sup), "cuptiProfilerDeviceSupported", &error)) return false;
  if (sup.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    error = "the range profiler does not support this device/configuration (architecture " +
            std::to_string(sup.architecture) + ", vGPU " + std::to_string(sup.vGpu) +
            ", confidential compute " + std::to_string(sup.confidentialCompute) +
            "; 2 = disabled by the system)";
    return false;
  }
  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = device;
  if (!Check(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName", &error)) return false;
  CUpti_Profiler_GetCounterAvailability_Params avail{
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  avail.ctx = ctx;
  if (!Check(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability", &error))
    return false;
  std::vector<uint8_t> image(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = image.data();
  if (!Check(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability", &error))
    return false;
  s.chip = chip.pChipName;
  s.availability = std::move(image);
  CUpti_RangeProfiler_Enable_Params en{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  en.ctx = ctx;
  if (!Check(cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable", &error)) return false;
  s.object = en.pRangeProfilerObject;
  if (!PlanCollection(s, st.metrics, s.all, &error)) return false;
  for (const auto& r : s.all.plan.rejected)
    Warn("gtrace counters: %s does not support %s", s.chip.c_str(), r.c_str());
  if (!ResetCounterData(s, &error)) return false;

  if (!st.announced) {
    st.announced = true;
    auto cost = counters::EstimateCost(s.all.plan.passes, 0);
    fprintf(stderr, "gtrace counters: %s, %zu metrics (%s) in %s\n", s.chip.c_str(),
            s.all.plan.metrics.size(), counters::CounterSetsToString(st.options.sets).c_str(),
            cost.Describe(s.all.plan.passes, st.options.per_name_limit).c_str());
  }
  return true;
}

void Fail(State& st, const std::string& what) {
  ++st.failures;
  if (st.failures <= 3) Warn("gtrace counters: %s", what.c_str());
  st.last_failure = what;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Launch parameters and re-issue
// ---------------------------------------------------------------------------------------------------------------

// The app's launch as its ENTER callback saw it: enough to issue it again, unchanged, once per replay pass.
// The argument arrays belong to the caller and stay valid until its launch call returns, i.e. throughout
// ENTER.
struct LaunchCall {
  CUpti_CallbackId cbid = 0;
  cuLaunchKernel_params kernel{};
  cuLaunchKernelEx_params ex{};
  cuLaunchCooperativeKernel_params cooperative{};
};

CUresult Reissue(const LaunchCall& c) {
  const DriverApi& d = Driver();
  switch (c.cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
      LaunchKernelFn fn =
          c.cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ? d.launch_kernel : d.launch_kernel_ptsz;
      if (!fn) return CUDA_ERROR_NOT_FOUND;
      const auto& a = c.kernel;
      return fn(a.f, a.gridDimX, a.gridDimY, a.gridDimZ, a.blockDimX, a.blockDimY, a.blockDimZ,
                a.sharedMemBytes, a.hStream, a.kernelParams, a.extra);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      LaunchKernelExFn fn =
          c.cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ? d.launch_kernel_ex : d.launch_kernel_ex_ptsz;
      if (!fn) return CUDA_ERROR_NOT_FOUND;
      return fn(c.ex.config, c.ex.f, c.ex.kernelParams, c.ex.extra);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
      LaunchCooperativeFn fn = c.cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel
                                   ? d.launch_cooperative
                                   : d.launch_cooperative_ptsz;
      if (!fn) return CUDA_ERROR_NOT_FOUND;
      const auto& a = c.cooperative;
      return fn(a.f, a.gridDimX, a.gridDimY, a.gridDimZ, a.blockDimX, a.blockDimY, a.blockDimZ,
                a.sharedMemBytes, a.hStream, a.kernelParams);
    }
    default:
      return CUDA_ERROR_NOT_SUPPORTED;
  }
}

// The shape, function and stream of cuLaunchKernel and cuLaunchCooperativeKernel (same fields, two structs).
template <class Params>
void ReadGridLaunch(const Params& a, PendingLaunch* p, CUfunction* fn, CUstream* stream) {
  p->grid = double(a.gridDimX) * a.gridDimY * a.gridDimZ;
  p->block = double(a.blockDimX) * a.blockDimY * a.blockDimZ;
  p->dynamic_smem = a.sharedMemBytes;
  *fn = a.f;
  *stream = a.hStream;
}

// Launch attributes from the driver call's parameters (what the timeline records for the same launch).
void ReadLaunch(CUpti_CallbackId cbid, const CUpti_CallbackData* cb, PendingLaunch* p, CUfunction* fn,
                CUstream* stream, LaunchCall* call) {
  *fn = nullptr;
  *stream = nullptr;
  call->cbid = cbid;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
      const auto* a = static_cast<const cuLaunchKernel_params*>(cb->functionParams);
      call->kernel = *a;
      ReadGridLaunch(*a, p, fn, stream);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
      const auto* a = static_cast<const cuLaunchCooperativeKernel_params*>(cb->functionParams);
      call->cooperative = *a;
      ReadGridLaunch(*a, p, fn, stream);
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const auto* a = static_cast<const cuLaunchKernelEx_params*>(cb->functionParams);
      call->ex = *a;
      if (a->config) {
        p->grid = double(a->config->gridDimX) * a->config->gridDimY * a->config->gridDimZ;
        p->block = double(a->config->blockDimX) * a->config->blockDimY * a->config->blockDimZ;
        p->dynamic_smem = a->config->sharedMemBytes;
        *stream = a->config->hStream;
      }
      *fn = a->f;
      break;
    }
    default:
      break;
  }
  // The _ptsz launches' stream 0 is the calling thread's default stream.
  bool ptsz = cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
              cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz ||
              cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz;
  if (ptsz && !*stream) *stream = CU_STREAM_PER_THREAD;
  // Registers and static shared memory (the timeline record has them too; the join prefers the timeline's).
  auto get_attr = Driver().func_get_attribute;
  if (*fn && get_attr) {
    int v = 0;
    if (get_attr(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, *fn) == CUDA_SUCCESS) p->registers = v;
    if (get_attr(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, *fn) == CUDA_SUCCESS) p->static_smem = v;
  }
}

// `values` are in the order of `metrics` (s.all.plan.metrics).
void WriteLaunch(Injection& inj, State& st, const std::vector<std::string>& metrics,
                 const std::vector<double>& values, size_t passes, const PendingLaunch& p, double cost_s) {
  std::lock_guard<std::mutex> lock(inj.mu);
  if (!inj.writer || inj.finished) return;
  KernelMetricRecord r;
  r.pid = inj.pid;
  r.correlation_id = 0;
  r.kernel_name = inj.writer->Intern(p.name);
  r.launch_ordinal = p.ordinal;
  auto add = [&](const std::string& metric, double value, uint8_t flags) {
    r.metric = inj.writer->Intern(metric);
    r.value = value;
    r.flags = flags;
    inj.writer->Add(r);
  };
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string& m = metrics[i];
    uint8_t flags = 0;
    // A percentage above 100 comes from counters of different replay passes: keep the raw value, flag it.
    if (!std::isfinite(values[i]) || (m.find(".pct") != std::string::npos && values[i] > 100.5))
      flags |= kMetricSuspect;
    add(m, values[i], flags);
    std::string_view reason = counters::StallReasonOfMetric(m);
    if (!reason.empty() && std::isfinite(values[i]) && values[i] >= 0) {
      StallSample ss;
      ss.pid = inj.pid;
      ss.kernel_name = r.kernel_name;
      ss.launch_ordinal = p.ordinal;
      ss.reason = inj.writer->Intern(reason);
      ss.count = static_cast<uint64_t>(std::llround(values[i]));
      inj.writer->Add(ss);
    }
  }
  namespace lm = counters::launch_metric;
  add(lm::kGridSize, p.grid, 0);
  add(lm::kBlockSize, p.block, 0);
  add(lm::kRegisters, p.registers, 0);
  add(lm::kStaticShared, p.static_smem, 0);
  add(lm::kDynamicShared, p.dynamic_smem, 0);
  add(lm::kPasses, double(passes), 0);
  add(lm::kCostNs, cost_s * 1e9, 0);
  auto& row = st.cost[p.name];
  ++row.launches;
  row.seconds += cost_s;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Own replay (--cache-control all)
// ---------------------------------------------------------------------------------------------------------------

bool DecodeRanges(ContextSession& s, std::string* error) {
  CUpti_RangeProfiler_DecodeData_Params dec{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  dec.pRangeProfilerObject = s.object;
  if (!Check(cuptiRangeProfilerDecodeData(&dec), "cuptiRangeProfilerDecodeData", error)) return false;
  if (dec.numOfRangeDropped) {
    *error = "range dropped by the profiler";
    return false;
  }
  return true;
}

enum class OwnReplay : uint8_t {
  kProfiled,     // the values are in PendingLaunch::values
  kFailed,       // passes ran but gave no values (*error says why); memory was restored
  kUnavailable,  // nothing was run (no checkpoint library, the checkpoint did not fit, ...)
};

// Runs every pass of one launch ourselves from its ENTER callback (see the top of the file). Whatever
// happens, device memory is as the app left it when this returns, so the app's own launch computes what it
// would have without us.
// Evaluates range 0 of the decoded counter data, in the order of s.all.plan.metrics.
bool EvaluateRange(ContextSession& s, std::vector<double>* values, std::string* error) {
  Status ev = s.all.host->Evaluate(s.all.counter_data, 0, s.all.plan.metrics, values);
  if (!ev.ok()) *error = ev.ToString();
  return ev.ok();
}

// CUPTI's kernel replay of one launch: armed before the launch call, and after it returns (by then CUPTI has
// run every pass inside the call) stopped, decoded and evaluated into p->values.
bool StartKernelReplay(ContextSession& s, std::string* error) {
  if (!ResetCounterData(s, error)) return false;
  CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
  start.pRangeProfilerObject = s.object;
  return Check(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart", error);
}

bool FinishKernelReplay(ContextSession& s, PendingLaunch* p, std::string* error) {
  CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  stop.pRangeProfilerObject = s.object;
  bool ok = Check(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop", error);
  if (ok && !stop.isAllPassSubmitted) {
    ok = false;
    *error = "not all replay passes were submitted";
  }
  if (ok) ok = DecodeRanges(s, error) && EvaluateRange(s, &p->values, error);
  if (ok) p->passes = s.all.plan.passes;
  return ok;
}

// Runs the hardware-counter passes of one launch ourselves from its ENTER callback (see the top of the file)
// and evaluates them into p.values. Whatever happens, device memory is as the app left it when
// this returns, so the app's own launch computes what it would have without us.
OwnReplay RunOwnReplay(State& st, ContextSession& s, CUcontext ctx, const LaunchCall& call, CUstream stream,
                       PendingLaunch* p, std::string* error) {
  static const bool debug = env::Get(env::Var::kCountersDebug) != nullptr;
  const CheckpointApi& cp = Checkpoints();
  if (!cp.ok()) {
    *error = cp.error;
    return OwnReplay::kUnavailable;
  }
  if (!s.flush.tried) SetUpFlush(s.flush);
  if (!s.flush.ok) {
    *error = s.flush.error;
    return OwnReplay::kUnavailable;
  }
  OwnCalls own;
  const DriverApi& d = Driver();
  // The checkpoint must hold what this launch will read: the work queued before it has to finish first.
  if (!d.ctx_synchronize || d.ctx_synchronize() != CUDA_SUCCESS) {
    *error = "cuCtxSynchronize before the checkpoint failed";
    return OwnReplay::kUnavailable;
  }
  CUpti_Checkpoint checkpoint{CUpti_Checkpoint_STRUCT_SIZE};
  checkpoint.ctx = ctx;
  if (!Check(cp.save(&checkpoint), "cuptiCheckpointSave", error)) {
    cp.free(&checkpoint);
    return OwnReplay::kUnavailable;
  }
  s.user_replay_ran = true;
  bool ok = ResetCounterData(s, error, 1, CUPTI_UserReplay);
  bool all_submitted = false;
  size_t passes = 0;
  while (ok && !all_submitted) {
    if (passes > 0) ok = Check(cp.restore(&checkpoint), "cuptiCheckpointRestore", error);
    // The flush runs after the restore (whose copies leave dirty lines) and has finished before the pass
    // starts, so none of its traffic is counted.
    if (ok) ok = Flush(s.flush, stream, error);
    if (ok) ++st.flushes;
    if (ok && d.ctx_synchronize() != CUDA_SUCCESS) {
      ok = false;
      *error = "cuCtxSynchronize after the L2 flush failed";
    }
    CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    start.pRangeProfilerObject = s.object;
    if (ok) ok = Check(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart", error);
    if (!ok) break;
    CUresult launched = Reissue(call);
    CUresult finished = launched == CUDA_SUCCESS ? d.ctx_synchronize() : launched;
    CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    stop.pRangeProfilerObject = s.object;
    ok = Check(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop", error) && ok;
    if (ok && finished != CUDA_SUCCESS) {
      ok = false;
      *error =
          "re-issuing the launch for a replay pass failed (CUresult " + std::to_string(int(finished)) + ")";
    }
    all_submitted = stop.isAllPassSubmitted;
    if (debug)
      fprintf(stderr, "gtrace counters: own replay pass %zu of %zu: %s, next pass %zu, all submitted %d\n",
              passes + 1, s.all.plan.passes, ok ? "ok" : error->c_str(), stop.passIndex,
              int(stop.isAllPassSubmitted));
    if (++passes > s.all.plan.passes + 2 && !all_submitted) {
      ok = false;
      *error = "the range profiler asked for more than " + std::to_string(s.all.plan.passes + 2) + " passes";
    }
  }
  CUptiResult restored = passes > 0 ? cp.restore(&checkpoint) : CUPTI_SUCCESS;
  cp.free(&checkpoint);
  if (restored != CUPTI_SUCCESS) {
    // The app's launch now runs on memory our passes changed: say so loudly, and never replay this way again.
    s.own_replay_error =
        std::string("restoring device memory after the replay passes failed: ") + cupti::ResultText(restored);
    Warn("gtrace counters: %s; this launch's results in the app may be wrong", s.own_replay_error.c_str());
    *error = s.own_replay_error;
    return OwnReplay::kFailed;
  }
  if (ok) ok = DecodeRanges(s, error) && EvaluateRange(s, &p->values, error);
  p->passes = passes;
  return ok ? OwnReplay::kProfiled : OwnReplay::kFailed;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Graph launches
// ---------------------------------------------------------------------------------------------------------------

bool IsGraphLaunch(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch || cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

// A launch into a capturing stream records a graph node and runs nothing: it is neither a launch the timeline
// sees nor one the range profiler could measure.
bool IsCapturing(CUstream stream) {
  auto is_capturing = Driver().stream_is_capturing;
  if (!is_capturing) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  OwnCalls own;
  CUresult r = is_capturing(stream, &status);
  // CAPTURE_IMPLICIT: the legacy stream while another stream captures; the launch itself would fail.
  return r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT ||
         (r == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE);
}

const char* Getenv(void*, const char* name) {
  return getenv(name);
}

// The app's executable graphs, read when instantiated or updated (graph_nodes.h); forgotten when destroyed.
// A change of node parameters after instantiation makes the exec stale: still counted, no longer replayed.
bool IsGraphBookkeeping(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecDestroy:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecMemcpyNodeSetParams:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecMemsetNodeSetParams:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecHostNodeSetParams:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecChildGraphNodeSetParams:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecNodeSetParams:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecBatchMemOpNodeSetParams:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecExternalSemaphoresSignalNodeSetParams:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecExternalSemaphoresWaitNodeSetParams:
      return true;
    default:
      return false;
  }
}

void OnGraphBookkeeping(State& st, CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  // Every instantiate variant's parameters start (CUgraphExec* out, CUgraph); every update's and SetParams'
  // start with the CUgraphExec.
  struct InstantiateHead {
    CUgraphExec* exec;
    CUgraph graph;
  };
  struct UpdateHead {
    CUgraphExec exec;
    CUgraph graph;
  };
  const auto exec_of = [&] { return static_cast<const UpdateHead*>(cb->functionParams)->exec; };
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphExecDestroy) {
    if (cb->callbackSite != CUPTI_API_ENTER) return;
    std::lock_guard<std::mutex> lock(st.mu);
    st.graphs.Forget(exec_of());
    return;
  }
  if (cb->callbackSite != CUPTI_API_EXIT || !cb->functionReturnValue ||
      *static_cast<const CUresult*>(cb->functionReturnValue) != CUDA_SUCCESS)
    return;
  OwnCalls own;  // reading the graph is not app activity
  std::lock_guard<std::mutex> lock(st.mu);
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz: {
      const auto* a = static_cast<const InstantiateHead*>(cb->functionParams);
      if (a->exec && *a->exec) st.graphs.Read(*a->exec, a->graph);
      return;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2: {
      const auto* a = static_cast<const UpdateHead*>(cb->functionParams);
      st.graphs.Read(a->exec, a->graph);
      return;
    }
    default:
      st.graphs.MarkStale(exec_of(), std::string("the app changed node parameters after instantiation (") +
                                         (cb->functionName ? cb->functionName : "cuGraphExec*SetParams") +
                                         ")");
      return;
  }
}

// Writes the launch's values and counts its cost (the lock is held by the caller).
void RecordLaunch(Injection& inj, State& st, ContextSession& s, const PendingLaunch& p) {
  double cost = std::chrono::duration<double>(std::chrono::steady_clock::now() - p.start).count();
  ++(p.own_replay ? st.own_replays : st.cupti_replays);
  WriteLaunch(inj, st, s.all.plan.metrics, p.values, p.passes, p, cost);
}

// Profiles one kernel node of a graph being replayed node by node, the same two ways as a direct launch, and
// leaves the node's effect in device memory for the nodes after it. Returns the launch's result.
CUresult ProfileGraphKernel(Injection& inj, State& st, ContextSession& s, CUcontext ctx,
                            const GraphNodeLaunch& node, uint32_t ordinal, CUstream stream) {
  PendingLaunch p;
  p.ctx = ctx;
  p.name = node.info.kernel_name;
  p.ordinal = ordinal;
  p.grid = double(node.grid[0]) * node.grid[1] * node.grid[2];
  p.block = double(node.block[0]) * node.block[1] * node.block[2];
  p.registers = node.registers;
  p.static_smem = node.static_smem;
  p.dynamic_smem = node.dynamic_smem;
  p.start = std::chrono::steady_clock::now();
  CUlaunchAttribute attrs[2];
  CUlaunchConfig config = KernelLaunchConfig(node, stream, attrs);
  LaunchCall call;
  call.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx;
  call.ex.config = &config;
  call.ex.f = node.function;
  call.ex.kernelParams = node.kernel_params;
  call.ex.extra = node.extra;
  const std::string label = counters::LaunchLabel(p.name, ordinal);
  std::string error;
  if (st.options.flush_caches && s.own_replay_error.empty()) {
    OwnReplay result = RunOwnReplay(st, s, ctx, call, stream, &p, &error);
    if (result == OwnReplay::kProfiled) {
      p.own_replay = true;
      RecordLaunch(inj, st, s, p);
    } else if (result == OwnReplay::kFailed || s.user_replay_ran) {
      Fail(st, label + ": " + error);
    } else {
      s.own_replay_error = error;
      st.own_replay_note = error;
    }
    if (result != OwnReplay::kUnavailable || s.user_replay_ran) return Reissue(call);  // the node's real run
  }
  if (!StartKernelReplay(s, &error)) {
    Fail(st, label + ": " + error);
    return Reissue(call);
  }
  // Kernel replay runs the passes inside this launch and leaves memory as one run of the kernel leaves it.
  CUresult launched = Reissue(call);
  bool ok = FinishKernelReplay(s, &p, &error);
  if (ok && launched != CUDA_SUCCESS) {
    ok = false;
    error = "re-issuing the kernel node failed (CUresult " + std::to_string(int(launched)) + ")";
  }
  if (ok)
    RecordLaunch(inj, st, s, p);
  else
    Fail(st, label + ": " + error);
  return launched;
}

using Chosen = std::vector<std::pair<uint32_t, counters::LaunchSelector::Decision>>;  // node -> decision

// Replays one graph launch node by node on its stream (graph_plan.h), profiling the chosen kernel nodes, then
// restores device memory so that the app's own graph launch, which runs when this callback returns, computes
// what it would have without us.
void ReplayGraph(Injection& inj, State& st, CUcontext ctx, const GraphExec& g, CUstream stream,
                 const Chosen& chosen) {
  auto not_profiled = [&](const std::string& why) {
    for (const auto& [node, decision] : chosen)
      ++st.graph_not_profiled[{g.nodes[node].info.kernel_name, why}];
  };
  ContextSession& s = st.sessions[ctx];
  if (!s.ok && s.error.empty()) {
    s.ok = SetUpContext(st, ctx, s);
    if (!s.ok) Fail(st, "counters disabled for this context: " + s.error);
  }
  if (!s.ok) return;  // reported as counters_unsupported
  const CheckpointApi& cp = Checkpoints();
  if (!cp.ok()) {
    not_profiled("replaying a graph needs CUPTI's checkpoint library: " + cp.error);
    return;
  }
  OwnCalls own;
  const DriverApi& d = Driver();
  // The checkpoint must hold what the graph will read: the work queued before it has to finish first.
  if (!d.ctx_synchronize || d.ctx_synchronize() != CUDA_SUCCESS) {
    not_profiled("cuCtxSynchronize before the replay failed");
    return;
  }
  CUpti_Checkpoint checkpoint{CUpti_Checkpoint_STRUCT_SIZE};
  checkpoint.ctx = ctx;
  std::string error;
  if (!Check(cp.save(&checkpoint), "cuptiCheckpointSave", &error)) {
    cp.free(&checkpoint);
    not_profiled("saving device memory before the replay failed: " + error);
    return;
  }
  ++st.graph_replays;
  size_t next = 0;
  for (uint32_t i : g.plan.order) {
    const GraphNodeLaunch& node = g.nodes[i];
    CUresult r = CUDA_SUCCESS;
    if (next < chosen.size() && chosen[next].first == i)
      r = ProfileGraphKernel(inj, st, s, ctx, node, chosen[next++].second.ordinal, stream);
    else
      r = IssueNode(node, stream);
    if (r != CUDA_SUCCESS) {
      // Later nodes would read what this one did not write: stop; the chosen kernels left are not profiled.
      std::string why = "re-issuing a node of the graph failed (CUresult " + std::to_string(int(r)) + ")";
      for (; next < chosen.size(); ++next)
        ++st.graph_not_profiled[{g.nodes[chosen[next].first].info.kernel_name, why}];
      Fail(st, why);
      break;
    }
  }
  d.ctx_synchronize();
  CUptiResult restored = cp.restore(&checkpoint);
  cp.free(&checkpoint);
  if (restored != CUPTI_SUCCESS)
    Warn(
        "gtrace counters: restoring device memory after replaying a graph failed (%s); the app's graph "
        "launch "
        "now runs on memory the replay changed, and its results may be wrong",
        cupti::ResultText(restored));
}

// cuGraphLaunch ENTER: counts the graph's kernels (graph ordinals, model.h) and, when the selector picks one,
// replays the graph node by node. Graphs that cannot be replayed are counted and reported, not profiled.
void OnGraphLaunch(Injection& inj, State& st, CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  if (cb->callbackSite != CUPTI_API_ENTER) return;
  const auto* a = static_cast<const cuGraphLaunch_params*>(cb->functionParams);
  CUstream stream = a->hStream;
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz && !stream) stream = CU_STREAM_PER_THREAD;
  if (IsCapturing(stream)) return;  // becomes a child graph node of the capture; nothing runs now
  std::lock_guard<std::mutex> lock(st.mu);
  ++st.graph_launches;
  const GraphExec* g = st.graphs.Find(a->hGraph);
  if (!g || g->nodes.empty()) {
    // Its kernels cannot be counted, so graph ordinals of any name may differ between the runs from here on.
    ++st.graph_launches_unread;
    if (st.graph_unread_reason.empty())
      st.graph_unread_reason = g ? g->plan.not_replayable : "gtrace did not see it instantiated";
    return;
  }
  if (st.graph_launches_unread) return;
  const std::string& reason = !g->stale.empty() ? g->stale : g->plan.not_replayable;
  Chosen chosen;
  for (uint32_t i : g->plan.kernels) {
    const std::string& name = g->nodes[i].info.kernel_name;
    std::string why = reason;
    if (why.empty() && g->plan.ambiguous[i])
      why =
          "the graph runs this kernel in branches with no order between them, so the two runs cannot pair "
          "its launches";
    auto d = st.selector->OnLaunch(name, counters::LaunchSelector::Source::kGraph, why.empty());
    if (d.wanted) ++st.graph_not_profiled[{name, why}];
    if (d.profile) chosen.push_back({i, d});
  }
  if (chosen.empty()) return;
  if (!cb->context) {
    for (const auto& [node, decision] : chosen)
      ++st.graph_not_profiled[{g->nodes[node].info.kernel_name, "the graph launch has no current context"}];
    return;
  }
  ReplayGraph(inj, st, cb->context, *g, stream, chosen);
}

// Writes the launch's values (when `ok`) and releases the lock
// its ENTER took.
void FinishLaunch(Injection& inj, State& st, ContextSession& s, PendingLaunch& p, bool ok = true) {
  if (ok) RecordLaunch(inj, st, s, p);
  p.values.clear();
  st.mu.unlock();
}

}  // namespace

void CountersOnCallback(Injection& inj, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                        const void* data) {
  State* st = g_state;
  if (!st || domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  if (t_internal_launch) {
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (decode::IsKernelLaunchCbid(cbid) && cb->callbackSite == CUPTI_API_ENTER)
      NoteOwnLaunch(inj, cb->correlationId);
    return;
  }
  if (IsGraphLaunch(cbid)) {
    OnGraphLaunch(inj, *st, cbid, static_cast<const CUpti_CallbackData*>(data));
    return;
  }
  if (IsGraphBookkeeping(cbid)) {
    OnGraphBookkeeping(*st, cbid, static_cast<const CUpti_CallbackData*>(data));
    return;
  }
  if (!decode::IsKernelLaunchCbid(cbid)) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb->callbackSite == CUPTI_API_ENTER) {
    PendingLaunch probe;
    CUfunction fn;
    CUstream stream;
    LaunchCall call;
    ReadLaunch(cbid, cb, &probe, &fn, &stream, &call);
    if (IsCapturing(stream)) {
      st->captured_launches.fetch_add(1);
      return;
    }
    st->mu.lock();  // released at EXIT of the same launch (same thread), or below when not profiled
    std::string name = Demangle(cb->symbolName ? cb->symbolName : "");
    auto d = st->selector->OnLaunch(name);
    if (!d.profile || !cb->context) {
      st->mu.unlock();
      return;
    }
    ContextSession& s = st->sessions[cb->context];
    if (!s.ok && s.error.empty()) {
      s.ok = SetUpContext(*st, cb->context, s);
      if (!s.ok) Fail(*st, "counters disabled for this context: " + s.error);
    }
    if (!s.ok) {
      st->mu.unlock();
      return;
    }
    PendingLaunch& p = st->pending;
    p = std::move(probe);
    p.ctx = cb->context;
    p.name = std::move(name);
    p.ordinal = d.ordinal;
    p.start = std::chrono::steady_clock::now();
    if (st->options.flush_caches && s.own_replay_error.empty()) {
      std::string error;
      OwnReplay result = RunOwnReplay(*st, s, cb->context, call, stream, &p, &error);
      if (result == OwnReplay::kProfiled) {
        p.own_replay = true;
        FinishLaunch(inj, *st, s, p);
        return;
      }
      if (result == OwnReplay::kFailed || s.user_replay_ran) {
        Fail(*st, counters::LaunchLabel(p.name, p.ordinal) + ": " + error);
        FinishLaunch(inj, *st, s, p, /*ok=*/false);  // the app's own launch runs unprofiled
        return;
      }
      s.own_replay_error = error;
      st->own_replay_note = error;
      Warn(
          "gtrace counters: --cache-control all: %s; this context's launches use CUPTI's kernel replay "
          "(caches not flushed)",
          error.c_str());
    }
    std::string error;
    if (!StartKernelReplay(s, &error)) {
      Fail(*st, p.name + ": " + error);
      FinishLaunch(inj, *st, s, p, /*ok=*/false);
      return;
    }
    p.active = true;  // keep the lock until EXIT
    return;
  }
  // EXIT: only the thread that holds the lock has an active launch.
  PendingLaunch& p = st->pending;
  if (!p.active) return;
  // std::mutex has no owner query: the active flag is only set by the locking thread and cleared here before
  // unlocking, and callbacks of one launch run on one thread.
  p.active = false;
  ContextSession& s = st->sessions[p.ctx];
  std::string error;
  bool ok = FinishKernelReplay(s, &p, &error);
  if (!ok) Fail(*st, counters::LaunchLabel(p.name, p.ordinal) + ": " + error);
  FinishLaunch(inj, *st, s, p, ok);
}

bool StartCountersModule(Injection& inj) {
  auto options = counters::CountersOptionsFromEnv(Getenv, nullptr);
  if (!options.ok()) {
    Warn("gtrace counters: %s", options.status().ToString().c_str());
    return false;
  }
  if (options->sets == 0) options->sets = counters::kDefaultSets;
  auto selector = counters::LaunchSelector::Create(*options);
  if (!selector.ok()) {
    Warn("gtrace counters: %s", selector.status().ToString().c_str());
    return false;
  }
  auto* st = new State();
  st->options = *options;
  st->selector = std::move(*selector);
  st->metrics = counters::MetricsOfSubset(counters::MetricsForSets(st->options.sets), st->options.subset);
  if (st->metrics.empty()) {
    delete st;
    return true;  // nothing of this subset in the chosen sets: the run records its timeline kinds only
  }
  std::vector<CUpti_CallbackId> callbacks(std::begin(decode::kKernelLaunchCbids),
                                          std::end(decode::kKernelLaunchCbids));
  callbacks.insert(callbacks.end(), {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphExecDestroy,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams_v2,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphExecMemcpyNodeSetParams,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphExecMemsetNodeSetParams,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphExecHostNodeSetParams,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphExecChildGraphNodeSetParams,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphExecNodeSetParams,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphExecBatchMemOpNodeSetParams,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphExecExternalSemaphoresSignalNodeSetParams,
                                     CUPTI_DRIVER_TRACE_CBID_cuGraphExecExternalSemaphoresWaitNodeSetParams});
  for (CUpti_CallbackId id : callbacks) {
    CUptiResult r = cuptiEnableCallback(1, inj.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
    if (r != CUPTI_SUCCESS) {
      Warn("gtrace counters: cuptiEnableCallback: %s", cupti::ResultText(r));
      delete st;
      return false;
    }
  }
  g_state = st;
  inj.module_callback.store(CountersOnCallback);
  return true;
}

void FlushCountersModule(Injection&) {}

namespace {
// Which counters run this was, for its cost record: --cache-control all splits the metrics over two runs.
const char* RunLabel(const counters::CountersOptions& o) {
  switch (o.subset) {
    case counters::MetricSubset::kCacheSensitive:
      return "--cache-control all, DRAM/L2/time run";
    case counters::MetricSubset::kOther:
      return "--cache-control all, instruction/stall/occupancy run";
    case counters::MetricSubset::kAll:
      break;
  }
  return o.flush_caches ? "--cache-control all" : "--cache-control none";
}
}  // namespace

void StopCountersModule(Injection& inj) {
  State* st = g_state;
  if (!st) return;
  inj.module_callback.store(nullptr);
  std::lock_guard<std::mutex> lock(st->mu);
  // The real cost per kernel, as promised before profiling.
  double total = 0;
  uint32_t launches = 0;
  for (const auto& [name, row] : st->cost) {
    total += row.seconds;
    launches += row.launches;
  }
  if (launches) {
    fprintf(stderr, "gtrace counters: profiled %u launches of %zu kernels in %.2f s of replay:\n", launches,
            st->cost.size(), total);
    int shown = 0;
    for (const auto& [name, row] : st->cost) {
      if (++shown > 20) {
        fprintf(stderr, "  ... %zu more kernels\n", st->cost.size() - 20);
        break;
      }
      std::string n = name.size() > 70 ? name.substr(0, 67) + "..." : name;
      fprintf(stderr, "  %7.1f ms  %3u x  %s\n", row.seconds * 1e3, row.launches, n.c_str());
    }
  }
  {
    std::lock_guard<std::mutex> wlock(inj.mu);
    if (inj.writer && !inj.finished) {
      if (st->failures)
        AddLoss(inj, "counters_failed", static_cast<uint8_t>(Severity::kWarning), st->failures,
                "launches whose counters could not be collected; last: " + st->last_failure);
      for (const auto& [ctx, s] : st->sessions)
        if (!s.ok && !s.error.empty())
          AddLoss(inj, "counters_unsupported", static_cast<uint8_t>(Severity::kError), 1, s.error);
      if (st->graph_launches) {
        std::string detail =
            std::to_string(st->graph_launches) + " cudaGraphLaunch calls; " +
            std::to_string(st->graph_replays) +
            " replayed node by node to profile their kernels (device memory saved before and "
            "restored after, then the app's graph launch ran)";
        if (st->graph_launches_unread)
          detail += "; " + std::to_string(st->graph_launches_unread) +
                    " launches of a graph gtrace could not read (" + st->graph_unread_reason +
                    "): no graph kernel was profiled from the first of them on";
        AddLoss(inj, counters::kGraphLaunchesLoss,
                static_cast<uint8_t>(st->graph_launches_unread ? Severity::kWarning : Severity::kInfo),
                st->graph_launches, detail);
      }
      for (const auto& [key, n] : st->graph_not_profiled)
        AddLoss(inj, counters::kNotProfiledLoss, static_cast<uint8_t>(Severity::kWarning), n,
                "not profiled: graph launch: " + key.first + " (" + std::to_string(n) +
                    (n == 1 ? " launch): " : " launches): ") + key.second);
      char buf[320];
      snprintf(buf, sizeof buf,
               "%u launches profiled of %llu, %.3f s of replay (%s); %llu by gtrace's replay with the L2 "
               "flushed before each of %llu passes, %llu by CUPTI's kernel replay",
               launches, static_cast<unsigned long long>(st->selector->launches()), total,
               RunLabel(st->options), static_cast<unsigned long long>(st->own_replays),
               static_cast<unsigned long long>(st->flushes),
               static_cast<unsigned long long>(st->cupti_replays));
      AddLoss(inj, "counters_cost", static_cast<uint8_t>(Severity::kInfo), launches, buf);
      if (!st->own_replay_note.empty())
        AddLoss(
            inj, "counters_cache_control", static_cast<uint8_t>(Severity::kWarning), 1,
            "--cache-control all was not possible, CUPTI's kernel replay (caches not flushed) was used: " +
                st->own_replay_note);
    }
  }
  for (auto& [ctx, s] : st->sessions) {
    if (!s.object) continue;
    CUpti_RangeProfiler_Disable_Params dis{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    dis.pRangeProfilerObject = s.object;
    cuptiRangeProfilerDisable(&dis);
    s.object = nullptr;
  }
  // g_state stays allocated: a late callback from another thread must not touch freed memory.
}

}  // namespace gt::inject
