// Per-name summaries, the comparison of two traces, and the text reports of `gtrace stats` and `gtrace diff`.
//
// [SECTION] Summaries by name
// [SECTION] What the CPU did while the GPU was idle
// [SECTION] Two traces compared
// [SECTION] Text helpers
// [SECTION] Stats report
// [SECTION] Diff report
#include "gt/viewer/summary.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "gt/viewer/collectives.h"

#include "gt/name_stats.h"
#include "gt/nvtx_domains.h"
#include "gt/viewer/profiled.h"
#include "gt/viewer/query.h"

namespace gt::viewer {

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Summaries by name
// -----------------------------------------------------------------------------------------------------------------

const char* SummaryOfName(SummaryOf what) {
  switch (what) {
    case SummaryOf::kKernels:
      return "kernels";
    case SummaryOf::kCopies:
      return "copies";
    case SummaryOf::kApi:
      return "api";
    case SummaryOf::kNvtx:
      return "nvtx";
  }
  return "?";
}

namespace {

// Which events of which lanes a summary counts; bytes of copies come from the kind tables.
template <typename F>
void ForEachSummarized(const TraceModel& model, SummaryOf what, F&& f) {
  for (const Track& t : model.tracks) {
    const bool gpu = t.kind == TrackKind::kGpuStream;
    if ((what == SummaryOf::kKernels || what == SummaryOf::kCopies) && !gpu) continue;
    if (what == SummaryOf::kApi && t.kind != TrackKind::kThreadApi) continue;
    if (what == SummaryOf::kNvtx && t.kind != TrackKind::kThreadRanges) continue;
    const uint32_t depths = what == SummaryOf::kApi ? std::min<uint32_t>(t.lane_count, 1) : t.lane_count;
    for (uint32_t d = 0; d < depths; ++d) {
      const Lane& lane = model.lanes[t.first_lane + d];
      for (uint32_t i = 0; i < lane.size(); ++i) {
        uint64_t bytes = 0;
        if (what != SummaryOf::kApi) {
          const auto kind = static_cast<EventKind>(lane.ref[i] >> kRefKindShift);
          const uint32_t payload = lane.ref[i] & kRefPayloadMask;
          if (what == SummaryOf::kKernels && kind != EventKind::kKernel) continue;
          if (what == SummaryOf::kNvtx && kind != EventKind::kNvtx && kind != EventKind::kHostOp) continue;
          if (what == SummaryOf::kCopies) {
            if (kind == EventKind::kMemcpy && payload < model.memcpys.size())
              bytes = model.memcpys[payload].bytes;
            else if (kind == EventKind::kMemset && payload < model.memsets.size())
              bytes = model.memsets[payload].bytes;
            else if (kind != EventKind::kMemcpy && kind != EventKind::kMemset)
              continue;
          }
        }
        f(lane.name[i], lane.start[i], lane.Duration(i), bytes);
      }
    }
  }
}

void SortByTotal(std::vector<NameSummary>* rows) {
  std::sort(rows->begin(), rows->end(), [](const NameSummary& a, const NameSummary& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return a.name < b.name;
  });
}

}  // namespace

namespace {

// One row per name text (distinct StringIds may carry the same text: imports intern per source).
// One table row from a name's statistics; `all`: the table's total, for the share.
NameSummary SummaryRow(const std::string& name, const NameStats& st, int64_t all) {
  NameSummary r;
  r.name = name;
  r.count = st.count;
  r.total_ns = st.total_ns;
  r.min_ns = st.min_ns;
  r.max_ns = st.max_ns;
  r.avg_ns = st.avg_ns();
  r.share = all > 0 ? double(st.total_ns) / double(all) : 0;
  r.bytes = st.bytes;
  return r;
}

std::vector<NameSummary> RowsByText(const TraceModel& model, const NameAggregator& agg) {
  std::map<std::string, NameStats> merged;
  for (const NameRow& r : agg.Rows()) merged[model.Str(r.name)].Merge(r.stats);
  std::vector<NameSummary> rows;
  const int64_t all = agg.total_ns();
  for (const auto& [name, st] : merged) {
    rows.push_back(SummaryRow(name, st, all));
  }
  SortByTotal(&rows);
  return rows;
}

}  // namespace

std::vector<NameSummary> SummarizeByName(const TraceModel& model, SummaryOf what) {
  NameAggregator agg;
  ForEachSummarized(model, what, [&](StringId name, int64_t start, int64_t d, uint64_t bytes) {
    agg.Add(name, start, d, bytes);
  });
  return RowsByText(model, agg);
}

void SummarizeAll(const TraceModel& model, std::vector<KernelSummaryRow>* kernels,
                  std::vector<NameSummary> (&by_name)[4]) {
  // The same events, in the same order, as ForEachSummarized per table and KernelSummary, so every
  // aggregator sees what it would have alone: the rows are identical, not just close.
  NameAggregator agg[4];
  NameAggregator& kern = agg[size_t(SummaryOf::kKernels)];
  NameAggregator& copies = agg[size_t(SummaryOf::kCopies)];
  for (const Track& t : model.tracks) {
    const bool gpu = t.kind == TrackKind::kGpuStream, api = t.kind == TrackKind::kThreadApi,
               ranges = t.kind == TrackKind::kThreadRanges;
    if (!gpu && !api && !ranges) continue;
    const uint32_t depths = api ? std::min<uint32_t>(t.lane_count, 1) : t.lane_count;
    for (uint32_t d = 0; d < depths; ++d) {
      const Lane& lane = model.lanes[t.first_lane + d];
      const int64_t* start = lane.start.data();
      const uint32_t* dur = lane.dur.data();
      const StringId* name = lane.name.data();
      const uint32_t* ref = lane.ref.data();
      const uint32_t n = lane.size();
      for (uint32_t i = 0; i < n; ++i) {
        const int64_t di = dur[i] == kDurOverflow ? lane.Duration(i) : int64_t(dur[i]);
        if (api) {
          agg[size_t(SummaryOf::kApi)].Add(name[i], start[i], di);
          continue;
        }
        const auto kind = static_cast<EventKind>(ref[i] >> kRefKindShift);
        if (ranges) {
          if (kind == EventKind::kNvtx || kind == EventKind::kHostOp)
            agg[size_t(SummaryOf::kNvtx)].Add(name[i], start[i], di);
        } else if (kind == EventKind::kKernel) {
          kern.Add(name[i], start[i], di);
        } else if (kind == EventKind::kMemcpy || kind == EventKind::kMemset) {
          const uint32_t payload = ref[i] & kRefPayloadMask;
          uint64_t bytes = 0;
          if (kind == EventKind::kMemcpy && payload < model.memcpys.size())
            bytes = model.memcpys[payload].bytes;
          else if (kind == EventKind::kMemset && payload < model.memsets.size())
            bytes = model.memsets[payload].bytes;
          copies.Add(name[i], start[i], di, bytes);
        }
      }
    }
  }
  *kernels = KernelSummaryRows(kern);
  for (size_t k = 0; k < 4; ++k) by_name[k] = RowsByText(model, agg[k]);
}

int64_t TotalNs(const std::vector<NameSummary>& rows) {
  int64_t t = 0;
  for (const auto& r : rows) t += r.total_ns;
  return t;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] What the CPU did while the GPU was idle
// -----------------------------------------------------------------------------------------------------------------

namespace {

// Adds, per name, how much of [a, b) the events of `lane` cover. Events of a lane never overlap and are
// sorted by start, so their ends are sorted too: a binary search finds the first that can reach into the gap.
// `depth` ranks names that cover the same time: the innermost range says more than the one around it.
struct Cover {
  int64_t ns = 0;
  uint32_t depth = 0;
};
uint32_t FirstEndingAfter(const Lane& lane, int64_t a) {
  uint32_t lo = 0, hi = lane.size();
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (lane.End(mid) <= a)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}
void AddOverlaps(const TraceModel& model, const Lane& lane, uint32_t depth, int64_t a, int64_t b,
                 std::map<StringId, Cover>* by_name) {
  for (uint32_t i = FirstEndingAfter(lane, a); i < lane.size() && lane.start[i] < b; ++i) {
    const int64_t overlap = std::min(lane.End(i), b) - std::max(lane.start[i], a);
    if (overlap <= 0) continue;
    Cover& c = (*by_name)[lane.name[i]];
    c.ns += overlap;
    c.depth = std::max(c.depth, depth);
  }
}

bool Contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

// What kind of host stall an API call is; calls of one kind add up (cudaMalloc and cudaFree alternate in an
// allocating loop, and neither alone may cover much of the gap).
enum class Stall { kNone, kSync, kAlloc, kSyncCopy, kLaunch, kOther };
Stall StallOf(std::string_view n) {
  if (Contains(n, "Synchronize") || n == "cudaStreamWaitEvent" || n == "cuStreamWaitEvent")
    return Stall::kSync;
  if (Contains(n, "Malloc") || Contains(n, "Free") || Contains(n, "HostAlloc") ||
      Contains(n, "HostRegister") || Contains(n, "MemAlloc"))
    return Stall::kAlloc;
  if ((Contains(n, "Memcpy") || Contains(n, "Memset")) && !Contains(n, "Async")) return Stall::kSyncCopy;
  if (Contains(n, "Launch")) return Stall::kLaunch;
  return Stall::kOther;
}

// NVTX domains that are not the app's own ranges: library calls (--trace=cublas,cudnn,nccl) and OS runtime
// waits (--trace=osrt), as gt/model.h spells them.
enum class RangeClass : uint8_t { kApp, kLibrary, kOsWait };
constexpr std::string_view kLibraryDomains[] = {kCublasNvtxDomain, kCudnnNvtxDomain, kNcclNvtxDomain};
constexpr std::string_view kOsWaitDomain = kOsRuntimeNvtxDomain;
struct DomainClasses {
  std::map<StringId, RangeClass> by_domain;  // few domains: looked up once each
  RangeClass Of(const TraceModel& model, StringId domain) {
    if (!domain) return RangeClass::kApp;
    auto [it, added] = by_domain.try_emplace(domain, RangeClass::kApp);
    if (added) {
      const std::string_view d = model.Str(domain);
      if (d == kOsWaitDomain) it->second = RangeClass::kOsWait;
      for (std::string_view l : kLibraryDomains)
        if (d == l) it->second = RangeClass::kLibrary;
    }
    return it->second;
  }
};
struct LibraryCover {
  Cover cover;
  StringId domain = 0;
};

// AddOverlaps for a thread's range lanes, sorted by what each range is: the app's ranges, library calls (by
// name), OS waits (by call and thread; only on threads that feed the GPU).
void AddRangeOverlaps(const TraceModel& model, const Lane& lane, uint32_t depth, int64_t a, int64_t b,
                      uint32_t tid, bool feeds_gpu, DomainClasses* domains, std::map<StringId, Cover>* ranges,
                      std::map<StringId, LibraryCover>* libraries,
                      std::map<std::pair<StringId, uint32_t>, Cover>* waits) {
  for (uint32_t i = FirstEndingAfter(lane, a); i < lane.size() && lane.start[i] < b; ++i) {
    const int64_t overlap = std::min(lane.End(i), b) - std::max(lane.start[i], a);
    if (overlap <= 0) continue;
    const uint32_t ref = lane.ref[i];
    StringId domain = 0;
    if (EventKind(ref >> kRefKindShift) == EventKind::kNvtx && (ref & kRefPayloadMask) < model.nvtx.size())
      domain = model.nvtx[ref & kRefPayloadMask].domain;
    Cover* c = nullptr;
    switch (domains->Of(model, domain)) {
      case RangeClass::kApp:
        c = &(*ranges)[lane.name[i]];
        break;
      case RangeClass::kLibrary: {
        LibraryCover& l = (*libraries)[lane.name[i]];
        l.domain = domain;
        c = &l.cover;
        break;
      }
      case RangeClass::kOsWait:
        if (!feeds_gpu) continue;
        c = &(*waits)[{lane.name[i], tid}];
        break;
    }
    c->ns += overlap;
    c->depth = std::max(c->depth, depth);
  }
}

// Whether an event of `lane` (sorted by start) starts in [a, b).
bool HasStartIn(const Lane& lane, int64_t a, int64_t b) {
  uint32_t lo = 0, hi = lane.size();
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (lane.start[mid] < a)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < lane.size() && lane.start[lo] < b;
}

std::string ThreadLabel(const TraceModel& model, uint32_t tid) {
  for (const ThreadRecord& t : model.threads)
    if (t.tid == tid && t.name) return std::string(model.Str(t.name));
  return "thread " + std::to_string(tid);
}

// The (at most 3) library calls or OS waits covering the most of the gap, 1% of it at least.
template <typename Key, typename Value>
void AddTop(const TraceModel& model, const std::map<Key, Value>& from, IdleGap& g) {
  std::vector<std::pair<int64_t, const std::pair<const Key, Value>*>> order;
  for (const auto& e : from) {
    if constexpr (std::is_same_v<Value, LibraryCover>)
      order.push_back({-e.second.cover.ns, &e});
    else
      order.push_back({-e.second.ns, &e});
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  if (order.empty()) return;
  if constexpr (std::is_same_v<Value, LibraryCover>) {
    // As for the app's ranges: a call nested in another (cuBLASLt's heuristic query inside cublasSgemm) names
    // the cause better when it covers at least 90% of what the outer one covers.
    size_t best = 0;
    for (size_t i = 1; i < order.size(); ++i)
      if (-double(order[i].first) * 10 >= -double(order[0].first) * 9 &&
          order[i].second->second.cover.depth > order[best].second->second.cover.depth)
        best = i;
    std::rotate(order.begin(), order.begin() + best, order.begin() + best + 1);
  }
  for (size_t i = 0; i < order.size() && i < 3; ++i) {
    const int64_t ns = -order[i].first;
    if (double(ns) * 100 < double(g.end_ns) - double(g.start_ns)) break;
    GapActivity a{};
    a.overlap_ns = ns;
    if constexpr (std::is_same_v<Value, LibraryCover>) {
      a.name = model.Str(order[i].second->first);
      a.source = model.Str(order[i].second->second.domain);
    } else {
      a.name = model.Str(order[i].second->first.first);
      a.source = std::string(kOsWaitDomain);
      a.thread = ThreadLabel(model, order[i].second->first.second);
    }
    g.activity.push_back(std::move(a));
  }
}

// What an OS wait usually means for a loop that feeds a GPU.
std::string OsWaitAdvice(std::string_view call) {
  if (Contains(call, "sleep")) return "a sleep in the loop: remove it or make it conditional";
  if (call == "read" || Contains(call, "recv") || Contains(call, "poll") || Contains(call, "select") ||
      Contains(call, "epoll"))
    return "waiting for I/O (files, sockets, pipes: data loading or a remote peer): prefetch, more "
           "DataLoader workers, faster storage";
  if (call == "waitpid" || call == "wait") return "waiting for a child process to exit";
  return "waiting on another thread (a lock, a queue, the GIL, a DataLoader worker): see what that thread "
         "does meanwhile";
}

// The rows of the timeline-pattern table in docs/user-guide.md, applied to one gap.
std::string Diagnose(const IdleGap& g) {
  const double gap = double(g.end_ns - g.start_ns);
  std::map<Stall, int64_t> by_kind;
  std::map<Stall, std::string> names;  // the calls of each kind, most overlap first
  const GapActivity* top_range = nullptr;
  const GapActivity* top_library = nullptr;
  const GapActivity* top_wait = nullptr;
  for (const auto& a : g.activity) {
    // The first of each kind is the one that names the cause (AddTop's order).
    if (a.os_wait()) {
      if (!top_wait) top_wait = &a;
      continue;
    }
    if (a.library()) {
      if (!top_library) top_library = &a;
      continue;
    }
    if (!a.api) {
      if (!top_range) top_range = &a;
      continue;
    }
    const Stall k = StallOf(a.name);
    by_kind[k] += a.overlap_ns;
    names[k] += (names[k].empty() ? "" : ", ") + a.name;
  }
  Stall worst = Stall::kNone;
  for (const auto& [k, ns] : by_kind)
    if (worst == Stall::kNone || ns > by_kind[worst]) worst = k;
  if (worst != Stall::kNone && double(by_kind[worst]) >= 0.3 * gap) {
    const std::string& n = names[worst];
    switch (worst) {
      case Stall::kSync:
        return "the CPU waited in " + n +
               " while the GPU had nothing queued: launch the next work before synchronizing, or remove the "
               "sync from the loop";
      case Stall::kAlloc:
        return "memory allocation in the hot path (" + n +
               "): allocate once up front or use a caching allocator";
      case Stall::kSyncCopy:
        return "a synchronous copy (" + n +
               ") blocks the CPU: pinned memory with cudaMemcpyAsync on a stream";
      case Stall::kLaunch:
        return "launch overhead: the CPU issues kernels slower than the GPU runs them (fuse kernels, "
               "CUDA Graphs, torch.compile)";
      default:
        return "the CPU was inside " + n;
    }
  }
  char pct[16];
  if (top_wait && double(top_wait->overlap_ns) >= 0.5 * gap) {
    std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * double(top_wait->overlap_ns) / gap);
    return std::string(pct) + " of the gap in OS wait " + top_wait->name + " on thread " + top_wait->thread +
           ": " + OsWaitAdvice(top_wait->name);
  }
  if (top_library && double(top_library->overlap_ns) >= 0.5 * gap) {
    std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * double(top_library->overlap_ns) / gap);
    return std::string(pct) + " of the gap inside " + top_library->source + " call " + top_library->name +
           " with no GPU work queued: library set-up on the hot path (handle creation, algorithm heuristics, "
           "plan building, workspace allocation): do it once before the loop (warm-up iterations, cached "
           "plans; torch.backends.cudnn.benchmark keeps convolution plans)";
  }
  if (top_range && double(top_range->overlap_ns) >= 0.5 * gap)
    return "host work inside '" + top_range->name +
           "' without GPU work queued: overlap it with the GPU (more DataLoader workers, prefetching, a copy "
           "stream)";
  // Sampled stacks name what the calls and ranges cannot: where the feeding threads were in Python.
  if (!g.cpu.hot.empty() && g.cpu.hot[0].share >= 0.3) {
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * g.cpu.hot[0].share);
    const std::string where = std::string(pct) + " of CPU samples in " + g.cpu.hot[0].path;
    if (top_range && double(top_range->overlap_ns) >= 0.5 * gap)
      return "host work inside '" + top_range->name + "' (" + where +
             ") without GPU work queued: overlap it "
             "with the GPU (more DataLoader workers, prefetching, a copy stream)";
    return "host-side work: " + where + "; nothing was queued on the GPU meanwhile";
  }
  if (g.activity.empty())
    return "no CUDA call or annotated range covers it: host-side work (Python, data loading) that is not "
           "recorded; NVTX ranges around the loop's phases would name it";
  const GapActivity& largest = *std::max_element(
      g.activity.begin(), g.activity.end(),
      [](const GapActivity& x, const GapActivity& y) { return x.overlap_ns < y.overlap_ns; });
  std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * double(largest.overlap_ns) / gap);
  return "no single cause: the CPU spent " + std::string(pct) + " in " + largest.name +
         " and the rest between recorded calls (Python, framework overhead); if this repeats every step, the "
         "loop is CPU-bound: CUDA Graphs, torch.compile, fewer and larger kernels";
}

}  // namespace

