// NVTX extended payloads (the payload extension, nvtx3/nvToolsExtPayload.h): schemas and enums an app
// registers, and the bytes it attaches to a range, decoded into named fields. NCCL (2.19+) attaches one such
// payload to each API range (communicator hash, message size, reduction op, root or peer).
//
// Pure functions over plain copies: the injection copies what the app registered (names, entries) and the
// payload bytes inside NVTX's callbacks, so nothing here reads app memory, and tests and the fuzzer feed it
// bytes built in code. The NVTX constants are restated here (checked against the header in
// inject/nvtx_ext.cc) so that this file builds without the CUDA toolkit (the fuzz preset).
//
// Everything app-supplied is hostile: offsets past the payload, unknown entry types, absurd sizes, nested
// schemas that nest too deep or refer to themselves are refused (whole payload) or skipped (one entry),
// and counted in PayloadStats; nothing reads outside the bytes given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gt/model.h"
#include "gt/status.h"

namespace gt::decode {

// The NVTX payload extension's values that the decoder interprets (nvToolsExtPayload.h, NVTX 3.1+).
namespace nvtxp {
inline constexpr int32_t kPayloadTypeExt = int32_t(0xDFBD0009);  // NVTX_PAYLOAD_TYPE_EXT
inline constexpr uint64_t kSchemaIdStaticStart = 1ull << 24;     // NVTX_PAYLOAD_SCHEMA_ID_STATIC_START
inline constexpr uint64_t kSchemaTypeStatic = 1;                 // NVTX_PAYLOAD_SCHEMA_TYPE_STATIC
inline constexpr uint64_t kFlagHide = 1u << 9;                   // NVTX_PAYLOAD_ENTRY_FLAG_HIDE
inline constexpr uint64_t kFlagArrayFixedSize = 1u << 4;         // NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_FIXED_SIZE
}  // namespace nvtxp

// A schema entry as registered (nvtxPayloadSchemaEntry_t), strings copied.
struct PayloadEntry {
  uint64_t flags = 0;
  uint64_t type =
      0;  // NVTX_PAYLOAD_ENTRY_TYPE_*, or a registered schema or enum id (>= kSchemaIdStaticStart)
  std::string name;
  uint64_t array_length = 0;  // arrayOrUnionDetail: fixed array length (char arrays only)
  uint64_t offset = 0;        // 0 after the first entry: packed after the previous one, naturally aligned
};

struct PayloadSchema {
  uint64_t id = 0;
  std::string name;  // optional (NCCL registers none: the range's message names the call)
  uint64_t type = nvtxp::kSchemaTypeStatic;
  uint64_t static_size = 0;  // payloadStaticSize; 0 = not given
  std::vector<PayloadEntry> entries;
};

struct PayloadEnumValue {
  std::string name;
  uint64_t value = 0;
};

struct PayloadEnum {
  uint64_t id = 0;
  std::string name;
  uint64_t size = 4;  // sizeOfEnum: 1, 2, 4 or 8
  std::vector<PayloadEnumValue> values;
};

// One decoded field. `text`: an enum value's name or a string's text; `value`: as NvtxArgRecord::value.
struct PayloadField {
  std::string name;
  NvtxArgKind kind = NvtxArgKind::kNone;
  uint64_t value = 0;
  std::string text;
  friend bool operator==(const PayloadField&, const PayloadField&) = default;
};

struct PayloadStats {
  uint64_t decoded = 0;          // payloads decoded (all or some of their entries)
  uint64_t unknown_schema = 0;   // payload of a schema id never registered in its domain
  uint64_t refused = 0;          // payloads refused whole: out of bounds, too deep, bad schema
  uint64_t skipped_entries = 0;  // entries of an unsupported type or flag, left out
  uint64_t bad_registrations = 0;
  std::string first_unknown;  // the first of each kind, said in the trace's loss so that a
  std::string first_refusal;  // refusal on a real app can be diagnosed from the trace alone
  std::string first_bad_registration;
};

// Schemas and enums per domain (ids are per domain). Thread-safe: NVTX registers from any app thread while
// another decodes.
class PayloadRegistry {
 public:
  static constexpr size_t kMaxSchemas = 4096;       // per registry: an app registering more is refused
  static constexpr size_t kMaxEntries = 256;        // per schema
  static constexpr size_t kMaxEnumValues = 4096;    // per enum
  static constexpr size_t kMaxNameBytes = 256;      // names and decoded strings are cut to this
  static constexpr size_t kMaxPayloadBytes = 4096;  // larger payloads are refused (NCCL's are <= 40 bytes)
  static constexpr int kMaxDepth = 4;               // nested schemas deeper than this are refused
  static constexpr size_t kMaxFields = 128;         // fields per payload

