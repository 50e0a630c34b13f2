// The gzip inflater's contract (viewer/core/src/inflate.h), the same for both backends: every case runs on
// the fastest one (ISA-L natively where the machine has it) and on zlib, so that the two cannot drift apart
// on damaged or cut input (the streaming JSON parser and the whole-file path must read the same text).
#include <zlib.h>

#include <catch2/catch.hpp>
#include <string>

#include "gzip_util.h"
#include "inflate.h"

using gt::viewer::detail::Inflater;

namespace {

struct Out {
  std::string text;
  bool truncated = false;
  gt::StatusCode code = gt::StatusCode::kOk;
};

// All of it, `room` bytes a call (small rooms cross every internal buffer boundary).
Inflater::Backend g_backend = Inflater::Backend::kFastest;

Out InflateAll(const std::string& in, size_t room) {
  Inflater z(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(in.data()), in.size()), UINT64_MAX,
             g_backend);
  Out o;
  std::string buf(room, '\0');
  for (size_t calls = 0; !z.done(); ++calls) {
    if (calls > 2 * in.size() + 1'000'000) FAIL("no progress");  // a Read that spins without an end
    o.text.append(buf.data(), z.Read(buf.data(), room));
  }
  CHECK(z.produced() == o.text.size());
  CHECK(z.consumed() <= in.size());
  o.truncated = z.truncated();
  o.code = z.status().code();
  return o;
}

std::string Zlib(const std::string& in) {
  uLongf n = compressBound(in.size());
  std::string out(n, '\0');
  REQUIRE(compress2(reinterpret_cast<Bytef*>(out.data()), &n, reinterpret_cast<const Bytef*>(in.data()),
                    in.size(), 6) == Z_OK);
  out.resize(n);
  return out;
}

// A gzip member with every optional header field (extra, file name, comment, header CRC), as tools other than
// zlib's deflate write them.
std::string GzipWithHeaderFields(const std::string& in) {
  std::string h("\x1f\x8b\x08\x1e\x00\x00\x00\x00\x00\x03", 10);  // FHCRC | FEXTRA | FNAME | FCOMMENT
  h += std::string(
      "\x06\x00"
      "AB\x02\x00xy",
      8);  // XLEN 6: subfield "AB", 2 bytes
  h += std::string("trace.json\0", 11) + std::string("a comment\0", 10);
  const uint32_t hcrc = crc32(0, reinterpret_cast<const Bytef*>(h.data()), uInt(h.size()));
  h += char(hcrc & 0xff), h += char((hcrc >> 8) & 0xff);
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);  // raw deflate
  std::string body(deflateBound(&zs, in.size()) + 16, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = uInt(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(body.data());
  zs.avail_out = uInt(body.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  body.resize(zs.total_out);
  deflateEnd(&zs);
  const uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(in.data()), uInt(in.size()));
  const uint32_t size = uint32_t(in.size());
  for (uint32_t v : {crc, size})
    for (int i = 0; i < 4; ++i) body += char((v >> (8 * i)) & 0xff);
  return h + body;
}

std::string Text(size_t n, uint32_t seed) {
  std::string s;
  uint32_t x = seed;
  while (s.size() < n) {
    x = x * 1664525u + 1013904223u;
    s += "{\"name\":\"kernel_" + std::to_string(x % 97) + "\",\"ts\":" + std::to_string(x >> 8) + "},\n";
  }
  s.resize(n);
  return s;
}

}  // namespace

// Runs the rest of the test case once per backend.
#define FOR_EACH_BACKEND()                                                     \
  g_backend = GENERATE(Inflater::Backend::kFastest, Inflater::Backend::kZlib); \
  INFO("backend " << Inflater(std::span<const uint8_t>(), UINT64_MAX, g_backend).backend());

