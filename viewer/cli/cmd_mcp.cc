// gtrace mcp: the Model Context Protocol server on stdin/stdout (docs/user-guide.md says how to register it).
#include <cstdio>
#include <string>

#include "cli.h"
#include "mcp.h"

namespace gt::cli {

int CmdMcp(int argc, char** argv) {
  const char* kUsage =
      "Usage: gtrace mcp\n\n"
      "Runs a Model Context Protocol server over stdio (JSON-RPC 2.0, one message per line) for AI agents:\n"
      "tools open_trace, top_kernels, idle_gaps, kernel_counters, nvtx_ranges, compare, collectives and sql\n"
      "(read-only SQL on the trace's SQLite export). Register it in an MCP client as the command\n"
      "`gtrace mcp` (docs/user-guide.md). Logs go to stderr; stdout carries protocol messages only.\n\n"
      "Options:\n"
      "  -h, --help  this help\n\n";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (IsHelp(a)) {
      std::printf("%s%s", kUsage, kExitCodesHelp);
      return kExitOk;
    }
    return UsageError("mcp", "unknown argument '" + a + "'");
  }
  McpServer server;
  return RunMcpStdio(server, 0, stdout);
}

}  // namespace gt::cli
