// Upload, download, ranges, dedup, delete and the refusals (401/403/413/400) of the share API.
#include <nlohmann/json.hpp>

#include "gt/server/ids.h"
#include "server_fixture.h"

using namespace gt::server;
using namespace gt::server::testing;
using nlohmann::json;

namespace {
json Body(const httplib::Result& r) {
  return json::parse(r->body, nullptr, false);
}
}  // namespace

TEST_CASE("upload then download returns the same bytes under an unguessable id", "[server]") {
  TestServer ts;
  ts.Start();
  auto c = ts.Client();
  const std::string trace = MakeTrace(1);
  auto up = Upload(c, trace);
  REQUIRE(up);
  REQUIRE(up->status == 201);
  json j = Body(up);
  REQUIRE(j.is_object());
  const std::string id = j["id"];
  CHECK(IsValidTraceId(id));
  CHECK(id.size() * 5 >= 128);
  CHECK(j["bytes"] == trace.size());
  CHECK(j["created"] == true);
  CHECK(j["link"] == "http://127.0.0.1:" + std::to_string(ts.port()) + "/?trace=" + id);
  CHECK(j["delete_token"].get<std::string>().size() >= 26);
  CHECK(!j.contains("damaged"));

  auto down = c.Get("/api/traces/" + id);
  REQUIRE(down);
  CHECK(down->status == 200);
  CHECK(down->body == trace);
  CHECK(down->get_header_value("Content-Type") == "application/octet-stream");
  CHECK(down->get_header_value("Content-Disposition") == "attachment; filename=\"" + id + ".gtrace\"");
  CHECK(down->get_header_value("X-Content-Type-Options") == "nosniff");
  CHECK(down->get_header_value("ETag") == "\"" + id + "\"");

  auto head = c.Head("/api/traces/" + id);
  REQUIRE(head);
  CHECK(head->status == 200);
  CHECK(head->body.empty());
  CHECK(head->get_header_value("Content-Length") == std::to_string(trace.size()));

  auto cached = c.Get("/api/traces/" + id, {{"If-None-Match", "\"" + id + "\""}});
  REQUIRE(cached);
  CHECK(cached->status == 304);
  CHECK(cached->body.empty());
}

TEST_CASE("the same content twice gets the same id and is stored once", "[server]") {
  TestServer ts;
  ts.Start();
  auto c = ts.Client();
  const std::string trace = MakeTrace(2);
  auto a = Upload(c, trace);
  auto b = Upload(c, trace);
  REQUIRE((a && b));
  CHECK(a->status == 201);
  CHECK(b->status == 200);
  CHECK(Body(a)["id"] == Body(b)["id"]);
  CHECK(Body(b)["created"] == false);
  CHECK(Body(a)["delete_token"] != Body(b)["delete_token"]);
  auto other = Upload(c, MakeTrace(3));
  REQUIRE(other);
  CHECK(Body(other)["id"] != Body(a)["id"]);
  CHECK(ts.StoredTraces() == 2);
  CHECK(ts.TempFiles() == 0);
}

TEST_CASE("HTTP ranges: 206 slices, suffixes, several ranges, and 416 past the end", "[server]") {
  TestServer ts;
  ts.Start();
  auto c = ts.Client();
  const std::string trace = MakeTrace(4, 100000);
  const std::string id = Body(Upload(c, trace))["id"];
  const std::string url = "/api/traces/" + id;

  auto mid = c.Get(url, {{"Range", "bytes=10-19"}});
  REQUIRE(mid);
  CHECK(mid->status == 206);
  CHECK(mid->body == trace.substr(10, 10));
  CHECK(mid->get_header_value("Content-Range") == "bytes 10-19/" + std::to_string(trace.size()));

  auto tail = c.Get(url, {{"Range", "bytes=-7"}});
  REQUIRE(tail);
  CHECK(tail->status == 206);
  CHECK(tail->body == trace.substr(trace.size() - 7));

  auto open_end = c.Get(url, {{"Range", "bytes=50000-"}});
  REQUIRE(open_end);
  CHECK(open_end->status == 206);
  CHECK(open_end->body == trace.substr(50000));

  auto multi = c.Get(url, {{"Range", "bytes=0-3,8-9"}});
  REQUIRE(multi);
  CHECK(multi->status == 206);
  CHECK(multi->get_header_value("Content-Type").find("multipart/byteranges") == 0);

  auto past = c.Get(url, {{"Range", "bytes=" + std::to_string(trace.size()) + "-"}});
  REQUIRE(past);
  CHECK(past->status == 416);
  CHECK(past->get_header_value("Content-Range") == "bytes */" + std::to_string(trace.size()));

  auto zero_suffix = c.Get(url, {{"Range", "bytes=-0"}});
  REQUIRE(zero_suffix);
  CHECK(zero_suffix->status == 416);

  // The server still works after the refusals.
  auto whole = c.Get(url);
  REQUIRE(whole);
  CHECK(whole->body == trace);
}

