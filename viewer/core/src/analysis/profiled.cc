#include "gt/viewer/profiled.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

namespace gt::viewer {

ProfiledKernels AnalyzeProfiledKernels(const TraceModel& m) {
  ProfiledKernels p;
  if (!m.devices.empty()) p.device = m.devices.front();
  p.launches = GroupKernelCounters(m.kernel_metrics, m.stall_samples,
                                   [&](StringId id) -> std::string_view { return m.Str(id); });
  if (p.launches.empty()) return p;
  // One pass over the GPU lanes, for the profiled correlation ids only.
  std::map<std::pair<uint32_t, uint32_t>, LaunchShape> shape_by_corr;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> device_by_corr;  // which GPU ran the launch
  for (const auto& r : m.kernel_metrics)
    if (r.correlation_id) shape_by_corr[{r.pid, r.correlation_id}];
  for (uint32_t l = 0; l < m.lanes.size() && !shape_by_corr.empty(); ++l) {
    const Lane& lane = m.lanes[l];
    if (lane.track == kNone || m.tracks[lane.track].kind != TrackKind::kGpuStream) continue;
    const uint32_t pid = m.tracks[lane.track].pid;
    for (uint32_t i = 0; i < lane.aux.size(); ++i) {
      auto it = shape_by_corr.find({pid, lane.aux[i]});
      EventId e{l, i};
      if (it == shape_by_corr.end() || m.Kind(e) != EventKind::kKernel) continue;
      device_by_corr[it->first] = m.tracks[lane.track].device_id;
      const uint32_t cfg = m.Payload(e);
      if (cfg >= m.launch_configs.size()) continue;
      const LaunchConfig& lc = m.launch_configs[cfg];
      LaunchShape& sh = it->second;
      sh.grid_blocks = uint64_t{lc.grid[0]} * lc.grid[1] * lc.grid[2];
      sh.block_threads = lc.block[0] * lc.block[1] * lc.block[2];
      sh.registers_per_thread = lc.registers_per_thread;
      sh.static_shared_bytes = lc.static_shared_bytes;
      sh.dynamic_shared_bytes = lc.dynamic_shared_bytes;
    }
  }
  std::map<std::pair<uint32_t, std::string>, LaunchShape> shape_by_name;
  for (const auto& r : m.kernel_metrics) {
    auto it = shape_by_corr.find({r.pid, r.correlation_id});
    if (it != shape_by_corr.end() && it->second.known())
      shape_by_name[{r.pid, m.Str(r.kernel_name)}] = it->second;
  }
  auto shape_of = [&](const KernelCounters& c) {
    auto it = shape_by_name.find({c.pid, c.kernel_name});
    return it != shape_by_name.end() ? it->second : LaunchShape{};
  };
  // Each kernel against the peaks of the GPU that ran it (a job spans GPUs, after a merge of other kinds
  // too): the device record its own process reported for that device, else any process's, else the trace's
  // first.
  std::map<std::pair<uint32_t, std::string>, uint32_t> device_by_name;
  for (const auto& r : m.kernel_metrics) {
    auto it = device_by_corr.find({r.pid, r.correlation_id});
    if (it != device_by_corr.end()) device_by_name[{r.pid, m.Str(r.kernel_name)}] = it->second;
  }
  auto device_of = [&](const KernelCounters& c) -> const DeviceRecord& {
    auto it = device_by_name.find({c.pid, c.kernel_name});
    if (it == device_by_name.end()) return p.device;
    const DeviceRecord* any = nullptr;
    for (const DeviceRecord& d : m.devices) {
      if (d.device_id != it->second) continue;
      if (d.pid == c.pid) return d;
      if (!any) any = &d;
    }
    return any ? *any : p.device;
  };
  for (const auto& c : p.launches) p.launch_analyses.push_back(AnalyzeKernel(c, device_of(c), shape_of(c)));
  std::map<std::pair<uint32_t, std::string>, std::vector<KernelCounters>> by_name;
  for (const auto& c : p.launches) by_name[{c.pid, c.kernel_name}].push_back(c);
  // Total GPU time per (pid, name) from the timeline, which has every launch (profiled or not).
  std::map<std::pair<uint32_t, std::string>, double> total;
  for (const auto& lane : m.lanes) {
    if (lane.track == kNone || m.tracks[lane.track].kind != TrackKind::kGpuStream) continue;
    const uint32_t pid = m.tracks[lane.track].pid;
    for (uint32_t i = 0; i < lane.size(); ++i) {
      auto it = by_name.find({pid, m.Str(lane.name[i])});
      if (it != by_name.end()) total[it->first] += lane.Duration(i) * 1e-9;
    }
  }
  for (auto& [key, launches] : by_name) {
    p.kernels.push_back(
        AnalyzeKernel(MergeLaunches(launches), device_of(launches.front()), shape_of(launches.front())));
    auto t = total.find(key);
    p.kernel_total_time_s.push_back(t != total.end() ? t->second
                                                     : (p.kernels.back().time_s.value * launches.size()));
  }
  return p;
}

namespace {

// The kernel event's launch configuration, or null (imported traces may have none).
const LaunchConfig* ConfigOf(const TraceModel& m, EventId e) {
  const uint32_t cfg = m.Payload(e);
  return cfg < m.launch_configs.size() ? &m.launch_configs[cfg] : nullptr;
}

// The graph ordinal of a graph-launched kernel event, counted as the join counts it (KernelLaunchOrdinals in
// collector/counters/join.h): the graph-launched kernels of its name in its process, by correlation id, then
// start time.
uint32_t GraphOrdinalOf(const TraceModel& m, EventId e, uint32_t pid) {
  const StringId name = m.Name(e);
  const auto key = std::make_tuple(m.CorrelationId(e), m.Start(e), e.lane, e.index);
  uint32_t before = 0;
  for (LaneId l = 0; l < m.lanes.size(); ++l) {
    const Lane& lane = m.lanes[l];
    if (lane.track == kNone || m.tracks[lane.track].kind != TrackKind::kGpuStream ||
        m.tracks[lane.track].pid != pid)
      continue;
    for (uint32_t i = 0; i < lane.size(); ++i) {
      const EventId o{l, i};
      if (lane.name[i] != name || m.Kind(o) != EventKind::kKernel) continue;
      const LaunchConfig* c = ConfigOf(m, o);
      if (c && c->graph_id && std::make_tuple(m.CorrelationId(o), m.Start(o), l, i) < key) ++before;
    }
  }
  return kGraphOrdinalBit | before;
}

}  // namespace

size_t FindProfiledLaunch(const TraceModel& m, std::span<const KernelCounters> launches, EventId e) {
  if (!e.valid() || m.Kind(e) != EventKind::kKernel) return SIZE_MAX;
  const uint32_t corr = m.CorrelationId(e);
  if (!corr) return SIZE_MAX;  // counters are joined by correlation id
  const uint32_t pid = m.TrackOf(e).pid;
  const std::string& name = m.Str(m.Name(e));
  auto same_launch = [&](const KernelCounters& c) {
    return c.pid == pid && c.correlation_id == corr && c.kernel_name == name;
  };
  if (std::none_of(launches.begin(), launches.end(), same_launch)) return SIZE_MAX;
  // A direct launch has its correlation id to itself; the kernels of one graph launch share theirs, and its
  // graph ordinal tells them apart (one graph launch may run a kernel several times, not all profiled).
  const LaunchConfig* config = ConfigOf(m, e);
  const bool graph = config && config->graph_id;
  const uint32_t ordinal = graph ? GraphOrdinalOf(m, e, pid) : kNone;
  for (size_t i = 0; i < launches.size(); ++i) {
    const KernelCounters& c = launches[i];
    if (!same_launch(c) || IsGraphOrdinal(c.launch_ordinal) != graph) continue;
    if (!graph || c.launch_ordinal == ordinal) return i;
  }
  return SIZE_MAX;
}

}  // namespace gt::viewer
