#include "counters/join.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>

#include "counters/metric_sets.h"
#include "gt/counter_vocab.h"
#include "gt/reader.h"
#include "gt/writer.h"

namespace gt::counters {
namespace {

class Interner {
 public:
  explicit Interner(TraceData& t) : t_(t) {
    for (size_t i = 0; i < t_.strings.size(); ++i) ids_.emplace(t_.strings[i], static_cast<StringId>(i));
  }
  StringId operator()(const std::string& s) {
    auto [it, inserted] = ids_.emplace(s, static_cast<StringId>(t_.strings.size()));
    if (inserted) t_.strings.push_back(s);
    return it->second;
  }

 private:
  TraceData& t_;
  std::unordered_map<std::string, StringId> ids_;
};

// Processes of one run in start order, each keyed "name#occurrence". The name is the one the process gave
// itself (its main thread's record: /proc/self/comm, written by the injection in both runs) rather than
// gcollect's name for the root app, which is argv[0] and misses an exec (bash -c "a; b" execs b); both are
// cut to the kernel's 15-character comm length so the two spellings agree.
std::vector<std::pair<std::string, uint32_t>> ProcessKeys(const TraceData& t, bool counters_run) {
  struct Proc {
    int64_t start = INT64_MAX;
    std::string name;
  };
  std::map<uint32_t, Proc> procs;
  // Only processes with GPU work take part: a shell or launcher in between has no partner to find. The
  // counters run records its kernels too (without usable timestamps), so a process whose launches were all
  // filtered out still counts and the occurrence numbers of both runs stay aligned.
  for (const auto& k : t.kernels) {
    Proc& p = procs[k.pid];
    if (!counters_run && k.start) p.start = std::min(p.start, k.start);
  }
  if (counters_run)
    for (const auto& m : t.kernel_metrics) procs[m.pid];
  for (const auto& p : t.processes) {
    auto it = procs.find(p.pid);
    if (it == procs.end()) continue;
    if (p.start_ns) it->second.start = p.start_ns;
    if (it->second.name.empty()) it->second.name = t.Str(p.name);
  }
  for (const auto& th : t.threads) {
    auto it = procs.find(th.pid);
    if (it != procs.end() && th.tid == th.pid && !t.Str(th.name).empty()) it->second.name = t.Str(th.name);
  }
  std::vector<std::pair<Proc, uint32_t>> order;
  for (auto& [pid, p] : procs) order.push_back({p, pid});
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.start, a.second) < std::tie(b.first.start, b.second);
  });
  std::map<std::string, int> seen;
  std::vector<std::pair<std::string, uint32_t>> out;
  for (auto& [p, pid] : order) {
    std::string name = p.name.empty() ? "?" : p.name.substr(0, 15);
    out.emplace_back(name + "#" + std::to_string(seen[name]++), pid);
  }
  return out;
}

// "counters_unmatched": what the join could not pair, with the first few problems spelled out.
LossRecord UnmatchedLoss(const JoinReport& report, Interner& intern) {
  std::string detail = report.Summary();
  for (size_t i = 0; i < report.problems.size() && i < 5; ++i) detail += "\n" + report.problems[i];
  return MakeLoss(intern("counters_unmatched"), Severity::kWarning, report.unmatched_launches,
                  intern(detail));
}

double Get(const std::map<std::string, double>& m, const char* key, double fallback = -1) {
  auto it = m.find(key);
  return it == m.end() ? fallback : it->second;
}

}  // namespace

std::string JoinReport::Summary() const {
  std::string s = "joined " + std::to_string(matched_launches) + " of " + std::to_string(profiled_launches) +
                  " profiled launches";
  if (unmatched_launches) s += "; " + std::to_string(unmatched_launches) + " unmatched (not guessed)";
  if (unmatched_processes) s += "; " + std::to_string(unmatched_processes) + " processes without a partner";
  if (graph_kernels)
    s += "; " + std::to_string(graph_kernels) + " graph-launched kernels not profiled (see below)";
  return s;
}

std::string LaunchLabel(const std::string& kernel_name, uint32_t ordinal) {
  return kernel_name + (IsGraphOrdinal(ordinal) ? " graph launch " : " launch ") +
         std::to_string(OrdinalIndex(ordinal));
}

