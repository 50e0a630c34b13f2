// The injection's side of OS runtime waits (--trace=osrt): libgtrace_osrt.so, which gcollect preloads into
// every process, times the waits; here the flusher drains its buffer into the trace as ranges of the "OS
// runtime" domain on the waiting thread. The shim is found with dlsym: without it (GTRACE_NO_PRELOAD, a
// statically linked app) nothing is recorded and the trace says so.
#include <dlfcn.h>

#include <string>

#include "inject/injection.h"
#include "osrt/osrt_abi.h"

namespace gt::inject {
namespace {

struct Shim {
  GtOsrtDrainFn drain = nullptr;
  GtOsrtStatsFn stats = nullptr;
  GtOsrtFuncNameFn func_name = nullptr;
  GtOsrtIgnoreThreadFn ignore_thread = nullptr;
  StringId domain = 0;
  StringId names[64] = {};  // interned function names, by the shim's index
};
Shim g_shim;
bool g_started = false;

}  // namespace

void StartOsrt(Injection& inj) {  // under inj.mu
  if (!(inj.config.kinds & config::kTraceOsrt) || g_started) return;
  g_started = true;
  g_shim.drain = reinterpret_cast<GtOsrtDrainFn>(dlsym(RTLD_DEFAULT, GT_OSRT_DRAIN));
  g_shim.stats = reinterpret_cast<GtOsrtStatsFn>(dlsym(RTLD_DEFAULT, GT_OSRT_STATS));
  g_shim.func_name = reinterpret_cast<GtOsrtFuncNameFn>(dlsym(RTLD_DEFAULT, GT_OSRT_FUNC_NAME));
  g_shim.ignore_thread = reinterpret_cast<GtOsrtIgnoreThreadFn>(dlsym(RTLD_DEFAULT, GT_OSRT_IGNORE_THREAD));
  if (!g_shim.drain || !g_shim.stats || !g_shim.func_name || !g_shim.ignore_thread) {
    g_shim = Shim();
    AddLoss(inj, "osrt_unavailable", static_cast<uint8_t>(Severity::kWarning), 1,
            "--trace=osrt: libgtrace_osrt.so is not loaded in this process (GTRACE_NO_PRELOAD, or LD_PRELOAD "
            "was reset), so its OS runtime waits are not recorded");
    return;
  }
  g_shim.domain = inj.writer->Intern(config::kOsrtDomain);
}

void OsrtIgnoreThisThread() {
  if (g_shim.ignore_thread) g_shim.ignore_thread();
}

void DrainOsrt(Injection& inj) {  // under inj.mu
  if (!g_shim.drain || inj.finished) return;
  GtOsrtEvent batch[256];
  for (;;) {
    const uint32_t n = g_shim.drain(batch, 256);
    for (uint32_t i = 0; i < n; ++i) {
      const GtOsrtEvent& e = batch[i];
      NvtxRecord r;
      r.start = e.start_ns;
      r.end = e.end_ns;
      r.tid = e.tid;
      r.domain = g_shim.domain;
      if (e.func < std::size(g_shim.names)) {
        StringId& name = g_shim.names[e.func];
        if (!name) {
          const char* text = g_shim.func_name(e.func);
          name = inj.writer->Intern(text ? text : "?");
        }
        r.message = name;
      }
      inj.decoder->AddHostRange(r);
    }
    if (n < 256) return;
  }
}

void FinishOsrt(Injection& inj) {  // under inj.mu, before the writer finishes
  if (!g_shim.drain) return;
  DrainOsrt(inj);
  GtOsrtStats s{};
  g_shim.stats(&s);
  if (s.dropped)
    AddLoss(inj, "osrt_waits_dropped", static_cast<uint8_t>(Severity::kDataLoss), s.dropped,
            "OS runtime waits not recorded: the shim's buffer (16384 waits) was full between two drains");
  g_shim.drain = nullptr;  // waits after this point (exit) are not recorded
}

}  // namespace gt::inject
