// Shared pieces of the server tests: tiny valid traces, a scratch directory, an in-process server on an
// ephemeral loopback port, and a raw socket for requests httplib's client would not send.
#pragma once

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "gt/server/server.h"
#include "gt/server/store.h"
#include "gt/writer.h"

namespace gt::server::testing {

// A valid .gtrace of roughly `min_bytes` (at least), different for every seed. Kernel names are random text
// so zstd cannot shrink the file below the requested size.
inline std::string MakeTrace(uint32_t seed, size_t min_bytes = 0) {
  std::string out;
  auto w = TraceWriter::Create(MakeStringSink(&out));
  GT_ASSERT(w.ok());
  TraceMetadata meta;
  meta.entries = {{"command_line", "./app --seed " + std::to_string(seed)},
                  {"host", "<script>alert(1)</script>"}};
  (*w)->SetMetadata(meta);
  std::mt19937 rng(seed);
  int64_t t = 1000;
  size_t i = 0;
  do {
    for (int k = 0; k < 256; ++k, ++i) {
      std::string name = "kernel_" + std::to_string(seed) + "_";
      for (int c = 0; c < 24; ++c) name.push_back(static_cast<char>('a' + rng() % 26));
      KernelRecord r;
      r.start = t;
      r.end = t + 100 + static_cast<int64_t>(rng() % 1000);
      t = r.end + static_cast<int64_t>(rng() % 50);
      r.name = (*w)->Intern(name);
      r.correlation_id = static_cast<uint32_t>(i);
      (*w)->Add(r);
    }
    GT_ASSERT((*w)->Flush().ok());
  } while (out.size() < min_bytes);
  GT_ASSERT((*w)->Finish().ok());
  return out;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gtrace-server-test-XXXXXX").string();
    GT_ASSERT(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string str() const { return path.string(); }
};

// Files (not directories) under `dir`, recursively.
inline size_t CountFiles(const std::filesystem::path& dir, const std::string& suffix = "") {
  size_t n = 0;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    if (suffix.empty() || (name.size() >= suffix.size() &&
                           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0))
      ++n;
  }
  return n;
}

struct TestServer {
  TempDir store_dir;
  ServerOptions options;
  std::unique_ptr<ShareServer> server;

  TestServer() {
    options.port = 0;
    options.threads = 16;
  }
  void Start() {
    auto store = OpenLocalDirStore(store_dir.str());
    REQUIRE(store.ok());
    auto s = ShareServer::Create(std::move(*store), options);
    REQUIRE(s.ok());
    server = std::move(*s);
    REQUIRE(server->Start().ok());
  }
  void Stop() { server.reset(); }  // joins every worker: all handlers have finished when this returns
  int port() const { return server->port(); }
  httplib::Client Client() const {
    httplib::Client c("127.0.0.1", port());
    c.set_read_timeout(30, 0);
    c.set_write_timeout(30, 0);
    return c;
  }
  size_t StoredTraces() const { return CountFiles(store_dir.path / "traces", ".gtrace"); }
  size_t TempFiles() const { return CountFiles(store_dir.path / "tmp"); }
};

inline httplib::Result Upload(httplib::Client& c, const std::string& bytes, const std::string& token = "") {
  httplib::Headers h;
  if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
  return c.Post("/api/traces", h, bytes, "application/octet-stream");
}

// Sends `request` verbatim on a fresh loopback connection and returns everything the server answers until it
// closes (or nothing when `close_early` cuts the connection right after sending).
inline std::string RawRequest(int port, const std::string& request, bool close_early = false) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  GT_ASSERT(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  GT_ASSERT(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string response;
  if (!close_early) {
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char buf[65536];
    for (;;) {
      ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      response.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return response;
}

inline int RawStatus(const std::string& response) {
  if (response.size() < 12 || response.compare(0, 5, "HTTP/") != 0) return 0;
  return std::atoi(response.substr(9, 3).c_str());
}

}  // namespace gt::server::testing