std::vector<NameSummary> SummarizeLibraryCalls(const TraceModel& model) {
  DomainClasses domains;
  std::map<std::string, NameStats> by_name;
  int64_t all = 0;
  for (const Track& t : model.tracks) {
    if (t.kind != TrackKind::kThreadRanges) continue;
    for (uint32_t d = 0; d < t.lane_count; ++d) {
      const Lane& lane = model.lanes[t.first_lane + d];
      for (uint32_t i = 0; i < lane.size(); ++i) {
        const uint32_t ref = lane.ref[i];
        if (EventKind(ref >> kRefKindShift) != EventKind::kNvtx ||
            (ref & kRefPayloadMask) >= model.nvtx.size())
          continue;
        const StringId domain = model.nvtx[ref & kRefPayloadMask].domain;
        const RangeClass c = domains.Of(model, domain);
        if (c == RangeClass::kApp) continue;
        const std::string key =
            (c == RangeClass::kOsWait ? std::string("OS wait") : std::string(model.Str(domain))) + ": " +
            std::string(model.Str(lane.name[i]));
        by_name[key].Add(lane.start[i], lane.Duration(i), 0);
        all += lane.Duration(i);
      }
    }
  }
  std::vector<NameSummary> rows;
  for (const auto& [name, st] : by_name) {
    rows.push_back(SummaryRow(name, st, all));
  }
  SortByTotal(&rows);
  return rows;
}

