// CSV of every table the viewer shows (the UI's "CSV" buttons, `gtrace export --csv TABLE`). One writer:
// RFC 4180 (fields with ',' '"' CR or LF quoted, '"' doubled, CRLF line ends), and safe to open in a
// spreadsheet: a text cell starting with = + - @ (or TAB / CR) gets a leading ' so it is never read as a
// formula (OWASP "CSV injection"). Number cells are written as numbers (ns, counts, shares 0..1) and never
// prefixed, so "-5" stays a number.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gt/status.h"
#include "gt/viewer/analysis.h"
#include "gt/viewer/collectives.h"
#include "gt/viewer/compare.h"
#include "gt/viewer/histogram.h"
#include "gt/viewer/model.h"
#include "gt/viewer/notes.h"
#include "gt/viewer/profiled.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"

namespace gt::viewer {

struct CsvCell {
  std::string value;
  bool text = true;  // false: a number, written as is
};
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<CsvCell>> rows;
};

std::string CsvField(std::string_view value, bool text);  // one field, quoted/escaped as above
std::string ToCsv(const CsvTable& table);

CsvTable KernelTableCsv(const TraceModel& model, const std::vector<KernelSummaryRow>& rows);
CsvTable NameSummaryCsv(const std::vector<NameSummary>& rows);  // api, copies, nvtx, kernels summaries
CsvTable IdleGapsCsv(const std::vector<IdleGap>& gaps);
CsvTable KernelCountersCsv(const std::vector<KernelCounters>& kernels);  // one row per (launch, counter)
CsvTable LossesCsv(const std::vector<LossStat>& losses);
CsvTable NotesCsv(const TraceModel* model, const std::vector<Note>& notes);  // model: resolves anchors
CsvTable HistogramCsv(const DurationHistogram& h);
// NCCL collectives across ranks (the Summary tab): one row per collective and rank, and the per-rank totals.
CsvTable CollectivesCsv(const TraceModel& model, const CollectiveReport& report);
CsvTable CollectiveRanksCsv(const CollectiveReport& report);
// The roofline tab's points: per profiled kernel and memory level with FLOPs and bytes, its place on the
// roofline of the GPU that ran it.
CsvTable RooflineCsv(const ProfiledKernels& profiled);
// Two traces compared: the kernel table's before/after rows (gtrace diff's) and the per-step deltas.
CsvTable CompareKernelsCsv(const std::vector<NameChange>& rows);
CsvTable CompareStepsCsv(const std::vector<StepDelta>& steps);

// The tables by name, as the CLI offers them: "kernels", "api", "copies", "nvtx", "idle-gaps", "counters",
// "roofline", "collectives", "collective-ranks", "losses", "histogram" (needs `kernel`: a kernel name). Notes
// live in links, not in trace files.
const std::vector<std::string_view>& CsvTableNames();
StatusOr<CsvTable> TraceTableCsv(const TraceModel& model, std::string_view table,
                                 std::string_view kernel = {});

}  // namespace gt::viewer
