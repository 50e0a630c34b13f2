// `gtrace export --sqlite`: a loaded trace (the viewer core's TraceModel, the numbers `gtrace stats` uses) as
// SQLite tables shaped like `nsys export --type sqlite` where that keeps nsys users' queries working, plus
// gtrace's own analyses (counters' verdicts, idle gaps with causes, losses). docs/sqlite.md is the schema.
//
// SQLite lives here, in the CLI, never in viewer/core (scripts/check_includes.py enforces it).
#pragma once

#include <cstdint>
#include <string>

#include "gt/status.h"
#include "gt/viewer/model.h"

struct sqlite3;

namespace gt::cli {

inline constexpr int kSqliteSchemaVersion = 2;  // 2: sampled CPU stacks (CPU_SAMPLES, CPU_STACK_FRAMES)

struct SqliteExportStats {
  uint64_t rows = 0;   // rows inserted, all tables
  double seconds = 0;  // wall time of the export (schema, inserts, commit)
};

// Creates the tables in `db` (which must hold none of them) and fills them in one transaction.
Status ExportSqlite(const viewer::TraceModel& model, sqlite3* db, SqliteExportStats* stats = nullptr);

// Writes a new database file at `path`. An existing file is an error unless `force` (then it is replaced);
// a failed export leaves no partial file behind.
Status ExportSqliteFile(const viewer::TraceModel& model, const std::string& path, bool force,
                        SqliteExportStats* stats = nullptr);

}  // namespace gt::cli