std::vector<uint32_t> KernelLaunchOrdinals(const TraceData& trace) {
  std::vector<uint32_t> order(trace.kernels.size());
  std::iota(order.begin(), order.end(), 0u);
  // Launch order: correlation ids grow with API calls (what the counters run counts in its launch callback);
  // records without one fall back to start time.
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const auto& x = trace.kernels[a];
    const auto& y = trace.kernels[b];
    if (x.pid != y.pid) return x.pid < y.pid;
    if (x.correlation_id && y.correlation_id && x.correlation_id != y.correlation_id)
      return x.correlation_id < y.correlation_id;
    return x.start < y.start;
  });
  // Graph kernels share their graph launch's correlation id: within one launch, start time is dependency
  // order for kernels that depend on each other (the only ones the counters run profiles, graph_plan.h).
  std::vector<uint32_t> ordinals(trace.kernels.size(), kNone);
  std::map<std::pair<uint32_t, StringId>, uint32_t> next[2];
  for (uint32_t i : order) {
    const KernelRecord& k = trace.kernels[i];
    const bool graph = k.graph_id != 0;
    ordinals[i] = next[graph][{k.pid, k.name}]++ | (graph ? kGraphOrdinalBit : 0);
  }
  return ordinals;
}

namespace {

// Graph kernels the counters run selected but could not profile: it counted them into one
// `counters_not_profiled` loss per (kernel name, reason); they become the report's lines.
void ReportNotProfiled(const TraceData& counters_run, JoinReport& report) {
  for (const auto& l : counters_run.losses) {
    if (counters_run.Str(l.name) != kNotProfiledLoss) continue;
    report.graph_kernels += static_cast<uint32_t>(l.count);
    report.not_profiled.push_back(counters_run.Str(l.detail));
  }
}

}  // namespace

