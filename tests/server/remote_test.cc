// GET /api/t/<id>/...: a stored trace's contents from its viewer index (cli::IndexService over
// gt/viewer/index_query.h), built off the request threads at upload; a missing, stale or damaged index is
// rebuilt (202 until then); bad requests get clear errors; many clients at once all get their answers.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "gt/viewer/index_query.h"
#include "gt/viewer/load.h"
#include "serve_index.h"
#include "server_fixture.h"

using namespace gt::server;
using namespace gt::server::testing;
using nlohmann::json;

namespace {

// A server with the CLI's index service plugged in, as `gtrace serve` has it.
struct RemoteServer {
  std::unique_ptr<gt::cli::IndexService> indexes;  // outlives the server (declared first)
  TestServer ts;
  RemoteServer() {
    ts.options.trace_query = [this](const TraceQuery& q) { return indexes->Answer(q); };
    ts.options.on_stored = [this](const std::string& id) { indexes->Prepare(id); };
    ts.Start();
    NewIndexService();
  }
  // A fresh service (what a restart of `gtrace serve` has): nothing mapped yet.
  void NewIndexService() { indexes = std::make_unique<gt::cli::IndexService>(&ts.server->store()); }
  std::filesystem::path IndexFile(const std::string& id) {
    return ts.store_dir.path / "traces" / id.substr(0, 2) / (id + ".gtindex");
  }
};

std::string UploadId(httplib::Client& c, const std::string& bytes) {
  auto up = Upload(c, bytes);
  REQUIRE(up);
  REQUIRE((up->status == 201 || up->status == 200));
  return json::parse(up->body)["id"].get<std::string>();
}

std::string Tiles(const std::string& id, const std::string& track, int64_t t0, int64_t t1, int px) {
  return "/api/t/" + id + "/tiles?track=" + track + "&t0=" + std::to_string(t0) +
         "&t1=" + std::to_string(t1) + "&px=" + std::to_string(px);
}

}  // namespace

