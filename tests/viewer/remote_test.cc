// The page's remote trace (gt/viewer/remote.h) against the server's own answers, in-process: tiles are
// quantized so that panning reuses them, the cache evicts the least recently used beyond its budget, a
// missing tile is drawn from a cached coarser one, the drawn items cover every event the local LOD shows,
// and an event's details, the kernel table, the summaries and share-link keys equal the local model's.
#include <catch2/catch.hpp>
#include <deque>
#include <set>

#include "gt/viewer/builder.h"
#include "gt/viewer/index.h"
#include "gt/viewer/index_query.h"
#include "gt/viewer/remote.h"
#include "gt/viewer/source.h"
#include "synth_trace.h"

using namespace gt;
using namespace gt::viewer;

namespace {

std::unique_ptr<TraceModel> Synth(uint64_t events) {
  gt::synth::SynthOptions o;
  o.events = events;
  ModelBuilder b;
  gt::synth::GenerateSynthTrace(b, o);
  return b.Finish();
}

// A server in a queue: requests wait until Pump answers them from the mapped index, as `gtrace serve` does.
struct FakeServer {
  const MappedIndex* index = nullptr;
  std::deque<std::pair<uint64_t, std::string>> queue;
  std::vector<std::string> urls;  // every request, in order
  int busy_answers = 0;           // answer this many with 202 first (an index being built)

  RemoteTrace::Send Sender() {
    return [this](uint64_t id, const std::string& url) {
      queue.push_back({id, url});
      urls.push_back(url);
    };
  }
  void Pump(RemoteTrace& r) {
    while (!queue.empty()) {
      auto [id, url] = queue.front();
      queue.pop_front();
      if (busy_answers > 0) {
        --busy_answers;
        r.OnAnswer(id, 202, "{\"error\":\"building\",\"status\":202}");
        continue;
      }
      const size_t q = url.find('?');
      QueryParams params;
      if (q != std::string::npos) {
        std::string rest = url.substr(q + 1);
        while (!rest.empty()) {
          const size_t amp = rest.find('&');
          const std::string kv = rest.substr(0, amp);
          const size_t eq = kv.find('=');
          params.push_back({kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1)});
          rest = amp == std::string::npos ? "" : rest.substr(amp + 1);
        }
      }
      const IndexAnswer a = AnswerIndexQuery(*index, url.substr(0, q), params);
      r.OnAnswer(id, a.status, a.body);
    }
  }
  size_t Tiles() const {
    size_t n = 0;
    for (const std::string& u : urls) n += u.rfind("tiles?", 0) == 0;
    return n;
  }
};

// The busiest lane: a GPU stream's kernels.
LaneId BusiestLane(const TraceModel& m) {
  LaneId best = 0;
  for (LaneId l = 0; l < m.lanes.size(); ++l)
    if (m.lanes[l].size() > m.lanes[best].size()) best = l;
  return best;
}

}  // namespace

