// Nsight Systems import: the tables of `nsys export --type sqlite` as plain columns, and their mapping onto
// gtrace records (docs/nsys-import.md has the column -> field table).
//
// The viewer core never links SQLite: a reader outside it (viewer/nsys, gt_nsys_sqlite) fills NsysTables from
// the database and registers itself with SetNsysTableReader; LoadTrace then opens .sqlite content like any
// other format. Without a registered reader an SQLite input fails with a message that says so.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gt/status.h"
#include "gt/trace_data.h"

namespace gt::viewer {

// SQL NULL in an integer column (nsys writes NULL for e.g. a mark's end or a text given by textId).
inline constexpr int64_t kNsysNull = INT64_MIN;

// One table as read: the columns the schema below asks for that the table has (a missing column is absent
// from the maps, which the mapping treats as all-NULL). Integer and text columns are kept apart; a value of
// the other type reads as NULL / "".
struct NsysTable {
  NsysTable() = default;
  // Copies and moves start with an empty column cache (it points into the source's maps).
  NsysTable(const NsysTable& o) : present(o.present), rows(o.rows), ints(o.ints), texts(o.texts) {}
  NsysTable(NsysTable&& o) noexcept
      : present(o.present), rows(o.rows), ints(std::move(o.ints)), texts(std::move(o.texts)) {
    o.int_cache_.clear();
  }
  NsysTable& operator=(NsysTable o) noexcept {
    present = o.present, rows = o.rows, ints = std::move(o.ints), texts = std::move(o.texts);
    int_cache_.clear(), o.int_cache_.clear();
    return *this;
  }

  bool present = false;
  size_t rows = 0;
  std::map<std::string, std::vector<int64_t>, std::less<>> ints;
  std::map<std::string, std::vector<std::string>, std::less<>> texts;

  // The value or kNsysNull (missing column, row out of range). Callers pass string literals: the column is
  // found by the literal's address after the first lookup (a mapping loop asks for ~20 columns per row,
  // millions of rows), so a table is read from one thread at a time.
  int64_t Int(std::string_view column, size_t row) const;
  const std::string* Text(std::string_view column, size_t row) const;  // nullptr when absent
  bool Has(std::string_view column) const { return ints.count(column) || texts.count(column); }

 private:
  const std::vector<int64_t>* IntColumn(std::string_view column) const;
  mutable std::vector<std::pair<const char*, const std::vector<int64_t>*>> int_cache_;
};

// What a reader asks for: table -> integer columns and text columns.
struct NsysTableSpec {
  const char* table;
  std::vector<const char*> ints;
  std::vector<const char*> texts;
};
const std::vector<NsysTableSpec>& NsysSchema();

// Every table of NsysSchema() by name (absent tables have present = false).
struct NsysTables {
  std::map<std::string, NsysTable, std::less<>> tables;
  const NsysTable& Get(std::string_view name) const;
};

// True when the tables look like an nsys export (at least one activity table: kernels, copies, memsets, CUDA
// API or NVTX). Otherwise *missing names what an export would have.
bool LooksLikeNsysExport(const NsysTables& t, std::string* missing);

// The mapping: rows -> gtrace records in `out` (strings, processes, threads, devices, contexts, streams,
// kernels, memcpys, memsets, API calls, NVTX). Rows that make no sense (end before start, unknown enum
// values, string ids that StringIds lacks, ids beyond 32 bits) are dropped or defaulted and counted in
// out->losses, never trusted. Fails only when the tables are no nsys export at all.
Status MapNsysTables(const NsysTables& tables, TraceData* out);

// Feeds a TraceData into a sink in the order a .gtrace delivers it (strings, entities, events).
void ReplayTraceData(const TraceData& data, TraceSink& sink);

// The SQLite half, outside the core: bytes of an SQLite database -> tables (or a clear error).
using NsysTableReader = StatusOr<NsysTables> (*)(std::span<const uint8_t> bytes);
void SetNsysTableReader(NsysTableReader reader);
NsysTableReader GetNsysTableReader();

// "SQLite format 3\0": the first 16 bytes of every SQLite 3 database.
bool LooksLikeSqlite(std::span<const uint8_t> bytes);

}  // namespace gt::viewer
