// Concurrency, cut-off uploads, restarts and expiry: nothing lost, nothing mixed, nothing half-written kept.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "gt/server/client.h"
#include "server_fixture.h"

using namespace gt::server;
using namespace gt::server::testing;
using nlohmann::json;

TEST_CASE("concurrent uploads of the same and of different traces", "[server][concurrency]") {
  TestServer ts;
  ts.Start();
  constexpr int kThreads = 8;
  constexpr int kPerThread = 4;
  const std::string shared = MakeTrace(100, 50000);
  std::vector<std::string> own(kThreads * kPerThread);
  for (size_t i = 0; i < own.size(); ++i) own[i] = MakeTrace(static_cast<uint32_t>(200 + i), 20000 + i * 997);

  std::mutex mu;
  std::map<std::string, std::string> id_to_bytes;  // every id must map to exactly one content
  std::vector<std::string> shared_ids;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto c = ts.Client();
      c.set_keep_alive(true);
      for (int k = 0; k < kPerThread; ++k) {
        for (const std::string* bytes : std::vector<const std::string*>{&own[t * kPerThread + k], &shared}) {
          auto r = Upload(c, *bytes);
          if (!r || (r->status != 200 && r->status != 201)) {
            ++failures;
            continue;
          }
          const std::string id = json::parse(r->body)["id"];
          std::lock_guard<std::mutex> lock(mu);
          auto [it, inserted] = id_to_bytes.emplace(id, *bytes);
          if (!inserted && it->second != *bytes) ++failures;  // one id, two contents: mixed up
          if (bytes == &shared) shared_ids.push_back(id);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  CHECK(id_to_bytes.size() == own.size() + 1);
  REQUIRE(shared_ids.size() == kThreads * kPerThread);
  for (const auto& id : shared_ids) CHECK(id == shared_ids.front());
  CHECK(ts.StoredTraces() == own.size() + 1);

  // Download everything, also concurrently, and compare byte for byte.
  std::vector<std::pair<std::string, std::string>> all(id_to_bytes.begin(), id_to_bytes.end());
  std::atomic<size_t> next{0};
  std::atomic<int> mismatches{0};
  threads.clear();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      auto c = ts.Client();
      c.set_keep_alive(true);
      for (size_t i = next++; i < all.size(); i = next++) {
        auto r = c.Get("/api/traces/" + all[i].first);
        if (!r || r->status != 200 || r->body != all[i].second) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(mismatches == 0);
  ts.Stop();
  CHECK(ts.TempFiles() == 0);
}

TEST_CASE("an upload cut off midway leaves nothing", "[server][reliability]") {
  TestServer ts;
  ts.Start();
  const std::string trace = MakeTrace(30, 300000);
  std::string request =
      "POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
      "Content-Length: " +
      std::to_string(trace.size()) + "\r\n\r\n";
  SECTION("connection closed inside the body") {
    RawRequest(ts.port(), request + trace.substr(0, trace.size() / 2), /*close_early=*/true);
  }
  SECTION("chunked body that never ends") {
    std::string chunked =
        "POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n";
    char size_line[32];
    std::snprintf(size_line, sizeof(size_line), "%zx\r\n", trace.size() / 2);
    RawRequest(ts.port(), chunked + size_line + trace.substr(0, trace.size() / 2) + "\r\n", true);
  }
  SECTION("the server waits, then the client goes away after the headers") {
    RawRequest(ts.port(), request, true);
  }
  // Stopping joins every handler, so the checks below see the final state without any sleeping.
  ts.Stop();
  CHECK(ts.StoredTraces() == 0);
  CHECK(ts.TempFiles() == 0);
  // And the store still works after a restart.
  ts.Start();
  auto c = ts.Client();
  auto r = Upload(c, trace);
  REQUIRE(r);
  CHECK(r->status == 201);
}

TEST_CASE("traces and ids survive a restart", "[server][reliability]") {
  TestServer ts;
  ts.Start();
  const std::string trace = MakeTrace(31, 40000);
  json first;
  {
    auto c = ts.Client();
    first = json::parse(Upload(c, trace)->body);
  }
  const std::string id = first["id"];
  ts.Stop();
  ts.Start();  // same store directory, new port
  auto c = ts.Client();
  auto r = c.Get("/api/traces/" + id);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->body == trace);
  // The server key persisted: the same bytes still dedup to the same id, and the old delete token works.
  auto again = Upload(c, trace);
  CHECK(json::parse(again->body)["id"] == id);
  CHECK(again->status == 200);
  CHECK(
      c.Delete("/api/traces/" + id, {{"X-Delete-Token", first["delete_token"].get<std::string>()}})->status ==
      204);
}

TEST_CASE("a store directory serves one server at a time", "[server][reliability]") {
  TempDir dir;
  auto a = OpenLocalDirStore(dir.str());
  REQUIRE(a.ok());
  auto b = OpenLocalDirStore(dir.str());
  REQUIRE(!b.ok());
  CHECK(b.status().message().find("in use") != std::string::npos);
  a = OpenLocalDirStore(dir.str() + "/other");
  REQUIRE(a.ok());
}

TEST_CASE("a store's missing parent directories are created (the default ~/.local/share/gtrace/store)",
          "[server][reliability]") {
  TempDir dir;
  auto a = OpenLocalDirStore(dir.str() + "/home/.local/share/gtrace/store/");
  REQUIRE(a.ok());
  struct stat st;
  CHECK(stat((dir.str() + "/home/.local/share/gtrace/store/traces").c_str(), &st) == 0);
  // A file where a parent should be is an error, not a crash.
  std::FILE* f = std::fopen((dir.str() + "/file").c_str(), "w");
  REQUIRE(f);
  std::fclose(f);
  auto b = OpenLocalDirStore(dir.str() + "/file/store");
  REQUIRE(!b.ok());
  CHECK(b.status().message().find(dir.str() + "/file") != std::string::npos);
}

TEST_CASE("TTL expiry with an injected clock", "[server][ttl]") {
  auto now = std::make_shared<std::atomic<int64_t>>(1'700'000'000);
  constexpr int64_t kDay = 86400;
  TestServer ts;
  ts.options.clock = [now] { return now->load(); };
  ts.options.ttl_seconds = 7 * kDay;
  ts.options.sweep_interval_seconds = 1'000'000;  // only explicit sweeps in this test
  ts.Start();
  auto c = ts.Client();
  const std::string kept = json::parse(Upload(c, MakeTrace(40))->body)["id"];
  const std::string dropped = json::parse(Upload(c, MakeTrace(41))->body)["id"];
  CHECK(ts.server->SweepNow() == 0);

  *now += 5 * kDay;
  REQUIRE(c.Get("/api/traces/" + kept)->status == 200);  // an access restarts the clock for this trace
  CHECK(ts.server->SweepNow() == 0);

  *now += 3 * kDay;  // dropped: 8 days untouched; kept: 3 days since its download
  CHECK(ts.server->SweepNow() == 1);
  CHECK(c.Get("/api/traces/" + dropped)->status == 404);
  CHECK(c.Get("/api/traces/" + kept)->status == 200);
  CHECK(ts.StoredTraces() == 1);

  // The access time was persisted: a restart does not forget it.
  ts.Stop();
  *now += 6 * kDay;
  ts.Start();  // Start() sweeps once
  auto c2 = ts.Client();
  CHECK(c2.Get("/api/traces/" + kept)->status == 200);
  *now += 8 * kDay;
  CHECK(ts.server->SweepNow() == 1);
  CHECK(ts.StoredTraces() == 0);
}

TEST_CASE("upload client and IngestFile", "[server][client]") {
  TestServer ts;
  ts.options.token = "tok";
  ts.Start();
  TempDir dir;
  const std::string trace = MakeTrace(50, 30000);
  const std::string path = (dir.path / "a.gtrace").string();
  { std::ofstream(path, std::ios::binary) << trace; }
  const std::string url = "http://127.0.0.1:" + std::to_string(ts.port());

  auto ok = UploadTraceFile(url, path, "tok");
  REQUIRE(ok.ok());
  CHECK(ok->http_status == 201);
  CHECK(ok->link == url + "/?trace=" + ok->id);
  CHECK(ok->bytes == trace.size());
  // The file name goes with the upload, so whoever opens the link downloads "a.gtrace", not "<id>.gtrace".
  auto c = ts.Client();
  auto down = c.Get("/api/traces/" + ok->id);
  REQUIRE(down);
  CHECK(down->get_header_value("Content-Disposition") == "attachment; filename=\"a.gtrace\"");

  auto denied = UploadTraceFile(url, path, "nope");
  REQUIRE(!denied.ok());
  CHECK(denied.status().message().find("403") != std::string::npos);
  auto anonymous = UploadTraceFile(url, path, "");
  REQUIRE(!anonymous.ok());
  CHECK(anonymous.status().message().find("401") != std::string::npos);

  const std::string junk = (dir.path / "junk.gtrace").string();
  { std::ofstream(junk, std::ios::binary) << "definitely not a trace"; }
  auto bad = UploadTraceFile(url, junk, "tok");
  REQUIRE(!bad.ok());
  CHECK(bad.status().message().find("400") != std::string::npos);
  CHECK(bad.status().message().find("not a .gtrace") != std::string::npos);

  CHECK(!UploadTraceFile(url, (dir.path / "missing.gtrace").string(), "tok").ok());
  CHECK(!UploadTraceFile("ftp://x", path, "tok").ok());
  CHECK(!UploadTraceFile("http://127.0.0.1:1", path, "tok").ok());

  auto ingested = ts.server->IngestFile(path);
  REQUIRE(ingested.ok());
  CHECK(ingested->id == ok->id);  // same bytes, same id, whichever way they came in
  CHECK(!ingested->created);
  CHECK(!ts.server->IngestFile(junk).ok());

  const std::string token_file = (dir.path / "token").string();
  { std::ofstream(token_file) << "  tok  \nsecond line\n"; }
  auto token = ReadTokenFile(token_file);
  REQUIRE(token.ok());
  CHECK(*token == "tok");
  { std::ofstream(token_file) << "\n"; }
  CHECK(!ReadTokenFile(token_file).ok());
}

TEST_CASE("upload client: a file over the limit and a refusal mid-stream are errors with reasons",
          "[server][client]") {
  TestServer ts;
  ts.options.max_upload = 64 * 1024;
  ts.options.token = "tok";
  ts.Start();
  TempDir dir;
  const std::string path = (dir.path / "big.gtrace").string();
  { std::ofstream(path, std::ios::binary) << MakeTrace(60, 4 << 20); }
  const std::string url = "http://127.0.0.1:" + std::to_string(ts.port());
  auto health = ts.Client().Get("/api/health");
  REQUIRE(health);
  json h = json::parse(health->body);
  CHECK(h["max_upload"] == 64 * 1024);
  CHECK(h["token_required"] == true);

  auto big = UploadTraceFile(url, path, "tok");
  REQUIRE(!big.ok());
  CHECK(big.status().code() == gt::StatusCode::kResourceExhausted);
  CHECK(big.status().message().find("413") != std::string::npos);
  ts.Stop();
  CHECK(ts.StoredTraces() == 0);
  CHECK(ts.TempFiles() == 0);

  // 4 MB against a server that refuses at once: the client still reports the server's reason.
  TestServer open_size;
  open_size.options.token = "tok";
  open_size.Start();
  auto denied = UploadTraceFile("http://127.0.0.1:" + std::to_string(open_size.port()), path, "wrong");
  REQUIRE(!denied.ok());
  CHECK(denied.status().message().find("403") != std::string::npos);
  open_size.Stop();
  CHECK(open_size.StoredTraces() == 0);
  CHECK(open_size.TempFiles() == 0);
}

TEST_CASE("a taken port is an error unless any free port is allowed", "[server]") {
  TestServer a;
  a.Start();
  for (bool fallback : {false, true}) {
    TempDir dir;
    auto store = OpenLocalDirStore(dir.str());
    REQUIRE(store.ok());
    ServerOptions options;
    options.port = a.port();
    options.any_port_if_busy = fallback;
    auto s = ShareServer::Create(std::move(*store), options);
    REQUIRE(s.ok());
    gt::Status started = (*s)->Start();
    if (fallback) {
      REQUIRE(started.ok());
      CHECK((*s)->port() != a.port());
      CHECK(httplib::Client("127.0.0.1", (*s)->port()).Get("/api/health")->status == 200);
    } else {
      REQUIRE(!started.ok());
      CHECK(started.message().find("cannot listen") != std::string::npos);
    }
  }
}

TEST_CASE("stopping does not wait for a stalled upload or an idle connection", "[server][reliability]") {
  TestServer ts;
  ts.Start();
  const std::string trace = MakeTrace(32, 100000);
  // A client that sent the headers and half the body, then went quiet without closing: before the fix the
  // worker sat in its read until the 30 s read timeout and SIGTERM took that long (found by the soak).
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(ts.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  const std::string request =
      "POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
      "Content-Length: " +
      std::to_string(trace.size()) + "\r\n\r\n" + trace.substr(0, trace.size() / 2);
  REQUIRE(send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size()));
  // And an idle keep-alive connection from a finished download.
  auto c = ts.Client();
  c.set_keep_alive(true);
  REQUIRE(c.Get("/api/health"));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the worker is inside the body read
  const auto t0 = std::chrono::steady_clock::now();
  ts.Stop();
  const double stop_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  close(fd);
  CHECK(stop_s < 3.0);
  CHECK(ts.StoredTraces() == 0);  // the cut upload was never published
  CHECK(ts.TempFiles() == 0);
}

namespace {

using gt::Status;
using gt::StatusOr;

// A store whose disk is full on demand: staging fails in Finish() the way LocalDirStore does when its
// buffered bytes meet ENOSPC (small uploads never reach the disk before Finish).
class FullDiskStore final : public TraceStore {
 public:
  explicit FullDiskStore(std::unique_ptr<TraceStore> inner) : inner_(std::move(inner)) {}
  std::atomic<bool> full{false};

  class Staging final : public UploadStaging {
   public:
    Staging(std::unique_ptr<UploadStaging> inner, const std::atomic<bool>& full)
        : inner_(std::move(inner)), full_(full) {}
    Status Append(const char* data, size_t size) override { return inner_->Append(data, size); }
    uint64_t size() const override { return inner_->size(); }
    StatusOr<std::span<const uint8_t>> Finish() override {
      if (full_) return gt::IoError("cannot write upload-x.part: No space left on device");
      return inner_->Finish();
    }
    std::unique_ptr<UploadStaging> inner_;
    const std::atomic<bool>& full_;
  };

  StatusOr<std::string> LoadOrCreateSecret() override { return inner_->LoadOrCreateSecret(); }
  StatusOr<std::unique_ptr<UploadStaging>> BeginUpload() override {
    auto s = inner_->BeginUpload();
    if (!s.ok()) return s.status();
    return std::unique_ptr<UploadStaging>(std::make_unique<Staging>(std::move(*s), full));
  }
  StatusOr<CommitResult> Commit(UploadStaging& staging, const std::string& id, const std::string& owner_hash,
                                const std::string& format, const std::string& name, int64_t now) override {
    return inner_->Commit(*static_cast<Staging&>(staging).inner_, id, owner_hash, format, name, now);
  }
  StatusOr<TraceMeta> Head(const std::string& id) override { return inner_->Head(id); }
  StatusOr<std::shared_ptr<const TraceBlob>> Open(const std::string& id) override { return inner_->Open(id); }
  Status Touch(const std::string& id, int64_t now) override { return inner_->Touch(id, now); }
  StatusOr<bool> RemoveOwner(const std::string& id, const std::string& owner) override {
    return inner_->RemoveOwner(id, owner);
  }
  Status ForEach(const std::function<void(const std::string&, const TraceMeta&)>& visit) override {
    return inner_->ForEach(visit);
  }

 private:
  std::unique_ptr<TraceStore> inner_;
};

}  // namespace

TEST_CASE("a full disk refuses uploads with 507 and keeps serving", "[server][reliability]") {
  TempDir dir;
  auto local = OpenLocalDirStore(dir.str());
  REQUIRE(local.ok());
  auto store = std::make_unique<FullDiskStore>(std::move(*local));
  FullDiskStore* disk = store.get();
  ServerOptions options;
  options.port = 0;
  options.threads = 4;
  auto server = ShareServer::Create(std::move(store), options);
  REQUIRE(server.ok());
  REQUIRE((*server)->Start().ok());
  httplib::Client c("127.0.0.1", (*server)->port());
  const std::string before = MakeTrace(33, 20000), during = MakeTrace(34, 20000);
  auto first = Upload(c, before);
  REQUIRE(first);
  REQUIRE(first->status == 201);
  const std::string id = json::parse(first->body)["id"];

  disk->full = true;
  // Before the fix this was a 500 (the failure surfaced in Finish, not Append): the soak's full tmpfs found
  // it.
  auto refused = Upload(c, during);
  REQUIRE(refused);
  CHECK(refused->status == 507);
  const json body = json::parse(refused->body);
  CHECK(body["status"] == 507);
  CHECK(body["error"].get<std::string>().find("No space left on device") != std::string::npos);
  CHECK(body["error"].get<std::string>().find(".part") == std::string::npos);  // no store paths to clients
  CHECK(CountFiles(dir.path / "tmp") == 0);
  auto still = c.Get("/api/traces/" + id);  // earlier traces still download
  REQUIRE(still);
  CHECK(still->status == 200);
  CHECK(still->body == before);

  disk->full = false;  // space freed: uploads work again
  auto again = Upload(c, during);
  REQUIRE(again);
  CHECK(again->status == 201);
  CHECK(CountFiles(dir.path / "traces", ".gtrace") == 2);
}