bool GapActivity::os_wait() const {
  return source == kOsWaitDomain;
}
const char* GapActivity::kind() const {
  return api ? "api" : os_wait() ? "os_wait" : library() ? "library" : "range";
}
std::string GapActivity::label() const {
  return api ? "API" : os_wait() ? "OS wait" : library() ? source : "range";
}

std::vector<IdleGap> ExplainIdleGaps(const TraceModel& model, size_t top_n, int64_t min_gap_ns) {
  std::vector<IdleGap> gaps;
  for (const auto& d : model.device_summaries)
    for (const auto& [a, b] : d.largest_gaps)
      if (b - a >= min_gap_ns) gaps.push_back({d.device_id, d.name, a, b, {}, {}});
  std::sort(gaps.begin(), gaps.end(), [](const IdleGap& x, const IdleGap& y) {
    const int64_t dx = x.end_ns - x.start_ns, dy = y.end_ns - y.start_ns;
    if (dx != dy) return dx > dy;
    return std::tie(x.start_ns, x.device_id) < std::tie(y.start_ns, y.device_id);
  });
  if (gaps.size() > top_n) gaps.resize(top_n);
  DomainClasses domains;
  for (IdleGap& g : gaps) {
    // The processes that put work on this device: their threads are the ones that failed to feed it.
    std::vector<uint32_t> pids;
    for (const Track& t : model.tracks)
      if (t.kind == TrackKind::kGpuStream && t.device_id == g.device_id) pids.push_back(t.pid);
    std::map<StringId, Cover> api, ranges;
    std::map<StringId, LibraryCover> libraries;
    std::map<std::pair<StringId, uint32_t>, Cover> waits;  // (call, tid)
    // (pid, tid) of the threads that fed the GPU around this gap: a CUDA call within kFeedWindowNs of it. A
    // thread that launches at other times (PyTorch's autograd workers during the forward pass) idles in a
    // wait that is not the gap's cause.
    constexpr int64_t kFeedWindowNs = 10'000'000;
    std::vector<std::pair<uint32_t, uint32_t>> api_threads;
    for (const Track& t : model.tracks)
      if (t.kind == TrackKind::kThreadApi && t.lane_count > 0 &&
          HasStartIn(model.lanes[t.first_lane], g.start_ns - kFeedWindowNs, g.end_ns + kFeedWindowNs))
        api_threads.push_back({t.pid, t.tid});
    for (const Track& t : model.tracks) {
      if (std::find(pids.begin(), pids.end(), t.pid) == pids.end()) continue;
      if (t.kind == TrackKind::kThreadApi && t.lane_count > 0) {
        AddOverlaps(model, model.lanes[t.first_lane], 0, g.start_ns, g.end_ns, &api);  // top-level calls only
      } else if (t.kind == TrackKind::kThreadRanges) {
        const bool feeds_gpu =
            std::find(api_threads.begin(), api_threads.end(), std::pair{t.pid, t.tid}) != api_threads.end();
        for (uint32_t d = 0; d < t.lane_count; ++d)
          AddRangeOverlaps(model, model.lanes[t.first_lane + d], d, g.start_ns, g.end_ns, t.tid, feeds_gpu,
                           &domains, &ranges, &libraries, &waits);
      }
    }
    AddTop(model, libraries, g);
    AddTop(model, waits, g);
    for (const auto& [from, is_api] : {std::pair{&api, true}, std::pair{&ranges, false}}) {
      std::vector<std::tuple<int64_t, int64_t, StringId>> order;  // (-ns, -depth, name): ascending sort
      for (const auto& [name, c] : *from) order.push_back({-c.ns, -int64_t(c.depth), name});
      std::sort(order.begin(), order.end());
      // A range nested in another covers a little less of the gap than its parent (the gap starts before the
      // push): the innermost one covering at least 90% of what the top one covers names the cause better.
      if (!is_api && !order.empty()) {
        size_t best = 0;
        for (size_t i = 1; i < order.size(); ++i)
          if (-double(std::get<0>(order[i])) * 10 >= -double(std::get<0>(order[0])) * 9 &&  // no overflow
              std::get<1>(order[i]) < std::get<1>(order[best]))
            best = i;
        std::rotate(order.begin(), order.begin() + best, order.begin() + best + 1);
      }
      // Under 1% of the gap is noise next to what the gap is about.
      for (size_t i = 0; i < order.size() && i < 3; ++i) {
        const int64_t ns = -std::get<0>(order[i]);
        if (double(ns) * 100 < double(g.end_ns) - double(g.start_ns)) break;
        g.activity.push_back({model.Str(std::get<2>(order[i])), is_api, ns});
      }
    }
    std::vector<ThreadKey>
        feeders;  // the threads that call CUDA: an idle pool thread says nothing of the gap
    for (const Track& t : model.tracks)
      if (t.kind == TrackKind::kThreadApi && std::find(pids.begin(), pids.end(), t.pid) != pids.end())
        feeders.push_back({t.pid, t.tid});
    g.cpu = ProfileCpuRange(model, g.start_ns, g.end_ns, pids, feeders);
    g.diagnosis =
        Diagnose(g);  // before sorting: the first range in `activity` is the one that names the cause
    std::stable_sort(g.activity.begin(), g.activity.end(),
                     [](const GapActivity& x, const GapActivity& y) { return x.overlap_ns > y.overlap_ns; });
  }
  return gaps;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Two traces compared
// -----------------------------------------------------------------------------------------------------------------

std::vector<NameChange> CompareSummaries(const std::vector<NameSummary>& before,
                                         const std::vector<NameSummary>& after) {
  std::map<std::string, NameChange> by_name;
  for (const auto& r : before) {
    NameChange& c = by_name[r.name];
    c.name = r.name;
    c.before = r;
  }
  for (const auto& r : after) {
    NameChange& c = by_name[r.name];
    c.name = r.name;
    c.after = r;
  }
  std::vector<NameChange> out;
  out.reserve(by_name.size());
  for (auto& [name, c] : by_name) out.push_back(std::move(c));
  std::sort(out.begin(), out.end(), [](const NameChange& a, const NameChange& b) {
    const int64_t da = std::llabs(a.delta_ns()), db = std::llabs(b.delta_ns());
    if (da != db) return da > db;
    return a.name < b.name;
  });
  return out;
}

double PercentChange(double a, double b) {
  if (a == 0) return b == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return (b - a) / a * 100.0;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Text helpers
// -----------------------------------------------------------------------------------------------------------------

std::string SignedPercent(double a, double b) {
  const double p = PercentChange(a, b);
  if (std::isinf(p)) return "new";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", p);
  return buf;
}

std::string SignedDuration(int64_t ns) {
  return (ns > 0 ? "+" : "") + FormatDuration(ns);
}

namespace {

std::string Percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * share);
  return buf;
}

std::string Clip(std::string name, size_t max = 100) {
  if (name.size() > max) name = name.substr(0, max - 3) + "...";
  return name;
}

void AppendSummaryTable(std::string& o, const char* title, const std::vector<NameSummary>& rows, size_t top_n,
                        SummaryOf what) {
  if (rows.empty()) return;
  const bool copies = what == SummaryOf::kCopies, nested = what == SummaryOf::kNvtx;
  o += std::string("\n") + title + "\n  ";
  if (!nested) o += PadColumn("Share", 7, true);
  o += PadColumn("Total", 12, true) + PadColumn("Count", 9, true) + PadColumn("Avg", 12, true) +
       PadColumn("Min", 12, true) + PadColumn("Max", 12, true);
  if (copies) o += PadColumn("Bytes", 12, true) + PadColumn("Bandwidth", 12, true);
  o += "  Name\n";
  for (size_t i = 0; i < rows.size() && i < top_n; ++i) {
    const auto& r = rows[i];
    o += "  ";
    if (!nested) o += PadColumn(Percent(r.share), 7, true);
    o += PadColumn(FormatDuration(r.total_ns), 12, true) + PadColumn(std::to_string(r.count), 9, true) +
         PadColumn(FormatDuration(int64_t(std::min(r.avg_ns + 0.5, 9.2e18))), 12, true) +
         PadColumn(FormatDuration(r.min_ns), 12, true) + PadColumn(FormatDuration(r.max_ns), 12, true);
    if (copies)
      o += PadColumn(FormatBytes(r.bytes), 12, true) +
           PadColumn(FormatBandwidth(r.bytes, r.total_ns), 12, true);
    o += "  " + Clip(r.name) + "\n";
  }
  if (rows.size() > top_n) o += "  ... " + std::to_string(rows.size() - top_n) + " more\n";
}

// What `ncu --print-summary per-kernel` gives: per profiled kernel, its counters' verdict and speed of light.
void AppendCountersTable(std::string& o, const ProfiledKernels& p, size_t top_n) {
  if (p.kernels.empty()) return;
  std::vector<size_t> order(p.kernels.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return p.kernel_total_time_s[a] > p.kernel_total_time_s[b]; });
  auto pct = [](const Quantity& q) { return q ? Percent(q.value / 100) : std::string("-"); };
  o += "\nKernel counters (" + std::to_string(p.launches.size()) +
       " profiled launches, merged per kernel; by total GPU time):\n  " + PadColumn("Profiled", 9, true) +
       PadColumn("Time/launch", 13, true) + PadColumn("Compute", 9, true) + PadColumn("Memory", 9, true) +
       "  " + PadColumn("Bottleneck", 14, false) + "  Name\n";
  for (size_t k = 0; k < order.size() && k < top_n; ++k) {
    const KernelAnalysis& a = p.kernels[order[k]];
    o += "  " + PadColumn(std::to_string(a.launches), 9, true) +
         PadColumn(a.time_s ? FormatDuration(std::round(a.time_s.value * 1e9)) : "-", 13, true) +
         PadColumn(pct(a.compute_pct), 9, true) + PadColumn(pct(a.memory_pct), 9, true) + "  " +
         PadColumn(BottleneckName(a.bottleneck), 14, false) + "  " + Clip(a.kernel_name) + "\n";
    o += "      -> " + a.verdict + "\n";
    if (!a.flags.empty())
      o += "      (" + std::to_string(a.flags.size()) + " values flagged as impossible)\n";
  }
  if (order.size() > top_n) o += "  ... " + std::to_string(order.size() - top_n) + " more\n";
}

