// ViewState <-> URL-safe text. Format (v1):
//   v1!<t0>!<t1>!<expanded keys '*'-joined>!<collapsed keys>!<selected>!<panel>!<search>
// v2 (two traces compared) adds two fields: ...!<search>!<compare align>!<selected event of B>. A view of one
// trace is still written as v1, so links stay what they were.
// Both versions may be followed by optional tagged sections, '!'-separated: "n1*..." notes (notes.cc).
// Unknown tags are refused.
// Fields are escaped: [A-Za-z0-9._-] stay, every other byte becomes '~' + two hex digits.
#include "gt/viewer/view_state.h"

#include <charconv>

#include "parse_number.h"

namespace gt::viewer {

namespace {

constexpr size_t kMaxText = 64 * 1024;
constexpr size_t kMaxField = 4096;
constexpr size_t kMaxKeys = 4096;

bool Plain(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

void Escape(std::string_view in, std::string* out) {
  static const char* kHex = "0123456789ABCDEF";
  for (unsigned char c : in) {
    if (Plain(c)) {
      out->push_back(static_cast<char>(c));
    } else {
      out->push_back('~');
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
  }
}

int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

Status Unescape(std::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(in[i]);
    if (Plain(c)) {
      out->push_back(static_cast<char>(c));
    } else if (c == '~') {
      if (i + 2 >= in.size()) return InvalidArgument("view state: truncated escape");
      int hi = HexVal(in[i + 1]), lo = HexVal(in[i + 2]);
      if (hi < 0 || lo < 0) return InvalidArgument("view state: bad escape");
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      return InvalidArgument("view state: unexpected character");
    }
    if (out->size() > kMaxField) return InvalidArgument("view state: field too long");
  }
  return Status::Ok();
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t p = 0;
  while (true) {
    size_t q = s.find(sep, p);
    if (q == std::string_view::npos) {
      parts.push_back(s.substr(p));
      break;
    }
    parts.push_back(s.substr(p, q - p));
    p = q + 1;
  }
  return parts;
}

Status ParseKeys(std::string_view field, std::vector<std::string>* out) {
  out->clear();
  if (field.empty()) return Status::Ok();
  auto parts = Split(field, '*');
  if (parts.size() > kMaxKeys) return InvalidArgument("view state: too many track keys");
  for (auto p : parts) {
    std::string k;
    GT_RETURN_IF_ERROR(Unescape(p, &k));
    if (k.empty()) return InvalidArgument("view state: empty track key");
    out->push_back(std::move(k));
  }
  return Status::Ok();
}

}  // namespace

std::string ViewState::Serialize() const {
  std::string o = "v1!" + std::to_string(t0) + "!" + std::to_string(t1) + "!";
  for (size_t i = 0; i < expanded.size(); ++i) {
    if (i) o += '*';
    Escape(expanded[i], &o);
  }
  o += '!';
  for (size_t i = 0; i < collapsed.size(); ++i) {
    if (i) o += '*';
    Escape(collapsed[i], &o);
  }
  o += '!';
  Escape(selected, &o);
  o += '!';
  Escape(panel, &o);
  o += '!';
  Escape(search, &o);
  if (compared) {
    o[1] = '2';
    o += '!';
    Escape(compare_align, &o);
    o += '!';
    Escape(compare_selected, &o);
  }
  if (!notes.empty()) o += "!" + SerializeNotes(notes, &Escape);
  return o;
}

StatusOr<ViewState> ViewState::Parse(std::string_view text) {
  if (text.size() > kMaxText) return InvalidArgument("view state: too long");
  auto parts = Split(text, '!');
  if (parts.empty() || (parts[0] != "v1" && parts[0] != "v2"))
    return InvalidArgument("view state: unknown version (expected v1 or v2)");
  const size_t fields = parts[0] == "v1" ? 8 : 10;
  if (parts.size() < fields)
    return InvalidArgument("view state: expected " + std::to_string(fields) + " fields, got " +
                           std::to_string(parts.size()));
  ViewState v;
  if (fields == 10) {
    v.compared = true;
    GT_RETURN_IF_ERROR(Unescape(parts[8], &v.compare_align));
    GT_RETURN_IF_ERROR(Unescape(parts[9], &v.compare_selected));
  }
  if (!detail::ParseI64(parts[1], &v.t0) || !detail::ParseI64(parts[2], &v.t1))
    return InvalidArgument("view state: bad time range");
  if (v.t1 < v.t0) return InvalidArgument("view state: time range ends before it starts");
  GT_RETURN_IF_ERROR(ParseKeys(parts[3], &v.expanded));
  GT_RETURN_IF_ERROR(ParseKeys(parts[4], &v.collapsed));
  GT_RETURN_IF_ERROR(Unescape(parts[5], &v.selected));
  GT_RETURN_IF_ERROR(Unescape(parts[6], &v.panel));
  GT_RETURN_IF_ERROR(Unescape(parts[7], &v.search));
  bool seen_notes = false;
  for (size_t i = fields; i < parts.size(); ++i) {
    std::string_view sec = parts[i];
    if (sec.substr(0, 2) == "n1" && !seen_notes) {
      seen_notes = true;
      GT_RETURN_IF_ERROR(ParseNotes(sec, &Unescape, &v.notes));
      if (v.notes.empty()) return InvalidArgument("view state: empty notes section");
    } else {
      return InvalidArgument("view state: unknown section " + std::to_string(i + 1));
    }
  }
  return v;
}

}  // namespace gt::viewer
