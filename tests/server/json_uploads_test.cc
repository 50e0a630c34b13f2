// `gtrace serve` shares what the page opens: Chrome and Kineto JSON, plain or gzipped, validated by the
// viewer core's importer (cli::ValidateViewerTrace), next to .gtrace.
#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "gzip_util.h"
#include "serve_validate.h"
#include "server_fixture.h"

using namespace gt::server;
using namespace gt::server::testing;
using nlohmann::json;

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void UseViewerValidator(TestServer& ts) {
  ts.options.validator = [](std::span<const uint8_t> bytes) {
    return gt::cli::ValidateViewerTrace(bytes, 64u << 20);
  };
}

}  // namespace

TEST_CASE("Kineto JSON, plain and gzipped, is stored and comes back byte for byte", "[server][json]") {
  TestServer ts;
  UseViewerValidator(ts);
  ts.Start();
  auto c = ts.Client();
  const std::string kineto = ReadFile(GT_TESTS_VIEWER_DATA "/kineto_small.json");
  for (const std::string& body : {kineto, gt::test::Gzip(kineto)}) {
    auto up = c.Post("/api/traces?name=step.json", body, "application/octet-stream");
    REQUIRE(up);
    INFO(up->body);
    REQUIRE(up->status == 201);
    json j = json::parse(up->body);
    CHECK(j["format"] == "kineto");
    CHECK(!j.contains("damaged"));
    auto down = c.Get("/api/traces/" + j["id"].get<std::string>());
    REQUIRE(down);
    CHECK(down->status == 200);
    CHECK(down->body == body);
    CHECK(down->get_header_value("Content-Disposition") == "attachment; filename=\"step.json\"");
  }
  // .gtrace still goes through the reader.
  auto g = c.Post("/api/traces", MakeTrace(3), "application/octet-stream");
  REQUIRE(g);
  CHECK(g->status == 201);
  CHECK(json::parse(g->body)["format"] == "gtrace");
}

TEST_CASE("JSON that is not a trace, or holds no event, is refused with the reason", "[server][json]") {
  TestServer ts;
  UseViewerValidator(ts);
  ts.Start();
  auto c = ts.Client();
  struct Case {
    std::string body, reason;
  };
  for (const auto& [body, reason] : std::vector<Case>{
           {"{\"traceEvents\": []}", "no trace events"},
           {"{\"traceEvents\": [", "JSON parse error"},
           {"hello, not a trace", "unrecognized content"},
           {gt::test::Gzip("hello, not a trace either"), "unrecognized content"},
       }) {
    auto up = c.Post("/api/traces", body, "application/octet-stream");
    REQUIRE(up);
    INFO(up->body);
    CHECK(up->status == 400);
    CHECK(up->body.find(reason) != std::string::npos);
  }
  CHECK(ts.StoredTraces() == 0);
  CHECK(ts.TempFiles() == 0);
}

TEST_CASE("a truncated Chrome JSON is kept and reported as damaged", "[server][json]") {
  TestServer ts;
  UseViewerValidator(ts);
  ts.Start();
  auto c = ts.Client();
  std::string chrome = "{\"traceEvents\": [";
  for (int i = 0; i < 50; ++i)
    chrome += "{\"ph\":\"X\",\"name\":\"op" + std::to_string(i) +
              "\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(i * 10) + ",\"dur\":5},";
  auto up = c.Post("/api/traces", chrome.substr(0, chrome.size() - 20), "application/octet-stream");
  REQUIRE(up);
  INFO(up->body);
  REQUIRE(up->status == 201);
  json j = json::parse(up->body);
  CHECK(j["format"] == "chrome");
  REQUIRE(j.contains("damaged"));
  CHECK(j["damaged"]["truncated"] == true);
}

TEST_CASE("a JSON upload of more tracks than the server builds is refused with 413 and the reason",
          "[server][json]") {
  // One event on each of many threads: small to upload, costly to build. The server's limit is
  // cli::kMaxUploadTracks; this server sets 100.
  TestServer ts;
  ts.options.validator = [](std::span<const uint8_t> bytes) {
    return gt::cli::ValidateViewerTrace(bytes, 64u << 20, 100);
  };
  ts.Start();
  auto c = ts.Client();
  auto threads = [](int n) {
    std::string j = "{\"traceEvents\": [";
    for (int tid = 1; tid <= n; ++tid)
      j += std::string(tid > 1 ? "," : "") +
           "{\"ph\":\"X\",\"name\":\"request\",\"pid\":1,\"tid\":" + std::to_string(tid) +
           ",\"ts\":" + std::to_string(tid) + ",\"dur\":1}";
    return j + "]}";
  };
  auto over = c.Post("/api/traces", gt::test::Gzip(threads(5000)), "application/octet-stream");
  REQUIRE(over);
  INFO(over->body);
  CHECK(over->status == 413);
  CHECK(over->body.find("more than 100 timeline tracks") != std::string::npos);
  auto fits = c.Post("/api/traces", threads(100), "application/octet-stream");
  REQUIRE(fits);
  CHECK(fits->status == 201);
}

TEST_CASE("concurrent JSON uploads all finish (imports take turns)", "[server][json]") {
  TestServer ts;
  UseViewerValidator(ts);
  ts.Start();
  std::vector<std::thread> threads;
  std::atomic<int> created{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      auto c = ts.Client();
      std::string chrome = "{\"traceEvents\": [";
      for (int i = 0; i < 2000; ++i)
        chrome += std::string(i ? "," : "") + "{\"ph\":\"X\",\"name\":\"op" + std::to_string(t) +
                  "\",\"pid\":1," + "\"tid\":1,\"ts\":" + std::to_string(i * 10) + ",\"dur\":5}";
      auto up = c.Post("/api/traces", chrome + "]}", "application/octet-stream");
      if (up && up->status == 201) ++created;
    });
  for (auto& th : threads) th.join();
  CHECK(created == 8);
  CHECK(ts.StoredTraces() == 8);
}
