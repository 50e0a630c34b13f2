// gtrace info FILE [--json]
#include <cstdio>
#include <cstring>
#include <string>

#include "cli.h"
#include "gt/parts.h"
#include "gt/trace_data.h"
#include "info.h"
#include "nsys_input.h"

namespace gt::cli {

int CmdInfo(int argc, char** argv) {
  const char* kUsage =
      "Usage: gtrace info [--json] FILE\n\n"
      "Prints the trace header (version, segments), metadata (command line, host, start time, tool "
      "version),\n"
      "processes and threads, GPUs (name, compute capability, SMs, memory, bandwidth, peak FLOP/s), record\n"
      "counts per kind, the time span, recorded losses and any problem met while loading.\n\n"
      "Options:\n"
      "  --json      machine-readable output\n"
      "  -h, --help  this help\n\n";
  std::string path;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (IsHelp(a)) {
      std::printf("%s%s", kUsage, kExitCodesHelp);
      return kExitOk;
    }
    if (a == "--json") {
      json = true;
    } else if (a.size() > 1 && a[0] == '-') {
      return UsageError("info", "unknown option '" + a + "'");
    } else if (path.empty()) {
      path = a;
    } else {
      return UsageError("info", "more than one FILE given");
    }
  }
  if (path.empty()) return UsageError("info", "missing FILE");

  bool parts = false;
  auto bytes = ReadTraceOrParts(path, &parts);
  if (!bytes.ok()) return Fail("info", bytes.status());
  if (parts)
    std::fprintf(stderr,
                 "gtrace info: %s holds the parts of an unfinished gcollect run; `gtrace recover %s` writes "
                 "them as one trace\n",
                 path.c_str(), path.c_str());
  TraceData data;
  auto report = ReadTraceOrNsys({reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()}, data);
  if (!report.ok())
    return Fail("info", Status(report.status().code(), path + ": " + report.status().message()));
  InfoInput in{path, &data, &*report};
  std::string out = json ? FormatInfoJson(in) : FormatInfoText(in);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!report->clean()) {
    std::fprintf(stderr, "gtrace info: %s loaded with losses (%llu chunks lost%s)\n", path.c_str(),
                 static_cast<unsigned long long>(report->chunks_lost),
                 report->truncated ? ", truncated" : "");
    return kExitPartial;
  }
  return kExitOk;
}

}  // namespace gt::cli
