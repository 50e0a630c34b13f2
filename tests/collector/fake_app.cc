// A CPU-only stand-in for a traced app (no GPU in CI). Modes:
//   exit N | signal N | thread-exit N | sleep MS | part-crash | part-fork
// part-*: writes records into $GTRACE_PARTS_DIR/<pid>.gtrace as the injection library would, so the
// launcher's merge, crash and multi-process handling are tested without CUDA.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "gt/writer.h"

using namespace gt;

static std::unique_ptr<TraceWriter> OpenPart() {
  const char* dir = std::getenv("GTRACE_PARTS_DIR");
  if (!dir) {
    std::fprintf(stderr, "fake_app: GTRACE_PARTS_DIR not set\n");
    std::exit(90);
  }
  auto sink = MakeFileSink(std::string(dir) + "/" + std::to_string(getpid()) + ".gtrace", false);
  if (!sink.ok()) std::exit(91);
  return std::move(TraceWriter::Create(std::move(*sink)).value());
}

static void AddKernels(TraceWriter& w, int n, int first_corr) {
  StringId name = w.Intern("fake_kernel(float*)");
  for (int i = 0; i < n; ++i) {
    KernelRecord k;
    k.pid = static_cast<uint32_t>(getpid());
    k.correlation_id = first_corr + i;
    k.start = 1000 * (first_corr + i);
    k.end = k.start + 500;
    k.name = name;
    w.Add(k);
    ApiCallRecord a;
    a.pid = k.pid;
    a.tid = k.pid;
    a.correlation_id = k.correlation_id;
    a.start = k.start - 400;
    a.end = k.start - 100;
    a.name = w.Intern("cudaLaunchKernel");
    w.Add(a);
  }
}

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "exit";
  int arg = argc > 2 ? std::atoi(argv[2]) : 0;
  // Its crashes leave no core file: one piped to the host's collector can stall the dying process (and the
  // test waiting for it), a plain one lands in the build tree.
  prctl(PR_SET_DUMPABLE, 0);
  if (mode == "exit") return arg;
  if (mode == "signal") {
    signal(arg, SIG_DFL);
    raise(arg);
    return 99;
  }
  if (mode == "thread-exit") {
    std::thread([arg] { std::exit(arg); }).join();
    return 98;
  }
  if (mode == "sleep") {
    if (const char* ready = std::getenv("FAKE_READY_FILE")) {
      FILE* f = std::fopen(ready, "w");
      if (f) std::fclose(f);
    }
    usleep(arg * 1000);
    return 0;
  }
  if (mode == "part-crash") {
    auto w = OpenPart();
    AddKernels(*w, 10, 1);
    if (!w->Flush().ok()) return 92;  // the periodic flush: these 10 must survive
    AddKernels(*w, 5, 100);           // never flushed: lost with the crash
    std::abort();
  }
  if (mode == "part-wait") {  // a flushed part, then a long run: gcollect is killed meanwhile
    auto w = OpenPart();
    AddKernels(*w, 6, 1);
    if (!w->Flush().ok()) return 92;
    if (const char* ready = std::getenv("FAKE_READY_FILE")) {
      FILE* f = std::fopen(ready, "w");
      if (f) std::fclose(f);
    }
    usleep(arg * 1000);
    return 0;
  }
  if (mode == "orphan") {  // a child that outlives the app: it flushes a part, then runs on for `arg` ms
    int flushed[2];
    if (pipe(flushed) != 0) return 95;
    if (fork() == 0) {
      close(flushed[0]);
      auto w = OpenPart();
      AddKernels(*w, 5, 700);
      if (!w->Flush().ok()) _exit(92);
      if (write(flushed[1], "x", 1) != 1) _exit(96);
      usleep(arg * 1000);
      _exit(0);
    }
    close(flushed[1]);
    char c = 0;
    return read(flushed[0], &c, 1) == 1 ? 0 : 97;  // the app exits once its child's part is on disk
  }
  if (mode == "part-fork") {
    pid_t child = fork();
    auto w = OpenPart();  // parent and child each write their own part
    AddKernels(*w, child == 0 ? 3 : 4, child == 0 ? 500 : 1);
    if (!w->Finish().ok()) return 93;
    if (child == 0) _exit(0);
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 94;
  }
  std::fprintf(stderr, "fake_app: unknown mode %s\n", mode.c_str());
  return 2;
}
