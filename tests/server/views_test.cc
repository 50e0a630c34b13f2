// Saved view states (POST/GET /api/views): a share link's view too long for a URL (notes) is stored and named
// by an id. Round trip, dedup, the size cap, the validator hook, the token, and ids that name nothing.
#include <nlohmann/json.hpp>

#include "gt/server/ids.h"
#include "gt/viewer/view_state.h"
#include "server_fixture.h"

using namespace gt::server;
using namespace gt::server::testing;
using nlohmann::json;

namespace {
httplib::Result SaveView(httplib::Client& c, const std::string& text, const std::string& token = "") {
  httplib::Headers h;
  if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
  return c.Post("/api/views", h, text, "text/plain");
}
// A view with long notes: longer than the 8 KiB a URL may carry through most servers (httplib's own cap).
std::string LongView() {
  gt::viewer::ViewState v;
  v.t0 = 100, v.t1 = 900;
  std::string text;
  while (text.size() < 980) text += "rank 1 waits ";  // spaces travel escaped (3 bytes each)
  for (int i = 0; i < 7; ++i) v.notes.push_back({i, i + 10, "", text + char('a' + i) + "é"});
  return v.Serialize();
}
}  // namespace

TEST_CASE("a saved view comes back byte for byte under a stable id", "[server][views]") {
  TestServer ts;
  ts.options.view_validator = [](std::string_view t) { return gt::viewer::ViewState::Parse(t).status(); };
  ts.Start();
  auto c = ts.Client();
  const std::string view = LongView();
  REQUIRE(view.size() > 8192);
  auto r = SaveView(c, view);
  REQUIRE(r);
  REQUIRE(r->status == 201);
  json j = json::parse(r->body);
  const std::string id = j["id"];
  CHECK(IsValidTraceId(id));
  CHECK(j["bytes"] == view.size());
  auto again = SaveView(c, view);
  REQUIRE(again);
  CHECK(json::parse(again->body)["id"] == id);  // same view, same id, stored once
  CHECK(CountFiles(ts.store_dir.path / "views") == 1);
  auto g = c.Get("/api/views/" + id);
  REQUIRE(g);
  CHECK(g->status == 200);
  CHECK(g->body == view);
  auto parsed = gt::viewer::ViewState::Parse(g->body);
  REQUIRE(parsed.ok());
  CHECK(parsed->notes.size() == 7);
  // A view id is not a trace id and vice versa; unknown and malformed ids are the same 404.
  CHECK(c.Get("/api/traces/" + id)->status == 404);
  CHECK(c.Get("/api/views/" + std::string(kTraceIdChars, 'a'))->status == 404);
  CHECK(c.Get("/api/views/..%2f..%2fsecret.key")->status == 404);
  // Survives a restart (same store, same secret).
  ts.Stop();
  ts.Start();
  auto c2 = ts.Client();
  CHECK(c2.Get("/api/views/" + id)->body == view);
}

TEST_CASE("saved views: the validator, the size cap and the token refuse what they must", "[server][views]") {
  TestServer ts;
  ts.options.view_validator = [](std::string_view t) { return gt::viewer::ViewState::Parse(t).status(); };
  ts.options.max_view_bytes = 16 * 1024;
  ts.options.token = "s3cret";
  ts.Start();
  auto c = ts.Client();
  CHECK(SaveView(c, "v1!0!1!!!!!")->status == 401);
  CHECK(SaveView(c, "v1!0!1!!!!!", "wrong")->status == 403);
  CHECK(SaveView(c, "v1!0!1!!!!!", "s3cret")->status == 201);
  auto bad = SaveView(c, "v1!0!1!!!!!!n1*0*1**", "s3cret");  // a note without text
  REQUIRE(bad);
  CHECK(bad->status == 400);
  CHECK(json::parse(bad->body)["error"].get<std::string>().find("not a view state: view state:") == 0);
  CHECK(SaveView(c, "<script>alert(1)</script>", "s3cret")->status == 400);
  CHECK(SaveView(c, "v1!0!1!!!!!\n", "s3cret")->status == 400);  // non-printable
  CHECK(SaveView(c, "", "s3cret")->status == 400);
  auto big = SaveView(c, LongView() + LongView(), "s3cret");
  REQUIRE(big);
  CHECK(big->status == 413);
  CHECK(CountFiles(ts.store_dir.path / "views") == 1);  // only the one valid view
  CHECK(ts.TempFiles() == 0);
}