TEST_CASE("tiles: a level per power-of-two ns per pixel, abutting windows, a few tiles a screen",
          "[remote]") {
  CHECK(TileLevelFor(0.01) == 0);
  CHECK(TileLevelFor(1.9) == 0);
  CHECK(TileLevelFor(2.0) == 1);
  CHECK(TileLevelFor(1500) == 10);  // 1024 ns/px: not coarser than the screen
  CHECK(TileLevelFor(1e30) == kRemoteMaxLevel);
  const int64_t origin = 1'000'000;
  for (int level : {0, 5, 20}) {
    const auto [a0, a1] = TileWindow(origin, {0, level, 7});
    const auto [b0, b1] = TileWindow(origin, {0, level, 8});
    CHECK(a1 == b0);
    CHECK(a1 - a0 == TileWidth(level));
    // The server's quantization keeps exactly this window: the cache key is the server's tile.
    CHECK(QuantizeTileWindow(origin, a0, a1) == std::make_pair(a0, a1));
  }
  std::vector<TileKey> keys;
  const int64_t last = origin + (int64_t(1) << 40);
  for (double px : {800.0, 1500.0, 2400.0}) {
    for (double ns_per_px : {1.0, 3.7, 1000.0, 123456.0}) {
      const int64_t t0 = origin + int64_t(ns_per_px * 1e5), t1 = t0 + int64_t(ns_per_px * px);
      TilesCovering(origin, last, 0, TileLevelFor(ns_per_px), t0, t1, &keys);
      INFO(px << " px at " << ns_per_px << " ns/px");
      CHECK(keys.size() >= 1);
      // Tiles are up to twice as fine as the screen: 2 px / 1024 per screen pixel, plus one across an edge.
      CHECK(keys.size() <= size_t(px * 2 / kRemoteTilePx) + 2);
      CHECK(TileWindow(origin, keys.front()).first <= t0);
      CHECK(TileWindow(origin, keys.back()).second >= t1);
    }
  }
  // Nothing outside the trace is asked for.
  TilesCovering(origin, last, 0, 3, origin - 10000, origin - 1, &keys);
  CHECK(keys.empty());
  TilesCovering(origin, origin + 10, 0, 3, origin - 10000, origin + 100000, &keys);
  REQUIRE(keys.size() == 1);
  CHECK(keys[0].index == 0);
}

TEST_CASE("tile cache: least recently used evicted beyond the budget, hits refresh", "[remote]") {
  auto tile = [](size_t items) {
    RemoteTile t;
    t.lanes.resize(1);
    t.lanes[0].resize(items);
    return t;
  };
  const size_t one = tile(100).Bytes();
  TileCache cache(one * 3);
  for (int64_t i = 0; i < 3; ++i) cache.Put({0, 4, i}, tile(100));
  CHECK(cache.size() == 3);
  REQUIRE(cache.Find({0, 4, 0}));  // 0 is now the most recent: 1 goes first
  cache.Put({0, 4, 3}, tile(100));
  CHECK(cache.size() == 3);
  CHECK(cache.Contains({0, 4, 0}));
  CHECK_FALSE(cache.Contains({0, 4, 1}));
  CHECK(cache.evictions() == 1);
  CHECK(cache.bytes() <= one * 3);
  cache.Put({0, 4, 9}, tile(10000));  // alone over the budget: kept (it is on screen), the rest go
  CHECK(cache.size() == 1);
  CHECK(cache.Contains({0, 4, 9}));
  CHECK(cache.Find({1, 4, 9}) == nullptr);
  CHECK(cache.misses() == 1);
  CHECK(cache.hits() == 1);
}

