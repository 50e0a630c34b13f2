// The counters module: CUPTI Range Profiler per kernel launch (see counters_module.h for the why).
//
// Sequence (checked on the H200, shared/notes/gpu.md): lazily at the first launch of a context,
// cuptiProfilerInitialize -> DeviceSupported -> chip name -> counter availability -> host config
// (host_config.h)
// -> cuptiRangeProfilerEnable -> counter data image -> SetConfig(auto range, kernel replay). A selected
// launch is profiled between Start (launch ENTER) and Stop (launch EXIT); then decode, evaluate range 0,
// write the values and re-arm. Launches that are not selected run with the profiler stopped, at full speed.
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
#include <map>
#include <mutex>

#include "counters/counters_module.h"
#include "counters/host_config.h"
#include "counters/metric_sets.h"
#include "counters/selection.h"
#include "decode/cupti_decode.h"
#include "inject/injection.h"

namespace gt::collector {
namespace {

using counters::MetricHost;
using counters::MetricPlan;

// The driver entry points the module calls itself. The driver is loaded (it is calling us); libcudart dlopens
// it privately (RTLD_LOCAL), so look in libcuda itself, without loading it again and without a link-time
// dependency.
struct DriverApi {
  CUresult (*func_get_attribute)(int*, CUfunction_attribute, CUfunction) = nullptr;
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            CUstream, void**, void**) = nullptr;
  CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus*) = nullptr;
  CUresult (*ctx_get_device)(CUdevice*) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
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
    a.launch_kernel = reinterpret_cast<decltype(a.launch_kernel)>(sym("cuLaunchKernel"));
    a.stream_is_capturing = reinterpret_cast<decltype(a.stream_is_capturing)>(sym("cuStreamIsCapturing"));
    a.ctx_get_device = reinterpret_cast<decltype(a.ctx_get_device)>(sym("cuCtxGetDevice"));
    a.device_get_attribute = reinterpret_cast<decltype(a.device_get_attribute)>(sym("cuDeviceGetAttribute"));
    return a;
  }();
  return api;
}

// Launches the module makes itself (the L2 flush) come back through the same launch callbacks; they must not
// be counted, selected or profiled.
thread_local bool t_internal_launch = false;

// --cache-control all (opt-in experiment): before each profiled launch a kernel reads a buffer three times
// the L2's size with L2-allocating loads (ld.global.cg), so the dirty lines earlier kernels left are written
// back during the flush and the L2 holds only clean lines of a buffer the app never touches. It runs on the
// profiled launch's stream before cuptiRangeProfilerStart, so it is neither replayed nor counted. Measured on
// the H200 (docs/benchmarks.md, Counters), it does NOT bring the values to ncu's --cache-control all: kernel
// replay saves and restores device memory through the L2 after the flush and between passes (dirty lines are
// back before every pass), and the instruction and constant caches stay warm. Hence off by default.
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
  t_internal_launch = true;  // module loading must not look like app activity either
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
  t_internal_launch = false;
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
  t_internal_launch = true;
  CUresult r = Driver().launch_kernel(f.fn, f.blocks, 1, 1, 256, 1, 1, 0, stream, args, nullptr);
  t_internal_launch = false;
  if (r != CUDA_SUCCESS) *error = "L2 flush launch failed (CUresult " + std::to_string(int(r)) + ")";
  return r == CUDA_SUCCESS;
}

struct ContextSession {
  bool ok = false;
  std::string error;
  std::unique_ptr<MetricHost> host;
  MetricPlan plan;
  CUpti_RangeProfiler_Object* object = nullptr;
  std::vector<uint8_t> counter_data;
  std::vector<const char*> names;
  L2Flush flush;
};

struct PendingLaunch {
  bool active = false;
  CUcontext ctx = nullptr;
  std::string name;
  uint32_t ordinal = 0;
  double grid = 0, block = 0, registers = 0, static_smem = 0, dynamic_smem = 0;
  std::chrono::steady_clock::time_point start;
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
  uint64_t graph_launches = 0;                 // cuGraphLaunch calls: their kernels are not profiled
  uint64_t flushes = 0;                        // L2 flushes before profiled launches (--cache-control all)
  uint64_t failures = 0;
  std::string last_failure;
};
State* g_state = nullptr;

const char* Err(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : "CUPTI error";
}

bool Check(CUptiResult r, const char* what, std::string* error) {
  if (r == CUPTI_SUCCESS) return true;
  *error = std::string(what) + ": " + Err(r) + " (" + std::to_string(int(r)) + ")";
  return false;
}

// Counter data images hold this many ranges: one per profiled launch, or one per kernel node of a graph
// launch under the graph probe (GTRACE_COUNTERS_GRAPH_PROBE=1).
constexpr size_t kMaxRanges = 64;

