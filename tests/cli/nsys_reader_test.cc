// Nsight Systems import, SQLite half (viewer/nsys): the committed fixture read through libsqlite3, bad bytes
// rejected with SQLite's reason, and a round trip through gtrace's own nsys-shaped export (`export
// --sqlite`): real H200 traces written as nsys tables and read back give the same kernel table, copies and
// NVTX.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "gt/nsys/sqlite_reader.h"
#include "gt/viewer/load.h"
#include "gt/viewer/nsys.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"
#include "sqlite_export.h"

using namespace gt;

namespace {
std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}
std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
}  // namespace

TEST_CASE("nsys reader: the committed fixture's tables", "[nsys]") {
  std::string raw = Slurp(std::string(GT_TESTS_DATA) + "/nsys_small.sqlite");
  REQUIRE(raw.size() > 1000);
  auto t = nsys::ReadNsysSqlite(Bytes(raw));
  REQUIRE(t.ok());
  CHECK(t->Get("CUPTI_ACTIVITY_KIND_KERNEL").rows == 12);
  CHECK(t->Get("CUPTI_ACTIVITY_KIND_MEMCPY").rows == 8);
  CHECK(t->Get("CUPTI_ACTIVITY_KIND_MEMSET").rows == 2);
  CHECK(t->Get("NVTX_EVENTS").rows == 16);
  CHECK(t->Get("TARGET_INFO_GPU").rows == 2);
  CHECK(!t->Get("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION").present);
  // An NVTX mark's NULL end stays NULL; text is text.
  const auto& nv = t->Get("NVTX_EVENTS");
  CHECK(nv.Int("end", 0) == viewer::kNsysNull);
  CHECK(*nv.Text("text", 0) == "train");
}

TEST_CASE("nsys reader: truncated and corrupt bytes fail with a reason", "[nsys]") {
  std::string raw = Slurp(std::string(GT_TESTS_DATA) + "/nsys_small.sqlite");
  for (size_t cut : {size_t(100), size_t(4096), size_t(20000), raw.size() - 1000}) {
    std::string part = raw.substr(0, cut);
    auto t = nsys::ReadNsysSqlite(Bytes(part));
    INFO("cut at " << cut);
    if (cut > 20000 && t.ok()) {
      // The cut took only unused space of the last page: then every row must still be there, none invented.
      CHECK(t->Get("CUPTI_ACTIVITY_KIND_KERNEL").rows == 12);
      CHECK(t->Get("NVTX_EVENTS").rows == 16);
      continue;
    }
    REQUIRE(!t.ok());
    CHECK(t.status().message().find("SQLite") != std::string::npos);
  }
  std::string garbled = raw;
  for (size_t i = 4096; i < garbled.size(); i += 97) garbled[i] = char(garbled[i] ^ 0x5A);
  auto t = nsys::ReadNsysSqlite(Bytes(garbled));
  if (t.ok()) {  // what SQLite could read is mapped; hostile values are the mapping's to count
    TraceData data;
    (void)viewer::MapNsysTables(*t, &data);
  } else {
    CHECK(t.status().message().find("not a readable SQLite database") != std::string::npos);
  }
  CHECK(!nsys::ReadNsysSqlite(Bytes(std::string("SQLite format 3", 15))).ok());
}

TEST_CASE("nsys reader: gtrace's nsys-shaped export reads back as the same trace", "[nsys]") {
  nsys::RegisterNsysReader();
  for (const char* name : {"h200_nvtx.gtrace", "h200_streams.gtrace", "h200_torch_train.gtrace"}) {
    INFO(name);
    auto a = viewer::LoadTraceFile(std::string(GT_TESTS_DATA) + "/" + name);
    REQUIRE(a.ok());
    std::string out = std::string(GT_TESTS_BINARY_DIR) + "/roundtrip_" + name + ".sqlite";
    REQUIRE(cli::ExportSqliteFile(*a.value(), out, /*force=*/true).ok());
    auto b = viewer::LoadTraceFile(out);
    REQUIRE(b.ok());
    CHECK(b.value()->format == viewer::SourceFormat::kNsysSqlite);
    auto ka = viewer::KernelSummary(*a.value()), kb = viewer::KernelSummary(*b.value());
    REQUIRE(ka.size() == kb.size());
    for (size_t i = 0; i < ka.size(); ++i) {
      CHECK(a.value()->Str(ka[i].name) == b.value()->Str(kb[i].name));
      CHECK(ka[i].count == kb[i].count);
      CHECK(ka[i].total_ns == kb[i].total_ns);
    }
    CHECK(a.value()->devices.size() == b.value()->devices.size());
    std::remove(out.c_str());
  }
}