JoinReport JoinCountersIntoTimeline(TraceData& timeline, const TraceData& counters, JoinMode mode) {
  JoinReport report;
  auto problem = [&](std::string s) {
    if (report.problems.size() < 200) report.problems.push_back(std::move(s));
  };

  // ---- processes ----
  auto tl_keys = ProcessKeys(timeline, false);
  auto ct_keys = ProcessKeys(counters, true);
  std::map<std::string, uint32_t> tl_by_key(tl_keys.begin(), tl_keys.end());
  std::map<uint32_t, uint32_t> pid_map;  // counters pid -> timeline pid
  std::set<uint32_t> ct_pids_with_metrics;
  for (const auto& m : counters.kernel_metrics) ct_pids_with_metrics.insert(m.pid);
  for (const auto& [key, pid] : ct_keys) {
    auto it = tl_by_key.find(key);
    if (it != tl_by_key.end()) {
      pid_map[pid] = it->second;
    } else if (ct_pids_with_metrics.count(pid)) {
      ++report.unmatched_processes;
      problem("process " + key.substr(0, key.find('#')) + " (pid " + std::to_string(pid) +
              ") of the counters run has no partner in the timeline run");
    }
  }

  // ---- timeline kernels by (pid, name, ordinal) ----
  std::vector<uint32_t> ordinals = KernelLaunchOrdinals(timeline);
  std::map<std::tuple<uint32_t, std::string, uint32_t>, uint32_t> tl_kernel;  // -> index into kernels
  std::map<std::tuple<uint32_t, std::string, bool>, uint32_t> tl_count;  // (pid, name, graph) -> launches
  for (uint32_t i = 0; i < timeline.kernels.size(); ++i) {
    const auto& k = timeline.kernels[i];
    const std::string& name = timeline.Str(k.name);
    tl_kernel[{k.pid, name, ordinals[i]}] = i;
    ++tl_count[{k.pid, name, IsGraphOrdinal(ordinals[i])}];
  }

  // ---- counters launches ----
  struct Launch {
    std::map<std::string, double> values;
  };
  std::map<std::tuple<uint32_t, std::string, uint32_t>, Launch> launches;
  for (const auto& m : counters.kernel_metrics)
    launches[{m.pid, counters.Str(m.kernel_name), m.launch_ordinal}].values[counters.Str(m.metric)] = m.value;
  for (const auto& s : counters.stall_samples)
    if (s.launch_ordinal != kNone) launches[{s.pid, counters.Str(s.kernel_name), s.launch_ordinal}];

  // decision per launch: timeline kernel index, or kNone
  std::map<std::tuple<uint32_t, std::string, uint32_t>, uint32_t> target;
  for (const auto& [key, launch] : launches) {
    const auto& [pid, name, ordinal] = key;
    ++report.profiled_launches;
    uint32_t found = kNone;
    auto pm = pid_map.find(pid);
    std::string label = LaunchLabel(name, ordinal);
    if (pm == pid_map.end()) {
      // already reported per process
    } else if (auto it = tl_kernel.find({pm->second, name, ordinal}); it == tl_kernel.end()) {
      auto count = tl_count.find({pm->second, name, IsGraphOrdinal(ordinal)});
      uint32_t have = count == tl_count.end() ? 0 : count->second;
      problem(label + ": the timeline run has " + std::to_string(have) +
              (IsGraphOrdinal(ordinal) ? " graph-launched" : "") + " launches of this kernel");
    } else {
      const KernelRecord& k = timeline.kernels[it->second];
      double grid = Get(launch.values, launch_metric::kGridSize);
      double block = Get(launch.values, launch_metric::kBlockSize);
      double tl_grid = double(k.grid[0]) * k.grid[1] * k.grid[2];
      double tl_block = double(k.block[0]) * k.block[1] * k.block[2];
      if ((grid >= 0 && grid != tl_grid) || (block >= 0 && block != tl_block)) {
        char buf[160];
        snprintf(buf, sizeof buf,
                 ": launch shape differs between the runs (grid %.0f x block %.0f vs %.0f x %.0f)", grid,
                 block, tl_grid, tl_block);
        problem(label + buf);
      } else {
        found = it->second;
      }
    }
    if (found == kNone)
      ++report.unmatched_launches;
    else
      ++report.matched_launches;
    target[key] = found;
  }

  // ---- move records ----
  Interner intern(timeline);
  // kSupplement: the values the trace has per launch and metric -> index into kernel_metrics. The kernels of
  // one graph launch share its correlation id: name and ordinal tell them apart.
  using ValueKey = std::tuple<uint32_t, uint32_t, StringId, uint32_t, StringId>;
  std::map<ValueKey, size_t> present;
  if (mode == JoinMode::kSupplement)
    for (size_t i = 0; i < timeline.kernel_metrics.size(); ++i) {
      const auto& m = timeline.kernel_metrics[i];
      present[{m.pid, m.correlation_id, m.kernel_name, m.launch_ordinal, m.metric}] = i;
    }
  for (const auto& m : counters.kernel_metrics) {
    uint32_t idx = target[{m.pid, counters.Str(m.kernel_name), m.launch_ordinal}];
    if (idx == kNone) continue;
    const KernelRecord& k = timeline.kernels[idx];
    KernelMetricRecord r = m;
    r.pid = k.pid;
    r.correlation_id = k.correlation_id;
    r.kernel_name = k.name;
    const std::string& name = counters.Str(m.metric);
    r.metric = intern(name);
    if (auto it = present.find({r.pid, r.correlation_id, r.kernel_name, r.launch_ordinal, r.metric});
        it != present.end()) {
      if (name == launch_metric::kPasses || name == launch_metric::kCostNs)
        timeline.kernel_metrics[it->second].value += r.value;
      continue;
    }
    // The timeline's activity record knows registers and static shared memory for sure; the counters run asks
    // the driver, which can fail, and for a graph's kernel node reported fewer registers than the kernel runs
    // with (10 vs 16 on the H200, where ncu and the activity record say 16). Prefer the timeline's value.
    if (name == launch_metric::kRegisters && k.registers_per_thread) r.value = k.registers_per_thread;
    if (name == launch_metric::kStaticShared && k.static_shared_bytes) r.value = k.static_shared_bytes;
    timeline.kernel_metrics.push_back(r);
  }
  for (const auto& s : counters.stall_samples) {
    StallSample r = s;
    if (s.launch_ordinal == kNone) {  // PC-sampling aggregates per name: only the process must pair up
      auto pm = pid_map.find(s.pid);
      if (pm == pid_map.end()) continue;
      r.pid = pm->second;
      r.kernel_name = intern(counters.Str(s.kernel_name));
    } else {
      uint32_t idx = target[{s.pid, counters.Str(s.kernel_name), s.launch_ordinal}];
      if (idx == kNone) continue;
      const KernelRecord& k = timeline.kernels[idx];
      r.pid = k.pid;
      r.correlation_id = k.correlation_id;
      r.kernel_name = k.name;
    }
    r.reason = intern(counters.Str(s.reason));
    r.source_file = s.source_file ? intern(counters.Str(s.source_file)) : 0;
    timeline.stall_samples.push_back(r);
  }
  // Losses the counters run recorded (dropped ranges, unsupported metrics) stay visible in the joined trace.
  for (const auto& l : counters.losses) {
    // The second counters run saw the same graph launches and made the same choices.
    if (mode == JoinMode::kSupplement &&
        (counters.Str(l.name) == kGraphLaunchesLoss || counters.Str(l.name) == kNotProfiledLoss))
      continue;
    LossRecord r = l;
    r.name = intern(counters.Str(l.name));
    r.detail = intern(counters.Str(l.detail));
    r.pid = pid_map.count(l.pid) ? pid_map[l.pid] : 0;
    timeline.losses.push_back(r);
  }
  if (report.unmatched_launches || report.unmatched_processes) {
    timeline.losses.push_back(UnmatchedLoss(report, intern));
  }
  if (mode == JoinMode::kPrimary) ReportNotProfiled(counters, report);
  ApplyCounterPeaks(timeline);
  return report;
}

