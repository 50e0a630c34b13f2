// Pairs CUPTI's NVTX marker records into ranges. CUPTI reports a range as two Marker records (START, END)
// with one id, plus a MarkerData record (color, category, payload) with the same id; marks are one
// INSTANTANEOUS Marker record plus their MarkerData. Ranges may end on another thread (nvtxRangeStart/End):
// pairing is by range id across the whole process, in whatever order the records arrive: CUPTI keeps each
// thread's markers in its own buffer, so an END made on another thread can be decoded before its START (seen
// on the H200: the worker's buffer completed first). Such an END waits (bounded) for its START.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gt/model.h"

namespace gt::decode {

// --capture-range=nvtx:NAME: does an NVTX message equal NAME (UTF-8)? A message is ASCII (`ascii`) or wide
// (`wide`, wchar_t: UTF-32 on Linux, compared after encoding to UTF-8); the other pointer is null. Registered
// string handles cannot be resolved and never match.
bool NvtxMessageEquals(std::string_view wanted, const char* ascii, const wchar_t* wide);

struct MarkerEvent {
  enum Type : uint8_t { kStart, kEnd, kMark };
  Type type = kMark;
  uint32_t id = 0;
  Timestamp timestamp = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  StringId message = 0;  // unused for kEnd
  StringId domain = 0;
};

struct MarkerPayload {
  uint32_t id = 0;
  uint32_t color = 0;
  bool has_color = false;
  uint32_t category = 0;
  uint8_t payload_kind = 0;  // NvtxPayloadKind
  uint64_t payload = 0;
};

class NvtxAssembler {
 public:
  void OnMarker(const MarkerEvent& e);
  void OnPayload(const MarkerPayload& p);
  // Moves marks (held until their payload had a chance to arrive) into the output.
  void EndBuffer();
  // Emits every open range as unclosed, ending at `end`.
  void CloseAll(Timestamp end);

  // Completed records; the caller writes them and clears the vector (capacity is reused).
  std::vector<NvtxRecord>& output() { return output_; }
  size_t open_ranges() const { return open_.size(); }
  size_t pending_ends() const { return early_ends_.size(); }

  static constexpr size_t kMaxEarlyEnds = 4096;  // ENDs waiting for their START (bounded)

 private:
  static void Apply(NvtxRecord& r, const MarkerPayload& p);
  void Close(NvtxRecord r, const MarkerEvent& end);
  std::unordered_map<uint32_t, NvtxRecord> open_;  // id -> range so far
  std::vector<NvtxRecord> marks_;                  // pending marks; ids in mark_ids_
  std::vector<uint32_t> mark_ids_;
  std::unordered_map<uint32_t, MarkerPayload> early_payloads_;  // payload seen before its START
  std::unordered_map<uint32_t, MarkerEvent> early_ends_;        // END seen before its START (any buffer)
  std::vector<uint32_t> early_end_order_;                       // insertion order, for eviction
  std::vector<NvtxRecord> output_;
};

}  // namespace gt::decode
