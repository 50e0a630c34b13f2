// Merging the traces of a distributed job: clocks recovered from collectives (known offsets, drift and jitter
// applied to simulated hosts), hosts of one boot left as they are, and bad inputs named without losing the
// rest.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "gt/trace_data.h"
#include "gt/viewer/collectives.h"
#include "gt/viewer/load.h"
#include "gt/viewer/merge.h"
#include "gt/writer.h"
#include "sim_job.h"

using namespace gt;
using namespace gt::viewer;
using namespace gt::simjob;

namespace {

// The spans point into `files`: keep it alive while the inputs are used.
std::vector<MergeInput> Inputs(const std::vector<std::string>& files) {
  std::vector<MergeInput> in;
  for (size_t i = 0; i < files.size(); ++i)
    in.push_back(
        {"rank" + std::to_string(i) + ".gtrace",
         std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(files[i].data()), files[i].size())});
  return in;
}

TraceData Merged(const MergePlan& plan, const std::vector<MergeInput>& in) {
  TraceData d;
  StringId base = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    auto next = FeedMergeInput(plan, i, in[i].bytes, d, base);
    REQUIRE(next.ok());
    base = *next;
  }
  return d;
}

// Largest distance between a merged collective end and its truth on the reference clock.
double WorstError(const TraceData& d, const SimHost& ref, const std::map<uint32_t, SimRank>& rank_of_pid) {
  double worst = 0;
  std::map<uint32_t, uint32_t> ordinal;
  for (const KernelRecord& k : d.kernels) {
    if (d.Str(k.name).rfind("nccl", 0) != 0) continue;
    const SimRank& r = rank_of_pid.at(k.pid);
    const uint32_t c = ordinal[k.pid]++;
    const double truth = double(ref.Local(TrueEnd(c, r) + Jitter(c, r)));
    worst = std::max(worst, std::fabs(double(k.end) - truth));
  }
  return worst;
}

const HostAlignment& HostNamed(const MergePlan& p, const std::string& name) {
  for (const auto& h : p.hosts)
    if (h.host == name) return h;
  FAIL("no host " << name);
  return p.hosts.front();
}