JoinReport BuildCountersOnlyTrace(TraceData& t) {
  JoinReport report;
  Interner intern(t);
  // The flush kernel is the module's own.
  const StringId flush = intern(kL2FlushKernel);
  t.kernels.erase(std::remove_if(t.kernels.begin(), t.kernels.end(),
                                 [&](const KernelRecord& k) { return k.name == flush; }),
                  t.kernels.end());
  ReportNotProfiled(t, report);
  std::vector<uint32_t> ordinals = KernelLaunchOrdinals(t);
  std::map<std::tuple<uint32_t, StringId, uint32_t>, uint32_t> by_key;  // -> kernel index
  for (uint32_t i = 0; i < t.kernels.size(); ++i)
    if (ordinals[i] != kNone) by_key[{t.kernels[i].pid, t.kernels[i].name, ordinals[i]}] = i;

  // Launches with counters, their duration, and the kernel each belongs to.
  const StringId time_metric = intern(metric::kTime);
  std::map<std::tuple<uint32_t, StringId, uint32_t>, double> launches;  // -> duration ns (-1 = none)
  for (const auto& m : t.kernel_metrics) {
    double& d = launches.try_emplace({m.pid, m.kernel_name, m.launch_ordinal}, -1.0).first->second;
    if (m.metric == time_metric) d = m.value;
  }
  std::vector<char> keep(t.kernels.size(), 0);
  std::vector<int64_t> duration(t.kernels.size(), 0);
  for (const auto& [key, ns] : launches) {
    ++report.profiled_launches;
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      ++report.unmatched_launches;
      if (report.problems.size() < 200)
        report.problems.push_back(LaunchLabel(t.Str(std::get<1>(key)), std::get<2>(key)) +
                                  ": no activity record for this launch in the counters run");
      continue;
    }
    ++report.matched_launches;
    keep[it->second] = 1;
    duration[it->second] = ns > 0 ? static_cast<int64_t>(std::llround(ns)) : 0;
  }
  for (auto& m : t.kernel_metrics)
    if (auto it = by_key.find({m.pid, m.kernel_name, m.launch_ordinal}); it != by_key.end())
      m.correlation_id = t.kernels[it->second].correlation_id;
  for (auto& s : t.stall_samples)
    if (s.launch_ordinal != kNone)
      if (auto it = by_key.find({s.pid, s.kernel_name, s.launch_ordinal}); it != by_key.end())
        s.correlation_id = t.kernels[it->second].correlation_id;

  // End to end per device, in launch order (pid, correlation id), from the earliest time the run recorded.
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < t.kernels.size(); ++i)
    if (keep[i]) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const auto& x = t.kernels[a];
    const auto& y = t.kernels[b];
    return std::tie(x.pid, x.correlation_id) < std::tie(y.pid, y.correlation_id);
  });
  int64_t origin = INT64_MAX;
  for (const auto& p : t.processes)
    if (p.start_ns > 0) origin = std::min(origin, p.start_ns);
  for (const auto& k : t.kernels)
    if (k.start > 0) origin = std::min(origin, k.start);
  if (origin == INT64_MAX) origin = 0;
  std::map<uint32_t, int64_t> cursor;  // device -> next start
  std::vector<KernelRecord> kept;
  uint64_t without_time = 0;
  for (uint32_t i : order) {
    KernelRecord k = t.kernels[i];
    int64_t& at = cursor.try_emplace(k.device_id, origin).first->second;
    if (!duration[i]) ++without_time;
    k.start = at;
    k.end = at + std::max<int64_t>(duration[i], 1);
    at = k.end;
    kept.push_back(k);
  }
  const uint64_t dropped = t.kernels.size() - kept.size();
  t.kernels = std::move(kept);

  const char* kTimeline =
      "none: counters only (gcollect --counters-only); kernels laid end to end in launch order per device "
      "with "
      "gpu__time_duration.sum as duration; gaps, overlap and host activity were not measured";
  t.metadata.entries.emplace_back("timeline", kTimeline);
  t.losses.push_back(MakeLoss(
      intern("counters_only"), Severity::kInfo, report.matched_launches,
      intern(std::string(kTimeline) + "; " + std::to_string(dropped) +
             " unprofiled launches are not in this trace" +
             (without_time ? "; " + std::to_string(without_time) + " launches had no duration" : ""))));
  if (report.unmatched_launches) {
    t.losses.push_back(UnmatchedLoss(report, intern));
  }
  ApplyCounterPeaks(t);
  return report;
}

