// [SECTION] collect   the counter tables and the timeline's facts about the profiled launches (one GPU-lane
// scan) [SECTION] analyse   ProfiledKernels from ProfiledData alone
#include "gt/viewer/profiled.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

namespace gt::viewer {

std::string_view ProfiledData::Str(StringId id) const {
  auto it = strings.find(id);
  return it != strings.end() ? std::string_view(it->second) : std::string_view();
}

// ---- [SECTION] collect
// ------------------------------------------------------------------------------------------

namespace {

uint64_t PairKey(uint32_t pid, uint32_t correlation_id) {
  return uint64_t{pid} << 32 | correlation_id;
}

// A kernel event whose (pid, correlation id, name) is some profiled launch's: which launch it is needs the
// graph ordinal of graph-launched kernels, known only once every graph kernel of its name has been seen.
struct Candidate {
  EventId event;
  const std::vector<uint32_t>* launches;  // of its (pid, correlation id), name compared
  std::vector<std::tuple<uint32_t, int64_t, LaneId, uint32_t>>* graph_order;  // null: a direct launch
  std::tuple<uint32_t, int64_t, LaneId, uint32_t> key;  // (correlation id, start, lane, index)
};

}  // namespace

ProfiledData CollectProfiledData(const TraceModel& m) {
  ProfiledData d;
  if (m.kernel_metrics.empty() && m.stall_samples.empty()) return d;
  d.devices = m.devices;
  d.kernel_metrics = m.kernel_metrics;
  d.stall_samples = m.stall_samples;
  auto keep = [&](StringId id) {
    if (id) d.strings.emplace(id, m.Str(id));
  };
  for (const DeviceRecord& r : d.devices) keep(r.name), keep(r.uuid), keep(r.chip);
  for (const KernelMetricRecord& r : d.kernel_metrics) keep(r.kernel_name), keep(r.metric);
  for (const StallSample& r : d.stall_samples) keep(r.kernel_name), keep(r.reason), keep(r.source_file);
  const std::vector<KernelCounters> launches = GroupKernelCounters(
      d.kernel_metrics, d.stall_samples, [&](StringId id) -> std::string_view { return d.Str(id); });
  if (launches.empty()) return d;

  std::unordered_map<uint64_t, uint32_t> join_of;  // (pid, correlation id) -> index into d.joins
  for (const KernelMetricRecord& r : d.kernel_metrics)
    if (r.correlation_id &&
        join_of.emplace(PairKey(r.pid, r.correlation_id), uint32_t(d.joins.size())).second)
      d.joins.push_back({r.pid, r.correlation_id, kNone, {}});
  std::unordered_map<uint64_t, std::vector<uint32_t>> launches_of;  // (pid, correlation id) -> launches
  for (uint32_t i = 0; i < launches.size(); ++i)
    if (launches[i].correlation_id)
      launches_of[PairKey(launches[i].pid, launches[i].correlation_id)].push_back(i);

  // Per profiled kernel name: the (pid, slot in d.names) pairs, and the graph-kernel order of those that have
  // graph launches profiled. Looked up once per string id, not per event.
  struct NameUse {
    std::vector<std::pair<uint32_t, uint32_t>> pids;  // (pid, index into d.names)
    std::map<uint32_t, std::vector<std::tuple<uint32_t, int64_t, LaneId, uint32_t>>> graph_order;  // by pid
  };
  std::unordered_map<std::string_view, NameUse> uses;
  {
    std::map<std::pair<uint32_t, std::string_view>, bool> kernels;  // (pid, name) -> has a graph launch
    for (const KernelCounters& c : launches)
      kernels[{c.pid, c.kernel_name}] |= IsGraphOrdinal(c.launch_ordinal);
    for (const auto& [key, graph] : kernels) {
      NameUse& use = uses[key.second];
      use.pids.push_back({key.first, uint32_t(d.names.size())});
      if (graph) use.graph_order[key.first];
      d.names.push_back({key.first, std::string(key.second), 0, {}});
    }
  }
  NameUse not_looked_up;
  NameUse* const kUnknown = &not_looked_up;
  std::vector<NameUse*> use_of(m.strings.size(), kUnknown);
  auto use_for = [&](StringId id) -> NameUse* {
    if (id >= use_of.size()) return nullptr;
    if (use_of[id] == kUnknown) {
      auto it = uses.find(std::string_view(m.strings[id]));
      use_of[id] = it != uses.end() ? &it->second : nullptr;
    }
    return use_of[id];
  };

  std::vector<int64_t> first_start(d.names.size(), INT64_MAX);
  std::vector<bool> seen(d.names.size());
  std::vector<Candidate> candidates;
  for (LaneId l = 0; l < m.lanes.size(); ++l) {
    const Lane& lane = m.lanes[l];
    if (lane.track == kNone || m.tracks[lane.track].kind != TrackKind::kGpuStream) continue;
    const Track& track = m.tracks[lane.track];
    const bool has_aux = lane.aux.size() == lane.size();
    for (uint32_t i = 0; i < lane.size(); ++i) {
      NameUse* use = use_for(lane.name[i]);
      const bool kernel = KindOfRef(TrackKind::kGpuStream, lane.ref[i]) == EventKind::kKernel;
      if (use) {
        auto slot = std::find_if(use->pids.begin(), use->pids.end(),
                                 [&](const auto& p) { return p.first == track.pid; });
        if (slot != use->pids.end()) {
          // Every event of the name counts toward its total, as the kernel table counts it.
          seen[slot->second] = true;
          d.names[slot->second].total_s += lane.Duration(i) * 1e-9;
          if (kernel && lane.start[i] < first_start[slot->second]) {
            first_start[slot->second] = lane.start[i];
            d.names[slot->second].first = {l, i};
          }
        }
      }
      if (!kernel) continue;
      const uint32_t corr = has_aux ? lane.aux[i] : 0;
      const uint32_t cfg = lane.ref[i] & kRefPayloadMask;
      const LaunchConfig* config = cfg < m.launch_configs.size() ? &m.launch_configs[cfg] : nullptr;
      const bool graph = config && config->graph_id;
      const auto key = std::make_tuple(corr, lane.start[i], l, i);
      auto order = use && graph ? use->graph_order.find(track.pid) : decltype(use->graph_order.end()){};
      const bool ordered = use && graph && order != use->graph_order.end();
      if (ordered) order->second.push_back(key);  // every graph kernel of the name, profiled or not
      if (!corr) continue;
      if (auto j = join_of.find(PairKey(track.pid, corr)); j != join_of.end()) {
        ProfiledJoin& join = d.joins[j->second];
        join.device_id = track.device_id;
        if (config) {
          join.shape.grid_blocks = uint64_t{config->grid[0]} * config->grid[1] * config->grid[2];
          join.shape.block_threads = config->block[0] * config->block[1] * config->block[2];
          join.shape.registers_per_thread = config->registers_per_thread;
          join.shape.static_shared_bytes = config->static_shared_bytes;
          join.shape.dynamic_shared_bytes = config->dynamic_shared_bytes;
        }
      }
      if (!use || (graph && !ordered)) continue;  // a graph kernel matches graph launches only
      auto ls = launches_of.find(PairKey(track.pid, corr));
      if (ls != launches_of.end())
        candidates.push_back({{l, i}, &ls->second, ordered ? &order->second : nullptr, key});
    }
  }
  for (auto& [name, use] : uses)
    for (auto& [pid, order] : use.graph_order) std::sort(order.begin(), order.end());

  // A direct launch has its correlation id to itself; the kernels of one graph launch share theirs, and the
  // graph ordinal (the rank among the process's graph-launched kernels of that name, as the collector's join
  // counts them: KernelLaunchOrdinals in collector/counters/join.h) tells them apart.
  for (const Candidate& c : candidates) {
    const std::string& name = m.strings[m.lanes[c.event.lane].name[c.event.index]];
    const bool graph = c.graph_order != nullptr;
    const uint32_t ordinal =
        graph ? kGraphOrdinalBit |
                    uint32_t(std::lower_bound(c.graph_order->begin(), c.graph_order->end(), c.key) -
                             c.graph_order->begin())
              : kNone;
    for (uint32_t i : *c.launches) {
      const KernelCounters& k = launches[i];
      if (k.kernel_name != name || IsGraphOrdinal(k.launch_ordinal) != graph) continue;
      if (!graph || k.launch_ordinal == ordinal) {
        d.launch_of.push_back({c.event, i});
        break;
      }
    }
  }
  std::sort(d.joins.begin(), d.joins.end(), [](const ProfiledJoin& a, const ProfiledJoin& b) {
    return std::tie(a.pid, a.correlation_id) < std::tie(b.pid, b.correlation_id);
  });
  // Only what the timeline has (the analysis falls back to the profiled time for the rest).
  size_t kept = 0;
  for (size_t i = 0; i < d.names.size(); ++i) {
    if (!seen[i]) continue;
    if (kept != i) d.names[kept] = std::move(d.names[i]);  // never onto itself: that would empty it
    ++kept;
  }
  d.names.resize(kept);
  return d;
}

// ---- [SECTION] analyse
// ------------------------------------------------------------------------------------------

namespace {

// What the timeline says of the kernel (pid, name), or null when it has none of its events.
const ProfiledName* NameOf(const ProfiledData& d, uint32_t pid, const std::string& name) {
  for (const ProfiledName& n : d.names)
    if (n.pid == pid && n.name == name) return &n;
  return nullptr;
}

}  // namespace

size_t ProfiledKernels::LaunchOf(EventId e) const {
  auto it = std::lower_bound(launch_of.begin(), launch_of.end(), e,
                             [](const std::pair<EventId, uint32_t>& p, EventId x) { return p.first < x; });
  return it != launch_of.end() && it->first == e && it->second < launches.size() ? it->second : SIZE_MAX;
}

const KernelAnalysis* ProfiledKernels::KernelOf(uint32_t pid, std::string_view name) const {
  for (const KernelAnalysis& k : kernels)
    if (k.pid == pid && k.kernel_name == name) return &k;
  return nullptr;
}

ProfiledKernels AnalyzeProfiledKernels(const ProfiledData& d) {
  ProfiledKernels p;
  if (!d.devices.empty()) p.device = d.devices.front();
  auto str = [&](StringId id) -> std::string_view { return d.Str(id); };
  p.launches = GroupKernelCounters(d.kernel_metrics, d.stall_samples, str);
  if (p.launches.empty()) return p;
  p.launch_of = d.launch_of;
  std::sort(p.launch_of.begin(), p.launch_of.end());  // as sent; a damaged answer must not break the search
  auto join = [&](uint32_t pid, uint32_t corr) -> const ProfiledJoin* {
    auto it = std::lower_bound(d.joins.begin(), d.joins.end(), std::make_pair(pid, corr),
                               [](const ProfiledJoin& j, const std::pair<uint32_t, uint32_t>& k) {
                                 return std::tie(j.pid, j.correlation_id) < std::tie(k.first, k.second);
                               });
    return it != d.joins.end() && it->pid == pid && it->correlation_id == corr ? &*it : nullptr;
  };
  // Per kernel name, the launch shape and GPU of its last profiled launch that the timeline has.
  std::map<std::pair<uint32_t, std::string>, LaunchShape> shape_by_name;
  std::map<std::pair<uint32_t, std::string>, uint32_t> device_by_name;
  for (const KernelMetricRecord& r : d.kernel_metrics) {
    const ProfiledJoin* j = r.correlation_id ? join(r.pid, r.correlation_id) : nullptr;
    if (!j) continue;
    if (j->shape.known()) shape_by_name[{r.pid, std::string(d.Str(r.kernel_name))}] = j->shape;
    if (j->device_id != kNone) device_by_name[{r.pid, std::string(d.Str(r.kernel_name))}] = j->device_id;
  }
  auto shape_of = [&](const KernelCounters& c) {
    auto it = shape_by_name.find({c.pid, c.kernel_name});
    return it != shape_by_name.end() ? it->second : LaunchShape{};
  };
  // Each kernel against the peaks of the GPU that ran it (a job spans GPUs, after a merge of other kinds
  // too): the device record its own process reported for that device, else any process's, else the trace's
  // first.
  auto device_of = [&](const KernelCounters& c) -> const DeviceRecord& {
    auto it = device_by_name.find({c.pid, c.kernel_name});
    if (it == device_by_name.end()) return p.device;
    const DeviceRecord* any = nullptr;
    for (const DeviceRecord& dev : d.devices) {
      if (dev.device_id != it->second) continue;
      if (dev.pid == c.pid) return dev;
      if (!any) any = &dev;
    }
    return any ? *any : p.device;
  };
  for (const auto& c : p.launches) p.launch_analyses.push_back(AnalyzeKernel(c, device_of(c), shape_of(c)));
  std::map<std::pair<uint32_t, std::string>, std::vector<KernelCounters>> by_name;
  for (const auto& c : p.launches) by_name[{c.pid, c.kernel_name}].push_back(c);
  for (auto& [key, launches] : by_name) {
    p.kernels.push_back(
        AnalyzeKernel(MergeLaunches(launches), device_of(launches.front()), shape_of(launches.front())));
    const ProfiledName* t = NameOf(d, key.first, key.second);
    p.kernel_total_time_s.push_back(t ? t->total_s : (p.kernels.back().time_s.value * launches.size()));
    p.kernel_first_event.push_back(t ? t->first : EventId{});
  }
  return p;
}

ProfiledKernels AnalyzeProfiledKernels(const TraceModel& model) {
  return AnalyzeProfiledKernels(CollectProfiledData(model));
}

}  // namespace gt::viewer
