// The viewer for teams (issue 19): notes pinned to events or time ranges (listed in the "Notes" tab, carried
// by share links), a kernel's duration histogram window, and CSV export of the viewer's tables. The data and
// the arithmetic live in viewer/core (notes.h, histogram.h, csv.h); this file decides what to draw.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gt/status.h"
#include "gt/viewer/csv.h"
#include "gt/viewer/histogram.h"
#include "gt/viewer/notes.h"
#include "imgui.h"

namespace gt::ui {

class App;

struct NoteEditor {
  bool open = false;
  bool focus = false;
  viewer::Note draft;  // range and anchor set by the context menu; text from `text`
  std::string target;  // "kernel gemm at 1.25 ms", "range 1.2 ms – 3.4 ms"
  char text[viewer::kMaxNoteBytes + 2] =
      {};  // one byte over the limit: an over-long paste is refused, not cut
  std::string error;
};

struct HistogramState {
  bool open = false;
  StringId name = 0;
  viewer::DurationHistogram hist;
  int bins_per_decade = 5;
  int selected_bin = -1;                // the bin last clicked
  std::vector<viewer::EventId> in_bin;  // its instances, time order
  size_t in_bin_pos = 0;                // which of them is selected
};

struct TeamUiState {
  std::vector<viewer::Note> notes;
  NoteEditor editor;
  HistogramState histogram;
  std::string message;        // the last CSV export's outcome ("Saved x.csv"), shown beside its button
  std::string message_table;  // which table's button
};

// ---- notes ----
// Adds a note after checking the limits (gt/viewer/notes.h); the error says which limit.
Status AddNote(App& app, viewer::Note note);
void BeginNoteOnEvent(App& app, viewer::EventId e);  // opens the editor anchored to e
void BeginNoteOnRange(App& app, double t0, double t1);
// Selects the note's event (or, orphaned or a range note, just its range) and centres its range in view.
// False when i is out of range.
bool JumpToNote(App& app, size_t i);
void DrawNotesPanel(App& app);
// The timeline's ruler: a flag per note in view (hover: its text; click: jump).
void DrawNoteMarkers(App& app, ImDrawList* dl, const ImVec2& ruler_min, const ImVec2& ruler_max);
// Right-click on the timeline: "Add note" for the event under the mouse, the measured range, the visible
// range.
void OpenTimelineContextMenu(App& app, viewer::EventId hit, double mouse_t);
void DrawTimelineContextMenu(App& app);

// ---- histogram ----
void OpenHistogram(App& app, StringId kernel_name);
// Selects the bin's first instance (or the next one on a repeated click) and fits the view to the bin's
// instances. False when `bin` is not a bin.
bool SelectHistogramBin(App& app, int bin);

// ---- CSV ----
// The UI's tables by name, as shown (current sort, what the panel holds): kernels, api, copies, nvtx,
// idle-gaps, counters, losses, notes, histogram.
StatusOr<viewer::CsvTable> UiTableCsv(App& app, std::string_view table);
// Writes it: the page downloads "<trace>.<table>.csv" (web/app.js gtDownload); native writes that file in the
// working directory, never over an existing one (adds -1, -2, ...). Returns the file name.
StatusOr<std::string> ExportUiTable(App& app, std::string_view table);
void CsvButton(App& app, const char* table);  // a small "CSV" button that calls ExportUiTable

// The editor and histogram windows (App::Frame calls this once a frame, after the panels).
void DrawTeamUiWindows(App& app);

}  // namespace gt::ui
