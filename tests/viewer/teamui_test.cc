// Notes in view state, duration histograms, regex search and the track filter, CSV (issue 19, "teamui").
#include <catch2/catch.hpp>
#include <chrono>

#include "gt/viewer/csv.h"
#include "gt/viewer/filter.h"
#include "gt/viewer/histogram.h"
#include "gt/viewer/notes.h"
#include "gt/viewer/regex.h"
#include "gt/viewer/view_state.h"
#include "synth_trace.h"
#include "test_util.h"

using namespace gt;
using namespace gt::viewer;

namespace {

// One process, GPU 0: kernel "gemm" on stream 7 with the given durations (back to back, 10 ns apart), one
// "relu" on stream 8.
std::unique_ptr<TraceModel> Gemms(const std::vector<int64_t>& durations) {
  ModelBuilder b;
  test::FeedStrings(b, {"", "app", "NVIDIA H200", "gemm", "relu"});
  test::FeedProcessAndGpu(b);
  std::vector<KernelRecord> k;
  int64_t t = 1000;
  uint32_t corr = 1;
  for (int64_t d : durations) {
    KernelRecord r;
    r.start = t, r.end = t + d, r.stream_id = 7, r.correlation_id = corr++, r.name = 3;
    k.push_back(r);
    t += d + 10;
  }
  KernelRecord r;
  r.start = 500, r.end = 600, r.stream_id = 8, r.correlation_id = corr, r.name = 4;
  k.push_back(r);
  for (auto& x : k) x.pid = 1, x.device_id = 0, x.context_id = 1;
  b.OnKernels(k);
  return b.Finish();
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Notes in the view state
// ---------------------------------------------------------------------------------------------------------------

TEST_CASE("notes round-trip through the view state, URL-safe", "[notes]") {
  auto m = test::SmallTrace();
  ViewState v;
  v.t0 = 10, v.t1 = 900;
  EventId relu = test::FindByName(*m, "relu");
  v.notes.push_back({m->Start(relu), m->End(relu), m->EventKey(relu), "this all-reduce waits for rank 1"});
  v.notes.push_back({100, 400, "", "<script>alert(1)</script> & = \"quoted\" * ! ~ é\nline 2"});
  std::string s = v.Serialize();
  for (unsigned char c : s)
    REQUIRE((std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == '~' || c == '!' || c == '*'));
  CHECK(s.find("!n1*") != std::string::npos);
  auto p = ViewState::Parse(s);
  REQUIRE(p.ok());
  CHECK(p.value() == v);
  // The anchored event resolves in a fresh load of the same trace; the range note has no event.
  auto m2 = test::SmallTrace();
  CHECK(ResolveNote(*m2, p.value().notes[0]) == relu);
  CHECK_FALSE(ResolveNote(*m2, p.value().notes[1]).valid());
}

TEST_CASE("links from before notes keep opening, a view without notes serializes as before", "[notes]") {
  // Written by the viewer before notes existed (v1, 8 fields): a share link's &view= value.
  const std::string old_link =
      "v1!250!1600!p10~2Ft11~2Franges!g0~2Fp10~2Fc1~2Fs8!g0~2Fp10~2Fc1~2Fs7~2F0~2F0!kernels!gemm";
  auto p = ViewState::Parse(old_link);
  REQUIRE(p.ok());
  CHECK(p.value().t0 == 250);
  CHECK(p.value().selected == "g0/p10/c1/s7/0/0");
  CHECK(p.value().search == "gemm");
  CHECK(p.value().notes.empty());
  CHECK(p.value().Serialize() == old_link);
}

TEST_CASE("notes are bounded: over a limit is refused with a message, never cut", "[notes]") {
  std::vector<Note> notes;
  CHECK_FALSE(CheckNewNote(notes, {0, 1, "", ""}).ok());
  CHECK_FALSE(CheckNewNote(notes, {5, 1, "", "backwards"}).ok());
  Note big{0, 1, "", std::string(kMaxNoteBytes + 1, 'x')};
  Status st = CheckNewNote(notes, big);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("1001 bytes") != std::string::npos);
  CHECK(CheckNewNote(notes, {0, 1, "", std::string(kMaxNoteBytes, 'x')}).ok());
  // Total: 8 notes of 1000 bytes fit, a 9th byte more does not.
  for (int i = 0; i < 8; ++i) notes.push_back({0, 1, "", std::string(kMaxNoteBytes, 'x')});
  st = CheckNewNote(notes, {0, 1, "", "y"});
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("8001") != std::string::npos);
  notes.assign(kMaxNotes, Note{0, 1, "", "n"});
  CHECK_FALSE(CheckNewNote(notes, {0, 1, "", "one more"}).ok());
  // A hand-made link over the limits is refused as a whole.
  ViewState v;
  v.notes.assign(kMaxNotes, Note{0, 1, "", "n"});
  std::string s = v.Serialize();
  CHECK(ViewState::Parse(s).ok());
  s += "*0*1**n";
  CHECK_FALSE(ViewState::Parse(s).ok());
  for (std::string bad : {"v1!0!1!!!!!!n1", "v1!0!1!!!!!!n1*0*1*", "v1!0!1!!!!!!n1*0*1**",
                          "v1!0!1!!!!!!n1*a*1**x", "v1!0!1!!!!!!n2*0*1**x", "v1!0!1!!!!!!n1*0*1**x!n1*0*1**y",
                          "v1!0!1!!!!!!x9", "v1!0!1!!!!!!n1*5*1**x", "v1!0!1!!!!!!n1*0*1**~00"}) {
    INFO(bad);
    CHECK_FALSE(ViewState::Parse(bad).ok());
  }
  CHECK(ViewState::Parse("v1!0!1!!!!!!n1*0*1**x").ok());
  // Random notes sections: whatever parses re-serializes to a string that parses to the same state.
  gt::synth::Rng rng(19);
  const std::string alphabet = "n1*0123456789-~ABab!";
  for (int i = 0; i < 20000; ++i) {
    std::string s = "v1!0!1!!!!!!n1*";
    int n = rng.Below(30);
    for (int k = 0; k < n; ++k) s += alphabet[rng.Below(uint32_t(alphabet.size()))];
    auto r = ViewState::Parse(s);
    if (!r.ok()) continue;
    auto again = ViewState::Parse(r.value().Serialize());
    REQUIRE(again.ok());
    CHECK(again.value() == r.value());
  }
}

