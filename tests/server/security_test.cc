// Path traversal, odd ids, no listing, response headers, and the viewer page (MIME, gzip, caching, CSP).
#include <zlib.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "server_fixture.h"

using namespace gt::server;
using namespace gt::server::testing;
using nlohmann::json;

namespace {

void WriteFile(const std::filesystem::path& p, const std::string& content) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

std::string Gunzip(const std::string& in) {
  z_stream zs{};
  REQUIRE(inflateInit2(&zs, 15 + 16) == Z_OK);
  std::string out(std::max<size_t>(in.size() * 20, 1 << 22), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&zs, Z_FINISH);
  out.resize(out.size() - zs.avail_out);
  inflateEnd(&zs);
  REQUIRE(rc == Z_STREAM_END);
  return out;
}

// A web root with the page, an outside secret next to it, and a symlink that tries to reach the secret.
struct Site {
  TempDir dir;
  std::filesystem::path root = dir.path / "web";
  std::string index =
      "<!doctype html><html><head><script>window.gtBoot=1;</script>"
      "<script src=\"app.js\"></script></head><body>"
      "<canvas oncontextmenu=\"event.preventDefault()\"></canvas></body></html>";
  std::string wasm;
  Site() {
    WriteFile(root / "index.html", index);
    WriteFile(root / "app.js", std::string(4000, ' ') + "console.log('gtrace');\n");
    wasm = std::string("\0asm\1\0\0\0", 8) + std::string(20000, '\0');
    WriteFile(root / "gtrace.wasm", wasm);
    WriteFile(root / "chunk.3f9a2c1d7b.js", "export const x = 1;\n");
    WriteFile(root / ".env", "TOKEN=hidden\n");
    WriteFile(root / "sub" / "page.css", "body{}\n");
    WriteFile(dir.path / "secret.txt", "OUTSIDE-SECRET\n");
    std::filesystem::create_symlink(dir.path / "secret.txt", root / "escape.txt");
    std::filesystem::create_symlink(dir.path, root / "up");
  }
};

}  // namespace

TEST_CASE("there is no listing of traces", "[server][security]") {
  TestServer ts;
  ts.Start();
  auto c = ts.Client();
  REQUIRE(Upload(c, MakeTrace(20))->status == 201);
  for (const char* path :
       {"/api/traces", "/api/traces/", "/api", "/api/", "/api/list", "/api/traces?all=1"}) {
    auto r = c.Get(path);
    REQUIRE(r);
    INFO(path);
    CHECK((r->status == 404 || r->status == 405));
    CHECK(r->body.find("\"id\"") == std::string::npos);
  }
  auto put = c.Put("/api/traces", "x", "application/octet-stream");
  REQUIRE(put);
  CHECK(put->status >= 400);
}

