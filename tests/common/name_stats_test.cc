// gt/name_stats.h: the one per-name aggregation (launcher summary, kernel table, stats reports).
#include <catch2/catch.hpp>

#include "gt/name_stats.h"

using namespace gt;

TEST_CASE("name aggregation: count, total, min, max, extents, share, order", "[name_stats]") {
  NameAggregator agg;
  agg.Add(3, 100, 10);
  agg.Add(1, 0, 30, 64);
  agg.Add(3, 50, 20);
  agg.Add(2, 10, 30);
  CHECK(agg.total_ns() == 90);
  const auto rows = agg.Rows();
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].name == 1);  // 30 ns ties with name 2 and 3: by name
  CHECK(rows[1].name == 2);
  CHECK(rows[2].name == 3);
  const NameStats& s = rows[2].stats;
  CHECK(s.count == 2);
  CHECK(s.total_ns == 30);
  CHECK(s.min_ns == 10);
  CHECK(s.max_ns == 20);
  CHECK(s.avg_ns() == 15);
  CHECK(s.first_ns == 50);
  CHECK(s.last_ns == 110);
  CHECK(rows[0].stats.bytes == 64);
  CHECK(rows[0].share == Approx(1.0 / 3));
  const auto desc = agg.Rows([](uint32_t a, uint32_t b) { return a > b; });
  CHECK(desc[0].name == 3);

  NameStats m = rows[1].stats;
  m.Merge(rows[2].stats);
  CHECK(m.count == 3);
  CHECK(m.min_ns == 10);
  CHECK(m.first_ns == 10);
  CHECK(m.last_ns == 110);
}

// Found by fuzz_import_json: a JSON trace may carry int64-limit times and durations; totals and extents saturate.
TEST_CASE("name aggregation saturates instead of overflowing", "[name_stats]") {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  NameAggregator agg;
  agg.Add(1, 12000, 6000);
  agg.Add(1, 9223372036854770000, 9223372036854770000 / 2);
  agg.Add(1, 0, kMax - 1);
  CHECK(agg.total_ns() == kMax);
  const auto rows = agg.Rows();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].stats.total_ns == kMax);
  CHECK(rows[0].stats.last_ns == kMax);
  CHECK(rows[0].stats.first_ns == 0);
  NameStats s = rows[0].stats;
  s.Merge(rows[0].stats);
  CHECK(s.total_ns == kMax);
  CHECK(SatSub(std::numeric_limits<int64_t>::min() + 5, 10) == std::numeric_limits<int64_t>::min());
  CHECK(SatSub(kMax - 4000, -4000 - 5000) == kMax);
}
