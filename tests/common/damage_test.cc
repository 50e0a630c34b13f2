// Damaged input: truncation at every byte, bit flips at every byte, unknown chunks, version checks, hostile
// headers, crashed segments followed by good ones. The reader must never crash, must keep every intact chunk
// and must say what it lost.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cstring>

#include "format.h"
#include "random_records.h"
#include "sweep.h"

using namespace gt;
using namespace gt::test;

namespace {

struct ChunkInfo {
  size_t begin, end;
  uint16_t type;
  uint32_t count;
};

// Walks a well-formed single-segment file (test-side parser of the documented layout).
std::vector<ChunkInfo> ListChunks(const std::string& b) {
  std::vector<ChunkInfo> out;
  size_t p = format::kSegmentHeaderSize;
  auto u = [&](size_t at) { return reinterpret_cast<const uint8_t*>(b.data()) + at; };
  while (p + format::kChunkHeaderSize <= b.size()) {
    REQUIRE(std::memcmp(u(p), format::kChunkMagic, 4) == 0);
    ChunkInfo c{p, p + format::kChunkHeaderSize + format::GetU32(u(p + 16)), format::GetU16(u(p + 4)),
                format::GetU32(u(p + 8))};
    out.push_back(c);
    p = c.end;
  }
  REQUIRE(p == b.size());
  return out;
}

std::string MakeChunk(uint16_t type, uint16_t flags, uint32_t count, const std::string& payload) {
  uint8_t h[format::kChunkHeaderSize];
  std::memcpy(h, format::kChunkMagic, 4);
  format::PutU16(h + 4, type);
  format::PutU16(h + 6, flags);
  format::PutU32(h + 8, count);
  format::PutU32(h + 12, uint32_t(payload.size()));
  format::PutU32(h + 16, uint32_t(payload.size()));
  format::PutU32(h + 20, format::Crc32c(format::Crc32c(0, h, 20), payload.data(), payload.size()));
  format::PutU32(h + 24, format::Crc32c(0, h, 24));
  return std::string(reinterpret_cast<char*>(h), sizeof h) + payload;
}

void SetVersion(std::string& b, size_t at, uint16_t major, uint16_t minor) {
  auto* h = reinterpret_cast<uint8_t*>(b.data()) + at;
  format::PutU16(h + 10, major);
  format::PutU16(h + 12, minor);
  format::PutU32(h + 16, format::Crc32c(0, h, 16));
}

// Every record list of `part` is a prefix of the one in `full`.
std::string PrefixDiff(const TraceData& full, const TraceData& part) {
  return DiffRecordLists(full, part, /*b_may_be_prefix=*/true);
}

bool HasLoss(const TraceData& t, const std::string& name) {
  for (const auto& l : t.losses)
    if (t.Str(l.name) == name && l.severity == uint8_t(Severity::kDataLoss) && !t.Str(l.detail).empty())
      return true;
  return false;
}

// Hands every record of `from` (one record kind: a decoded chunk) to `to`.
void ReplayRecords(const TraceData& from, TraceSink& to) {
  to.OnProcesses(from.processes), to.OnThreads(from.threads), to.OnDevices(from.devices);
  to.OnContexts(from.contexts), to.OnStreams(from.streams), to.OnKernels(from.kernels);
  to.OnMemcpys(from.memcpys), to.OnMemsets(from.memsets), to.OnApiCalls(from.api_calls), to.OnNvtx(from.nvtx);
  to.OnSyncs(from.syncs), to.OnMemory(from.memory), to.OnOverheads(from.overheads);
  to.OnCounterDescriptors(from.counter_descriptors), to.OnCounterSamples(from.counter_samples);
  to.OnKernelMetrics(from.kernel_metrics), to.OnStallSamples(from.stall_samples), to.OnFlows(from.flows);
  to.OnLoss(from.losses);
}

}  // namespace

