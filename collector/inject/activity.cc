// CUPTI Activity API plumbing: buffers, the buffer-completed callback (decode into the writer), kind
// switches.
#include <cstdlib>
#include <cstring>

#include "decode/clock.h"
#include "inject/injection.h"

namespace gt::collector {
namespace {

constexpr size_t kBufferBytes =
    4u << 20;  // big enough to amortize, small enough to be returned within a second
constexpr size_t kBufferAlign = 8;

// Buffers are recycled: the completed callback hands them back, the next request reuses them without malloc.
std::mutex g_pool_mu;
std::vector<uint8_t*> g_pool;

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  uint8_t* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_pool_mu);
    if (!g_pool.empty()) {
      b = g_pool.back();
      g_pool.pop_back();
    }
  }
  if (!b) b = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *buffer = b;
  *size = b ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size, size_t valid) {
  Injection* inj = GetInjection();
  if (inj && valid > 0) {
    std::lock_guard<std::mutex> lock(inj->mu);
    if (!inj->finished) {
      CUpti_Activity* record = nullptr;
      static const bool debug_markers = std::getenv("GTRACE_DEBUG_MARKERS") != nullptr;
      while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (debug_markers && record->kind == CUPTI_ACTIVITY_KIND_MARKER) {
          const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(record);
          Warn("marker id=%u flags=0x%x objkind=%d pid=%u tid=%u name=%s", m->id, unsigned(m->flags),
               int(m->objectKind), m->objectId.pt.processId, m->objectId.pt.threadId,
               m->name ? m->name : "-");
        }
        inj->decoder->Decode(record);
      }
      inj->decoder->EndBuffer();
    }
    inj->buffers_completed.fetch_add(1, std::memory_order_relaxed);
    inj->bytes_completed.fetch_add(valid, std::memory_order_relaxed);
  }
  if (inj) {
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped)
      inj->dropped_records.fetch_add(dropped);
  }
  std::lock_guard<std::mutex> lock(g_pool_mu);
  if (g_pool.size() < 64)
    g_pool.push_back(buffer);
  else
    std::free(buffer);
}

uint64_t CUPTIAPI MonotonicTimestamp() {
  return static_cast<uint64_t>(TraceClockNow());
}

// Runtime queries that frameworks call thousands of times per second (PyTorch: cudaGetDevice was 78% of all
// runtime records in a training loop). Skipped unless --trace=runtime-all: they launch nothing.
constexpr CUpti_CallbackId kNoisyRuntimeApis[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaDriverGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetAttributes_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v12000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDriverEntryPointByVersion_ptsz_v12050,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDriverEntryPointByVersion_v12050,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDriverEntryPoint_ptsz_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDriverEntryPoint_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPointerGetAttributes_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_ptsz_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaThreadExchangeStreamCaptureMode_v10010,
};

// Driver calls that launch GPU work. Libraries (cuBLAS, Triton) launch through the driver; recording just
// these keeps every kernel linked to its launch without the noise of full driver tracing. Runtime calls do
// not produce driver records for the driver calls they make internally, so nothing is counted twice.
constexpr CUpti_CallbackId kDriverLaunchApis[] = {
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
};

struct KindBit {
  uint32_t bit;
  CUpti_ActivityKind kinds[2];
};
constexpr KindBit kKindMap[] = {
    {kTraceKernel, {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_INVALID}},
    {kTraceMemcpy, {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_INVALID}},
    {kTraceMemset, {CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_INVALID}},
    {kTraceRuntime, {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_INVALID}},
    {kTraceDriver, {CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_INVALID}},
    {kTraceNvtx, {CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_MARKER_DATA}},
    {kTraceSync, {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_INVALID}},
    {kTraceMemory, {CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_INVALID}},
    {kTraceOverhead, {CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_INVALID}},
};

std::string CuptiError(const char* what, CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return std::string(what) + ": " + (s ? s : "unknown CUPTI error") + " (" + std::to_string(int(r)) + ")";
}

}  // namespace

CUpti_CallbackFunc CaptureCallback();  // capture.cc
CUptiResult CallRealSubscribeV2(CUpti_SubscriberHandle* s, CUpti_CallbackFunc cb, void* ud,
                                CUpti_SubscriberParams* p);

namespace {
// The process's one subscriber serves the capture ranges and the optional modules (counters) alike.
void CUPTIAPI DispatchCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                               const void* data) {
  auto& inj = *static_cast<Injection*>(userdata);
  if (domain == CUPTI_CB_DOMAIN_STATE) {
    const auto* st = static_cast<const CUpti_StateData*>(data);
    const char* msg = st && st->notification.message ? st->notification.message : "(no message)";
    Warn("CUPTI %s: %s", cbid == CUPTI_CBID_STATE_FATAL_ERROR ? "fatal error" : "warning", msg);
    std::lock_guard<std::mutex> lock(inj.mu);
    if (!inj.finished)
      AddLoss(
          inj, cbid == CUPTI_CBID_STATE_FATAL_ERROR ? "cupti_fatal_error" : "cupti_warning",
          static_cast<uint8_t>(cbid == CUPTI_CBID_STATE_FATAL_ERROR ? Severity::kError : Severity::kWarning),
          1, msg);
    return;
  }
  if (auto module = inj.module_callback.load()) module(inj, domain, cbid, data);
  if (inj.config.capture != CaptureMode::kNone) CaptureCallback()(userdata, domain, cbid, data);
}
}  // namespace

