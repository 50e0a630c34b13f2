// What a share link restores: the visible time range, expanded/collapsed tracks, the selected event, the open
// panel. Keys (TraceModel::EventKey, Track::key) are stable across loads of the same file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gt/status.h"
#include "gt/viewer/notes.h"

namespace gt::viewer {

struct ViewState {
  int64_t t0 = 0, t1 = 0;              // visible range, trace ns (t1 > t0 when set; 0,0 = whole trace)
  std::vector<std::string> expanded;   // track or group keys expanded against their default
  std::vector<std::string> collapsed;  // track or group keys collapsed against their default
  std::string selected;                // event key ("" = none)
  std::string panel;                   // open panel name ("kernels", "details", "search", "" = none)
  std::string search;                  // active search text
  // Two traces compared (the pair itself is in the link: ?url=A&compare=B): the alignment ("" automatic,
  // "start", "name:N") and the selected event of B (its key; "" = none).
  bool compared = false;
  std::string compare_align;
  std::string compare_selected;

  // ---- notes (gt/viewer/notes.h): their own tagged section "n1*...", written only when there are notes, so
  // a view without notes serializes exactly as before and links from before notes parse unchanged ----
  std::vector<Note> notes;

  // URL-safe (only [A-Za-z0-9._~-] and the separators '!' and '*'), versioned: "v1!..." (one trace, 8
  // fields) or "v2!..." (a comparison, 10 fields); both parse. Then optional tagged sections, one per
  // '!'-field, each named by its first letters ("n1": notes).
  std::string Serialize() const;
  // Hostile input safe: bounded sizes, every byte validated, never aborts.
  static StatusOr<ViewState> Parse(std::string_view text);
  friend bool operator==(const ViewState&, const ViewState&) = default;
};

}  // namespace gt::viewer
