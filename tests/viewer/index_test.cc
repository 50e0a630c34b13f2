// The viewer index (gt/viewer/index.h, index_query.h): a model written and mapped back is the model (every
// field ModelDiff compares, fingerprints equal, lane columns borrowed from the file); a stale, damaged or
// truncated index is refused and rebuilt; hostile bytes are refused without a crash; tiles from the mapped
// index equal the local model's LOD for the same window, and the other answers equal the local queries.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "gt/index_format.h"
#include "gt/viewer/builder.h"
#include "gt/viewer/index.h"
#include "gt/viewer/index_query.h"
#include "gt/viewer/json.h"
#include "gt/viewer/load.h"
#include "index_blocks.h"
#include "index_codec.h"
#include "model_diff.h"
#include "synth_trace.h"
#include "test_util.h"
#include "writer_sink.h"

using namespace gt;
using namespace gt::viewer;

namespace {

std::unique_ptr<TraceModel> Synth(uint64_t events, uint64_t seed = 42) {
  gt::synth::SynthOptions o;
  o.events = events;
  o.seed = seed;
  ModelBuilder b;
  gt::synth::GenerateSynthTrace(b, o);
  return b.Finish();
}

const IndexSource kSource{1234, "test:source"};

std::unique_ptr<MappedIndex> RoundTrip(const TraceModel& m, std::vector<uint8_t>* bytes) {
  *bytes = EncodeIndex(m, kSource);
  auto index = MappedIndex::FromBytes(*bytes, kSource);
  INFO(index.status().ToString());
  REQUIRE(index.ok());
  return std::move(*index);
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gt_index_test_" + std::to_string(getpid()) + "_" + name))
      .string();
}

std::vector<uint8_t> ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}
void WriteAll(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

}  // namespace

