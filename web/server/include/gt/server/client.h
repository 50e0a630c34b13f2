// The client side of the share API: `gtrace upload FILE --server URL` (and `gcollect --upload`, which runs
// it).
#pragma once

#include <cstdint>
#include <string>

#include "gt/status.h"

namespace gt::server {

struct UploadOutcome {
  int http_status = 0;
  std::string id;
  std::string link;
  std::string delete_token;
  uint64_t bytes = 0;
  bool created = false;
  std::string warning;        // the server kept the trace but reported damage
  std::string response_json;  // the server's answer, verbatim (`gtrace upload --json`)
};

// Streams `path` to `server_url` ("http://host:port" or "https://host/prefix"). A refusal by the server comes
// back as an error whose message is the server's reason ("HTTP 413: upload exceeds the server's limit of
// ...").
StatusOr<UploadOutcome> UploadTraceFile(const std::string& server_url, const std::string& path,
                                        const std::string& token);

// Reads a token file: its first line, trimmed of whitespace. An empty token is an error (it would guard
// nothing).
StatusOr<std::string> ReadTokenFile(const std::string& path);

}  // namespace gt::server
