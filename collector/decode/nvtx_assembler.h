// Pairs CUPTI's NVTX marker records into ranges. CUPTI reports a range as two Marker records (START, END)
// with one id, plus a MarkerData record (color, category, payload) with the same id; marks are one
// INSTANTANEOUS Marker record plus their MarkerData. Ranges may end on another thread (nvtxRangeStart/End).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "gt/model.h"

namespace gt::collector {

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

 private:
  static void Apply(NvtxRecord& r, const MarkerPayload& p);
  std::unordered_map<uint32_t, NvtxRecord> open_;  // id -> range so far
  std::vector<NvtxRecord> marks_;                  // pending marks; ids in mark_ids_
  std::vector<uint32_t> mark_ids_;
  std::unordered_map<uint32_t, MarkerPayload> early_payloads_;  // payload seen before its START
  std::vector<NvtxRecord> output_;
};

}  // namespace gt::collector
