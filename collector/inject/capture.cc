// --capture-range: trace only between cudaProfilerStart/Stop, or inside NVTX ranges with a given message
// (push/pop or start/end, default or named domain, ASCII or wide message). Only these few callback ids are
// enabled, so ordinary API calls pay nothing for them.
#include <nvtx3/nvToolsExt.h>
// CUPTI's NVTX parameter structs need the NVTX types above.
#include <generated_nvtx_meta.h>

#include <cstring>
#include <vector>

#include "cupti/cupti_result.h"
#include "gt/env.h"
#include "inject/injection.h"

namespace gt::inject {

using config::CaptureMode;
using decode::NvtxMessageEquals;

namespace {

// The open capture range. Push/pop ranges nest per thread and per domain: the range closes at the pop that
// matches its push on the thread (and domain) that opened it. Start/end ranges close at the nvtxRangeEnd of
// their id, on any thread.
enum class Open : uint8_t { kNone, kPushPop, kStartEnd };
std::atomic<Open> g_open{Open::kNone};
std::atomic<uint32_t> g_capture_tid{0};              // push/pop: the thread that opened it
std::atomic<const void*> g_capture_domain{nullptr};  // push/pop: its domain (null = the default domain)
std::atomic<uint64_t> g_capture_range{0};            // start/end: its range id
thread_local int t_depth = 0;  // push/pop: nesting below the capture range on that thread
std::atomic<uint64_t> g_ranges{0};

uint32_t Tid() {
  return static_cast<uint32_t>(gettid());
}

bool DebugMarkers() {
  static const bool on = env::Get(env::Var::kDebugMarkers) != nullptr;
  return on;
}

void OpenRange(Injection& inj) {
  if (inj.capture_open.exchange(true)) return;
  g_ranges.fetch_add(1);
  if (DebugMarkers()) Warn("capture range %llu opened", (unsigned long long)g_ranges.load());
  EnableTraceKinds(inj, true);
}

void CloseRange(Injection& inj) {
  g_open.store(Open::kNone);
  if (!inj.capture_open.exchange(false)) return;
  if (DebugMarkers()) Warn("capture range %llu closed", (unsigned long long)g_ranges.load());
  EnableTraceKinds(inj, false);
}

bool MatchesAttr(const std::string& wanted, const nvtxEventAttributes_t* attr) {
  if (!attr) return false;
  switch (attr->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return NvtxMessageEquals(wanted, attr->message.ascii, nullptr);
    case NVTX_MESSAGE_TYPE_UNICODE:
      return NvtxMessageEquals(wanted, nullptr, attr->message.unicode);
    default:
      return false;  // registered string handles: the text is not known here
  }
}

// The message of an NVTX push or start call equals the capture name. `domain` receives the call's domain.
bool Matches(const std::string& wanted, CUpti_CallbackId cbid, const void* params, const void** domain) {
  *domain = nullptr;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      return NvtxMessageEquals(wanted, static_cast<const nvtxRangePushA_params*>(params)->message, nullptr);
    case CUPTI_CBID_NVTX_nvtxRangePushW:
      return NvtxMessageEquals(wanted, nullptr, static_cast<const nvtxRangePushW_params*>(params)->message);
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      return MatchesAttr(wanted, static_cast<const nvtxRangePushEx_params*>(params)->eventAttrib);
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto* p = static_cast<const nvtxDomainRangePushEx_params*>(params);
      *domain = p->domain;
      return MatchesAttr(wanted, p->core.eventAttrib);
    }
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      return NvtxMessageEquals(wanted, static_cast<const nvtxRangeStartA_params*>(params)->message, nullptr);
    case CUPTI_CBID_NVTX_nvtxRangeStartW:
      return NvtxMessageEquals(wanted, nullptr, static_cast<const nvtxRangeStartW_params*>(params)->message);
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      return MatchesAttr(wanted, static_cast<const nvtxRangeStartEx_params*>(params)->eventAttrib);
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
      const auto* p = static_cast<const nvtxDomainRangeStartEx_params*>(params);
      *domain = p->domain;
      return MatchesAttr(wanted, p->core.eventAttrib);
    }
    default:
      return false;
  }
}

bool IsPush(CUpti_CallbackId cbid) {
  return cbid == CUPTI_CBID_NVTX_nvtxRangePushA || cbid == CUPTI_CBID_NVTX_nvtxRangePushW ||
         cbid == CUPTI_CBID_NVTX_nvtxRangePushEx || cbid == CUPTI_CBID_NVTX_nvtxDomainRangePushEx;
}
bool IsStart(CUpti_CallbackId cbid) {
  return cbid == CUPTI_CBID_NVTX_nvtxRangeStartA || cbid == CUPTI_CBID_NVTX_nvtxRangeStartW ||
         cbid == CUPTI_CBID_NVTX_nvtxRangeStartEx || cbid == CUPTI_CBID_NVTX_nvtxDomainRangeStartEx;
}

