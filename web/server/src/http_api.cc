// [SECTION] helpers
// [SECTION] ShareServer::Impl: lifecycle
// [SECTION] upload
// [SECTION] download, delete, health
// [SECTION] TTL sweep
// [SECTION] ShareServer
#include <dirent.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "gt/server/ids.h"
#include "gt/server/server.h"
#include "static_files.h"

#ifndef GT_VERSION_STRING
#define GT_VERSION_STRING "0.0.0"
#endif

namespace gt::server {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] helpers
// ---------------------------------------------------------------------------------------------------------------
namespace {

using nlohmann::json;

void SendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(body.dump(), "application/json");
}

void SendError(httplib::Response& res, int status, const std::string& reason) {
  SendJson(res, status, json{{"error", reason}, {"status", status}});
}

// The client may still be sending a body we will not read: close the connection instead of parsing the rest
// of that body as the next request.
void SendErrorAndClose(httplib::Response& res, int status, const std::string& reason) {
  SendError(res, status, reason);
  res.set_header("Connection", "close");
}

int HttpStatusFor(const Status& s) {
  switch (s.code()) {
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kResourceExhausted:
      return 413;
    case StatusCode::kInvalidArgument:
    case StatusCode::kCorrupt:
    case StatusCode::kTruncated:
    case StatusCode::kUnsupported:
      return 400;
    default:
      return 500;
  }
}

// The client's reason for a 507: the OS's words ("No space left on device"), without the store's paths, which
// are the server's business (the store's messages read "cannot write /srv/gtrace/tmp/upload-….part: …").
std::string StoreRefusal(const Status& s) {
  const std::string& m = s.message();
  const size_t colon = m.rfind(": ");
  return "cannot store the upload: the server's disk refused the write (" +
         (colon == std::string::npos ? std::string("I/O error") : m.substr(colon + 2)) + ")";
}

// Shuts down the read side (without closing: httplib's worker owns the descriptor) of every connected TCP
// socket of this process whose local port is `port`: the connections the server accepted. A blocked read then
// sees EOF, while an answer already being written (an upload that finished, a download) still reaches its
// client. Clients in the same process (tests) have their own ephemeral local ports and are left alone. Linux:
// the descriptors are listed from /proc/self/fd.
void ShutdownAcceptedConnections(int port) {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const int fd = std::atoi(e->d_name);
    if (fd == dirfd(d)) continue;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage local{}, peer{};
    socklen_t len = sizeof(local), peer_len = sizeof(peer);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) continue;
    int local_port = -1;
    if (local.ss_family == AF_INET) local_port = ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
    if (local.ss_family == AF_INET6) local_port = ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port);
    if (local_port != port) continue;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) continue;  // not connected
    shutdown(fd, SHUT_RD);  // reads end (EOF); an answer already being written still reaches its client
  }
  closedir(d);
}

// Accepts only what a browser or our CLI would send as Host; anything else falls back to the bind address.
bool SaneHost(const std::string& host) {
  if (host.empty() || host.size() > 255) return false;
  for (unsigned char c : host)
    if (!(std::isalnum(c) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']')) return false;
  return true;
}

bool ParseU64(const std::string& s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

// httplib serves satisfiable ranges itself but drops the connection on a range past the end; those must be
// answered 416 before a content provider is installed. Returns false for an unsatisfiable first range.
bool RangeSatisfiable(const std::string& header, uint64_t size) {
  if (header.empty()) return true;
  if (header.compare(0, 6, "bytes=") != 0) return true;  // not a byte range: httplib ignores or rejects it
  std::string first =
      header.substr(6, header.find(',') == std::string::npos ? std::string::npos : header.find(',') - 6);
  while (!first.empty() && first.front() == ' ') first.erase(first.begin());
  while (!first.empty() && first.back() == ' ') first.pop_back();
  size_t dash = first.find('-');
  if (dash == std::string::npos) return true;
  std::string a = first.substr(0, dash), b = first.substr(dash + 1);
  uint64_t start = 0, suffix = 0;
  if (a.empty()) return ParseU64(b, &suffix) ? (suffix > 0 && size > 0) : true;
  if (!ParseU64(a, &start)) return true;
  return start < size;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] ShareServer::Impl: lifecycle
// ---------------------------------------------------------------------------------------------------------------
}  // namespace

