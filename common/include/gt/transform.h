// Moving records of one trace into another: onto another clock, under other process ids, with string ids
// shifted past the ones already taken. This is how several traces become one (viewer/core merge.h) without
// copying either: a TransformSink sits between a reader and whatever consumes the records.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gt/reader.h"

namespace gt {

// t' = t + offset_ns + drift * (t - anchor_ns); drift in ns per ns (10 ppm = 1e-5).
struct ClockMap {
  int64_t offset_ns = 0;
  double drift = 0;
  int64_t anchor_ns = 0;
  int64_t Apply(int64_t t) const {
    return t + offset_ns +
           (drift == 0 ? 0 : static_cast<int64_t>(drift * static_cast<double>(t - anchor_ns)));
  }
  bool identity() const { return offset_ns == 0 && drift == 0; }
};

// One string table for several inputs fed into one sink: the same text gets the same id in every input, so a
// consumer that groups by string id (the viewer's kernel table, cross-rank collective matching) sees one
// name, not one per input. Owned by the caller, shared by the inputs' TransformSinks, which then ignore
// string_base.
class StringInterner {
 public:
  // The text's id (0 for ""); `added` says whether it is new.
  StringId Intern(std::string_view text, bool* added);
  StringId max_id() const { return next_ - 1; }
  std::string_view Text(StringId id) const { return texts_[id]; }

 private:
  std::unordered_map<std::string, StringId> ids_;
  std::vector<std::string_view> texts_{""};  // id -> text (views of ids_' keys, which never move)
  StringId next_ = 1;
};

struct RecordTransform {
  ClockMap clock;
  std::unordered_map<uint32_t, uint32_t> pids;  // old -> new; pids not listed stay
  StringId string_base = 0;                     // string ids of this input start after it
  uint32_t device_base = 0;  // added to device ids: GPU 0 of a second host must not be GPU 0 of the first
  // Process records that do not say where they ran (files of format 1.0) get these: the whole input was
  // recorded on one host, which its metadata names.
  std::string fill_host, fill_boot_id;
  StringInterner* interner = nullptr;  // when set: strings deduplicated across inputs (string_base unused)
  uint32_t Pid(uint32_t pid) const {
    auto it = pids.find(pid);
    return it == pids.end() ? pid : it->second;
  }
};

// Applies `transform` to every record and forwards it to `next`. Timestamps of 0 in process records
// (unknown start or end) stay 0. Metadata clock syncs are moved too (their wall-clock side stays). The
// constructor forwards the fill strings at string_base + 1 and + 2; the input's own id i lands at
// string_base + 2 + i.
class TransformSink : public TraceSink {
 public:
  static constexpr StringId kReservedIds = 2;
  TransformSink(TraceSink& next, const RecordTransform& transform);
  // Highest string id forwarded so far: the next input's string_base.
  StringId max_string_id() const { return max_string_id_; }

  void OnMetadata(const TraceMetadata& m) override;
  void OnStrings(StringId first_id, std::span<const std::string_view> strings) override;
#define GT_TRANSFORM_METHOD(R, Method, field) void Method(std::span<const R> r) override;
  GT_FOR_EACH_RECORD_TYPE(GT_TRANSFORM_METHOD)
#undef GT_TRANSFORM_METHOD

 private:
  template <class R>
  std::vector<R> Transform(std::span<const R> in);

  TraceSink& next_;
  const RecordTransform& t_;
  StringId max_string_id_ = 0;
  std::vector<StringId> local_;    // with an interner: this input's id -> the shared id
  StringId fill_ids_[2] = {0, 0};  // the fill strings' ids (host, boot id)
};

}  // namespace gt