TEST_CASE("index round trip: the mapped model is the model", "[index]") {
  std::vector<std::unique_ptr<TraceModel>> models;
  models.push_back(test::SmallTrace());
  models.push_back(Synth(50'000));
  for (const char* f : {"h200_torch_train.gtrace", "h200_torch_profiler.json.gz", "h200_nvtx.gtrace"}) {
    auto m = LoadTraceFile(std::string(GT_TESTS_DATA) + "/" + f);
    REQUIRE(m.ok());
    models.push_back(std::move(*m));
  }
  for (const auto& m : models) {
    std::vector<uint8_t> bytes;
    auto index = RoundTrip(*m, &bytes);
    auto whole = index->Materialize();
    REQUIRE(whole.ok());
    const TraceModel& mapped = **whole;
    CHECK(test::ModelDiff(*m, mapped, false) == "");
    CHECK(test::ModelFingerprint(*m) == test::ModelFingerprint(mapped));
    CHECK(index->source() == kSource);
    // Open decodes the tables, not the lanes: their columns stay in the file until a query reads them.
    CHECK(index->cached_bytes() == 0);
    for (size_t l = 0; l < m->lanes.size(); ++l) {
      CHECK(index->model().lanes[l].start.empty());
      CHECK(index->lane_size(LaneId(l)) == m->lanes[l].size());
    }
    // The aggregates are the local queries' own.
    const auto kernels = KernelSummary(*m);
    REQUIRE(index->summaries().kernels.size() == kernels.size());
    CHECK(KernelSummaryJson(mapped, index->summaries().kernels) == KernelSummaryJson(*m, kernels));
    for (size_t k = 0; k < 4; ++k)
      CHECK(NameSummaryJson(index->summaries().by_name[k]) ==
            NameSummaryJson(SummarizeByName(*m, SummaryOf(k))));
  }
}

TEST_CASE("index files: built once, stale, damaged and truncated indexes are rebuilt", "[index]") {
  const std::string trace = std::string(GT_TESTS_DATA) + "/h200_torch_train.gtrace";
  const std::vector<uint8_t> bytes = ReadAll(trace);
  const IndexSource source = FingerprintBytes(bytes);
  CHECK(source.bytes == bytes.size());
  CHECK(source.tag.rfind("crc32c:", 0) == 0);
  const std::string path = TempPath("build.gtindex");
  std::filesystem::remove(path);

  IndexBuildReport r;
  auto first = OpenOrBuildIndex(bytes, source, path, {}, &r);
  REQUIRE(first.ok());
  CHECK(r.rebuilt);
  CHECK(r.why == "no index");
  CHECK(r.write.index_bytes == std::filesystem::file_size(path));
  auto local = LoadTrace(bytes);
  REQUIRE(local.ok());
  CHECK(test::ModelDiff(**local, **(*first)->Materialize(), false) == "");

  auto again = OpenOrBuildIndex(bytes, source, path, {}, &r);
  REQUIRE(again.ok());
  CHECK(!r.rebuilt);

  const std::vector<uint8_t> good = ReadAll(path);
  auto rebuilt_because = [&](const std::vector<uint8_t>& damaged, const IndexSource& src) {
    WriteAll(path, damaged);
    auto opened = MappedIndex::Open(path, src);
    REQUIRE(!opened.ok());
    CHECK(IndexNeedsRebuild(opened.status()));
    auto fixed = OpenOrBuildIndex(bytes, src, path, {}, &r);
    REQUIRE(fixed.ok());
    CHECK(r.rebuilt);
    CHECK(test::ModelDiff(**local, **(*fixed)->Materialize(), false) == "");
    return r.why;
  };
  SECTION("another source") {
    IndexSource other = source;
    other.tag = "crc32c:00000000";
    CHECK(rebuilt_because(good, other).find("stale: the index was built from other bytes") == 0);
  }
  SECTION("a damaged block directory") {
    auto bad = good;
    bad[bad.size() - 5] ^= 0x40;
    CHECK(rebuilt_because(bad, source) == "damaged index: checksum of the block directory section");
  }
  SECTION("truncated") {
    auto bad = good;
    bad.resize(bad.size() / 2);
    CHECK(rebuilt_because(bad, source).find("damaged index: truncated") == 0);
    CHECK(rebuilt_because({}, source) == "damaged index: shorter than its header");
  }
  SECTION("another version") {
    auto bad = good;
    index_detail::Store<uint16_t>(bad.data() + index_detail::kOffMinor,
                                  uint16_t(CurrentIndexVersion().minor + 1));
    index_detail::Store<uint32_t>(bad.data() + index_detail::kOffHeaderCrc,
                                  Crc32c(0, bad.data(), index_detail::kOffHeaderCrc));
    CHECK(rebuilt_because(bad, source).find("stale: index version") == 0);
  }
  SECTION("not an index") {
    CHECK(rebuilt_because(bytes, source) == "not a gtrace viewer index");
  }
  std::filesystem::remove(path);
}

TEST_CASE("index reader: hostile bytes are refused, never read out of bounds", "[index]") {
  auto m = test::SmallTrace();
  const std::vector<uint8_t> good = EncodeIndex(*m, kSource);
  IndexOpenOptions no_crc;
  no_crc.verify_checksums = false;  // reach the structural checks behind the checksums
  gt::synth::Rng rng(99);
  int refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> bad = good;
    const int flips = 1 + int(rng.Below(4));
    for (int k = 0; k < flips; ++k) {
      // Mostly the header and the small tables, where a flip changes structure.
      const size_t at = rng.Below(4) ? rng.Below(uint32_t(std::min<size_t>(bad.size(), 4096)))
                                     : rng.Below(uint32_t(bad.size()));
      bad[at] = uint8_t(rng.Next());
    }
    if (rng.Below(8) == 0) bad.resize(rng.Below(uint32_t(bad.size())));
    auto index = MappedIndex::FromBytes(bad, {}, no_crc);
    if (!index.ok()) {
      ++refused;
      continue;
    }
    // Whatever was accepted holds the invariants the queries need: answer every query on it.
    const TraceModel& x = (*index)->model();
    for (size_t t = 0; t < x.tracks.size(); ++t) {
      auto a = AnswerIndexQuery(**index, "tiles",
                                {{"track", std::to_string(t)},
                                 {"t0", std::to_string(x.first_ns)},
                                 {"t1", std::to_string(x.last_ns + 1)},
                                 {"px", "800"}});
      // 500: a block that fails its checks (damaged index; the server rebuilds it).
      CHECK((a.status == 200 || a.status == 404 || a.status == 400 ||
             (a.status == 500 && !(*index)->damage().empty())));
    }
    for (size_t l = 0; l < x.lanes.size(); ++l)
      for (uint32_t i = 0; i < (*index)->lane_size(LaneId(l)); ++i)
        AnswerIndexQuery(**index, "event", {{"lane", std::to_string(l)}, {"index", std::to_string(i)}});
    AnswerIndexQuery(**index, "kernels", {});
    AnswerIndexQuery(**index, "summary", {});
    AnswerIndexQuery(**index, "meta", {});
  }
  CHECK(refused > 0);
  // With checksums on, any flipped byte is refused.
  for (size_t at : {size_t(0), size_t(130), good.size() / 2, good.size() - 1}) {
    std::vector<uint8_t> bad = good;
    bad[at] ^= 1;
    CHECK(!MappedIndex::FromBytes(bad, {}).ok());
  }
}

TEST_CASE("tiles: the mapped index folds exactly as the local model's LOD", "[index]") {
  auto m = Synth(200'000, 7);
  std::vector<uint8_t> bytes;
  auto index = RoundTrip(*m, &bytes);
  gt::synth::Rng rng(5);
  int checked = 0;
  for (int round = 0; round < 300; ++round) {
    const TrackId track = rng.Below(uint32_t(m->tracks.size()));
    const int64_t span = std::max<int64_t>(1, m->span_ns() >> rng.Below(20));
    const int64_t t0 = m->first_ns + int64_t(rng.Next() % uint64_t(std::max<int64_t>(1, m->span_ns())));
    const uint32_t px = 1 + rng.Below(kTileMaxPx);
    TileRequest req{track, t0, t0 + span, px};
    const Tile tile = BuildTile(*m, req);
    // The mapped index's answer (its lanes read block by block) is the local tile's JSON, byte for byte.
    const IndexAnswer a = AnswerIndexQuery(*index, "tiles",
                                           {{"track", std::to_string(track)},
                                            {"t0", std::to_string(t0)},
                                            {"t1", std::to_string(t0 + span)},
                                            {"px", std::to_string(px)}});
    if (t0 + span > m->first_ns && t0 <= m->last_ns) {
      REQUIRE(a.status == 200);
      CHECK(a.body == TileJson(*m, tile));
    }
    CHECK(index->cached_bytes() <= IndexOpenOptions{}.cache_bytes);
    // The quantized window holds the asked one, its width is a power of two, aligned from first_ns.
    const int64_t w = tile.t1 - tile.t0;
    CHECK(tile.t0 <= t0);
    CHECK(tile.t1 >= t0 + span);
    CHECK((w & (w - 1)) == 0);
    CHECK((tile.t0 - m->first_ns) % w == 0);
    CHECK(QuantizeTileWindow(m->first_ns, tile.t0 + 1, tile.t1 - 1) == std::pair{tile.t0, tile.t1});
    const Track& t = m->tracks[track];
    if (t.kind == TrackKind::kCounter) {
      std::vector<CounterColumn> local;
      QueryCounter(m->counters[t.counter], tile.t0, tile.t1, tile.ns_per_px, &local);
      REQUIRE(local.size() == tile.counter.size());
      for (size_t i = 0; i < local.size(); ++i)
        CHECK(std::tie(local[i].t0, local[i].t1, local[i].min, local[i].max, local[i].samples) ==
              std::tie(tile.counter[i].t0, tile.counter[i].t1, tile.counter[i].min, tile.counter[i].max,
                       tile.counter[i].samples));
      continue;
    }
    size_t lane_with_items = 0;
    for (uint32_t d = 0; d < t.lane_count; ++d) {
      std::vector<DrawItem> local;
      QueryLane(m->lanes[t.first_lane + d], tile.t0, tile.t1, tile.ns_per_px, &local);
      if (local.empty()) continue;
      REQUIRE(lane_with_items < tile.lanes.size());
      CHECK(tile.lanes[lane_with_items].depth == d);
      CHECK(tile.lanes[lane_with_items].items == local);
      ++lane_with_items;
      checked += int(local.size());
    }
    CHECK(lane_with_items == tile.lanes.size());
    CHECK(!tile.truncated);
  }
  CHECK(checked > 1000);
}

TEST_CASE("index queries: answers and clear errors", "[index]") {
  auto m = test::SmallTrace();
  std::vector<uint8_t> bytes;
  auto index = RoundTrip(*m, &bytes);
  using nlohmann::json;
  auto ask = [&](std::string_view what, QueryParams p) { return AnswerIndexQuery(*index, what, p); };

  auto meta = ask("meta", {});
  REQUIRE(meta.status == 200);
  const json mj = json::parse(meta.body);
  CHECK(mj["tracks"].size() == m->tracks.size());
  CHECK(mj["first_ns"] == m->first_ns);

  std::string stream7;
  for (const Track& t : m->tracks)
    if (t.kind == TrackKind::kGpuStream && t.stream_id == 7) stream7 = t.key;
  REQUIRE(!stream7.empty());
  auto tile = ask("tiles", {{"track", stream7}, {"t0", "0"}, {"t1", "2000"}, {"px", "1000"}});
  REQUIRE(tile.status == 200);
  const json tj = json::parse(tile.body);
  CHECK(tj["t1"].get<int64_t>() - tj["t0"].get<int64_t>() == 2048);
  REQUIRE(tj["lanes"].size() == 1);
  CHECK(tj["lanes"][0]["items"].size() == 2);  // gemm, memcpy
  const auto gemm = tj["lanes"][0]["items"][0];
  CHECK(tj["names"][std::to_string(gemm[4].get<uint32_t>())] == "gemm");

  auto err = [&](QueryParams p) {
    auto a = ask("tiles", std::move(p));
    return std::to_string(a.status) + " " + json::parse(a.body)["error"].get<std::string>();
  };
  CHECK(err({{"track", "99"}, {"t0", "0"}, {"t1", "10"}, {"px", "10"}}) ==
        "404 no track 99 (the trace has " + std::to_string(m->tracks.size()) + ")");
  CHECK(err({{"track", "nope"}, {"t0", "0"}, {"t1", "10"}, {"px", "10"}}) == "404 no track with key 'nope'");
  CHECK(err({{"track", "0"}, {"t0", "0"}, {"t1", "10"}, {"px", "100000"}}) ==
        "400 px must be 1..4096 (ask for several tiles instead)");
  CHECK(err({{"track", "0"}, {"t0", "10"}, {"t1", "10"}, {"px", "10"}}) ==
        "400 empty window: t1 must be after t0");
  CHECK(err({{"track", "0"}, {"t0", "x"}, {"t1", "10"}, {"px", "10"}}) ==
        "400 parameter 't0' is not a number in range");
  CHECK(err({{"track", "0"}, {"t1", "10"}, {"px", "10"}}) == "400 missing parameter 't0'");
  CHECK(err({{"track", "0"}, {"t0", "5000000"}, {"t1", "6000000"}, {"px", "10"}})
            .find("404 window [5000000, 6000000) "
                  "is outside the trace") == 0);
  // The widest window there is: a tile of the widest width (2^62 ns), no overflow.
  CHECK(ask("tiles",
            {{"track", "0"}, {"t0", "-9223372036854775808"}, {"t1", "9223372036854775807"}, {"px", "4096"}})
            .status == 200);

  // Details of an event: the local model's own JSON.
  const EventId e = test::FindByName(*m, "gemm");
  auto ev = ask("event", {{"key", m->EventKey(e)}});
  REQUIRE(ev.status == 200);
  CHECK(ev.body == EventJson(*m, e));
  auto ev2 = ask("event", {{"lane", std::to_string(e.lane)}, {"index", std::to_string(e.index)}});
  CHECK(ev2.body == ev.body);
  CHECK(ask("event", {{"lane", "999"}, {"index", "0"}}).status == 404);
  CHECK(ask("event", {{"key", "p1/t2/api/0/5"}}).status == 404);

  auto kernels = ask("kernels", {{"limit", "1"}});
  REQUIRE(kernels.status == 200);
  CHECK(json::parse(kernels.body).size() == 1);
  auto summary = ask("summary", {});
  REQUIRE(summary.status == 200);
  const json sj = json::parse(summary.body);
  CHECK(sj.contains("devices"));
  CHECK(sj["kernels"].size() == 2);
  CHECK(ask("nothing", {}).status == 404);
}

TEST_CASE("index blocks: read when first queried, a damaged one fails its request only", "[index]") {
  auto m = Synth(200'000, 3);
  std::vector<uint8_t> bytes = EncodeIndex(*m, kSource);
  // The lane with the most events: its blocks are the ones damaged below.
  LaneId big = 0;
  for (LaneId l = 0; l < m->lanes.size(); ++l)
    if (m->lanes[l].size() > m->lanes[big].size()) big = l;
  REQUIRE(m->lanes[big].size() > 2 * index_detail::kBlockValues);
  const TrackId track = m->lanes[big].track;
  auto whole_track = [&](TrackId t) {
    return QueryParams{{"track", std::to_string(t)},
                       {"t0", std::to_string(m->first_ns)},
                       {"t1", std::to_string(m->last_ns + 1)},
                       {"px", "1024"}};
  };

  SECTION("a small cache stays within its budget and answers the same") {
    IndexOpenOptions small;
    small.cache_bytes = 256 << 10;
    auto index = MappedIndex::FromBytes(bytes, kSource, small);
    REQUIRE(index.ok());
    for (TrackId t = 0; t < m->tracks.size(); ++t) {
      const IndexAnswer a = AnswerIndexQuery(**index, "tiles", whole_track(t));
      REQUIRE(a.status == 200);
      TileRequest req{t, m->first_ns, m->last_ns + 1, 1024};
      CHECK(a.body == TileJson(*m, BuildTile(*m, req)));
      // At most the budget plus one block (the newest is kept even when it alone is over).
      CHECK((*index)->cached_bytes() <= small.cache_bytes + index_detail::kBlockValues * 8);
    }
    const EventId e{big, m->lanes[big].size() - 1};
    const IndexAnswer ev = AnswerIndexQuery(**index, "event", {{"key", m->EventKey(e)}});
    REQUIRE(ev.status == 200);
    CHECK(ev.body == EventJson(*m, e));
  }

  SECTION("a damaged block: open succeeds, the request that reads it fails, the rest is served") {
    // The second block of the big lane's starts gets a flipped byte: it fails its checksum when read; the
    // open (tables and directory only) does not notice.
    uint64_t block = 0;
    {
      auto clean = MappedIndex::FromBytes(bytes, kSource);
      REQUIRE(clean.ok());
      block = (*clean)->blocks().lanes[big].start.first_block + 1;
    }
    const uint8_t* sec = bytes.data() + index_detail::kHeaderBytes + 2 * index_detail::kSectionEntryBytes;
    REQUIRE(index_detail::Load<uint32_t>(sec) == index_detail::kSectionBlocks);
    const uint8_t* dir =
        bytes.data() + index_detail::Load<uint64_t>(sec + index_detail::kSectionEntryBytes + 8);
    const uint64_t at = index_detail::Load<uint64_t>(sec + 8) +
                        index_detail::Load<uint64_t>(dir + block * index_detail::kDirEntryBytes);
    bytes[at + 3] ^= 0x5a;
    auto index = MappedIndex::FromBytes(bytes, kSource);
    REQUIRE(index.ok());
    CHECK((*index)->damage().empty());
    const IndexAnswer a = AnswerIndexQuery(**index, "tiles", whole_track(track));
    CHECK(a.status == 500);
    CHECK(a.body.find("damaged index: block") != std::string::npos);
    CHECK((*index)->damage().find("damaged index: block") == 0);
    CHECK(AnswerIndexQuery(**index, "meta", {}).status == 200);
    CHECK(AnswerIndexQuery(**index, "kernels", {}).status == 200);
    CHECK(!(*index)->Materialize().ok());
  }
}

TEST_CASE("index 2.1: a block's bytes shuffle by byte position and back", "[index]") {
  using index_detail::ShuffleBytes;
  using index_detail::UnshuffleBytes;
  const std::vector<uint8_t> values = {0x11, 0x12, 0x13, 0x14, 0x21, 0x22,
                                       0x23, 0x24, 0x31, 0x32, 0x33, 0x34};
  std::vector<uint8_t> shuffled(values.size()), back(values.size());
  ShuffleBytes(values.data(), 3, 4, shuffled.data());  // three u32: byte 0 of each, then byte 1, ...
  CHECK(shuffled ==
        std::vector<uint8_t>{0x11, 0x21, 0x31, 0x12, 0x22, 0x32, 0x13, 0x23, 0x33, 0x14, 0x24, 0x34});
  UnshuffleBytes(shuffled.data(), 3, 4, back.data());
  CHECK(back == values);
  // Every width the index uses (the unrolled 4 and 8) and others, every count up to a few blocks' tails.
  for (size_t elem : {1, 2, 3, 4, 8, 16})
    for (size_t n : {1, 2, 7, 4095, 4097}) {
      std::vector<uint8_t> in(n * elem), mid(in.size()), out(in.size());
      for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i * 131 + elem);
      ShuffleBytes(in.data(), n, elem, mid.data());
      UnshuffleBytes(mid.data(), n, elem, out.data());
      INFO("elem " << elem << ", n " << n);
      CHECK(out == in);
      CHECK(mid[n * (elem - 1)] == in[elem - 1]);  // the first value's last byte opens the last plane
    }
}

TEST_CASE("index: the vector shuffle and the fused delta pass equal the per-byte definition", "[index]") {
  // index_shuffle.cc transposes 16 values at a time in registers and leaves the tail to scalar loops: every
  // count around the 16-value steps and a whole block, against the definition written out here.
  using index_detail::DeltaShuffle64;
  using index_detail::ShuffleBytes;
  using index_detail::UnshuffleBytes;
  std::mt19937_64 rng(7);
  for (size_t elem : {4, 8, 16})
    for (size_t n : {1, 15, 16, 17, 31, 32, 33, 100, 16383, 16384}) {
      std::vector<uint8_t> in(n * elem), want(in.size()), got(in.size()), back(in.size());
      for (auto& b : in) b = uint8_t(rng());
      for (size_t i = 0; i < n; ++i)
        for (size_t b = 0; b < elem; ++b) want[b * n + i] = in[i * elem + b];
      ShuffleBytes(in.data(), n, elem, got.data());
      INFO("elem " << elem << ", n " << n);
      CHECK(got == want);
      UnshuffleBytes(got.data(), n, elem, back.data());
      CHECK(back == in);
      if (elem != 8) continue;
      // Differences wrap (a damaged or descending column still round-trips): extremes mixed in.
      std::vector<uint64_t> v(n);
      for (size_t i = 0; i < n; ++i)
        v[i] = i % 5 == 0 ? uint64_t(INT64_MIN) + i : i % 7 == 0 ? uint64_t(INT64_MAX) : rng() >> (i % 40);
      std::vector<uint8_t> deltas(n * 8), want_d(n * 8), got_d(n * 8);
      for (size_t i = 0; i < n; ++i) {
        const uint64_t d = v[i] - (i ? v[i - 1] : 0);
        std::memcpy(deltas.data() + i * 8, &d, 8);
      }
      for (size_t i = 0; i < n; ++i)
        for (size_t b = 0; b < 8; ++b) want_d[b * n + i] = deltas[i * 8 + b];
      DeltaShuffle64(reinterpret_cast<const uint8_t*>(v.data()), n, got_d.data());
      CHECK(got_d == want_d);
      std::vector<uint8_t> stored(n * 8);  // a block zstd cannot shrink: the differences, unshuffled
      index_detail::Delta64(reinterpret_cast<const uint8_t*>(v.data()), n, stored.data());
      CHECK(stored == deltas);
    }
}

// Not a test: writes the fuzz_index seed corpus (valid indexes of this build's version) into
// $GT_INDEX_SEEDS. Hidden; run by hand after an index version bump.
TEST_CASE("index fuzz seeds", "[.index-seeds]") {
  const char* dir = std::getenv("GT_INDEX_SEEDS");
  REQUIRE(dir);
  std::vector<std::unique_ptr<TraceModel>> models;
  models.push_back(test::SmallTrace());
  for (uint64_t n : {200, 1500, 6000}) models.push_back(Synth(n, n));
  // A real trace with hardware counters: its summaries hold the counter tables' JSON (what=profiled).
  auto counters = LoadTraceFile(std::string(GT_TESTS_DATA) + "/counters_h200.gtrace");
  REQUIRE(counters.ok());
  REQUIRE_FALSE((*counters)->kernel_metrics.empty());
  models.push_back(std::move(*counters));
  int k = 0;
  for (const auto& m : models)
    WriteAll(std::string(dir) + "/seed" + std::to_string(k++), EncodeIndex(*m, kSource));
}

TEST_CASE("SplitIndexUrl: a remote request's path and parameters", "[index][remote]") {
  auto [what, params] = SplitIndexUrl("tiles?track=3&t0=-5&t1=100&px=1024");
  CHECK(what == "tiles");
  REQUIRE(params.size() == 4);
  CHECK(params[0] == std::pair<std::string, std::string>{"track", "3"});
  CHECK(params[1] == std::pair<std::string, std::string>{"t0", "-5"});
  CHECK(params[3] == std::pair<std::string, std::string>{"px", "1024"});
  auto [meta, none] = SplitIndexUrl("meta");
  CHECK(meta == "meta");
  CHECK(none.empty());
  auto [odd, kept] = SplitIndexUrl("event?&flag&lane=");  // empty pieces dropped, a bare key kept
  CHECK(odd == "event");
  REQUIRE(kept.size() == 2);
  CHECK(kept[0] == std::pair<std::string, std::string>{"flag", ""});
  CHECK(kept[1] == std::pair<std::string, std::string>{"lane", ""});
}

TEST_CASE("index build that spills the model to files: the same index, no file left", "[index][spill]") {
  // Enough events that the lanes' columns pass column_storage's mapping size (256 KiB), so they spill.
  std::string trace;
  {
    WriterOptions wo;
    auto w = TraceWriter::Create(MakeStringSink(&trace), wo);
    REQUIRE(w.ok());
    gt::synth::WriterSink sink(*w.value());
    gt::synth::SynthOptions o;
    o.events = 400'000;
    gt::synth::GenerateSynthTrace(sink, o);
    REQUIRE(sink.ok());
    REQUIRE(w.value()->Finish().ok());
  }
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(trace.data()), trace.size());
  const IndexSource source = FingerprintBytes(bytes);
  const std::string dir = TempPath("spill");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string in_memory = dir + "/memory.gtindex", spilled = dir + "/spilled.gtindex";

  IndexBuildReport r;
  REQUIRE(OpenOrBuildIndex(bytes, source, in_memory, {}, &r, IndexSpill::kNever).ok());
  CHECK(r.spill_dir.empty());
  CHECK(r.trace_bytes == trace.size());

  const size_t before = column_storage::SpilledColumns();
  LoadOptions spill;
  spill.spill_dir = dir;
  {
    // While the model exists its long columns are files in `dir` (unlinked: the folder shows none).
    auto model = LoadTrace(bytes, spill);
    REQUIRE(model.ok());
    CHECK(column_storage::SpilledColumns() > before);
    auto local = LoadTrace(bytes);
    REQUIRE(local.ok());
    CHECK(test::ModelDiff(**local, **model, false) == "");
    // A spilled column grows, shrinks and copies like any other.
    size_t longest = 0;
    for (size_t l = 0; l < (*model)->lanes.size(); ++l)
      if ((*model)->lanes[l].size() > (*model)->lanes[longest].size()) longest = l;
    Lane& lane = (*model)->lanes[longest];
    const Column<int64_t>& expected = (*local)->lanes[longest].start;
    const size_t n = lane.start.size();
    REQUIRE(n * sizeof(int64_t) >= (size_t{256} << 10));
    lane.start.resize(4 * n, 7);
    CHECK(lane.start[4 * n - 1] == 7);
    CHECK(lane.start[n - 1] == expected[n - 1]);
    lane.start.resize(n);
    lane.start.shrink_to_fit();
    const Column<int64_t> copy = lane.start;
    CHECK(copy == expected);
  }
  CHECK(column_storage::SpilledColumns() == before);

  REQUIRE(OpenOrBuildIndex(bytes, source, spilled, spill, &r).ok());
  CHECK(r.spill_dir == dir);
  CHECK(column_storage::SpilledColumns() == before);
  CHECK(ReadAll(spilled) == ReadAll(in_memory));
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  CHECK(files == 2);  // the two indexes; no spill file outlives its column

  // A folder that cannot hold the files is a refusal before any work, not an abort mid-build.
  LoadOptions nowhere;
  nowhere.spill_dir = dir + "/missing";
  auto refused = LoadTrace(bytes, nowhere);
  REQUIRE(!refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK(refused.status().message().find("spill folder: cannot create files in") == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("index builds spill when the trace's model would not fit in the memory available",
          "[index][spill]") {
  // About 4x the .gtrace's bytes against three quarters of what is free.
  CHECK(!IndexBuildShouldSpill(1 << 20, uint64_t{1} << 30));
  CHECK(IndexBuildShouldSpill(uint64_t{6'400} << 20, uint64_t{22} << 30));  // 1 B events on a 22 GiB machine
  CHECK(!IndexBuildShouldSpill(uint64_t{6'400} << 20, uint64_t{128} << 30));
  CHECK(!IndexBuildShouldSpill(0, 0));
  CHECK(IndexBuildShouldSpill(1, 0));
  CHECK(IndexBuildShouldSpill(UINT64_MAX / 2, UINT64_MAX));  // no overflow on the way
  CHECK(MemoryAvailableForModels() > 0);
}
