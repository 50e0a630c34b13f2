// CUPTI Activity API plumbing: buffers, the buffer-completed callback (decode into the writer), kind
// switches.
#include <pthread.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string_view>

#include "cupti/cupti_result.h"
#include "decode/clock.h"
#include "gt/env.h"
#include "inject/injection.h"

namespace gt::inject {

using config::CaptureMode;
using config::kTraceDriver;
using config::kTraceKernel;
using config::kTraceMemcpy;
using config::kTraceMemory;
using config::kTraceMemset;
using config::kTraceNvtx;
using config::kTraceOverhead;
using config::kTraceRuntime;
using config::kTraceRuntimeAll;
using config::kTraceSync;
using config::TraceClockNow;
using decode::ApiDisplayName;
using decode::ClockOffset;
using decode::EstimateOffset;
using decode::IsKeyRuntimeApi;
using decode::SampleClocks;
using decode::SyncKindOfApi;

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

// A kernel the counters module launched itself (replay pass, L2 flush): dropped, and its id forgotten.
bool IsOwnLaunch(Injection& inj, const CUpti_Activity* record) {
  if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
    return false;
  const uint32_t id = reinterpret_cast<const CUpti_ActivityKernel10*>(record)->correlationId;
  std::lock_guard<std::mutex> lock(inj.own_launches_mu);
  auto& ids = inj.own_launches;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] != id) continue;
    ids[i] = ids.back();
    ids.pop_back();
    return true;
  }
  return false;
}