TEST_CASE("every prefix of a trace loads and keeps every complete chunk", "[format][damage]") {
  TraceData in = RandomTrace(5, 4);
  std::string bytes = Encode(in, 3);
  auto chunks = ListChunks(bytes);
  REQUIRE(chunks.size() > 20);
  for (size_t len = 0; len <= bytes.size(); ++len) {
    Loaded out = Decode(bytes.substr(0, len));
    INFO("prefix " << len << " of " << bytes.size());
    if (len < format::kSegmentHeaderSize) {
      REQUIRE_FALSE(out.status.ok());
      CHECK(out.status.code() == (len == 0 ? StatusCode::kCorrupt : StatusCode::kTruncated));
      continue;
    }
    REQUIRE(out.status.ok());
    uint64_t expected = 0;
    for (const auto& c : chunks)
      if (c.end <= len) expected += c.count;
    CHECK(out.report.records == expected);
    CHECK(out.report.truncated == (len < bytes.size()));
    CHECK(out.report.chunks_lost == 0);
    if (len < bytes.size()) {
      CHECK(HasLoss(out.data, "file_truncated"));
      CHECK_FALSE(out.report.problems.empty());
    }
    CHECK(PrefixDiff(in, out.data) == "");
  }
}

TEST_CASE("a flipped byte anywhere loses exactly the chunk it hit", "[format][damage]") {
  TraceData in = RandomTrace(6, 4);
  std::string bytes = Encode(in, 3);
  auto chunks = ListChunks(bytes);
  uint64_t total = 0;
  for (const auto& c : chunks) total += c.count;
  size_t first = 0;
  for (uint8_t mask : {uint8_t(0xff), uint8_t(0x01), uint8_t(0x80)}) {
    for (size_t i = first++ % test::kSweepStride; i < bytes.size(); i += test::kSweepStride) {
      std::string damaged = bytes;
      damaged[i] = char(uint8_t(damaged[i]) ^ mask);
      Loaded out = Decode(damaged);
      INFO("byte " << i << " mask " << int(mask));
      if (i < format::kSegmentHeaderSize) {
        REQUIRE_FALSE(out.status.ok());
        CHECK_FALSE(out.status.message().empty());
        continue;
      }
      REQUIRE(out.status.ok());
      const ChunkInfo* hit = nullptr;
      for (const auto& c : chunks)
        if (i >= c.begin && i < c.end) hit = &c;
      REQUIRE(hit);
      CHECK_FALSE(out.report.clean());
      CHECK(out.report.records == total - hit->count);
      CHECK(out.report.bytes_lost == hit->end - hit->begin);
      if (hit->end == bytes.size()) {
        // A damaged last chunk with nothing valid after it reads as a torn tail.
        CHECK(out.report.truncated);
        CHECK(HasLoss(out.data, "file_truncated"));
      } else {
        CHECK(out.report.chunks_lost == 1);
        CHECK(HasLoss(out.data, "chunk_lost"));
      }
      // Lists of other kinds are complete.
      if (hit->type != uint16_t(RecordKind::kKernel)) CHECK(out.data.kernels.size() == in.kernels.size());
      if (hit->type != uint16_t(RecordKind::kStallSample))
        CHECK(out.data.stall_samples.size() == in.stall_samples.size());
    }
  }
}

TEST_CASE("unknown chunk types and flags are skipped and counted", "[format][compat]") {
  TraceData in = RandomTrace(8, 10);
  std::string bytes = Encode(in);
  std::string unknown = MakeChunk(999, 0, 5, "future payload");
  std::string unknown_flag = MakeChunk(uint16_t(RecordKind::kKernel), 0x40, 1, "?");
  bytes.insert(format::kSegmentHeaderSize, unknown + unknown_flag);
  bytes += std::string();
  Loaded out = Decode(bytes);
  REQUIRE(out.status.ok());
  CHECK(out.report.clean());
  CHECK(out.report.chunks_unknown == 2);
  CHECK(DiffTraces(in, out.data) == "");
}