TEST_CASE("upload token: none is 401, a wrong one 403, the right one 201", "[server]") {
  TestServer ts;
  ts.options.token = "s3cret-token";
  ts.Start();
  auto c = ts.Client();
  c.set_keep_alive(true);
  const std::string trace = MakeTrace(5, 200000);

  auto none = Upload(c, trace);
  REQUIRE(none);
  CHECK(none->status == 401);
  CHECK(Body(none)["error"].get<std::string>().find("token") != std::string::npos);
  CHECK(!none->get_header_value("WWW-Authenticate").empty());

  auto wrong = Upload(c, trace, "s3cret-tokem");
  REQUIRE(wrong);
  CHECK(wrong->status == 403);

  httplib::Headers basic{{"Authorization", "Basic czNjcmV0LXRva2Vu"}};
  auto basic_auth = c.Post("/api/traces", basic, trace, "application/octet-stream");
  REQUIRE(basic_auth);
  CHECK(basic_auth->status == 401);

  CHECK(ts.StoredTraces() == 0);
  // The refused bodies were never read; the connection was closed, so no leftover bytes poison the next
  // request.
  auto right = Upload(c, trace, "s3cret-token");
  REQUIRE(right);
  CHECK(right->status == 201);
  CHECK(ts.StoredTraces() == 1);
  // Downloads need no token: the unguessable id is the capability.
  auto down = ts.Client().Get("/api/traces/" + Body(right)["id"].get<std::string>());
  REQUIRE(down);
  CHECK(down->body == trace);
}

TEST_CASE("oversized uploads get 413 and leave nothing behind", "[server]") {
  TestServer ts;
  ts.options.max_upload = 64 * 1024;
  ts.Start();
  const std::string big = MakeTrace(6, 200 * 1024);
  REQUIRE(big.size() > ts.options.max_upload);

  SECTION("declared by Content-Length") {
    auto c = ts.Client();
    auto r = Upload(c, big);
    REQUIRE(r);
    CHECK(r->status == 413);
    CHECK(Body(r)["error"].get<std::string>().find("limit") != std::string::npos);
  }
  SECTION("chunked, so only counting can tell") {
    auto c = ts.Client();
    size_t sent = 0;
    auto r = c.Post(
        "/api/traces",
        [&](size_t, httplib::DataSink& sink) {
          if (sent >= big.size()) {
            sink.done();
            return true;
          }
          size_t n = std::min<size_t>(8192, big.size() - sent);
          bool ok = sink.write(big.data() + sent, n);
          sent += n;
          return ok;
        },
        "application/octet-stream");
    // The server answers 413 and closes; depending on timing the client sees the answer or a write error.
    if (r) CHECK(r->status == 413);
  }
  SECTION("a small trace still fits") {
    auto c = ts.Client();
    auto r = Upload(c, MakeTrace(7));
    REQUIRE(r);
    CHECK(r->status == 201);
  }
  ts.Stop();
  CHECK(ts.TempFiles() == 0);
  CHECK(ts.StoredTraces() <= 1);
}

TEST_CASE("invalid traces get 400 with the reason", "[server]") {
  TestServer ts;
  ts.Start();
  auto c = ts.Client();

  auto garbage = Upload(c, std::string(5000, 'x'));
  REQUIRE(garbage);
  CHECK(garbage->status == 400);
  CHECK(Body(garbage)["error"].get<std::string>().find("not a .gtrace") != std::string::npos);

  auto empty = Upload(c, "");
  REQUIRE(empty);
  CHECK(empty->status == 400);
  CHECK(Body(empty)["error"].get<std::string>().find("empty") != std::string::npos);

  auto json_text = Upload(c, R"({"traceEvents":[]})");
  REQUIRE(json_text);
  CHECK(json_text->status == 400);

  // The magic and then nothing usable.
  const std::string trace = MakeTrace(8);
  std::string header_only = trace.substr(0, 16) + std::string(64, '\xff');
  auto broken = Upload(c, header_only);
  REQUIRE(broken);
  CHECK(broken->status == 400);
  CHECK(Body(broken)["error"].get<std::string>().find("not a readable trace") == 0);

  auto multipart = c.Post("/api/traces", trace, "multipart/form-data; boundary=xyz");
  REQUIRE(multipart);
  CHECK(multipart->status == 415);

  CHECK(ts.StoredTraces() == 0);
  ts.Stop();
  CHECK(ts.TempFiles() == 0);
}

