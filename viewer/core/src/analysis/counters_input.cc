// [SECTION] Inputs of analysis.h: per-launch metric grouping, merging launches, launch shapes.
#include <algorithm>
#include <map>
#include <tuple>

#include "gt/trace_data.h"
#include "gt/viewer/analysis.h"

namespace gt {

const KernelCounters::Value* KernelCounters::Find(std::string_view name) const {
  auto it = std::lower_bound(values.begin(), values.end(), name,
                             [](const Value& v, std::string_view n) { return v.name < n; });
  if (it == values.end() || it->name != name) return nullptr;
  return &*it;
}

double KernelCounters::Get(std::string_view name, double fallback) const {
  const Value* v = Find(name);
  return v ? v->value : fallback;
}

void KernelCounters::Set(std::string_view name, double value, uint8_t flags) {
  auto it = std::lower_bound(values.begin(), values.end(), name,
                             [](const Value& v, std::string_view n) { return v.name < n; });
  if (it != values.end() && it->name == name) {
    it->value = value;
    it->flags = flags;
    return;
  }
  values.insert(it, Value{std::string(name), value, flags});
}

std::string LaunchOrdinalLabel(uint32_t ordinal) {
  if (ordinal == kNone) return "all launches";
  return (IsGraphOrdinal(ordinal) ? "graph launch " : "launch ") + std::to_string(OrdinalIndex(ordinal));
}

std::vector<KernelCounters> GroupKernelCounters(std::span<const KernelMetricRecord> metrics,
                                                std::span<const StallSample> stalls,
                                                const StringLookup& str) {
  // Key by (pid, name id, ordinal, correlation id): ids are global within one read, so no string compares
  // here.
  using Key = std::tuple<uint32_t, StringId, uint32_t, uint32_t>;
  std::map<Key, KernelCounters> groups;
  auto group = [&](uint32_t pid, StringId name, uint32_t ordinal, uint32_t corr) -> KernelCounters& {
    auto [it, inserted] = groups.try_emplace(Key{pid, name, ordinal, corr});
    if (inserted) {
      it->second.pid = pid;
      it->second.kernel_name = std::string(str(name));
      it->second.launch_ordinal = ordinal;
      it->second.correlation_id = corr;
    }
    return it->second;
  };
  // Appended, then sorted once per launch (an ncu CSV has thousands of metrics per launch: inserting each in
  // order would move the vector thousands of times). A metric recorded twice keeps its last value, as Set
  // does.
  for (const auto& m : metrics) {
    KernelCounters& c = group(m.pid, m.kernel_name, m.launch_ordinal, m.correlation_id);
    c.values.push_back({std::string(str(m.metric)), m.value, m.flags});
  }
  for (auto& [key, c] : groups) {
    std::stable_sort(
        c.values.begin(), c.values.end(),
        [](const KernelCounters::Value& a, const KernelCounters::Value& b) { return a.name < b.name; });
    auto last = std::unique(c.values.rbegin(), c.values.rend(),
                            [](const KernelCounters::Value& a, const KernelCounters::Value& b) {
                              return a.name == b.name;
                            })
                    .base();
    c.values.erase(c.values.begin(), last);
  }
  for (const auto& s : stalls) {
    // Only whole-kernel bins of one launch; PC-sampling histograms (per line / aggregated) are shown
    // elsewhere.
    if (s.launch_ordinal == kNone || s.pc_offset != UINT64_MAX) continue;
    KernelCounters& c = group(s.pid, s.kernel_name, s.launch_ordinal, s.correlation_id);
    std::string name = "smsp__warps_issue_stalled_" + std::string(str(s.reason)) + ".sum";
    if (!c.Has(name)) c.Set(name, static_cast<double>(s.count));
  }
  std::vector<KernelCounters> out;
  out.reserve(groups.size());
  for (auto& [k, v] : groups) out.push_back(std::move(v));
  std::stable_sort(out.begin(), out.end(), [](const KernelCounters& a, const KernelCounters& b) {
    return std::tie(a.pid, a.kernel_name, a.launch_ordinal) <
           std::tie(b.pid, b.kernel_name, b.launch_ordinal);
  });
  return out;
}

std::vector<KernelCounters> GroupKernelCounters(const TraceData& trace) {
  return GroupKernelCounters(trace.kernel_metrics, trace.stall_samples,
                             [&](StringId id) -> std::string_view { return trace.Str(id); });
}

namespace {
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
// Counters add up over launches; averages, percentages, rates and launch attributes do not.
bool IsAdditive(std::string_view name) {
  if (name.substr(0, 8) == "launch__") return false;
  if (name.substr(0, 10) == "profiler__") return name == metric::kCostNs;
  return EndsWith(name, ".sum");
}
}  // namespace

KernelCounters MergeLaunches(std::span<const KernelCounters> launches) {
  KernelCounters out;
  if (launches.empty()) return out;
  out.pid = launches.front().pid;
  out.kernel_name = launches.front().kernel_name;
  out.launch_ordinal = launches.size() == 1 ? launches.front().launch_ordinal : kNone;
  out.launches = 0;
  std::map<std::string, std::pair<double, uint32_t>> acc;  // sum, count
  std::map<std::string, uint8_t> flags;
  for (const auto& l : launches) out.launches += l.launches;
  // Launches of one kernel mostly have the same metrics (thousands from an ncu CSV): those add up position by
  // position; a launch with other metrics goes through the map.
  const auto& first = launches.front().values;
  std::vector<std::pair<double, uint32_t>> same(first.size());
  std::vector<uint8_t> same_flags(first.size());
  for (const auto& l : launches) {
    const bool aligned = l.values.size() == first.size() &&
                         std::equal(l.values.begin(), l.values.end(), first.begin(),
                                    [](const KernelCounters::Value& a, const KernelCounters::Value& b) {
                                      return a.name == b.name;
                                    });
    for (size_t i = 0; i < l.values.size(); ++i) {
      const auto& v = l.values[i];
      auto& a = aligned ? same[i] : acc[v.name];
      a.first += v.value;
      a.second += 1;
      (aligned ? same_flags[i] : flags[v.name]) |= v.flags;
    }
  }
  for (size_t i = 0; i < first.size(); ++i) {
    if (!same[i].second) continue;
    auto& a = acc[first[i].name];
    a.first += same[i].first;
    a.second += same[i].second;
    flags[first[i].name] |= same_flags[i];
  }
  for (const auto& [name, a] : acc) {
    double value = IsAdditive(name) ? a.first : a.first / a.second;
    out.values.push_back({name, value, flags[name]});
  }
  return out;  // std::map iterates in name order: `values` stays sorted
}

LaunchShape LaunchShapeOf(const KernelRecord& k) {
  LaunchShape s;
  s.grid_blocks = uint64_t{k.grid[0]} * k.grid[1] * k.grid[2];
  s.block_threads = k.block[0] * k.block[1] * k.block[2];
  s.registers_per_thread = k.registers_per_thread;
  s.static_shared_bytes = k.static_shared_bytes;
  s.dynamic_shared_bytes = k.dynamic_shared_bytes;
  return s;
}

LaunchShape LaunchShapeOf(const KernelCounters& c) {
  LaunchShape s;
  s.grid_blocks = static_cast<uint64_t>(c.Get(metric::kGridSize));
  s.block_threads = static_cast<uint32_t>(c.Get(metric::kBlockSize));
  s.registers_per_thread = static_cast<uint32_t>(c.Get(metric::kRegisters));
  s.static_shared_bytes = static_cast<uint32_t>(c.Get(metric::kStaticShared));
  s.dynamic_shared_bytes = static_cast<uint32_t>(c.Get(metric::kDynamicShared));
  return s;
}

}  // namespace gt
