// [SECTION] index
//  - scan: one pass over an input, keeping processes, metadata and NCCL kernel ends
//  - hosts: which inputs share a clock, and the reference
//  - alignment: wall-clock anchors, then a robust fit of matched collective ends
//  - job checks: different jobs, duplicated or missing ranks, ranks that ended early, damaged files
//  - feeding and reporting
#include "gt/viewer/merge.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "gt/model.h"
#include "gt/trace_data.h"
#include "gt/viewer/builder.h"

namespace gt::viewer {
namespace {

// ---- [SECTION] scan
// ------------------------------------------------------------------------------------------

struct CollectiveEnd {
  uint32_t pid;
  std::string key;  // kernel name + '#' + ordinal of that name in its process, by start time
  int64_t start, end;
};

struct ScanSink : TraceSink {
  TraceMetadata metadata;
  std::vector<std::string> strings{""};
  std::vector<ProcessRecord> raw_processes;
  std::map<uint32_t, ProcessRecord> processes;  // by pid, once Finish() ran
  std::vector<CollectiveEnd> collectives;
  std::unordered_map<StringId, int8_t> is_nccl;  // name id -> NCCL kernel?
  std::set<uint32_t> device_ids;
  uint64_t events = 0;

  const std::string& Str(StringId id) const {
    static const std::string kEmpty;
    return id < strings.size() ? strings[id] : kEmpty;
  }
  void OnMetadata(const TraceMetadata& m) override { metadata.MergeFrom(m); }
  void OnStrings(StringId first, std::span<const std::string_view> s) override {
    if (strings.size() < size_t(first) + s.size()) strings.resize(size_t(first) + s.size());
    for (size_t i = 0; i < s.size(); ++i) strings[first + i].assign(s[i]);
  }
  void OnProcesses(std::span<const ProcessRecord> r) override {
    raw_processes.insert(raw_processes.end(), r.begin(), r.end());
  }
  void Finish() {  // after the read: one record per pid; collectives keyed
    CollapseProcesses(raw_processes);
    for (const ProcessRecord& p : raw_processes) processes.emplace(p.pid, p);
    raw_processes.clear();
    // Ordinals count by start time: CUPTI delivers kernels of different streams (DDP's bucket all-reduces and
    // the main thread's small ones share a kernel name) in buffer order, which differs from rank to rank.
    std::stable_sort(collectives.begin(), collectives.end(),
                     [](const CollectiveEnd& a, const CollectiveEnd& b) {
                       return std::tie(a.pid, a.key, a.start) < std::tie(b.pid, b.key, b.start);
                     });
    uint32_t ordinal = 0, last_pid = 0;
    std::string last_name;
    for (CollectiveEnd& c : collectives) {
      ordinal = c.pid == last_pid && c.key == last_name ? ordinal + 1 : 0;
      last_pid = c.pid, last_name = c.key;
      c.key += "#" + std::to_string(ordinal);
    }
  }
  void OnKernels(std::span<const KernelRecord> r) override {
    events += r.size();
    uint32_t last_device = kNone;
    for (const KernelRecord& k : r) {
      if (k.device_id != last_device) device_ids.insert(last_device = k.device_id);
      auto [it, fresh] = is_nccl.try_emplace(k.name, 0);
      if (fresh) it->second = Str(k.name).rfind("nccl", 0) == 0 ? 1 : 0;
      if (!it->second) continue;
      collectives.push_back({k.pid, Str(k.name), k.start, k.end});  // the ordinal comes in Finish()
    }
  }
  void OnDevices(std::span<const DeviceRecord> r) override {
    for (const DeviceRecord& d : r) device_ids.insert(d.device_id);
  }
  void OnMemcpys(std::span<const MemcpyRecord> r) override { events += r.size(); }
  void OnMemsets(std::span<const MemsetRecord> r) override { events += r.size(); }
  void OnApiCalls(std::span<const ApiCallRecord> r) override { events += r.size(); }
  void OnNvtx(std::span<const NvtxRecord> r) override { events += r.size(); }
  void OnSyncs(std::span<const SyncRecord> r) override { events += r.size(); }
  void OnMemory(std::span<const MemoryRecord> r) override { events += r.size(); }
  void OnOverheads(std::span<const OverheadRecord> r) override { events += r.size(); }
};

struct Scanned {
  ScanSink sink;
  std::string group;  // inputs with the same group share a clock
};

const std::string* Meta(const TraceMetadata& m, const char* key) {
  const std::string* v = m.Find(key);
  return v && !v->empty() ? v : nullptr;
}

// ---- [SECTION] alignment
// -------------------------------------------------------------------------------------

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double hi = v[mid];
  if (v.size() % 2) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + mid);
  return (lo + hi) / 2;
}

