#include "static_files.h"

#include <fcntl.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <climits>
#include <cstdlib>
#include <regex>

#include "gt/server/ids.h"

namespace gt::server {

struct StaticSite::File {
  std::string mime;
  std::string cache_control;
  std::string csp;  // pages and scripts
  std::string etag;
  int64_t mtime_ns = 0;
  uint64_t size = 0;
  std::shared_ptr<const std::string> body;
  std::shared_ptr<const std::string> gzip;  // null when not worth it
};

namespace {

constexpr uint64_t kMaxStaticFile = 256ull << 20;

std::string Extension(const std::string& path) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

struct MimeInfo {
  const char* ext;
  const char* mime;
  bool compress;
};
constexpr MimeInfo kMimes[] = {
    {"html", "text/html; charset=utf-8", true},
    {"htm", "text/html; charset=utf-8", true},
    {"js", "text/javascript; charset=utf-8", true},
    {"mjs", "text/javascript; charset=utf-8", true},
    {"css", "text/css; charset=utf-8", true},
    {"json", "application/json", true},
    {"map", "application/json", true},
    {"wasm", "application/wasm", true},
    {"svg", "image/svg+xml", true},
    {"txt", "text/plain; charset=utf-8", true},
    {"png", "image/png", false},
    {"jpg", "image/jpeg", false},
    {"jpeg", "image/jpeg", false},
    {"gif", "image/gif", false},
    {"webp", "image/webp", false},
    {"ico", "image/x-icon", true},
    {"woff", "font/woff", false},
    {"woff2", "font/woff2", false},
    {"ttf", "font/ttf", true},
    {"gtrace", "application/octet-stream", false},
};

const MimeInfo* FindMime(const std::string& ext) {
  for (const auto& m : kMimes)
    if (ext == m.ext) return &m;
  return nullptr;
}

std::shared_ptr<const std::string> Gzip(const std::string& in) {
  z_stream zs{};
  if (deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) return nullptr;
  auto out = std::make_shared<std::string>();
  out->resize(deflateBound(&zs, in.size()) + 32);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out->data());
  zs.avail_out = static_cast<uInt>(out->size());
  int rc = deflate(&zs, Z_FINISH);
  size_t produced = out->size() - zs.avail_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return nullptr;
  out->resize(produced);
  if (out->size() + 64 >= in.size()) return nullptr;  // not worth a Content-Encoding
  return out;
}

std::string Base64(const unsigned char* data, size_t size) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < size; i += 3) {
    uint32_t v = static_cast<uint32_t>(data[i]) << 16;
    if (i + 1 < size) v |= static_cast<uint32_t>(data[i + 1]) << 8;
    if (i + 2 < size) v |= data[i + 2];
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < size ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back(i + 2 < size ? kAlphabet[v & 63] : '=');
  }
  return out;
}

// 'sha256-…' sources for every inline <script> of a page, so a strict CSP does not break the page's
// bootstrap.
std::string InlineScriptHashes(const std::string& html) {
  static const std::regex kScript(R"(<script(\s[^>]*)?>([\s\S]*?)</script\s*>)", std::regex::icase);
  std::string out;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kScript); it != std::sregex_iterator();
       ++it) {
    const std::string attrs = (*it)[1].str();
    if (std::regex_search(attrs, std::regex(R"(\ssrc\s*=)", std::regex::icase))) continue;
    const std::string body = (*it)[2].str();
    std::string hex = Sha256Hex(body);
    unsigned char raw[32];
    for (int i = 0; i < 32; ++i)
      raw[i] = static_cast<unsigned char>(std::stoi(hex.substr(i * 2, 2), nullptr, 16));
    out += " 'sha256-" + Base64(raw, 32) + "'";
  }
  // Inline event handlers (oncontextmenu="...") need 'unsafe-hashes' plus their hash; only the page's own
  // handlers match, so injected markup still runs nothing.
  static const std::regex kHandler(R"re(\son[a-z]+\s*=\s*(?:"([^"]*)"|'([^']*)'))re", std::regex::icase);
  std::string handlers;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kHandler); it != std::sregex_iterator();
       ++it) {
    const std::string code = (*it)[1].matched ? (*it)[1].str() : (*it)[2].str();
    std::string hex = Sha256Hex(code);
    unsigned char raw[32];
    for (int i = 0; i < 32; ++i)
      raw[i] = static_cast<unsigned char>(std::stoi(hex.substr(i * 2, 2), nullptr, 16));
    handlers += " 'sha256-" + Base64(raw, 32) + "'";
  }
  if (!handlers.empty()) out += " 'unsafe-hashes'" + handlers;
  return out;
}

// Hashed build outputs ("app.3f9a2c1d.js") never change under their name: cache them for a year.
bool LooksContentHashed(const std::string& name) {
  static const std::regex kHashed(R"(.*[.-][0-9a-fA-F]{8,}\.[A-Za-z0-9]+$)");
  return std::regex_match(name, kHashed);
}

// Rejects anything that is not a plain relative path of visible names. The request path arrives
// percent-decoded from httplib, so "%2e%2e" is ".." here.
bool SafeRelativePath(const std::string& path, std::string* rel) {
  if (path.empty() || path[0] != '/') return false;
  if (path.size() > 1024) return false;
  std::string out;
  size_t i = 1;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    std::string seg = path.substr(i, j - i);
    if (seg.empty()) {
      if (j != path.size()) return false;  // "//" inside the path
    } else {
      if (seg[0] == '.') return false;  // "..", ".", dotfiles (.git, .env)
      for (unsigned char c : seg)
        if (c < 0x20 || c == 0x7f || c == '\\' || c == ':') return false;
      if (!out.empty()) out += '/';
      out += seg;
    }
    i = j + 1;
  }
  if (out.empty() || path.back() == '/') out += out.empty() ? "index.html" : "/index.html";
  *rel = out;
  return true;
}

