// The committed H200 traces (tests/data/, see its README.md) still read cleanly and still satisfy the
// workload checks: decoding, correlation, nesting and counts, as recorded on real hardware.
#include <catch2/catch.hpp>

#include <dirent.h>

#include "gt/reader.h"
#include "launcher/launcher.h"
#include "tools/check.h"

using namespace gt;
using namespace gt::check;
using namespace gt::launcher;

namespace {
std::vector<std::string> Fixtures() {
  std::vector<std::string> out;
  if (DIR* d = opendir(GT_TEST_DATA_DIR)) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind("h200_", 0) == 0 && n.size() > 7 && n.compare(n.size() - 7, 7, ".gtrace") == 0)
        out.push_back(n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

TEST_CASE("H200 fixtures: readable, and each satisfies its workload's checks") {
  auto fixtures = Fixtures();
  REQUIRE(fixtures.size() >= 2);
  for (const auto& name : fixtures) {
    INFO(name);
    auto bytes = ReadFileBytes(std::string(GT_TEST_DATA_DIR) + "/" + name);
    REQUIRE(bytes.ok());
    CHECK(bytes->size() <= 2u * 1024 * 1024);
    TraceData d;
    auto report = ReadTrace(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), d);
    REQUIRE(report.ok());
    CHECK(report->clean());
    // h200_<workload>.gtrace
    std::string workload = name.substr(5, name.size() - 5 - 7);
    CheckReport r;
    CheckWorkload(d, workload, r);
    for (const auto& f : r.failures) FAIL_CHECK(f);
    CHECK(d.metadata.Find("tool") != nullptr);
    TraceSummary s = Summarize(d);
    CHECK(s.devices == 1);
    CHECK(s.kernels > 0);
  }
}