bool Warned(const MergePlan& p, const std::string& text) {
  for (const auto& w : p.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("merge: a known offset between two hosts is recovered from collectives within 5 us") {
  SimHost a{"node-a", "boot-a"}, b{"node-b", "boot-b", 1'234'567, 0, 2'000'000};  // NTP 2 ms off
  SimRank r0{0, 0}, r1{1, 0};
  r1.pid = 1000;  // the same pid on both hosts: the second must move
  std::vector<std::string> files{RankFile(a, {r0}), RankFile(b, {r1})};
  auto in = Inputs(files);
  auto plan = PlanMerge(in);
  REQUIRE(plan.ok());
  REQUIRE(plan->hosts.size() == 2);
  const HostAlignment& hb = HostNamed(*plan, "node-b");
  CHECK(hb.method == "collectives");
  CHECK(hb.collectives == 200);
  CHECK(std::fabs(double(hb.clock.offset_ns) + 1'234'567) < 5'000);
  CHECK(std::fabs(double(hb.wall_offset_ns) - (2'000'000 - 1'234'567)) < 1'000);  // what NTP alone said
  CHECK(HostNamed(*plan, "node-a").method == "reference");
  CHECK(plan->warnings.empty());

  TraceData d = Merged(*plan, in);
  REQUIRE(d.processes.size() == 2);
  const uint32_t moved = d.processes[1].pid;
  CHECK(moved == 1000 + (1u << 22));
  CHECK(d.Str(d.processes[1].host) == "node-b");
  CHECK(d.processes[1].rank == 1);
  CHECK(WorstError(d, a, {{1000, r0}, {moved, r1}}) < 5'000);
  CHECK(d.kernels.size() == 800);
  for (const KernelRecord& k : d.kernels) CHECK(k.device_id == (k.pid == moved ? 100u : 0u));

  SECTION("the viewer groups the merged trace host -> rank -> GPU") {
    std::string merged;
    auto w = TraceWriter::Create(MakeStringSink(&merged));
    REQUIRE(w.ok());
    for (size_t i = 0; i < in.size(); ++i) {
      TraceData one;
      REQUIRE(FeedMergeInput(*plan, i, in[i].bytes, one, 0).ok());
      REQUIRE(WriteTraceData(one, **w).ok());
    }
    (*w)->SetMetadata(MergedMetadata(*plan));
    REQUIRE((*w)->Finish().ok());
    auto m =
        LoadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(merged.data()), merged.size()));
    REQUIRE(m.ok());
    std::vector<std::string> names;
    for (const auto& g : (*m)->groups) names.push_back(g.name);
    REQUIRE(names.size() == 4);
    CHECK(names[0] == "python3 (pid 1000) · rank 0 · node-a");
    CHECK(names[1] == "python3 (pid 4195304) · rank 1 · node-b");
    CHECK(names[2] == "GPU 0 · node-a");
    CHECK(names[3] == "GPU 100 · node-b");
    const std::string* alignment = (*m)->metadata.Find("alignment:node-b");
    REQUIRE(alignment);
    CHECK(alignment->rfind("collectives offset_ns=-123", 0) == 0);

    // The viewer opens the files together through the same plan, without writing a merged file: the same
    // groups, names, events and metadata.
    MergePlan viewer_plan;
    auto together = LoadMergedTraces(in, {}, &viewer_plan);
    REQUIRE(together.ok());
    std::vector<std::string> together_names;
    for (const auto& g : (*together)->groups) together_names.push_back(g.name);
    CHECK(together_names == names);
    CHECK((*together)->lanes.size() == (*m)->lanes.size());
    CHECK((*together)->first_ns == (*m)->first_ns);
    CHECK((*together)->last_ns == (*m)->last_ns);
    CHECK((*together)->event_count == (*m)->event_count);
    REQUIRE((*together)->metadata.Find("alignment:node-b"));
    CHECK(*(*together)->metadata.Find("alignment:node-b") == *alignment);
    CHECK(viewer_plan.hosts.size() == 2);
    CHECK((*together)->losses.empty());
    // One string table, as in the merged file: the collective's name is one id, so ranks' collectives match.
    CHECK((*together)->strings.size() == (*m)->strings.size());
    CHECK(AnalyzeCollectives(**together).collectives.size() == AnalyzeCollectives(**m).collectives.size());
    CHECK(AnalyzeCollectives(**together).collectives.size() == 200);
  }
}

TEST_CASE("merge: the late rank's later end does not bias the fit when each side is late at times") {
  // On 2 H200s the rank that arrived last ended its kernel 1-18 us after the other. Here rank 0 is late at
  // every third collective and rank 1 at the others, each ending 16 us late: a median of the ends lands 16 us
  // off.
  SimHost a{"node-a", "boot-a"}, b{"node-b", "boot-b", 1'234'567, 0, 2'000'000};
  SimRank r0{0, 0}, r1{1, 0};
  for (SimRank* r : {&r0, &r1}) {
    r->straggler_of = [](uint32_t c) { return int32_t(c % 3 == 0 ? 0 : 1); };
    r->late_end_ns = 16'000;
    r->jitter_ns = 500;
    for (uint32_t c = 0; c < r->collectives; ++c) r->straggle[c] = 400'000;
  }
  std::vector<std::string> files{RankFile(a, {r0}), RankFile(b, {r1})};
  auto in = Inputs(files);
  auto plan = PlanMerge(in);
  REQUIRE(plan.ok());
  const HostAlignment& hb = HostNamed(*plan, "node-b");
  CHECK(hb.method == "collectives");
  CHECK(hb.reference_last > 50);
  CHECK(hb.placed_last > 100);
  INFO("offset " << hb.clock.offset_ns);
  CHECK(std::fabs(double(hb.clock.offset_ns) + 1'234'567) < 3'000);
}

TEST_CASE("merge: the viewer names an input it cannot merge and opens the rest") {
  SimHost a{"node-a", "boot-a"}, b{"node-b", "boot-b", 5'000'000};
  SimRank r0{0, 0}, r1{1, 0};
  r1.pid = 2000;
  std::vector<std::string> files{RankFile(a, {r0}), "{\"traceEvents\": []}", RankFile(b, {r1})};
  auto in = Inputs(files);
  MergePlan plan;
  auto m = LoadMergedTraces(in, {}, &plan);
  REQUIRE(m.ok());
  CHECK(Warned(plan, "rank1.gtrace: left out: not a .gtrace"));
  std::vector<std::string> names;
  for (const auto& g : (*m)->groups) names.push_back(g.name);
  REQUIRE(names.size() == 4);
  CHECK(names[0].find("rank 0 · node-a") != std::string::npos);
  CHECK(names[1].find("rank 1 · node-b") != std::string::npos);
  bool named = false;
  for (const LossStat& l : (*m)->losses)
    if (l.name == "merge: rank1.gtrace left out" && l.severity == uint8_t(Severity::kError) &&
        l.detail.find("not a .gtrace") != std::string::npos)
      named = true;
  CHECK(named);

  SECTION("nothing readable fails with the plan's message") {
    std::vector<std::string> junk{"junk", "{}"};
    auto none = LoadMergedTraces(Inputs(junk));
    REQUIRE_FALSE(none.ok());
    CHECK(none.status().message().find("no input is a readable .gtrace") != std::string::npos);
  }
}

TEST_CASE("merge: 4 hosts x 2 ranks with shifted clocks, drift and jitter") {
  std::vector<SimHost> hosts = {{"n0", "b0", 0, 0, 0},
                                {"n1", "b1", 3'700'000'000, 20e-6, -4'000'000},
                                {"n2", "b2", -812'345'678, -15e-6, 7'000'000},
                                {"n3", "b3", 42'000, 8e-6, 1'000'000}};
  std::vector<std::string> files;
  std::map<uint32_t, SimRank> by_pid;  // merged pid -> rank (pids are unique per host here)
  for (int h = 0; h < 4; ++h) {
    std::vector<SimRank> ranks;
    for (int l = 0; l < 2; ++l) {
      SimRank r;
      r.rank = 2 * h + l, r.local_rank = l, r.world = 8, r.pid = uint32_t(100 * h + l + 1);
      r.collectives = 2000, r.interval_ns = 30'000'000, r.jitter_ns = 2'000;  // 60 s of training
      ranks.push_back(r);
      by_pid[r.pid] = r;
    }
    files.push_back(RankFile(hosts[h], ranks));
  }
  auto in = Inputs(files);
  auto plan = PlanMerge(in);
  REQUIRE(plan.ok());
  REQUIRE(plan->hosts.size() == 4);
  for (int h = 1; h < 4; ++h) {
    const HostAlignment& a = HostNamed(*plan, hosts[h].name);
    CHECK(a.method == "collectives");
    CHECK(a.ranks == std::vector<int32_t>{2 * h, 2 * h + 1});
    CHECK(std::fabs(a.clock.drift + hosts[h].drift) < 1e-6);  // drift recovered to 1 ppm
    CHECK(a.residual_ns < 3'000);
  }
  // The simulated ranks arrive in rank order (30 us apart), so each host's ranks come after the reference's
  // at every collective: the fit says it cannot rule out NCCL's late-rank latency. No other warning.
  for (const std::string& w : plan->warnings)
    CHECK(w.find("the same side arrived last") != std::string::npos);
  TraceData d = Merged(*plan, in);
  CHECK(WorstError(d, hosts[0], by_pid) < 5'000);
  CHECK(FormatMergeReport(*plan).find("collectives") != std::string::npos);
}

TEST_CASE("merge: files of one boot share a clock and are merged as they are") {
  SimHost h{"node-a", "boot-a", 0, 0, 0};
  SimRank r0{0, 0}, r1{1, 1};
  r1.pid = 2000;
  // Ranks of one boot are never moved: their clocks are the same clock.
  std::vector<std::string> files{RankFile(h, {r0}), RankFile(h, {r1})};
  auto in = Inputs(files);
  auto plan = PlanMerge(in);
  REQUIRE(plan.ok());
  REQUIRE(plan->hosts.size() == 1);
  CHECK(plan->hosts[0].method == "reference");
  CHECK(plan->hosts[0].ranks == std::vector<int32_t>{0, 1});
  TraceData d = Merged(*plan, in);
  CHECK(WorstError(d, h, {{1000, r0}, {2000, r1}}) == 0);

  SECTION("--align collectives checks the alignment against the truth: about zero") {
    MergeOptions o;
    o.align = AlignMode::kCollectives;
    auto forced = PlanMerge(in, o);
    REQUIRE(forced.ok());
    REQUIRE(forced->hosts.size() == 2);
    CHECK(forced->hosts[1].method == "collectives");
    CHECK(std::fabs(double(forced->hosts[1].clock.offset_ns)) < 5'000);
  }
}

TEST_CASE("merge: bad inputs are named and everything else is merged") {
  SimHost a{"node-a", "boot-a"}, b{"node-b", "boot-b", 5'000'000};
  SimRank r0{0, 0, 4}, r1{1, 0, 4};
  r1.pid = 2000;
  std::string good0 = RankFile(a, {r0}), good1 = RankFile(b, {r1});

  SECTION("not a trace, and a truncated rank") {
    std::string junk = "{\"traceEvents\": []}";
    std::string cut = good1.substr(0, good1.size() * 2 / 3);
    std::vector<std::string> files{good0, junk, cut};
    auto in = Inputs(files);
    auto plan = PlanMerge(in);
    REQUIRE(plan.ok());
    CHECK_FALSE(plan->inputs[1].usable);
    CHECK(plan->inputs[2].usable);
    CHECK(Warned(*plan, "rank1.gtrace: left out: not a .gtrace"));
    CHECK(Warned(*plan, "rank2.gtrace: damaged or truncated"));
    CHECK(Warned(*plan, "ranks 2-3 of 4 are missing"));
    TraceData d = Merged(*plan, in);
    CHECK(d.processes.size() == 2);
    CHECK(d.kernels.size() > 400);
  }
  SECTION("nothing readable is an error, not an empty trace") {
    std::string junk = "junk";
    std::vector<std::string> files{junk, junk};
    auto plan = PlanMerge(Inputs(files));
    CHECK_FALSE(plan.ok());
    CHECK(plan.status().message().find("no input is a readable .gtrace") != std::string::npos);
  }
  SECTION("duplicated ranks, different jobs, a rank that crashed early") {
    SimRank dup = r1, other = r0, crashed = r1;
    dup.pid = 3000;
    other.job = "job-2", other.rank = 2, other.pid = 4000;
    crashed.collectives = 50, crashed.exit_kind = int(ExitKind::kSignaled), crashed.exit_code = 9;
    crashed.rank = 3, crashed.pid = 5000;
    std::vector<std::string> files{good0, good1, RankFile(b, {dup}), RankFile(a, {other}),
                                   RankFile(b, {crashed})};
    auto in = Inputs(files);
    auto plan = PlanMerge(in);
    REQUIRE(plan.ok());
    CHECK(Warned(*plan, "rank 1 appears in 2 inputs"));
    CHECK(Warned(*plan, "inputs come from different jobs (job-1, job-2)"));
    CHECK(Warned(*plan, "rank 3 (rank4.gtrace, pid 5000) ended with signal 9 after 50 NCCL kernels"));
  }
  SECTION("no collectives: wall clock, said so") {
    SimRank quiet = r1;
    quiet.collectives = 0;
    std::vector<std::string> files{good0, RankFile(b, {quiet})};
    auto in = Inputs(files);
    auto plan = PlanMerge(in);
    REQUIRE(plan.ok());
    CHECK(HostNamed(*plan, "node-b").method == "wall clock");
    CHECK(Warned(*plan, "placed by wall clock only"));
  }
}

TEST_CASE("merge: traces of format 1.0 read with the distributed fields at their defaults") {
  auto bytes = ReadFileBytes(std::string(GT_TESTS_DATA) + "/h200_nvtx.gtrace");
  REQUIRE(bytes.ok());
  TraceData d;
  auto report =
      ReadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), d);
  REQUIRE(report.ok());
  CHECK(report->version_minor == 0);
  REQUIRE_FALSE(d.processes.empty());
  for (const auto& p : d.processes) {
    CHECK(p.rank == -1);
    CHECK(p.local_rank == -1);
    CHECK(p.world_size == 0);
    CHECK(p.host == 0);
  }
  // Merged, its processes learn their host from the file's metadata.
  std::vector<MergeInput> in{
      {"old.gtrace",
       std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size())}};
  auto plan = PlanMerge(in);
  REQUIRE(plan.ok());
  TraceData m = Merged(*plan, in);
  REQUIRE(d.metadata.Find("host"));
  for (const auto& p : m.processes) CHECK(m.Str(p.host) == *d.metadata.Find("host"));
  CHECK(m.EventCount() == d.EventCount());
}