void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size, size_t valid) {
  OsrtIgnoreThisThread();  // CUPTI's worker thread: its waits are CUPTI's, not the app's
  Injection* inj = GetInjection();
  if (inj && valid > 0) {
    std::lock_guard<std::mutex> lock(inj->mu);
    if (!inj->finished) {
      CUpti_Activity* record = nullptr;
      static const bool debug_markers = env::Get(env::Var::kDebugMarkers) != nullptr;
      while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (debug_markers && record->kind == CUPTI_ACTIVITY_KIND_MARKER) {
          const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(record);
          Warn("marker id=%u flags=0x%x objkind=%d pid=%u tid=%u name=%s", m->id, unsigned(m->flags),
               int(m->objectKind), m->objectId.pt.processId, m->objectId.pt.threadId,
               m->name ? m->name : "-");
        }
        if (inj->has_own_launches.load(std::memory_order_relaxed) && IsOwnLaunch(*inj, record)) continue;
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

// Driver calls that wait: recorded (as API calls and sync records) when API calls come from callbacks.
constexpr CUpti_CallbackId kDriverSyncApis[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,         CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2,
    CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,       CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz, CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz,
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

// GTRACE_CUPTI_ATTRS="device_buffer_mb=N,prealloc=N,pool_limit=N,host_pinned=0|1": CUPTI's device-buffer
// attributes for the GPU-side timestamp records, for overhead experiments (docs/collector.md). They must be
// set before any context exists, which holds here (InitializeInjection runs inside cuInit).
void ApplyActivityAttributes() {
  const char* spec = env::Get(env::Var::kCuptiAttrs);
  if (!spec || !*spec) return;
  std::string all = spec;
  size_t at = 0;
  while (at < all.size()) {
    size_t end = all.find(',', at);
    if (end == std::string::npos) end = all.size();
    std::string item = all.substr(at, end - at);
    at = end + 1;
    size_t eq = item.find('=');
    char* rest = nullptr;
    unsigned long long v = eq == std::string::npos ? 0 : std::strtoull(item.c_str() + eq + 1, &rest, 10);
    std::string key = item.substr(0, eq);
    if (eq == std::string::npos || !rest || *rest) {
      Warn("GTRACE_CUPTI_ATTRS: expected key=number, got '%s'", item.c_str());
      continue;
    }
    CUptiResult r = CUPTI_ERROR_INVALID_PARAMETER;
    if (key == "device_buffer_mb" || key == "prealloc" || key == "pool_limit") {
      size_t value = key == "device_buffer_mb" ? size_t(v) << 20 : size_t(v);
      size_t bytes = sizeof value;
      CUpti_ActivityAttribute a = key == "device_buffer_mb" ? CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE
                                  : key == "prealloc" ? CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE
                                                      : CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT;
      r = cuptiActivitySetAttribute(a, &bytes, &value);
    } else if (key == "host_pinned") {
      uint8_t value = v != 0;
      size_t bytes = sizeof value;
      r = cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &bytes, &value);
    } else {
      Warn("GTRACE_CUPTI_ATTRS: unknown attribute '%s' (device_buffer_mb, prealloc, pool_limit, host_pinned)",
           key.c_str());
      continue;
    }
    if (r != CUPTI_SUCCESS) Warn("%s", cupti::Describe(("GTRACE_CUPTI_ATTRS " + key).c_str(), r).c_str());
  }
}

// ---- [SECTION] API calls through the callback API
// --------------------------------------------------------------
// CUPTI's RUNTIME activity kind instruments every runtime call, also the ones cuptiActivityEnableRuntimeApi
// filters out afterwards; PyTorch makes several queries (cudaGetDevice, cudaGetLastError, ...) per kernel.
// With GTRACE_API=callback (the default), the API calls come from callbacks enabled for the ids we keep only
// (IsKeyRuntimeApi + the driver launch calls): other calls pay nothing. Each call is stamped on the trace
// clock at ENTER and EXIT; its correlation id is CUPTI's, the one its kernels, copies and memsets carry.
// Records go to a per-thread batch (no shared lock on the app's path); full batches and, once a flush, the
// partial ones are decoded by the flusher thread.

constexpr size_t kApiBatch = 2048;

// One API call, plus what a sync record needs when the call waits (SyncKindOfApi).
struct ApiEntry {
  ApiCallRecord call;
  uint32_t context_id;
  uint32_t stream_id;
  uint8_t sync_kind;  // SyncKind; 0 = not a sync call (or --trace without sync)
};
static_assert(sizeof(ApiEntry) == 64, "one cache line per API call on the app's path");

struct ApiBuffer {
  std::mutex mu;  // the owner thread vs the flusher (taken once per flush)
  std::vector<ApiEntry> records;
  bool owner_alive = true;
};

struct ApiState {
  std::mutex mu;                             // guards the vectors below
  std::vector<ApiBuffer*> buffers;           // every buffer, never freed: drained after its thread ends
  std::vector<ApiBuffer*> idle;              // thread ended and drained: reused by the next thread
  std::vector<std::vector<ApiEntry>> full;   // batches handed over by app threads
  std::vector<std::vector<ApiEntry>> spare;  // drained batches, capacity kept
  bool sync_records = false;                 // --trace has sync: SyncRecords from the sync calls
  pthread_key_t exit_key;
  std::atomic<uint32_t> epoch{1};      // bumped when callbacks are switched: resets per-thread nesting state
  std::atomic<bool> recording{false};  // off after the final drain
};
ApiState* g_api = nullptr;  // leaked on purpose: callbacks may run during the app's own exit

struct ApiThread {  // trivially destructible: thread exit is seen through exit_key instead
  ApiBuffer* buffer;
  uint32_t tid;
  uint32_t epoch;
  int runtime_depth;  // inside a recorded runtime call: driver calls it makes are its own business
};
thread_local ApiThread t_api;

void OnThreadExit(void* p) {
  auto* b = static_cast<ApiBuffer*>(p);
  std::lock_guard<std::mutex> lock(b->mu);
  b->owner_alive = false;
}

ApiBuffer* ThreadBuffer() {
  if (t_api.buffer) return t_api.buffer;
  ApiBuffer* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_api->mu);
    if (!g_api->idle.empty()) {
      b = g_api->idle.back();
      g_api->idle.pop_back();
    } else {
      b = new ApiBuffer();
      g_api->buffers.push_back(b);
    }
  }
  {
    std::lock_guard<std::mutex> lock(b->mu);
    b->owner_alive = true;
    b->records.reserve(kApiBatch);
  }
  pthread_setspecific(g_api->exit_key, b);
  t_api.buffer = b;
  t_api.tid = static_cast<uint32_t>(gettid());
  return b;
}

inline int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void OnApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  // A switch of the callbacks (window, capture range) may have dropped an ENTER or an EXIT: start over.
  uint32_t epoch = g_api->epoch.load(std::memory_order_relaxed);
  const bool new_epoch = t_api.epoch != epoch;
  if (new_epoch) {
    t_api.epoch = epoch;
    t_api.runtime_depth = 0;
  }
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    if (runtime)
      ++t_api.runtime_depth;
    else if (t_api.runtime_depth > 0)
      return;
    *cb->correlationData = static_cast<uint64_t>(MonotonicNs());
    return;
  }
  if (runtime) {
    if (t_api.runtime_depth > 0) --t_api.runtime_depth;
  } else if (t_api.runtime_depth > 0) {
    return;
  }
  if (!g_api->recording.load(std::memory_order_relaxed)) return;
  ApiCallRecord r;
  r.end = MonotonicNs();
  r.start = new_epoch ? r.end : static_cast<Timestamp>(*cb->correlationData);  // no ENTER seen: unknown start
  if (r.start > r.end) r.start = r.end;
  r.correlation_id = cb->correlationId;
  r.callback_id = cbid;
  r.return_code = cb->functionReturnValue ? *static_cast<const int32_t*>(cb->functionReturnValue) : 0;
  r.domain = static_cast<uint8_t>(runtime ? ApiDomain::kRuntime : ApiDomain::kDriver);
  ApiBuffer* b = ThreadBuffer();
  r.tid = t_api.tid;
  ApiEntry e{r, 0, kNone, 0};
  if (g_api->sync_records) {
    e.sync_kind = SyncKindOfApi(r.domain, cbid);
    if (e.sync_kind) {
      e.context_id = cb->contextUid;
      const SyncKind k = static_cast<SyncKind>(e.sync_kind);
      // Stream sync and stream-wait-event calls take the stream first, in the runtime and the driver alike.
      if ((k == SyncKind::kStreamSync || k == SyncKind::kStreamWaitEvent) && cb->functionParams) {
        CUstream stream = *static_cast<const CUstream*>(cb->functionParams);
        const bool per_thread = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000 ||
                                              cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000
                                        : cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz ||
                                              cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz;
        uint32_t id = 0;
        if (cb->context && cuptiGetStreamIdEx(cb->context, stream, per_thread, &id) == CUPTI_SUCCESS)
          e.stream_id = id;
      }
    }
  }
  std::vector<ApiEntry> full;
  {
    std::lock_guard<std::mutex> lock(b->mu);
    b->records.push_back(e);
    if (b->records.size() < kApiBatch) return;
    full.swap(b->records);
  }
  std::lock_guard<std::mutex> lock(g_api->mu);
  g_api->full.push_back(std::move(full));
  if (!g_api->spare.empty()) {
    std::vector<ApiEntry> fresh = std::move(g_api->spare.back());
    g_api->spare.pop_back();
    std::lock_guard<std::mutex> bl(b->mu);
    if (b->records.capacity() == 0) b->records.swap(fresh);
  } else {
    std::lock_guard<std::mutex> bl(b->mu);
    if (b->records.capacity() == 0) b->records.reserve(kApiBatch);
  }
}

