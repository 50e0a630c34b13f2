// `gtrace export --sqlite` at scale: a synthetic training-loop trace of N million events (tests/viewer/
// synth_trace.h) loaded into the viewer core's model, then exported to a database file; rows per second.
// Baseline in the same run: the same number of rows of 9 integers inserted into one table with one prepared
// statement in one transaction, same pragmas: what SQLite itself costs per row here. The ratio
// export/baseline is what the exporter adds (walking the model, the analyses, text columns, more tables and
// views). Then the same export into an in-memory database, as `gtrace mcp` makes for its sql tool.
//
//   bench_sqlite_export [--events 2] [--out /tmp/bench.sqlite]
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "gt/viewer/builder.h"
#include "sqlite_export.h"
#include "synth_trace.h"

using namespace gt;

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "bench_sqlite_export: %s failed\n", what);
  std::exit(1);
}

double Baseline(const std::string& path, uint64_t rows) {
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  Check(sqlite3_open(path.c_str(), &db) == SQLITE_OK, "open");
  const double t0 = Now();
  Check(sqlite3_exec(
            db,
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=65536; PRAGMA "
            "locking_mode=EXCLUSIVE;"
            "PRAGMA cache_size=-65536;"
            "CREATE TABLE T(a INTEGER, b INTEGER, c INTEGER, d INTEGER, e INTEGER, f INTEGER, g INTEGER,"
            " h INTEGER, i INTEGER); BEGIN",
            nullptr, nullptr, nullptr) == SQLITE_OK,
        "baseline schema");
  sqlite3_stmt* s = nullptr;
  Check(sqlite3_prepare_v2(db, "INSERT INTO T VALUES(?,?,?,?,?,?,?,?,?)", -1, &s, nullptr) == SQLITE_OK,
        "prepare");
  for (uint64_t r = 0; r < rows; ++r) {
    for (int c = 1; c <= 9; ++c) sqlite3_bind_int64(s, c, int64_t(r * 7 + uint64_t(c)));
    Check(sqlite3_step(s) == SQLITE_DONE, "insert");
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  Check(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK, "commit");
  sqlite3_close(db);
  const double t = Now() - t0;
  std::filesystem::remove(path);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  double millions = 2;
  std::string out = (std::filesystem::temp_directory_path() / "gt_bench_export.sqlite").string();
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--events") == 0 && i + 1 < argc)
      millions = std::atof(argv[++i]);
    else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      out = argv[++i];
    else {
      std::fprintf(stderr, "usage: bench_sqlite_export [--events MILLIONS] [--out FILE]\n");
      return 64;
    }
  }
  viewer::ModelBuilder b;
  synth::SynthOptions o;
  o.events = uint64_t(millions * 1e6);
  const synth::SynthCounts n = synth::GenerateSynthTrace(b, o);
  auto model = b.Finish();
  std::filesystem::remove(out);
  cli::SqliteExportStats stats;
  const Status st = cli::ExportSqliteFile(*model, out, true, &stats);
  Check(st.ok(), "export");
  const double mib = double(std::filesystem::file_size(out)) / (1 << 20);
  std::filesystem::remove(out);
  const double base = Baseline(out, stats.rows);
  // What `gtrace mcp`'s sql tool pays on its first query of a trace: the same export into memory.
  sqlite3* mem = nullptr;
  Check(sqlite3_open(":memory:", &mem) == SQLITE_OK, "open :memory:");
  cli::SqliteExportStats mem_stats;
  Check(cli::ExportSqlite(*model, mem, &mem_stats).ok(), "export to memory");
  sqlite3_close(mem);
  std::printf(
      "bench_sqlite_export: %.1f M events (%llu kernels, %llu API calls, %llu copies, %llu NVTX, %llu "
      "counter samples)\n",
      double(n.events()) / 1e6, (unsigned long long)n.kernels, (unsigned long long)n.api,
      (unsigned long long)n.memcpys, (unsigned long long)n.nvtx, (unsigned long long)n.samples);
  std::printf("  export     %.2f s, %llu rows, %.2f M rows/s, %.0f MiB file\n", stats.seconds,
              (unsigned long long)stats.rows, double(stats.rows) / stats.seconds / 1e6, mib);
  std::printf("  baseline   %.2f s, %.2f M rows/s (9 integers per row, one table)\n", base,
              double(stats.rows) / base / 1e6);
  std::printf("  ratio      export / baseline = %.2f\n", stats.seconds / base);
  std::printf("  in memory  %.2f s, %.2f M rows/s (gtrace mcp's sql tool, first query of a trace)\n",
              mem_stats.seconds, double(mem_stats.rows) / mem_stats.seconds / 1e6);
  return 0;
}