// trace -> wall offset of one host: the median over its anchors (each is one read of both clocks).
bool WallOffset(const TraceMetadata& m, double* offset) {
  std::vector<double> d;
  for (const ClockSync& c : m.clock_syncs) d.push_back(double(c.realtime_ns - c.trace_ns));
  if (d.empty()) return false;
  *offset = Median(std::move(d));
  return true;
}

struct Match {
  double x;        // the collective's end on the host being placed (its own clock)
  double d;        // the reference's end minus x
  double arrival;  // the reference's kernel start minus this host's (same clocks as d): who came last
};

// Drift needs a long baseline to be told apart from jitter.
constexpr double kMinDriftSpanNs = 1e9;
constexpr uint32_t kMinDriftPoints = 8;
constexpr uint32_t kThinEvidence = 3;
// Matched ends farther than this from the median (and than 6 MADs) are other communicators' collectives that
// happen to share a kernel name and ordinal, not clock error.
constexpr double kMinInlierWindowNs = 20e3;
// A rank whose kernel starts this much after its peer's arrived last. The rank arriving last ends its kernel
// later by a protocol latency of its own (measured on 2 H200s: about 1 us for DDP's LL all-reduces, 16-18 us
// for FSDP's 24 MiB all-gathers and reduce-scatters), which an offset fitted to ends takes for clock error
// unless the late rank changes from one collective to another.
constexpr double kClearlyLateNs = 50e3;

void FitCore(const std::vector<Match>& m, HostAlignment* h) {
  h->reference_last = h->placed_last = 0;
  std::vector<double> d;
  for (const Match& x : m) d.push_back(x.d);
  const double med = Median(d);
  std::vector<double> dev;
  for (double v : d) dev.push_back(std::fabs(v - med));
  const double window = std::max(kMinInlierWindowNs, 6 * 1.4826 * Median(dev));
  std::vector<Match> in;
  for (const Match& x : m)
    if (std::fabs(x.d - med) <= window) in.push_back(x);
  if (in.empty()) in = m;  // an even count whose two middle values lie far apart: keep them all
  h->collectives = uint32_t(in.size());
  h->rejected = uint32_t(m.size() - in.size());
  double xmin = in.front().x, xmax = in.front().x;
  for (const Match& x : in) xmin = std::min(xmin, x.x), xmax = std::max(xmax, x.x);
  double c = 0, b = 0, anchor = 0;
  if (in.size() >= kMinDriftPoints && xmax - xmin >= kMinDriftSpanNs) {
    for (const Match& x : in) anchor += x.x;
    anchor /= double(in.size());
    double mean_d = 0;
    for (const Match& x : in) mean_d += x.d;
    mean_d /= double(in.size());
    double sxx = 0, sxy = 0;
    for (const Match& x : in) sxx += (x.x - anchor) * (x.x - anchor), sxy += (x.x - anchor) * (x.d - mean_d);
    b = sxx > 0 ? sxy / sxx : 0;
    c = mean_d;
  } else {
    std::vector<double> ind;
    for (const Match& x : in) ind.push_back(x.d);
    c = Median(std::move(ind));
  }
  double ss = 0;
  for (const Match& x : in) {
    double r = x.d - (c + b * (x.x - anchor));
    ss += r * r;
  }
  h->residual_ns = std::sqrt(ss / double(in.size()));
  // Who arrived last at each inlier (the offset is small next to a late arrival, so the raw starts tell).
  for (const Match& x : in) {
    const double late = x.arrival - c;  // > 0: this host's rank started first, the reference's came last
    if (late > kClearlyLateNs)
      ++h->reference_last;
    else if (late < -kClearlyLateNs)
      ++h->placed_last;
  }
  h->clock = ClockMap{int64_t(std::llround(c)), b, int64_t(std::llround(anchor))};
  h->method = "collectives";
}