TEST_CASE("remote trace: the layout, tiles that cover the local LOD, reuse while panning, fallback",
          "[remote]") {
  auto m = Synth(300'000);
  const std::vector<uint8_t> bytes = EncodeIndex(*m, {1, "t"});
  auto index = MappedIndex::FromBytes(bytes, {1, "t"});
  REQUIRE(index.ok());
  FakeServer server{index->get()};
  server.busy_answers = 1;  // the first /meta finds the index still building
  RemoteOptions options;
  options.retry_s = 0;
  RemoteTrace r(server.Sender(), options);
  CHECK(!r.busy());
  r.Start();
  CHECK(r.busy());  // /meta on its way: the view keeps drawing for its answer
  server.Pump(r);
  CHECK(r.state() == RemoteTrace::State::kMeta);
  CHECK(r.busy());  // answered 202: waiting for its retry, which only a frame's Tick sends
  r.Tick();         // retried
  server.Pump(r);
  REQUIRE(r.state() == RemoteTrace::State::kReady);
  CHECK(!r.busy());  // nothing asked, nothing awaited: an idle page may stop drawing
  const TraceModel& lay = r.layout();
  REQUIRE(lay.tracks.size() == m->tracks.size());
  REQUIRE(lay.lanes.size() == m->lanes.size());
  CHECK(lay.first_ns == m->first_ns);
  CHECK(lay.event_count == m->event_count);
  for (TrackId t = 0; t < lay.tracks.size(); ++t) {
    CHECK(lay.tracks[t].key == m->tracks[t].key);
    CHECK(lay.tracks[t].first_lane == m->tracks[t].first_lane);
    CHECK(lay.tracks[t].lane_count == m->tracks[t].lane_count);
    CHECK(lay.tracks[t].kind == m->tracks[t].kind);
  }
  for (LaneId l = 0; l < lay.lanes.size(); ++l) CHECK(lay.lanes[l].size() == 0);  // no events here

  const LaneId lane = BusiestLane(*m);
  const Lane& ll = m->lanes[lane];
  const int64_t span = (m->last_ns - m->first_ns) / 50;
  const int64_t t0 = m->first_ns + span * 7, t1 = t0 + span;
  const double ns_per_px = double(span) / 1500;
  std::vector<LaneItem> items;
  CHECK_FALSE(r.LaneItems(lane, t0, t1, ns_per_px, &items));  // asked, not here yet
  const size_t first_tiles = server.Tiles();
  CHECK(first_tiles >= 1);
  CHECK(first_tiles <= 4);
  CHECK_FALSE(r.LaneItems(lane, t0, t1, ns_per_px, &items));  // not asked twice
  CHECK(server.Tiles() == first_tiles);
  server.Pump(r);
  REQUIRE(r.LaneItems(lane, t0, t1, ns_per_px, &items));
  REQUIRE(!items.empty());
  // Every event the local model has in the window is in one of the items; names and kinds are the model's.
  std::set<uint32_t> covered;
  for (const LaneItem& it : items) {
    REQUIRE(it.item.first + it.item.count <= ll.size());
    CHECK(it.item.start == ll.start[it.item.first]);
    CHECK(r.Str(it.name) == m->Str(ll.name[it.item.first]));
    CHECK(it.kind == m->Kind({lane, it.item.first}));
    CHECK(it.style == EventStyle(*m, {lane, it.item.first}));
    for (uint32_t i = it.item.first; i < it.item.first + it.item.count; ++i) covered.insert(i);
  }
  const auto [lo, hi] = LaneRange(ll, t0, t1);
  for (uint32_t i = lo; i < hi; ++i) REQUIRE(covered.count(i));

  // Panning by a quarter screen at the same zoom: at most one new tile for the track.
  const size_t before = server.Tiles();
  const int64_t shift = span / 4;
  r.LaneItems(lane, t0 + shift, t1 + shift, ns_per_px, &items);
  CHECK(server.Tiles() - before <= 1);
  server.Pump(r);
  const RemoteStats st = r.stats();
  CHECK(st.tile_hits > 0);

  // Zoomed in 8x: the finer tiles are on their way, the cached coarser ones stand in.
  const int64_t z0 = t0 + span / 2, z1 = z0 + span / 8;
  CHECK_FALSE(r.LaneItems(lane, z0, z1, ns_per_px / 8, &items));
  CHECK_FALSE(items.empty());
  server.Pump(r);
  CHECK(r.LaneItems(lane, z0, z1, ns_per_px / 8, &items));

  // Counters come in tiles too.
  for (TrackId t = 0; t < lay.tracks.size(); ++t) {
    if (m->tracks[t].kind != TrackKind::kCounter) continue;
    std::vector<CounterColumn> cols, local;
    CHECK_FALSE(r.CounterColumns(t, t0, t1, ns_per_px, &cols));
    server.Pump(r);
    CHECK(r.CounterColumns(t, t0, t1, ns_per_px, &cols));
    LocalSource(m.get()).CounterColumns(t, t0, t1, ns_per_px, &local);
    CHECK(cols.empty() == local.empty());
    break;
  }
}

TEST_CASE("remote trace: details, keys, the kernel table and summaries equal the local model's", "[remote]") {
  auto m = Synth(50'000);
  const std::vector<uint8_t> bytes = EncodeIndex(*m, {1, "t"});
  auto index = MappedIndex::FromBytes(bytes, {1, "t"});
  REQUIRE(index.ok());
  FakeServer server{index->get()};
  RemoteTrace r(server.Sender());
  r.Start();
  server.Pump(r);
  REQUIRE(r.state() == RemoteTrace::State::kReady);
  LocalSource local(m.get());

  const LaneId lane = BusiestLane(*m);
  const EventId e{lane, m->lanes[lane].size() / 2};
  CHECK(r.Event(e) == nullptr);
  server.Pump(r);
  const EventInfo* got = r.Event(e);
  REQUIRE(got);
  const EventInfo want = MakeEventInfo(*m, e);
  CHECK(got->found);
  CHECK(got->name == want.name);
  CHECK(got->kind == want.kind);
  CHECK(got->key == want.key);
  CHECK(got->start == want.start);
  CHECK(got->end == want.end);
  CHECK(got->fields.size() == want.fields.size());
  CHECK(r.EventKey(e) == m->EventKey(e));
  CHECK(r.FindEventByKey(m->EventKey(e)) == e);
  CHECK(r.FindEventByKey("nope/0/1") == EventId{});
  // A key of an event the trace does not have: the server says so.
  const EventId gone{lane, m->lanes[lane].size() + 5};
  CHECK(r.Event(gone) == nullptr);
  server.Pump(r);
  REQUIRE(r.Event(gone));
  CHECK_FALSE(r.Event(gone)->found);

  CHECK(r.Kernels() == nullptr);
  server.Pump(r);
  REQUIRE(r.Kernels());
  const auto& rows = *r.Kernels();
  const auto& want_rows = *local.Kernels();
  REQUIRE(rows.size() == want_rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(r.Str(rows[i].name) == m->Str(want_rows[i].name));
    CHECK(rows[i].name == want_rows[i].name);  // the server's string ids: rows and tiles agree
    CHECK(rows[i].total_ns == want_rows[i].total_ns);
    CHECK(rows[i].first_ns == want_rows[i].first_ns);
    CHECK(rows[i].last_ns == want_rows[i].last_ns);
  }
  CHECK(r.Summary(SummaryOf::kApi) == nullptr);
  server.Pump(r);
  for (SummaryOf k : {SummaryOf::kKernels, SummaryOf::kCopies, SummaryOf::kApi, SummaryOf::kNvtx}) {
    REQUIRE(r.Summary(k));
    const auto& a = *r.Summary(k);
    const auto& b = *local.Summary(k);
    REQUIRE(a.size() == std::min<size_t>(b.size(), 1000));
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].name == b[i].name);
      CHECK(a[i].total_ns == b[i].total_ns);
    }
  }
}