bool ResetCounterData(ContextSession& s, std::string* error, size_t ranges = 1) {
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  init.pRangeProfilerObject = s.object;
  init.counterDataSize = s.counter_data.size();
  init.pCounterData = s.counter_data.data();
  if (!Check(cuptiRangeProfilerCounterDataImageInitialize(&init),
             "cuptiRangeProfilerCounterDataImageInitialize", error))
    return false;
  CUpti_RangeProfiler_SetConfig_Params cfg{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  cfg.pRangeProfilerObject = s.object;
  cfg.configSize = s.plan.config_image.size();
  cfg.pConfig = s.plan.config_image.data();
  cfg.counterDataImageSize = s.counter_data.size();
  cfg.pCounterDataImage = s.counter_data.data();
  cfg.range = CUPTI_AutoRange;
  cfg.replayMode = CUPTI_KernelReplay;
  cfg.maxRangesPerPass = ranges;
  cfg.numNestingLevels = 1;
  cfg.minNestingLevel = 1;
  cfg.passIndex = 0;
  cfg.targetNestingLevel = 1;
  return Check(cuptiRangeProfilerSetConfig(&cfg), "cuptiRangeProfilerSetConfig", error);
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
  auto host = MetricHost::Create(chip.pChipName, image);
  if (!host.ok()) {
    error = host.status().ToString();
    return false;
  }
  s.host = std::move(*host);
  auto plan = s.host->Plan(st.metrics);
  if (!plan.ok()) {
    error = plan.status().ToString();
    return false;
  }
  s.plan = std::move(*plan);
  for (const auto& r : s.plan.rejected)
    Warn("gtrace counters: %s does not support %s", chip.pChipName, r.c_str());
  for (const auto& m : s.plan.metrics) s.names.push_back(m.c_str());

  CUpti_RangeProfiler_Enable_Params en{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  en.ctx = ctx;
  if (!Check(cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable", &error)) return false;
  s.object = en.pRangeProfilerObject;
  CUpti_RangeProfiler_GetCounterDataSize_Params size{
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  size.pRangeProfilerObject = s.object;
  size.pMetricNames = s.names.data();
  size.numMetrics = s.names.size();
  size.maxNumOfRanges = kMaxRanges;
  size.maxNumRangeTreeNodes = kMaxRanges;
  if (!Check(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize", &error))
    return false;
  s.counter_data.assign(size.counterDataSize, 0);
  if (!ResetCounterData(s, &error)) return false;

  if (!st.announced) {
    st.announced = true;
    auto cost = counters::EstimateCost(s.plan.passes, 0);
    fprintf(stderr, "gtrace counters: %s, %zu metrics (%s) in %s\n", chip.pChipName, s.plan.metrics.size(),
            counters::CounterSetsToString(st.options.sets).c_str(),
            cost.Describe(s.plan.passes, st.options.per_name_limit).c_str());
  }
  return true;
}

void Fail(State& st, const std::string& what) {
  ++st.failures;
  if (st.failures <= 3) Warn("gtrace counters: %s", what.c_str());
  st.last_failure = what;
}

// Launch attributes from the driver call's parameters (what the timeline records for the same launch).
void ReadLaunch(CUpti_CallbackId cbid, const CUpti_CallbackData* cb, PendingLaunch* p, CUfunction* fn,
                CUstream* stream) {
  *fn = nullptr;
  *stream = nullptr;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
      const auto* a = static_cast<const cuLaunchKernel_params*>(cb->functionParams);
      p->grid = double(a->gridDimX) * a->gridDimY * a->gridDimZ;
      p->block = double(a->blockDimX) * a->blockDimY * a->blockDimZ;
      p->dynamic_smem = a->sharedMemBytes;
      *fn = a->f;
      *stream = a->hStream;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
      const auto* a = static_cast<const cuLaunchCooperativeKernel_params*>(cb->functionParams);
      p->grid = double(a->gridDimX) * a->gridDimY * a->gridDimZ;
      p->block = double(a->blockDimX) * a->blockDimY * a->blockDimZ;
      p->dynamic_smem = a->sharedMemBytes;
      *fn = a->f;
      *stream = a->hStream;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const auto* a = static_cast<const cuLaunchKernelEx_params*>(cb->functionParams);
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

void WriteLaunch(Injection& inj, State& st, ContextSession& s, const PendingLaunch& p, double cost_s) {
  std::vector<double> values;
  Status ev = s.host->Evaluate(s.counter_data, 0, s.plan.metrics, &values);
  if (!ev.ok()) {
    Fail(st, p.name + ": " + ev.ToString());
    return;
  }
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
    const std::string& m = s.plan.metrics[i];
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
  add(lm::kPasses, double(s.plan.passes), 0);
  add(lm::kCostNs, cost_s * 1e9, 0);
  auto& row = st.cost[p.name];
  ++row.launches;
  row.seconds += cost_s;
}

bool IsGraphLaunch(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch || cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

// A launch into a capturing stream records a graph node and runs nothing: it is neither a launch the timeline
// sees nor one the range profiler could measure.
bool IsCapturing(CUstream stream) {
  auto is_capturing = Driver().stream_is_capturing;
  if (!is_capturing) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  t_internal_launch = true;
  CUresult r = is_capturing(stream, &status);
  t_internal_launch = false;
  // CAPTURE_IMPLICIT: the legacy stream while another stream captures; the launch itself would fail.
  return r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT ||
         (r == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE);
}

bool IsLaunch(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return true;
    default:
      return false;
  }
}

const char* Getenv(void*, const char* name) {
  return getenv(name);
}

// cuGraphLaunch: kernel replay covers one launch API call per range, and the launch callbacks never see the
// kernel nodes a graph launch runs, so graph kernels are not profiled: they are counted here and the join
// names each one "not profiled: graph launch". GTRACE_COUNTERS_GRAPH_PROBE=1 tries the range profiler around
// the first two graph launches of a process (auto range, kernel replay, up to kMaxRanges ranges) and prints
// what it decoded, to find out whether the profiler splits a graph launch into per-node ranges; it writes no
// records.
void OnGraphLaunch(Injection&, State& st, const CUpti_CallbackData* cb) {
  static const bool probe = [] {
    const char* e = getenv("GTRACE_COUNTERS_GRAPH_PROBE");
    return e && *e == '1';
  }();
  static thread_local bool probing = false;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    std::unique_lock<std::mutex> lock(st.mu);
    ++st.graph_launches;
    if (!probe || st.graph_launches > 2 || !cb->context) return;
    ContextSession& s = st.sessions[cb->context];
    if (!s.ok && s.error.empty()) s.ok = SetUpContext(st, cb->context, s);
    std::string error;
    if (!s.ok || !ResetCounterData(s, &error, kMaxRanges)) {
      fprintf(stderr, "gtrace counters: graph probe: setup failed: %s\n", (s.ok ? error : s.error).c_str());
      return;
    }
    CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    start.pRangeProfilerObject = s.object;
    CUptiResult r = cuptiRangeProfilerStart(&start);
    if (r != CUPTI_SUCCESS) {
      fprintf(stderr, "gtrace counters: graph probe: cuptiRangeProfilerStart: %s\n", Err(r));
      ResetCounterData(s, &error);
      return;
    }
    probing = true;
    lock.release();  // st.mu stays held until this graph launch's EXIT, as for a profiled launch
    return;
  }
  if (!probing) return;
  probing = false;
  ContextSession& s = st.sessions[cb->context];
  std::string error;
  CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  stop.pRangeProfilerObject = s.object;
  bool ok = Check(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop", &error);
  fprintf(stderr, "gtrace counters: graph probe: launch %llu: stop %s, all passes submitted %d\n",
          static_cast<unsigned long long>(st.graph_launches), ok ? "ok" : error.c_str(),
          int(stop.isAllPassSubmitted));
  CUpti_RangeProfiler_DecodeData_Params dec{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  dec.pRangeProfilerObject = s.object;
  if (ok) ok = Check(cuptiRangeProfilerDecodeData(&dec), "cuptiRangeProfilerDecodeData", &error);
  CUpti_RangeProfiler_GetCounterDataInfo_Params info{
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = s.counter_data.data();
  info.counterDataImageSize = s.counter_data.size();
  if (ok) ok = Check(cuptiRangeProfilerGetCounterDataInfo(&info), "GetCounterDataInfo", &error);
  fprintf(stderr, "gtrace counters: graph probe: decode %s, %zu ranges, %zu dropped\n",
          ok ? "ok" : error.c_str(), ok ? info.numTotalRanges : size_t(0), size_t(dec.numOfRangeDropped));
  const std::vector<std::string> want = {"gpu__time_duration.sum", "smsp__inst_issued.sum",
                                         "dram__bytes_read.sum", "launch__grid_size"};
  std::vector<std::string> metrics;
  for (const auto& m : want)
    if (std::find(s.plan.metrics.begin(), s.plan.metrics.end(), m) != s.plan.metrics.end())
      metrics.push_back(m);
  for (size_t i = 0; ok && i < info.numTotalRanges && i < kMaxRanges; ++i) {
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params ri{
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
    ri.pCounterDataImage = s.counter_data.data();
    ri.counterDataImageSize = s.counter_data.size();
    ri.rangeIndex = i;
    ri.rangeDelimiter = "/";
    cuptiRangeProfilerCounterDataGetRangeInfo(&ri);
    std::vector<double> values;
    Status ev = s.host->Evaluate(s.counter_data, i, metrics, &values);
    std::string line;
    for (size_t m = 0; ev.ok() && m < metrics.size(); ++m)
      line += " " + metrics[m] + "=" + std::to_string(values[m]);
    fprintf(stderr, "gtrace counters: graph probe:   range %zu '%s':%s\n", i,
            ri.rangeName ? ri.rangeName : "?", ev.ok() ? line.c_str() : ev.ToString().c_str());
  }
  if (!ResetCounterData(s, &error)) {
    Fail(st, "re-arming the range profiler after the graph probe: " + error);
    s.ok = false;
  }
  st.mu.unlock();
}

}  // namespace

void CountersOnCallback(Injection& inj, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                        const void* data) {
  State* st = g_state;
  if (!st || domain != CUPTI_CB_DOMAIN_DRIVER_API || t_internal_launch) return;
  if (IsGraphLaunch(cbid)) {
    OnGraphLaunch(inj, *st, static_cast<const CUpti_CallbackData*>(data));
    return;
  }
  if (!IsLaunch(cbid)) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb->callbackSite == CUPTI_API_ENTER) {
    PendingLaunch probe;
    CUfunction fn;
    CUstream stream;
    ReadLaunch(cbid, cb, &probe, &fn, &stream);
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
    if (st->options.flush_caches) {
      if (!s.flush.tried && !SetUpFlush(s.flush))
        Fail(*st, "--cache-control all: " + s.flush.error + "; profiling without flushing the L2");
      std::string error;
      if (s.flush.ok && Flush(s.flush, stream, &error))
        ++st->flushes;
      else if (s.flush.ok)
        Fail(*st, p.name + ": " + error);
    }
    CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    start.pRangeProfilerObject = s.object;
    CUptiResult r = cuptiRangeProfilerStart(&start);
    if (r != CUPTI_SUCCESS) {
      Fail(*st, p.name + ": cuptiRangeProfilerStart: " + Err(r));
      st->mu.unlock();
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
  CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  stop.pRangeProfilerObject = s.object;
  bool ok = Check(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop", &error);
  if (ok && !stop.isAllPassSubmitted) {
    ok = false;
    error = "not all replay passes were submitted";
  }
  CUpti_RangeProfiler_DecodeData_Params dec{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  dec.pRangeProfilerObject = s.object;
  if (ok) ok = Check(cuptiRangeProfilerDecodeData(&dec), "cuptiRangeProfilerDecodeData", &error);
  if (ok && dec.numOfRangeDropped) {
    ok = false;
    error = "range dropped by the profiler";
  }
  double cost = std::chrono::duration<double>(std::chrono::steady_clock::now() - p.start).count();
  if (ok)
    WriteLaunch(inj, *st, s, p, cost);
  else
    Fail(*st, p.name + " launch " + std::to_string(p.ordinal) + ": " + error);
  if (!ResetCounterData(s, &error)) {
    Fail(*st, "re-arming the range profiler: " + error);
    s.ok = false;
  }
  st->mu.unlock();
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
  st->metrics = counters::MetricsForSets(st->options.sets);
  for (CUpti_CallbackId id :
       {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
        CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz}) {
    CUptiResult r = cuptiEnableCallback(1, inj.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
    if (r != CUPTI_SUCCESS) {
      Warn("gtrace counters: cuptiEnableCallback: %s", Err(r));
      delete st;
      return false;
    }
  }
  g_state = st;
  inj.module_callback.store(CountersOnCallback);
  return true;
}

void FlushCountersModule(Injection&) {}

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
      if (st->graph_launches)
        AddLoss(
            inj, "counters_graph_launches", static_cast<uint8_t>(Severity::kWarning), st->graph_launches,
            "cudaGraphLaunch calls whose kernel nodes were not profiled (kernel replay profiles individual "
            "launches; each graph kernel is listed as \"not profiled: graph launch\")");
      char buf[240];
      snprintf(buf, sizeof buf, "%u launches profiled of %llu, %.3f s of replay; L2 flushed before %llu (%s)",
               launches, static_cast<unsigned long long>(st->selector->launches()), total,
               static_cast<unsigned long long>(st->flushes),
               st->options.flush_caches ? "--cache-control all" : "--cache-control none");
      AddLoss(inj, "counters_cost", static_cast<uint8_t>(Severity::kInfo), launches, buf);
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

}  // namespace gt::collector