bool ApiCallbackMode() {
  static const bool activity = [] {
    const char* v = env::Get(env::Var::kApi);
    return v && std::string(v) == "activity";
  }();
  return !activity;
}

std::vector<CUpti_CallbackId> KeyRuntimeCallbackIds(bool all) {
  std::vector<CUpti_CallbackId> ids;
  for (CUpti_CallbackId id = 1; id < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, id, &name) != CUPTI_SUCCESS || !name) continue;
    if (all || IsKeyRuntimeApi(ApiDisplayName(name))) ids.push_back(id);
  }
  return ids;
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
  if (g_api && (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) &&
      (inj.config.kinds & kTraceRuntime))
    OnApiCallback(domain, cbid, static_cast<const CUpti_CallbackData*>(data));
  if (domain == CUPTI_CB_DOMAIN_NVTX && cbid == CUPTI_CBID_NVTX_nvtxDomainRangePushEx &&
      config::WantsNvtx(inj.config.kinds))
    OnNvtxPayloadPush(inj, data);
  if (auto module = inj.module_callback.load()) module(inj, domain, cbid, data);
  if (config::HasCaptureRange(inj.config.capture)) CaptureCallback()(userdata, domain, cbid, data);
}
}  // namespace

void AddLoss(Injection& inj, const char* name, uint8_t severity, uint64_t count, const std::string& detail) {
  inj.writer->Add(MakeLoss(inj.writer->Intern(name), static_cast<Severity>(severity), count,
                           inj.writer->Intern(detail), inj.pid));
}