void AppendChangeTable(std::string& o, const char* title, const std::vector<NameChange>& rows, size_t top_n) {
  if (rows.empty()) return;
  o += std::string("\n") + title + "\n  " + PadColumn("Before", 12, true) + PadColumn("After", 12, true) +
       PadColumn("Change", 12, true) + PadColumn("", 11, true) + PadColumn("Count", 15, true) +
       PadColumn("Avg before", 12, true) + PadColumn("Avg after", 12, true) + "  Name\n";
  size_t shown = 0;
  for (const auto& c : rows) {
    if (shown == top_n) break;
    ++shown;
    const std::string count = std::to_string(c.before.count) + " -> " + std::to_string(c.after.count);
    const std::string note = c.only_before() ? "  (only before)" : c.only_after() ? "  (only after)" : "";
    o += "  " + PadColumn(c.before.count ? FormatDuration(c.before.total_ns) : "-", 12, true) +
         PadColumn(c.after.count ? FormatDuration(c.after.total_ns) : "-", 12, true) +
         PadColumn(SignedDuration(c.delta_ns()), 12, true) +
         PadColumn(SignedPercent(double(c.before.total_ns), double(c.after.total_ns)), 11, true) +
         PadColumn(count, 15, true) +
         PadColumn(c.before.count ? FormatDuration(int64_t(c.before.avg_ns + 0.5)) : "-", 12, true) +
         PadColumn(c.after.count ? FormatDuration(int64_t(c.after.avg_ns + 0.5)) : "-", 12, true) + "  " +
         Clip(c.name) + note + "\n";
  }
  if (rows.size() > shown) o += "  ... " + std::to_string(rows.size() - shown) + " more\n";
}

