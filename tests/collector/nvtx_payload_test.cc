// NVTX extended payloads decoded from bytes built exactly as NCCL builds them (no GPU, no NVTX runtime).
//
// The structs and schema tables below mirror NCCL's, as data: src/include/nvtx_payload_schemas.h,
// src/include/nvtx.h (schema ids: NVTX_SID_*, NVTX_PAYLOAD_ENTRY_NCCL_REDOP) and src/init_nvtx.cc (the
// reduction-op enum) of github.com/NVIDIA/nccl at v2.30.7 (master, commit 5067397c, June 2026). NCCL's
// helper macros give every entry its offsetof() and no schema name; payloadStaticSize = sizeof(struct).
#include <catch2/catch.hpp>

#include <cstring>

#include "decode/nvtx_payload.h"

using namespace gt;
using namespace gt::decode;

namespace {

constexpr uint64_t kStart = nvtxp::kSchemaIdStaticStart;
// nvtx.h: NVTX_SID_*.
constexpr uint64_t kSidCommInitRank = kStart + 0, kSidAllGather = kStart + 4, kSidAllReduce = kStart + 5,
                   kSidBroadcast = kStart + 6, kSidSend = kStart + 9, kSidRedOp = kStart + 24;
// NVTX_PAYLOAD_ENTRY_TYPE_*.
constexpr uint64_t kTypeInt = 5, kTypeUint64 = 18, kTypeSize = 22, kTypeChar = 1;
constexpr uint64_t kDomain = 0x1234;  // a domain handle value (NCCL's "NCCL" domain)

// nvtx_payload_schemas.h, the structs its macros define.
struct NcclNvtxParamsCommInitRank {
  uint64_t newcomm;
  int nranks, myrank, cudaDev;
};
struct NcclNvtxParamsAllGather {
  uint64_t comm;
  size_t bytes;
};
struct NcclNvtxParamsAllReduce {
  uint64_t comm;
  size_t bytes;
  int op;  // ncclRedOp_t
};
struct NcclNvtxParamsBroadcast {
  uint64_t comm;
  size_t bytes;
  int root;
};
struct NcclNvtxParamsSendRecv {
  uint64_t comm;
  size_t bytes;
  int peer;
};

PayloadSchema Schema(uint64_t id, size_t size, std::vector<PayloadEntry> entries) {
  PayloadSchema s;
  s.id = id, s.static_size = size, s.entries = std::move(entries);
  return s;
}

// The registrations NCCL makes (payload_schema in nvtx.h; initNvtxRegisteredEnums in init_nvtx.cc).
void RegisterNccl(PayloadRegistry& r) {
  const char* comm = "NCCL communicator ID";
  const char* size = "Message size [bytes]";
  REQUIRE(
      r.AddSchema(kDomain,
                  Schema(kSidCommInitRank, sizeof(NcclNvtxParamsCommInitRank),
                         {{0, kTypeUint64, comm, 0, offsetof(NcclNvtxParamsCommInitRank, newcomm)},
                          {0, kTypeInt, "No. of ranks", 0, offsetof(NcclNvtxParamsCommInitRank, nranks)},
                          {0, kTypeInt, "Rank", 0, offsetof(NcclNvtxParamsCommInitRank, myrank)},
                          {0, kTypeInt, "CUDA device", 0, offsetof(NcclNvtxParamsCommInitRank, cudaDev)}}))
          .ok());
  REQUIRE(r.AddSchema(kDomain, Schema(kSidAllGather, sizeof(NcclNvtxParamsAllGather),
                                      {{0, kTypeUint64, comm, 0, offsetof(NcclNvtxParamsAllGather, comm)},
                                       {0, kTypeSize, size, 0, offsetof(NcclNvtxParamsAllGather, bytes)}}))
              .ok());
  PayloadEnum redop;
  redop.id = kSidRedOp, redop.size = sizeof(int);
  redop.values = {{"Sum", 0}, {"Product", 1}, {"Max", 2}, {"Min", 3}, {"Avg", 4}};
  REQUIRE(r.AddEnum(kDomain, redop).ok());
  REQUIRE(r.AddSchema(kDomain, Schema(kSidAllReduce, sizeof(NcclNvtxParamsAllReduce),
                                      {{0, kTypeUint64, comm, 0, offsetof(NcclNvtxParamsAllReduce, comm)},
                                       {0, kTypeSize, size, 0, offsetof(NcclNvtxParamsAllReduce, bytes)},
                                       {0, kSidRedOp, "Reduction operation", 0,
                                        offsetof(NcclNvtxParamsAllReduce, op)}}))
              .ok());
  REQUIRE(r.AddSchema(kDomain, Schema(kSidBroadcast, sizeof(NcclNvtxParamsBroadcast),
                                      {{0, kTypeUint64, comm, 0, offsetof(NcclNvtxParamsBroadcast, comm)},
                                       {0, kTypeSize, size, 0, offsetof(NcclNvtxParamsBroadcast, bytes)},
                                       {0, kTypeInt, "Root", 0, offsetof(NcclNvtxParamsBroadcast, root)}}))
              .ok());
  REQUIRE(
      r.AddSchema(kDomain, Schema(kSidSend, sizeof(NcclNvtxParamsSendRecv),
                                  {{0, kTypeUint64, comm, 0, offsetof(NcclNvtxParamsSendRecv, comm)},
                                   {0, kTypeSize, size, 0, offsetof(NcclNvtxParamsSendRecv, bytes)},
                                   {0, kTypeInt, "Peer rank", 0, offsetof(NcclNvtxParamsSendRecv, peer)}}))
          .ok());
}

template <class T>
std::span<const uint8_t> Bytes(const T& v) {
  return {reinterpret_cast<const uint8_t*>(&v), sizeof v};
}

PayloadField U(const char* name, uint64_t v) {
  return {name, NvtxArgKind::kUint, v, {}};
}
PayloadField I(const char* name, int64_t v) {
  return {name, NvtxArgKind::kInt, uint64_t(v), {}};
}

}  // namespace