TEST_CASE("a newer minor version reads - extra columns are ignored and missing ones reported",
          "[format][compat]") {
  std::string bytes;
  {
    auto w = TraceWriter::Create(MakeStringSink(&bytes));
    REQUIRE(w.ok());
    REQUIRE((*w)->Flush().ok());
  }
  SetVersion(bytes, 0, format::kVersionMajor, format::kVersionMinor + 3);
  // ThreadRecord: 3 columns (pid, tid, name) + one a future minor appended.
  std::string payload = {4, 2, 2, 2, 2, char(10), char(12), 0, 7};  // lengths are (bytes << 1 | repeat)
  bytes += MakeChunk(uint16_t(RecordKind::kThread), 0, 1, payload);
  std::string short_payload = {2, 2, 2, char(10), char(12)};
  bytes += MakeChunk(uint16_t(RecordKind::kThread), 0, 1, short_payload);
  bytes += MakeChunk(format::kChunkEndOfSegment, 0, 0, "");
  Loaded out = Decode(bytes);
  REQUIRE(out.status.ok());
  CHECK(out.report.version_minor == format::kVersionMinor + 3);
  REQUIRE(out.data.threads.size() == 1);
  CHECK(out.data.threads[0].pid == 5);
  CHECK(out.data.threads[0].tid == 6);
  CHECK(out.report.chunks_lost == 1);
  REQUIRE_FALSE(out.report.problems.empty());
  CHECK_THAT(out.report.problems[0], Catch::Contains("columns"));
}

TEST_CASE("a newer major version is rejected with a clear message", "[format][compat]") {
  std::string bytes = Encode(RandomTrace(9, 2));
  SetVersion(bytes, 0, format::kVersionMajor + 1, 0);
  Loaded out = Decode(bytes);
  REQUIRE_FALSE(out.status.ok());
  CHECK(out.status.code() == StatusCode::kUnsupported);
  CHECK_THAT(out.status.message(), Catch::Contains("newer") && Catch::Contains("upgrade gtrace"));

  // As a later segment of a concatenated file: skipped and reported, the first segment loads.
  TraceData a = RandomTrace(10, 3);
  std::string good = Encode(a);
  std::string future = Encode(RandomTrace(11, 3));
  SetVersion(future, 0, format::kVersionMajor + 1, 0);
  Loaded mixed = Decode(good + future);
  REQUIRE(mixed.status.ok());
  CHECK(mixed.report.segments == 2);
  CHECK(mixed.report.chunks_lost == 1);
  CHECK(mixed.data.kernels.size() == a.kernels.size());
  REQUIRE_FALSE(mixed.report.problems.empty());
  CHECK_THAT(mixed.report.problems[0], Catch::Contains("newer"));
}

TEST_CASE("a crashed segment followed by a complete one", "[format][segments][damage]") {
  TraceData a = RandomTrace(12, 6);
  TraceData b = RandomTrace(13, 6);
  std::string crashed = Encode(a, 2, /*finish=*/false);
  auto chunks = ListChunks(crashed);
  std::string good = Encode(b);
  // Cut the crashed file in the middle of its last chunk, and at a chunk boundary.
  for (size_t cut : {chunks.back().begin + 40, chunks.back().begin + 5, chunks.back().begin}) {
    Loaded out = Decode(crashed.substr(0, cut) + good);
    INFO("cut at " << cut);
    REQUIRE(out.status.ok());
    CHECK(out.report.segments == 2);
    CHECK(out.report.truncated);
    CHECK(HasLoss(out.data, "file_truncated"));
    // Every record of the complete segment is there, after the first segment's surviving records.
    REQUIRE(out.data.kernels.size() >= b.kernels.size());
    size_t off = out.data.kernels.size() - b.kernels.size();
    Strings sb{b, out.data};
    for (size_t i = 0; i < b.kernels.size(); ++i)
      CHECK(Diff(sb, b.kernels[i], out.data.kernels[off + i]) == "");
  }
}