uint64_t CountOf(const std::vector<NameSummary>& rows) {
  uint64_t n = 0;
  for (const auto& r : rows) n += r.count;
  return n;
}

}  // namespace

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Stats report
// -----------------------------------------------------------------------------------------------------------------

std::string StatsReport(const TraceModel& model, size_t top_n) {
  std::string o;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "Format: %s\nEvents: %" PRIu64 " on %zu tracks, %" PRIu64 " counter samples\n",
                SourceFormatName(model.format), model.event_count, model.tracks.size(), model.sample_count);
  o += buf;
  o += "Duration: " + FormatDuration(model.span_ns()) + "\n";
  auto losses = LossSummary(model);
  if (!losses.empty()) {
    o += "\nData loss and warnings:\n";
    for (const auto& l : losses) {
      std::snprintf(buf, sizeof buf, "  %-10s %-28s %10" PRIu64 "  ", SeverityName(l.severity),
                    l.name.c_str(), l.count);
      o += buf + l.detail + "\n";
    }
  }
  if (!model.device_summaries.empty()) {
    o += "\nGPU activity:\n";
    o += "  " + PadColumn("Device", 28, false) + PadColumn("Active span", 14, true) +
         PadColumn("Busy", 14, true) + PadColumn("Idle", 14, true) + PadColumn("Idle %", 9, true) +
         PadColumn("Kernels", 11, true) + PadColumn("Memcpy", 9, true) + PadColumn("Memset", 9, true) + "\n";
    for (const auto& d : model.device_summaries) {
      o += "  " + PadColumn(d.name, 28, false) + PadColumn(FormatDuration(d.span_ns()), 14, true) +
           PadColumn(FormatDuration(d.busy_ns), 14, true) + PadColumn(FormatDuration(d.idle_ns()), 14, true) +
           PadColumn(Percent(d.idle_share()), 9, true) + PadColumn(std::to_string(d.kernel_count), 11, true) +
           PadColumn(std::to_string(d.memcpy_count), 9, true) +
           PadColumn(std::to_string(d.memset_count), 9, true) + "\n";
      if (!d.largest_gaps.empty())
        o += "    largest idle gap: " + FormatDuration(d.largest_gaps[0].second - d.largest_gaps[0].first) +
             " at " + FormatTimestamp(model, d.largest_gaps[0].first) + "\n";
    }
  }
  const auto gaps = ExplainIdleGaps(model, std::min<size_t>(top_n, 5));
  if (!gaps.empty()) {
    o += "\nLargest GPU idle gaps, and what the CPU did meanwhile:\n";
    for (const auto& g : gaps) {
      o += "  " + FormatDuration(g.end_ns - g.start_ns) + " idle on " + g.device + " at " +
           FormatTimestamp(model, g.start_ns) + "\n";
      for (const auto& a : g.activity)
        o += "      " + PadColumn(Percent(double(a.overlap_ns) / double(g.end_ns - g.start_ns)), 7, true) +
             "  " + PadColumn(a.label(), 8, false) +
             Clip(a.os_wait() ? a.name + " (" + a.thread + ")" : a.name, 90) + "\n";
      if (g.cpu.samples > 0) {
        o += "      CPU samples (" + std::to_string(g.cpu.samples) + " on " + std::to_string(g.cpu.threads) +
             (g.cpu.threads == 1 ? " thread" : " threads") +
             (g.cpu.python_samples ? ", " + std::to_string(g.cpu.python_samples) + " in Python"
                                   : std::string()) +
             "):\n";
        for (const HotFrame& h : g.cpu.hot)
          o += "      " + PadColumn(Percent(h.share), 7, true) + "  " + (h.python ? "py   " : "native ") +
               Clip(h.path, 110) + "\n";
        if (g.cpu.not_unwound)
          o += "      " + PadColumn(Percent(double(g.cpu.not_unwound) / double(g.cpu.samples)), 7, true) +
               "  not unwound\n";
      }
      o += "      -> " + g.diagnosis + "\n";
    }
  }
  AppendSummaryTable(o, "Kernels (by total GPU time):", SummarizeByName(model, SummaryOf::kKernels), top_n,
                     SummaryOf::kKernels);
  AppendCountersTable(o, AnalyzeProfiledKernels(model), top_n);
  AppendSummaryTable(o, "Memory copies and sets (by total GPU time):",
                     SummarizeByName(model, SummaryOf::kCopies), top_n, SummaryOf::kCopies);
  AppendSummaryTable(o, "CUDA API calls (by total CPU time; calls made inside other calls not counted):",
                     SummarizeByName(model, SummaryOf::kApi), top_n, SummaryOf::kApi);
  AppendSummaryTable(o, "NVTX ranges and host ops (by total time; nested ranges overlap):",
                     SummarizeByName(model, SummaryOf::kNvtx), top_n, SummaryOf::kNvtx);
  AppendSummaryTable(o, "Library calls and OS runtime waits (by total time; also among the NVTX ranges):",
                     SummarizeLibraryCalls(model), top_n, SummaryOf::kNvtx);
  return o;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Diff report