void AddLoss(Injection& inj, const char* name, uint8_t severity, uint64_t count, const std::string& detail) {
  LossRecord l;
  l.name = inj.writer->Intern(name);
  l.severity = severity;
  l.pid = inj.pid;
  l.count = count;
  l.detail = inj.writer->Intern(detail);
  inj.writer->Add(l);
}

void RefreshClockOffset(Injection& inj) {
  if (!inj.clock_shifted) return;
  ClockOffset off = EstimateOffset(SampleClocks(CLOCK_REALTIME, 16));
  if (!off.valid) return;
  std::lock_guard<std::mutex> lock(inj.mu);
  inj.decoder->set_clock_offset(off.offset_ns);
}

bool StartActivity(Injection& inj, std::string* error) {
  // One subscriber per process: claim it first, so a second client (torch.profiler, another tool) is named.
  CUpti_SubscriberParams params{};
  char old_name[256] = {0};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "gtrace";
  params.oldSubscriberName = old_name;
  params.oldSubscriberSize = sizeof old_name;
  CUpti_CallbackFunc cb = DispatchCallback;
  CUptiResult r = CallRealSubscribeV2(&inj.subscriber, cb, &inj, &params);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    std::string other = old_name[0] ? old_name : "an unnamed CUPTI client";
    Warn(
        "another CUPTI client is already active in this process: %s. CUPTI allows one; gcollect records "
        "nothing "
        "here. Disable the other profiler (e.g. torch.profiler) while running under gcollect.",
        other.c_str());
    std::lock_guard<std::mutex> lock(inj.mu);
    AddLoss(inj, "cupti_second_client", static_cast<uint8_t>(Severity::kError), 1,
            "another CUPTI client was active first: " + other);
    *error = "CUPTI already in use by " + other;
    return false;
  }
  if (r != CUPTI_SUCCESS) {
    *error = CuptiError("cuptiSubscribe_v2", r);
    return false;
  }

  // Every record on CLOCK_MONOTONIC, the clock gcollect and every other traced process share.
  // The trace clock is CLOCK_MONOTONIC. CUPTI stamps CLOCK_REALTIME by default on Linux; registering a
  // timestamp callback would give monotonic stamps directly, but measured on the H200 it made launches slower
  // (bimodal 5.0 / 6.8 us per launch instead of 4.8-5.3), so by default the decoder shifts CUPTI's stamps by
  // a measured realtime -> monotonic offset, re-measured at every flush. GTRACE_CLOCK=monotonic selects the
  // callback.
  const char* clock = std::getenv("GTRACE_CLOCK");
  bool use_callback = clock && std::string(clock) == "monotonic";
  if (!use_callback || cuptiActivityRegisterTimestampCallback(MonotonicTimestamp) != CUPTI_SUCCESS) {
    inj.clock_shifted = true;
    RefreshClockOffset(inj);
  }
  cuptiEnableDomain(1, inj.subscriber, CUPTI_CB_DOMAIN_STATE);  // rare: errors and warnings only
  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  r = cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  if (r != CUPTI_SUCCESS) {
    *error = CuptiError("cuptiActivityRegisterCallbacks", r);
    return false;
  }
  // Always on and nearly free: device properties, contexts, NVTX-named threads and streams.
  for (CUpti_ActivityKind k :
       {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_NAME}) {
    r = cuptiActivityEnable(k);
    if (r != CUPTI_SUCCESS && k == CUPTI_ACTIVITY_KIND_DEVICE) {
      *error = CuptiError("cuptiActivityEnable(DEVICE)", r);
      return false;
    }
  }
  return true;
}

void EnableTraceKinds(Injection& inj, bool enable) {
  for (const auto& m : kKindMap) {
    if (!(inj.config.kinds & m.bit)) continue;
    // With a capture range, NVTX stays on throughout (enabled once): cheap, and it shows where the range
    // sits.
    if (m.bit == kTraceNvtx && inj.config.capture != CaptureMode::kNone && !enable) continue;
    for (CUpti_ActivityKind k : m.kinds) {
      if (k == CUPTI_ACTIVITY_KIND_INVALID) continue;
      CUptiResult r = enable ? cuptiActivityEnable(k) : cuptiActivityDisable(k);
      if (r != CUPTI_SUCCESS && enable) {
        Warn("%s", CuptiError("cuptiActivityEnable", r).c_str());
        std::lock_guard<std::mutex> lock(inj.mu);
        AddLoss(inj, "cupti_kind_unavailable", static_cast<uint8_t>(Severity::kWarning), 1,
                "activity kind " + std::to_string(int(k)) + ": " + CuptiError("enable", r));
      }
    }
  }
  const uint32_t kinds = inj.config.kinds;
  if ((kinds & kTraceRuntime) && !(kinds & kTraceRuntimeAll) && enable) {
    for (CUpti_CallbackId id : kNoisyRuntimeApis) cuptiActivityEnableRuntimeApi(id, 0);
  }
  static const bool no_driver_launch = std::getenv("GTRACE_NO_DRIVER_LAUNCH") != nullptr;
  if ((kinds & kTraceRuntime) && !(kinds & kTraceDriver) && !no_driver_launch) {
    for (CUpti_CallbackId id : kDriverLaunchApis) cuptiActivityEnableDriverApi(id, enable ? 1 : 0);
  }
  inj.tracing_enabled.store(enable);
}

void EnableCaptureContext(Injection& inj) {
  if (!(inj.config.kinds & kTraceNvtx)) return;
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER_DATA);
}

void FlushActivity(bool forced) {
  cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

}  // namespace gt::collector
