#include "decode/nvtx_assembler.h"

#include <cstddef>

namespace gt::decode {

bool NvtxMessageEquals(std::string_view wanted, const char* ascii, const wchar_t* wide) {
  if (ascii) return wanted == std::string_view(ascii);
  if (!wide) return false;
  size_t at = 0;  // position in `wanted`
  char utf8[4];
  for (const wchar_t* w = wide; *w; ++w) {
    uint32_t c = static_cast<uint32_t>(*w);
    size_t n;
    if (c < 0x80) {
      utf8[0] = char(c);
      n = 1;
    } else if (c < 0x800) {
      utf8[0] = char(0xC0 | (c >> 6));
      utf8[1] = char(0x80 | (c & 0x3F));
      n = 2;
    } else if (c < 0x10000) {
      utf8[0] = char(0xE0 | (c >> 12));
      utf8[1] = char(0x80 | ((c >> 6) & 0x3F));
      utf8[2] = char(0x80 | (c & 0x3F));
      n = 3;
    } else if (c < 0x110000) {
      utf8[0] = char(0xF0 | (c >> 18));
      utf8[1] = char(0x80 | ((c >> 12) & 0x3F));
      utf8[2] = char(0x80 | ((c >> 6) & 0x3F));
      utf8[3] = char(0x80 | (c & 0x3F));
      n = 4;
    } else {
      return false;  // not a code point
    }
    if (wanted.size() - at < n || wanted.compare(at, n, std::string_view(utf8, n)) != 0) return false;
    at += n;
  }
  return at == wanted.size();
}

void NvtxAssembler::Apply(NvtxRecord& r, const MarkerPayload& p) {
  if (p.has_color) {
    r.color = p.color;
    r.flags |= kNvtxHasColor;
  }
  r.category = p.category;
  r.payload_kind = p.payload_kind;
  r.payload = p.payload;
}

void NvtxAssembler::Close(NvtxRecord r, const MarkerEvent& end) {
  r.end = end.timestamp < r.start ? r.start : end.timestamp;
  if (end.tid != r.tid) r.flags |= kNvtxStartEnd;
  output_.push_back(r);
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
      if (auto it = early_ends_.find(e.id); it != early_ends_.end()) {
        MarkerEvent end = it->second;
        early_ends_.erase(it);
        Close(r, end);
        break;
      }
      open_[e.id] = r;
      break;
    }
    case MarkerEvent::kEnd: {
      auto it = open_.find(e.id);
      if (it == open_.end()) {
        // Its START may still be in another thread's buffer; or it was outside the capture window, or this is
        // the second END of a range already closed: either way kept only while there is room.
        if (early_ends_.count(e.id)) return;
        if (early_end_order_.size() >= 2 * kMaxEarlyEnds || early_ends_.size() >= kMaxEarlyEnds) {
          // Forget ids already paired; if still full, the oldest half.
          std::vector<uint32_t> live;
          for (uint32_t id : early_end_order_)
            if (early_ends_.count(id)) live.push_back(id);
          size_t drop = live.size() >= kMaxEarlyEnds ? live.size() / 2 : 0;
          for (size_t i = 0; i < drop; ++i) early_ends_.erase(live[i]);
          early_end_order_.assign(live.begin() + static_cast<std::ptrdiff_t>(drop), live.end());
        }
        early_ends_[e.id] = e;
        early_end_order_.push_back(e.id);
        return;
      }
      NvtxRecord r = it->second;
      open_.erase(it);
      Close(r, e);
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
  early_ends_.clear();
  early_end_order_.clear();
}

}  // namespace gt::decode
