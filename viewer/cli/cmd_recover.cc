// gtrace recover NAME.parts [-o OUT]: the trace of a gcollect run that never finished (gcollect killed with
// SIGKILL, the machine lost power): every process's part, as far as it was flushed, in one .gtrace.
#include <sys/stat.h>

#include <cstdio>
#include <string>

#include "cli.h"
#include "gt/parts.h"
#include "gt/trace_data.h"

namespace gt::cli {

int CmdRecover(int argc, char** argv) {
  const char* kUsage =
      "Usage: gtrace recover NAME.gtrace.parts [-o OUT] [--force]\n\n"
      "Turns the part files that an interrupted gcollect run left in NAME.parts/ (its own part and one per\n"
      "traced process, each flushed about once a second) into one trace, NAME by default. Parts cut short\n"
      "keep everything up to their last flush; what was lost is named in the trace (gtrace info shows it).\n"
      "The parts are left in place.\n\n"
      "Options:\n"
      "  -o OUT      output file (default: NAME.gtrace)\n"
      "  --force     overwrite OUT if it exists\n"
      "  -h, --help  this help\n\n";
  std::string dir;
  OutputArgs output;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (IsHelp(a)) {
      std::printf("%s%s", kUsage, kExitCodesHelp);
      return kExitOk;
    }
    std::string usage_error;
    if (output.Parse(argc, argv, &i, &usage_error)) {
      if (!usage_error.empty()) return UsageError("recover", usage_error);
    } else if (!a.empty() && a[0] == '-') {
      return UsageError("recover", "unknown option '" + a + "'");
    } else if (dir.empty()) {
      dir = a;
    } else {
      return UsageError("recover", "more than one NAME.parts given");
    }
  }
  if (dir.empty()) return UsageError("recover", "missing NAME.parts");
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Fail("recover", NotFound(dir + " is not a directory of parts (gcollect leaves NAME.parts/)"));
  std::string& out = output.path;
  if (out.empty()) {
    const std::string suffix = ".parts";
    if (dir.size() <= suffix.size() || dir.compare(dir.size() - suffix.size(), suffix.size(), suffix) != 0)
      return UsageError("recover", "cannot derive the output name from '" + dir + "': pass -o OUT");
    out = dir.substr(0, dir.size() - suffix.size());  // gcollect -o X.gtrace writes X.gtrace.parts/
    if (out.size() < 7 || out.compare(out.size() - 7, 7, ".gtrace") != 0) out += ".gtrace";
  }
  const std::vector<std::string> parts = ListParts(dir);
  if (parts.empty()) return Fail("recover", NotFound(dir + " holds no part files (*.gtrace)"));
  if (Status free = output.CheckWritable(", or -o OUT"); !free.ok()) return Fail("recover", free);
  auto done = ConcatenateParts(parts, out, /*overwrite=*/true);
  if (!done.ok()) return Fail("recover", done.status());
  for (const auto& p : done->problems) std::fprintf(stderr, "gtrace recover: warning: %s\n", p.c_str());

  // What the recovered trace holds, from the file itself.
  auto bytes = ReadFileBytes(out);
  if (!bytes.ok()) return Fail("recover", bytes.status());
  TraceData data;
  auto report = ReadTrace(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), data);
  if (!report.ok()) return Fail("recover", report.status());
  std::vector<ProcessRecord> processes = data.processes;
  CollapseProcesses(processes);
  std::printf("recovered %s from %u of %zu parts: %zu processes, %llu events", out.c_str(), done->parts,
              parts.size(), processes.size(), static_cast<unsigned long long>(data.EventCount()));
  if (report->truncated || report->chunks_lost)
    std::printf("; %llu chunks lost, parts cut short (each keeps up to its last flush)",
                static_cast<unsigned long long>(report->chunks_lost));
  std::printf("\n");
  return report->clean() && done->problems.empty() ? kExitOk : kExitPartial;
}

}  // namespace gt::cli