int ApplyCounterPeaks(TraceData& trace) {
  // Highest clock seen per unit and the per-cycle peaks (constant per chip).
  std::map<std::string, double> best;
  for (const auto& m : trace.kernel_metrics) {
    const std::string& name = trace.Str(m.metric);
    if (name.find(".peak_sustained") == std::string::npos && name.find(".per_second") == std::string::npos)
      continue;
    double& b = best[name];
    b = std::max(b, m.value);
  }
  auto get = [&](const char* k) { return best.count(k) ? best[k] : 0.0; };
  const double sm_hz = get(metric::kSmClock);
  if (sm_hz <= 0) return 0;
  double dram = get(metric::kDramBytesPeak) * get(metric::kDramClock);
  double l2 = get(metric::kL2BytesPeak) * get(metric::kL2Clock);
  double l1 = get(metric::kL1BytesPeak) * sm_hz;
  struct P {
    Precision p;
    const char* metric;
    double per_count;
  };
  const P peaks[] = {
      {Precision::kFp64, metric::kDfmaPeak, 2},
      {Precision::kFp32, metric::kFfmaPeak, 2},
      {Precision::kFp16, metric::kHfmaPeak, 2},
      {Precision::kFp64Tensor, metric::kTensorFp64Peak, 1},
      {Precision::kTf32Tensor, metric::kTensorHgmmaTf32Peak, 1},
      {Precision::kFp16Tensor, metric::kTensorHgmmaFp16Peak, 1},
      {Precision::kBf16Tensor, metric::kTensorHgmmaBf16Peak, 1},
      {Precision::kFp8Tensor, metric::kTensorFp8Peak, 1},
      {Precision::kInt8Tensor, metric::kTensorIgmmaInt8Peak, 1},
  };
  int updated = 0;
  for (auto& d : trace.devices) {
    bool any = false;
    auto set = [&](double& field, double v) {
      if (v > 0) field = v, any = true;
    };
    set(d.dram_bandwidth, dram);
    set(d.l2_bandwidth, l2);
    set(d.l1_bandwidth, l1);
    // BF16 and FP16 run on the same pipes outside tensor cores; the SASS counters cannot tell them apart.
    for (const auto& p : peaks)
      set(d.peak_flops[static_cast<size_t>(p.p)], get(p.metric) * p.per_count * sm_hz);
    set(d.peak_flops[static_cast<size_t>(Precision::kBf16)],
        d.peak_flops[static_cast<size_t>(Precision::kFp16)]);
    if (any) {
      d.peak_source = static_cast<uint8_t>(PeakSource::kDerived);
      ++updated;
    }
  }
  return updated;
}

Status LoadTraceFiles(const std::vector<std::string>& paths, TraceData* out,
                      std::vector<std::string>* warnings) {
  // Each file has its own string ids; re-writing every file through one writer re-interns them consistently.
  std::string bytes;
  auto writer = TraceWriter::Create(MakeStringSink(&bytes));
  if (!writer.ok()) return writer.status();
  for (const auto& path : paths) {
    auto file = ReadFileBytes(path);
    if (!file.ok()) return file.status();
    TraceData part;
    auto report = ReadTrace(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(file->data()), file->size()), part);
    if (!report.ok()) return Corrupt(path + ": " + report.status().message());
    if (!report->clean() && warnings) warnings->push_back(path + " is damaged; its intact chunks were used");
    GT_RETURN_IF_ERROR(WriteTraceData(part, **writer));
  }
  GT_RETURN_IF_ERROR((*writer)->Finish());
  auto report =
      ReadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), *out);
  return report.ok() ? Status::Ok() : report.status();
}

}  // namespace gt::counters
