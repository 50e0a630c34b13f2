// gt/viewer/json.h: the one JSON encoding of core results (CLI --json and the C API share it).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "gt/viewer/json.h"
#include "test_util.h"

using namespace gt;
using namespace gt::viewer;
using nlohmann::json;

TEST_CASE("json: name rows carry every column, kernel table and summaries alike", "[json]") {
  auto m = test::SmallTrace();
  const json k = json::parse(KernelSummaryJson(*m, KernelSummary(*m)));
  const json s = json::parse(NameSummaryJson(SummarizeByName(*m, SummaryOf::kKernels)));
  REQUIRE(k.size() == 2);
  CHECK(k == s);  // the same rows, the same shape
  CHECK(k[0]["name"] == "gemm");
  CHECK(k[0]["count"] == 1);
  CHECK(k[0]["total_ns"] == 1000);
  for (const char* key : {"avg_ns", "min_ns", "max_ns", "share", "bytes"}) CHECK(k[0].contains(key));
  const json c = json::parse(NameSummaryJson(SummarizeByName(*m, SummaryOf::kCopies), 1));
  REQUIRE(c.size() == 1);
  CHECK(c[0]["bytes"] == 1 << 20);
}

TEST_CASE("json: events, losses, gaps, scalars", "[json]") {
  auto m = test::SmallTrace();
  const EventId e = FirstKernelEvent(*m, 0, FindString(*m, "gemm"));
  const json ev = json::parse(EventJson(*m, e));
  CHECK(ev["name"] == "gemm");
  CHECK(ev["start"] == 250);
  CHECK(ev["fields"]["Duration"] == "1 \u00b5s");
  CHECK(EventJson(*m, {}) == "null");
  CHECK(json::parse(LossesJson(LossSummary(*m))).is_array());
  CHECK(json::parse(IdleGapsJson(ExplainIdleGaps(*m, 5))).is_array());
  CHECK(JsonQuote("a\"b\n") == "\"a\\\"b\\n\"");
  CHECK(JsonNumber(1.0 / 0.0) == "null");
  CHECK(JsonQuote("a\xff") == "\"a\xEF\xBF\xBD\"");  // not UTF-8: replaced, never thrown
}
