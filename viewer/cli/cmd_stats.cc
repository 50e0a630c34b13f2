// gtrace stats FILE [--top N]: GPU idle share and per-name summaries (kernels, copies, API, NVTX) as text
// tables. Reads everything the viewer reads (.gtrace, Chrome/Kineto JSON, gzipped or not) through the viewer
// core.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli.h"
#include "gt/viewer/collectives.h"
#include "gt/viewer/json.h"
#include "gt/viewer/load.h"
#include "gt/viewer/ncu.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"
#include "load_options.h"

namespace gt::cli {

int CmdStats(int argc, char** argv) {
  const char* kUsage =
      "Usage: gtrace stats [--top N] [--json] [--ncu NCU.csv]... FILE\n\n"
      "Prints the trace's GPU activity per device (active span, busy and idle time, idle share, largest "
      "idle\n"
      "gap), then per name: kernels (count, total, average, min, max, share of GPU time), memory copies and\n"
      "sets (also bytes and bandwidth), CUDA API calls and NVTX ranges; plus any data loss. For a job of\n"
      "several ranks (torchrun under gcollect, or gtrace merge), NCCL collectives matched across ranks:\n"
      "who arrives late, how long the others wait, and the NVTX steps it happened in.\n"
      "FILE may be .gtrace, Chrome trace JSON or PyTorch profiler (Kineto) JSON, plain or gzipped, or an\n"
      "Nsight Compute CSV (ncu --csv --page raw): its profiled launches and their counters.\n\n"
      "Options:\n"
      "  --top N     rows per table (default 30, 0 = all; --json has every row)\n"
      "  --json      machine-readable output (times in ns)\n"
      "  --ncu CSV   ncu --csv --page raw output of the same app: its counters joined to FILE's kernels\n"
      "              (by kernel name and launch order; docs/ncu-import.md). Repeatable.\n"
      "  -h, --help  this help\n\n";
  std::string path;
  size_t top = 30;
  bool json = false;
  std::vector<std::string> ncu;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (IsHelp(a)) {
      std::printf("%s%s", kUsage, kExitCodesHelp);
      return kExitOk;
    }
    if (a == "--json") {
      json = true;
    } else if (a == "--ncu") {
      if (i + 1 >= argc) return UsageError("stats", "--ncu needs a CSV file");
      ncu.push_back(argv[++i]);
    } else if (a == "--top") {
      if (i + 1 >= argc) return UsageError("stats", "--top needs a number");
      char* end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 0) return UsageError("stats", std::string("bad --top value '") + argv[i] + "'");
      top = v == 0 ? SIZE_MAX : size_t(v);
    } else if (a.size() > 1 && a[0] == '-') {
      return UsageError("stats", "unknown option '" + a + "'");
    } else if (path.empty()) {
      path = a;
    } else {
      return UsageError("stats", "more than one FILE given");
    }
  }
  if (path.empty()) return UsageError("stats", "missing FILE");
  StatusOr<std::unique_ptr<viewer::TraceModel>> model = InvalidArgument("");
  if (ncu.empty()) {
    model = viewer::LoadTraceFile(path, CommandLoadOptions());
  } else {
    std::vector<std::string> files{path};  // FILE first, then the CSVs
    files.insert(files.end(), ncu.begin(), ncu.end());
    std::vector<std::string> contents;
    for (const std::string& f : files) {
      auto bytes = ReadFileBytes(f);
      if (!bytes.ok())
        return Fail("stats", Status(bytes.status().code(), f + ": " + bytes.status().message()));
      contents.push_back(std::move(*bytes));
    }
    std::vector<viewer::MergeInput> inputs;
    for (size_t i = 0; i < files.size(); ++i)
      inputs.push_back(
          {files[i], {reinterpret_cast<const uint8_t*>(contents[i].data()), contents[i].size()}});
    if (viewer::LooksLikeNcuCsv(inputs.front().bytes))
      return UsageError("stats", "FILE is an ncu CSV: give the timeline as FILE and the CSVs with --ncu");
    std::vector<std::string> warnings;
    model = viewer::LoadTracesWithNcu(inputs, &warnings);
    for (const std::string& w : warnings) std::fprintf(stderr, "gtrace stats: %s\n", w.c_str());
  }
  if (!model.ok())
    return Fail("stats", Status(model.status().code(), path + ": " + model.status().message()));
  std::string out = json ? viewer::StatsJson(*model.value()) : viewer::StatsReport(*model.value(), top);
  if (!json) {
    const std::string collectives = viewer::FormatCollectiveReport(viewer::CollectivesOf(*model.value()));
    if (!collectives.empty()) out += "\n" + collectives;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (viewer::HasDataLoss(*model.value())) {
    std::fprintf(stderr, "gtrace stats: %s loaded with losses (see above)\n", path.c_str());
    return kExitPartial;
  }
  return kExitOk;
}

}  // namespace gt::cli
