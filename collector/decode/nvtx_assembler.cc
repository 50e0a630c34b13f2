#include "decode/nvtx_assembler.h"

namespace gt::collector {

void NvtxAssembler::Apply(NvtxRecord& r, const MarkerPayload& p) {
  if (p.has_color) {
    r.color = p.color;
    r.flags |= kNvtxHasColor;
  }
  r.category = p.category;
  r.payload_kind = p.payload_kind;
  r.payload = p.payload;
}

void NvtxAssembler::OnMarker(const MarkerEvent& e) {
  switch (e.type) {
    case MarkerEvent::kStart: {
      NvtxRecord r;
      r.start = r.end = e.timestamp;
      r.pid = e.pid;
      r.tid = e.tid;
      r.domain = e.domain;
      r.message = e.message;
      if (auto it = early_payloads_.find(e.id); it != early_payloads_.end()) {
        Apply(r, it->second);
        early_payloads_.erase(it);
      }
      open_[e.id] = r;
      break;
    }
    case MarkerEvent::kEnd: {
      auto it = open_.find(e.id);
      if (it == open_.end()) return;  // START outside the capture window: nothing to pair with
      NvtxRecord r = it->second;
      open_.erase(it);
      r.end = e.timestamp < r.start ? r.start : e.timestamp;
      if (e.tid != r.tid) r.flags |= kNvtxStartEnd;
      output_.push_back(r);
      break;
    }
    case MarkerEvent::kMark: {
      NvtxRecord r;
      r.start = r.end = e.timestamp;
      r.pid = e.pid;
      r.tid = e.tid;
      r.domain = e.domain;
      r.message = e.message;
      r.flags = kNvtxMark;
      marks_.push_back(r);
      mark_ids_.push_back(e.id);
      break;
    }
  }
}

void NvtxAssembler::OnPayload(const MarkerPayload& p) {
  if (auto it = open_.find(p.id); it != open_.end()) {
    Apply(it->second, p);
    return;
  }
  for (size_t i = marks_.size(); i-- > 0;) {
    if (mark_ids_[i] == p.id) {
      Apply(marks_[i], p);
      return;
    }
  }
  // Ranges already closed keep their defaults; a payload ahead of its START is kept briefly.
  if (early_payloads_.size() < 4096) early_payloads_[p.id] = p;
}

void NvtxAssembler::EndBuffer() {
  for (const auto& m : marks_) output_.push_back(m);
  marks_.clear();
  mark_ids_.clear();
  early_payloads_.clear();
}

void NvtxAssembler::CloseAll(Timestamp end) {
  EndBuffer();
  for (auto& [id, r] : open_) {
    r.end = end < r.start ? r.start : end;
    r.flags |= kNvtxUnclosed;
    output_.push_back(r);
  }
  open_.clear();
}

}  // namespace gt::collector
