// `gtrace mcp`: a Model Context Protocol server (JSON-RPC 2.0 over stdio, one message per line) that lets an
// AI agent open traces and ask what `gtrace stats`/`diff` and the SQL export know. The message handler is a
// pure function of the server's state (string in, string out), so tests and the fuzzer drive it without a
// process.
#pragma once

#include <cstddef>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "gt/viewer/model.h"

namespace gt::cli {

struct McpOptions {
  bool allow_files = true;             // open_trace may read files (the fuzzer turns it off)
  size_t max_open_traces = 8;          // traces held at once (each is a loaded model, maybe a SQLite copy)
  size_t max_result_bytes = 64 << 10;  // a tool result's text is cut (and says so) beyond this
  size_t max_sql_rows = 1000;          // hard cap of the sql tool's `limit`
  double sql_timeout_s = 10;           // a query running longer is interrupted
};

inline constexpr size_t kMcpMaxLineBytes = 8 << 20;  // longer messages are answered with an error, not read

class McpServer {
 public:
  explicit McpServer(McpOptions options = {});
  ~McpServer();
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  // One JSON-RPC message in, its response out (one line, no newline); "" for notifications and responses.
  // Never throws: malformed input gets a JSON-RPC error response.
  std::string Handle(std::string_view message);
  // The response to a message that was too long to read (id unknown).
  static std::string TooLargeResponse();
  // Holds an already loaded model as if open_trace had opened it from `label`; returns its id (tests and the
  // fuzzer, which open no files).
  std::string AdoptTrace(const std::string& label, std::unique_ptr<viewer::TraceModel> model);

  struct OpenTrace;

 private:
  McpOptions options_;
  std::map<std::string, std::unique_ptr<OpenTrace>> traces_;  // by id "t1", "t2", ...
  unsigned next_id_ = 1;

  friend struct McpTools;
};

// The stdio loop: reads messages from `in_fd` until EOF, writes responses to `out`.
int RunMcpStdio(McpServer& server, int in_fd, std::FILE* out);

}  // namespace gt::cli