// httplib::Server with its one-request entry point reachable, for ShareServer::AnswerRawRequest.
class HttpServer : public httplib::Server {
 public:
  // Only on a server that does not listen: httplib skips content providers (downloads) while its listening
  // socket is invalid, taking that for a shutdown, so a placeholder stands in for the call.
  bool AnswerOne(httplib::Stream& stream) {
    GT_ASSERT_MSG(svr_sock_ == INVALID_SOCKET, "AnswerOne on a listening server");
    svr_sock_ = std::numeric_limits<socket_t>::max();  // never used as a descriptor: nothing accepts here
    bool connection_closed = false;
    bool ok = process_request(stream, /*close_connection=*/true, connection_closed, nullptr);
    svr_sock_ = INVALID_SOCKET;
    return ok;
  }
};

// A request's bytes in, the response's bytes out: the whole HTTP path without a socket.
class MemoryStream final : public httplib::Stream {
 public:
  explicit MemoryStream(std::string_view in) : in_(in) {}
  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    size_t n = std::min(size, in_.size() - pos_);
    std::memcpy(ptr, in_.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 1;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 2;
  }
  socket_t socket() const override { return INVALID_SOCKET; }

  std::string out;

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

class ShareServer::Impl {
 public:
  Impl(std::unique_ptr<TraceStore> store, ServerOptions options)
      : store_(std::move(store)), options_(std::move(options)) {
    if (!options_.clock) options_.clock = [] { return static_cast<int64_t>(std::time(nullptr)); };
    if (!options_.validator) options_.validator = ValidateGtrace;
    while (!options_.public_url.empty() && options_.public_url.back() == '/') options_.public_url.pop_back();
  }

  ~Impl() { Stop(); }

  Status Init() {
    auto secret = store_->LoadOrCreateSecret();
    if (!secret.ok()) return secret.status();
    secret_ = *secret;
    GT_RETURN_IF_ERROR(site_.Init(options_.web_root));
    // httplib answers a Content-Length over the cap with 413 before any handler runs; chunked bodies are
    // counted in the upload handler. Here, not in Start: AnswerRawRequest must see the same limits.
    http_.set_payload_max_length(static_cast<size_t>(options_.max_upload));
    Routes();
    return Status::Ok();
  }

  std::string AnswerRawRequest(std::string_view request) {
    GT_ASSERT_MSG(!started_, "AnswerRawRequest on a started server");
    MemoryStream stream(request);
    http_.AnswerOne(stream);
    return std::move(stream.out);
  }