TEST_CASE("a note whose event is gone is orphaned, not dropped, a moved index is found by time", "[notes]") {
  auto m = Gemms({100, 200, 300});
  EventId second = KernelInstances(*m, FindString(*m, "gemm"))[1];
  Note n{m->Start(second), m->End(second), m->EventKey(second), "slow one"};
  CHECK(ResolveNote(*m, n) == second);
  Note moved = n;
  moved.event = n.event.substr(0, n.event.rfind('/')) + "/0";  // wrong index, same track and time
  CHECK(ResolveNote(*m, moved) == second);
  Note gone = n;
  gone.t0 += 1;  // no event starts there
  CHECK_FALSE(ResolveNote(*m, gone).valid());
  Note other_trace = n;
  other_trace.event = "g9/p1/c1/s7/0/1";
  CHECK_FALSE(ResolveNote(*m, other_trace).valid());
  CsvTable t = NotesCsv(m.get(), {n, gone});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0][3].value == "gemm");
  CHECK(t.rows[0][4].value == "event");
  CHECK(t.rows[1][4].value == "orphaned");
  CHECK(t.rows[1][5].value == "slow one");
}

// ---------------------------------------------------------------------------------------------------------------
// Duration histogram
// ---------------------------------------------------------------------------------------------------------------

TEST_CASE("duration histogram: log bins, counts, percentiles (golden)", "[histogram]") {
  std::vector<int64_t> d = {1000, 1100, 2000, 5000, 10000, 100000};
  DurationHistogram h = BuildDurationHistogram(d, 4);
  std::vector<std::tuple<int64_t, int64_t, uint64_t>> got;
  for (auto& b : h.bins) got.emplace_back(b.lo_ns, b.hi_ns, b.count);
  std::vector<std::tuple<int64_t, int64_t, uint64_t>> want = {
      {1000, 1778, 2},   {1778, 3162, 1},   {3162, 5623, 1},    {5623, 10000, 0},   {10000, 17783, 1},
      {17783, 31623, 0}, {31623, 56234, 0}, {56234, 100000, 0}, {100000, 177828, 1}};
  CHECK(got == want);
  CHECK(h.total == 6);
  CHECK(h.min_ns == 1000);
  CHECK(h.max_ns == 100000);
  CHECK(h.p50_ns == 2000);
  CHECK(h.p90_ns == 100000);
  CHECK(h.BinOf(1777) == 0);
  CHECK(h.BinOf(1778) == 1);
  CHECK(h.BinOf(999) == -1);
  CHECK(h.BinOf(177828) == -1);
  // Zero durations get [0, 1); empty input no bins.
  DurationHistogram z = BuildDurationHistogram(std::vector<int64_t>{0, 0, 1}, 5);
  REQUIRE(z.bins.size() == 2);
  CHECK(z.bins[0].lo_ns == 0);
  CHECK(z.bins[0].count == 2);
  CHECK(z.bins[1].count == 1);
  CHECK(BuildDurationHistogram(std::vector<int64_t>{}, 5).bins.empty());
  // Every value lands in exactly one bin, for many bin widths and magnitudes.
  std::vector<int64_t> many;
  for (int64_t v = 1; v < 4'000'000'000'000LL; v = v * 3 + 1) many.push_back(v);
  for (int b = 1; b <= 20; ++b) {
    DurationHistogram m = BuildDurationHistogram(many, b);
    uint64_t sum = 0;
    for (size_t i = 0; i < m.bins.size(); ++i) {
      sum += m.bins[i].count;
      if (i) CHECK(m.bins[i].lo_ns == m.bins[i - 1].hi_ns);
    }
    CHECK(sum == many.size());
    for (int64_t v : many) CHECK(m.BinOf(v) >= 0);
  }
  CHECK(Percentile(std::vector<int64_t>{1, 2, 3, 4}, 50) == 2);
  CHECK(Percentile(std::vector<int64_t>{1, 2, 3, 4}, 75) == 3);
  CHECK(Percentile(std::vector<int64_t>{1, 2, 3, 4}, 100) == 4);
}

