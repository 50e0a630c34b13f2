// Notes: limits, anchoring to events, the view-state section (gt/viewer/notes.h).
#include "gt/viewer/notes.h"

#include <algorithm>
#include <charconv>

#include "parse_number.h"

namespace gt::viewer {

Status CheckNewNote(const std::vector<Note>& notes, const Note& n) {
  if (n.text.empty()) return InvalidArgument("note: the text is empty");
  if (n.text.find('\0') != std::string::npos) return InvalidArgument("note: the text holds a NUL byte");
  if (n.text.size() > kMaxNoteBytes)
    return InvalidArgument("note: " + std::to_string(n.text.size()) + " bytes of text, the limit is " +
                           std::to_string(kMaxNoteBytes) + " per note");
  if (n.t1 < n.t0) return InvalidArgument("note: its range ends before it starts");
  if (n.event.size() > 200) return InvalidArgument("note: event key too long");
  if (notes.size() + 1 > kMaxNotes)
    return InvalidArgument("note: a view holds at most " + std::to_string(kMaxNotes) + " notes");
  size_t total = n.text.size();
  for (const Note& o : notes) total += o.text.size();
  if (total > kMaxNotesBytes)
    return InvalidArgument("note: all notes together would hold " + std::to_string(total) +
                           " bytes of text, the limit is " + std::to_string(kMaxNotesBytes));
  return Status::Ok();
}

EventId ResolveNote(const TraceModel& model, const Note& n) {
  if (n.event.empty()) return {};
  EventId e = model.FindEventByKey(n.event);
  if (e.valid() && model.Start(e) == n.t0) return e;
  // Same track and depth, found by start time: the key is "<track key>/<depth>/<index>".
  size_t slash = n.event.rfind('/');
  if (slash == std::string::npos) return {};
  EventId first = model.FindEventByKey(n.event.substr(0, slash) + "/0");
  if (!first.valid()) return {};
  const Lane& lane = model.lanes[first.lane];
  auto it = std::lower_bound(lane.start.begin(), lane.start.end(), n.t0);
  for (; it != lane.start.end() && *it == n.t0; ++it) {
    uint32_t i = static_cast<uint32_t>(it - lane.start.begin());
    if (lane.End(i) == n.t1) return {first.lane, i};
  }
  return {};
}

std::string SerializeNotes(const std::vector<Note>& notes, void (*escape)(std::string_view, std::string*)) {
  std::string o = "n1";
  for (const Note& n : notes) {
    o += '*' + std::to_string(n.t0) + '*' + std::to_string(n.t1) + '*';
    escape(n.event, &o);
    o += '*';
    escape(n.text, &o);
  }
  return o;
}

Status ParseNotes(std::string_view s, Status (*unescape)(std::string_view, std::string*),
                  std::vector<Note>* out) {
  out->clear();
  if (s.substr(0, 2) != "n1") return InvalidArgument("view state: unknown notes version");
  s.remove_prefix(2);
  if (s.empty()) return Status::Ok();
  if (s[0] != '*') return InvalidArgument("view state: bad notes section");
  s.remove_prefix(1);
  std::vector<std::string_view> f;
  while (true) {
    size_t q = s.find('*');
    f.push_back(s.substr(0, q));
    if (q == std::string_view::npos) break;
    s.remove_prefix(q + 1);
    if (f.size() > 4 * kMaxNotes)
      return InvalidArgument("view state: more than " + std::to_string(kMaxNotes) + " notes");
  }
  if (f.size() % 4 != 0) return InvalidArgument("view state: a note has missing fields");
  for (size_t i = 0; i < f.size(); i += 4) {
    Note n;
    if (!detail::ParseI64(f[i], &n.t0) || !detail::ParseI64(f[i + 1], &n.t1))
      return InvalidArgument("view state: bad note range");
    GT_RETURN_IF_ERROR(unescape(f[i + 2], &n.event));
    GT_RETURN_IF_ERROR(unescape(f[i + 3], &n.text));
    Status st = CheckNewNote(*out, n);
    if (!st.ok()) return InvalidArgument("view state: " + st.message());
    out->push_back(std::move(n));
  }
  return Status::Ok();
}

}  // namespace gt::viewer
