// --capture-range: trace only between cudaProfilerStart/Stop, or inside NVTX push/pop ranges with a given
// message. Only these few callback ids are enabled, so ordinary API calls pay nothing for the callback API.
#include <nvtx3/nvToolsExt.h>
// CUPTI's NVTX parameter structs need the NVTX types above.
#include <generated_nvtx_meta.h>

#include <cstring>

#include "inject/injection.h"

namespace gt::collector {
namespace {

std::atomic<uint32_t> g_capture_tid{0};  // thread that opened the NVTX capture range
thread_local int t_depth = 0;            // nesting below the capture range on that thread
std::atomic<uint64_t> g_ranges{0};

uint32_t Tid() {
  return static_cast<uint32_t>(gettid());
}

void Open(Injection& inj) {
  if (inj.capture_open.exchange(true)) return;
  g_ranges.fetch_add(1);
  EnableTraceKinds(inj, true);
}

void Close(Injection& inj) {
  if (!inj.capture_open.exchange(false)) return;
  EnableTraceKinds(inj, false);
}

const char* PushMessage(CUpti_CallbackId cbid, const CUpti_NvtxData* d) {
  const nvtxEventAttributes_t* attr = nullptr;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      return static_cast<const nvtxRangePushA_params*>(d->functionParams)->message;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      attr = static_cast<const nvtxRangePushEx_params*>(d->functionParams)->eventAttrib;
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
      attr = static_cast<const nvtxDomainRangePushEx_params*>(d->functionParams)->core.eventAttrib;
      break;
    default:
      return nullptr;
  }
  if (attr && attr->messageType == NVTX_MESSAGE_TYPE_ASCII) return attr->message.ascii;
  return nullptr;
}

void CUPTIAPI Callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  auto& inj = *static_cast<Injection*>(userdata);
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const auto* info = static_cast<const CUpti_CallbackData*>(data);
    bool start = domain == CUPTI_CB_DOMAIN_RUNTIME_API
                     ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
                     : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
    // Start at ENTER so the call itself is in the trace; stop at EXIT for the same reason.
    if (start && info->callbackSite == CUPTI_API_ENTER) Open(inj);
    if (!start && info->callbackSite == CUPTI_API_EXIT) Close(inj);
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_NVTX) return;
  const auto* d = static_cast<const CUpti_NvtxData*>(data);
  if (cbid == CUPTI_CBID_NVTX_nvtxRangePop || cbid == CUPTI_CBID_NVTX_nvtxDomainRangePop) {
    if (!inj.capture_open.load() || g_capture_tid.load() != Tid()) return;
    if (t_depth == 0) {
      Close(inj);
      g_capture_tid.store(0);
    } else {
      --t_depth;
    }
    return;
  }
  if (inj.capture_open.load()) {
    if (g_capture_tid.load() == Tid()) ++t_depth;
    return;
  }
  const char* msg = PushMessage(cbid, d);
  if (msg && inj.config.capture_nvtx_name == msg) {
    g_capture_tid.store(Tid());
    t_depth = 0;
    Open(inj);
  }
}

}  // namespace

CUpti_CallbackFunc CaptureCallback() {
  return Callback;
}

bool StartCapture(Injection& inj, std::string* error) {
  CUptiResult r = CUPTI_SUCCESS;
  if (inj.config.capture == CaptureMode::kProfilerApi) {
    for (auto [dom, id] :
         {std::pair{CUPTI_CB_DOMAIN_RUNTIME_API,
                    CUpti_CallbackId(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000)},
          std::pair{CUPTI_CB_DOMAIN_RUNTIME_API,
                    CUpti_CallbackId(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000)},
          std::pair{CUPTI_CB_DOMAIN_DRIVER_API, CUpti_CallbackId(CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)},
          std::pair{CUPTI_CB_DOMAIN_DRIVER_API, CUpti_CallbackId(CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)}}) {
      r = cuptiEnableCallback(1, inj.subscriber, dom, id);
      if (r != CUPTI_SUCCESS) break;
    }
  } else if (inj.config.capture == CaptureMode::kNvtx) {
    for (CUpti_CallbackId id :
         {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushEx, CUPTI_CBID_NVTX_nvtxRangePop,
          CUPTI_CBID_NVTX_nvtxDomainRangePushEx, CUPTI_CBID_NVTX_nvtxDomainRangePop}) {
      r = cuptiEnableCallback(1, inj.subscriber, CUPTI_CB_DOMAIN_NVTX, id);
      if (r != CUPTI_SUCCESS) break;
    }
  }
  if (r != CUPTI_SUCCESS) {
    const char* s = nullptr;
    cuptiGetResultString(r, &s);
    *error = std::string("cuptiEnableCallback: ") + (s ? s : "error");
    return false;
  }
  return true;
}

}  // namespace gt::collector