TEST_CASE("kernel histogram from the model and the instances of a bin", "[histogram]") {
  auto m = Gemms({1000, 1200, 50000, 1100});
  StringId gemm = FindString(*m, "gemm");
  DurationHistogram h = KernelDurationHistogram(*m, gemm, 4);
  CHECK(h.total == 4);
  int slow = h.BinOf(50000);
  REQUIRE(slow >= 0);
  auto in = InstancesInBin(*m, gemm, h, slow);
  REQUIRE(in.size() == 1);
  CHECK(m->End(in[0]) - m->Start(in[0]) == 50000);
  CHECK(InstancesInBin(*m, gemm, h, h.BinOf(1000)).size() == 3);
  CHECK(InstancesInBin(*m, gemm, h, 99).empty());
  CsvTable t = HistogramCsv(h);
  CHECK(t.rows.size() == h.bins.size());
  CHECK(ToCsv(t).substr(0, 32) == "bin,lo_ns,hi_ns,count,share\r\n0,1");
}

// ---------------------------------------------------------------------------------------------------------------
// Regex search and the filter
// ---------------------------------------------------------------------------------------------------------------

TEST_CASE("regex: syntax, search semantics, case", "[regex]") {
  struct Case {
    const char* re;
    const char* s;
    bool match;
  };
  for (Case c : std::vector<Case>{{"gemm", "sm90_xmma_gemm_f16", true},
                                  {"^gemm", "sm90_gemm", false},
                                  {"^sm\\d+_", "sm90_gemm", true},
                                  {"relu$", "relu_bwd", false},
                                  {"(fwd|bwd)$", "relu_bwd", true},
                                  {"a{2,3}b", "xaab", true},
                                  {"a{3}b", "xaab", false},
                                  {"[^a-z]", "abc", false},
                                  {"[^a-z]", "abC", false},  // caseless: C is in a-z
                                  {"x.y", "x\ny", false},
                                  {"nccl(AllReduce|Broadcast)", "ncclDevKernel_AllReduce", false},
                                  {"nccl.*AllReduce", "ncclDevKernel_AllReduce_Sum", true},
                                  {"a|", "zzz", true},  // empty alternative matches anywhere
                                  {"\\(int\\)", "void f<(int)128>", true},
                                  {"x{", "x{", true},  // not a count: a literal
                                  {"(?:ab)+c", "ababc", true},
                                  {"[\\w.]+\\.py", "train.py", true}}) {
    INFO(c.re << " ~ " << c.s);
    auto r = Regex::Compile(c.re);
    REQUIRE(r.ok());
    CHECK(r->Search(c.s) == c.match);
  }
  auto cs = Regex::Compile("GEMM", true);
  REQUIRE(cs.ok());
  CHECK_FALSE(cs->Search("gemm"));
  CHECK(Regex::Compile("GEMM")->Search("gemm"));
}

