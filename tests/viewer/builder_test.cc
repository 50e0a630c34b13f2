// Model build: track layout and names, nesting depth, sorting, sparse attributes, determinism, summaries.
#include <catch2/catch.hpp>

#include "synth_trace.h"
#include "test_util.h"

using namespace gt;
using namespace gt::viewer;

static std::vector<std::string> TrackNames(const TraceModel& m) {
  std::vector<std::string> out;
  for (const auto& g : m.groups) {
    out.push_back("[" + g.name + "]");
    for (TrackId t : g.tracks) out.push_back(m.tracks[t].name + " {" + m.tracks[t].key + "}");
  }
  return out;
}

TEST_CASE("golden mini trace: groups, tracks, keys in default order", "[builder]") {
  auto m = test::SmallTrace();
  std::vector<std::string> expected = {
      "[train.py (pid 10)]",
      "main (11) · Ranges {p10/t11/ranges}",
      "main (11) · CUDA API {p10/t11/api}",
      "[GPU 0: NVIDIA H200]",
      "Stream 7 {g0/p10/c1/s7}",
      "Stream 8 {g0/p10/c1/s8}",
      "SM clock (MHz) {c/5}",
  };
  CHECK(TrackNames(*m) == expected);
  CHECK(m->event_count == 10);
  CHECK(m->sample_count == 3);
  CHECK(m->first_ns == 0);
  CHECK(m->last_ns == 2000);
}

TEST_CASE("nesting: NVTX ranges by depth, driver calls below runtime calls", "[builder]") {
  auto m = test::SmallTrace();
  const Track& ranges = m->tracks[m->FindTrackByKey("p10/t11/ranges")];
  REQUIRE(ranges.lane_count == 3);
  CHECK(m->Str(m->lanes[ranges.first_lane + 0].name[0]) == "epoch");
  CHECK(m->Str(m->lanes[ranges.first_lane + 1].name[0]) == "fwd");
  CHECK(m->Str(m->lanes[ranges.first_lane + 2].name[0]) == "inner");
  const Track& api = m->tracks[m->FindTrackByKey("p10/t11/api")];
  REQUIRE(api.lane_count == 2);
  CHECK(m->lanes[api.first_lane].size() == 3);
  CHECK(m->Str(m->lanes[api.first_lane + 1].name[0]) == "cuLaunchKernel");
  const Track& s7 = m->tracks[m->FindTrackByKey("g0/p10/c1/s7")];
  REQUIRE(s7.lane_count == 1);
  const Lane& l = m->lanes[s7.first_lane];
  REQUIRE(l.size() == 2);
  CHECK(m->Kind({s7.first_lane, 0}) == EventKind::kKernel);
  CHECK(m->Kind({s7.first_lane, 1}) == EventKind::kMemcpy);
  CHECK(m->Str(l.name[1]) == "Memcpy HtoD");
  CHECK(l.aux == Column<uint32_t>{1, 2});
  CHECK(m->launch_configs.size() == 2);
}

TEST_CASE("every lane is sorted and disjoint, even from unsorted overlapping input", "[builder]") {
  ModelBuilder b;
  test::FeedStrings(b, {"", "a", "b"});
  gt::synth::Rng rng(7);
  std::vector<NvtxRecord> v;
  for (int i = 0; i < 5000; ++i) {
    NvtxRecord r;
    r.start = rng.Below(1000000);
    r.end = r.start + rng.Below(20000);
    r.pid = 1, r.tid = 1 + rng.Below(3);
    r.message = 1 + rng.Below(2);
    v.push_back(r);
  }
  b.OnNvtx(v);
  auto m = b.Finish();
  uint64_t total = 0;
  for (const Lane& l : m->lanes) {
    total += l.size();
    for (uint32_t i = 1; i < l.size(); ++i) {
      REQUIRE(l.start[i - 1] <= l.start[i]);
      REQUIRE(l.End(i - 1) <= l.start[i]);
    }
  }
  CHECK(total == 5000);
  CHECK(m->event_count == 5000);
}