void NoteOwnLaunch(Injection& inj, uint32_t correlation_id) {
  std::lock_guard<std::mutex> lock(inj.own_launches_mu);
  inj.own_launches.push_back(correlation_id);
  inj.has_own_launches.store(true, std::memory_order_relaxed);
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
    *error = cupti::Describe("cuptiSubscribe_v2", r);
    return false;
  }

  // Every record on CLOCK_MONOTONIC, the clock gcollect and every other traced process share.
  // The trace clock is CLOCK_MONOTONIC. CUPTI stamps CLOCK_REALTIME by default on Linux; registering a
  // timestamp callback would give monotonic stamps directly, but measured on the H200 it made launches slower
  // (bimodal 5.0 / 6.8 us per launch instead of 4.8-5.3), so by default the decoder shifts CUPTI's stamps by
  // a measured realtime -> monotonic offset, re-measured at every flush. GTRACE_CLOCK=monotonic selects the
  // callback.
  const char* clock = env::Get(env::Var::kClock);
  bool use_callback = clock && std::string(clock) == "monotonic";
  if (!use_callback || cuptiActivityRegisterTimestampCallback(MonotonicTimestamp) != CUPTI_SUCCESS) {
    inj.clock_shifted = true;
    RefreshClockOffset(inj);
  }
  ApplyActivityAttributes();
  cuptiEnableDomain(1, inj.subscriber, CUPTI_CB_DOMAIN_STATE);  // rare: errors and warnings only
  // NCCL's payloads: one callback id (domain pushes with attributes), cheap for every other push.
  if (config::WantsNvtx(inj.config.kinds)) EnableNvtxPayloads(inj);
  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  r = cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  if (r != CUPTI_SUCCESS) {
    *error = cupti::Describe("cuptiActivityRegisterCallbacks", r);
    return false;
  }
  if ((inj.config.kinds & kTraceRuntime) && ApiCallbackMode()) {
    g_api = new ApiState();
    g_api->sync_records = (inj.config.kinds & kTraceSync) != 0;
    pthread_key_create(&g_api->exit_key, OnThreadExit);
  }
  // Always on and nearly free: device properties, contexts, NVTX-named threads and streams.
  for (CUpti_ActivityKind k :
       {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_NAME}) {
    r = cuptiActivityEnable(k);
    if (r != CUPTI_SUCCESS && k == CUPTI_ACTIVITY_KIND_DEVICE) {
      *error = cupti::Describe("cuptiActivityEnable(DEVICE)", r);
      return false;
    }
  }
  return true;
}

