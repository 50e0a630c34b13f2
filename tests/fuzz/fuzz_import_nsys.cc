// libFuzzer: the Nsight Systems row -> record mapping (viewer/core import_nsys.cc) on hostile columns,
// without SQLite. The bytes are a program that fills NsysTables: each step picks a table of NsysSchema(), a
// column, a row count and values (biased to NULL, 0, -1, huge, small ids and nsys's enum values), so the
// fuzzer reaches every column the mapping reads; the tables then go through MapNsysTables, the model builder
// and the queries.
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "fuzz_viewer_common.h"
#include "gt/viewer/builder.h"
#include "gt/viewer/nsys.h"

namespace {

struct Bytes {
  const uint8_t* p;
  size_t n;
  uint8_t U8() { return n ? (--n, *p++) : 0; }
  int64_t I64() {
    int64_t v = 0;
    size_t k = n < 8 ? n : 8;
    std::memcpy(&v, p, k);
    p += k, n -= k;
    return v;
  }
  int64_t Value() {
    static const int64_t kSpecial[] = {gt::viewer::kNsysNull,
                                       0,
                                       1,
                                       -1,
                                       2,
                                       7,
                                       8,
                                       10,
                                       34,
                                       59,
                                       60,
                                       70,
                                       75,
                                       INT64_MAX,
                                       int64_t(UINT32_MAX),
                                       int64_t(UINT32_MAX) + 1,
                                       (4242ll << 24) | 4242};
    uint8_t k = U8();
    if (k < 64) return kSpecial[k % std::size(kSpecial)];
    if (k < 192) return int64_t(U8()) * 1000 + U8();  // small ids and times
    return I64();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gt::viewer;
  const auto& schema = NsysSchema();
  NsysTables tables;
  Bytes in{data, size};
  for (int step = 0; step < 64 && in.n > 0; ++step) {
    const NsysTableSpec& spec = schema[in.U8() % schema.size()];
    NsysTable& t = tables.tables[spec.table];
    t.present = true;
    const size_t ncols = spec.ints.size() + spec.texts.size();
    const size_t col = in.U8() % ncols;
    // Columns of one table may disagree on their length: the mapping must not read past any of them.
    const size_t rows = in.U8() % 17;
    t.rows = std::max(t.rows, rows);
    if (col < spec.ints.size()) {
      auto& v = t.ints[spec.ints[col]];
      for (size_t r = 0; r < rows; ++r) v.push_back(in.Value());
    } else {
      auto& v = t.texts[spec.texts[col - spec.ints.size()]];
      for (size_t r = 0; r < rows; ++r) {
        size_t len = in.U8() % 24;
        std::string s;
        for (size_t i = 0; i < len; ++i) s.push_back(char(in.U8()));
        v.push_back(std::move(s));
      }
    }
  }
  gt::TraceData out;
  if (!MapNsysTables(tables, &out).ok()) return 0;
  ModelBuilder b;
  b.SetFormat(SourceFormat::kNsysSqlite);
  ReplayTraceData(out, b);
  auto model = b.Finish();
  gt::fuzz::ExerciseModel(*model);
  return 0;
}