  Status Start() {
    GT_ASSERT_MSG(!started_, "Start twice");
    const int threads = std::max(4, options_.threads);
    http_.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
    http_.set_keep_alive_max_count(1000);
    http_.set_tcp_nodelay(true);
    // httplib's default adds SO_REUSEPORT, which lets a second server bind the same port and silently receive
    // half of the connections. SO_REUSEADDR alone still allows a quick restart over TIME_WAIT sockets.
    http_.set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    http_.set_read_timeout(30, 0);
    http_.set_write_timeout(30, 0);
    if (options_.port == 0) {
      port_ = http_.bind_to_any_port(options_.bind);
    } else if (http_.bind_to_port(options_.bind, options_.port)) {
      port_ = options_.port;
    } else if (options_.any_port_if_busy) {
      port_ = http_.bind_to_any_port(options_.bind);
    } else {
      port_ = -1;
    }
    if (port_ <= 0)
      return IoError("cannot listen on " + options_.bind + ":" + std::to_string(options_.port) +
                     " (address in use or not available)");
    started_ = true;
    SweepNow();
    listener_ = std::thread([this] {
      http_.listen_after_bind();
      listener_done_ = true;
    });
    // httplib's stop() is a no-op until the accept loop runs; waiting here makes Start(); Stop() safe.
    while (!http_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    sweeper_ = std::thread([this] { SweepLoop(); });
    return Status::Ok();
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(stop_mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    stop_cv_.notify_all();
    if (started_) http_.stop();
    // httplib's stop() closes the listener, but a worker blocked reading a stalled upload (or waiting on an
    // idle keep-alive connection) only notices after the read timeout: a SIGTERM took up to 30 s per stalled
    // client. Shutting the accepted connections' reads down wakes those reads at once; the upload is then
    // incomplete and its staging file dropped, as for any cut connection. Repeated until the accept loop has
    // drained, for a connection accepted just before stop().
    while (started_ && !listener_done_) {
      ShutdownAcceptedConnections(port_);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (listener_.joinable()) listener_.join();
    if (sweeper_.joinable()) sweeper_.join();
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopped_ = true;
    stop_cv_.notify_all();
  }

  void Wait() {
    std::unique_lock<std::mutex> lock(stop_mu_);
    stop_cv_.wait(lock, [this] { return stopped_; });
  }

  int port() const { return port_; }

  std::string base_url() const {
    if (!options_.public_url.empty()) return options_.public_url;
    std::string host = options_.bind;
    if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
    if (host == "::") host = "[::1]";
    if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
    return "http://" + host + ":" + std::to_string(port_);
  }

  std::string BaseUrlFor(const httplib::Request& req) const {
    if (!options_.public_url.empty()) return options_.public_url;
    const std::string host = req.get_header_value("Host");
    if (SaneHost(host)) return "http://" + host;
    return base_url();
  }

  TraceStore& store() { return *store_; }

  // ---------------------------------------------------------------------------------------------------------------
  // [SECTION] upload
  // ---------------------------------------------------------------------------------------------------------------

  // Validates, names and publishes a finished staging object. The HTTP handler and IngestFile share it.
  // `file_name`: what the uploader called the file (sanitized here), shown to whoever opens the link.
  StatusOr<IngestResult> Publish(UploadStaging& staging, TraceIdHasher& hasher, std::string_view file_name) {
    auto bytes = staging.Finish();
    if (!bytes.ok()) return bytes.status();
    if (bytes->empty()) return InvalidArgument("empty upload: expected the bytes of a .gtrace file");
    auto validation = options_.validator(*bytes);
    if (!validation.ok()) return validation.status();
    IngestResult result;
    result.id = hasher.FinishId();
    auto token = NewDeleteToken();
    if (!token.ok()) return token.status();
    result.delete_token = *token;
    auto commit = store_->Commit(staging, result.id, Sha256Hex(result.delete_token), validation->format,
                                 SanitizeTraceName(file_name), options_.clock());
    if (!commit.ok()) return commit.status();
    result.bytes = commit->meta.bytes;
    result.created = commit->created;
    result.validation = std::move(*validation);
    NoteAccess(result.id, options_.clock());
    if (options_.on_stored) options_.on_stored(result.id);
    return result;
  }

  StatusOr<IngestResult> IngestFile(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NotFound("cannot open " + path);
    auto staging = store_->BeginUpload();
    if (!staging.ok()) {
      close(fd);
      return staging.status();
    }
    TraceIdHasher hasher(secret_);
    std::string buf(1 << 20, '\0');
    for (;;) {
      ssize_t n = read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        close(fd);
        return IoError("cannot read " + path);
      }
      if (n == 0) break;
      if ((*staging)->size() + static_cast<uint64_t>(n) > options_.max_upload) {
        close(fd);
        return ResourceExhausted(path + " is larger than --max-upload (" +
                                 std::to_string(options_.max_upload) + " bytes)");
      }
      hasher.Update(buf.data(), static_cast<size_t>(n));
      Status s = (*staging)->Append(buf.data(), static_cast<size_t>(n));
      if (!s.ok()) {
        close(fd);
        return s;
      }
    }
    close(fd);
    return Publish(**staging, hasher, path);
  }

  // 401 without a token, 403 with a wrong one; nothing of the body is read either way.
  bool Authorized(const httplib::Request& req, httplib::Response& res) {
    if (options_.token.empty()) return true;
    const std::string auth = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    if (auth.size() <= prefix.size() || auth.compare(0, prefix.size(), prefix) != 0) {
      res.set_header("WWW-Authenticate", "Bearer realm=\"gtrace\"");
      SendErrorAndClose(res, 401, "this server requires a token for uploads (Authorization: Bearer <token>)");
      return false;
    }
    // Hash both sides so the comparison is over equal lengths and leaks nothing about the token's length.
    if (!ConstantTimeEquals(Sha256Hex(auth.substr(prefix.size())), Sha256Hex(options_.token))) {
      SendErrorAndClose(res, 403, "wrong upload token");
      return false;
    }
    return true;
  }

  // POST /api/views: a view state too long for a link (notes). Same token as uploads; the body is read only
  // up to max_view_bytes, validated (ServerOptions::view_validator), stored under HMAC(secret, "view\n" +
  // text).
  void HandleSaveView(const httplib::Request& req, httplib::Response& res,
                      const httplib::ContentReader& reader) {
    if (!Authorized(req, res)) return;
    const std::string limit_text =
        "view state exceeds this server's limit of " + std::to_string(options_.max_view_bytes) + " bytes";
    uint64_t declared = 0;
    if (req.has_header("Content-Length") && ParseU64(req.get_header_value("Content-Length"), &declared) &&
        declared > options_.max_view_bytes)
      return SendErrorAndClose(res, 413, limit_text);
    std::string text;
    bool too_large = false;
    const bool complete = reader([&](const char* data, size_t size) {
      if (text.size() + size > options_.max_view_bytes) return too_large = true, false;
      text.append(data, size);
      return true;
    });
    if (too_large) return SendErrorAndClose(res, 413, limit_text);
    if (!complete) return SendErrorAndClose(res, 400, "incomplete body");
    if (text.empty()) return SendError(res, 400, "empty view state");
    for (unsigned char c : text)  // the default check; the viewer's own parser (view_validator) is stricter
      if (c < 0x21 || c > 0x7e)
        return SendError(res, 400, "not a view state: non-printable or non-ASCII byte");
    if (options_.view_validator) {
      const Status v = options_.view_validator(text);
      if (!v.ok()) return SendError(res, 400, "not a view state: " + v.message());
    }
    TraceIdHasher hasher(secret_);
    hasher.Update("view\n", 5);  // a view and a trace with the same bytes never share an id
    hasher.Update(text.data(), text.size());
    const std::string id = hasher.FinishId();
    const Status st = store_->PutView(id, text);
    if (st.code() == StatusCode::kUnsupported) return SendError(res, 501, st.message());
    if (!st.ok()) return SendError(res, 507, StoreRefusal(st));
    SendJson(res, 201, json{{"id", id}, {"bytes", text.size()}});
  }

  // GET /api/t/<id>/<what>: a stored trace's contents, answered by ServerOptions::trace_query (the CLI's
  // viewer index). Unknown and malformed ids get the same 404 as downloads.
  void HandleTraceQuery(const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (!options_.trace_query || !IsValidTraceId(id)) return SendError(res, 404, "not found");
    if (!store_->Head(id).ok()) return SendError(res, 404, "not found");
    if (req.params.size() > options_.max_query_params) return SendError(res, 400, "too many parameters");
    TraceQuery q{id, req.matches[2], {}};
    for (const auto& [k, v] : req.params) q.params.emplace_back(k, v);
    const TraceQueryAnswer a = options_.trace_query(q);
    res.status = a.status;
    if (a.retry_after_s > 0) res.set_header("Retry-After", std::to_string(a.retry_after_s));
    // Answers depend only on the trace's bytes (the id) and the request: a client may cache them; errors and
    // "not yet" are not kept.
    res.set_header("Cache-Control", a.status == 200 ? "private, max-age=86400" : "no-store");
    res.set_content(a.body, "application/json");
  }

  void HandleGetView(const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (!IsValidTraceId(id)) return SendError(res, 404, "not found");
    auto text = store_->GetView(id);
    if (!text.ok()) {
      if (text.status().code() == StatusCode::kNotFound) return SendError(res, 404, "not found");
      if (text.status().code() == StatusCode::kUnsupported)
        return SendError(res, 501, text.status().message());
      return SendError(res, 500, "cannot read view: " + text.status().message());
    }
    res.set_header("Cache-Control", "private, max-age=31536000, immutable");  // content-addressed
    res.set_content(*text, "text/plain; charset=us-ascii");
  }

  void HandleUpload(const httplib::Request& req, httplib::Response& res,
                    const httplib::ContentReader& reader) {
    if (!Authorized(req, res)) return;
    if (req.is_multipart_form_data())
      return SendErrorAndClose(res, 415, "send the trace as the raw request body (application/octet-stream)");
    const std::string limit_text = "upload exceeds this server's limit of " +
                                   std::to_string(options_.max_upload) + " bytes (--max-upload)";
    uint64_t declared = 0;
    if (req.has_header("Content-Length") && ParseU64(req.get_header_value("Content-Length"), &declared) &&
        declared > options_.max_upload)
      return SendErrorAndClose(res, 413, limit_text);
    auto staging = store_->BeginUpload();
    if (!staging.ok()) return SendError(res, 507, StoreRefusal(staging.status()));
    TraceIdHasher hasher(secret_);
    bool too_large = false;
    Status write_error;
    const bool complete = reader([&](const char* data, size_t size) {
      if ((*staging)->size() + size > options_.max_upload) {
        too_large = true;
        return false;
      }
      hasher.Update(data, size);
      write_error = (*staging)->Append(data, size);
      return write_error.ok();
    });
    // Every early return below drops `staging`, which deletes its temp file: a refused or cut-off upload
    // leaves nothing in the store.
    if (too_large) return SendErrorAndClose(res, 413, limit_text);
    if (!write_error.ok()) return SendErrorAndClose(res, 507, StoreRefusal(write_error));
    if (!complete)
      return SendErrorAndClose(res, 400, "upload incomplete: the connection ended inside the body");
    if (declared != 0 && (*staging)->size() != declared)
      return SendErrorAndClose(res, 400, "upload incomplete: body shorter than Content-Length");
    // The name travels in the query (?name=...): a header could not carry a browser's non-ASCII file name.
    auto result = Publish(**staging, hasher, req.get_param_value("name"));
    if (!result.ok()) {
      // An I/O error here is the store refusing the write (a full disk, most often: small uploads sit in the
      // staging buffer until Finish() flushes them, so ENOSPC shows up here rather than in Append): 507 like
      // a refused Append, not a 500 that reads as a server bug.
      if (result.status().code() == StatusCode::kIoError)
        return SendError(res, 507, StoreRefusal(result.status()));
      const int status = HttpStatusFor(result.status());
      return SendError(
          res, status,
          status == 400 ? "not a readable trace: " + result.status().message() : result.status().message());
    }
    json body{{"id", result->id},
              {"link", BaseUrlFor(req) + "/?trace=" + result->id},
              {"delete_token", result->delete_token},
              {"bytes", result->bytes},
              {"created", result->created},
              {"format", result->validation.format}};
    if (!result->validation.clean()) {
      body["damaged"] = json{{"chunks_lost", result->validation.chunks_lost},
                             {"bytes_lost", result->validation.bytes_lost},
                             {"truncated", result->validation.truncated},
                             {"problems", result->validation.problems}};
    }
    res.set_header("Location", "/api/traces/" + result->id);
    SendJson(res, result->created ? 201 : 200, body);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // [SECTION] download, delete, health
  // ---------------------------------------------------------------------------------------------------------------

  void HandleDownload(const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    // Malformed and unknown ids get the same answer, so probing learns nothing.
    if (!IsValidTraceId(id)) return SendError(res, 404, "not found");
    auto blob = store_->Open(id);
    if (!blob.ok()) {
      if (blob.status().code() == StatusCode::kNotFound) return SendError(res, 404, "not found");
      return SendError(res, 500, "cannot read trace: " + blob.status().message());
    }
    NoteAccess(id, options_.clock());
    const std::string etag = "\"" + id + "\"";  // content-addressed: the bytes behind an id never change
    res.set_header("ETag", etag);
    res.set_header("Accept-Ranges", "bytes");
    res.set_header("Cache-Control", "private, no-cache");
    if (req.get_header_value("If-None-Match") == etag) {
      res.status = 304;
      return;
    }
    res.set_header("Content-Disposition", "attachment; filename=\"" + DownloadName(id) + "\"");
    const std::shared_ptr<const TraceBlob> data = *blob;
    const uint64_t size = data->size();
    if (!RangeSatisfiable(req.get_header_value("Range"), size)) {
      res.status = 416;
      res.set_header("Content-Range", "bytes */" + std::to_string(size));
      return;
    }
    if (size == 0) return res.set_content("", "application/octet-stream");
    res.set_content_provider(
        static_cast<size_t>(size), "application/octet-stream",
        [data](size_t offset, size_t length, httplib::DataSink& sink) {
          return data->Read(offset, length, [&sink](const char* p, size_t n) { return sink.write(p, n); });
        });
  }

  void HandleDelete(const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (!IsValidTraceId(id)) return SendError(res, 404, "not found");
    auto meta = store_->Head(id);
    if (!meta.ok())
      return SendError(res, HttpStatusFor(meta.status()),
                       meta.status().code() == StatusCode::kNotFound ? "not found" : meta.status().message());
    const std::string token = req.get_header_value("X-Delete-Token");
    if (token.empty()) return SendError(res, 401, "deleting needs the X-Delete-Token returned by the upload");
    auto removed = store_->RemoveOwner(id, Sha256Hex(token));
    if (!removed.ok()) {
      if (removed.status().code() == StatusCode::kInvalidArgument)
        return SendError(res, 403, "wrong delete token");
      if (removed.status().code() == StatusCode::kNotFound) return SendError(res, 404, "not found");
      return SendError(res, 500, removed.status().message());
    }
    if (*removed) ForgetAccess(id);
    res.status = 204;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // [SECTION] TTL sweep
  // ---------------------------------------------------------------------------------------------------------------

  // Downloads refresh "last accessed" in memory at once and in the store at most every touch interval, so a
  // busy trace costs one metadata write an hour, not one per download.
  void NoteAccess(const std::string& id, int64_t now) {
    bool persist = false;
    {
      std::lock_guard<std::mutex> lock(access_mu_);
      auto& entry = access_[id];
      entry.last = std::max(entry.last, now);
      if (now - entry.persisted >= options_.touch_interval_seconds) {
        entry.persisted = now;
        persist = true;
      }
    }
    if (persist) (void)store_->Touch(id, now);
  }

  // The uploader's file name (SanitizeTraceName: no quote, no CR/LF can reach the header), else
  // "<id>.gtrace". A trace keeps the first name it got, so it is read from the store once and then kept with
  // the access entry: a page's range requests do not each re-read the metadata. A trace without a name is
  // looked up again (a later upload of the same bytes may name it).
  std::string DownloadName(const std::string& id) {
    {
      std::lock_guard<std::mutex> lock(access_mu_);
      if (auto it = access_.find(id); it != access_.end() && !it->second.name.empty()) return it->second.name;
    }
    auto meta = store_->Head(id);
    if (!meta.ok() || meta->name.empty()) return id + ".gtrace";
    std::lock_guard<std::mutex> lock(access_mu_);
    if (auto it = access_.find(id); it != access_.end()) it->second.name = meta->name;
    return meta->name;
  }

  void ForgetAccess(const std::string& id) {
    std::lock_guard<std::mutex> lock(access_mu_);
    access_.erase(id);
  }

  size_t SweepNow() {
    if (options_.ttl_seconds <= 0) return 0;
    const int64_t now = options_.clock();
    std::vector<std::string> expired;
    (void)store_->ForEach([&](const std::string& id, const TraceMeta& meta) {
      int64_t last = std::max(meta.uploaded_unix, meta.accessed_unix);
      {
        std::lock_guard<std::mutex> lock(access_mu_);
        auto it = access_.find(id);
        if (it != access_.end()) last = std::max(last, it->second.last);
      }
      if (now - last > options_.ttl_seconds) expired.push_back(id);
    });
    size_t removed = 0;
    for (const auto& id : expired) {
      auto r = store_->RemoveOwner(id, "");
      if (r.ok() && *r) {
        ++removed;
        ForgetAccess(id);
      }
    }
    if (removed > 0 && !options_.quiet) std::fprintf(stderr, "gtrace serve: expired %zu trace(s)\n", removed);
    return removed;
  }

  void SweepLoop() {
    std::unique_lock<std::mutex> lock(stop_mu_);
    while (!stopping_) {
      stop_cv_.wait_for(lock, std::chrono::seconds(std::max<int64_t>(1, options_.sweep_interval_seconds)));
      if (stopping_) break;
      lock.unlock();
      SweepNow();
      lock.lock();
    }
  }

 private:
  void Routes() {
    // Clients check the size limit and whether a token is needed before streaming a large body.
    http_.Get("/api/health", [this](const httplib::Request&, httplib::Response& res) {
      SendJson(res, 200,
               json{{"ok", true},
                    {"version", GT_VERSION_STRING},
                    {"max_upload", options_.max_upload},
                    {"token_required", !options_.token.empty()}});
    });
    http_.Post("/api/traces",
               [this](const httplib::Request& req, httplib::Response& res,
                      const httplib::ContentReader& reader) { HandleUpload(req, res, reader); });
    http_.Post("/api/views",
               [this](const httplib::Request& req, httplib::Response& res,
                      const httplib::ContentReader& reader) { HandleSaveView(req, res, reader); });
    http_.Get(R"(/api/views/([^/]*))",
              [this](const httplib::Request& req, httplib::Response& res) { HandleGetView(req, res); });
    http_.Get(R"(/api/traces/([^/]*))",
              [this](const httplib::Request& req, httplib::Response& res) { HandleDownload(req, res); });
    http_.Delete(R"(/api/traces/([^/]*))",
                 [this](const httplib::Request& req, httplib::Response& res) { HandleDelete(req, res); });
    http_.Get(R"(/api/t/([^/]*)/([a-z]+))",
              [this](const httplib::Request& req, httplib::Response& res) { HandleTraceQuery(req, res); });
    // No listing and nothing else under /api: the same 404 for all of it.
    http_.Get(R"(/api(/.*)?)",
              [](const httplib::Request&, httplib::Response& res) { SendError(res, 404, "not found"); });
    http_.Get(R"(/.*)",
              [this](const httplib::Request& req, httplib::Response& res) { site_.Serve(req, res); });
    // Statuses httplib produces on its own (413 before routing, 400 for unparsable requests, 404 for unrouted
    // methods) get a JSON body too; never any request text echoed into HTML.
    http_.set_error_handler(
        httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
          if (!res.body.empty() || res.status == 416) return httplib::Server::HandlerResponse::Unhandled;
          std::string reason = "request refused";
          if (res.status == 400) reason = "malformed request";
          if (res.status == 404) reason = "not found";
          if (res.status == 405) reason = "method not allowed";
          if (res.status == 413) reason = "upload exceeds this server's limit (--max-upload)";
          if (res.status == 414) reason = "request URI too long";
          if (res.status >= 500) reason = "internal error";
          SendError(res, res.status, reason);
          return httplib::Server::HandlerResponse::Handled;
        }));
    http_.set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("Referrer-Policy", "no-referrer");  // trace ids live in URLs: never leak them onward
      res.set_header("X-Frame-Options", "DENY");
      res.set_header("Cross-Origin-Opener-Policy", "same-origin");
      // With COOP, makes the page cross-origin isolated: SharedArrayBuffer, so the viewer loads on threads.
      res.set_header("Cross-Origin-Embedder-Policy", "require-corp");
      res.set_header("Cross-Origin-Resource-Policy", "same-origin");
      if (!res.has_header("Content-Security-Policy"))
        res.set_header("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; sandbox");
    });
    if (!options_.quiet) {
      http_.set_logger([](const httplib::Request& req, const httplib::Response& res) {
        // The path only: query strings may carry view state, never tokens, but keep logs short anyway.
        std::fprintf(stderr, "%s %s %d\n", req.method.c_str(), req.path.c_str(), res.status);
      });
    }
  }