// The rank that arrives last ends later by its protocol latency, so ends lean toward whichever side came last
// more often. Where each side came clearly last at several collectives, each group's median residual from a
// first fit is taken out and the fit made again: the lean cancels (the latency is the same whichever rank is
// late). Lateness is read from each match's own start difference against its end difference, which holds
// under drift.
void FitCollectives(std::vector<Match> m, HostAlignment* h) {
  FitCore(m, h);
  std::vector<double> ref_last, placed_last;
  auto late = [](const Match& x) { return x.arrival - x.d; };  // > 0: the reference's rank came last
  auto residual = [h](const Match& x) {
    return x.d - double(h->clock.offset_ns) - h->clock.drift * (x.x - double(h->clock.anchor_ns));
  };
  for (const Match& x : m) {
    if (late(x) > kClearlyLateNs) ref_last.push_back(residual(x));
    if (late(x) < -kClearlyLateNs) placed_last.push_back(residual(x));
  }
  constexpr size_t kMinEachSide = 3;
  if (ref_last.size() < kMinEachSide || placed_last.size() < kMinEachSide) return;
  const double mr = Median(std::move(ref_last)), mp = Median(std::move(placed_last)), center = (mr + mp) / 2;
  for (Match& x : m) {
    if (late(x) > kClearlyLateNs) x.d -= mr - center;
    if (late(x) < -kClearlyLateNs) x.d -= mp - center;
  }
  FitCore(m, h);
}

// Ends of every collective the reference group and `group` both recorded, paired process by process.
std::vector<Match> MatchCollectives(const std::vector<Scanned>& scans, const std::vector<uint32_t>& ref,
                                    const std::vector<uint32_t>& group) {
  // key -> (start, end) on every reference process
  std::unordered_map<std::string, std::vector<std::pair<int64_t, int64_t>>> ref_ends;
  for (uint32_t i : ref)
    for (const CollectiveEnd& c : scans[i].sink.collectives) ref_ends[c.key].push_back({c.start, c.end});
  std::vector<Match> out;
  for (uint32_t i : group)
    for (const CollectiveEnd& c : scans[i].sink.collectives) {
      auto it = ref_ends.find(c.key);
      if (it == ref_ends.end()) continue;
      for (const auto& [s, e] : it->second)
        out.push_back({double(c.end), double(e - c.end), double(s - c.start)});
    }
  return out;
}

std::string RankList(const std::vector<int32_t>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size(); ++i) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(ranks[i]);
    if (j > i) s += "-" + std::to_string(ranks[j]);
    i = j;
  }
  return s.empty() ? "-" : s;
}

// Offsets keep microsecond resolution (gt::FormatDuration's three digits would hide an alignment's error) and
// always carry their sign.
std::string Ns(double ns) {
  char b[48];
  double a = std::fabs(ns);
  const char* sign = ns < 0 ? "-" : "+";
  if (a >= 1e9)
    std::snprintf(b, sizeof b, "%s%.6f s", sign, a / 1e9);
  else if (a >= 1e6)
    std::snprintf(b, sizeof b, "%s%.3f ms", sign, a / 1e6);
  else
    std::snprintf(b, sizeof b, "%s%.1f us", sign, a / 1e3);
  return b;
}

}  // namespace

uint32_t MergePlan::usable_inputs() const {
  uint32_t n = 0;
  for (const auto& i : inputs) n += i.usable;
  return n;
}

