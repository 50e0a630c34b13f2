// Test helpers: seeded random records of every kind and field-wise equality (hand-written on purpose:
// deriving them from the codec's schema would hide a field the schema forgot).
#pragma once

#include <cstring>
#include <random>
#include <string>

#include "gt/model.h"
#include "gt/trace_data.h"

namespace gt::test {

// A new field in model.h must be added to the generator and the equality below; these catch the omission.
static_assert(sizeof(KernelRecord) == 112);
static_assert(sizeof(DeviceRecord) == 200);
static_assert(sizeof(MemcpyRecord) == 64);
static_assert(sizeof(ApiCallRecord) == 48);
static_assert(sizeof(NvtxRecord) == 56);
static_assert(sizeof(StallSample) == 48);

struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t seed) : g(seed) {}
  uint64_t U64() {
    // Mix small, large and edge values so every varint width and the kNone sentinel appear.
    switch (g() % 6) {
      case 0:
        return 0;
      case 1:
        return g() % 16;
      case 2:
        return g() % 100000;
      case 3:
        return UINT64_MAX - g() % 3;
      default:
        return g();
    }
  }
  uint32_t U32() {
    switch (g() % 5) {
      case 0:
        return kNone;
      case 1:
        return uint32_t(g() % 64);
      default:
        return uint32_t(U64());
    }
  }
  int32_t I32() { return int32_t(U32()); }
  uint16_t U16() { return uint16_t(U32()); }
  uint8_t U8() { return uint8_t(g()); }
  int64_t Ts() { return g() % 8 == 0 ? int64_t(U64()) : int64_t(1'000'000'000 + g() % 1'000'000'000); }
  double F64() {
    switch (g() % 4) {
      case 0:
        return 0.0;
      case 1:
        return -1.5e300;
      default:
        return double(g() % 1000000) / 7.0;
    }
  }
  StringId Str(uint32_t n_strings) { return uint32_t(g() % n_strings); }
};

inline bool Bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Fills every field with a random value; string ids are < n_strings (ids the test interned).
void Randomize(Rng& r, uint32_t ns, ProcessRecord& x);
void Randomize(Rng& r, uint32_t ns, ThreadRecord& x);
void Randomize(Rng& r, uint32_t ns, DeviceRecord& x);
void Randomize(Rng& r, uint32_t ns, ContextRecord& x);
void Randomize(Rng& r, uint32_t ns, StreamRecord& x);
void Randomize(Rng& r, uint32_t ns, KernelRecord& x);
void Randomize(Rng& r, uint32_t ns, MemcpyRecord& x);
void Randomize(Rng& r, uint32_t ns, MemsetRecord& x);
void Randomize(Rng& r, uint32_t ns, ApiCallRecord& x);
void Randomize(Rng& r, uint32_t ns, NvtxRecord& x);
void Randomize(Rng& r, uint32_t ns, SyncRecord& x);
void Randomize(Rng& r, uint32_t ns, MemoryRecord& x);
void Randomize(Rng& r, uint32_t ns, OverheadRecord& x);
void Randomize(Rng& r, uint32_t ns, CounterDescriptor& x);
void Randomize(Rng& r, uint32_t ns, CounterSample& x);
void Randomize(Rng& r, uint32_t ns, KernelMetricRecord& x);
void Randomize(Rng& r, uint32_t ns, StallSample& x);
void Randomize(Rng& r, uint32_t ns, FlowRecord& x);
void Randomize(Rng& r, uint32_t ns, LossRecord& x);

// Field-wise equality; string ids are compared by text through the two tables. Returns "" or the first
// differing field's name.
struct Strings {
  const TraceData& a;
  const TraceData& b;
};
std::string Diff(const Strings& s, const ProcessRecord& a, const ProcessRecord& b);
std::string Diff(const Strings& s, const ThreadRecord& a, const ThreadRecord& b);
std::string Diff(const Strings& s, const DeviceRecord& a, const DeviceRecord& b);
std::string Diff(const Strings& s, const ContextRecord& a, const ContextRecord& b);
std::string Diff(const Strings& s, const StreamRecord& a, const StreamRecord& b);
std::string Diff(const Strings& s, const KernelRecord& a, const KernelRecord& b);
std::string Diff(const Strings& s, const MemcpyRecord& a, const MemcpyRecord& b);
std::string Diff(const Strings& s, const MemsetRecord& a, const MemsetRecord& b);
std::string Diff(const Strings& s, const ApiCallRecord& a, const ApiCallRecord& b);
std::string Diff(const Strings& s, const NvtxRecord& a, const NvtxRecord& b);
std::string Diff(const Strings& s, const SyncRecord& a, const SyncRecord& b);
std::string Diff(const Strings& s, const MemoryRecord& a, const MemoryRecord& b);
std::string Diff(const Strings& s, const OverheadRecord& a, const OverheadRecord& b);
std::string Diff(const Strings& s, const CounterDescriptor& a, const CounterDescriptor& b);
std::string Diff(const Strings& s, const CounterSample& a, const CounterSample& b);
std::string Diff(const Strings& s, const KernelMetricRecord& a, const KernelMetricRecord& b);
std::string Diff(const Strings& s, const StallSample& a, const StallSample& b);
std::string Diff(const Strings& s, const FlowRecord& a, const FlowRecord& b);
std::string Diff(const Strings& s, const LossRecord& a, const LossRecord& b);

// Whole-trace comparison: every record list and the metadata. "" when equal.
std::string DiffTraces(const TraceData& a, const TraceData& b);
// Field-wise comparison of every record list but the losses; with b_may_be_prefix, each list of `b` need only
// be a prefix of `a`'s (what a truncated or damaged copy keeps).
std::string DiffRecordLists(const TraceData& a, const TraceData& b, bool b_may_be_prefix);

// A random trace with `per_kind` records of every kind, strings interned in `a` (ids valid in a.strings).
TraceData RandomTrace(uint64_t seed, size_t per_kind);

// Writes `data` into a .gtrace byte string.
std::string Encode(const TraceData& data, uint32_t max_records_per_chunk = 64 * 1024, bool finish = true);

// Reads bytes into a TraceData; `report` gets the LoadReport (or the error status's text in problems).
struct Loaded {
  Status status;
  LoadReport report;
  TraceData data;
};
Loaded Decode(const std::string& bytes);

}  // namespace gt::test
