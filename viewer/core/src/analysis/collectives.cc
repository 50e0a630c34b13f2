#include "gt/viewer/collectives.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "gt/units.h"
#include "gt/viewer/nvtx_args.h"
#include "gt/viewer/query.h"

namespace gt::viewer {
namespace {

struct NcclKernel {
  uint32_t pid;
  StringId name;
  int64_t start, end;
  EventId id;
  int32_t call = -1;    // index into the NCCL calls: the API range whose call launched it
  int32_t plugin = -1;  // index into TraceModel::nccl_colls: the plugin's record of its operation
};

// What ties one kernel to its counterparts on the other ranks: (2, communicator, function, NCCL's sequence
// number) from the profiler plugin; (1, communicator, 0, call count) from NCCL's payloads; else (0, kernel
// name, 0, ordinal).
using MatchKey = std::tuple<uint8_t, uint64_t, uint32_t, uint64_t>;

// Ties each plugin record of a collective to the NCCL kernel it belongs to: the last NCCL kernel launched on
// the record's thread at or before its start (NCCL starts the record right after the launch; grouped
// operations share one kernel, which keeps its first record). Records of a plan run from a host callback
// (CUDA graphs) start on another thread, find no launch and stay untied.
void TiePluginRecords(const TraceModel& m, std::map<uint32_t, std::vector<NcclKernel>>& by_pid) {
  if (m.nccl_colls.empty()) return;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<std::pair<int64_t, NcclKernel*>>> launches;
  for (auto& [pid, ks] : by_pid)
    for (NcclKernel& k : ks) {
      const EventId launch = FlowPartner(m, k.id);
      if (!launch.valid()) continue;
      const Track& t = m.TrackOf(launch);
      launches[{t.pid, t.tid}].push_back({m.Start(launch), &k});
    }
  for (auto& [thread, v] : launches)
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  constexpr int64_t kMaxDelayNs = 1'000'000'000;  // a record a second after the launch is not its own
  for (size_t i = 0; i < m.nccl_colls.size(); ++i) {
    const NcclCollRecord& r = m.nccl_colls[i];
    if (r.kind == uint8_t(NcclOpKind::kP2p)) continue;
    auto it = launches.find({r.pid, r.tid});
    if (it == launches.end()) continue;
    const auto& v = it->second;
    auto after =
        std::upper_bound(v.begin(), v.end(), r.start,
                         [](int64_t t, const std::pair<int64_t, NcclKernel*>& l) { return t < l.first; });
    if (after == v.begin()) continue;
    const auto& [at, k] = *(after - 1);
    if (r.start - at > kMaxDelayNs || k->plugin >= 0) continue;
    k->plugin = int32_t(i);
  }
}

// The per-channel GPU span of one operation: channel records are sorted by (pid, comm, func, seq, channel).
void ChannelSpan(const TraceModel& m, const NcclCollRecord& r, CollectiveRank* out) {
  const auto key = std::make_tuple(r.pid, r.comm_hash, r.func, r.seq);
  auto lo = std::lower_bound(m.nccl_channels.begin(), m.nccl_channels.end(), key,
                             [](const NcclChannelRecord& c, const auto& k) {
                               return std::make_tuple(c.pid, c.comm_hash, c.func, c.seq) < k;
                             });
  for (; lo != m.nccl_channels.end() && std::make_tuple(lo->pid, lo->comm_hash, lo->func, lo->seq) == key;
       ++lo) {
    out->gpu_start = out->channels ? std::min(out->gpu_start, lo->start) : lo->start;
    out->gpu_end = out->channels ? std::max(out->gpu_end, lo->end) : lo->end;
    ++out->channels;
  }
}

// The plugin times channels with the GPU's global timer, which the collector maps through CLOCK_REALTIME,
// while CUPTI maps the kernels' times with its own calibration: on 2 H200s the two disagreed by a per-process
// constant of -33 to +220 us. A channel cannot start before its kernel, and the first one starts within a few
// us of it; where a process's median gap (first channel start - kernel start) is outside that, its channel
// spans are moved so that the median gap is 0.
template <typename Matched>
void AlignChannelSpans(Matched& matched) {
  constexpr int64_t kPlausibleGapNs = 20'000;
  std::map<uint32_t, std::vector<int64_t>> gaps;
  for (auto& [key, c] : matched)
    for (const CollectiveRank& r : c.ranks)
      if (r.channels) gaps[r.pid].push_back(r.gpu_start - r.start);
  std::map<uint32_t, int64_t> shift;
  for (auto& [pid, v] : gaps) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    const int64_t median = v[v.size() / 2];
    if (median < 0 || median > kPlausibleGapNs) shift[pid] = -median;
  }
  for (auto& [key, c] : matched)
    for (CollectiveRank& r : c.ranks)
      if (r.channels && shift.count(r.pid)) r.gpu_start += shift[r.pid], r.gpu_end += shift[r.pid];
}

bool IsOneOf(const std::string& op, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (op == n) return true;
  return false;
}

// The NCCL call on the launching thread whose range holds the kernel's launch (the innermost one).
int32_t CallOf(const TraceModel& m, EventId kernel, const std::vector<NcclCall>& calls,
               const std::map<std::pair<uint32_t, uint32_t>, std::pair<size_t, size_t>>& by_thread) {
  const EventId launch = FlowPartner(m, kernel);
  if (!launch.valid()) return -1;
  const Track& t = m.TrackOf(launch);
  auto it = by_thread.find({t.pid, t.tid});
  if (it == by_thread.end()) return -1;
  const int64_t at = m.Start(launch);
  const auto [first, last] = it->second;
  // Calls of a thread are sorted by start: the last one starting at or before the launch, then a few more
  // around it (NCCL's ranges do not nest deeply).
  size_t i = size_t(std::upper_bound(calls.begin() + first, calls.begin() + last, at,
                                     [](int64_t t, const NcclCall& c) { return t < c.start; }) -
                    calls.begin());
  for (int tries = 0; i-- > first && tries < 8; ++tries) {
    const NcclCall& c = calls[i];
    if (c.end >= at && c.has_bytes && c.range.valid()) return int32_t(i);
  }
  return -1;
}

std::string OpOf(const std::string& kernel) {
  for (const char* prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    const std::string p = prefix;
    if (kernel.rfind(p, 0) == 0) {
      size_t end = kernel.find_first_of("_(", p.size());
      return kernel.substr(p.size(), end == std::string::npos ? std::string::npos : end - p.size());
    }
  }
  return kernel.substr(0, kernel.find('('));
}

// The step a collective belongs to, as the user named it with NVTX: the top-level range around its launch on
// the launching thread, else on another thread of the process (DDP launches gradient all-reduces from
// autograd's thread while "step 12" is pushed on the main one). NCCL's own API ranges are no steps.
std::string StepOf(const TraceModel& m, EventId kernel) {
  const EventId launch = FlowPartner(m, kernel);
  if (!launch.valid()) return {};
  const Track& api = m.TrackOf(launch);
  const int64_t t = m.Start(launch);
  auto covering = [&](const Track& tr) -> std::string {
    const Lane& lane = m.lanes[tr.first_lane];  // depth 0
    auto it = std::upper_bound(lane.start.begin(), lane.start.end(), t);
    if (it == lane.start.begin()) return {};
    const uint32_t i = uint32_t(it - lane.start.begin() - 1);
    if (lane.End(i) < t) return {};
    const std::string& name = m.Str(lane.name[i]);
    return name.rfind("nccl", 0) == 0 ? std::string() : name;
  };
  std::string other;
  for (const Track& tr : m.tracks) {
    if (tr.kind != TrackKind::kThreadRanges || tr.pid != api.pid || tr.lane_count == 0) continue;
    std::string name = covering(tr);
    if (tr.tid == api.tid && !name.empty()) return name;
    if (other.empty()) other = std::move(name);
  }
  return other;
}

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Time of `a` (sorted, disjoint after merging) covered by any interval of `b`.
int64_t Overlap(std::vector<std::pair<int64_t, int64_t>> a, std::vector<std::pair<int64_t, int64_t>> b) {
  auto merge = [](std::vector<std::pair<int64_t, int64_t>>& v) {
    std::sort(v.begin(), v.end());
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const auto& x : v)
      if (!out.empty() && x.first <= out.back().second)
        out.back().second = std::max(out.back().second, x.second);
      else
        out.push_back(x);
    v = std::move(out);
  };
  merge(a), merge(b);
  int64_t total = 0;
  size_t j = 0;
  for (const auto& x : a) {
    while (j < b.size() && b[j].second <= x.first) ++j;
    for (size_t k = j; k < b.size() && b[k].first < x.second; ++k)
      total += std::min(x.second, b[k].second) - std::max(x.first, b[k].first);
  }
  return total;
}