  struct Access {
    int64_t last = 0;
    int64_t persisted = 0;
    std::string name;  // the stored file name once read ("" = not read yet, or the trace has none)
  };

  std::unique_ptr<TraceStore> store_;
  ServerOptions options_;
  std::string secret_;
  StaticSite site_;
  HttpServer http_;
  int port_ = -1;
  bool started_ = false;
  std::thread listener_, sweeper_;
  std::atomic<bool> listener_done_{false};
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false, stopped_ = false;
  std::mutex access_mu_;
  std::unordered_map<std::string, Access> access_;
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] ShareServer
// ---------------------------------------------------------------------------------------------------------------

StatusOr<std::unique_ptr<ShareServer>> ShareServer::Create(std::unique_ptr<TraceStore> store,
                                                           ServerOptions options) {
  if (!store) return InvalidArgument("no trace store");
  if (options.max_upload == 0) return InvalidArgument("--max-upload must be positive");
  auto impl = std::make_unique<Impl>(std::move(store), std::move(options));
  GT_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<ShareServer>(new ShareServer(std::move(impl)));
}

ShareServer::ShareServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ShareServer::~ShareServer() = default;
Status ShareServer::Start() {
  return impl_->Start();
}
void ShareServer::Stop() {
  impl_->Stop();
}
void ShareServer::Wait() {
  impl_->Wait();
}
int ShareServer::port() const {
  return impl_->port();
}
std::string ShareServer::base_url() const {
  return impl_->base_url();
}
StatusOr<IngestResult> ShareServer::IngestFile(const std::string& path) {
  return impl_->IngestFile(path);
}
size_t ShareServer::SweepNow() {
  return impl_->SweepNow();
}
std::string ShareServer::AnswerRawRequest(std::string_view request) {
  return impl_->AnswerRawRequest(request);
}
TraceStore& ShareServer::store() {
  return impl_->store();
}

}  // namespace gt::server