TEST_CASE("remote trace: the index is built at upload and answers like the local model", "[server][remote]") {
  RemoteServer rs;
  auto c = rs.ts.Client();
  const std::string bytes = MakeTrace(11, 200'000);
  auto up = Upload(c, bytes);
  REQUIRE(up);
  REQUIRE(up->status == 201);
  const std::string id = json::parse(up->body)["id"], token = json::parse(up->body)["delete_token"];
  rs.indexes->WaitIdle();
  CHECK(std::filesystem::exists(rs.IndexFile(id)));

  auto meta = c.Get("/api/t/" + id + "/meta");
  REQUIRE(meta);
  REQUIRE(meta->status == 200);
  CHECK(meta->get_header_value("Content-Type") == "application/json");
  CHECK(meta->get_header_value("Cache-Control") == "private, max-age=86400");
  CHECK(meta->get_header_value("X-Content-Type-Options") == "nosniff");
  const json mj = json::parse(meta->body);
  auto local = gt::viewer::LoadTrace({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  REQUIRE(local.ok());
  const gt::viewer::TraceModel& m = **local;
  CHECK(mj["events"] == m.event_count);
  REQUIRE(mj["tracks"].size() == m.tracks.size());

  // The tile equals the local model's LOD over the same quantized window.
  for (int zoom = 0; zoom < 8; ++zoom) {
    const int64_t span = std::max<int64_t>(1, m.span_ns() >> (zoom * 2));
    const int64_t t0 = m.first_ns + (m.span_ns() - span) / 2;
    auto t = c.Get(Tiles(id, "0", t0, t0 + span, 1024));
    REQUIRE(t);
    REQUIRE(t->status == 200);
    const json tj = json::parse(t->body);
    std::vector<gt::viewer::DrawItem> items;
    const gt::viewer::Track& track = m.tracks[0];
    gt::viewer::QueryLane(m.lanes[track.first_lane], tj["t0"], tj["t1"], tj["ns_per_px"].get<double>(),
                          &items);
    const json& got = tj["lanes"].empty() ? json::array() : tj["lanes"][0]["items"];
    REQUIRE(got.size() == items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      CHECK(got[i][0] == items[i].start);
      CHECK(got[i][1] == items[i].end);
      CHECK(got[i][2] == items[i].first);
      CHECK(got[i][3] == items[i].count);
    }
  }
  auto ev = c.Get("/api/t/" + id + "/event?lane=0&index=3");
  REQUIRE(ev);
  CHECK(ev->status == 200);
  CHECK(json::parse(ev->body)["key"] == m.EventKey({0, 3}));
  auto k = c.Get("/api/t/" + id + "/kernels?limit=5");
  REQUIRE(k);
  CHECK(k->status == 200);
  CHECK(json::parse(k->body).size() == 5);
  auto s = c.Get("/api/t/" + id + "/summary");
  REQUIRE(s);
  CHECK(s->status == 200);
  CHECK(json::parse(s->body).contains("kernels"));

  // Deleting the trace takes its index with it; its queries are then a 404 like any unknown id.
  auto del = c.Delete("/api/traces/" + id, httplib::Headers{{"X-Delete-Token", token}});
  REQUIRE(del);
  CHECK(del->status == 204);
  CHECK(!std::filesystem::exists(rs.IndexFile(id)));
  auto gone = c.Get("/api/t/" + id + "/meta");
  REQUIRE(gone);
  CHECK(gone->status == 404);
}

TEST_CASE("remote trace: a missing, stale or damaged index is rebuilt, 202 until then", "[server][remote]") {
  RemoteServer rs;
  auto c = rs.ts.Client();
  const std::string id = UploadId(c, MakeTrace(12, 50'000));
  rs.indexes->WaitIdle();
  const auto file = rs.IndexFile(id);
  REQUIRE(std::filesystem::exists(file));

  SECTION("damaged") {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-10, std::ios::end);
    f.put('\x55').put('\x66');
  }
  SECTION("truncated") {
    std::filesystem::resize_file(file, std::filesystem::file_size(file) / 3);
  }
  SECTION("missing") {
    std::filesystem::remove(file);
  }
  SECTION("not an index") {
    std::ofstream(file, std::ios::binary) << "hello";
  }
  rs.NewIndexService();  // a restart: nothing mapped
  auto first = c.Get("/api/t/" + id + "/meta");
  REQUIRE(first);
  CHECK(first->status == 202);
  CHECK(first->get_header_value("Retry-After") == "1");
  CHECK(first->get_header_value("Cache-Control") == "no-store");
  rs.indexes->WaitIdle();
  auto again = c.Get("/api/t/" + id + "/meta");
  REQUIRE(again);
  CHECK(again->status == 200);
  CHECK(gt::viewer::MappedIndex::Open(file.string(), {}).ok());
}

TEST_CASE("remote trace: bad requests get clear errors and the server keeps serving", "[server][remote]") {
  RemoteServer rs;
  auto c = rs.ts.Client();
  const std::string id = UploadId(c, MakeTrace(13, 20'000));
  rs.indexes->WaitIdle();
  auto answer = [&](const std::string& path) {
    auto r = c.Get(path);
    REQUIRE(r);
    return std::to_string(r->status) + " " + json::parse(r->body)["error"].get<std::string>();
  };
  CHECK(answer("/api/t/" + std::string(32, 'a') + "/meta") == "404 not found");  // no such trace
  CHECK(answer("/api/t/../meta") == "404 not found");
  CHECK(answer("/api/t/" + id + "/nothing") == "404 not found");
  CHECK(answer(Tiles(id, "77", 0, 100, 10)).rfind("404 no track 77", 0) == 0);
  CHECK(answer(Tiles(id, "0", 0, 100, 100000)) == "400 px must be 1..4096 (ask for several tiles instead)");
  CHECK(answer(Tiles(id, "0", 1LL << 60, (1LL << 60) + 5, 100)).rfind("404 window", 0) == 0);
  CHECK(answer("/api/t/" + id + "/tiles?track=0&t0=1&t1=0&px=1") == "400 empty window: t1 must be after t0");
  std::string many = "/api/t/" + id + "/meta?";
  for (int i = 0; i < 40; ++i) many += "p" + std::to_string(i) + "=1&";
  CHECK(answer(many) == "400 too many parameters");
  CHECK(answer("/api/t/" + id + "/event?lane=0&index=99999999") == "404 no such event");

  // Many clients at once, at every zoom: each gets its whole answer.
  auto meta = json::parse(c.Get("/api/t/" + id + "/meta")->body);
  const int64_t first = meta["first_ns"], last = meta["last_ns"];
  std::atomic<int> ok{0}, bad{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t)
    clients.emplace_back([&, t] {
      auto cc = rs.ts.Client();
      for (int i = 0; i < 40; ++i) {
        const int64_t span = std::max<int64_t>(1, (last - first) >> ((i + t) % 20));
        auto r = cc.Get(Tiles(id, "0", first, first + span, 4096));
        (r && r->status == 200 && json::parse(r->body).contains("lanes") ? ok : bad)++;
      }
    });
  for (auto& th : clients) th.join();
  CHECK(ok == 320);
  CHECK(bad == 0);
  auto health = c.Get("/api/health");
  REQUIRE(health);
  CHECK(health->status == 200);
}

TEST_CASE("remote trace: an index built with less memory than its model spills and is the same index",
          "[server][remote][spill]") {
  RemoteServer rs;
  auto c = rs.ts.Client();
  const std::string id = UploadId(c, MakeTrace(17, 600'000));
  rs.indexes->WaitIdle();
  const std::filesystem::path file = rs.IndexFile(id);
  std::ifstream in_memory_file(file, std::ios::binary);
  const std::string in_memory{std::istreambuf_iterator<char>(in_memory_file), {}};
  REQUIRE(!in_memory.empty());

  // A restart told that builds have 1 MiB: the model's columns go to files beside the index.
  std::filesystem::remove(file);
  gt::cli::IndexServiceOptions small;
  small.build_memory = 1 << 20;
  rs.indexes = std::make_unique<gt::cli::IndexService>(&rs.ts.server->store(), small);
  const uint64_t made = gt::viewer::column_storage::SpilledColumnsMade();
  const size_t alive = gt::viewer::column_storage::SpilledColumns();
  auto first = c.Get("/api/t/" + id + "/meta");
  REQUIRE(first);
  CHECK(first->status == 202);
  rs.indexes->WaitIdle();
  CHECK(gt::viewer::column_storage::SpilledColumnsMade() > made);
  CHECK(gt::viewer::column_storage::SpilledColumns() == alive);  // none outlives the build
  std::ifstream spilled_file(file, std::ios::binary);
  const std::string spilled{std::istreambuf_iterator<char>(spilled_file), {}};
  CHECK(spilled == in_memory);
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(file.parent_path())) ++files;
  CHECK(files == 3);  // the trace, its meta and its index: the spill files went with their columns
  auto meta = c.Get("/api/t/" + id + "/meta");
  REQUIRE(meta);
  CHECK(meta->status == 200);
}
