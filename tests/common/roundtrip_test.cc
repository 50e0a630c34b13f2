// Round trips: every record kind, every field, randomized with fixed seeds; a large trace; concatenation.
#include <catch2/catch.hpp>
#include <cstring>

#include "format.h"
#include "random_records.h"

using namespace gt;
using namespace gt::test;

TEST_CASE("every record kind round-trips field by field", "[format]") {
  for (uint64_t seed : {1, 2, 3, 42}) {
    for (uint32_t chunk : {1u, 7u, 64u * 1024}) {
      TraceData in = RandomTrace(seed, 300);
      std::string bytes = Encode(in, chunk);
      Loaded out = Decode(bytes);
      INFO("seed " << seed << " chunk " << chunk);
      REQUIRE(out.status.ok());
      CHECK(out.report.clean());
      CHECK(out.report.problems.empty());
      CHECK(out.report.segments == 1);
      CHECK(out.report.version_major == 1);
      CHECK(DiffTraces(in, out.data) == "");
    }
  }
}

TEST_CASE("an empty trace round-trips", "[format]") {
  TraceData in;
  Loaded out = Decode(Encode(in));
  REQUIRE(out.status.ok());
  CHECK(out.report.clean());
  CHECK(out.report.records == 1);  // the metadata record
  CHECK(out.data.EventCount() == 0);
  CHECK(DiffTraces(in, out.data) == "");
}

TEST_CASE("interning is idempotent and 0 is the empty string", "[format]") {
  std::string bytes;
  auto w = TraceWriter::Create(MakeStringSink(&bytes));
  REQUIRE(w.ok());
  CHECK((*w)->Intern("") == 0);
  StringId a = (*w)->Intern("alpha");
  CHECK((*w)->Intern("beta") != a);
  CHECK((*w)->Intern("alpha") == a);
}

TEST_CASE("a 1M-event trace round-trips", "[format][large]") {
  Rng r(7);
  TraceData in;
  in.strings = {"", "k0", "k1", "cudaLaunchKernel"};
  const size_t n = 1'000'000;
  in.kernels.resize(n / 2);
  in.api_calls.resize(n / 2);
  int64_t t = 1'000'000;
  for (size_t i = 0; i < n / 2; ++i) {
    auto& k = in.kernels[i];
    auto& a = in.api_calls[i];
    a.start = t, a.end = t + 2000 + int64_t(r.g() % 500), a.pid = 10, a.tid = 11,
    a.correlation_id = uint32_t(i + 1);
    a.name = 3, a.callback_id = 211;
    k.start = t + 5000, k.end = k.start + 10000 + int64_t(r.g() % 1000), k.pid = 10, k.stream_id = 7;
    k.correlation_id = uint32_t(i + 1), k.name = 1 + (i % 2), k.grid = {uint32_t(i % 100), 1, 1};
    t += 3000 + int64_t(r.g() % 4000);
  }
  std::string bytes = Encode(in);
  Loaded out = Decode(bytes);
  REQUIRE(out.status.ok());
  CHECK(out.report.clean());
  CHECK(out.report.records >= n);
  CHECK(DiffTraces(in, out.data) == "");
  INFO("bytes/event " << double(bytes.size()) / n);
  CHECK(bytes.size() < n * 8);  // loose sanity bound; the real size target lives in bench/format
}

TEST_CASE("concatenated files read as one trace with remapped string ids", "[format][segments]") {
  TraceData a = RandomTrace(11, 50);
  TraceData b = RandomTrace(12, 60);
  std::string bytes = Encode(a) + Encode(b);
  Loaded out = Decode(bytes);
  REQUIRE(out.status.ok());
  CHECK(out.report.clean());
  CHECK(out.report.segments == 2);
  // Records of segment 2 follow those of segment 1; strings resolve to each segment's own text.
  TraceData expected = a;
  auto append = [&](auto& dst, const auto& src) { dst.insert(dst.end(), src.begin(), src.end()); };
  // Rebase b's string ids onto expected's table so DiffTraces compares text.
  TraceData b_in_a = b;
  (void)b_in_a;
  Strings sa{a, out.data};
  Strings sb{b, out.data};
  REQUIRE(out.data.kernels.size() == a.kernels.size() + b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) CHECK(Diff(sa, a.kernels[i], out.data.kernels[i]) == "");
  for (size_t i = 0; i < b.kernels.size(); ++i)
    CHECK(Diff(sb, b.kernels[i], out.data.kernels[a.kernels.size() + i]) == "");
  for (size_t i = 0; i < b.stall_samples.size(); ++i)
    CHECK(Diff(sb, b.stall_samples[i], out.data.stall_samples[a.stall_samples.size() + i]) == "");
  (void)append;
  (void)expected;
}