TEST_CASE("a trace with damaged chunks is kept and the damage reported", "[server]") {
  TestServer ts;
  ts.Start();
  auto c = ts.Client();
  std::string trace = MakeTrace(9, 200000);
  // Flip bytes in the middle: the chunk there fails its checksum, the rest stays readable.
  for (size_t i = trace.size() / 2; i < trace.size() / 2 + 64; ++i)
    trace[i] = static_cast<char>(trace[i] ^ 0x5a);
  auto r = Upload(c, trace);
  REQUIRE(r);
  CHECK(r->status == 201);
  json j = Body(r);
  REQUIRE(j.contains("damaged"));
  CHECK(j["damaged"]["chunks_lost"].get<uint64_t>() >= 1);
  CHECK(!j["damaged"]["problems"].empty());

  std::string truncated = MakeTrace(10, 200000);
  truncated.resize(truncated.size() * 2 / 3);
  auto t = Upload(c, truncated);
  REQUIRE(t);
  CHECK(t->status == 201);
  CHECK(Body(t)["damaged"]["truncated"] == true);
}

TEST_CASE("delete needs the uploader's token", "[server]") {
  TestServer ts;
  ts.Start();
  auto c = ts.Client();
  const std::string trace = MakeTrace(11);
  json first = Body(Upload(c, trace));
  const std::string id = first["id"];
  const std::string url = "/api/traces/" + id;

  auto missing = c.Delete(url);
  REQUIRE(missing);
  CHECK(missing->status == 401);
  auto wrong = c.Delete(url, {{"X-Delete-Token", "aaaaaaaaaaaaaaaaaaaaaaaaaa"}});
  REQUIRE(wrong);
  CHECK(wrong->status == 403);
  CHECK(c.Get(url)->status == 200);

  SECTION("the only uploader deletes") {
    auto ok = c.Delete(url, {{"X-Delete-Token", first["delete_token"].get<std::string>()}});
    REQUIRE(ok);
    CHECK(ok->status == 204);
    CHECK(c.Get(url)->status == 404);
    CHECK(ts.StoredTraces() == 0);
    auto again = c.Delete(url, {{"X-Delete-Token", first["delete_token"].get<std::string>()}});
    CHECK(again->status == 404);
  }
  SECTION("with two uploaders of the same bytes, the trace stays until both delete") {
    json second = Body(Upload(c, trace));
    CHECK(second["id"] == id);
    CHECK(c.Delete(url, {{"X-Delete-Token", first["delete_token"].get<std::string>()}})->status == 204);
    CHECK(c.Get(url)->status == 200);
    // The first token is spent.
    CHECK(c.Delete(url, {{"X-Delete-Token", first["delete_token"].get<std::string>()}})->status == 403);
    CHECK(c.Delete(url, {{"X-Delete-Token", second["delete_token"].get<std::string>()}})->status == 204);
    CHECK(c.Get(url)->status == 404);
  }
  SECTION("after a delete the same bytes can be uploaded again") {
    CHECK(c.Delete(url, {{"X-Delete-Token", first["delete_token"].get<std::string>()}})->status == 204);
    auto re = Upload(c, trace);
    CHECK(re->status == 201);
    CHECK(Body(re)["id"] == id);
    CHECK(c.Get(url)->body == trace);
  }
}