StatusOr<MergePlan> PlanMerge(std::span<const MergeInput> inputs, const MergeOptions& options) {
  if (inputs.empty()) return InvalidArgument("nothing to merge: no input traces");
  MergePlan plan;
  std::vector<Scanned> scans(inputs.size());
  plan.inputs.resize(inputs.size());
  plan.transforms.resize(inputs.size());

  // ---- scan
  for (size_t i = 0; i < inputs.size(); ++i) {
    MergeInputInfo& info = plan.inputs[i];
    info.name = inputs[i].name;
    if (!LooksLikeGtrace(inputs[i].bytes)) {
      info.error =
          "not a .gtrace file (merge takes .gtrace files; JSON traces open in the viewer one at a time)";
      plan.warnings.push_back(info.name + ": left out: " + info.error);
      continue;
    }
    ScanSink& s = scans[i].sink;
    auto report = ReadTrace(inputs[i].bytes, s);
    if (!report.ok()) {
      info.error = report.status().message();
      plan.warnings.push_back(info.name + ": left out: " + info.error);
      continue;
    }
    s.Finish();
    info.report = *report;
    info.metadata = s.metadata;
    info.usable = true;
    info.events = s.events;
    info.collectives = uint32_t(s.collectives.size());
    info.processes = uint32_t(s.processes.size());
    if (const auto* v = Meta(s.metadata, "host")) info.host = *v;
    if (const auto* v = Meta(s.metadata, "boot_id")) info.boot_id = *v;
    std::set<std::string> boots, jobs;
    std::set<int32_t> ranks;
    for (const auto& [pid, p] : s.processes) {
      if (p.boot_id) boots.insert(s.Str(p.boot_id));
      if (p.job) jobs.insert(s.Str(p.job));
      if (p.rank >= 0) ranks.insert(p.rank);
      if (info.host.empty() && p.host) info.host = s.Str(p.host);
    }
    if (info.boot_id.empty() && boots.size() == 1) info.boot_id = *boots.begin();
    if (jobs.size() == 1) info.job = *jobs.begin();
    info.ranks.assign(ranks.begin(), ranks.end());
    if (!report->clean())
      plan.warnings.push_back(info.name + ": damaged or truncated (" + std::to_string(report->chunks_lost) +
                              " chunks lost" + (report->truncated ? ", truncated" : "") +
                              "): merged what could be read");
    // ---- hosts: one clock per boot; an input that already holds several boots keeps its own placement.
    if (options.align == AlignMode::kCollectives || boots.size() > 1)
      scans[i].group = "input:" + std::to_string(i);
    else if (!info.boot_id.empty())
      scans[i].group = "boot:" + info.boot_id;
    else if (!info.host.empty())
      scans[i].group = "host:" + info.host;
    else
      scans[i].group = "input:" + std::to_string(i);
    plan.transforms[i].fill_host = info.host;
    plan.transforms[i].fill_boot_id = info.boot_id;
  }
  if (plan.usable_inputs() == 0)
    return InvalidArgument("nothing to merge: no input is a readable .gtrace (" + plan.warnings.front() +
                           ")");

  // Hosts in input order; the reference is the one with rank 0, else the first.
  std::map<std::string, size_t> host_of_group;
  std::vector<uint32_t> host_of_input(inputs.size(), kNone);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!plan.inputs[i].usable) continue;
    auto [it, fresh] = host_of_group.try_emplace(scans[i].group, plan.hosts.size());
    if (fresh) {
      HostAlignment h;
      h.host = plan.inputs[i].host.empty() ? plan.inputs[i].name : plan.inputs[i].host;
      h.boot_id = plan.inputs[i].boot_id;
      plan.hosts.push_back(h);
    }
    HostAlignment& h = plan.hosts[it->second];
    h.inputs.push_back(uint32_t(i));
    h.ranks.insert(h.ranks.end(), plan.inputs[i].ranks.begin(), plan.inputs[i].ranks.end());
    host_of_input[i] = uint32_t(it->second);
  }
  size_t ref = 0;
  for (size_t h = 0; h < plan.hosts.size(); ++h) {
    std::sort(plan.hosts[h].ranks.begin(), plan.hosts[h].ranks.end());
    if (!plan.hosts[h].ranks.empty() && plan.hosts[h].ranks.front() == 0 &&
        !(plan.hosts[ref].ranks.size() && plan.hosts[ref].ranks.front() == 0))
      ref = h;
  }

  // ---- alignment
  auto wall_of = [&](const HostAlignment& h, double* off) {
    TraceMetadata all;
    for (uint32_t i : h.inputs)
      all.clock_syncs.insert(all.clock_syncs.end(), scans[i].sink.metadata.clock_syncs.begin(),
                             scans[i].sink.metadata.clock_syncs.end());
    return WallOffset(all, off);
  };
  double ref_wall = 0;
  const bool ref_has_wall = wall_of(plan.hosts[ref], &ref_wall);
  for (size_t h = 0; h < plan.hosts.size(); ++h) {
    HostAlignment& host = plan.hosts[h];
    if (h == ref) {
      host.method = "reference";
      continue;
    }
    double wall = 0;
    host.has_wall = ref_has_wall && wall_of(host, &wall);
    if (host.has_wall) host.wall_offset_ns = int64_t(std::llround(wall - ref_wall));
    if (options.align == AlignMode::kNone) {
      host.method = "none";
      continue;
    }
    if (options.align != AlignMode::kWallClock) {
      std::vector<Match> m = MatchCollectives(scans, plan.hosts[ref].inputs, host.inputs);
      if (!m.empty()) FitCollectives(std::move(m), &host);
    }
    if (host.method == "collectives") {
      if (host.collectives < kThinEvidence)
        plan.warnings.push_back("host " + host.host + ": placed by only " + std::to_string(host.collectives) +
                                " matched collective(s): thin evidence, check the offset");
      if (host.rejected > host.collectives)
        plan.warnings.push_back("host " + host.host + ": " + std::to_string(host.rejected) + " of " +
                                std::to_string(host.rejected + host.collectives) +
                                " matched collectives disagree with the fit (ranks in other communicators?)");
      if (host.collectives >= kThinEvidence &&
          std::min(host.reference_last, host.placed_last) * 10 < host.reference_last + host.placed_last &&
          std::max(host.reference_last, host.placed_last) * 2 > host.collectives)
        plan.warnings.push_back(
            "host " + host.host + ": the same side arrived last at " +
            std::to_string(std::max(host.reference_last, host.placed_last)) + " of " +
            std::to_string(host.collectives) +
            " matched collectives; the late rank's kernel ends later by NCCL's own latency, which this fit "
            "cannot tell from clock offset (expect up to ~20 us of error)");
      if (host.has_wall && std::fabs(double(host.clock.offset_ns - host.wall_offset_ns)) > 50e6)
        plan.warnings.push_back("host " + host.host + ": collectives and wall clock disagree by " +
                                Ns(double(host.clock.offset_ns - host.wall_offset_ns)) +
                                " (is NTP running there?); the collectives win");
      continue;
    }
    if (host.has_wall) {
      host.method = "wall clock";
      host.clock = ClockMap{host.wall_offset_ns, 0, 0};
      if (options.align != AlignMode::kWallClock)
        plan.warnings.push_back("host " + host.host +
                                ": no NCCL collective matched the reference; placed by wall clock only "
                                "(milliseconds of error)");
    } else {
      host.method = "none";
      plan.warnings.push_back(
          "host " + host.host +
          ": neither wall-clock anchors nor matching collectives; its clock is as recorded");
    }
  }

  // ---- device ids: each host after the first starts at the next multiple of 100 past the devices before it,
  // so its GPUs stay apart in the viewer and its ids still read as "host's GPU 3" (103, 203, ...).
  uint32_t next_device = 0;
  for (size_t h = 0; h < plan.hosts.size(); ++h) {
    const uint32_t base = h == 0 ? 0 : std::max(100u, (next_device + 99) / 100 * 100);
    uint32_t top = 0;
    for (uint32_t i : plan.hosts[h].inputs) {
      plan.transforms[i].device_base = base;
      for (uint32_t d : scans[i].sink.device_ids) top = std::max(top, d + 1);
    }
    next_device = std::max(next_device, base + top);
  }

  // ---- process ids: the reference keeps its own; a later host's pid that is taken moves up by 2^22 steps
  // (above Linux's largest pid), so it stays recognizable.
  std::set<uint32_t> taken;
  for (size_t h = 0; h < plan.hosts.size(); ++h) {
    std::set<uint32_t> mine;
    for (uint32_t i : plan.hosts[h].inputs)
      for (const auto& [pid, p] : scans[i].sink.processes) mine.insert(pid);
    for (uint32_t i : plan.hosts[h].inputs) {
      plan.transforms[i].clock = plan.hosts[h].clock;
      for (const auto& [pid, p] : scans[i].sink.processes) {
        if (!taken.count(pid)) continue;
        uint32_t moved = pid;
        while (taken.count(moved) || mine.count(moved)) moved += 1u << 22;
        plan.transforms[i].pids[pid] = moved;
      }
    }
    for (uint32_t i : plan.hosts[h].inputs)
      for (const auto& [pid, p] : scans[i].sink.processes) taken.insert(plan.transforms[i].Pid(pid));
  }

  // ---- [SECTION] job checks
  std::set<std::string> jobs;
  std::map<int32_t, std::vector<std::string>> rank_inputs;
  int32_t world = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!plan.inputs[i].usable) continue;
    if (!plan.inputs[i].job.empty()) jobs.insert(plan.inputs[i].job);
    for (int32_t r : plan.inputs[i].ranks) rank_inputs[r].push_back(plan.inputs[i].name);
    for (const auto& [pid, p] : scans[i].sink.processes) {
      world = std::max(world, p.world_size);
      const bool failed = p.exit_kind == uint8_t(ExitKind::kSignaled) ||
                          (p.exit_kind == uint8_t(ExitKind::kExited) && p.exit_code != 0);
      if (failed && p.rank >= 0) {
        uint32_t n = 0;
        for (const CollectiveEnd& c : scans[i].sink.collectives) n += c.pid == pid;
        plan.warnings.push_back("rank " + std::to_string(p.rank) + " (" + plan.inputs[i].name + ", pid " +
                                std::to_string(pid) + ") ended with " +
                                (p.exit_kind == uint8_t(ExitKind::kSignaled) ? "signal " : "exit status ") +
                                std::to_string(p.exit_code) + " after " + std::to_string(n) +
                                " NCCL kernels; its timeline stops there");
      }
    }
  }
  if (jobs.size() > 1) {
    std::string list;
    for (const auto& j : jobs) list += (list.empty() ? "" : ", ") + j;
    plan.warnings.push_back("inputs come from different jobs (" + list +
                            "): merged anyway; collectives of different jobs never match");
  }
  for (const auto& [rank, names] : rank_inputs)
    if (names.size() > 1) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      plan.warnings.push_back("rank " + std::to_string(rank) + " appears in " + std::to_string(names.size()) +
                              " inputs (" + list + "): a rank recorded twice, or files of different runs");
    }
  if (world > 0) {
    std::vector<int32_t> missing;
    for (int32_t r = 0; r < world; ++r)
      if (!rank_inputs.count(r)) missing.push_back(r);
    if (!missing.empty())
      plan.warnings.push_back((missing.size() == 1 ? "rank " : "ranks ") + RankList(missing) + " of " +
                              std::to_string(world) + (missing.size() == 1 ? " is" : " are") +
                              " missing from the inputs");
  }
  return plan;
}

