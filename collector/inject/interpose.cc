// Second-client detection. gcollect preloads this library (LD_PRELOAD), so an app's own calls to
// cuptiSubscribe / cuptiSubscribe_v2 (torch.profiler's Kineto, another tool) land here first. CUPTI allows one
// subscriber per process: the call is forwarded unchanged, and when gtrace already holds the subscription the
// caller is named (its library, from the return address) in a warning and in the trace's loss stats.
#include <dlfcn.h>

#include "inject/injection.h"

namespace gt::collector {

template <typename F>
F RealCupti(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

static void NoteSecondClient(void* return_address, CUptiResult result) {
  Injection* inj = GetInjection();
  if (!inj || !inj->subscriber) return;
  Dl_info info{};
  std::string who = "unknown library";
  if (dladdr(return_address, &info) && info.dli_fname) who = info.dli_fname;
  const char* r = nullptr;
  cuptiGetResultString(result, &r);
  Warn("a second CUPTI client in the app tried to subscribe (%s): %s. CUPTI allows one per process, so that "
       "profiler (torch.profiler / Kineto?) records no CUDA activity while gcollect traces.",
       who.c_str(), r ? r : "error");
  std::lock_guard<std::mutex> lock(inj->mu);
  if (!inj->finished)
    AddLoss(*inj, "cupti_second_client", static_cast<uint8_t>(Severity::kWarning), 1,
            "another CUPTI client (" + who + ") tried to subscribe; CUPTI refused it (" + (r ? r : "error") + ")");
}

CUptiResult CallRealSubscribeV2(CUpti_SubscriberHandle* s, CUpti_CallbackFunc cb, void* ud, CUpti_SubscriberParams* p) {
  using Fn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*);
  static Fn real = RealCupti<Fn>("cuptiSubscribe_v2");
  if (!real) real = &::cuptiSubscribe_v2;
  return real(s, cb, ud, p);
}

}  // namespace gt::collector

extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* s,
                                                                                      CUpti_CallbackFunc cb, void* ud) {
  using Fn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
  static Fn real = gt::collector::RealCupti<Fn>("cuptiSubscribe");
  if (!real) return CUPTI_ERROR_NOT_INITIALIZED;
  CUptiResult r = real(s, cb, ud);
  if (r != CUPTI_SUCCESS) gt::collector::NoteSecondClient(__builtin_return_address(0), r);
  return r;
}

extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiSubscribe_v2(CUpti_SubscriberHandle* s, CUpti_CallbackFunc cb, void* ud, CUpti_SubscriberParams* p) {
  using Fn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*);
  static Fn real = gt::collector::RealCupti<Fn>("cuptiSubscribe_v2");
  if (!real) return CUPTI_ERROR_NOT_INITIALIZED;
  CUptiResult r = real(s, cb, ud, p);
  if (r != CUPTI_SUCCESS) gt::collector::NoteSecondClient(__builtin_return_address(0), r);
  return r;
}
