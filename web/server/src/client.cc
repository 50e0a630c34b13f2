#include "gt/server/client.h"

#include <fcntl.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

namespace gt::server {
namespace {

struct ParsedUrl {
  std::string origin;  // scheme://host[:port]
  std::string prefix;  // path the server is mounted under, without trailing slash
};

StatusOr<ParsedUrl> ParseServerUrl(const std::string& url) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos)
    return InvalidArgument("--server needs a URL like http://host:8080, got " + url);
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") return InvalidArgument("--server must be http:// or https://");
  size_t path_start = url.find('/', scheme_end + 3);
  ParsedUrl out;
  out.origin = url.substr(0, path_start);
  if (out.origin.size() <= scheme_end + 3) return InvalidArgument("--server URL has no host: " + url);
  if (path_start != std::string::npos) out.prefix = url.substr(path_start);
  size_t q = out.prefix.find_first_of("?#");
  if (q != std::string::npos) out.prefix.resize(q);
  while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();
  return out;
}

}  // namespace

StatusOr<std::string> ReadTokenFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return NotFound("cannot open token file " + path);
  char buf[4096];
  size_t n = std::fread(buf, 1, sizeof(buf), f);
  std::fclose(f);
  std::string token(buf, n);
  size_t nl = token.find_first_of("\r\n");
  if (nl != std::string::npos) token.resize(nl);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.pop_back();
  while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.erase(token.begin());
  if (token.empty()) return InvalidArgument("token file " + path + " is empty");
  return token;
}

StatusOr<UploadOutcome> UploadTraceFile(const std::string& server_url, const std::string& path,
                                        const std::string& token) {
  auto url = ParseServerUrl(server_url);
  if (!url.ok()) return url.status();
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFound("cannot open " + path);
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return InvalidArgument(path + " is not a regular file");
  }
  const size_t size = static_cast<size_t>(st.st_size);

  httplib::Client client(url->origin);
  client.set_connection_timeout(10, 0);
  client.set_read_timeout(600, 0);  // the server validates the whole trace before it answers
  client.set_write_timeout(60, 0);
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);

  // Refusals that come before the body is read (too large, no token) close the connection, and a client still
  // streaming a large body then sees a broken pipe instead of the answer. Ask first.
  if (auto health = client.Get(url->prefix + "/api/health"); health && health->status == 200) {
    nlohmann::json h = nlohmann::json::parse(health->body, nullptr, false);
    if (h.is_object() && h.contains("max_upload") && h["max_upload"].is_number_unsigned() &&
        size > h["max_upload"].get<uint64_t>()) {
      close(fd);
      return ResourceExhausted("HTTP 413: " + path + " has " + std::to_string(size) +
                               " bytes, more than this server's limit of " +
                               std::to_string(h["max_upload"].get<uint64_t>()) + " bytes (--max-upload)");
    }
  }
  // The server keeps the file name so whoever opens the link sees (and downloads) it under that name.
  const std::string file_name = std::filesystem::path(path).filename().string();
  const std::string upload_path =
      url->prefix + "/api/traces" +
      (file_name.empty() ? "" : "?name=" + httplib::detail::encode_query_param(file_name));
  bool read_failed = false;
  auto result = client.Post(
      upload_path, headers, size,
      [&](size_t offset, size_t length, httplib::DataSink& sink) {
        char buf[1 << 16];
        size_t n = std::min(length, sizeof(buf));
        ssize_t got = pread(fd, buf, n, static_cast<off_t>(offset));
        if (got <= 0) {
          read_failed = true;
          return false;
        }
        return sink.write(buf, static_cast<size_t>(got));
      },
      "application/octet-stream");
  close(fd);
  if (read_failed) return IoError("cannot read " + path + " (did it change during the upload?)");
  if (!result) {
    // The server may have refused early and closed while we were still sending: an empty upload with the same
    // credentials gets the refusal as an answer (401/403), without streaming anything.
    auto probe = client.Post(upload_path, headers, "", "application/octet-stream");
    if (probe && (probe->status == 401 || probe->status == 403)) result = std::move(probe);
    if (!result)
      return IoError("upload to " + server_url + " failed: " + httplib::to_string(result.error()) +
                     " (the server closed the connection or cannot be reached)");
  }
  nlohmann::json body = nlohmann::json::parse(result->body, nullptr, false);
  UploadOutcome out;
  out.http_status = result->status;
  out.response_json = result->body;
  if (result->status != 200 && result->status != 201) {
    std::string reason = body.is_object() && body.contains("error") && body["error"].is_string()
                             ? body["error"].get<std::string>()
                             : result->body.substr(0, 200);
    Status s(result->status == 413   ? StatusCode::kResourceExhausted
             : result->status == 400 ? StatusCode::kInvalidArgument
                                     : StatusCode::kIoError,
             "HTTP " + std::to_string(result->status) + ": " + reason);
    return s;
  }
  if (!body.is_object() || !body.contains("id") || !body["id"].is_string() || !body.contains("link") ||
      !body["link"].is_string())
    return Internal("the server's answer is not a gtrace upload response");
  out.id = body["id"].get<std::string>();
  out.link = body["link"].get<std::string>();
  if (body.contains("delete_token") && body["delete_token"].is_string())
    out.delete_token = body["delete_token"].get<std::string>();
  if (body.contains("bytes") && body["bytes"].is_number_unsigned()) out.bytes = body["bytes"].get<uint64_t>();
  if (body.contains("created") && body["created"].is_boolean()) out.created = body["created"].get<bool>();
  if (body.contains("damaged") && body["damaged"].is_object()) {
    const auto& d = body["damaged"];
    const bool truncated =
        d.contains("truncated") && d["truncated"].is_boolean() && d["truncated"].get<bool>();
    const uint64_t lost = d.contains("chunks_lost") && d["chunks_lost"].is_number_unsigned()
                              ? d["chunks_lost"].get<uint64_t>()
                              : 0;
    out.warning = "the server kept the trace but it is damaged: " + std::to_string(lost) + " chunk(s) lost" +
                  (truncated ? ", truncated" : "");
  }
  return out;
}

}  // namespace gt::server