// ---- [SECTION] feeding and reporting
// ---------------------------------------------------------------------------

StatusOr<StringId> FeedMergeInput(const MergePlan& plan, size_t index, std::span<const uint8_t> bytes,
                                  TraceSink& sink, StringId string_base, StringInterner* interner) {
  GT_ASSERT(index < plan.inputs.size());
  if (!plan.inputs[index].usable) return string_base;
  RecordTransform t = plan.transforms[index];
  t.string_base = string_base;
  t.interner = interner;
  TransformSink moved(sink, t);
  auto report = ReadTrace(bytes, moved);
  if (!report.ok()) return report.status();
  return moved.max_string_id();
}

TraceMetadata MergedMetadata(const MergePlan& plan) {
  TraceMetadata m;
  for (const auto& h : plan.hosts)
    if (h.method == "reference") m.entries = plan.inputs[h.inputs.front()].metadata.entries;
  auto set = [&](const std::string& k, const std::string& v) {
    for (auto& e : m.entries)
      if (e.first == k) {
        e.second = v;
        return;
      }
    m.entries.emplace_back(k, v);
  };
  std::string hosts;
  for (const auto& h : plan.hosts) hosts += (hosts.empty() ? "" : ",") + h.host;
  set("merged_inputs", std::to_string(plan.usable_inputs()));
  set("hosts", hosts);
  for (const auto& h : plan.hosts) {
    char b[256];
    std::snprintf(b, sizeof b, "%s offset_ns=%lld drift_ppm=%.3f residual_ns=%.0f collectives=%u ranks=%s",
                  h.method.c_str(), (long long)h.clock.offset_ns, h.clock.drift * 1e6, h.residual_ns,
                  h.collectives, RankList(h.ranks).c_str());
    set("alignment:" + h.host, b);
  }
  for (size_t i = 0; i < plan.inputs.size(); ++i)
    for (const ClockSync& c : plan.inputs[i].metadata.clock_syncs)
      m.clock_syncs.push_back({c.realtime_ns, plan.transforms[i].clock.Apply(c.trace_ns)});
  return m;
}