TEST_CASE("NCCL's payloads decode to named fields", "[nvtx_payload]") {
  PayloadRegistry r;
  RegisterNccl(r);
  std::vector<PayloadField> f;

  NcclNvtxParamsAllReduce ar{0xfeedbeefcafe0001ull, 64ull << 20, 2};  // Max
  REQUIRE(r.Decode(kDomain, kSidAllReduce, Bytes(ar), &f).ok());
  REQUIRE(f.size() == 3);
  CHECK(f[0] == U("NCCL communicator ID", 0xfeedbeefcafe0001ull));
  CHECK(f[1] == U("Message size [bytes]", 64ull << 20));
  CHECK(f[2] == PayloadField{"Reduction operation", NvtxArgKind::kEnum, 2, "Max"});

  f.clear();
  NcclNvtxParamsCommInitRank init{0xabcull, 8, 3, -1};
  REQUIRE(r.Decode(kDomain, kSidCommInitRank, Bytes(init), &f).ok());
  REQUIRE(f.size() == 4);
  CHECK(f[1] == I("No. of ranks", 8));
  CHECK(f[2] == I("Rank", 3));
  CHECK(f[3] == I("CUDA device", -1));  // sign-extended

  f.clear();
  NcclNvtxParamsSendRecv send{7, 4096, 1};
  REQUIRE(r.Decode(kDomain, kSidSend, Bytes(send), &f).ok());
  CHECK(f[2] == I("Peer rank", 1));

  f.clear();
  NcclNvtxParamsAllReduce unknown_op{1, 8, 99};  // a value the enum does not name: raw value, no text
  REQUIRE(r.Decode(kDomain, kSidAllReduce, Bytes(unknown_op), &f).ok());
  CHECK(f[2] == PayloadField{"Reduction operation", NvtxArgKind::kEnum, 99, ""});
  CHECK(r.stats().decoded == 4);
}

TEST_CASE("payload schema ids are per domain; unknown ones are counted", "[nvtx_payload]") {
  PayloadRegistry r;
  RegisterNccl(r);
  std::vector<PayloadField> f;
  NcclNvtxParamsAllGather ag{1, 2};
  CHECK_FALSE(r.Decode(kDomain + 1, kSidAllGather, Bytes(ag), &f).ok());
  CHECK_FALSE(r.Decode(kDomain, kStart + 999, Bytes(ag), &f).ok());
  CHECK(f.empty());
  CHECK(r.stats().unknown_schema == 2);
}

