// The counters module of the injection library (GTRACE_MODULES=counters, set by `gcollect --counters`):
// per-kernel hardware counters through the CUPTI Range Profiler, auto range + kernel replay, driven from the
// driver-API launch callbacks of the injection's one CUPTI subscriber. Writes KernelMetricRecord /
// StallSample keyed by (pid, kernel name, per-name launch ordinal) with correlation_id 0: the timeline comes
// from another run of the app (replayed kernels lose their timestamps) and join.h pairs them.
#pragma once

#include <cupti.h>

namespace gt::inject {

struct Injection;

bool StartCountersModule(Injection& inj);
void FlushCountersModule(Injection& inj);
void StopCountersModule(Injection& inj);
// Forwarded by the injection's subscriber callback for every enabled driver-API callback.
void CountersOnCallback(Injection& inj, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);

}  // namespace gt::inject