TEST_CASE("regex: bad patterns are messages, hostile ones stay linear", "[regex]") {
  for (std::string bad : std::vector<std::string>{"(", ")", "a)", "[abc", "*a", "a**", "\\", "(?=x)", "\\1",
                                                  "a{5,2}", "a{1001}", "[z-a]", "\\bgemm", "[\\x41]", std::string(2000, 'a'),
                                                  std::string(100, '(') + std::string(100, ')')}) {
    INFO(bad.substr(0, 40));
    auto r = Regex::Compile(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().rfind("regex: ", 0) == 0);
  }
  CHECK_FALSE(Regex::Compile("(a{1000}){1000}").ok());  // expands past kMaxProgram
  // Catastrophic for a backtracker; here |subject| x |program| steps.
  auto r = Regex::Compile("(a*)*(a|aa)*(a+)+b");
  REQUIRE(r.ok());
  const std::string as(100000, 'a');
  auto t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(r->Search(as));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
}

TEST_CASE("regex search and the filter: non-matching tracks and events hide", "[regex][filter]") {
  auto m = test::SmallTrace();
  auto s = Search::MatchRegex(*m, "^(gemm|relu)$");
  REQUIRE(s.ok());
  CHECK(s->regex());
  CHECK(s->match_count() == 2);
  CHECK(s->matching_names() == 2);
  auto bad = Search::MatchRegex(*m, "gemm(");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("missing ')'") != std::string::npos);

  TrackFilter f = BuildTrackFilter(*m, *s);
  REQUIRE(f.active);
  std::vector<std::string> shown;
  for (TrackId t = 0; t < m->tracks.size(); ++t)
    if (f.ShowsTrack(t)) shown.push_back(m->tracks[t].name);
  CHECK(shown == std::vector<std::string>{"Stream 7", "Stream 8"});
  CHECK(f.visible_tracks == 2);
  // Stream 7 draws gemm, not the memcpy beside it.
  TrackId s7 = kNone;
  for (TrackId t = 0; t < m->tracks.size(); ++t)
    if (m->tracks[t].name == "Stream 7") s7 = t;
  REQUIRE(s7 != kNone);
  auto ev = MatchingEventsIn(*m, *s, m->tracks[s7].first_lane, 0, 5000, 100);
  REQUIRE(ev.size() == 1);
  CHECK(m->Str(m->lanes[m->tracks[s7].first_lane].name[ev[0]]) == "gemm");
  // The process's host tracks and the counter track are gone; their group too unless something shows.
  for (GroupId g = 0; g < m->groups.size(); ++g) {
    bool any = false;
    for (TrackId t : m->groups[g].tracks) any |= f.ShowsTrack(t);
    CHECK(f.ShowsGroup(g) == any);
  }
  // No match: everything hidden; empty search: filter off, everything shows.
  TrackFilter none = BuildTrackFilter(*m, *Search::MatchRegex(*m, "nomatch"));
  CHECK(none.active);
  CHECK(none.visible_tracks == 0);
  TrackFilter off = BuildTrackFilter(*m, Search());
  CHECK_FALSE(off.active);
  CHECK(off.ShowsTrack(0));
  // A plain substring search filters the same way.
  TrackFilter sub = BuildTrackFilter(*m, Search(*m, "cuda"));
  CHECK(sub.visible_tracks == 1);
}

