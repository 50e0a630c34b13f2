// The fast JSON front end against the reference (nlohmann SAX): identical models on every JSON fixture, on
// generated Kineto traces (plain and gzipped: gzip streams through windows), on generated odd documents, and
// on damaged ones (same outcome; the byte position named in the damage note may differ).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "gt/viewer/load.h"
#include "gzip_util.h"
#include "kineto_gen.h"
#include "model_diff.h"

using namespace gt;
using namespace gt::viewer;

namespace {

std::span<const uint8_t> Bytes(const std::string& s) {
  return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

StatusOr<std::unique_ptr<TraceModel>> Load(const std::string& bytes, LoadOptions::JsonParser parser) {
  LoadOptions o;
  o.json_parser = parser;
  return LoadTrace(Bytes(bytes), o);
}

// The damage note names a byte position that each parser reports its own way.
void BlurDamagePosition(TraceModel& m) {
  for (auto& l : m.losses)
    if (l.name == "json_truncated")
      std::string("damaged").swap(l.detail);  // capacity too: MemoryBytes counts it
}

// Both parsers on the same bytes: the same status code, and when both load, the same model.
void ExpectSame(const std::string& bytes, const std::string& what, bool blur = false) {
  INFO(what);
  auto fast = Load(bytes, LoadOptions::JsonParser::kFast);
  auto ref = Load(bytes, LoadOptions::JsonParser::kReference);
  REQUIRE(fast.ok() == ref.ok());
  if (!ref.ok()) {
    CHECK(fast.status().code() == ref.status().code());
    return;
  }
  if (blur) BlurDamagePosition(*fast.value()), BlurDamagePosition(*ref.value());
  CHECK(test::ModelDiff(*fast.value(), *ref.value()) == "");
  CHECK(test::ModelFingerprint(*fast.value()) == test::ModelFingerprint(*ref.value()));
  // Slices of the event array parsed on threads: tiny slices, so that guesses land everywhere (inside
  // strings, nested values, at window ends) and most rounds have several slices to confirm or drop.
  for (uint32_t slice : {61u, 1000u}) {
    LoadOptions o;
    o.threads = 3;
    o.json_slice_bytes = slice;
    auto par = LoadTrace(Bytes(bytes), o);
    INFO("threads, slices of " << slice << " bytes");
    REQUIRE(par.ok());
    if (blur) BlurDamagePosition(*par.value());
    CHECK(test::ModelDiff(*par.value(), *fast.value()) == "");
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool HasLoss(const TraceModel& m, const std::string& name) {
  for (const auto& l : m.losses)
    if (l.name == name) return true;
  return false;
}

}  // namespace

TEST_CASE("fast JSON import: every JSON fixture, plain and gzipped, builds the reference's model") {
  static const char* kFixtures[] = {
#include "fixtures.inc"
  };
  std::vector<std::string> files;
  for (const char* f : kFixtures)
    if (std::string_view(f).find(".json") != std::string_view::npos) files.push_back(f);
  files.push_back(std::string(GT_TESTS_DATA) + "/../viewer/data/kineto_small.json");
  REQUIRE(files.size() >= 2);
  for (const auto& f : files) {
    const std::string bytes = ReadFile(f);
    REQUIRE(!bytes.empty());
    ExpectSame(bytes, f);
    const bool gz = bytes.size() > 2 && uint8_t(bytes[0]) == 0x1f && uint8_t(bytes[1]) == 0x8b;
    if (!gz) ExpectSame(test::Gzip(bytes), f + " gzipped");
    auto m = Load(bytes, LoadOptions::JsonParser::kFast);
    REQUIRE(m.ok());
    CHECK(m.value()->lanes.size() > 0);
  }
}

TEST_CASE("fast JSON import: generated Kineto traces across gzip windows") {
  for (uint64_t seed : {1, 2}) {
    // Over 1 MB of text: the gzip path parses across several windows of inflated text.
    const std::string json = test::KinetoJson(3u << 20, seed);
    ExpectSame(json, "kineto seed " + std::to_string(seed));
    ExpectSame(test::Gzip(json), "kineto gzipped seed " + std::to_string(seed));
    auto m = Load(test::Gzip(json), LoadOptions::JsonParser::kFast);
    REQUIRE(m.ok());
    CHECK(m.value()->format == SourceFormat::kKinetoJson);
    for (const auto& l : m.value()->losses) {
      INFO(l.name + ": " + l.detail);
      CHECK(false);
    }
    CHECK(m.value()->report.bytes_total == json.size());
    // Threads with the default slices: each round inflates the next round's text while it is parsed.
    LoadOptions o;
    o.threads = 2;
    auto par = LoadTrace(Bytes(test::Gzip(json)), o);
    REQUIRE(par.ok());
    CHECK(test::ModelDiff(*par.value(), *m.value()) == "");
    CHECK(par.value()->report.bytes_total == json.size());
  }
}

TEST_CASE("fast JSON import: odd documents (all phases, number and string forms, escapes, nesting)") {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const std::string json = test::OddJson(seed);
    ExpectSame(json, "odd seed " + std::to_string(seed) + ": " + json.substr(0, 300));
  }
  // Large odd documents through gzip windows (escapes and UTF-8 cut at window edges).
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    const std::string json = test::OddJson(1000 + seed, 12000);
    REQUIRE(json.size() > (1u << 20));
    ExpectSame(test::Gzip(json), "large odd gzipped seed " + std::to_string(seed));
  }
}

TEST_CASE("fast JSON import: invalid JSON is rejected as the reference rejects it") {
  const char* kBad[] = {
      "",
      "   ",
      "[",
      "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 1}] ",
      "[{\"ph\": \"X\", \"ts\": 01}]",
      "[{\"ph\": \"X\", \"ts\": 1.}]",
      "[{\"ph\": \"X\", \"ts\": 1e}]",
      "[{\"ph\": \"X\", \"ts\": 1e999}]",
      "[{\"ph\": \"X\", \"ts\": -}]",
      "[{\"ph\": \"X\", \"name\": \"a\\x\"}]",
      "[{\"ph\": \"X\", \"name\": \"\\ud800\"}]",
      "[{\"ph\": \"X\", \"name\": \"\\udc00\"}]",
      "[{\"ph\": \"X\", \"name\": \"\xc3\x28\"}]",
      "[{\"ph\": \"X\", \"name\": \"\xed\xa0\x80\"}]",
      "[{\"ph\": \"X\", \"name\": \"\xf4\x90\x80\x80\"}]",
      "[{\"ph\": \"X\", \"name\": \"tab\there\"}]",
      "[{\"ph\": \"X\",}]",
      "[{\"ph\": \"X\"},]",
      "[{\"ph\" \"X\"}]",
      "[tru]",
      "[{\"ph\": \"X\"}] x",
      "\xef\xbb[]",
      "{\"traceEvents\": [], }",
      "[{\"ph\": \"X\", \"args\": {\"a\": [1, 2,]}}]",
      "[{\"ph\": \"X\", \"args\": {\"a\": {\"b\" 1}}}]",
      "// comment\n[]",
      "NaN",
  };
  for (const char* b : kBad) {
    const std::string s(b);
    ExpectSame(s, "bad: " + s, true);
    auto fast = Load(s, LoadOptions::JsonParser::kFast);
    CHECK((!fast.ok() || HasLoss(*fast.value(), "json_truncated")));
  }
  // Valid corner cases.
  for (const char* s : {"\xef\xbb\xbf[{\"ph\": \"i\", \"ts\": 1}]", "[{\"ph\":\"i\",\"ts\":-0}]", "123", "[]",
                        "{}", "[{\"ph\": \"i\", \"ts\": 1e2, \"name\": \"\\u00e9\\ud83d\\ude00\"}]",
                        // Structured args: captured as compact JSON text (escapes re-encoded, "-0" as "0").
                        "[{\"ph\": \"i\", \"ts\": 1, \"args\": {\"a\": [-0, -0.0, -0e1, 0, -1, \"x\\\"y\", "
                        "{\"k\" : \"\\u00e9\\t\", \"-0\": -0 }, [ ], \"\xc3\xa9\"], \"b\": {\"c\": -0}}}]"})
    ExpectSame(s, std::string("valid: ") + s);
}

TEST_CASE("fast JSON import: truncated and damaged traces keep the same events") {
  const std::string json = test::KinetoJson(200000, 7);
  test::GenRng r(11);
  for (int i = 0; i < 40; ++i) {
    const size_t cut = r.Below(uint32_t(json.size()));
    ExpectSame(json.substr(0, cut), "cut at " + std::to_string(cut), true);
    std::string damaged = json;
    damaged[cut] = "\"{}[],:x\x01\xff"[r.Below(10)];
    ExpectSame(damaged, "damaged at " + std::to_string(cut), true);
  }
  // A gzip stream cut short: both keep what came before and say so.
  const std::string gz = test::Gzip(test::KinetoJson(3u << 19, 5));
  for (size_t cut : {gz.size() / 3, gz.size() - 5}) {
    const std::string part = gz.substr(0, cut);
    ExpectSame(part, "gzip cut at " + std::to_string(cut), true);
    auto m = Load(part, LoadOptions::JsonParser::kFast);
    REQUIRE(m.ok());
    CHECK(HasLoss(*m.value(), "gzip_truncated"));
  }
}

TEST_CASE("fast JSON import: steps report progress and the gzip limit holds") {
  const std::string json = test::KinetoJson(3u << 20, 9);
  const std::string gz = test::Gzip(json);
  TraceLoader l;
  REQUIRE(l.Open(Bytes(gz)).ok());
  double last = 0;
  int steps = 0;
  while (!l.done()) {
    l.Step();
    CHECK(l.progress() >= last);
    last = l.progress();
    ++steps;
  }
  CHECK(last == 1.0);
  REQUIRE(l.Finish().ok());
  LoadOptions small;
  small.max_inflated_bytes = 1u << 20;
  auto m = LoadTrace(Bytes(gz), small);
  REQUIRE(!m.ok());
  CHECK(m.status().code() == StatusCode::kResourceExhausted);
}

TEST_CASE("fast JSON import: a document followed by NUL bytes (found by fuzz_import_json on the H200 host)") {
  const std::string bytes =
      ReadFile(std::string(GT_TESTS_DATA) + "/../fuzz/corpus/fuzz_import_json/regress-trailing-nul.json");
  REQUIRE(bytes.size() > 100);
  auto fast = Load(bytes, LoadOptions::JsonParser::kFast);
  auto ref = Load(bytes, LoadOptions::JsonParser::kReference);
  REQUIRE(fast.ok() == ref.ok());
  if (ref.ok()) {
    for (const auto& l : fast.value()->losses) UNSCOPED_INFO("fast loss " << l.name << ": " << l.detail);
    for (const auto& l : ref.value()->losses) UNSCOPED_INFO("reference loss " << l.name << ": " << l.detail);
  }
  ExpectSame(bytes, "trailing NULs", true);
}