  // Refuses (and counts) a schema with too many entries, no id, or an id already taken by an enum.
  Status AddSchema(uint64_t domain, PayloadSchema schema);
  Status AddEnum(uint64_t domain, PayloadEnum e);

  // Whether a payload of `size` bytes for `schema_id` is worth reading from the app: a schema registered in
  // `domain`, within kMaxPayloadBytes, and of its registered static size where one was given. The caller
  // checks this before it touches the payload's bytes: a stale entry's pointer may point anywhere.
  bool Accepts(uint64_t domain, uint64_t schema_id, uint64_t size) const;

  // Decodes one payload of `schema_id` into `out` (appended). On refusal `out` is left as it was.
  Status Decode(uint64_t domain, uint64_t schema_id, std::span<const uint8_t> bytes,
                std::vector<PayloadField>* out, std::string_view context = {});

  PayloadStats stats() const;

 private:
  using Key = std::pair<uint64_t, uint64_t>;  // (domain, id)
  Status DecodeLocked(uint64_t domain, const PayloadSchema& s, std::span<const uint8_t> bytes, int depth,
                      const std::string& prefix, std::vector<PayloadField>* out);
  mutable std::mutex mu_;
  std::map<Key, PayloadSchema> schemas_;
  std::map<Key, PayloadEnum> enums_;
  PayloadStats stats_;
};

// Size of an NVTX predefined entry type on LP64 Linux; 0 for types the decoder does not read (pointers,
// 128-bit, half floats, unions).
size_t PayloadTypeSize(uint64_t type);

// A decoded payload waiting for its range: the injection sees the push in NVTX's callback (thread, time),
// CUPTI reports the range later in an activity buffer. The joiner pairs them by thread and nearest start.
struct PendingPayload {
  uint32_t tid = 0;
  Timestamp at = 0;  // trace clock, when the push was seen
  std::vector<PayloadField> fields;
};

class PayloadJoiner {
 public:
  // A push and CUPTI's START record of the same call are taken within microseconds of each other; further
  // apart they are not the same range.
  static constexpr int64_t kMaxSkewNs = 50'000;
  static constexpr size_t kMaxPending = 65536;  // beyond this the oldest is dropped (counted)

  void Add(PendingPayload p);
  // The fields of the payload pushed on `r.tid` closest to `r.start` (within kMaxSkewNs), removed from the
  // pending set; false when none. Payloads older than `r.start - 10 s` on that thread are dropped (counted):
  // their ranges were lost or outside the window.
  bool Take(const NvtxRecord& r, std::vector<PayloadField>* fields);
  uint64_t dropped() const;
  size_t pending() const;

 private:
  mutable std::mutex mu_;
  std::map<uint32_t, std::vector<PendingPayload>> by_tid_;  // each in push order
  size_t count_ = 0;
  uint64_t dropped_ = 0;
};

// The fields as records of the range `r`, their strings interned through `intern`.
template <class Intern>
void AppendArgRecords(const NvtxRecord& r, const std::vector<PayloadField>& fields, Intern&& intern,
                      std::vector<NvtxArgRecord>* out) {
  for (const PayloadField& f : fields) {
    NvtxArgRecord a;
    a.start = r.start, a.pid = r.pid, a.tid = r.tid;
    a.name = intern(f.name), a.text = f.text.empty() ? 0 : intern(f.text);
    a.value = f.value, a.kind = uint8_t(f.kind);
    out->push_back(a);
  }
}

}  // namespace gt::decode