namespace {
void EnableApiCallbacks(Injection& inj, bool enable) {
  const uint32_t kinds = inj.config.kinds;
  static const std::vector<CUpti_CallbackId> runtime_ids = KeyRuntimeCallbackIds(kinds & kTraceRuntimeAll);
  static const bool no_driver_launch = env::Get(env::Var::kNoDriverLaunch) != nullptr;
  const bool profiler_capture = inj.config.capture == CaptureMode::kProfilerApi;
  if (!enable) g_api->recording.store(false);
  g_api->epoch.fetch_add(1);
  size_t failed = 0;
  CUptiResult first_error = CUPTI_SUCCESS;
  for (CUpti_CallbackId id : runtime_ids) {
    // The capture range's own switches stay on (capture.cc enabled them).
    if (!enable && profiler_capture &&
        (id == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 ||
         id == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000))
      continue;
    CUptiResult r = cuptiEnableCallback(enable, inj.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id);
    if (r != CUPTI_SUCCESS && !failed++) first_error = r;
  }
  // A module (counters) may have enabled driver launch callbacks for itself: leave them on.
  if (!(kinds & kTraceDriver) && !no_driver_launch && (enable || !inj.module_callback.load())) {
    for (CUpti_CallbackId id : kDriverLaunchApis) {
      CUptiResult r = cuptiEnableCallback(enable, inj.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
      if (r != CUPTI_SUCCESS && !failed++) first_error = r;
    }
  }
  // Driver calls that wait, for libraries that synchronize through the driver (sync records).
  if (!(kinds & kTraceDriver) && (kinds & kTraceSync)) {
    for (CUpti_CallbackId id : kDriverSyncApis) {
      CUptiResult r = cuptiEnableCallback(enable, inj.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
      if (r != CUPTI_SUCCESS && !failed++) first_error = r;
    }
  }
  if (enable) g_api->recording.store(true);
  if (failed && enable) {
    Warn("%s", cupti::Describe("cuptiEnableCallback", first_error).c_str());
    std::lock_guard<std::mutex> lock(inj.mu);
    AddLoss(inj, "cupti_kind_unavailable", static_cast<uint8_t>(Severity::kWarning), failed,
            "API call callbacks: " + cupti::Describe("cuptiEnableCallback", first_error));
  }
}
}  // namespace

void EnableTraceKinds(Injection& inj, bool enable) {
  const uint32_t kinds = inj.config.kinds;
  const bool api_callbacks = g_api != nullptr;  // StartActivity chose
  // API callbacks go on before the GPU kinds and off after them, so that every kernel, copy and memset in
  // the trace has the call that issued it (CUPTI takes a while to switch ~150 callback ids).
  if (api_callbacks && enable) EnableApiCallbacks(inj, true);
  // Library calls (--trace=cublas,...) arrive as the libraries' NVTX ranges: MARKER on (the decoder keeps
  // their domains only when nvtx itself was not asked for).
  const uint32_t effective = kinds | (config::WantsNvtx(kinds) ? kTraceNvtx : 0u);
  for (const auto& m : kKindMap) {
    if (!(effective & m.bit)) continue;
    // With API callbacks, sync records come from the sync calls: CUPTI's SYNCHRONIZATION kind made every
    // runtime call slower (~0.25 us each; PyTorch makes ~10 per kernel).
    if ((m.bit == kTraceRuntime || m.bit == kTraceSync) && api_callbacks) continue;
    // With a capture range, NVTX stays on throughout (enabled once): cheap, and it shows where the range
    // sits.
    if (m.bit == kTraceNvtx && config::HasCaptureRange(inj.config.capture) && !enable) continue;
    for (CUpti_ActivityKind k : m.kinds) {
      if (k == CUPTI_ACTIVITY_KIND_INVALID) continue;
      // GTRACE_KERNEL_ACTIVITY=serial: CUPTI's serialized KERNEL kind instead of CONCURRENT_KERNEL, an
      // overhead experiment (docs/collector.md): it times kernels without instrumenting their code, at the
      // price of serializing kernels of different streams.
      static const bool serial_kernels = [] {
        const char* v = env::Get(env::Var::kKernelActivity);
        return v && std::string_view(v) == "serial";
      }();
      if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && serial_kernels) k = CUPTI_ACTIVITY_KIND_KERNEL;
      CUptiResult r = enable ? cuptiActivityEnable(k) : cuptiActivityDisable(k);
      if (r != CUPTI_SUCCESS && enable) {
        Warn("%s", cupti::Describe("cuptiActivityEnable", r).c_str());
        std::lock_guard<std::mutex> lock(inj.mu);
        AddLoss(inj, "cupti_kind_unavailable", static_cast<uint8_t>(Severity::kWarning), 1,
                "activity kind " + std::to_string(int(k)) + ": " + cupti::Describe("enable", r));
      }
    }
  }
  if (api_callbacks) {
    if (!enable) EnableApiCallbacks(inj, false);
  } else {
    if ((kinds & kTraceRuntime) && !(kinds & kTraceRuntimeAll) && enable) {
      for (CUpti_CallbackId id : kNoisyRuntimeApis) cuptiActivityEnableRuntimeApi(id, 0);
    }
    static const bool no_driver_launch = env::Get(env::Var::kNoDriverLaunch) != nullptr;
    if ((kinds & kTraceRuntime) && !(kinds & kTraceDriver) && !no_driver_launch) {
      for (CUpti_CallbackId id : kDriverLaunchApis) cuptiActivityEnableDriverApi(id, enable ? 1 : 0);
    }
  }
  inj.tracing_enabled.store(enable);
}

void DrainApiCalls(Injection& inj, DrainMode mode) {
  if (!g_api) return;
  std::vector<std::vector<ApiEntry>> batches;
  std::vector<ApiBuffer*> buffers;
  {
    std::unique_lock<std::mutex> lock(g_api->mu, std::defer_lock);
    if (mode == DrainMode::kNoWait) {
      if (!lock.try_lock()) return;
    } else {
      lock.lock();
    }
    batches.swap(g_api->full);
    if (mode != DrainMode::kFullBatches) buffers = g_api->buffers;
  }
  for (ApiBuffer* b : buffers) {
    std::unique_lock<std::mutex> lock(b->mu, std::defer_lock);
    if (mode == DrainMode::kNoWait) {
      if (!lock.try_lock()) continue;  // a thread stopped by the signal may hold it
    } else {
      lock.lock();
    }
    bool ended = !b->owner_alive;
    if (!b->records.empty()) {
      std::vector<ApiEntry> batch;
      batch.reserve(ended ? 0 : kApiBatch);
      batch.swap(b->records);
      batches.push_back(std::move(batch));
    }
    if (ended && mode != DrainMode::kNoWait) {
      lock.unlock();
      std::lock_guard<std::mutex> gl(g_api->mu);
      bool listed = false;
      for (ApiBuffer* i : g_api->idle) listed |= i == b;
      if (!listed) g_api->idle.push_back(b);
    }
  }
  if (batches.empty()) return;
  {
    std::lock_guard<std::mutex> lock(inj.mu);
    if (!inj.finished)
      for (const auto& batch : batches)
        for (const ApiEntry& e : batch) {
          inj.decoder->AddApiCall(e.call);
          if (!e.sync_kind) continue;
          SyncRecord s;
          s.start = e.call.start;
          s.end = e.call.end;
          s.tid = e.call.tid;
          s.context_id = e.context_id;
          s.stream_id = e.stream_id;
          s.correlation_id = e.call.correlation_id;
          s.sync_kind = e.sync_kind;
          inj.decoder->AddSync(s);
        }
  }
  std::lock_guard<std::mutex> lock(g_api->mu);
  for (auto& batch : batches) {
    if (g_api->spare.size() >= 16 || batch.capacity() < kApiBatch) continue;
    batch.clear();
    g_api->spare.push_back(std::move(batch));
  }
}

void StopApiCalls() {
  if (g_api) g_api->recording.store(false);
}

void EnableCaptureContext(Injection& inj) {
  if (!config::WantsNvtx(inj.config.kinds)) return;
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER_DATA);
}

void FlushActivity(bool forced) {
  cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

}  // namespace gt::inject
