// The PC-sampling module of the injection library (GTRACE_MODULES=pcsampling, set by `gcollect
// --pc-sampling`): CUPTI PC sampling in continuous mode during the timeline run (kernels are not serialized,
// timestamps stay true). Each process writes StallSample histograms per kernel name x PC offset x stall
// reason (with source file/line where the cubin has line info), aggregated over launches (launch_ordinal =
// kNone).
#pragma once

#include <cupti.h>

namespace gt::inject {

struct Injection;

bool StartPcSamplingModule(Injection& inj);
void FlushPcSamplingModule(Injection& inj);
void StopPcSamplingModule(Injection& inj);

}  // namespace gt::inject