void SendNotFound(httplib::Response& res) {
  res.status = 404;
  res.set_header("Cache-Control", "no-store");
  res.set_content("404 not found\n", "text/plain; charset=utf-8");
}

const char kNoWebRootPage[] =
    "<!doctype html><html><head><meta charset=\"utf-8\"><title>gtrace server</title></head><body>"
    "<h1>gtrace server</h1><p>This server was started without <code>--web-root</code>, so it serves the "
    "trace "
    "API only. Build the viewer (<code>cmake --preset wasm &amp;&amp; cmake --build --preset wasm</code>) "
    "and "
    "start <code>gtrace serve --web-root build/wasm/web</code>.</p></body></html>\n";

}  // namespace

std::string PageCsp(const std::string& inline_script_hashes) {
  return "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'" + inline_script_hashes +
         "; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; "
         "connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; "
         "form-action 'none'; frame-ancestors 'none'";
}

Status StaticSite::Init(const std::string& root) {
  if (root.empty()) return Status::Ok();
  char resolved[PATH_MAX];
  if (realpath(root.c_str(), resolved) == nullptr) return NotFound("--web-root " + root + " does not exist");
  struct stat st;
  if (stat(resolved, &st) != 0 || !S_ISDIR(st.st_mode))
    return InvalidArgument("--web-root " + root + " is not a directory");
  root_ = resolved;
  if (root_ != "/" && root_.back() == '/') root_.pop_back();
  return Status::Ok();
}

std::shared_ptr<const StaticSite::File> StaticSite::Load(const std::string& rel, std::string* error) {
  const std::string joined = root_ + "/" + rel;
  char resolved[PATH_MAX];
  // realpath follows symlinks: whatever the link says, the target must still lie under the root.
  if (realpath(joined.c_str(), resolved) == nullptr) return nullptr;
  std::string real = resolved;
  if (real.compare(0, root_.size() + 1, root_ + "/") != 0) return nullptr;
  int fd = open(real.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > kMaxStaticFile) {
    close(fd);
    return nullptr;
  }
  const int64_t mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(real);
    if (it != cache_.end() && it->second->mtime_ns == mtime_ns && it->second->size == uint64_t(st.st_size)) {
      close(fd);
      return it->second;
    }
  }
  auto body = std::make_shared<std::string>(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < body->size()) {
    ssize_t n = read(fd, body->data() + got, body->size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  if (got != body->size()) {
    *error = "read";
    return nullptr;
  }
  auto file = std::make_shared<File>();
  const std::string ext = Extension(real);
  const MimeInfo* mime = FindMime(ext);
  file->mime = mime ? mime->mime : "application/octet-stream";
  const std::string name = real.substr(real.rfind('/') + 1);
  if (ext == "html" || ext == "htm") {
    file->cache_control = "no-cache";
    file->csp = PageCsp(InlineScriptHashes(*body));
  } else if (LooksContentHashed(name)) {
    file->cache_control = "public, max-age=31536000, immutable";
  } else {
    file->cache_control = "no-cache";  // revalidated by ETag: a rebuilt gtrace.wasm is picked up at once
  }
  // A worker runs under the policy of its own script, not the page's: the threaded viewer's workers
  // (gtrace-mt.worker.js) import gtrace-mt.js and compile the wasm like the page does.
  if (ext == "js" || ext == "mjs") file->csp = PageCsp("");
  file->etag = "\"" + Sha256Hex(*body).substr(0, 32) + "\"";
  file->mtime_ns = mtime_ns;
  file->size = body->size();
  if (mime && mime->compress) file->gzip = Gzip(*body);
  file->body = std::move(body);
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_.size() > 4096) cache_.clear();  // a root with thousands of files: keep memory bounded
  cache_[real] = file;
  return file;
}

void StaticSite::Serve(const httplib::Request& req, httplib::Response& res) {
  std::string rel;
  if (!SafeRelativePath(req.path, &rel)) return SendNotFound(res);
  if (root_.empty()) {
    if (rel != "index.html") return SendNotFound(res);
    res.set_header("Cache-Control", "no-cache");
    res.set_header("Content-Security-Policy", PageCsp(""));
    res.set_content(kNoWebRootPage, "text/html; charset=utf-8");
    return;
  }
  std::string error;
  auto file = Load(rel, &error);
  if (!file) return SendNotFound(res);
  res.set_header("Cache-Control", file->cache_control);
  res.set_header("ETag", file->etag);
  if (!file->csp.empty()) res.set_header("Content-Security-Policy", file->csp);
  if (file->gzip) res.set_header("Vary", "Accept-Encoding");
  if (req.has_header("If-None-Match") && req.get_header_value("If-None-Match") == file->etag) {
    res.status = 304;
    return;
  }
  // Content providers with a length are never recompressed by httplib, so the precomputed gzip goes out as
  // is.
  std::shared_ptr<const std::string> payload = file->body;
  const std::string accept = req.get_header_value("Accept-Encoding");
  if (file->gzip && req.ranges.empty() && accept.find("gzip") != std::string::npos) {
    payload = file->gzip;
    res.set_header("Content-Encoding", "gzip");
  }
  res.set_content_provider(payload->size(), file->mime,
                           [payload](size_t offset, size_t length, httplib::DataSink& sink) {
                             if (offset > payload->size()) return false;
                             length = std::min(length, payload->size() - offset);
                             return sink.write(payload->data() + offset, length);
                           });
  if (payload->empty()) res.set_content("", file->mime);
}

}  // namespace gt::server