StatusOr<std::unique_ptr<TraceModel>> LoadMergedTraces(std::span<const MergeInput> inputs,
                                                       const MergeOptions& options, MergePlan* plan_out) {
  auto planned = PlanMerge(inputs, options);
  if (!planned.ok()) return planned.status();
  const MergePlan& plan = *planned;
  ModelBuilder builder;
  builder.SetFormat(SourceFormat::kGtrace);
  // One string table for all inputs: the model groups by string id (kernel table, search, collectives
  // matched by kernel name across ranks), so the same name must be one id, as in a merged file.
  StringInterner strings;
  StringId base = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto next = FeedMergeInput(plan, i, inputs[i].bytes, builder, base, &strings);
    // PlanMerge read every usable input once already: a failure here is a bug or a changed buffer, and a
    // half-fed input would leave dangling string ids, so it fails the whole load.
    if (!next.ok()) return Status(next.status().code(), inputs[i].name + ": " + next.status().message());
    base = *next;
  }
  // Last over the inputs' own (later wins per key): the merged metadata says what was merged and how.
  builder.OnMetadata(MergedMetadata(plan));
  // One report over all inputs, so the Data loss panel counts every input's damaged chunks and truncation.
  LoadReport report;
  for (const MergeInputInfo& in : plan.inputs) {
    if (!in.usable) continue;
    const LoadReport& r = in.report;
    report.version_major = std::max(report.version_major, r.version_major);
    report.version_minor = std::max(report.version_minor, r.version_minor);
    report.segments += r.segments;
    report.chunks_ok += r.chunks_ok;
    report.chunks_lost += r.chunks_lost;
    report.chunks_unknown += r.chunks_unknown;
    report.records += r.records;
    report.bytes_lost += r.bytes_lost;
    report.truncated = report.truncated || r.truncated;
    for (const std::string& p : r.problems)
      if (report.problems.size() < 100) report.problems.push_back(in.name + ": " + p);
  }
  for (const MergeInput& in : inputs) report.bytes_total += in.bytes.size();
  builder.SetReport(report);
  // Losses are keyed by name: one entry per warning keeps each message whole. An input left out loses all its
  // events, which is an error; the other warnings (missing ranks, clocks placed by wall clock only) are not.
  for (size_t i = 0; i < plan.inputs.size(); ++i)
    if (!plan.inputs[i].usable)
      builder.AddLoss("merge: " + plan.inputs[i].name + " left out", Severity::kError, 1,
                      plan.inputs[i].error.empty() ? "not a readable .gtrace" : plan.inputs[i].error);
  for (size_t i = 0; i < plan.warnings.size(); ++i) {
    const std::string& w = plan.warnings[i];
    if (w.find(": left out") != std::string::npos) continue;  // said above, as an error
    builder.AddLoss("merge warning " + std::to_string(i + 1), Severity::kWarning, 1, w);
  }
  auto model = builder.Finish();
  if (plan_out) *plan_out = std::move(*planned);
  return model;
}