TEST_CASE("hostile headers with valid checksums cannot allocate or overrun", "[format][damage]") {
  std::string base;
  {
    auto w = TraceWriter::Create(MakeStringSink(&base));
    REQUIRE(w.ok());
  }
  // Record count far above what the payload can hold.
  std::string payload = {3, 2, 2, 2, 2, 4, 0};
  std::string b1 = base + MakeChunk(uint16_t(RecordKind::kThread), 0, 200000, payload);
  Loaded o1 = Decode(b1);
  REQUIRE(o1.status.ok());
  CHECK(o1.report.chunks_lost == 1);
  CHECK(o1.data.threads.empty());
  // Strings chunk claiming ids far beyond the file size.
  std::string s = {char(0xff), char(0xff), char(0xff), char(0x7f), 1, 1, 'a'};
  Loaded o2 = Decode(base + MakeChunk(uint16_t(RecordKind::kStrings), 0, 1, s));
  REQUIRE(o2.status.ok());
  CHECK(o2.report.chunks_lost == 1);
  // A zstd flag on garbage.
  Loaded o3 = Decode(base + MakeChunk(uint16_t(RecordKind::kKernel), format::kChunkFlagZstd, 1, "garbage!"));
  REQUIRE(o3.status.ok());
  CHECK(o3.report.chunks_lost == 1);
  CHECK_THAT(o3.report.problems[0], Catch::Contains("zstd"));
  // Pure noise after a valid header: resync finds nothing, nothing crashes, the tail is reported.
  std::string noise(5000, 'G');
  Loaded o4 = Decode(base + noise);
  REQUIRE(o4.status.ok());
  CHECK(o4.report.truncated);
  CHECK(o4.report.bytes_lost == noise.size());
}

TEST_CASE("a malformed column rejects its whole chunk even one larger than a delivery batch",
          "[format][damage]") {
  std::string base;
  {
    auto w = TraceWriter::Create(MakeStringSink(&base));
    REQUIRE(w.ok());
  }
  // Threads: pid (Id), tid (Id), name (Str), all stored. Records are handed to the sink in batches, so the
  // reader must find a short, long or unterminated column before the first batch goes out.
  for (uint32_t n : {10u, 3000u, 70000u}) {
    for (int damage = 0; damage < 3; ++damage) {
      std::string payload;
      auto put_varint = [&](uint64_t v) {
        while (v >= 0x80) payload += char(uint8_t(v) | 0x80), v >>= 7;
        payload += char(v);
      };
      std::string pid(n, char(0)), tid(n, char(2)), name(n, char(0));
      if (damage == 0) name.pop_back();           // one value short
      if (damage == 1) name += char(0);           // one value too many
      if (damage == 2) name.back() = char(0x80);  // the last value never ends
      put_varint(3);
      for (const std::string* c : {&pid, &tid, &name}) put_varint(uint64_t(c->size()) << 1);
      payload += pid + tid + name;
      Loaded o = Decode(base + MakeChunk(uint16_t(RecordKind::kThread), 0, n, payload));
      INFO("n " << n << " damage " << damage);
      REQUIRE(o.status.ok());
      CHECK(o.report.chunks_lost == 1);
      CHECK(o.data.threads.empty());
      REQUIRE(!o.report.problems.empty());
      CHECK_THAT(o.report.problems[0], Catch::Contains("column 2"));
    }
    // The same chunk undamaged loads every record.
    std::string payload;
    payload += char(3);
    std::string len;
    for (uint64_t v = uint64_t(n) << 1; v >= 0x80; v >>= 7) len += char(uint8_t(v) | 0x80);
    len += char(uint8_t(uint64_t(n) << 1 >> (7 * len.size())));
    payload += len + len + len + std::string(n, char(0)) + std::string(n, char(2)) + std::string(n, char(0));
    Loaded ok = Decode(base + MakeChunk(uint16_t(RecordKind::kThread), 0, n, payload));
    REQUIRE(ok.status.ok());
    CHECK(ok.report.chunks_lost == 0);
    REQUIRE(ok.data.threads.size() == n);
    CHECK(ok.data.threads.back().tid == n);
  }
}

