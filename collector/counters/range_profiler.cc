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

struct ContextSession {
  bool ok = false;
  std::string error;
  std::unique_ptr<MetricHost> host;
  MetricPlan plan;
  CUpti_RangeProfiler_Object* object = nullptr;
  std::vector<uint8_t> counter_data;
  std::vector<const char*> names;
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

bool ResetCounterData(ContextSession& s, std::string* error) {
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
  cfg.maxRangesPerPass = 1;
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
  size.maxNumOfRanges = 1;
  size.maxNumRangeTreeNodes = 1;
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
void ReadLaunch(CUpti_CallbackId cbid, const CUpti_CallbackData* cb, PendingLaunch* p, CUfunction* fn) {
  *fn = nullptr;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
      const auto* a = static_cast<const cuLaunchKernel_params*>(cb->functionParams);
      p->grid = double(a->gridDimX) * a->gridDimY * a->gridDimZ;
      p->block = double(a->blockDimX) * a->blockDimY * a->blockDimZ;
      p->dynamic_smem = a->sharedMemBytes;
      *fn = a->f;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
      const auto* a = static_cast<const cuLaunchCooperativeKernel_params*>(cb->functionParams);
      p->grid = double(a->gridDimX) * a->gridDimY * a->gridDimZ;
      p->block = double(a->blockDimX) * a->blockDimY * a->blockDimZ;
      p->dynamic_smem = a->sharedMemBytes;
      *fn = a->f;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const auto* a = static_cast<const cuLaunchKernelEx_params*>(cb->functionParams);
      if (a->config) {
        p->grid = double(a->config->gridDimX) * a->config->gridDimY * a->config->gridDimZ;
        p->block = double(a->config->blockDimX) * a->config->blockDimY * a->config->blockDimZ;
        p->dynamic_smem = a->config->sharedMemBytes;
      }
      *fn = a->f;
      break;
    }
    default:
      break;
  }
  // Registers and static shared memory: the driver is loaded (it is calling us), so no link-time dependency.
  using GetAttr = CUresult (*)(int*, CUfunction_attribute, CUfunction);
  // libcudart dlopens the driver privately (RTLD_LOCAL), so look in libcuda itself, without loading it again.
  static GetAttr get_attr = [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void* sym = lib ? dlsym(lib, "cuFuncGetAttribute") : dlsym(RTLD_DEFAULT, "cuFuncGetAttribute");
    return reinterpret_cast<GetAttr>(sym);
  }();
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

}  // namespace

void CountersOnCallback(Injection& inj, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                        const void* data) {
  State* st = g_state;
  if (!st || domain != CUPTI_CB_DOMAIN_DRIVER_API || !IsLaunch(cbid)) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb->callbackSite == CUPTI_API_ENTER) {
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
    p = PendingLaunch{};
    p.ctx = cb->context;
    p.name = std::move(name);
    p.ordinal = d.ordinal;
    CUfunction fn;
    ReadLaunch(cbid, cb, &p, &fn);
    p.start = std::chrono::steady_clock::now();
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
        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz}) {
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
      char buf[160];
      snprintf(buf, sizeof buf, "%u launches profiled of %llu, %.3f s of replay", launches,
               static_cast<unsigned long long>(st->selector->launches()), total);
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