TEST_CASE("remote trace: panning across the whole trace stays within the cache budget", "[remote]") {
  auto m = Synth(200'000);
  const std::vector<uint8_t> bytes = EncodeIndex(*m, {1, "t"});
  auto index = MappedIndex::FromBytes(bytes, {1, "t"});
  REQUIRE(index.ok());
  FakeServer server{index->get()};
  RemoteOptions options;
  options.cache_bytes = 256 << 10;
  RemoteTrace r(server.Sender(), options);
  r.Start();
  server.Pump(r);
  REQUIRE(r.state() == RemoteTrace::State::kReady);
  const LaneId lane = BusiestLane(*m);
  const int64_t span = (m->last_ns - m->first_ns) / 200;
  std::vector<LaneItem> items;
  size_t max_bytes = 0;
  for (int64_t t = m->first_ns; t < m->last_ns; t += span / 3) {
    r.LaneItems(lane, t, t + span, double(span) / 1200, &items);
    server.Pump(r);
    REQUIRE(r.LaneItems(lane, t, t + span, double(span) / 1200, &items));
    max_bytes = std::max(max_bytes, r.stats().tile_bytes);
  }
  const RemoteStats st = r.stats();
  CHECK(st.tile_evictions > 0);
  CHECK(max_bytes <= options.cache_bytes);
  // About one new tile per third of a screen: panning reuses what it fetched.
  CHECK(server.Tiles() <= 200 * 3 / 2 + 8);
}
