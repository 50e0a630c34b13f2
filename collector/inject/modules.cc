// Optional in-process modules, started after the timeline is running. GTRACE_MODULES (a comma list, set by
// gcollect for a pass that needs it) picks them: "counters" (the counters run) and "pcsampling" (rides the
// timeline run, inject/pc_sampling.h). A module (the counters one: range profiler, one extra pass over the
// app, inject/counters_module.h) registers here: its name in kModules with start/flush/stop functions that
// use `inj`'s writer under inj.mu and its CUPTI subscriber (there can be only one per process).
#include <cstring>

#include "inject/counters_module.h"
#include "inject/injection.h"
#include "inject/pc_sampling.h"

namespace gt::inject {
namespace {

struct Module {
  const char* name;
  bool (*start)(Injection&);
  void (*flush)(Injection&);
  void (*stop)(Injection&);
};

constexpr Module kModules[] = {
    {"counters", StartCountersModule, FlushCountersModule, StopCountersModule},
    {"pcsampling", StartPcSamplingModule, FlushPcSamplingModule, StopPcSamplingModule},  // --pc-sampling
};
bool g_started[sizeof(kModules) / sizeof(kModules[0])] = {};

bool Wanted(const std::string& list, const char* name) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    if (list.compare(pos, comma - pos, name) == 0) return true;
    pos = comma + 1;
  }
  return false;
}

}  // namespace

void StartOptionalModules(Injection& inj) {
  if (inj.config.modules.empty()) return;
  for (size_t i = 0; i < sizeof(kModules) / sizeof(kModules[0]); ++i) {
    if (Wanted(inj.config.modules, kModules[i].name)) g_started[i] = kModules[i].start(inj);
  }
}

void FlushOptionalModules(Injection& inj) {
  for (size_t i = 0; i < sizeof(kModules) / sizeof(kModules[0]); ++i)
    if (g_started[i]) kModules[i].flush(inj);
}

void StopOptionalModules(Injection& inj) {
  for (size_t i = 0; i < sizeof(kModules) / sizeof(kModules[0]); ++i) {
    if (g_started[i]) kModules[i].stop(inj);
    g_started[i] = false;
  }
}

}  // namespace gt::inject