uint64_t EndId(CUpti_CallbackId cbid, const void* params) {
  if (cbid == CUPTI_CBID_NVTX_nvtxRangeEnd) return static_cast<const nvtxRangeEnd_params*>(params)->id;
  return static_cast<const nvtxDomainRangeEnd_params*>(params)->core.id;
}

void OnNvtxCapture(Injection& inj, CUpti_CallbackId cbid, const CUpti_NvtxData* d) {
  const void* params = d->functionParams;
  if (!params && cbid != CUPTI_CBID_NVTX_nvtxRangePop) return;
  const Open open = g_open.load();
  if (cbid == CUPTI_CBID_NVTX_nvtxRangePop || cbid == CUPTI_CBID_NVTX_nvtxDomainRangePop) {
    if (open != Open::kPushPop || g_capture_tid.load() != Tid()) return;
    const void* domain = cbid == CUPTI_CBID_NVTX_nvtxDomainRangePop
                             ? static_cast<const nvtxDomainRangePop_params*>(params)->domain
                             : nullptr;
    if (domain != g_capture_domain.load()) return;
    if (t_depth == 0)
      CloseRange(inj);
    else
      --t_depth;
    return;
  }
  if (cbid == CUPTI_CBID_NVTX_nvtxRangeEnd || cbid == CUPTI_CBID_NVTX_nvtxDomainRangeEnd) {
    if (open == Open::kStartEnd && EndId(cbid, params) == g_capture_range.load()) CloseRange(inj);
    return;
  }
  const bool push = IsPush(cbid);
  if (!push && !IsStart(cbid)) return;
  const void* domain = nullptr;
  if (open != Open::kNone) {
    // A push nested inside the capture range, on its thread and in its domain.
    if (push && open == Open::kPushPop && g_capture_tid.load() == Tid()) {
      Matches("", cbid, params, &domain);
      if (domain == g_capture_domain.load()) ++t_depth;
    }
    return;
  }
  if (!Matches(inj.config.capture_nvtx_name, cbid, params, &domain)) return;
  if (push) {
    g_capture_tid.store(Tid());
    g_capture_domain.store(domain);
    t_depth = 0;
    g_open.store(Open::kPushPop);
  } else {
    // The range id is the call's return value, which CUPTI hands to the callback.
    if (!d->functionReturnValue) {
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true))
        Warn(
            "--capture-range=nvtx:%s: CUPTI did not report the id of the nvtxRangeStart range; it is not "
            "used as a capture range",
            inj.config.capture_nvtx_name.c_str());
      return;
    }
    g_capture_range.store(*static_cast<const nvtxRangeId_t*>(d->functionReturnValue));
    g_open.store(Open::kStartEnd);
  }
  OpenRange(inj);
}

void CUPTIAPI Callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  auto& inj = *static_cast<Injection*>(userdata);
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    if (inj.config.capture != CaptureMode::kProfilerApi) return;
    bool start = domain == CUPTI_CB_DOMAIN_RUNTIME_API
                     ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
                     : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
    bool stop = domain == CUPTI_CB_DOMAIN_RUNTIME_API
                    ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000
                    : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
    const auto* info = static_cast<const CUpti_CallbackData*>(data);
    // Start at ENTER so the call itself is in the trace; stop at EXIT for the same reason.
    if (start && info->callbackSite == CUPTI_API_ENTER) OpenRange(inj);
    if (stop && info->callbackSite == CUPTI_API_EXIT) CloseRange(inj);
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_NVTX) return;
  if (inj.config.capture == CaptureMode::kNvtx)
    OnNvtxCapture(inj, cbid, static_cast<const CUpti_NvtxData*>(data));
}

}  // namespace

CUpti_CallbackFunc CaptureCallback() {
  return Callback;
}

bool StartCapture(Injection& inj, std::string* error) {
  std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> ids;
  if (inj.config.capture == CaptureMode::kProfilerApi) {
    ids.push_back({CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000});
    ids.push_back({CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000});
    ids.push_back({CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart});
    ids.push_back({CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop});
  } else if (inj.config.capture == CaptureMode::kNvtx) {
    for (CUpti_CallbackId id :
         {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushW, CUPTI_CBID_NVTX_nvtxRangePushEx,
          CUPTI_CBID_NVTX_nvtxRangePop, CUPTI_CBID_NVTX_nvtxRangeStartA, CUPTI_CBID_NVTX_nvtxRangeStartW,
          CUPTI_CBID_NVTX_nvtxRangeStartEx, CUPTI_CBID_NVTX_nvtxRangeEnd,
          CUPTI_CBID_NVTX_nvtxDomainRangePushEx, CUPTI_CBID_NVTX_nvtxDomainRangePop,
          CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeEnd})
      ids.push_back({CUPTI_CB_DOMAIN_NVTX, id});
  }
  for (auto [dom, id] : ids) {
    CUptiResult r = cuptiEnableCallback(1, inj.subscriber, dom, id);
    if (r != CUPTI_SUCCESS) {
      *error = cupti::Describe("cuptiEnableCallback", r);
      return false;
    }
  }
  return true;
}

}  // namespace gt::inject
