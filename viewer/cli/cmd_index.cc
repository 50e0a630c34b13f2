// gtrace index build TRACE [-o IDX] [--threads N] [--write-threads N] [--spill DIR | --no-spill]: the viewer
// index of a trace (gt/viewer/index.h, docs/format.md "The viewer index"), what `gtrace serve` builds for a
// stored trace; prints the build's throughput and the index's size per event.
#include <chrono>
#include <cstdio>
#include <string>

#include "cli.h"
#include "gt/parts.h"
#include "gt/units.h"
#include "gt/viewer/index.h"
#include "gt/viewer/load.h"

namespace gt::cli {

int CmdIndex(int argc, char** argv) {
  const char* kUsage =
      "Usage: gtrace index build TRACE [-o IDX] [--threads N] [--write-threads N] [--spill DIR | "
      "--no-spill]\n\n"
      "Builds the viewer index of TRACE (.gtrace, Chrome/Kineto JSON, an Nsight Systems export): the "
      "timeline\n"
      "model the viewer draws from, laid out to be memory-mapped (docs/format.md, \"The viewer index\"). "
      "`gtrace\n"
      "serve` builds one per stored trace by itself; this command builds one by hand and reports the "
      "build's\n"
      "speed and the index's size. An existing IDX of the same trace is kept; a stale or damaged one is\n"
      "rebuilt.\n\n"
      "Options:\n"
      "  -o IDX       output (default: TRACE.gtindex)\n"
      "  --threads N  threads loading the trace (default 1; 0: one per hardware thread)\n"
      "  --write-threads N\n"
      "               threads compressing the index's blocks (default: as --threads; the file is the\n"
      "               same for any number)\n"
      "  --spill DIR  keep the model's long columns as files in DIR while building (for traces whose\n"
      "               model exceeds memory; by default this happens in IDX's folder when the trace\n"
      "               would not fit in the memory available now)\n"
      "  --no-spill   build in memory whatever the trace's size\n"
      "  -h, --help   this help\n\n";
  if (argc < 2 || IsHelp(argv[1])) {
    std::printf("%s%s", kUsage, kExitCodesHelp);
    return argc < 2 ? kExitUsage : kExitOk;
  }
  if (std::string(argv[1]) != "build")
    return UsageError("index", "unknown subcommand '" + std::string(argv[1]) + "'");
  std::string trace, out;
  viewer::LoadOptions load;
  load.threads = 1;
  viewer::IndexSpill spill = viewer::IndexSpill::kAuto;
  unsigned write_threads = 0;  // 0: as the load
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (IsHelp(a)) {
      std::printf("%s%s", kUsage, kExitCodesHelp);
      return kExitOk;
    }
    if (a == "-o") {
      if (i + 1 >= argc) return UsageError("index", "-o needs a file");
      out = argv[++i];
    } else if (a == "--threads" || a == "--write-threads") {
      if (i + 1 >= argc) return UsageError("index", a + " needs a number");
      const char* v = argv[++i];
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (end == v || *end != '\0' || n < 0 || n > 4096)
        return UsageError("index", "bad " + a + " value '" + v + "' (0 to 4096)");
      (a == "--threads" ? load.threads : write_threads) = unsigned(n);
    } else if (a == "--spill") {
      if (i + 1 >= argc) return UsageError("index", "--spill needs a folder");
      load.spill_dir = argv[++i];
    } else if (a == "--no-spill") {
      spill = viewer::IndexSpill::kNever;
    } else if (!a.empty() && a[0] == '-') {
      return UsageError("index", "unknown option '" + a + "'");
    } else if (trace.empty()) {
      trace = a;
    } else {
      return UsageError("index", "one trace at a time");
    }
  }
  if (trace.empty()) return UsageError("index", "build needs a trace");
  if (out.empty()) out = trace + ".gtindex";

  if (!load.spill_dir.empty() && spill == viewer::IndexSpill::kNever)
    return UsageError("index", "--spill and --no-spill contradict each other");
  // The trace is mapped, not read: a trace bigger than memory builds (spilling) and its pages stay the
  // page cache's to drop.
  viewer::IndexBuildReport r;
  auto index = viewer::OpenOrBuildIndexFile(trace, out, load, &r, spill, write_threads);
  if (!index.ok())
    return Fail("index", Status(index.status().code(), trace + ": " + index.status().message()));
  const viewer::TraceModel& m = (*index)->model();
  const uint64_t events = m.event_count + m.sample_count;
  const double ix = double((*index)->file_bytes());
  if (!r.rebuilt) {
    std::printf("%s: up to date (%s events, %s)\n", out.c_str(), FormatCount(events).c_str(),
                FormatBytes(ix).c_str());
    return kExitOk;
  }
  const double build_s = r.write.summaries_s + r.write.write_s;
  std::printf("%s: built (%s)\n", out.c_str(), r.why.c_str());
  std::printf("  events       %s\n", FormatCount(events).c_str());
  std::printf("  load         %.3f s (%s)\n", r.load_s,
              FormatRate(double(events) / r.load_s, "events/s").c_str());
  std::printf("  index build  %.3f s (%s): summaries %.3f s, write %.3f s\n", build_s,
              FormatRate(double(events) / build_s, "events/s").c_str(), r.write.summaries_s, r.write.write_s);
  std::printf("  index size   %s = %.2f bytes/event, %.2fx the trace (%s)\n", FormatBytes(ix).c_str(),
              ix / double(std::max<uint64_t>(events, 1)), ix / double(std::max<uint64_t>(r.trace_bytes, 1)),
              FormatBytes(double(r.trace_bytes)).c_str());
  if (!r.spill_dir.empty())
    std::printf("  spilled      the model's long columns to files in %s\n", r.spill_dir.c_str());
  return kExitOk;
}

}  // namespace gt::cli
