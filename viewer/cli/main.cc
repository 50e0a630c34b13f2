// `gtrace`: every offline operation on trace files, one subcommand each.
//
// Adding a command `gtrace foo` (two lines):
//   1. write cmd_foo.cc with `int CmdFoo(int argc, char** argv)` in namespace gt::cli (argv[0] is "foo";
//   print
//      usage on --help, use the exit codes of cli.h) and list it in viewer/cli/CMakeLists.txt;
//   2. add `X(foo, Foo, "one-line summary")` to GT_COMMANDS below.
#include <cstdio>
#include <cstring>

#include "cli.h"
#include "gt/nsys/sqlite_reader.h"
#include "gt/reader.h"

#define GT_COMMANDS(X)                                                                           \
  X(info, Info, "summarize a trace: metadata, processes, devices, record counts, losses")        \
  X(export, Export, "convert a trace: --chrome (Chrome/Perfetto JSON), --sqlite (SQL database)") \
  X(serve, Serve, "serve the viewer and a trace store for share links (docs/server.md)")         \
  X(upload, Upload, "upload a trace to a gtrace server and print its link")                      \
  X(stats, Stats,                                                                                \
    "summaries: GPU idle share, kernels, copies, API calls, NVTX (.gtrace, Chrome/Kineto JSON)") \
  X(diff, Diff, "compare two traces: what got faster or slower, by kernel, copy and API call")   \
  X(merge, Merge, "merge the traces of a distributed job (one per rank or node) onto one clock") \
  X(mcp, Mcp, "Model Context Protocol server on stdio: lets AI agents query traces")             \
  X(index, Index, "build the viewer index of a trace (what gtrace serve maps to answer tiles)")  \
  X(recover, Recover, "rebuild the trace of an interrupted gcollect run from its NAME.parts folder")

namespace gt::cli {
#define GT_DECLARE(name, Fn, summary) int Cmd##Fn(int argc, char** argv);
GT_COMMANDS(GT_DECLARE)
#undef GT_DECLARE

namespace {

struct Command {
  const char* name;
  int (*fn)(int, char**);
  const char* summary;
};

const Command kCommands[] = {
#define GT_ENTRY(name, Fn, summary) {#name, &Cmd##Fn, summary},
    GT_COMMANDS(GT_ENTRY)
#undef GT_ENTRY
};

void PrintHelp(FILE* f) {
  std::fprintf(f,
               "Usage: gtrace <command> [options] [args]\n\n"
               "Offline tools for .gtrace files (written by gcollect).\n\nCommands:\n");
  for (const auto& c : kCommands) std::fprintf(f, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(f, "\nRun 'gtrace <command> --help' for a command's options.\n\n%s", kExitCodesHelp);
}

}  // namespace
}  // namespace gt::cli

int main(int argc, char** argv) {
  using namespace gt::cli;
  gt::nsys::RegisterNsysReader();  // every command that opens traces also opens nsys SQLite exports
  if (argc < 2) {
    PrintHelp(stderr);
    return kExitUsage;
  }
  if (IsHelp(argv[1])) {
    PrintHelp(stdout);
    return kExitOk;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::printf("gtrace 0.1.0 (.gtrace format %s)\n", gt::FormatVersionString().c_str());
    return kExitOk;
  }
  for (const auto& c : kCommands)
    if (std::strcmp(argv[1], c.name) == 0) return c.fn(argc - 1, argv + 1);
  std::fprintf(stderr, "gtrace: unknown command '%s'\n\n", argv[1]);
  PrintHelp(stderr);
  return kExitUsage;
}
