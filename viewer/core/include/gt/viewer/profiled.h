// The hardware-counter analysis of a trace: every profiled launch analyzed, and one merged analysis per
// kernel (pid, name) with its total GPU time over all its launches in the timeline. What the details panel,
// the roofline and `gtrace stats` show; headless.
//
// The analysis reads the counter tables (devices, kernel metrics, stall samples) and a few facts that only
// the timeline knows: each profiled launch's shape and GPU, each profiled kernel's total time and first
// launch, and which kernel event each profiled launch is. ProfiledData holds exactly that, collected by one
// scan of the GPU lanes (CollectProfiledData), so a trace that stays on `gtrace serve` ships it (built with
// its index, ProfiledDataJson) and the page analyses it with the same code as a trace in memory.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gt/status.h"
#include "gt/viewer/analysis.h"
#include "gt/viewer/model.h"

namespace gt::viewer {

// What the timeline says of one profiled (pid, correlation id) of the kernel-metric records.
struct ProfiledJoin {
  uint32_t pid = 0, correlation_id = 0;
  uint32_t device_id = kNone;  // the GPU that ran it; kNone when the timeline has no kernel with that id
  LaunchShape shape;           // from its launch record; unknown (zero) when it had none
};

// What the timeline says of one profiled kernel (pid, name): every launch of it, profiled or not.
struct ProfiledName {
  uint32_t pid = 0;
  std::string name;
  double total_s = 0;  // GPU time of the timeline's events of that name on the process's GPU streams
  EventId first;       // its earliest kernel event (a roofline point's click); invalid when none
};

struct ProfiledData {
  std::vector<DeviceRecord> devices;
  std::vector<KernelMetricRecord> kernel_metrics;
  std::vector<StallSample> stall_samples;
  std::unordered_map<StringId, std::string> strings;  // every string the three tables refer to
  std::vector<ProfiledJoin> joins;                    // sorted by (pid, correlation id)
  std::vector<ProfiledName> names;                    // sorted by (pid, name); only those the timeline has
  // Kernel event -> its profiled launch (an index into GroupKernelCounters' order), sorted by event. The
  // collector's join gave each profiled launch its timeline kernel's correlation id; the kernels of one graph
  // launch share it and are told apart by graph ordinal (model.h, kGraphOrdinalBit).
  std::vector<std::pair<EventId, uint32_t>> launch_of;

  std::string_view Str(StringId id) const;
  bool empty() const { return kernel_metrics.empty() && stall_samples.empty(); }
};

// The tables copied from the model and the timeline's facts for them: one pass over the GPU lanes, nothing
// when the trace has no counters.
ProfiledData CollectProfiledData(const TraceModel& model);

// The wire form (the server's what=profiled, kept in the viewer index): JSON of the tables and the joins,
// every number exact. ParseProfiledData refuses (kCorrupt) anything that is not one.
std::string ProfiledDataJson(const ProfiledData& data);
StatusOr<ProfiledData> ParseProfiledData(std::string_view json);

struct ProfiledKernels {
  DeviceRecord device;  // the trace's first device: the roofline chart's ceilings
  // Each analysis uses the peaks of the GPU that ran its kernel (by its timeline launch), this one otherwise.
  std::vector<KernelCounters> launches;         // one per profiled launch (GroupKernelCounters order)
  std::vector<KernelAnalysis> launch_analyses;  // per `launches` entry
  std::vector<KernelAnalysis> kernels;          // one per (pid, kernel name), its profiled launches merged
  std::vector<double> kernel_total_time_s;      // per `kernels` entry: all its launches in the timeline
  std::vector<EventId> kernel_first_event;      // per `kernels` entry: its earliest launch, or invalid
  std::vector<std::pair<EventId, uint32_t>> launch_of;  // ProfiledData::launch_of

  // The profiled launch (index into `launches`) that the kernel event is; SIZE_MAX when it was not profiled.
  size_t LaunchOf(EventId kernel) const;
  // The merged analysis of the kernel (pid, name), or null when none of its launches was profiled.
  const KernelAnalysis* KernelOf(uint32_t pid, std::string_view name) const;
};

// Occupancy needs registers and shared memory per block: taken from the timeline's launch record of a
// profiled launch (joined by correlation id), else from the counters' own launch__* values.
ProfiledKernels AnalyzeProfiledKernels(const ProfiledData& data);
ProfiledKernels AnalyzeProfiledKernels(const TraceModel& model);  // of CollectProfiledData(model)

}  // namespace gt::viewer