TEST_CASE("sparse attributes follow their event through sorting", "[builder]") {
  ModelBuilder b;
  test::FeedStrings(b, {"", "cudaMalloc", "cudaFree"});
  std::vector<ApiCallRecord> api;
  // Unsorted input; the 2 error codes and the 10-second call must stay attached to the right events.
  api.push_back({5000, 6000, 1, 1, 3, 0, 2, 0, 0});
  api.push_back({1000, 2000, 1, 1, 1, 0, 1, 2, 0});
  api.push_back({3000, 3000 + 10'000'000'000, 1, 1, 2, 0, 1, 0, 0});
  api.push_back({20'000'000'000, 20'000'000'100, 1, 1, 4, 0, 2, 719, 0});
  b.OnApiCalls(api);
  auto m = b.Finish();
  REQUIRE(m->lanes.size() == 2);  // the 10 s call encloses the 5000..6000 call
  const Lane& l0 = m->lanes[0];
  REQUIRE(l0.size() == 3);
  CHECK(l0.ref == Column<uint32_t>{1, 2, 4});
  CHECK(l0.ReturnCode(0) == 2);
  CHECK(l0.ReturnCode(1) == 0);
  CHECK(l0.ReturnCode(2) == 719);
  CHECK(l0.Duration(1) == 10'000'000'000);
  CHECK(l0.dur[1] == kDurOverflow);
  const Lane& l1 = m->lanes[1];
  REQUIRE(l1.size() == 1);
  CHECK(l1.ref[0] == 3);
}

TEST_CASE("builds are deterministic: same input, same keys and layout", "[builder]") {
  gt::synth::SynthOptions o;
  o.events = 20000;
  ModelBuilder b1, b2;
  gt::synth::GenerateSynthTrace(b1, o);
  gt::synth::GenerateSynthTrace(b2, o);
  auto m1 = b1.Finish(), m2 = b2.Finish();
  REQUIRE(m1->tracks.size() == m2->tracks.size());
  REQUIRE(m1->lanes.size() == m2->lanes.size());
  for (size_t i = 0; i < m1->tracks.size(); ++i) CHECK(m1->tracks[i].key == m2->tracks[i].key);
  for (size_t l = 0; l < m1->lanes.size(); ++l) {
    CHECK(m1->lanes[l].start == m2->lanes[l].start);
    CHECK(m1->lanes[l].name == m2->lanes[l].name);
  }
  // Keys round-trip on both models.
  for (LaneId l = 0; l < m1->lanes.size(); l += 3) {
    EventId e{l, m1->lanes[l].size() / 2};
    std::string key = m1->EventKey(e);
    CHECK(m2->FindEventByKey(key) == e);
  }
  CHECK(m1->FindEventByKey("nonsense").valid() == false);
  CHECK(m1->FindEventByKey("p4242/t100/api/0/999999999").valid() == false);
  CHECK(m1->FindEventByKey("p4242/t100/api/x/1").valid() == false);
}

TEST_CASE("synthetic trace: every event lands on the timeline, memory within budget", "[builder]") {
  gt::synth::SynthOptions o;
  o.events = 200000;
  ModelBuilder b;
  auto counts = gt::synth::GenerateSynthTrace(b, o);
  auto m = b.Finish();
  CHECK(m->event_count == counts.events());
  CHECK(m->sample_count == counts.samples);
  uint64_t kernels = 0;
  for (const auto& d : m->device_summaries) kernels += d.kernel_count;
  CHECK(kernels == counts.kernels);
  // 24 bytes/event all-in is the target; small traces carry fixed overhead, so allow headroom here and
  // measure the real ratio in bench/viewer.
  CHECK(double(m->MemoryBytes()) / double(m->event_count) < 32.0);
}

TEST_CASE("device summary: busy union, idle share and largest gaps", "[builder]") {
  auto m = test::SmallTrace();
  REQUIRE(m->device_summaries.size() == 1);
  const DeviceSummary& d = m->device_summaries[0];
  CHECK(d.first_ns == 250);
  CHECK(d.last_ns == 1600);
  CHECK(d.busy_ns == 1300);  // [250,1250] + [1300,1600]
  CHECK(d.idle_ns() == 50);
  CHECK(d.kernel_count == 2);
  CHECK(d.memcpy_count == 1);
  REQUIRE(d.largest_gaps.size() == 1);
  CHECK(d.largest_gaps[0] == std::pair<int64_t, int64_t>{1250, 1300});
  CHECK(d.idle_share() == Approx(50.0 / 1350.0));
}

TEST_CASE("strings lost with their chunk resolve to empty, not out of bounds", "[builder]") {
  ModelBuilder b;
  test::FeedStrings(b, {"", "known"});
  KernelRecord k;
  k.start = 0, k.end = 10, k.name = 999;  // the chunk with id 999 never arrived
  b.OnKernels({&k, 1});
  auto m = b.Finish();
  CHECK(m->Str(999).empty());
  CHECK(m->event_count == 1);
}

TEST_CASE("memory alloc/free records become a live-bytes counter", "[builder]") {
  ModelBuilder b;
  std::vector<MemoryRecord> mem(3);
  mem[0].timestamp = 10, mem[0].bytes = 100, mem[0].op = uint8_t(MemoryOp::kAlloc);
  mem[1].timestamp = 20, mem[1].bytes = 50, mem[1].op = uint8_t(MemoryOp::kAlloc);
  mem[2].timestamp = 30, mem[2].bytes = 100, mem[2].op = uint8_t(MemoryOp::kFree);
  for (auto& x : mem) x.pid = 3, x.device_id = 1;
  b.OnMemory(mem);
  auto m = b.Finish();
  REQUIRE(m->counters.size() == 1);
  CHECK(m->counters[0].value == std::vector<double>{100, 150, 50});
  CHECK(m->tracks[m->counters[0].track].name == "Device memory (bytes)");
  CHECK(m->groups[m->tracks[m->counters[0].track].group].name == "GPU 1");
}

// Brute force: the union of a device's GPU intervals, its gaps, the 256 longest (longer first, then earlier).
static DeviceSummary BruteForceSummary(const TraceModel& m, uint32_t device) {
  std::vector<std::pair<int64_t, int64_t>> iv;
  DeviceSummary s;
  for (const Track& t : m.tracks) {
    if (t.kind != TrackKind::kGpuStream || t.device_id != device) continue;
    for (uint32_t d = 0; d < t.lane_count; ++d) {
      const Lane& l = m.lanes[t.first_lane + d];
      for (uint32_t i = 0; i < l.size(); ++i) {
        iv.push_back({l.start[i], l.End(i)});
        const EventKind k = m.Kind({t.first_lane + d, i});
        s.kernel_count += k == EventKind::kKernel, s.memcpy_count += k == EventKind::kMemcpy;
        s.memset_count += k == EventKind::kMemset;
      }
    }
  }
  std::sort(iv.begin(), iv.end());
  std::vector<std::pair<int64_t, int64_t>> gaps;  // (-length, start)
  int64_t cs = iv[0].first, ce = iv[0].second;
  s.first_ns = cs;
  for (const auto& [a, b] : iv) {
    if (a > ce) {
      s.busy_ns += ce - cs;
      gaps.push_back({-(a - ce), ce});
      cs = a, ce = b;
    } else {
      ce = std::max(ce, b);
    }
  }
  s.busy_ns += ce - cs;
  s.last_ns = ce;
  std::sort(gaps.begin(), gaps.end());
  for (size_t i = 0; i < gaps.size() && i < 256; ++i)
    s.largest_gaps.push_back({gaps[i].second, gaps[i].second - gaps[i].first});
  return s;
}

TEST_CASE("device summary over many time slices equals the brute-force union", "[builder]") {
  gt::synth::SynthOptions o;
  o.events = 1'500'000;  // ~370 K GPU events per device: several slices each
  o.streams_per_device = 3;
  ModelBuilder b;
  gt::synth::GenerateSynthTrace(b, o);
  // Overlapping copies on one stream, so a device has depth lanes and a stream's events overlap.
  std::vector<MemcpyRecord> extra;
  for (int i = 0; i < 3000; ++i) {
    MemcpyRecord c;
    c.start = 1'000'000 + int64_t(i) * 7'919'000, c.end = c.start + 3'000'000 + (i % 7) * 1000;
    c.pid = 4242, c.device_id = 1, c.context_id = 1, c.stream_id = 7;
    extra.push_back(c);
  }
  b.OnMemcpys(extra);
  auto m = b.Finish();
  REQUIRE(m->device_summaries.size() == 2);
  for (const DeviceSummary& d : m->device_summaries) {
    INFO("device " << d.device_id);
    DeviceSummary want = BruteForceSummary(*m, d.device_id);
    CHECK(d.first_ns == want.first_ns);
    CHECK(d.last_ns == want.last_ns);
    CHECK(d.busy_ns == want.busy_ns);
    CHECK(d.kernel_count == want.kernel_count);
    CHECK(d.memcpy_count == want.memcpy_count);
    CHECK(d.largest_gaps == want.largest_gaps);
    CHECK(d.largest_gaps.size() == 256);
  }
  CHECK(m->tracks[m->FindTrackByKey("g1/p4242/c1/s7")].lane_count > 1);
}

TEST_CASE("lane columns keep their values across growth, mapping and shrinking", "[builder]") {
  // Doubling from a few values to several MB crosses from malloc blocks to mappings (256 KB) and grows
  // mappings in place; shrinking goes back below the mapping size.
  Column<int64_t> c;
  for (int64_t i = 0; i < (int64_t{1} << 20); ++i) c.push_back(i * 3);
  REQUIRE(c.size() == (size_t{1} << 20));
  bool same = true;
  for (size_t i = 0; i < c.size(); ++i) same &= c[i] == int64_t(i) * 3;
  CHECK(same);
  Column<int64_t> copy = c;
  CHECK(copy == c);
  c.resize(1000);
  c.shrink_to_fit();
  CHECK(c.capacity() == 1000);
  CHECK(c.back() == 999 * 3);
  c.resize(8u << 20);  // uninitialized tail, the first 1000 kept
  CHECK(c[999] == 999 * 3);
  c.resize(3);
  c.shrink_to_fit();
  CHECK(c == Column<int64_t>{0, 3, 6});
  c.insert(c.begin() + 1, copy.begin() + 10, copy.begin() + 12);
  CHECK(c == Column<int64_t>{0, 30, 33, 3, 6});
  c.erase(c.begin(), c.begin() + 2);
  CHECK(c == Column<int64_t>{33, 3, 6});
  // Values taken from the column itself while it grows.
  Column<int64_t> self{7};
  for (int i = 0; i < 20; ++i) {
    self.push_back(self.back());  // a reference into the column, which may grow
    self.back() += 1;
  }
  CHECK(self.back() == 27);
  self.insert(self.begin(), self.begin() + 18, self.end());
  CHECK(self.size() == 24);
  CHECK(self[0] == 25);
  CHECK(self[3] == 7);
  Column<uint32_t> empty;
  empty.insert(empty.end(), c.begin(), c.begin());
  CHECK(empty.empty());
  empty.shrink_to_fit();
  CHECK(empty.data() == nullptr);
}
