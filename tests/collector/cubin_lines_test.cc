// PC sampling's source correlation through CUPTI's host-only calls (cuptiGetCubinCrc,
// cuptiGetSassToSourceCorrelation) on a real cubin: kernels/copy.cu built by nvcc with -lineinfo at build
// time. No GPU needed. On the H200 the hottest PC of copy_float4 was 0x1e0 = copy.cu:7, the load/store line
// (see tests/data/pcsampling_h200.gtrace); the same nvcc gives the same cubin here.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "inject/cubin_lines.h"

using namespace gt::decode;
using namespace gt::inject;

namespace {

std::vector<char> ReadCubin(const char* path = GT_TEST_CUBIN) {
  std::ifstream f(path, std::ios::binary);
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

// `gcollect --pc-sampling` killed PyTorch apps (SIGBUS/SIGSEGV, ~40% of runs of an 8-layer
// transformer on the H200) inside cuptiGetSassToSourceCorrelation on the flush thread while the app was in
// exit(). CUPTI parses a cubin the first time it is asked about it, and that parse uses a function-local
// static (a std::vector<std::string>) that CUPTI builds on first use, registering its destructor with
// __cxa_atexit then. That is after the injection's atexit handler (registered at cuInit), so exit() destroys
// the vector first, while the flush thread, which the injection's handler stops only later, may still parse a
// new cubin through it: a read of freed memory. CubinLines closes itself from an atexit handler registered
// after CUPTI's (so run before it) and answers no line from then on.
//
// The scenario, in a fresh process (this test binary again, so that no earlier test built CUPTI's statics): a
// handler registered before CUPTI builds its statics runs after CUPTI destroyed them and asks about a cubin
// CUPTI has not parsed yet, as the flush thread did. Without the fence it crashes (or CUPTI answers); with it
// the lookup is refused and the process exits 0.
namespace {
CubinLines* g_exit_store = nullptr;
uint64_t g_exit_crc2 = 0;

void LookupDuringExit() {
  // Hand the memory CUPTI's destructors just freed to new owners, with bytes that are no valid pointer (as a
  // busy app's allocator soon does), so that a CUPTI parse through its destroyed statics fails the same way
  // every time (here SIGBUS, as on the H200) instead of reading stale but intact strings.
  for (size_t size = 16; size <= 256; size += 8)
    for (int i = 0; i < 16; ++i) std::memset(std::malloc(size), 0xa5, size);
  SourceLine l;
  bool answered = g_exit_store->Resolve(g_exit_crc2, "_Z12strided_readPKfPfmi", 0x100, &l);
  std::fflush(stdout);
  _exit(answered ? 3 : 0);  // 3: CUPTI was called after its statics were destroyed
}
}  // namespace

namespace {
// Runs the calling test case again in a fresh process (this binary, argv = {exe, test name}) with
// GT_CUBIN_LINES_EXIT_CHILD set; returns its wait status.
int RunInChild() {
  std::string self = "/proc/self/exe";
  std::string name = Catch::getResultCapture().getCurrentTestName();
  std::vector<std::string> env_storage;
  for (char** e = environ; *e; ++e) env_storage.emplace_back(*e);
  env_storage.emplace_back("GT_CUBIN_LINES_EXIT_CHILD=1");
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> argv = {self.data(), name.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), envp.data()) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return status;
}

void CheckChildExitedZero(int status) {
  INFO("child status " << status << (WIFSIGNALED(status) ? " (killed by signal " : " (exit code ")
                       << (WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status)) << ")");
  REQUIRE(status != -1);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
}  // namespace

TEST_CASE("cubin lines: a lookup while the process exits is refused and never reaches CUPTI") {
  if (std::getenv("GT_CUBIN_LINES_EXIT_CHILD")) {
    std::vector<char> a = ReadCubin();
    std::vector<char> b = ReadCubin(GT_TEST_CUBIN2);
    g_exit_store = new CubinLines(64 << 20);  // leaked: used from the exit handler
    uint64_t crc = 0;
    if (!g_exit_store->Keep(a.data(), a.size(), &crc) ||
        !g_exit_store->Keep(b.data(), b.size(), &g_exit_crc2))
      _exit(4);
    std::atexit(LookupDuringExit);  // before CUPTI's statics exist: runs after their destructors
    SourceLine l;
    if (!g_exit_store->Resolve(crc, kCopy, 0x1e0, &l) || l.line != 7) _exit(5);  // CUPTI builds its statics
    std::exit(0);
  }
  CheckChildExitedZero(RunInChild());
}

// The other side of the fence: an app too short for a flush has its first lookups made by the injection's
// exit handler (the final drain). CUPTI then builds its statics inside exit(), after every handler that is
// still to run was registered, so they outlive those lookups, and the lines must be kept.
namespace {
uint64_t g_exit_crc1 = 0;

void FirstLookupsDuringExit() {
  SourceLine copy_line, strided_line;
  bool copy_ok = g_exit_store->Resolve(g_exit_crc1, kCopy, 0x1e0, &copy_line) && copy_line.line == 7;
  bool strided_ok = g_exit_store->Resolve(g_exit_crc2, "_Z12strided_readPKfPfmi", 0x100, &strided_line);
  std::fflush(stdout);
  _exit(copy_ok && strided_ok && g_exit_store->refused_at_exit() == 0 ? 0 : 6);
}
}  // namespace

TEST_CASE("cubin lines: lookups first made inside exit keep their lines") {
  if (std::getenv("GT_CUBIN_LINES_EXIT_CHILD")) {
    std::vector<char> a = ReadCubin();
    std::vector<char> b = ReadCubin(GT_TEST_CUBIN2);
    g_exit_store = new CubinLines(64 << 20);
    // Like the injection's handler: registered at start, before any module load (Keep) or lookup.
    std::atexit(FirstLookupsDuringExit);
    if (!g_exit_store->Keep(a.data(), a.size(), &g_exit_crc1) ||
        !g_exit_store->Keep(b.data(), b.size(), &g_exit_crc2))
      _exit(4);
    std::exit(0);
  }
  CheckChildExitedZero(RunInChild());
}

// Between the two: an app that ran long enough to be looked up during its run, and whose final drain brings
// PCs of a cubin not parsed yet. The fence's before-exit hook (PC sampling's last GetData and lookups) runs
// before the fence closes, while CUPTI's statics are alive, so those PCs keep their lines; a lookup after
// the fence closed is still refused.
namespace {
bool g_hook_resolved = false;

void LookupsInBeforeExitHook() {
  SourceLine l;
  g_hook_resolved = g_exit_store->Resolve(g_exit_crc2, "_Z12strided_readPKfPfmi", 0x100, &l);
}

void CheckAfterFenceClosed() {
  SourceLine l;
  bool late = g_exit_store->Resolve(g_exit_crc1, kCopy, 0x200, &l);  // after CUPTI's destructors: refused
  std::fflush(stdout);
  _exit(g_hook_resolved && !late && g_exit_store->refused_at_exit() == 1 ? 0 : 7);
}
}  // namespace

TEST_CASE("cubin lines: the before-exit hook looks new cubins up before the fence closes") {
  if (std::getenv("GT_CUBIN_LINES_EXIT_CHILD")) {
    std::vector<char> a = ReadCubin();
    std::vector<char> b = ReadCubin(GT_TEST_CUBIN2);
    g_exit_store = new CubinLines(64 << 20);
    std::atexit(CheckAfterFenceClosed);  // like the injection's handler: runs after the fence
    if (!g_exit_store->Keep(a.data(), a.size(), &g_exit_crc1) ||
        !g_exit_store->Keep(b.data(), b.size(), &g_exit_crc2))
      _exit(4);
    SourceLine l;
    if (!g_exit_store->Resolve(g_exit_crc1, kCopy, 0x1e0, &l) || l.line != 7) _exit(5);  // arms the fence
    CubinLines::SetBeforeExitHook(LookupsInBeforeExitHook);
    std::exit(0);
  }
  CheckChildExitedZero(RunInChild());
}