// Two ways of reading the same bytes must agree on the status, the loss report and every record.
static void CheckSameLoad(const Loaded& a, const Loaded& b) {
  CHECK(a.status.ok() == b.status.ok());
  CHECK(a.report.records == b.report.records);
  CHECK(a.report.chunks_ok == b.report.chunks_ok);
  CHECK(a.report.chunks_lost == b.report.chunks_lost);
  CHECK(a.report.bytes_lost == b.report.bytes_lost);
  CHECK(a.report.truncated == b.report.truncated);
  CHECK(a.report.problems == b.report.problems);
  CHECK(DiffTraces(a.data, b.data) == "");
}

TEST_CASE("parallel decoding reads what one thread reads - intact damaged and truncated files",
          "[format][threads]") {
  auto read = [](const std::string& bytes, unsigned threads) {
    Loaded l;
    auto r = ReadTrace({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, l.data, threads);
    if (r.ok())
      l.report = *r;
    else
      l.status = r.status();
    return l;
  };
  // Many small chunks (3 records), two segments: Steps cover several chunks and stop at the segment header.
  TraceData in = RandomTrace(11, 40);
  std::string one = Encode(in, 3);
  std::string bytes = one + Encode(RandomTrace(12, 40), 5);
  for (unsigned threads : {2u, 3u, 8u}) {
    INFO("threads " << threads);
    Loaded serial = read(bytes, 1), parallel = read(bytes, threads);
    REQUIRE(serial.status.ok());
    CHECK(serial.report.clean());
    CheckSameLoad(serial, parallel);
  }
  // Damage: every 29th byte flipped, and cuts at every 23rd byte, of the first segment.
  for (size_t i = format::kSegmentHeaderSize; i < one.size(); i += 29 * test::kSweepStride) {
    std::string damaged = one;
    damaged[i] = char(uint8_t(damaged[i]) ^ 0xff);
    INFO("flipped byte " << i);
    CheckSameLoad(read(damaged, 1), read(damaged, 4));
  }
  for (size_t cut = format::kSegmentHeaderSize; cut < one.size(); cut += 23 * test::kSweepStride) {
    std::string part = one.substr(0, cut);
    INFO("cut at " << cut);
    CheckSameLoad(read(part, 1), read(part, 3));
  }
}

TEST_CASE("split reading (Walk, Decode, Settle) reads what Step reads - intact damaged and truncated files",
          "[format][threads]") {
  // Walk windows of `window` chunks; the pending chunks decoded in reverse order (as threads might finish),
  // each into a sink of its own, then replayed and settled in file order.
  auto split = [](const std::string& bytes, uint32_t window) {
    Loaded l;
    TraceReader reader;
    Status st = reader.Open({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
    if (!st.ok()) {
      l.status = st;
      return l;
    }
    std::vector<PendingChunk> pending;
    TraceReader::Decoder decoder;
    while (!reader.done()) {
      pending.clear();
      reader.Walk(l.data, window, &pending);
      std::vector<TraceData> parts(pending.size());
      std::vector<Status> status(pending.size());
      for (size_t i = pending.size(); i-- > 0;)
        status[i] = TraceReader::Decode(pending[i], parts[i], decoder);
      for (size_t i = 0; i < pending.size(); ++i) {
        CHECK(parts[i].strings.size() == 1);  // records only: strings come from the walk
        ReplayRecords(parts[i], l.data);
        reader.Settle(pending[i], status[i], l.data);
      }
    }
    l.report = reader.report();
    return l;
  };
  TraceData in = RandomTrace(21, 40);
  std::string one = Encode(in, 3);
  std::string bytes = one + Encode(RandomTrace(22, 40), 5);
  for (uint32_t window : {1u, 4u, 64u}) {
    INFO("window " << window);
    Loaded serial = Decode(bytes), s = split(bytes, window);
    REQUIRE(serial.status.ok());
    CHECK(serial.report.clean());
    CheckSameLoad(serial, s);
  }
  for (size_t i = format::kSegmentHeaderSize; i < one.size(); i += 31 * test::kSweepStride) {
    std::string damaged = one;
    damaged[i] = char(uint8_t(damaged[i]) ^ 0xff);
    INFO("flipped byte " << i);
    CheckSameLoad(Decode(damaged), split(damaged, 7));
  }
  for (size_t cut = format::kSegmentHeaderSize; cut < one.size(); cut += 37 * test::kSweepStride) {
    std::string part = one.substr(0, cut);
    INFO("cut at " << cut);
    CheckSameLoad(Decode(part), split(part, 5));
  }
  // A chunk whose checksum holds but whose columns do not (found while decoding): lost, and reported.
  std::string base;
  {
    auto w = TraceWriter::Create(MakeStringSink(&base));
    REQUIRE(w.ok());
  }
  std::string bad = base + MakeChunk(uint16_t(RecordKind::kThread), 0, 2,
                                     std::string("\x03\x04\x04\x02\x00\x00\x02\x02\x00", 9));
  Loaded lost = split(bad, 4);
  REQUIRE(lost.status.ok());
  CHECK(lost.report.chunks_lost == 1);
  CHECK(lost.data.threads.empty());
  CHECK(HasLoss(lost.data, "chunk_lost"));
}

TEST_CASE("a lost strings chunk leaves its ids empty and never points at other strings", "[format][damage]") {
  std::string bytes;
  auto w = TraceWriter::Create(MakeStringSink(&bytes));
  REQUIRE(w.ok());
  ThreadRecord t1{1, 1, (*w)->Intern("first")};
  (*w)->Add(t1);
  REQUIRE((*w)->Flush().ok());
  ThreadRecord t2{1, 2, (*w)->Intern("second")};
  (*w)->Add(t2);
  REQUIRE((*w)->Flush().ok());
  ThreadRecord t3{1, 3, (*w)->Intern("third")};
  (*w)->Add(t3);
  REQUIRE((*w)->Finish().ok());
  auto chunks = ListChunks(bytes);
  // Damage the second strings chunk.
  int seen = 0;
  for (const auto& c : chunks)
    if (c.type == uint16_t(RecordKind::kStrings) && ++seen == 2) bytes[c.begin + 30] ^= 0x55;
  Loaded out = Decode(bytes);
  REQUIRE(out.status.ok());
  REQUIRE(out.data.threads.size() == 3);
  CHECK(out.data.Str(out.data.threads[0].name) == "first");
  CHECK(out.data.Str(out.data.threads[1].name) == "");
  CHECK(out.data.Str(out.data.threads[2].name) == "third");
}

TEST_CASE("incremental reading reports progress", "[format]") {
  std::string bytes = Encode(RandomTrace(14, 50), 10);
  TraceReader reader;
  REQUIRE(reader.Open({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}).ok());
  TraceData data;
  double last = -1;
  int steps = 0;
  while (!reader.done()) {
    reader.Step(data, 3);
    CHECK(reader.progress() >= last);
    last = reader.progress();
    ++steps;
  }
  CHECK(steps > 5);
  CHECK(last == 1.0);
  CHECK(reader.report().clean());
}

TEST_CASE("not a trace or empty input is an error and not a crash", "[format]") {
  CHECK_FALSE(Decode("").status.ok());
  Loaded json = Decode("{\"traceEvents\":[]}");
  REQUIRE_FALSE(json.status.ok());
  CHECK_THAT(json.status.message(), Catch::Contains("not a .gtrace"));
  CHECK(LooksLikeGtrace({reinterpret_cast<const uint8_t*>("GTRACE\r\n\x1a\n"), 10}));
  CHECK_FALSE(LooksLikeGtrace({reinterpret_cast<const uint8_t*>("GTRACE"), 6}));
}

namespace {
class FailingSink : public ByteSink {
 public:
  int writes_left = 3;
  Status Write(std::span<const uint8_t>) override {
    return writes_left-- > 0 ? Status::Ok() : IoError("disk full");
  }
};
}  // namespace

TEST_CASE("a failing sink makes the writer's error sticky and counts lost records", "[format][writer]") {
  auto w = TraceWriter::Create(std::make_unique<FailingSink>(), WriterOptions{4, 1});
  REQUIRE(w.ok());
  for (uint32_t i = 0; i < 100; ++i) (*w)->Add(ThreadRecord{1, i, 0});
  Status s = (*w)->Finish();
  CHECK_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("disk full"));
  CHECK((*w)->records_written() + (*w)->records_lost() == 100);
  CHECK((*w)->records_lost() > 0);
}

TEST_CASE("file sinks refuse to overwrite unless asked and ReadFileBytes errors are clear", "[format][io]") {
  char tmpl[] = "/tmp/gt_test_XXXXXX";
  int fd = mkstemp(tmpl);
  REQUIRE(fd >= 0);
  close(fd);
  std::string path = tmpl;
  auto s = MakeFileSink(path, false);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.status().message(), Catch::Contains("already exists"));
  auto s2 = MakeFileSink(path, true);
  REQUIRE(s2.ok());
  {
    auto w = TraceWriter::Create(std::move(*s2));
    REQUIRE(w.ok());
    (*w)->Add(ThreadRecord{7, 8, (*w)->Intern("worker")});
    REQUIRE((*w)->Finish().ok());
  }
  auto bytes = ReadFileBytes(path);
  REQUIRE(bytes.ok());
  Loaded out = Decode(*bytes);
  REQUIRE(out.status.ok());
  REQUIRE(out.data.threads.size() == 1);
  CHECK(out.data.Str(out.data.threads[0].name) == "worker");
  auto small = ReadFileBytes(path, 10);
  REQUIRE_FALSE(small.ok());
  CHECK(small.status().code() == StatusCode::kResourceExhausted);
  unlink(path.c_str());
  auto missing = ReadFileBytes("/nonexistent/x.gtrace");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK_THAT(missing.status().ToString(), Catch::Contains("/nonexistent/x.gtrace"));
}

TEST_CASE("CRC32C matches the standard check value on both code paths", "[format]") {
  const char* check = "123456789";
  CHECK(format::Crc32c(0, check, 9) == 0xE3069283u);
  CHECK(format::Crc32cPortable(0, check, 9) == 0xE3069283u);
  Rng r(3);
  std::string data(100000, '\0');
  for (auto& ch : data) ch = char(r.g());
  // Around the hardware path's three-stream lengths (3 x 256 and 3 x 8192 bytes).
  for (size_t len :
       {0, 1, 7, 8, 9, 63, 64, 65, 767, 768, 769, 1000, 9999, 24575, 24576, 24577, 50000, 99999}) {
    uint32_t a = format::Crc32c(0, data.data(), len);
    CHECK(a == format::Crc32cPortable(0, data.data(), len));
    // Continuing a CRC over two pieces equals one pass.
    CHECK(format::Crc32c(format::Crc32c(0, data.data(), len / 3), data.data() + len / 3, len - len / 3) == a);
  }
}

TEST_CASE("varints decoded through the terminator bitmap match the byte loop", "[format]") {
  Rng r(11);
  std::vector<uint64_t> values;
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 5000; ++i) {
    const int bits = int(r.g() % 65);  // every length from 1 to 10 bytes
    const uint64_t v = bits == 0 ? 0 : (r.g() >> (64 - bits));
    values.push_back(v);
    uint8_t buf[10];
    bytes.insert(bytes.end(), buf, buf + format::WriteVarint(buf, v));
  }
  const size_t n = bytes.size();
  bytes.resize(n + 64, 0);  // the scan and the reader may read past the column
  std::vector<uint64_t> ends((n + 63) / 64);
  const format::VarintStats st = format::ScanVarints(bytes.data(), n, ends.data());
  CHECK(st.values == values.size());
  uint64_t one = 0, two = 0;
  for (uint64_t v : values) one += v < 0x80, two += v >= 0x80 && v < 0x4000;
  CHECK(st.one == one);
  CHECK(st.two == two);
  format::ColumnReader c{bytes.data(), bytes.data() + n};
  c.ends = ends.data();
  c.base = bytes.data();
  for (bool pext : {false, true}) {
    format::SetFastPextForTesting(pext);
    // Starting at every value of the first few words (a block may start anywhere in a bitmap word).
    size_t at = 0;
    for (size_t first = 0; first < 100; ++first) {
      c.p = bytes.data() + at;
      auto check = [&](auto reader) {
        for (size_t i = first; i < values.size(); ++i) {
          const uint64_t v = reader.Varint();
          if (v != values[i]) FAIL("value " << i << " from " << first << ": " << v << " != " << values[i]);
        }
        CHECK_FALSE(reader.bad);
        CHECK(reader.p() == bytes.data() + n);
      };
      if (format::FastPext())
        check(format::MaskReader<true>(c));
      else
        check(format::MaskReader<false>(c));
      uint8_t buf[10];
      at += format::WriteVarint(buf, values[first]);
    }
  }
  format::SetFastPextForTesting(true);
  // An 11-byte varint is malformed.
  std::vector<uint8_t> bad(11, 0x80);
  bad.push_back(0);  // the 12th byte ends it
  bad.resize(12 + 64, 0);
  std::vector<uint64_t> bad_ends(1);
  REQUIRE(format::ScanVarints(bad.data(), 12, bad_ends.data()).values == 1);
  format::ColumnReader b{bad.data(), bad.data() + 12};
  b.ends = bad_ends.data();
  b.base = bad.data();
  format::MaskReader<false> m(b);
  m.Varint();
  CHECK(m.bad);
}