std::string RankName(const CollectiveRank& r) {
  return r.rank >= 0 ? "rank " + std::to_string(r.rank) : "pid " + std::to_string(r.pid);
}

// Which interned names are NCCL kernels, as the id of the first string with the same text (a trace of several
// processes can intern one name once per segment, so ids alone would keep two ranks' kernels of one
// collective apart): one pass over the strings, so the pass over every kernel event (the loader runs this on
// traces of any size) costs an array read each; 0 for other names, empty when the trace has none.
std::vector<StringId> NcclNames(const TraceModel& m) {
  std::vector<StringId> canon(m.strings.size(), 0);
  std::unordered_map<std::string_view, StringId> first;
  for (size_t i = 1; i < m.strings.size(); ++i)
    if (m.strings[i].rfind("nccl", 0) == 0)
      canon[i] = first.try_emplace(m.strings[i], StringId(i)).first->second;
  if (first.empty()) canon.clear();
  return canon;
}

}  // namespace

CollectiveReport AnalyzeCollectives(const TraceModel& m) {
  CollectiveReport report;
  const std::vector<StringId> nccl = NcclNames(m);
  if (nccl.empty()) return report;
  std::map<uint32_t, std::vector<NcclKernel>> by_pid;
  std::map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> compute;
  for (const Track& t : m.tracks) {
    if (t.kind != TrackKind::kGpuStream) continue;
    for (uint32_t d = 0; d < t.lane_count; ++d) {
      const LaneId l = t.first_lane + d;
      const Lane& lane = m.lanes[l];
      for (uint32_t i = 0; i < lane.size(); ++i) {
        const EventId e{l, i};
        if (m.Kind(e) != EventKind::kKernel) continue;
        if (lane.name[i] < nccl.size() && nccl[lane.name[i]])
          by_pid[t.pid].push_back({t.pid, nccl[lane.name[i]], lane.start[i], lane.End(i), e});
        else
          compute[t.pid].push_back({lane.start[i], lane.End(i)});
      }
    }
  }
  if (by_pid.size() < 2) return report;
  std::map<uint32_t, int32_t> rank_of;
  for (const ProcessRecord& p : m.processes)
    if (p.rank >= 0) rank_of[p.pid] = p.rank;

  // ---- NCCL's calls (payloads): each call's sequence number on its communicator in its process, the
  // communicators' sizes, and the call that launched each kernel.
  const std::vector<NcclCall> calls = m.nvtx_args.empty() ? std::vector<NcclCall>{} : NcclCalls(m);
  std::vector<uint32_t> seq(calls.size(), 0);
  std::map<uint64_t, uint32_t> comm_ranks;
  std::map<std::pair<uint32_t, uint32_t>, std::pair<size_t, size_t>> by_thread;
  {
    std::map<uint32_t, std::vector<size_t>> by_process;
    for (size_t i = 0; i < calls.size(); ++i) {
      auto [it, fresh] = by_thread.try_emplace({calls[i].pid, calls[i].tid}, i, i + 1);
      if (!fresh) it->second.second = i + 1;
      if (calls[i].nranks > 0) comm_ranks[calls[i].comm] = uint32_t(calls[i].nranks);
      if (calls[i].has_bytes) by_process[calls[i].pid].push_back(i);
    }
    for (auto& [pid, idx] : by_process) {
      std::stable_sort(idx.begin(), idx.end(),
                       [&](size_t a, size_t b) { return calls[a].start < calls[b].start; });
      std::map<uint64_t, uint32_t> next;
      for (size_t i : idx) seq[i] = next[calls[i].comm]++;
    }
  }

  // ---- match: (communicator, function, NCCL's sequence) from the plugin, (communicator, call count) from
  // the payloads, or (name, ordinal) across processes
  for (auto& [pid, ks] : by_pid)
    std::stable_sort(ks.begin(), ks.end(),
                     [](const NcclKernel& a, const NcclKernel& b) { return a.start < b.start; });
  TiePluginRecords(m, by_pid);
  {  // Exact keys only where every process has them: a process whose plugin did not load keeps the others
     // on the payload or ordinal keys too, rather than leaving every collective unmatched.
    bool all = true;
    for (const auto& [pid, ks] : by_pid)
      all &= std::any_of(ks.begin(), ks.end(), [](const NcclKernel& k) { return k.plugin >= 0; });
    if (!all)
      for (auto& [pid, ks] : by_pid)
        for (NcclKernel& k : ks) k.plugin = -1;
  }
  // The plugin's function names are interned once per process segment too: key them by text.
  std::unordered_map<std::string_view, StringId> func_ids;
  auto canonical_func = [&](StringId id) { return func_ids.try_emplace(m.Str(id), id).first->second; };
  std::map<MatchKey, Collective> matched;
  for (auto& [pid, ks] : by_pid) {
    std::map<StringId, uint32_t> ordinal;
    for (NcclKernel& k : ks) {
      k.call = calls.empty() ? -1 : CallOf(m, k.id, calls, by_thread);
      MatchKey key;
      if (k.plugin >= 0) {
        const NcclCollRecord& p = m.nccl_colls[k.plugin];
        key = MatchKey{2, p.comm_hash, canonical_func(p.func), p.seq};
      } else if (k.call >= 0) {
        key = MatchKey{1, calls[k.call].comm, 0, seq[k.call]};
      } else {
        key = MatchKey{0, k.name, 0, ordinal[k.name]++};
      }
      Collective& c = matched[key];
      if (c.ranks.empty()) c.kernel_name = k.name;
      CollectiveRank r;
      r.rank = rank_of.count(pid) ? rank_of[pid] : -1;
      r.pid = pid, r.kernel = k.id, r.start = k.start, r.end = k.end;
      if (k.plugin >= 0) {
        const NcclCollRecord& p = m.nccl_colls[k.plugin];
        r.plugin = k.plugin;
        ChannelSpan(m, p, &r);
        c.op = m.Str(p.func);
        c.algo = m.Str(p.algo), c.proto = m.Str(p.proto), c.datatype = m.Str(p.datatype);
        c.count = std::max(c.count, p.count);
        c.n_channels = std::max<uint32_t>(c.n_channels, p.n_channels);
        c.n_warps = std::max<uint32_t>(c.n_warps, p.n_warps);
        if (const uint32_t tb = NcclTypeBytes(c.datatype)) c.bytes = std::max(c.bytes, p.count * tb);
        if (p.nranks > 0) comm_ranks[p.comm_hash] = uint32_t(p.nranks);
      }
      if (k.call >= 0) {
        const NcclCall& call = calls[k.call];
        r.call = call.range;
        c.bytes = std::max(c.bytes, call.bytes);
        if (k.plugin >= 0) {
          // the plugin named the op
        } else if (c.op.empty() || c.op == call.op)
          c.op = call.op;
        else if (IsOneOf(c.op, {"Send", "Recv"}) && IsOneOf(call.op, {"Send", "Recv"}))
          c.op = "SendRecv";
        if (!call.redop.empty()) c.redop = call.redop;
      }
      c.ranks.push_back(r);
    }
  }
  AlignChannelSpans(matched);
  std::vector<int64_t> transfers;
  for (auto& [key, c] : matched) {
    if (c.ranks.size() < 2) {
      ++report.unmatched;
      continue;
    }
    c.ordinal = uint32_t(std::get<3>(key));
    if (std::get<0>(key) >= 1) {
      c.by_comm = true, c.comm = std::get<1>(key);
      ++report.by_comm;
      if (std::get<0>(key) == 2) c.by_plugin = true, c.seq = std::get<3>(key), ++report.by_plugin;
      auto n = comm_ranks.find(c.comm);
      c.comm_ranks = n != comm_ranks.end() ? n->second : uint32_t(c.ranks.size());
    } else {
      c.comm_ranks = uint32_t(c.ranks.size());
    }
    if (c.op.empty()) c.op = OpOf(m.Str(c.kernel_name));
    std::sort(c.ranks.begin(), c.ranks.end(), [](const CollectiveRank& a, const CollectiveRank& b) {
      return std::make_pair(a.rank, a.pid) < std::make_pair(b.rank, b.pid);
    });
    c.first_arrival = c.last_arrival = c.ranks[0].start;
    for (size_t i = 0; i < c.ranks.size(); ++i) {
      c.first_arrival = std::min(c.first_arrival, c.ranks[i].start);
      if (c.ranks[i].start > c.last_arrival) c.last_arrival = c.ranks[i].start, c.last = i;
    }
    int64_t last_end = c.last_arrival;
    for (auto& r : c.ranks) {
      r.wait_ns = c.last_arrival - r.start;
      r.transfer_ns = std::max<int64_t>(0, r.end - c.last_arrival);
      transfers.push_back(r.transfer_ns);
      last_end = std::max(last_end, r.end);
    }
    c.time_ns = last_end - c.last_arrival;
    if (c.bytes && c.time_ns > 0) {
      c.algbw = double(AlgorithmBytes(c.op, c.bytes, c.comm_ranks)) / (double(c.time_ns) * 1e-9);
      c.busbw = c.algbw * BusBandwidthFactor(c.op, c.comm_ranks);
    }
    report.collectives.push_back(std::move(c));
  }
  std::sort(report.collectives.begin(), report.collectives.end(),
            [](const Collective& a, const Collective& b) { return a.last_arrival < b.last_arrival; });
  report.late_threshold_ns = std::max<int64_t>(100'000, Median(transfers) / 20);
  {  // bandwidth per (op, size, ranks, algorithm), at the median time
    std::map<std::tuple<std::string, uint64_t, uint32_t, std::string>, std::vector<int64_t>> times;
    for (const Collective& c : report.collectives)
      if (c.bytes && c.time_ns > 0)
        times[{c.op, c.bytes, c.comm_ranks, c.algo.empty() ? c.algo : c.algo + "/" + c.proto}].push_back(
            c.time_ns);
    for (auto& [key, t] : times) {
      CollectiveBandwidth b;
      std::tie(b.op, b.bytes, b.ranks, b.algo) = key;
      b.count = uint32_t(t.size());
      b.median_ns = Median(std::move(t));
      b.algbw = double(AlgorithmBytes(b.op, b.bytes, b.ranks)) / (double(b.median_ns) * 1e-9);
      b.busbw = b.algbw * BusBandwidthFactor(b.op, b.ranks);
      report.bandwidth.push_back(std::move(b));
    }
  }

  // ---- per rank
  std::map<uint32_t, RankCollectiveStats> stats;
  for (const auto& [pid, ks] : by_pid) {
    RankCollectiveStats& s = stats[pid];
    s.pid = pid, s.rank = rank_of.count(pid) ? rank_of[pid] : -1;
    std::vector<std::pair<int64_t, int64_t>> comm;
    for (const NcclKernel& k : ks) s.comm_ns += k.end - k.start, comm.push_back({k.start, k.end});
    for (const auto& c : compute[pid]) s.compute_ns += c.second - c.first;
    s.overlap_ns = Overlap(compute[pid], comm);
  }
  std::map<uint32_t, std::vector<const Collective*>> late_at;  // pid -> collectives it was late for
  for (Collective& c : report.collectives) {
    int64_t second = c.first_arrival;
    for (size_t i = 0; i < c.ranks.size(); ++i)
      if (i != c.last) second = std::max(second, c.ranks[i].start);
    const int64_t late = c.last_arrival - second;
    for (const auto& r : c.ranks) {
      stats[r.pid].collectives++;
      stats[r.pid].wait_ns += r.wait_ns;
    }
    if (late <= report.late_threshold_ns) continue;
    RankCollectiveStats& s = stats[c.ranks[c.last].pid];
    s.last_arrivals++, s.late_ns += late, s.max_late_ns = std::max(s.max_late_ns, late);
    c.step = StepOf(m, c.ranks[c.last].kernel);
    late_at[c.ranks[c.last].pid].push_back(&c);
  }
  for (uint32_t ci = 0; ci < report.collectives.size(); ++ci)
    for (uint32_t ri = 0; ri < report.collectives[ci].ranks.size(); ++ri)
      report.by_kernel.push_back({report.collectives[ci].ranks[ri].kernel, ci, ri});
  std::sort(report.by_kernel.begin(), report.by_kernel.end());
  for (const auto& [pid, s] : stats) report.ranks.push_back(s);
  std::sort(report.ranks.begin(), report.ranks.end(), [](const auto& a, const auto& b) {
    return std::make_pair(a.rank, a.pid) < std::make_pair(b.rank, b.pid);
  });

  // ---- diagnosis, most lateness first
  std::vector<const RankCollectiveStats*> late;
  for (const auto& s : report.ranks)
    if (s.last_arrivals) late.push_back(&s);
  std::sort(late.begin(), late.end(), [](const auto* a, const auto* b) { return a->late_ns > b->late_ns; });
  for (const RankCollectiveStats* s : late) {
    std::set<std::string> ops;
    std::vector<std::pair<std::string, int64_t>> steps;  // in time order: the most it was late in each
    std::map<std::string, size_t> step_index;
    int64_t others_wait = 0;
    for (const Collective* c : late_at[s->pid]) {
      ops.insert(c->op);
      if (!c->step.empty()) {
        auto [it, fresh] = step_index.try_emplace(c->step, steps.size());
        if (fresh) steps.push_back({c->step, 0});
        steps[it->second].second = std::max(steps[it->second].second, c->skew_ns());
      }
      for (size_t i = 0; i < c->ranks.size(); ++i)
        if (i != c->last) others_wait += c->ranks[i].wait_ns;
    }
    // Worst steps first: a rank that trails by a little everywhere and by 20 ms in three steps is explained
    // by those three.
    std::stable_sort(steps.begin(), steps.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string op_list;
    for (const auto& o : ops) op_list += (op_list.empty() ? "" : "/") + o;
    std::string line = (s->rank >= 0 ? "rank " + std::to_string(s->rank) : "pid " + std::to_string(s->pid)) +
                       " arrives late at " + std::to_string(s->last_arrivals) + " of " +
                       std::to_string(s->collectives) + " " + op_list + " collectives (by " +
                       FormatDuration(double(s->max_late_ns)) + " at most";
    if (!steps.empty()) {
      line += steps.size() == 1 ? ", in " : ", most in ";
      for (size_t i = 0; i < steps.size() && i < 5; ++i)
        line += (i ? ", " : "") + steps[i].first +
                (steps.size() > 1 ? " (" + FormatDuration(double(steps[i].second)) + ")" : "");
      if (steps.size() > 5) line += ", +" + std::to_string(steps.size() - 5) + " more";
    }
    line += "); the other ranks wait " + FormatDuration(double(others_wait)) + " for it in total";
    report.diagnosis.push_back(line);
  }
  return report;
}

uint32_t NcclTypeBytes(const std::string& t) {
  if (IsOneOf(t, {"ncclInt8", "ncclUint8", "ncclChar", "ncclFloat8e4m3", "ncclFloat8e5m2"})) return 1;
  if (IsOneOf(t, {"ncclFloat16", "ncclHalf", "ncclBfloat16"})) return 2;
  if (IsOneOf(t, {"ncclInt32", "ncclUint32", "ncclInt", "ncclFloat32", "ncclFloat"})) return 4;
  if (IsOneOf(t, {"ncclInt64", "ncclUint64", "ncclFloat64", "ncclDouble"})) return 8;
  return 0;
}

double BusBandwidthFactor(const std::string& op, uint32_t n) {
  if (n == 0) return 0;
  const double dn = double(n);
  if (op == "AllReduce") return 2.0 * (dn - 1) / dn;
  if (IsOneOf(op, {"AllGather", "ReduceScatter", "AlltoAll", "Gather", "Scatter"})) return (dn - 1) / dn;
  return 1.0;  // Broadcast, Reduce, Send, Recv, SendRecv, and what nccl-tests has no formula for
}

uint64_t AlgorithmBytes(const std::string& op, uint64_t nccl_bytes, uint32_t n) {
  if (IsOneOf(op, {"AllGather", "ReduceScatter", "AlltoAll", "Gather", "Scatter"})) return nccl_bytes * n;
  return nccl_bytes;
}

const CollectiveReport::KernelRef* CollectiveReport::Find(EventId kernel) const {
  auto it = std::lower_bound(by_kernel.begin(), by_kernel.end(), KernelRef{kernel, 0, 0});
  return it != by_kernel.end() && it->kernel == kernel ? &*it : nullptr;
}

const CollectiveReport& CollectivesOf(const TraceModel& model) {
  static const CollectiveReport kNone;
  return model.collectives ? *model.collectives : kNone;
}

std::vector<RankKernelTime> KernelTimeByRank(const TraceModel& m) {
  std::map<uint32_t, int32_t> rank_of;
  for (const ProcessRecord& p : m.processes)
    if (p.rank >= 0) rank_of[p.pid] = p.rank;
  if (rank_of.empty()) return {};
  std::map<int32_t, RankKernelTime> by_rank;
  const std::vector<StringId> nccl = NcclNames(m);
  for (const Track& t : m.tracks) {
    auto r = rank_of.find(t.pid);
    if (t.kind != TrackKind::kGpuStream || r == rank_of.end()) continue;
    RankKernelTime& rt = by_rank[r->second];
    for (uint32_t d = 0; d < t.lane_count; ++d) {
      const Lane& lane = m.lanes[t.first_lane + d];
      for (uint32_t i = 0; i < lane.size(); ++i) {
        if (m.Kind(EventId{t.first_lane + d, i}) != EventKind::kKernel) continue;
        const int64_t dur = lane.Duration(i);
        rt.kernels++, rt.kernel_ns += dur;
        if (lane.name[i] < nccl.size() && nccl[lane.name[i]]) rt.nccl_ns += dur;
      }
    }
  }
  for (const RankCollectiveStats& s : CollectivesOf(m).ranks)
    if (s.rank >= 0 && by_rank.count(s.rank)) by_rank[s.rank].wait_ns += s.wait_ns;
  std::vector<RankKernelTime> out;
  for (auto& [rank, t] : by_rank) {
    t.rank = rank;
    out.push_back(t);
  }
  return out;
}

std::string FormatCollectiveReport(const CollectiveReport& r) {
  if (r.collectives.empty()) return {};
  std::string o = "NCCL collectives: " + std::to_string(r.collectives.size()) + " matched across " +
                  std::to_string(r.ranks.size()) + " ranks";
  if (r.unmatched) o += " (" + std::to_string(r.unmatched) + " kernels seen on one rank only)";
  o += "\n";
  auto row = [&o](const std::vector<std::string>& cells) {
    static constexpr size_t kWidth[] = {10, 12, 8, 12, 12, 12, 12, 8};
    o += "  ";
    for (size_t i = 0; i < cells.size(); ++i) o += PadColumn(cells[i], kWidth[i], i > 0) + " ";
    o += "\n";
  };
  row({"rank", "collectives", "late at", "late total", "waiting", "in NCCL", "compute", "hidden"});
  for (const auto& s : r.ranks) {
    CollectiveRank id;
    id.rank = s.rank, id.pid = s.pid;
    row({RankName(id), std::to_string(s.collectives), std::to_string(s.last_arrivals),
         FormatDuration(double(s.late_ns)), FormatDuration(double(s.wait_ns)),
         FormatDuration(double(s.comm_ns)), FormatDuration(double(s.compute_ns)),
         s.comm_ns ? FormatPercent(100.0 * double(s.overlap_ns) / double(s.comm_ns)) : "-"});
  }
  o += "  (hidden: share of NCCL time that ran alongside the rank's compute kernels)\n";
  if (r.by_plugin)
    o += "  " + std::to_string(r.by_plugin) +
         " of them matched by communicator, function and NCCL's sequence number (NCCL profiler plugin)\n";
  if (r.by_comm > r.by_plugin)
    o += "  " + std::to_string(r.by_comm - r.by_plugin) +
         " of them matched by communicator and sequence number (NCCL payloads)\n";
  if (r.by_plugin) {  // NCCL's choices, per op
    std::map<std::tuple<std::string, std::string, std::string, uint32_t, uint32_t>, uint32_t> algos;
    for (const Collective& c : r.collectives)
      if (c.by_plugin) ++algos[{c.op, c.algo, c.proto, c.n_channels, c.n_warps}];
    o += "  Algorithms (NCCL profiler plugin):\n";
    auto arow = [&o](const std::vector<std::string>& cells) {
      static constexpr size_t kWidth[] = {14, 14, 8, 9, 6, 7};
      o += "  ";
      for (size_t i = 0; i < cells.size(); ++i) o += PadColumn(cells[i], kWidth[i], i > 0) + " ";
      o += "\n";
    };
    arow({"op", "algorithm", "proto", "channels", "warps", "count"});
    for (const auto& [k, n] : algos)
      arow({std::get<0>(k), std::get<1>(k), std::get<2>(k), std::to_string(std::get<3>(k)),
            std::to_string(std::get<4>(k)), std::to_string(n)});
  }
  if (!r.bandwidth.empty()) {
    o += "  Bandwidth (nccl-tests' algbw and busbw; time = last end - last arrival, median):\n";
    bool any_algo = false;
    for (const CollectiveBandwidth& b : r.bandwidth) any_algo |= !b.algo.empty();
    auto brow = [&o](const std::vector<std::string>& cells) {
      static constexpr size_t kWidth[] = {14, 10, 6, 7, 10, 11, 11, 14};
      o += "  ";
      for (size_t i = 0; i < cells.size(); ++i) o += PadColumn(cells[i], kWidth[i], i > 0) + " ";
      o += "\n";
    };
    std::vector<std::string> head = {"op", "size", "ranks", "count", "time", "algbw", "busbw"};
    if (any_algo) head.push_back("algorithm");
    brow(head);
    for (const CollectiveBandwidth& b : r.bandwidth) {
      std::vector<std::string> cells = {b.op,
                                        FormatBytes(double(b.bytes)),
                                        std::to_string(b.ranks),
                                        std::to_string(b.count),
                                        FormatDuration(double(b.median_ns)),
                                        FormatRate(b.algbw, "B/s"),
                                        FormatRate(b.busbw, "B/s")};
      if (any_algo) cells.push_back(b.algo.empty() ? "-" : b.algo);
      brow(cells);
    }
  }
  for (const auto& d : r.diagnosis) o += "  straggler: " + d + "\n";
  if (r.diagnosis.empty())
    o += "  no straggler: no rank arrives more than " + FormatDuration(double(r.late_threshold_ns)) +
         " after the others\n";
  return o;
}

}  // namespace gt::viewer
