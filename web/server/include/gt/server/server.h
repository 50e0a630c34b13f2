// `gtrace serve`: the viewer page, the trace upload/download API and share links, on cpp-httplib.
// The API is documented in docs/server.md; this header is what the CLI, the tests and the benchmark use.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gt/server/store.h"
#include "gt/status.h"

namespace gt::server {

// What validation learned about an upload. A trace with damaged chunks is kept (everything intact in it is
// still worth sharing) and the losses are reported back to the uploader.
struct Validation {
  std::string format = "gtrace";
  uint64_t records = 0;
  uint64_t chunks_lost = 0;
  uint64_t bytes_lost = 0;
  bool truncated = false;
  std::vector<std::string> problems;  // first few, human-readable
  bool clean() const { return chunks_lost == 0 && !truncated; }
};
// Errors are returned for bytes that are not a readable trace; their message is sent to the client.
using TraceValidator = std::function<StatusOr<Validation>(std::span<const uint8_t> bytes)>;
// The default: a .gtrace readable by gt::ReadTrace with at least one intact chunk.
StatusOr<Validation> ValidateGtrace(std::span<const uint8_t> bytes);

// A query about one stored trace's contents: GET /api/t/<id>/<what>?<params> (docs/server.md "Remote
// traces"). The server checks the id and that the trace exists; the answer comes from the handler (the CLI
// plugs in the viewer core's index, so web/server stays free of the viewer).
struct TraceQuery {
  std::string id;
  std::string what;                                         // "meta", "tiles", "event", "kernels", "summary"
  std::vector<std::pair<std::string, std::string>> params;  // the query string, decoded, in order
};
struct TraceQueryAnswer {
  int status = 200;  // 202: not ready yet (the index is being built): ask again after retry_after_s
  std::string body;  // JSON
  int retry_after_s = 0;
};
using TraceQueryHandler = std::function<TraceQueryAnswer(const TraceQuery&)>;

struct ServerOptions {
  std::string bind = "127.0.0.1";
  int port = 8080;                // 0 picks a free port (tests, benchmarks)
  bool any_port_if_busy = false;  // `port` taken: take a free one instead of failing (the CLI's default)
  std::string web_root;           // the built page (index.html, gtrace.js, gtrace.wasm); empty: API only
  std::string token;              // required as "Authorization: Bearer <token>" for uploads; empty: open
  // Bytes; larger uploads get 413 and leave nothing behind. Bodies stream to the store's disk (a 256 KiB
  // staging buffer), so the cap bounds disk, not memory; what bounds memory is the index build
  // (docs/server.md).
  uint64_t max_upload = 4ull << 30;
  int64_t ttl_seconds = 0;  // expire traces neither uploaded nor downloaded for this long; 0: never
  int64_t sweep_interval_seconds = 3600;  // how often the TTL sweep runs (also once at start)
  int64_t touch_interval_seconds = 3600;  // downloads refresh "last accessed" at most this often per trace
  std::string public_url;                 // base of printed links ("https://gtrace.example.com"); empty: Host
  int threads = 64;                       // worker threads; each keep-alive connection holds one while open
  std::function<int64_t()> clock;         // unix seconds; tests inject one to expire traces without waiting
  TraceValidator validator;               // empty: ValidateGtrace
  bool quiet = true;                      // no access log on stderr
  // Saved view states (POST /api/views): at most max_view_bytes of text, checked by view_validator (the CLI
  // passes gt::viewer::ViewState::Parse; empty: any printable ASCII is accepted) before it is stored.
  size_t max_view_bytes = 64 * 1024;
  std::function<Status(std::string_view text)> view_validator;
  // GET /api/t/<id>/...: empty: 404, as for any other unknown path.
  TraceQueryHandler trace_query;
  // Called after an upload (or IngestFile) is stored, with its id, on the uploading thread: the CLI queues
  // the index build here (its own thread does the work).
  std::function<void(const std::string& id)> on_stored;
  size_t max_query_params = 16;  // more parameters than any query takes: 400
};

struct IngestResult {
  std::string id;
  std::string delete_token;
  uint64_t bytes = 0;
  bool created = false;
  Validation validation;
};

class ShareServer {
 public:
  static StatusOr<std::unique_ptr<ShareServer>> Create(std::unique_ptr<TraceStore> store,
                                                       ServerOptions options);
  ~ShareServer();  // stops and joins

  // Binds and starts serving on background threads; port() is known when this returns.
  Status Start();
  void Stop();  // idempotent; in-flight requests finish or are cut, nothing half-written stays in the store
  void Wait();  // until Stop()
  int port() const;
  // "http://127.0.0.1:PORT" (or public_url): the base of links when no Host header is at hand.
  std::string base_url() const;
  std::string LinkFor(const std::string& id) const { return base_url() + "/?trace=" + id; }

  // The upload path without HTTP (`gtrace serve --open FILE`): validate, hash, store, dedup.
  StatusOr<IngestResult> IngestFile(const std::string& path);
  // One raw HTTP request answered from memory by the same routes, limits and handlers, without a socket, on
  // a server that was not started; returns the raw response (the fuzz target tests/fuzz/fuzz_server.cc,
  // tests).
  std::string AnswerRawRequest(std::string_view request);
  // Runs the TTL sweep now; returns how many traces expired.
  size_t SweepNow();
  TraceStore& store();

  class Impl;

 private:
  explicit ShareServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gt::server
