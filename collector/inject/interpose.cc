// Second-client detection. gcollect preloads this library (LD_PRELOAD), so an app's own calls to
// cuptiSubscribe / cuptiSubscribe_v2 (torch.profiler's Kineto, another tool) land here first. CUPTI allows
// one subscriber per process: the call is forwarded unchanged, and when gtrace already holds the subscription
// the caller is named (its library, from the return address) in a warning and in the trace's loss stats.
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "cupti/cupti_result.h"
#include "inject/injection.h"

namespace gt::inject {

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
  const char* r = cupti::ResultText(result);
  Warn(
      "a second CUPTI client in the app tried to subscribe (%s): %s. CUPTI allows one per process, so that "
      "profiler (torch.profiler / Kineto?) records no CUDA activity while gcollect traces.",
      who.c_str(), r);
  std::lock_guard<std::mutex> lock(inj->mu);
  if (!inj->finished)
    AddLoss(*inj, "cupti_second_client", static_cast<uint8_t>(Severity::kWarning), 1,
            "another CUPTI client (" + who + ") tried to subscribe; CUPTI refused it (" + r + ")");
}

CUptiResult CallRealSubscribeV2(CUpti_SubscriberHandle* s, CUpti_CallbackFunc cb, void* ud,
                                CUpti_SubscriberParams* p) {
  using Fn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*);
  static Fn real = RealCupti<Fn>("cuptiSubscribe_v2");
  if (!real) real = &::cuptiSubscribe_v2;
  return real(s, cb, ud, p);
}

namespace {
// Fixed table, no allocation: pthread_setname_np may run before main and in any thread.
constexpr int kMaxNames = 1024;
struct NameSlot {
  std::atomic<uint32_t> tid{0};
  char name[16];
};
NameSlot g_names[kMaxNames];
std::mutex g_names_mu;
}  // namespace

void RememberThreadName(uint32_t tid, const char* name) {
  if (!tid || !name) return;
  std::lock_guard<std::mutex> lock(g_names_mu);
  int free_slot = -1;
  for (int i = 0; i < kMaxNames; ++i) {
    uint32_t t = g_names[i].tid.load(std::memory_order_relaxed);
    if (t == tid) {
      std::strncpy(g_names[i].name, name, 15);
      g_names[i].name[15] = 0;
      return;
    }
    if (t == 0 && free_slot < 0) free_slot = i;
  }
  if (free_slot < 0) free_slot = static_cast<int>(tid % kMaxNames);  // full: overwrite one
  std::strncpy(g_names[free_slot].name, name, 15);
  g_names[free_slot].name[15] = 0;
  g_names[free_slot].tid.store(tid, std::memory_order_relaxed);
}

bool LookupThreadName(uint32_t tid, std::string* name) {
  std::lock_guard<std::mutex> lock(g_names_mu);
  for (int i = 0; i < kMaxNames; ++i) {
    if (g_names[i].tid.load(std::memory_order_relaxed) == tid) {
      *name = g_names[i].name;
      return !name->empty();
    }
  }
  return false;
}

void ScanThreadNames() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    if (std::getline(f, name) && !name.empty())
      RememberThreadName(static_cast<uint32_t>(std::atoi(e->d_name)), name.c_str());
  }
  closedir(d);
}

}  // namespace gt::inject

// Thread names: a thread that names itself and exits before CUPTI's records are decoded keeps its name.
extern "C" __attribute__((visibility("default"))) int pthread_setname_np(pthread_t thread, const char* name) {
  using Fn = int (*)(pthread_t, const char*);
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "pthread_setname_np"));
  if (!real) return ENOSYS;
  int r = real(thread, name);
  if (r == 0 && pthread_equal(thread, pthread_self()))
    gt::inject::RememberThreadName(static_cast<uint32_t>(gettid()), name);
  return r;
}

extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiSubscribe(CUpti_SubscriberHandle* s, CUpti_CallbackFunc cb, void* ud) {
  using Fn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
  static Fn real = gt::inject::RealCupti<Fn>("cuptiSubscribe");
  if (!real) return CUPTI_ERROR_NOT_INITIALIZED;
  CUptiResult r = real(s, cb, ud);
  if (r != CUPTI_SUCCESS) gt::inject::NoteSecondClient(__builtin_return_address(0), r);
  return r;
}

extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiSubscribe_v2(CUpti_SubscriberHandle* s, CUpti_CallbackFunc cb, void* ud, CUpti_SubscriberParams* p) {
  using Fn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*);
  static Fn real = gt::inject::RealCupti<Fn>("cuptiSubscribe_v2");
  if (!real) return CUPTI_ERROR_NOT_INITIALIZED;
  CUptiResult r = real(s, cb, ud, p);
  if (r != CUPTI_SUCCESS) gt::inject::NoteSecondClient(__builtin_return_address(0), r);
  return r;
}