// -----------------------------------------------------------------------------------------------------------------

namespace {
// Merged multi-rank traces compared rank by rank: whose GPU work grew, and who waits more at collectives.
void AppendRankTable(std::string& o, const std::vector<RankKernelTime>& before,
                     const std::vector<RankKernelTime>& after) {
  if (before.empty() && after.empty()) return;
  std::map<int32_t, std::pair<const RankKernelTime*, const RankKernelTime*>> ranks;
  for (const auto& r : before) ranks[r.rank].first = &r;
  for (const auto& r : after) ranks[r.rank].second = &r;
  o += "\nPer rank (kernel time on its GPUs; waiting = its NCCL kernels waiting for later ranks):\n  " +
       PadColumn("Rank", 8, false) + PadColumn("Kernels before", 16, true) + PadColumn("after", 12, true) +
       PadColumn("change", 11, true) + PadColumn("Waiting before", 16, true) + PadColumn("after", 12, true) +
       "\n";
  for (const auto& [rank, pair] : ranks) {
    const int64_t ka = pair.first ? pair.first->kernel_ns : 0, kb = pair.second ? pair.second->kernel_ns : 0;
    o += "  " + PadColumn(std::to_string(rank), 8, false) +
         PadColumn(pair.first ? FormatDuration(ka) : "-", 16, true) +
         PadColumn(pair.second ? FormatDuration(kb) : "-", 12, true) +
         PadColumn(SignedPercent(double(ka), double(kb)), 11, true) +
         PadColumn(pair.first ? FormatDuration(pair.first->wait_ns) : "-", 16, true) +
         PadColumn(pair.second ? FormatDuration(pair.second->wait_ns) : "-", 12, true) + "\n";
  }
}
}  // namespace