TEST_CASE("metadata written twice keeps the latest values", "[format]") {
  std::string bytes;
  auto w = TraceWriter::Create(MakeStringSink(&bytes));
  REQUIRE(w.ok());
  TraceMetadata m;
  m.entries = {{"host", "a"}, {"command_line", "x"}};
  (*w)->SetMetadata(m);
  REQUIRE((*w)->Flush().ok());
  m.entries[0].second = "b";
  m.entries.push_back({"end_reason", "exited"});
  (*w)->SetMetadata(m);
  REQUIRE((*w)->Finish().ok());
  Loaded out = Decode(bytes);
  REQUIRE(out.status.ok());
  REQUIRE(out.data.metadata.Find("host"));
  CHECK(*out.data.metadata.Find("host") == "b");
  CHECK(*out.data.metadata.Find("end_reason") == "exited");
  CHECK(out.data.metadata.entries.size() == 3);
}

TEST_CASE("constant and near-constant columns (repeat encoding) round-trip at every size", "[format]") {
  // Sizes around the 256-record codec block and the reader's 2048-record delivery batch (constant columns are
  // stamped from a prototype record from the second block on).
  for (uint32_t n : {1u, 2u, 3u, 255u, 256u, 257u, 513u, 1000u, 2047u, 2048u, 2049u, 5000u}) {
    for (int pattern = 0; pattern < 4; ++pattern) {
      TraceData in;
      in.strings = {"", "k"};
      for (uint32_t i = 0; i < n; ++i) {
        KernelRecord k;
        k.name = 1;
        k.pid = 42;
        // 0: all constant; 1: correlation ids +1 (delta repeat); 2: last record differs; 3: first differs
        k.correlation_id = pattern == 1 ? 100 + i : 7;
        k.start = 1000 + 10 * int64_t(i);
        k.end = k.start + 5;
        k.grid = {pattern == 2 && i == n - 1 ? 9u : 1u, pattern == 3 && i == 0 ? 300u : 1u, 1};
        k.launch_type = uint8_t(pattern == 2 && i == n - 1 ? 200 : 4);
        k.graph_node_id = UINT64_MAX;
        in.kernels.push_back(k);
      }
      Loaded out = Decode(Encode(in));
      INFO("n " << n << " pattern " << pattern);
      REQUIRE(out.status.ok());
      CHECK(DiffTraces(in, out.data) == "");
    }
  }
}

TEST_CASE("varint columns of mixed lengths encode and decode the same with and without PEXT/PDEP",
          "[format]") {
  // Random records mix every varint width, so their columns take the writer's branch-free varint path and
  // the reader's terminator-bitmap path; the portable code and BMI2's (where this CPU has it fast) must
  // write the same bytes and read them back.
  for (uint64_t seed : {5, 6}) {
    for (uint32_t n : {255u, 256u, 257u, 3000u}) {
      TraceData in = RandomTrace(seed, n);
      std::string bytes[2];
      for (bool pext : {false, true}) {
        format::SetFastPextForTesting(pext);
        bytes[pext] = Encode(in);
        Loaded out = Decode(bytes[pext]);
        INFO("pext " << pext << " seed " << seed << " n " << n);
        REQUIRE(out.status.ok());
        CHECK(out.report.clean());
        CHECK(DiffTraces(in, out.data) == "");
      }
      CHECK(bytes[0] == bytes[1]);
    }
  }
  format::SetFastPextForTesting(true);
}

TEST_CASE("the branch-free varint writer writes what WriteVarint writes", "[format]") {
  Rng r(12);
  for (int i = 0; i < 100000; ++i) {
    const int bits = int(r.g() % 65);
    const uint64_t v = bits == 0 ? 0 : (r.g() >> (64 - bits));
    uint8_t want[10], got[16];
    const size_t n = format::WriteVarint(want, v);
    for (bool pdep : {false, true}) {
      std::memset(got, 0xee, sizeof got);
      const size_t m = pdep && format::FastPext() ? format::WriteVarintFlat<true>(got, v)
                                                  : format::WriteVarintFlat<false>(got, v);
      if (m != n || std::memcmp(want, got, n) != 0) FAIL("value " << v << " pdep " << pdep);
    }
  }
}