TEST_CASE("inflate: gzip and zlib members, one or concatenated, any output room", "[inflate]") {
  FOR_EACH_BACKEND();
  const std::string a = Text(300'000, 1), b = Text(70'000, 2);
  for (size_t room : {size_t{1}, size_t{7}, size_t{4096}, size_t{1} << 20}) {
    INFO("room " << room);
    for (const auto& [in, want] : {std::pair{gt::test::Gzip(a), a}, std::pair{Zlib(a), a},
                                   std::pair{gt::test::Gzip(a) + gt::test::Gzip(b), a + b},
                                   std::pair{gt::test::Gzip(a) + Zlib(b), a + b}}) {
      if (room == 1 && want.size() > a.size()) continue;  // slow, and nothing more than room 7 checks
      const Out o = InflateAll(in, room);
      CHECK(o.code == gt::StatusCode::kOk);
      CHECK_FALSE(o.truncated);
      CHECK(o.text == want);
    }
  }
  // Optional header fields (extra, name, comment, header CRC) are skipped, alone or after another member.
  const Out fields = InflateAll(GzipWithHeaderFields(b) + GzipWithHeaderFields(a), 4096);
  CHECK(fields.code == gt::StatusCode::kOk);
  CHECK_FALSE(fields.truncated);
  CHECK(fields.text == b + a);
  const Out empty_text = InflateAll(gt::test::Gzip(""), 64);
  CHECK(empty_text.text.empty());
  CHECK_FALSE(empty_text.truncated);
}

TEST_CASE("inflate: cut, damaged and trailing junk keep what came before", "[inflate]") {
  FOR_EACH_BACKEND();
  const std::string a = Text(200'000, 3);
  const std::string gz = gt::test::Gzip(a);
  // Cut short: a prefix of the text, marked truncated, not an error.
  for (size_t cut : {gz.size() / 2, gz.size() - 9, gz.size() - 1}) {
    INFO("cut at " << cut << " of " << gz.size());
    const Out o = InflateAll(gz.substr(0, cut), 4096);
    CHECK(o.code == gt::StatusCode::kOk);
    CHECK(o.truncated);
    CHECK(a.compare(0, o.text.size(), o.text) == 0);
    CHECK(o.text.size() > (cut < gz.size() - 20 ? 0 : a.size() / 2));
  }
  // A wrong checksum: all the text came out before it was checked; marked truncated.
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 6] ^= 0x40;
  const Out crc = InflateAll(bad_crc, 4096);
  CHECK(crc.truncated);
  CHECK(crc.code == gt::StatusCode::kOk);
  CHECK(crc.text == a);
  // Junk after a whole member: the member's text, marked truncated (the junk's "header" is wrong).
  const Out junk = InflateAll(gz + "not gzip at all", 4096);
  CHECK(junk.text == a);
  CHECK(junk.truncated);
  CHECK(junk.code == gt::StatusCode::kOk);
  // Damaged before any text: an error (nothing to keep), and so are a bad header and a cut header.
  for (const std::string& in : {std::string("\x1f\x8b garbage", 10),
                                std::string("\x1f\x8b\x08\x00", 4) + std::string(6, '\0') + "\xff\xff\xff"}) {
    const Out o = InflateAll(in, 4096);
    CHECK(o.text.empty());
    CHECK(o.truncated);
    CHECK(o.code == gt::StatusCode::kCorrupt);
  }
  for (const std::string& in : {std::string(), gz.substr(0, 5)}) {  // nothing, or half a header: cut short
    const Out o = InflateAll(in, 4096);
    CHECK(o.text.empty());
    CHECK(o.truncated);
  }
  // Bytes flipped mid-stream: whatever came out, the stream ends marked (never read as whole and clean).
  std::string flipped = gz;
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 16; ++i) flipped[i] ^= 0x5a;
  const Out f = InflateAll(flipped, 4096);
  CHECK((f.truncated || f.code != gt::StatusCode::kOk));
}

TEST_CASE("inflate: ISA-L where the machine has it", "[inflate]") {
  // The build machines install libisal2 (scripts/setup.sh): there the fast path must be the one in use.
  const std::string backend = Inflater(std::span<const uint8_t>()).backend();
#if GT_HAVE_ISAL
  CHECK(backend == "isa-l");
#else
  CHECK(backend == "zlib");
#endif
}
