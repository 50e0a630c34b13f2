// The environment table (gt/env.h) and the user guide's table of it cannot drift: every variable the code
// names is documented, with its kind.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "gt/env.h"

TEST_CASE("every GTRACE_ variable is in the user guide's table", "[env]") {
  std::ifstream in(GT_SOURCE_DIR "/docs/user-guide.md");
  REQUIRE(in.good());
  std::set<std::string> documented;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| `GTRACE_", 0) != 0) continue;
    size_t end = line.find('`', 3);
    REQUIRE(end != std::string::npos);
    documented.insert(line.substr(3, end - 3));
  }
  for (const auto& v : gt::env::AllVars()) {
    INFO(v.name);
    CHECK(documented.count(v.name) == 1);
    CHECK(std::string(v.name).rfind("GTRACE_", 0) == 0);
    CHECK(*v.meaning != '\0');
    CHECK(*v.default_value != '\0');
  }
  CHECK(documented.size() ==
        gt::env::AllVars().size());  // and nothing documented that the code no longer reads
}

TEST_CASE("env table lookups", "[env]") {
  CHECK(std::string(gt::env::Name(gt::env::Var::kTrace)) == "GTRACE_TRACE");
  CHECK(gt::env::Info(gt::env::Var::kCountersDebug).kind == gt::env::Kind::kDebug);
  setenv("GTRACE_QUIET", "1", 1);
  CHECK(gt::env::IsSet(gt::env::Var::kQuiet));
  unsetenv("GTRACE_QUIET");
  CHECK_FALSE(gt::env::IsSet(gt::env::Var::kQuiet));
}