std::string DiffReport(const TraceModel& before, const std::string& before_label, const TraceModel& after,
                       const std::string& after_label, size_t top_n) {
  std::string o;
  auto header = [&](const char* which, const TraceModel& m, const std::string& label) {
    char buf[128];
    std::snprintf(buf, sizeof buf, " (%s, %" PRIu64 " events, %s)", SourceFormatName(m.format), m.event_count,
                  FormatDuration(m.span_ns()).c_str());
    o += std::string(which) + label + buf + (HasDataLoss(m) ? "  [loaded with losses]" : "") + "\n";
  };
  header("Before: ", before, before_label);
  header("After:  ", after, after_label);

  // Devices pair by device id: the same program on the same machine numbers them the same way.
  std::map<uint32_t, std::pair<const DeviceSummary*, const DeviceSummary*>> devices;
  for (const auto& d : before.device_summaries) devices[d.device_id].first = &d;
  for (const auto& d : after.device_summaries) devices[d.device_id].second = &d;
  if (!devices.empty()) {
    o += "\nGPU busy time:\n  " + PadColumn("Device", 28, false) + PadColumn("Before", 12, true) +
         PadColumn("After", 12, true) + PadColumn("Change", 12, true) + PadColumn("", 11, true) +
         PadColumn("Idle before", 13, true) + PadColumn("Idle after", 12, true) + "\n";
    for (const auto& [id, pair] : devices) {
      const auto* a = pair.first;
      const auto* b = pair.second;
      const int64_t busy_a = a ? a->busy_ns : 0, busy_b = b ? b->busy_ns : 0;
      o += "  " + PadColumn((b ? b : a)->name, 28, false) +
           PadColumn(a ? FormatDuration(busy_a) : "-", 12, true) +
           PadColumn(b ? FormatDuration(busy_b) : "-", 12, true) +
           PadColumn(SignedDuration(busy_b - busy_a), 12, true) +
           PadColumn(SignedPercent(double(busy_a), double(busy_b)), 11, true) +
           PadColumn(a ? Percent(a->idle_share()) : "-", 13, true) +
           PadColumn(b ? Percent(b->idle_share()) : "-", 12, true) + "\n";
    }
  }

  const auto kernels_a = SummarizeByName(before, SummaryOf::kKernels);
  const auto kernels_b = SummarizeByName(after, SummaryOf::kKernels);
  const int64_t total_a = TotalNs(kernels_a), total_b = TotalNs(kernels_b);
  o += "\nTotal kernel time: " + FormatDuration(total_a) + " -> " + FormatDuration(total_b) + " (" +
       SignedPercent(double(total_a), double(total_b)) + "), kernels " + std::to_string(CountOf(kernels_a)) +
       " -> " + std::to_string(CountOf(kernels_b)) + "\n";
  AppendChangeTable(
      o, "Kernels (largest changes of total GPU time first):", CompareSummaries(kernels_a, kernels_b), top_n);
  AppendChangeTable(o, "Memory copies and sets:",
                    CompareSummaries(SummarizeByName(before, SummaryOf::kCopies),
                                     SummarizeByName(after, SummaryOf::kCopies)),
                    top_n);
  AppendRankTable(o, KernelTimeByRank(before), KernelTimeByRank(after));
  AppendChangeTable(
      o, "CUDA API calls (CPU time):",
      CompareSummaries(SummarizeByName(before, SummaryOf::kApi), SummarizeByName(after, SummaryOf::kApi)),
      top_n);
  return o;
}

}  // namespace gt::viewer
