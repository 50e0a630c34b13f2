// What --trace=osrt adds to each wrapped call: libgtrace_osrt.so's poll(), syscall() and read() against
// libc's, called directly in the same run (the baseline), below the threshold (timed, not recorded) and with
// threshold 0 (every call recorded, drained as the injection would). Prints ns per call and the ratio to the
// baseline.
//   bench_osrt [--calls N] [--shim PATH]
#include <dlfcn.h>
#include <poll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "osrt/osrt_abi.h"

namespace {

int64_t Now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

struct Calls {
  int (*poll)(pollfd*, nfds_t, int);
  long (*syscall)(long, ...);
  ssize_t (*read)(int, void*, size_t);
  GtOsrtDrainFn drain = nullptr;
};

Calls Load(const std::string& path, const char* threshold) {
  setenv(GT_OSRT_THRESHOLD_ENV, threshold, 1);
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  unsetenv(GT_OSRT_THRESHOLD_ENV);
  if (!h) {
    std::fprintf(stderr, "bench_osrt: %s\n", dlerror());
    std::exit(1);
  }
  Calls c;
  c.poll = reinterpret_cast<decltype(c.poll)>(dlsym(h, "poll"));
  c.syscall = reinterpret_cast<decltype(c.syscall)>(dlsym(h, "syscall"));
  c.read = reinterpret_cast<decltype(c.read)>(dlsym(h, "read"));
  c.drain = reinterpret_cast<GtOsrtDrainFn>(dlsym(h, GT_OSRT_DRAIN));
  return c;
}

// ns per call of `what` over n calls; a drain every 4096 calls when given (the injection drains every 50 ms).
template <typename F>
double Time(long n, F&& what, GtOsrtDrainFn drain = nullptr) {
  static GtOsrtEvent sink[4096];
  const int64_t t0 = Now();
  for (long i = 0; i < n; ++i) {
    what();
    if (drain && (i & 4095) == 4095) drain(sink, 4096);
  }
  const double ns = double(Now() - t0) / double(n);
  if (drain) drain(sink, 4096);
  return ns;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  long n = 1'000'000;
  std::string shim = GT_OSRT_SHIM;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--calls")) n = std::atol(argv[i + 1]);
    if (!std::strcmp(argv[i], "--shim")) shim = argv[i + 1];
  }
  // Two instances: the second (a copy: its own constructor and threshold) records every call.
  const Calls timed = Load(shim, "1000000000");
  const std::string copy = "/tmp/bench_osrt_copy.so";
  if (std::system(("cp '" + shim + "' " + copy).c_str()) != 0) return 1;
  const Calls recorded = Load(copy, "0");
  unlink(copy.c_str());

  char c;
  struct Row {
    const char* name;
    std::vector<double> base, shim, rec;
  } rows[] = {{"poll(nullptr, 0, 0)", {}, {}, {}},
              {"read(-1, ..) (EBADF)", {}, {}, {}},
              {"syscall(SYS_getppid)", {}, {}, {}}};
  for (int round = 0; round < 5; ++round) {  // interleaved
    rows[0].base.push_back(Time(n, [] { poll(nullptr, 0, 0); }));
    rows[0].shim.push_back(Time(n, [&] { timed.poll(nullptr, 0, 0); }));
    rows[0].rec.push_back(Time(
        n, [&] { recorded.poll(nullptr, 0, 0); }, recorded.drain));
    rows[1].base.push_back(Time(n, [&] { (void)!read(-1, &c, 1); }));
    rows[1].shim.push_back(Time(n, [&] { timed.read(-1, &c, 1); }));
    rows[1].rec.push_back(Time(
        n, [&] { recorded.read(-1, &c, 1); }, recorded.drain));
    rows[2].base.push_back(Time(n, [] { syscall(SYS_getppid); }));
    rows[2].shim.push_back(Time(n, [&] { timed.syscall(SYS_getppid); }));
    rows[2].rec.push_back(Time(
        n, [&] { recorded.syscall(SYS_getppid); }, recorded.drain));
  }
  std::printf("%-24s %12s %14s %8s %16s %8s\n", "call (median of 5)", "libc ns", "shim ns", "ratio",
              "recorded ns", "ratio");
  for (const Row& r : rows) {
    const double b = Median(r.base), s = Median(r.shim), x = Median(r.rec);
    std::printf("%-24s %12.1f %14.1f %8.2f %16.1f %8.2f\n", r.name, b, s, s / b, x, x / b);
  }
  std::printf(
      "(syscall(SYS_getppid) is not a wait: the shim forwards it untimed, so 'recorded' records none)\n");
  return 0;
}