TEST_CASE("SanitizeTraceName keeps a plain file name and defuses everything else", "[server]") {
  CHECK(SanitizeTraceName("train step 3.gtrace") == "train step 3.gtrace");
  CHECK(SanitizeTraceName("/home/me/runs/a+b_c-d.gtrace") == "a+b_c-d.gtrace");
  CHECK(SanitizeTraceName("C:\\Users\\me\\x.gtrace") == "x.gtrace");
  CHECK(SanitizeTraceName("evil\"\r\nSet-Cookie: a=b.gtrace") == "evil___Set-Cookie_ a_b.gtrace");
  CHECK(SanitizeTraceName("..") == "");
  CHECK(SanitizeTraceName("../../etc/passwd") == "passwd");
  CHECK(SanitizeTraceName(".hidden") == "hidden");
  CHECK(SanitizeTraceName("___") == "");
  CHECK(SanitizeTraceName("") == "");
  CHECK(SanitizeTraceName("ü.gtrace") == "__.gtrace");  // UTF-8 bytes become '_' each: the header stays ASCII
  CHECK(SanitizeTraceName(std::string(300, 'a')).size() == 100);
}

TEST_CASE("a trace keeps the first uploader's file name, safely, across restarts", "[server]") {
  TestServer ts;
  ts.Start();
  auto c = ts.Client();
  const std::string trace = MakeTrace(7);
  auto first = c.Post("/api/traces?name=" + httplib::detail::encode_query_param("my run \"1\".gtrace"), trace,
                      "application/octet-stream");
  REQUIRE(first);
  REQUIRE(first->status == 201);
  const std::string id = Body(first)["id"];
  auto second = c.Post("/api/traces?name=other.gtrace", trace, "application/octet-stream");
  REQUIRE(second);
  REQUIRE(second->status == 200);  // deduplicated: the name stays the first one
  CHECK(Body(second)["id"] == id);

  auto down = c.Get("/api/traces/" + id);
  REQUIRE(down);
  CHECK(down->get_header_value("Content-Disposition") == "attachment; filename=\"my run _1_.gtrace\"");

  // A hostile name can neither split the header nor leave the quotes.
  auto hostile = c.Post("/api/traces?name=" + httplib::detail::encode_query_param("x\r\nX-Evil: 1\"; a=\"b"),
                        MakeTrace(8), "application/octet-stream");
  REQUIRE(hostile);
  REQUIRE(hostile->status == 201);
  auto hostile_down = c.Get("/api/traces/" + Body(hostile)["id"].get<std::string>());
  REQUIRE(hostile_down);
  CHECK(!hostile_down->has_header("X-Evil"));
  CHECK(hostile_down->get_header_value("Content-Disposition") ==
        "attachment; filename=\"x__X-Evil_ 1__ a__b\"");

  ts.Stop();
  ts.Start();
  auto c2 = ts.Client();
  auto again = c2.Get("/api/traces/" + id);
  REQUIRE(again);
  CHECK(again->get_header_value("Content-Disposition") == "attachment; filename=\"my run _1_.gtrace\"");
}

// The socket-free path the fuzz target drives (tests/fuzz/fuzz_server.cc) must be the server itself: same
// routes, limits and store, so what it finds applies to `gtrace serve`.
TEST_CASE("raw requests answered from memory: upload, download, limits, malformed", "[server]") {
  TempDir dir;
  auto store = OpenLocalDirStore(dir.str());
  REQUIRE(store.ok());
  ServerOptions options;
  options.max_upload = 64 << 10;
  auto server = ShareServer::Create(std::move(*store), options);
  REQUIRE(server.ok());
  ShareServer& s = **server;

  std::string health = s.AnswerRawRequest("GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(health.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(health.find("\"max_upload\":65536") != std::string::npos);

  const std::string trace = MakeTrace(7);
  std::string up = s.AnswerRawRequest(
      "POST /api/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
      "Content-Length: " +
      std::to_string(trace.size()) + "\r\n\r\n" + trace);
  REQUIRE(up.rfind("HTTP/1.1 201", 0) == 0);
  size_t at = up.find("\"id\":\"");
  REQUIRE(at != std::string::npos);
  std::string id = up.substr(at + 6, up.find('"', at + 6) - at - 6);
  std::string down = s.AnswerRawRequest("GET /api/traces/" + id + " HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(down.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(down.size() >= trace.size());
  CHECK(down.compare(down.size() - trace.size(), trace.size(), trace) == 0);

  std::string big =
      s.AnswerRawRequest("POST /api/traces HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n");
  CHECK(big.rfind("HTTP/1.1 413", 0) == 0);
  std::string junk = s.AnswerRawRequest("\x01\x02 nonsense\r\n\r\n");
  CHECK(junk.rfind("HTTP/1.1 400", 0) == 0);
  CHECK(junk.find("nonsense") == std::string::npos);  // never echoes the request
}