TEST_CASE("a payload entry is read from the app only for a registered schema of its size", "[nvtx_payload]") {
  // What the real pushes of NCCL's small calls carried (2 H200s): a stale entry whose words are a saved
  // frame.
  PayloadRegistry r;
  RegisterNccl(r);
  CHECK(r.Accepts(kDomain, kSidAllGather, sizeof(NcclNvtxParamsAllGather)));
  CHECK_FALSE(r.Accepts(kDomain, 0x7ffeac75c120ull, 0x7fb94b8ad7f4ull));  // saved rbp, return address
  CHECK_FALSE(r.Accepts(kDomain, kSidAllGather, 0x7fb94b8ad7f4ull));      // a known id, a wild size
  CHECK_FALSE(r.Accepts(kDomain, kSidAllGather, sizeof(NcclNvtxParamsAllGather) + 8));  // not its static size
  CHECK_FALSE(r.Accepts(kDomain + 1, kSidAllGather, sizeof(NcclNvtxParamsAllGather)));  // another domain's
  // Refused entries are still counted, and the caller's context names the first of them.
  std::vector<PayloadField> f;
  CHECK_FALSE(r.Decode(kDomain, 0x7ffeac75c120ull, {}, &f, "push: entry 0 of 1").ok());
  CHECK(r.stats().unknown_schema == 1);
  CHECK(r.stats().first_unknown.find("; push: entry 0 of 1") != std::string::npos);
}

TEST_CASE("hostile payloads and schemas are refused and counted, never read out of bounds",
          "[nvtx_payload]") {
  PayloadRegistry r;
  RegisterNccl(r);
  std::vector<PayloadField> f;
  NcclNvtxParamsAllReduce ar{1, 2, 0};

  SECTION("payload shorter than the schema's static size") {
    CHECK_FALSE(r.Decode(kDomain, kSidAllReduce, Bytes(ar).first(12), &f).ok());
    CHECK(f.empty());
    CHECK(r.stats().refused == 1);
  }
  SECTION("offset beyond the payload") {
    REQUIRE(r.AddSchema(kDomain, Schema(kStart + 100, 0, {{0, kTypeUint64, "far", 0, 1ull << 40}})).ok());
    CHECK_FALSE(r.Decode(kDomain, kStart + 100, Bytes(ar), &f).ok());
    REQUIRE(r.AddSchema(kDomain, Schema(kStart + 101, 0, {{0, kTypeUint64, "edge", 0, sizeof ar - 4}})).ok());
    CHECK_FALSE(r.Decode(kDomain, kStart + 101, Bytes(ar), &f).ok());
    REQUIRE(
        r.AddSchema(kDomain, Schema(kStart + 102, 0, {{0, kTypeUint64, "wrap", 0, ~uint64_t{0} - 2}})).ok());
    CHECK_FALSE(r.Decode(kDomain, kStart + 102, Bytes(ar), &f).ok());
    CHECK(f.empty());
    CHECK(r.stats().refused == 3);
  }
  SECTION("unknown entry types are skipped; the known ones still decode") {
    REQUIRE(r.AddSchema(kDomain, Schema(kStart + 103, 0,
                                        {{0, 9999, "mystery", 0, 0}, {0, kTypeUint64, "known", 0, 8}}))
                .ok());
    REQUIRE(r.Decode(kDomain, kStart + 103, Bytes(ar), &f).ok());
    REQUIRE(f.size() == 1);
    CHECK(f[0] == U("known", 2));
    CHECK(r.stats().skipped_entries == 1);
  }
  SECTION("absurd sizes") {
    std::vector<uint8_t> big(PayloadRegistry::kMaxPayloadBytes + 1);
    CHECK_FALSE(r.Decode(kDomain, kSidAllReduce, big, &f).ok());
    REQUIRE(r.AddSchema(kDomain, Schema(kStart + 104, 0,
                                        {{nvtxp::kFlagArrayFixedSize, kTypeChar, "s", 1ull << 62, 0}}))
                .ok());
    CHECK_FALSE(r.Decode(kDomain, kStart + 104, Bytes(ar), &f).ok());
    PayloadSchema many = Schema(kStart + 105, 0, {});
    many.entries.resize(PayloadRegistry::kMaxEntries + 1);
    CHECK_FALSE(r.AddSchema(kDomain, many).ok());
    PayloadEnum odd;
    odd.id = kStart + 106, odd.size = 3;
    CHECK_FALSE(r.AddEnum(kDomain, odd).ok());
    CHECK(r.stats().bad_registrations == 2);
  }
  SECTION("a schema that contains itself is refused at the depth limit") {
    REQUIRE(r.AddSchema(kDomain, Schema(kStart + 107, 8, {{0, kStart + 107, "self", 0, 0}})).ok());
    CHECK_FALSE(r.Decode(kDomain, kStart + 107, Bytes(ar), &f).ok());
    REQUIRE(r.AddSchema(kDomain, Schema(kStart + 108, 8, {{0, kStart + 109, "a", 0, 0}})).ok());
    REQUIRE(r.AddSchema(kDomain, Schema(kStart + 109, 8, {{0, kStart + 108, "b", 0, 0}})).ok());
    CHECK_FALSE(r.Decode(kDomain, kStart + 108, Bytes(ar), &f).ok());
    CHECK(f.empty());
  }
  SECTION("an enum id cannot also be a schema") {
    CHECK_FALSE(r.AddSchema(kDomain, Schema(kSidRedOp, 4, {{0, kTypeInt, "x", 0, 0}})).ok());
  }
}

