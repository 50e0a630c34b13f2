// Concurrency, cut-off uploads, restarts and expiry: nothing lost, nothing mixed, nothing half-written kept.
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