TEST_CASE("odd trace ids go nowhere and all get the same 404", "[server][security]") {
  TestServer ts;
  ts.Start();
  auto c = ts.Client();
  const std::string id = json::parse(Upload(c, MakeTrace(21))->body)["id"];
  const std::string not_there = std::string(32, 'a');
  std::string reference;
  for (const std::string& odd :
       {not_there, id.substr(0, 31), id + "a", std::string("..%2f..%2fsecret.key"), std::string("%2e%2e"),
        std::string("secret.key"), std::string("..%2Ftmp"), std::string("%2fetc%2fpasswd"),
        std::string(id).replace(0, 1, "A"), std::string(id).replace(5, 1, "1"), std::string("%00") + id,
        id.substr(0, 2) + "%2f" + id}) {
    auto r = c.Get("/api/traces/" + odd);
    REQUIRE(r);
    INFO(odd);
    CHECK(r->status == 404);
    if (reference.empty()) reference = r->body;
    CHECK(r->body == reference);  // nothing in the answer tells a malformed id from an unknown one
    CHECK(r->body.find(odd) == std::string::npos);  // the request is never echoed
  }
  // Through a raw socket, so no client normalizes anything.
  for (const std::string path :
       {"/api/traces/../secret.key", "/api/traces/%2e%2e/secret.key", "/api/traces/..",
        "/api/traces//etc/passwd", "/../secret.key", "/%2e%2e/%2e%2e/etc/passwd", "/secret.key", "/traces",
        "/tmp/", "//etc/passwd", "/..%2fsecret.key", "/%2E%2E/lock"}) {
    std::string resp =
        RawRequest(ts.port(), "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    INFO(path);
    CHECK((RawStatus(resp) == 404 || RawStatus(resp) == 400));
    CHECK(resp.find("OUTSIDE") == std::string::npos);
    CHECK(resp.find("root:") == std::string::npos);
  }
  // A trace stays where it is: nothing above changed the store.
  CHECK(c.Get("/api/traces/" + id)->status == 200);
  CHECK(ts.StoredTraces() == 1);
}

TEST_CASE("the viewer page: MIME types, gzip, caching, CSP", "[server][static]") {
  Site site;
  TestServer ts;
  ts.options.web_root = site.root.string();
  ts.Start();
  auto c = ts.Client();
  c.set_decompress(false);  // look at the bytes on the wire

  auto index = c.Get("/");
  REQUIRE(index);
  CHECK(index->status == 200);
  CHECK(index->body == site.index);
  CHECK(index->get_header_value("Content-Type") == "text/html; charset=utf-8");
  CHECK(index->get_header_value("Cache-Control") == "no-cache");
  const std::string csp = index->get_header_value("Content-Security-Policy");
  CHECK(csp.find("script-src 'self' 'wasm-unsafe-eval'") != std::string::npos);
  CHECK(csp.find("'sha256-") != std::string::npos);  // the inline bootstrap script is allowed by hash only
  CHECK(csp.find("'unsafe-eval'") == std::string::npos);
  CHECK(csp.find("script-src 'self' 'wasm-unsafe-eval' 'sha256-") != std::string::npos);
  CHECK(csp.find("'unsafe-inline'") > csp.find("style-src"));  // inline styles only, never inline scripts
  // The page's own inline handler is allowed by its hash: sha256("event.preventDefault()").
  CHECK(csp.find("'unsafe-hashes' 'sha256-cwPror8N/Ds4hiaerviPOQ1rJd1zjNrEPnNZvr5x7Z8='") !=
        std::string::npos);
  CHECK(csp.find("object-src 'none'") != std::string::npos);
  CHECK(csp.find("frame-ancestors 'none'") != std::string::npos);
  CHECK(index->get_header_value("X-Content-Type-Options") == "nosniff");
  CHECK(index->get_header_value("Referrer-Policy") == "no-referrer");
  CHECK(c.Get("/index.html")->body == site.index);
  CHECK(c.Get("/?trace=abc&view=xyz")->body == site.index);

  auto wasm = c.Get("/gtrace.wasm", {{"Accept-Encoding", "gzip"}});
  REQUIRE(wasm);
  CHECK(wasm->get_header_value("Content-Type") == "application/wasm");
  CHECK(wasm->get_header_value("Content-Encoding") == "gzip");
  CHECK(wasm->get_header_value("Vary") == "Accept-Encoding");
  CHECK(wasm->body.size() < site.wasm.size());
  CHECK(Gunzip(wasm->body) == site.wasm);

  auto wasm_plain = c.Get("/gtrace.wasm", {{"Accept-Encoding", "identity"}});
  REQUIRE(wasm_plain);
  CHECK(!wasm_plain->has_header("Content-Encoding"));
  CHECK(wasm_plain->body == site.wasm);

  auto js = c.Get("/app.js", {{"Accept-Encoding", "gzip, br"}});
  REQUIRE(js);
  CHECK(js->get_header_value("Content-Type") == "text/javascript; charset=utf-8");
  CHECK(js->get_header_value("Content-Encoding") == "gzip");
  CHECK(js->get_header_value("Cache-Control") == "no-cache");
  const std::string etag = js->get_header_value("ETag");
  REQUIRE(!etag.empty());
  auto revalidated = c.Get("/app.js", {{"If-None-Match", etag}});
  REQUIRE(revalidated);
  CHECK(revalidated->status == 304);

  auto hashed = c.Get("/chunk.3f9a2c1d7b.js");
  REQUIRE(hashed);
  CHECK(hashed->get_header_value("Cache-Control") == "public, max-age=31536000, immutable");

  CHECK(c.Get("/sub/page.css")->get_header_value("Content-Type") == "text/css; charset=utf-8");

  for (const char* bad :
       {"/.env", "/escape.txt", "/up/secret.txt", "/sub/../../secret.txt", "/nothing.js", "/sub", "/sub/"}) {
    auto r = c.Get(bad);
    REQUIRE(r);
    INFO(bad);
    CHECK(r->status == 404);
    CHECK(r->body.find("OUTSIDE") == std::string::npos);
    CHECK(r->body.find("hidden") == std::string::npos);
  }
  for (const std::string path : {"/..%2fsecret.txt", "/%2e%2e/secret.txt", "/sub/%2e%2e/%2e%2e/secret.txt",
                                 "/%2fetc%2fpasswd", "/up/..%2f..%2fsecret.txt", "/.%65nv"}) {
    std::string resp =
        RawRequest(ts.port(), "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    INFO(path);
    CHECK((RawStatus(resp) == 404 || RawStatus(resp) == 400));
    CHECK(resp.find("OUTSIDE") == std::string::npos);
    CHECK(resp.find("hidden") == std::string::npos);
  }
}

TEST_CASE("trace strings never reach HTML", "[server][security]") {
  TestServer ts;
  ts.Start();  // no web root: the built-in page
  auto c = ts.Client();
  // MakeTrace puts "<script>alert(1)</script>" into the metadata.
  const std::string trace = MakeTrace(22);
  REQUIRE(trace.find("<script>") != std::string::npos);
  auto up = Upload(c, trace);
  REQUIRE(up);
  CHECK(up->get_header_value("Content-Type") == "application/json");
  CHECK(up->body.find("<script>") == std::string::npos);
  const std::string id = json::parse(up->body)["id"];
  auto down = c.Get("/api/traces/" + id);
  REQUIRE(down);
  // The bytes come back as a download the browser will neither sniff nor render.
  CHECK(down->get_header_value("Content-Type") == "application/octet-stream");
  CHECK(down->get_header_value("X-Content-Type-Options") == "nosniff");
  CHECK(down->get_header_value("Content-Disposition").find("attachment") == 0);
  CHECK(down->get_header_value("Content-Security-Policy").find("sandbox") != std::string::npos);
  // Nothing the client sends is echoed into a page either.
  auto page = c.Get("/?trace=%3Cscript%3Ealert(1)%3C/script%3E");
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(page->body.find("<script>alert") == std::string::npos);
  auto err = c.Get("/api/traces/%3Cscript%3E");
  REQUIRE(err);
  CHECK(err->get_header_value("Content-Type") == "application/json");
  CHECK(err->body.find("<script>") == std::string::npos);
  auto health = c.Get("/api/health");
  REQUIRE(health);
  CHECK(json::parse(health->body)["ok"] == true);
  CHECK(json::parse(health->body)["version"].is_string());
}