TEST_CASE("an over-long varint in a column of mixed lengths rejects its chunk", "[format][damage]") {
  std::string base;
  {
    auto w = TraceWriter::Create(MakeStringSink(&base));
    REQUIRE(w.ok());
  }
  // Threads (pid, tid, name): tids of 1 to 3 bytes take the bitmap path, one of them 11 bytes long.
  const uint32_t n = 600;
  std::string tid;
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t buf[10];
    const uint64_t zig = uint64_t(i % 3 == 0 ? 2 : i % 3 == 1 ? 400 : 40000);  // deltas of 1, 200, 20000
    if (i == 300)
      tid += std::string(10, char(0x80)) + char(1);
    else
      tid.append(reinterpret_cast<char*>(buf), format::WriteVarint(buf, zig));
  }
  std::string payload;
  auto put_varint = [&](uint64_t v) {
    uint8_t buf[10];
    payload.append(reinterpret_cast<char*>(buf), format::WriteVarint(buf, v));
  };
  put_varint(3);
  put_varint(uint64_t(n) << 1);
  put_varint(uint64_t(tid.size()) << 1);
  put_varint(uint64_t(n) << 1);
  payload += std::string(n, char(0)) + tid + std::string(n, char(0));
  // A second, intact chunk after it: the columns of the first have readable bytes after them.
  std::string good;
  {
    TraceData in;
    in.threads.push_back({1, 2, 0});
    good = Encode(in);
  }
  const std::string file = base + MakeChunk(uint16_t(RecordKind::kThread), 0, n, payload) +
                           good.substr(format::kSegmentHeaderSize);
  Loaded o = Decode(file);
  REQUIRE(o.status.ok());
  CHECK(o.report.chunks_lost == 1);
  CHECK(o.data.threads.size() == 1);
  REQUIRE(!o.report.problems.empty());
  CHECK_THAT(o.report.problems[0], Catch::Contains("column 1"));
}