// ---------------------------------------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------------------------------------

TEST_CASE("CSV: RFC 4180 quoting and formula-injection safety", "[csv]") {
  CHECK(CsvField("plain", true) == "plain");
  CHECK(CsvField("a,b", true) == "\"a,b\"");
  CHECK(CsvField("say \"hi\"", true) == "\"say \"\"hi\"\"\"");
  CHECK(CsvField("two\nlines", true) == "\"two\nlines\"");
  CHECK(CsvField("cr\r", true) == "\"cr\r\"");
  CHECK(CsvField("=SUM(A1:A9)", true) == "'=SUM(A1:A9)");
  CHECK(CsvField("+1", true) == "'+1");
  CHECK(CsvField("-cmd", true) == "'-cmd");
  CHECK(CsvField("@x", true) == "'@x");
  CHECK(CsvField("\tx", true) == "'\tx");
  CHECK(CsvField("=HYPERLINK(\"http://x\",\"y\")", true) == "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  CHECK(CsvField("-5", false) == "-5");  // a number stays a number
  CHECK(CsvField("", true) == "");
  CsvTable t{{"name", "n"}, {{{"a,b", true}, {"1", false}}, {{"=x", true}, {"-2", false}}}};
  CHECK(ToCsv(t) == "name,n\r\n\"a,b\",1\r\n'=x,-2\r\n");
}

TEST_CASE("CSV of the trace's tables (golden)", "[csv]") {
  auto m = test::SmallTrace();
  auto k = TraceTableCsv(*m, "kernels");
  REQUIRE(k.ok());
  CHECK(ToCsv(*k) ==
        "name,count,total_ns,avg_ns,min_ns,max_ns,share,first_ns,last_ns\r\n"
        "gemm,1,1000,1000,1000,1000,0.83333333333333337,250,1250\r\n"
        "relu,1,200,200,200,200,0.16666666666666666,1400,1600\r\n");
  auto api = TraceTableCsv(*m, "api");
  REQUIRE(api.ok());
  CHECK(api->header.size() == 8);
  CHECK(api->rows.size() == 2);  // cudaLaunchKernel (2), cudaMemcpyAsync; the driver call is under one
  CHECK(api->rows[0][0].value == "cudaLaunchKernel");
  CHECK(api->rows[0][1].value == "2");
  for (auto name : CsvTableNames()) {
    INFO(name);
    auto r = TraceTableCsv(*m, name, "gemm");
    CHECK(r.ok());
  }
  auto h = TraceTableCsv(*m, "histogram");
  REQUIRE_FALSE(h.ok());
  CHECK(h.status().message().find("kernel name") != std::string::npos);
  CHECK_FALSE(TraceTableCsv(*m, "histogram", "nosuch").ok());
  auto u = TraceTableCsv(*m, "bogus");
  REQUIRE_FALSE(u.ok());
  CHECK(u.status().message().find("tables: kernels") != std::string::npos);
  CsvTable loss = LossesCsv({{"chunk_lost", 2, 10, 3, "=cmd|' /C calc'!A0"}});
  CHECK(ToCsv(loss) == "name,severity,pid,count,detail\r\nchunk_lost,error,10,3,'=cmd|' /C calc'!A0\r\n");
}
