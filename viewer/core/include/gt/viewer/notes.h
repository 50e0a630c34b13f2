// Notes pinned to a time range or to an event ("this all-reduce waits for rank 1"): they travel in the share
// link's view state (gt/viewer/view_state.h, its "n1" section) and are shown as plain text, never markup.
//
// Limits (checked when a note is added and when a link is parsed; over a limit is refused with a message,
// never cut short): kMaxNoteBytes of text per note, kMaxNotes notes, kMaxNotesBytes of text in all.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gt/status.h"
#include "gt/viewer/model.h"

namespace gt::viewer {

struct Note {
  int64_t t0 = 0, t1 = 0;  // the range (t1 >= t0); an event note: the event's span when it was pinned
  std::string event;       // TraceModel::EventKey of the event, "" for a range note
  std::string text;        // UTF-8, no NUL; shown as plain text
  friend bool operator==(const Note&, const Note&) = default;
};

constexpr size_t kMaxNoteBytes = 1000;
constexpr size_t kMaxNotes = 50;
constexpr size_t kMaxNotesBytes = 8000;

// Whether `n` may join `notes` (text non-empty, no NUL, within every limit, a sane range); the message says
// which limit and by how much.
Status CheckNewNote(const std::vector<Note>& notes, const Note& n);

// Where an event note points in this trace: its key's event if that starts where the note says, else the
// event of the same track and depth starting at t0 (the key's index moved), else invalid: the note is
// orphaned (its event is not in this trace), still listed, still jumping to its range.
EventId ResolveNote(const TraceModel& model, const Note& n);

// The view-state section: "n1" then, per note, '*'-joined t0, t1, escaped event key, escaped text.
// `escape` / `unescape` are the view state's field codec (so the section stays URL-safe the same way).
std::string SerializeNotes(const std::vector<Note>& notes, void (*escape)(std::string_view, std::string*));
Status ParseNotes(std::string_view section, Status (*unescape)(std::string_view, std::string*),
                  std::vector<Note>* out);

}  // namespace gt::viewer
