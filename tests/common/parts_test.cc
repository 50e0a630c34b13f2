// The parts of one gcollect run: the order they are joined in, and a part that cannot be read.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "gt/parts.h"

using namespace gt;

namespace {
void Write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}
std::string Read(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
}  // namespace

TEST_CASE("parts: gcollect's own part first, then processes by pid, other files ignored") {
  const auto dir = std::filesystem::temp_directory_path() / ("gt_parts_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "run.parts");
  const auto parts = dir / "run.parts";
  Write(parts / "1000.gtrace", "C");
  Write(parts / "99.gtrace", "B");
  Write(parts / "gcollect.gtrace", "A");
  Write(parts / "notes.txt", "x");
  const auto list = ListParts(parts.string());
  REQUIRE(list.size() == 3);
  CHECK(list[0] == (parts / "gcollect.gtrace").string());
  CHECK(list[1] == (parts / "99.gtrace").string());
  CHECK(list[2] == (parts / "1000.gtrace").string());

  auto joined = ConcatenateParts(list, (dir / "run.gtrace").string(), false);
  REQUIRE(joined.ok());
  CHECK(joined->parts == 3);
  CHECK(Read(dir / "run.gtrace") == "ABC");

  SECTION("an unreadable part is skipped and named, the rest kept") {
    std::vector<std::string> with_missing = list;
    with_missing.insert(with_missing.begin() + 1, (parts / "4242.gtrace").string());
    auto again = ConcatenateParts(with_missing, (dir / "again.gtrace").string(), false);
    REQUIRE(again.ok());
    CHECK(again->parts == 3);
    REQUIRE(again->problems.size() == 1);
    CHECK(again->problems[0].find("4242.gtrace") != std::string::npos);
    CHECK(Read(dir / "again.gtrace") == "ABC");
  }
  SECTION("a full disk fails the join and leaves no cut-short trace (the caller keeps the parts)") {
    // /dev/full answers every write with ENOSPC: the temporary file the join writes through points there.
    std::filesystem::create_symlink("/dev/full", dir / "full.gtrace.tmp");
    auto full = ConcatenateParts(list, (dir / "full.gtrace").string(), false);
    REQUIRE_FALSE(full.ok());
    CHECK(full.status().message().find("No space left on device") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "full.gtrace"));
    CHECK(ListParts(parts.string()).size() == 3);
  }
  SECTION("an existing output is never replaced unless asked") {
    auto refused = ConcatenateParts(list, (dir / "run.gtrace").string(), false);
    CHECK_FALSE(refused.ok());
    auto replaced = ConcatenateParts({list[2]}, (dir / "run.gtrace").string(), true);
    REQUIRE(replaced.ok());
    CHECK(Read(dir / "run.gtrace") == "C");
  }
  std::filesystem::remove_all(dir);
}
