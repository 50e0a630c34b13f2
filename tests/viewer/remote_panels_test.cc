// The panels of a remote trace beyond the timeline (issue 17), against the local queries on the same model:
// search (the server's what=search: count, matching names, the next / previous match stepped with a scan
// budget and resumed; the page's client stepping as Search::Next / Prev do, wrap-around included) and the
// idle gaps (what=gaps, computed at the index build, as ExplainIdleGaps).
#include <catch2/catch.hpp>
#include <deque>
#include <nlohmann/json.hpp>
#include <set>

#include "gt/viewer/builder.h"
#include "gt/viewer/filter.h"
#include "gt/viewer/index.h"
#include "gt/viewer/index_query.h"
#include "gt/viewer/json.h"
#include "gt/viewer/load.h"
#include "gt/viewer/remote.h"
#include "in_process_remote.h"
#include "synth_trace.h"

using namespace gt;
using namespace gt::viewer;
using nlohmann::json;

namespace {

std::unique_ptr<TraceModel> Synth(uint64_t events, uint64_t seed) {
  gt::synth::SynthOptions o;
  o.events = events;
  o.seed = seed;
  ModelBuilder b;
  gt::synth::GenerateSynthTrace(b, o);
  return b.Finish();
}

json Ask(const MappedIndex& index, const std::string& url, int want = 200) {
  auto [what, params] = SplitIndexUrl(url);
  const IndexAnswer a = AnswerIndexQuery(index, what, params);
  INFO(url << " -> " << a.status << " " << a.body.substr(0, 300));
  REQUIRE(a.status == want);
  return json::parse(a.body);
}

// The client's loop over one step: resumes until a hit, wraps once at the end (as RemoteTrace does).
EventId Step(const MappedIndex& index, const Search& s, bool forward, EventId from, int64_t t,
             uint64_t budget, int* requests) {
  bool wrapped = false;
  const TraceModel& m = index.model();
  for (*requests = 1; *requests < 100000; ++*requests) {
    const SearchStepResult r = IndexSearchStep(index, s, forward, t, from, budget);
    REQUIRE(r.status.ok());
    // A window is narrowed to what is left of the budget before it is read (one of a single ns is read
    // whole: a few events may start at the same ns).
    CHECK(r.examined <= budget + 8);
    if (r.hit.valid()) return r.hit;
    from = {};
    if (r.resume) {
      t = r.resume_t;
    } else {
      REQUIRE(r.at_end);
      if (wrapped) return {};
      wrapped = true;
      t = forward ? m.first_ns : m.last_ns + 1;
    }
  }
  FAIL("a step that never ends");
  return {};
}

std::string Url(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c)) {
      out += char(c);
    } else {
      char b[4];
      std::snprintf(b, sizeof b, "%%%02X", c);
      out += b;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("remote search: counts, names and steps equal the local Search", "[remote][search]") {
  auto m = Synth(120'000, 11);
  const std::vector<uint8_t> bytes = EncodeIndex(*m, {});
  auto opened = MappedIndex::FromBytes(bytes, {});
  REQUIRE(opened.ok());
  const MappedIndex& index = **opened;

  for (const char* needle : {"gemm_kernel_7<", "step 3", "cudaMemcpy", "GEMM_KERNEL_1", "no such name"}) {
    const Search local(*m, needle);
    const json a = Ask(index, std::string("search?q=") + Url(needle));
    INFO(needle);
    CHECK(a["count"].get<uint64_t>() == local.match_count());
    CHECK(a["names"].get<uint32_t>() == local.matching_names());
    std::set<StringId> ids;
    for (StringId id = 1; id < m->strings.size(); ++id)
      if (local.Matches(id) && m->name_counts[id]) ids.insert(id);
    CHECK(a["ids"].get<std::set<StringId>>() == ids);
    CHECK_FALSE(a["ids_truncated"].get<bool>());
    const Search remote = Search::FromMatches(needle, false, a["ids"].get<std::vector<StringId>>(),
                                              a["count"].get<uint64_t>(), a["names"].get<uint32_t>());
    for (StringId id = 0; id < m->strings.size(); ++id) CHECK(remote.Matches(id) == ids.count(id) > 0);
  }

  // Steps: the server's walk through the matches is Search::Next's and Prev's, from no event (the first
  // match), from a match, across the wrap-around; with the full budget and with a tiny one (resumes).
  for (const char* needle : {"gemm_kernel_7<", "step 3", "cudaMemcpy"}) {
    const Search local(*m, needle);
    REQUIRE(local.match_count() > 0);
    for (uint64_t budget : {kSearchScanBudget, uint64_t{64}}) {
      INFO(needle << " budget " << budget);
      for (bool forward : {true, false}) {
        EventId mine, theirs;
        int most_requests = 0;
        const size_t steps = std::min<uint64_t>(local.match_count() + 2, 60);
        for (size_t k = 0; k < steps; ++k) {
          const EventId want = forward ? local.Next(*m, theirs) : local.Prev(*m, theirs);
          int requests = 0;
          const int64_t t = mine.valid() ? m->Start(mine) : (forward ? m->first_ns : m->last_ns + 1);
          mine = Step(index, local, forward, mine, t, budget, &requests);
          most_requests = std::max(most_requests, requests);
          REQUIRE(want.valid());
          REQUIRE(mine == want);
          theirs = want;
        }
        if (budget == 64 && std::string(needle) == "step 3") CHECK(most_requests > 1);  // it resumed
      }
    }
  }
  // A rare name: the last match forward wraps to the first.
  {
    const Search local(*m, "step 3");
    EventId last = local.Prev(*m, {});
    int requests = 0;
    CHECK(Step(index, local, true, last, m->Start(last), 64, &requests) == local.Next(*m, {}));
    CHECK(requests > 1);
  }
}

TEST_CASE("remote search: the HTTP answer of a step, and clear errors", "[remote][search]") {
  auto m = Synth(30'000, 5);
  const std::vector<uint8_t> bytes = EncodeIndex(*m, {});
  auto opened = MappedIndex::FromBytes(bytes, {});
  REQUIRE(opened.ok());
  const MappedIndex& index = **opened;
  const Search local(*m, "gemm_kernel_3<");
  const EventId first = local.Next(*m, {});
  json a = Ask(index, "search?q=gemm_kernel_3%3C&dir=next&t=" + std::to_string(m->first_ns));
  REQUIRE(a["hit"].is_object());
  CHECK(a["hit"]["lane"] == first.lane);
  CHECK(a["hit"]["index"] == first.index);
  CHECK(a["hit"]["start"] == m->Start(first));
  CHECK(a["hit"]["end"] == m->End(first));
  CHECK(a["hit"]["key"] == m->EventKey(first));
  const EventId second = local.Next(*m, first);
  a = Ask(index, "search?q=gemm_kernel_3%3C&dir=next&t=" + std::to_string(m->Start(first)) +
                     "&lane=" + std::to_string(first.lane) + "&index=" + std::to_string(first.index));
  CHECK(a["hit"]["key"] == m->EventKey(second));
  // '+' is a space, as the server's HTTP layer decodes it; a regular expression.
  CHECK(Ask(index, "search?q=step+3")["count"] == Search(*m, "step 3").match_count());
  auto re = Search::MatchRegex(*m, "kernel_(1|2)<");
  REQUIRE(re.ok());
  CHECK(Ask(index, "search?q=kernel_%281%7C2%29%3C&regex=1")["count"] == re->match_count());
  // Errors.
  Ask(index, "search", 400);
  Ask(index, "search?q=", 400);
  Ask(index, "search?q=a%28&regex=1", 400);  // a bad pattern: the regex's reason
  Ask(index, "search?q=step&dir=sideways&t=0", 400);
  Ask(index, "search?q=step&dir=next", 400);  // no t
  Ask(index, "search?q=step&dir=next&t=0&lane=99999&index=0", 404);
  // Anywhere in int64 and past either end: an answer, at_end.
  CHECK(Ask(index, "search?q=step&dir=next&t=9223372036854775807")["at_end"] == true);
  CHECK(Ask(index, "search?q=step&dir=prev&t=-9223372036854775808")["at_end"] == true);
}

TEST_CASE("remote search: the page's client counts, highlights and steps as the local search",
          "[remote][search]") {
  auto m = Synth(60'000, 9);
  const std::vector<uint8_t> bytes = EncodeIndex(*m, {});
  auto opened = MappedIndex::FromBytes(bytes, {});
  REQUIRE(opened.ok());
  const MappedIndex& index = **opened;
  test::InProcessRemote client(index);
  RemoteTrace& r = client.r;
  auto pump = [&] { client.Pump(); };
  r.Start();
  pump();
  REQUIRE(r.state() == RemoteTrace::State::kReady);
  const std::string needle = "step 5 & more";  // nothing matches: '&' travels encoded
  r.SetSearch(needle, false);
  pump();
  REQUIRE(r.search().ready);
  CHECK(r.search().count == 0);
  r.SetSearch("step 5", false);
  r.SetSearch("step 5", false);  // unchanged: not asked again
  CHECK(client.queue.size() == 1);
  pump();
  const Search local(*m, "step 5");
  REQUIRE(r.search().ready);
  CHECK(r.search().count == local.match_count());
  // Steps forward through every match and once more (the wrap), then back.
  EventId at;
  for (uint64_t k = 0; k <= local.match_count(); ++k) {
    r.SearchStep(true, at, at.valid() ? m->Start(at) : m->first_ns);
    CHECK(r.search_step_pending());
    pump();
    CHECK_FALSE(r.search_step_pending());
    const EventId hit = r.TakeSearchHit();
    CHECK(hit == local.Next(*m, at));
    CHECK_FALSE(r.TakeSearchHit().valid());  // once
    at = hit;
  }
  r.SearchStep(false, at, m->Start(at));
  pump();
  CHECK(r.TakeSearchHit() == local.Prev(*m, at));
  // A new text drops the step of the old one.
  r.SearchStep(true, {}, m->first_ns);
  r.SetSearch("cudaMemcpy", false);
  pump();
  CHECK_FALSE(r.TakeSearchHit().valid());
  CHECK(r.search().count == Search(*m, "cudaMemcpy").match_count());
  // A bad regular expression: the server's reason.
  r.SetSearch("(", true);
  pump();
  CHECK(r.search().ready);
  CHECK_FALSE(r.search().error.empty());
}

TEST_CASE("remote idle gaps: the server's answer is ExplainIdleGaps of the loaded trace", "[remote][gaps]") {
  size_t with_gaps = 0, with_samples = 0;
  for (const char* f : {"h200_idle.gtrace", "cpu_h200_loader.gtrace", "libcalls_osrt_h200.gtrace"}) {
    INFO(f);
    auto m = LoadTraceFile(std::string(GT_TESTS_DATA) + "/" + f);
    REQUIRE(m.ok());
    const std::vector<uint8_t> bytes = EncodeIndex(**m, {});
    auto opened = MappedIndex::FromBytes(bytes, {});
    REQUIRE(opened.ok());
    const std::vector<IdleGap> want = ExplainIdleGaps(**m, kIndexIdleGaps);
    auto [what, params] = SplitIndexUrl("gaps");
    const IndexAnswer a = AnswerIndexQuery(**opened, what, params);
    REQUIRE(a.status == 200);
    auto got = ParseIdleGapsJson(a.body);
    REQUIRE(got.ok());
    REQUIRE(got->size() == want.size());
    CHECK(IdleGapsJson(*got) == IdleGapsJson(want));  // every field the panel and `gtrace stats` show
    for (size_t i = 0; i < want.size(); ++i) {
      CHECK((*got)[i].device == want[i].device);
      CHECK((*got)[i].end_ns == want[i].end_ns);
      with_samples += want[i].cpu.samples > 0;
    }
    with_gaps += !want.empty();
    // The page's client: nothing until the answer is in, then the same gaps.
    test::InProcessRemote client(**opened);
    RemoteTrace& r = client.r;
    auto pump = [&] { client.Pump(); };
    r.Start();
    pump();
    CHECK(r.IdleGaps() == nullptr);
    pump();
    REQUIRE(r.IdleGaps() != nullptr);
    CHECK(IdleGapsJson(*r.IdleGaps()) == IdleGapsJson(want));
    LocalSource local(m->get());
    CHECK(IdleGapsJson(*local.IdleGaps()) == IdleGapsJson(want));
  }
  CHECK(with_gaps >= 2);
  CHECK(with_samples > 0);  // CPU samples in a gap travel too
}

TEST_CASE("remote flows: the launch <-> GPU work partner is FlowPartner's", "[remote][flows]") {
  for (const char* f : {"h200_torch_train.gtrace", "h200_streams.gtrace"}) {
    INFO(f);
    auto loaded = LoadTraceFile(std::string(GT_TESTS_DATA) + "/" + f);
    REQUIRE(loaded.ok());
    const TraceModel& m = **loaded;
    const std::vector<uint8_t> bytes = EncodeIndex(m, {});
    auto opened = MappedIndex::FromBytes(bytes, {});
    REQUIRE(opened.ok());
    test::InProcessRemote client(**opened);
    RemoteTrace& r = client.r;
    auto pump = [&] { client.Pump(); };
    r.Start();
    pump();
    LocalSource local(&m);
    size_t with_partner = 0, checked = 0;
    // About 40 events of every lane: launches, kernels, copies, ranges (no partner).
    for (LaneId l = 0; l < m.lanes.size(); ++l)
      for (uint32_t i = 0; i < m.lanes[l].size(); i += std::max<uint32_t>(1, m.lanes[l].size() / 40)) {
        const EventId e{l, i};
        const EventId want = FlowPartner(m, e);
        CHECK(r.Partner(e) == nullptr);  // asked
        pump();
        const PartnerInfo* got = r.Partner(e);
        REQUIRE(got);
        ++checked;
        CHECK(got->id == want);
        const PartnerInfo* mine = local.Partner(e);
        CHECK(mine->id == want);
        if (!want.valid()) continue;
        ++with_partner;
        CHECK(got->name == m.Str(m.Name(want)));
        CHECK(got->kind == m.Kind(want));
        CHECK(got->start == m.Start(want));
        CHECK(got->end == m.End(want));
        CHECK(got->launch == (m.TrackOf(want).kind == TrackKind::kThreadApi));
        CHECK(mine->launch == got->launch);
        CHECK(mine->name == got->name);
      }
    CHECK(checked > 50);
    CHECK(with_partner > 10);
  }
  auto m = Synth(5'000, 3);
  const std::vector<uint8_t> bytes = EncodeIndex(*m, {});
  auto opened = MappedIndex::FromBytes(bytes, {});
  REQUIRE(opened.ok());
  auto [w, p] = SplitIndexUrl("flows?lane=99999&index=0");
  CHECK(AnswerIndexQuery(**opened, w, p).status == 404);
  auto [w2, p2] = SplitIndexUrl("flows?lane=0");
  CHECK(AnswerIndexQuery(**opened, w2, p2).status == 400);
}

TEST_CASE("remote flows: the explicit flow records of every event equal the loaded trace's",
          "[remote][flows]") {
  // A real torch.profiler trace: framework ops -> the CUDA calls they issued (ac2g and fwdbwd flows).
  auto m = LoadTraceFile(std::string(GT_TESTS_DATA) + "/h200_torch_profiler.json.gz");
  REQUIRE(m.ok());
  const TraceModel& model = **m;
  REQUIRE(model.flows.size() > 10);
  const std::vector<uint8_t> bytes = EncodeIndex(model, {});
  auto opened = MappedIndex::FromBytes(bytes, {});
  REQUIRE(opened.ok());
  test::InProcessRemote client(**opened);
  RemoteTrace& r = client.r;
  r.Start();
  client.Pump();
  REQUIRE(r.state() == RemoteTrace::State::kReady);
  LocalSource local(&model);
  // Every event at either end of a flow, and a sample of the rest (which have none).
  std::set<EventId> events;
  for (const Flow& f : model.flows) events.insert(f.from), events.insert(f.to);
  for (LaneId l = 0; l < model.lanes.size(); l += 3) events.insert({l, model.lanes[l].size() / 2});
  size_t with_flows = 0, incoming = 0;
  for (const EventId e : events) {
    if (!e.valid() || e.index >= model.lanes[e.lane].size()) continue;
    CHECK(r.Partner(e) == nullptr);  // asked for now
    client.Pump();
    const PartnerInfo* got = r.Partner(e);
    REQUIRE(got);
    const PartnerInfo want = *local.Partner(e);
    INFO(model.EventKey(e));
    CHECK(got->id == want.id);
    REQUIRE(got->flows.size() == want.flows.size());
    for (size_t i = 0; i < want.flows.size(); ++i) {
      CHECK(got->flows[i].id == want.flows[i].id);
      CHECK(got->flows[i].name == want.flows[i].name);
      CHECK(got->flows[i].kind == want.flows[i].kind);
      CHECK(got->flows[i].start == want.flows[i].start);
      CHECK(got->flows[i].end == want.flows[i].end);
      CHECK(got->flows[i].outgoing == want.flows[i].outgoing);
      incoming += !want.flows[i].outgoing;
    }
    with_flows += !want.flows.empty();
  }
  CHECK(with_flows > 10);
  CHECK(incoming > 5);
  // The local list is FlowsOf's, less the correlation partner.
  const Flow& f = model.flows[0];
  size_t explicit_flows = 0;
  for (const FlowArrow& a : FlowsOf(model, f.from)) explicit_flows += !a.correlation;
  CHECK(local.Partner(f.from)->flows.size() == explicit_flows);
}

TEST_CASE("remote search list: the matches in a window equal Search::List's", "[remote][search]") {
  auto m = Synth(80'000, 5);
  const std::vector<uint8_t> bytes = EncodeIndex(*m, {});
  auto opened = MappedIndex::FromBytes(bytes, {});
  REQUIRE(opened.ok());
  const MappedIndex& index = **opened;
  const int64_t span = m->last_ns - m->first_ns;
  size_t listed = 0;
  for (const char* needle : {"gemm_kernel_7<", "step 3", "cudaMemcpy", "no such name"}) {
    const Search search(*m, needle);
    for (auto [a, b] : {std::pair{0.0, 1.0}, {0.3, 0.31}, {0.5, 0.5001}, {0.99, 1.5}}) {
      const int64_t t0 = m->first_ns + int64_t(span * a), t1 = m->first_ns + int64_t(span * b) + 1;
      INFO(needle << " [" << t0 << ", " << t1 << ")");
      const std::vector<EventId> want = search.List(*m, t0, t1, 500);
      const SearchListResult got = IndexSearchList(index, search, t0, t1, 500);
      REQUIRE(got.status.ok());
      CHECK(got.complete);
      CHECK(got.hits == want);
      for (size_t i = 0; i < got.hits.size(); ++i) {
        CHECK(got.start[i] == m->Start(want[i]));
        CHECK(got.end[i] == m->End(want[i]));
        CHECK(got.name[i] == m->Name(want[i]));
      }
      listed += got.hits.size();
    }
  }
  CHECK(listed > 500);
  // A budget smaller than the window: what it found is a part of the full list, and it says so.
  const Search search(*m, "gemm_kernel");  // kernels on every GPU stream
  const std::vector<EventId> all = search.List(*m, m->first_ns, m->last_ns + 1, SIZE_MAX);
  uint64_t budget = 0, events = 0;  // through the first lane that has a match
  for (const Lane& lane : m->lanes) {
    events += lane.size();
    if (budget) continue;
    for (uint32_t i = 0; i < lane.size() && !budget; ++i)
      if (search.Matches(lane.name[i])) budget = events;
  }
  REQUIRE(budget < events);
  const SearchListResult part = IndexSearchList(index, search, m->first_ns, m->last_ns + 1, SIZE_MAX, budget);
  CHECK_FALSE(part.complete);
  CHECK(part.examined == budget);
  CHECK_FALSE(part.hits.empty());
  CHECK(part.hits.size() < all.size());
  for (EventId e : part.hits) CHECK(std::find(all.begin(), all.end(), e) != all.end());
  // Through the API: a bad window is a 400, a wide one answers within the budget.
  CHECK(Ask(index, "search?q=step&dir=list&t0=5&t1=x", 400).is_object());
  const json wide =
      Ask(index, "search?q=gemm_kernel&dir=list&t0=-9223372036854775808&t1=9223372036854775807");
  CHECK(wide["complete"] == true);  // 80 k events: within the budget
  CHECK(wide["hits"].size() == std::min<size_t>(all.size(), 2000));

  // The page's client: the panel asks for its window, once per change.
  test::InProcessRemote client(index);
  RemoteTrace& r = client.r;
  r.Start();
  client.Pump();
  r.SetSearch("gemm_kernel_7<", false);
  client.Pump();
  const int64_t t0 = m->first_ns + span / 3, t1 = t0 + span / 50;
  r.AskSearchList(t0, t1);
  r.AskSearchList(t0, t1);  // one request in flight
  CHECK(client.queue.size() == 1);
  client.Pump();
  r.AskSearchList(t0, t1);  // answered: not asked again
  CHECK(client.queue.empty());
  const RemoteSearchList& list = r.search_list();
  REQUIRE(list.ready);
  CHECK(list.complete);
  CHECK(list.hits == Search(*m, "gemm_kernel_7<").List(*m, t0, t1, 2000));
  REQUIRE_FALSE(list.hits.empty());
  CHECK(list.name[0] == m->Str(m->Name(list.hits[0])));
  r.SetSearch("step 3", false);  // a new text drops the list
  CHECK_FALSE(r.search_list().ready);
}

TEST_CASE("remote search filter: the tracks with a match are BuildTrackFilter's", "[remote][search]") {
  auto m = Synth(60'000, 3);
  const std::vector<uint8_t> bytes = EncodeIndex(*m, {});
  auto opened = MappedIndex::FromBytes(bytes, {});
  REQUIRE(opened.ok());
  size_t shown = 0;
  for (const char* needle : {"gemm_kernel_7<", "step 3", "cudaMemcpy", "GEMM", "no such name"}) {
    INFO(needle);
    const Search local(*m, needle);
    const TrackFilter want = BuildTrackFilter(*m, local);
    const json a = Ask(**opened, std::string("search?q=") + Url(needle));
    REQUIRE(a.contains("tracks"));
    const TrackFilter got = TrackFilterOf(*m, a["tracks"].get<std::vector<TrackId>>());
    CHECK(got.track_visible == want.track_visible);
    CHECK(got.group_visible == want.group_visible);
    CHECK(got.visible_tracks == want.visible_tracks);
    shown += want.visible_tracks;
  }
  CHECK(shown > 0);
  // A track of more names than the index lists counts as one with a match (not known: shown).
  IndexSummaries& s = const_cast<IndexSummaries&>((*opened)->summaries());
  REQUIRE(s.track_name_ends.size() == m->tracks.size());
  const uint64_t first_end = s.track_name_ends[0];
  REQUIRE(first_end > 0);
  s.track_names[0] = kNone;
  const json a = Ask(**opened, "search?q=no%20such%20name");
  CHECK(a["tracks"].get<std::vector<TrackId>>() == std::vector<TrackId>{0});
}
