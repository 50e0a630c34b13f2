// The hardware-counter analysis of a loaded trace: every profiled launch analyzed, and one merged analysis
// per kernel (pid, name) with its total GPU time over all its launches in the timeline. What the details
// panel, the roofline and `gtrace stats` show; headless.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "gt/viewer/analysis.h"
#include "gt/viewer/model.h"

namespace gt::viewer {

struct ProfiledKernels {
  DeviceRecord device;  // the trace's first device: the roofline chart's ceilings
  // Each analysis uses the peaks of the GPU that ran its kernel (by its timeline launch), this one otherwise.
  std::vector<KernelCounters> launches;         // one per profiled launch (GroupKernelCounters order)
  std::vector<KernelAnalysis> launch_analyses;  // per `launches` entry
  std::vector<KernelAnalysis> kernels;          // one per (pid, kernel name), its profiled launches merged
  std::vector<double> kernel_total_time_s;      // per `kernels` entry: all its launches in the timeline
};

// Occupancy needs registers and shared memory per block: taken from the timeline's launch record of a
// profiled launch (joined by correlation id), else from the counters' own launch__* values.
ProfiledKernels AnalyzeProfiledKernels(const TraceModel& model);

// The profiled launch (index into `launches`, GroupKernelCounters' order) that the kernel event is, SIZE_MAX
// when that launch was not profiled. The join gave each profiled launch its timeline kernel's correlation id;
// the kernels of one graph launch share it and are told apart by graph ordinal (model.h, kGraphOrdinalBit).
size_t FindProfiledLaunch(const TraceModel& model, std::span<const KernelCounters> launches, EventId kernel);

}  // namespace gt::viewer