TEST_CASE("nested schemas and fixed char arrays decode with dotted names", "[nvtx_payload]") {
  PayloadRegistry r;
  struct Inner {
    uint32_t a;
    float b;
  };
  struct Outer {
    char tag[8];
    Inner in;
    double d;
  };
  REQUIRE(r.AddSchema(kDomain, Schema(kStart + 200, sizeof(Inner), {{0, 16, "a", 0, 0}, {0, 43, "b", 0, 4}}))
              .ok());
  REQUIRE(
      r.AddSchema(kDomain, Schema(kStart + 201, sizeof(Outer),
                                  {{nvtxp::kFlagArrayFixedSize, kTypeChar, "tag", 8, offsetof(Outer, tag)},
                                   {0, kStart + 200, "in", 0, offsetof(Outer, in)},
                                   {0, 20, "d", 0, 0}}))  // offset 0 after the first: packed, aligned
          .ok());
  Outer o{};
  std::memcpy(o.tag, "abcdefgh", 8);  // no terminator: cut at the array's length
  o.in = {7, 1.5f};
  o.d = -2.25;
  std::vector<PayloadField> f;
  REQUIRE(r.Decode(kDomain, kStart + 201, Bytes(o), &f).ok());
  REQUIRE(f.size() == 4);
  CHECK(f[0] == PayloadField{"tag", NvtxArgKind::kString, 0, "abcdefgh"});
  CHECK(f[1] == U("in.a", 7));
  double b = 0, d = 0;
  std::memcpy(&b, &f[2].value, 8), std::memcpy(&d, &f[3].value, 8);
  CHECK(f[2].name == "in.b");
  CHECK(b == 1.5);
  CHECK(f[3].name == "d");
  CHECK(d == -2.25);
}

TEST_CASE("the joiner pairs a push with the range that starts nearest on its thread", "[nvtx_payload]") {
  PayloadJoiner j;
  j.Add({10, 1'000, {U("x", 1)}});
  j.Add({10, 5'000'000, {U("x", 2)}});
  j.Add({11, 1'000, {U("x", 3)}});
  NvtxRecord r;
  r.tid = 10, r.start = 5'000'400;
  std::vector<PayloadField> f;
  REQUIRE(j.Take(r, &f));
  CHECK(f[0].value == 2);
  r.start = 1'000 + PayloadJoiner::kMaxSkewNs + 1;  // too far from the first push
  CHECK_FALSE(j.Take(r, &f));
  r.start = 900;
  REQUIRE(j.Take(r, &f));
  CHECK(f[0].value == 1);
  r.tid = 12;
  CHECK_FALSE(j.Take(r, &f));
  r.tid = 11, r.start = 20'000'000'000;  // 10 s later: the thread's old push is dropped as stale
  CHECK_FALSE(j.Take(r, &f));
  CHECK(j.dropped() == 1);
  CHECK(j.pending() == 0);
}
