// gtrace upload FILE --server URL [--token-file F] [--json]
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli.h"
#include "gt/env.h"
#include "gt/server/client.h"

namespace gt::cli {

int CmdUpload(int argc, char** argv) {
  const char* kUsage =
      "Usage: gtrace upload FILE --server URL [--token-file F] [--json]\n\n"
      "Uploads a trace to a `gtrace serve` server and prints the link that opens it (stdout: the link "
      "only).\n"
      "The delete token goes to stderr: keep it to remove the trace later\n"
      "(curl -X DELETE -H 'X-Delete-Token: TOKEN' URL/api/traces/ID).\n\n"
      "Options:\n"
      "  --server URL       the server (default: $GTRACE_SERVER), e.g. http://gtrace.lan:8080\n"
      "  --token-file F     upload token, first line of F (default: $GTRACE_TOKEN_FILE)\n"
      "  --json             print the server's whole answer as JSON instead of the link\n"
      "  -h, --help         this help\n\n"
      "Exit codes: 0 uploaded, 1 error (the server's reason is printed), 2 uploaded but the server found "
      "the\n"
      "trace damaged (the link still works), 64 usage error.\n";
  std::string path, server_url, token_file;
  bool json = false;
  if (const char* env = env::Get(env::Var::kServer)) server_url = env;
  if (const char* env = env::Get(env::Var::kTokenFile)) token_file = env;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (IsHelp(a)) {
      std::printf("%s", kUsage);
      return kExitOk;
    }
    if (a == "--server") {
      if (i + 1 >= argc) return UsageError("upload", "--server needs a URL");
      server_url = argv[++i];
    } else if (a == "--token-file") {
      if (i + 1 >= argc) return UsageError("upload", "--token-file needs a file");
      token_file = argv[++i];
    } else if (a == "--json") {
      json = true;
    } else if (a.size() > 1 && a[0] == '-') {
      return UsageError("upload", "unknown option '" + a + "'");
    } else if (path.empty()) {
      path = a;
    } else {
      return UsageError("upload", "more than one FILE given");
    }
  }
  if (path.empty()) return UsageError("upload", "missing FILE");
  if (server_url.empty()) return UsageError("upload", "missing --server URL (or set GTRACE_SERVER)");
  std::string token;
  if (!token_file.empty()) {
    auto t = server::ReadTokenFile(token_file);
    if (!t.ok()) return Fail("upload", t.status());
    token = *t;
  }
  // A server that refuses early closes the socket under a body still being sent: that must be an error
  // message, not a silent death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  auto outcome = server::UploadTraceFile(server_url, path, token);
  if (!outcome.ok())
    return Fail("upload", Status(outcome.status().code(), path + ": " + outcome.status().message()));
  if (json) {
    std::printf("%s\n", outcome->response_json.c_str());
  } else {
    std::printf("%s\n", outcome->link.c_str());
  }
  std::fflush(stdout);
  std::fprintf(stderr, "gtrace upload: %s (%llu bytes%s); delete token: %s\n", outcome->id.c_str(),
               static_cast<unsigned long long>(outcome->bytes), outcome->created ? "" : ", already stored",
               outcome->delete_token.c_str());
  if (!outcome->warning.empty()) {
    std::fprintf(stderr, "gtrace upload: %s\n", outcome->warning.c_str());
    return kExitPartial;
  }
  return kExitOk;
}

}  // namespace gt::cli