std::string FormatMergeReport(const MergePlan& plan) {
  std::string o;
  char b[512];
  std::snprintf(b, sizeof b, "%-20s %-8s %-10s %-12s %14s %11s %10s %s\n", "host", "boot", "ranks", "method",
                "offset", "drift", "residual", "collectives");
  o += b;
  for (const auto& h : plan.hosts) {
    const bool fitted = h.method == "collectives";
    std::snprintf(b, sizeof b, "%-20s %-8s %-10s %-12s %14s %11s %10s %s\n", h.host.substr(0, 20).c_str(),
                  h.boot_id.substr(0, 8).c_str(), RankList(h.ranks).c_str(), h.method.c_str(),
                  h.method == "reference" ? "0" : Ns(double(h.clock.offset_ns)).c_str(),
                  fitted && h.clock.drift != 0
                      ? (std::to_string(h.clock.drift * 1e6).substr(0, 6) + " ppm").c_str()
                      : "-",
                  fitted ? Ns(h.residual_ns).substr(1).c_str() : "-",
                  fitted ? (std::to_string(h.collectives) +
                            (h.rejected ? " (" + std::to_string(h.rejected) + " rejected)" : ""))
                               .c_str()
                         : "-");
    o += b;
    if (fitted && h.has_wall) {
      std::snprintf(b, sizeof b, "%-20s wall clock said %s; collectives moved it by %s\n", "",
                    Ns(double(h.wall_offset_ns)).c_str(),
                    Ns(double(h.clock.offset_ns - h.wall_offset_ns)).c_str());
      o += b;
    }
  }
  for (const auto& w : plan.warnings) o += "warning: " + w + "\n";
  return o;
}

}  // namespace gt::viewer
