#include "gt/nsys/sqlite_reader.h"

#include <sqlite3.h>

#include <cstring>
#include <memory>
#include <set>
#include <string>

namespace gt::nsys {

namespace {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

std::string Quote(const std::string& name) {
  std::string q = "\"";
  for (char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

Status Error(sqlite3* db, const std::string& what) {
  return Corrupt("not a readable SQLite database (" + what + ": " + sqlite3_errmsg(db) + ")");
}

// The columns `table` has (PRAGMA table_info), or an error when the schema itself is unreadable.
StatusOr<std::set<std::string>> Columns(sqlite3* db, const std::string& table) {
  sqlite3_stmt* raw = nullptr;
  std::string sql = "PRAGMA table_info(" + Quote(table) + ")";
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) return Error(db, sql);
  Stmt st(raw);
  std::set<std::string> cols;
  int rc;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
    const unsigned char* n = sqlite3_column_text(st.get(), 1);
    if (n) cols.insert(reinterpret_cast<const char*>(n));
  }
  if (rc != SQLITE_DONE) return Error(db, sql);
  return cols;
}

Status ReadTable(sqlite3* db, const viewer::NsysTableSpec& spec, viewer::NsysTable* out) {
  auto cols = Columns(db, spec.table);
  if (!cols.ok()) return cols.status();
  if (cols->empty()) return Status::Ok();  // no such table: what exists is loaded
  out->present = true;
  std::vector<std::string> ints, texts;
  for (const char* c : spec.ints)
    if (cols->count(c)) ints.push_back(c);
  for (const char* c : spec.texts)
    if (cols->count(c)) texts.push_back(c);
  if (ints.empty() && texts.empty()) return Status::Ok();
  std::string sql = "SELECT ";
  for (size_t i = 0; i < ints.size() + texts.size(); ++i)
    sql += (i ? ", " : "") + Quote(i < ints.size() ? ints[i] : texts[i - ints.size()]);
  sql += " FROM " + Quote(spec.table);
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) return Error(db, sql);
  Stmt st(raw);
  std::vector<std::vector<int64_t>*> icol;
  std::vector<std::vector<std::string>*> tcol;
  for (const auto& c : ints) icol.push_back(&out->ints[c]);
  for (const auto& c : texts) tcol.push_back(&out->texts[c]);
  int rc;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
    for (size_t i = 0; i < icol.size(); ++i) {
      int t = sqlite3_column_type(st.get(), int(i));
      // Integers as they are; a REAL in an integer column is truncated; NULL and text are NULL.
      icol[i]->push_back(t == SQLITE_INTEGER ? sqlite3_column_int64(st.get(), int(i))
                         : t == SQLITE_FLOAT ? int64_t(sqlite3_column_double(st.get(), int(i)))
                                             : viewer::kNsysNull);
    }
    for (size_t i = 0; i < tcol.size(); ++i) {
      int k = int(icol.size() + i);
      const unsigned char* s = sqlite3_column_text(st.get(), k);
      tcol[i]->push_back(
          s ? std::string(reinterpret_cast<const char*>(s), size_t(sqlite3_column_bytes(st.get(), k)))
            : std::string());
    }
    ++out->rows;
  }
  if (rc != SQLITE_DONE) return Error(db, "reading " + std::string(spec.table));
  return Status::Ok();
}

}  // namespace

StatusOr<viewer::NsysTables> ReadNsysSqlite(std::span<const uint8_t> bytes) {
  if (!viewer::LooksLikeSqlite(bytes)) return InvalidArgument("not an SQLite database");
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    sqlite3_close(raw);
    return Internal("SQLite: cannot open an in-memory database");
  }
  Db db(raw);  // NOMUTEX: the connection lives on this thread only (the mutexes were a tenth of a load)
  // SQLite reads the caller's bytes in place (no FREEONCLOSE, no RESIZEABLE): nothing is copied or written.
  auto* data = const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(bytes.data()));
  int rc = sqlite3_deserialize(db.get(), "main", data, sqlite3_int64(bytes.size()),
                               sqlite3_int64(bytes.size()), SQLITE_DESERIALIZE_READONLY);
  if (rc != SQLITE_OK) return Error(db.get(), "open");
  viewer::NsysTables tables;
  // The schema is read first: a truncated or corrupt file usually fails here, with SQLite's own words.
  {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db.get(), "SELECT count(*) FROM sqlite_master", -1, &s, nullptr) != SQLITE_OK)
      return Error(db.get(), "schema");
    Stmt st(s);
    if (sqlite3_step(st.get()) != SQLITE_ROW) return Error(db.get(), "schema");
  }
  for (const viewer::NsysTableSpec& spec : viewer::NsysSchema()) {
    Status s = ReadTable(db.get(), spec, &tables.tables[spec.table]);
    if (!s.ok()) return s;
  }
  return tables;
}

void RegisterNsysReader() {
  viewer::SetNsysTableReader(&ReadNsysSqlite);
}

}  // namespace gt::nsys
