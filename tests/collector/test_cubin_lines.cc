// PC sampling's source correlation through CUPTI's host-only calls (cuptiGetCubinCrc,
// cuptiGetSassToSourceCorrelation) on a real cubin: kernels/copy.cu built by nvcc with -lineinfo at build
// time. No GPU needed. On the H200 the hottest PC of copy_float4 was 0x1e0 = copy.cu:7, the load/store line
// (see tests/data/pcsampling_h200.gtrace); the same nvcc gives the same cubin here.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "inject/cubin_lines.h"

using namespace gt::decode;
using namespace gt::inject;

namespace {

std::vector<char> ReadCubin() {
  std::ifstream f(GT_TEST_CUBIN, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 1000);
  return bytes;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

constexpr const char* kCopy = "_Z11copy_float4PK6float4PS_m";
constexpr const char* kSaxpy = "_Z5saxpyfPKfPfm";

}  // namespace

TEST_CASE("cubin lines: a -lineinfo cubin maps its kernels' PCs to copy.cu lines, without a GPU") {
  std::vector<char> cubin = ReadCubin();
  CubinLines store(64 << 20);
  uint64_t crc = 0;
  REQUIRE(store.Keep(cubin.data(), cubin.size(), &crc));
  CHECK(crc != 0);
  CHECK(store.count() == 1);
  CHECK(store.bytes() == cubin.size());
  // Keeping the same image again (a module loaded twice) stores nothing new.
  uint64_t again = 0;
  CHECK(store.Keep(cubin.data(), cubin.size(), &again));
  CHECK(again == crc);
  CHECK(store.count() == 1);

  // Every PC of copy_float4 that resolves lies in its body (copy.cu lines 5-8); the loop body line 7 is among
  // them.
  std::set<uint32_t> copy_lines, saxpy_lines;
  // Both kernels are shorter than 0x240 bytes of SASS (the H200 samples had PCs up to 0x230); CUPTI resolves
  // offsets past a function's end into whatever code follows it, so the scan stays inside.
  for (uint64_t pc = 0; pc < 0x240; pc += 0x10) {
    SourceLine l;
    if (store.Resolve(crc, kCopy, pc, &l)) {
      CHECK(EndsWith(l.file, "kernels/copy.cu"));
      copy_lines.insert(l.line);
    }
    if (store.Resolve(crc, kSaxpy, pc, &l)) saxpy_lines.insert(l.line);
  }
  REQUIRE_FALSE(copy_lines.empty());
  CHECK(*copy_lines.begin() >= 5);
  CHECK(*copy_lines.rbegin() <= 8);
  CHECK(copy_lines.count(7) == 1);
  REQUIRE_FALSE(saxpy_lines.empty());
  CHECK(*saxpy_lines.begin() >= 10);
  CHECK(*saxpy_lines.rbegin() <= 13);
  CHECK(saxpy_lines.count(12) == 1);

  // The hottest PCs the H200 sampled (tests/data/pcsampling_h200.gtrace, same nvcc 13.0): the loads.
  SourceLine hot;
  REQUIRE(store.Resolve(crc, kCopy, 0x1e0, &hot));
  CHECK(hot.line == 7);
  REQUIRE(store.Resolve(crc, kSaxpy, 0x200, &hot));
  CHECK(hot.line == 12);

  // Unknown cubin, unknown function, empty name: no line, never a guess.
  SourceLine none;
  CHECK_FALSE(store.Resolve(crc + 1, kCopy, 0x1e0, &none));
  CHECK_FALSE(store.Resolve(crc, "_Z9not_therev", 0x10, &none));
  CHECK_FALSE(store.Resolve(crc, "", 0x10, &none));
}

TEST_CASE("cubin lines: the memory cap skips cubins instead of growing, garbage is refused") {
  std::vector<char> cubin = ReadCubin();
  CubinLines small(cubin.size() - 1);
  uint64_t crc = 0;
  CHECK(small.Keep(cubin.data(), cubin.size(), &crc));  // a cubin, just not kept
  CHECK(small.count() == 0);
  CHECK(small.skipped() == 1);
  SourceLine l;
  CHECK_FALSE(small.Resolve(crc, kCopy, 0x1e0, &l));
  CubinLines store(1 << 20);
  CHECK_FALSE(store.Keep(nullptr, 100));
  CHECK_FALSE(store.Keep(cubin.data(), 0));
  CHECK(store.count() == 0);
}
