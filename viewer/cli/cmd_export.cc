// gtrace export --chrome|--sqlite|--gtrace|--csv TABLE FILE [-o OUT]
#include <cstdio>
#include <string>

#include "chrome_export.h"
#include "cli.h"
#include "gt/trace_data.h"
#include "gt/viewer/csv.h"
#include "gt/viewer/load.h"
#include "gt/viewer/query.h"
#include "gt/writer.h"
#include "load_options.h"
#include "nsys_input.h"
#include "sqlite_export.h"

namespace gt::cli {

// --csv: the table from the loaded model (gt/viewer/csv.h), written whole or not at all (exit 1).
static int ExportCsv(const std::string& in_path, const std::string& table, const std::string& kernel,
                     OutputArgs output) {
  bool known = false;
  for (auto n : viewer::CsvTableNames()) known |= n == table;
  if (!known) {
    std::string names;
    for (auto n : viewer::CsvTableNames()) names += (names.empty() ? "" : ", ") + std::string(n);
    return UsageError("export", "unknown table '" + table + "' (tables: " + names + ")");
  }
  if (table == "histogram" && kernel.empty())
    return UsageError("export", "--csv histogram needs --kernel NAME");
  if (output.path.empty()) output.path = in_path + "." + table + ".csv";
  if (output.path != "-") {
    Status w = output.CheckWritable();
    if (!w.ok()) return Fail("export", w);
  }
  auto model = viewer::LoadTraceFile(in_path, CommandLoadOptions());
  if (!model.ok())
    return Fail("export", Status(model.status().code(), in_path + ": " + model.status().message()));
  auto csv = viewer::TraceTableCsv(*model.value(), table, kernel);
  if (!csv.ok()) return Fail("export", csv.status());
  const std::string text = viewer::ToCsv(*csv);
  std::unique_ptr<ByteSink> sink;
  if (output.path == "-") {
    sink = MakeFdSink(1);
  } else {
    auto s = MakeFileSink(output.path, output.force);
    if (!s.ok()) return Fail("export", s.status());
    sink = std::move(*s);
  }
  Status st = sink->Write({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  if (st.ok()) st = sink->Sync();
  if (!st.ok()) return Fail("export", st);
  if (output.path != "-")
    std::fprintf(stderr, "wrote %s (%zu rows)\n", output.path.c_str(), csv->rows.size());
  if (viewer::HasDataLoss(*model.value())) {
    std::fprintf(stderr,
                 "gtrace export: %s loaded with losses (see --csv losses); exported what was readable\n",
                 in_path.c_str());
    return kExitPartial;
  }
  return kExitOk;
}

int CmdExport(int argc, char** argv) {
  const char* kUsage =
      "Usage: gtrace export --chrome FILE [-o OUT] [--force] [--no-flows]\n"
      "       gtrace export --sqlite FILE [-o OUT] [--force]\n"
      "       gtrace export --gtrace FILE [-o OUT] [--force]\n"
      "       gtrace export --csv TABLE FILE [--kernel NAME] [-o OUT] [--force]\n\n"
      "--chrome converts a .gtrace file to Chrome trace-event JSON (Perfetto UI, chrome://tracing).\n"
      "Host threads appear under their process; each GPU is a process \"GPU N (name)\" with one thread per\n"
      "stream; arrows link CUDA API calls to the GPU work they launched; GPU metrics become counter "
      "tracks.\n"
      "--sqlite writes a SQLite database with tables shaped like `nsys export --type sqlite`\n"
      "(CUPTI_ACTIVITY_KIND_KERNEL, ..._MEMCPY, ..._RUNTIME, NVTX_EVENTS, StringIds) plus gtrace's analyses\n"
      "(KERNEL_COUNTERS, IDLE_GAPS, LOSSES, ...); schema in docs/sqlite.md. FILE may be .gtrace, Chrome or\n"
      "Kineto JSON (plain or gzipped) or a NAME.gtrace.parts folder.\n"
      "--gtrace converts an Nsight Systems SQLite export (nsys export --type sqlite) to a .gtrace file.\n"
      "Every FILE may also be such an export (--chrome, --sqlite and --csv convert it too).\n\n"
      "--csv writes one of the viewer's tables as CSV (RFC 4180; text cells starting with = + - @ get a\n"
      "leading ' so spreadsheets never run them): kernels, api, copies, nvtx, idle-gaps, counters, "
      "roofline,\n"
      "collectives, collective-ranks, losses, histogram (durations of the kernel named by --kernel). Times "
      "in\n"
      "ns, shares 0..1.\n\n"
      "Options:\n"
      "  --chrome     Chrome trace-event JSON\n"
      "  --sqlite     SQLite database\n"
      "  --gtrace     .gtrace file (from an nsys SQLite export or a .gtrace)\n"
      "  --csv TABLE  one table as CSV (default OUT: FILE.TABLE.csv; '-' = stdout)\n"
      "  --kernel N   the kernel of --csv histogram\n"
      "  -o OUT       output file (default: FILE.json / FILE.sqlite; '-' = stdout for --chrome)\n"
      "  -f, --force  overwrite OUT if it exists\n"
      "  --no-flows   omit the API -> GPU flow arrows\n"
      "  -h, --help   this help\n\n"
      "A damaged or truncated trace is exported with whatever could be read (exit code 2).\n\n";
  std::string in_path;
  OutputArgs output;
  bool chrome = false, sqlite = false, gtrace = false;
  std::string csv_table, csv_kernel;  // --csv TABLE [--kernel NAME]
  ChromeExportOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (IsHelp(a)) {
      std::printf("%s%s", kUsage, kExitCodesHelp);
      return kExitOk;
    }
    if (a == "--chrome") {
      chrome = true;
    } else if (a == "--sqlite") {
      sqlite = true;
    } else if (a == "--gtrace") {
      gtrace = true;
    } else if (a == "--csv" || a == "--kernel") {
      if (i + 1 >= argc) return UsageError("export", a + " needs a value");
      (a == "--csv" ? csv_table : csv_kernel) = argv[++i];
      if (a == "--csv" && csv_table.empty()) return UsageError("export", "--csv needs a table name");
    } else if (a == "--no-flows") {
      options.flows = false;
    } else if (std::string usage_error; output.Parse(argc, argv, &i, &usage_error)) {
      if (!usage_error.empty()) return UsageError("export", usage_error);
    } else if (a.size() > 1 && a[0] == '-') {
      return UsageError("export", "unknown option '" + a + "'");
    } else if (in_path.empty()) {
      in_path = a;
    } else {
      return UsageError("export", "more than one input FILE given");
    }
  }
  if (int(chrome) + int(sqlite) + int(gtrace) + int(!csv_table.empty()) != 1)
    return UsageError("export", "choose one output format (--chrome, --sqlite, --gtrace or --csv TABLE)");
  if (!csv_kernel.empty() && csv_table != "histogram")
    return UsageError("export", "--kernel goes with --csv histogram");
  std::string& out_path = output.path;
  const bool force = output.force;
  if (in_path.empty()) return UsageError("export", "missing FILE");
  if (!csv_table.empty()) return ExportCsv(in_path, csv_table, csv_kernel, output);
  if (sqlite) {
    if (out_path.empty()) out_path = in_path + ".sqlite";
    if (out_path == "-") return UsageError("export", "--sqlite needs a file (-o -: SQLite cannot stream)");
    auto model = viewer::LoadTraceFile(in_path, CommandLoadOptions());
    if (!model.ok())
      return Fail("export", Status(model.status().code(), in_path + ": " + model.status().message()));
    SqliteExportStats stats;
    Status st = ExportSqliteFile(*model.value(), out_path, force, &stats);
    if (!st.ok()) return Fail("export", st);
    std::fprintf(stderr, "wrote %s (%llu rows in %.2f s)\n", out_path.c_str(),
                 static_cast<unsigned long long>(stats.rows), stats.seconds);
    if (viewer::HasDataLoss(*model.value())) {
      std::fprintf(stderr,
                   "gtrace export: %s loaded with losses (table LOSSES); exported what was readable\n",
                   in_path.c_str());
      return kExitPartial;
    }
    return kExitOk;
  }
  if (out_path.empty()) out_path = in_path + (gtrace ? ".gtrace" : ".json");

  auto bytes = ReadFileBytes(in_path);
  if (!bytes.ok()) return Fail("export", bytes.status());
  TraceData data;
  auto report = ReadTraceOrNsys({reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()}, data);
  if (!report.ok())
    return Fail("export", Status(report.status().code(), in_path + ": " + report.status().message()));
  bytes->clear();
  bytes->shrink_to_fit();

  if (gtrace) {
    if (out_path == "-") return UsageError("export", "--gtrace needs a file");
    auto file = MakeFileSink(out_path, force);
    if (!file.ok()) return Fail("export", file.status());
    auto writer = TraceWriter::Create(std::move(*file));
    if (!writer.ok()) return Fail("export", writer.status());
    Status st = WriteTraceData(data, **writer);
    if (st.ok()) st = (*writer)->Finish();
    if (!st.ok()) return Fail("export", st);
    std::fprintf(stderr, "wrote %s (%llu events)\n", out_path.c_str(),
                 static_cast<unsigned long long>(data.EventCount()));
    return report->clean() ? kExitOk : kExitPartial;
  }
  std::unique_ptr<ByteSink> sink;
  if (out_path == "-") {
    sink = MakeFdSink(1);
  } else {
    auto s = MakeFileSink(out_path, force);
    if (!s.ok()) return Fail("export", s.status());
    sink = std::move(*s);
  }
  Status st = ExportChromeJson(
      data,
      [&](std::string_view piece) {
        return sink->Write({reinterpret_cast<const uint8_t*>(piece.data()), piece.size()});
      },
      options);
  if (!st.ok()) return Fail("export", st);
  if (out_path != "-")
    std::fprintf(stderr, "wrote %s (%llu events)\n", out_path.c_str(),
                 static_cast<unsigned long long>(data.EventCount()));
  if (!report->clean()) {
    std::fprintf(stderr,
                 "gtrace export: %s loaded with losses (%llu chunks lost%s); exported what was readable\n",
                 in_path.c_str(), static_cast<unsigned long long>(report->chunks_lost),
                 report->truncated ? ", truncated" : "");
    return kExitPartial;
  }
  return kExitOk;
}

}  // namespace gt::cli
