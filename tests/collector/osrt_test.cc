// --trace=cublas,cudnn,nccl,osrt without a GPU: the kinds and their environment, the launcher's helpers, and
// libgtrace_osrt.so's wrappers called in this process (dlopen'ed: the same code gcollect preloads).
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <semaphore.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "launcher/launcher.h"
#include "osrt/osrt_abi.h"

using namespace gt;
using namespace gt::config;
using namespace gt::launcher;

TEST_CASE("trace kinds: cublas, cudnn, nccl, osrt parse, print, and imply NVTX", "[osrt][libcalls]") {
  uint32_t k = 0;
  std::string err;
  REQUIRE(ParseTraceKinds("default,cublas,cudnn,nccl,osrt", &k, &err));
  CHECK(k == (kTraceDefault | kTraceCublas | kTraceCudnn | kTraceNccl | kTraceOsrt));
  uint32_t back = 0;
  REQUIRE(ParseTraceKinds(FormatTraceKinds(k), &back, &err));
  CHECK(back == k);
  REQUIRE(ParseTraceKinds("cublas", &k, &err));
  CHECK(WantsNvtx(k));
  CHECK_FALSE(k & kTraceNvtx);  // the injection keeps the cuBLAS domain only
  REQUIRE(ParseTraceKinds("cuda,osrt", &k, &err));
  CHECK_FALSE(WantsNvtx(k));
  CHECK_FALSE(ParseTraceKinds("cuda,mkl", &k, &err));
  CHECK(err.find("cublas, cudnn, nccl, osrt") != std::string::npos);
}

TEST_CASE("GTRACE_OSRT_THRESHOLD_NS round trip, and a bad value falls back", "[osrt]") {
  Config c;
  c.kinds = kTraceDefault | kTraceOsrt;
  c.osrt_threshold_ns = 250000;
  std::map<std::string, std::string> env;
  ConfigToEnv(
      c, [](void* ctx, const char* n, const char* v) { (*static_cast<decltype(env)*>(ctx))[n] = v; }, &env);
  CHECK(env[GT_OSRT_THRESHOLD_ENV] == "250000");  // the shim reads this name itself (C, no env.h)
  auto get = [](void* ctx, const char* n) -> const char* {
    auto* m = static_cast<std::map<std::string, std::string>*>(ctx);
    auto it = m->find(n);
    return it == m->end() ? nullptr : it->second.c_str();
  };
  std::string warnings;
  CHECK(ConfigFromEnv(get, &env, &warnings).osrt_threshold_ns == 250000);
  CHECK(warnings.empty());
  env[GT_OSRT_THRESHOLD_ENV] = "-5";
  CHECK(ConfigFromEnv(get, &env, &warnings).osrt_threshold_ns == kOsrtDefaultThresholdNs);
  CHECK(warnings.find("GTRACE_OSRT_THRESHOLD_NS") != std::string::npos);
  Config no_osrt;
  env.clear();
  ConfigToEnv(
      no_osrt, [](void* ctx, const char* n, const char* v) { (*static_cast<decltype(env)*>(ctx))[n] = v; },
      &env);
  CHECK(env.count(GT_OSRT_THRESHOLD_ENV) == 0);
}

TEST_CASE("options: --osrt-threshold", "[osrt]") {
  auto parse = [](std::vector<std::string> a) { return ParseOptions(a); };
  CHECK(parse({"app"})->osrt_threshold_ns == kOsrtDefaultThresholdNs);
  CHECK(parse({"--osrt-threshold", "5000", "app"})->osrt_threshold_ns == 5000);
  CHECK(parse({"--osrt-threshold=0", "app"})->osrt_threshold_ns == 0);
  CHECK_FALSE(parse({"--osrt-threshold", "-1", "app"}).ok());
  CHECK_FALSE(parse({"--osrt-threshold=1ms", "app"}).ok());
}

TEST_CASE("library kinds switch on the libraries' NVTX, and a user's level is kept", "[libcalls]") {
  std::vector<EnvVar> env;
  std::map<std::string, std::string> user = {{"CUDNN_NVTX_LEVEL", "2"}};
  auto get = [&](const char* n) -> const char* {
    auto it = user.find(n);
    return it == user.end() ? nullptr : it->second.c_str();
  };
  AppendLibraryTraceEnv(kTraceCublas | kTraceCudnn | kTraceNccl, get, &env);
  std::map<std::string, std::string> set;
  for (const auto& e : env) set[e.name] = e.value;
  CHECK(set["CUBLAS_NVTX_LEVEL"] == kLibraryNvtxLevel);
  CHECK(set["CUBLASLT_NVTX_LEVEL"] == kLibraryNvtxLevel);
  CHECK(set.count("CUDNN_NVTX_LEVEL") == 0);  // the user's 2 stays
  CHECK(set.size() == 2);                     // NCCL's NVTX is on by itself
  env.clear();
  AppendLibraryTraceEnv(kTraceDefault | kTraceOsrt, get, &env);
  CHECK(env.empty());
}

TEST_CASE("the launcher finds the shim beside the injection and adds up what non-CUDA processes left",
          "[osrt]") {
  const std::string shim = GT_OSRT_SHIM;
  const std::string dir = shim.substr(0, shim.find_last_of('/'));
  CHECK(OsrtShimPath(dir + "/libgtrace_inject.so") == shim);
  CHECK(OsrtShimPath("/nonexistent/libgtrace_inject.so").empty());

  char tmpl[] = "/tmp/gt_osrt_XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  const std::string parts = tmpl;
  std::ofstream(parts + "/" GT_OSRT_UNRECORDED_PREFIX "100.txt") << "12\n";
  std::ofstream(parts + "/" GT_OSRT_UNRECORDED_PREFIX "101.txt") << "3\n";
  std::ofstream(parts + "/" GT_OSRT_UNRECORDED_PREFIX "102.txt") << "garbage\n";  // counted as nothing
  std::ofstream(parts + "/100.gtrace") << "not a count";
  const OsrtUnrecorded u = CollectOsrtUnrecorded(parts);
  CHECK(u.waits == 15);
  CHECK(u.processes == 2);
  CHECK(CollectOsrtUnrecorded(parts + "/missing").waits == 0);
  CHECK(std::system(("rm -rf '" + parts + "'").c_str()) == 0);
}

namespace {

// One loaded instance of the shim: its wrappers, called directly (dlsym on the handle), and its drain.
struct Shim {
  void* handle = nullptr;
  GtOsrtDrainFn drain = nullptr;
  GtOsrtStatsFn stats = nullptr;
  GtOsrtFuncNameFn func_name = nullptr;
  GtOsrtIgnoreThreadFn ignore_thread = nullptr;
  int (*nanosleep_)(const timespec*, timespec*) = nullptr;
  int (*sem_timedwait_)(sem_t*, const timespec*) = nullptr;
  ssize_t (*read_)(int, void*, size_t) = nullptr;
  int (*poll_)(pollfd*, nfds_t, int) = nullptr;
  long (*syscall_)(long, ...) = nullptr;

  // The constructor reads the threshold when the library loads: a copy at another path is a second instance
  // with its own.
  Shim(const std::string& path, const char* threshold_ns) {
    setenv(GT_OSRT_THRESHOLD_ENV, threshold_ns, 1);
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    unsetenv(GT_OSRT_THRESHOLD_ENV);
    INFO(dlerror());
    REQUIRE(handle);
    drain = reinterpret_cast<GtOsrtDrainFn>(dlsym(handle, GT_OSRT_DRAIN));
    stats = reinterpret_cast<GtOsrtStatsFn>(dlsym(handle, GT_OSRT_STATS));
    func_name = reinterpret_cast<GtOsrtFuncNameFn>(dlsym(handle, GT_OSRT_FUNC_NAME));
    ignore_thread = reinterpret_cast<GtOsrtIgnoreThreadFn>(dlsym(handle, GT_OSRT_IGNORE_THREAD));
    nanosleep_ = reinterpret_cast<decltype(nanosleep_)>(dlsym(handle, "nanosleep"));
    sem_timedwait_ = reinterpret_cast<decltype(sem_timedwait_)>(dlsym(handle, "sem_timedwait"));
    read_ = reinterpret_cast<decltype(read_)>(dlsym(handle, "read"));
    poll_ = reinterpret_cast<decltype(poll_)>(dlsym(handle, "poll"));
    syscall_ = reinterpret_cast<decltype(syscall_)>(dlsym(handle, "syscall"));
    REQUIRE((drain && stats && func_name && ignore_thread && nanosleep_ && sem_timedwait_ && read_ && poll_ &&
             syscall_));
  }
  std::vector<GtOsrtEvent> Drain() {
    std::vector<GtOsrtEvent> out(20000);
    uint32_t n = 0, got = 0;
    while ((got = drain(out.data() + n, uint32_t(out.size() - n))) > 0) n += got;
    out.resize(n);
    return out;
  }
  std::string Name(const GtOsrtEvent& e) { return func_name(e.func) ? func_name(e.func) : "?"; }
};

void Sleep(Shim& s, int64_t ns) {
  timespec t{time_t(ns / 1000000000), long(ns % 1000000000)};
  REQUIRE(s.nanosleep_(&t, nullptr) == 0);
}

}  // namespace

TEST_CASE("osrt shim: waits above the threshold are recorded, errno is kept, own threads and forks apart",
          "[osrt][shim]") {
  static Shim s(GT_OSRT_SHIM, "5000000");  // 5 ms; loaded once per process
  s.Drain();
  GtOsrtStats st{};
  s.stats(&st);
  CHECK(st.threshold_ns == 5000000);

  // Below and above the threshold, on this thread; a successful call leaves errno as it was.
  errno = 1234;
  Sleep(s, 1'000'000);
  Sleep(s, 20'000'000);
  CHECK(errno == 1234);
  auto ev = s.Drain();
  // The 1 ms sleep is recorded only if a loaded machine kept it past the threshold: then it took that long.
  REQUIRE((ev.size() == 1 || ev.size() == 2));
  for (const auto& e : ev) CHECK(e.end_ns - e.start_ns >= 5'000'000);
  const auto& slept = ev.back();
  CHECK(s.Name(slept) == "nanosleep");
  CHECK(slept.tid == uint32_t(gettid()));
  CHECK(slept.end_ns - slept.start_ns >= 20'000'000);
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  CHECK(slept.end_ns <= int64_t(now.tv_sec) * 1000000000 + now.tv_nsec);  // the trace clock

  // A wait that fails after the threshold: its errno reaches the caller; a fast failure is not recorded.
  sem_t sem;
  sem_init(&sem, 0, 0);
  timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_nsec += 20'000'000;
  if (deadline.tv_nsec >= 1'000'000'000) deadline.tv_sec += 1, deadline.tv_nsec -= 1'000'000'000;
  errno = 0;
  CHECK(s.sem_timedwait_(&sem, &deadline) == -1);
  CHECK(errno == ETIMEDOUT);
  sem_destroy(&sem);
  char c;
  errno = 0;
  CHECK(s.read_(-1, &c, 1) == -1);
  CHECK(errno == EBADF);
  // futex() through syscall(): waits are timed, other system calls pass through untouched.
  std::atomic<int> word{0};
  timespec rel{0, 20'000'000};
  errno = 0;
  CHECK(s.syscall_(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &rel, nullptr, 0) == -1);
  CHECK(errno == ETIMEDOUT);
  CHECK(s.syscall_(SYS_getpid) == getpid());
  ev = s.Drain();
  REQUIRE(ev.size() == 2);
  CHECK(s.Name(ev[0]) == "sem_timedwait");
  CHECK(s.Name(ev[1]) == "futex");

  // Another thread: its own tid; and a thread the injection marked as its own is not recorded.
  uint32_t worker = 0;
  std::thread([&] {
    worker = uint32_t(gettid());
    s.poll_(nullptr, 0, 30);
    s.poll_(nullptr, 0, 0);
  }).join();
  std::thread([&] {
    s.ignore_thread();
    Sleep(s, 20'000'000);
  }).join();
  ev = s.Drain();
  REQUIRE(ev.size() == 1);
  CHECK(s.Name(ev[0]) == "poll");
  CHECK(ev[0].tid == worker);

  // fork without exec: the child's buffer starts empty (the parent's undrained waits are the parent's).
  Sleep(s, 20'000'000);
  const pid_t child = fork();
  if (child == 0) {
    std::vector<GtOsrtEvent> out(16);
    const uint32_t n = s.drain(out.data(), 16);
    Sleep(s, 10'000'000);
    const uint32_t m = s.drain(out.data(), 16);
    _exit(n == 0 && m == 1 && out[0].tid == uint32_t(getpid()) ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  ev = s.Drain();
  CHECK(ev.size() == 1);
}

TEST_CASE("osrt shim: a full buffer drops and counts, never blocks", "[osrt][shim]") {
  // A second instance (a copy of the file) with threshold 0: every call is recorded.
  char tmpl[] = "/tmp/gt_osrt_copy_XXXXXX";
  const int fd = mkstemp(tmpl);
  REQUIRE(fd >= 0);
  close(fd);
  REQUIRE(std::system(("cp '" + std::string(GT_OSRT_SHIM) + "' '" + tmpl + "'").c_str()) == 0);
  Shim s(tmpl, "0");
  unlink(tmpl);
  s.Drain();
  char c;
  for (int i = 0; i < 20000; ++i) s.read_(-1, &c, 1);
  GtOsrtStats st{};
  s.stats(&st);
  CHECK(st.recorded == 16384);
  CHECK(st.dropped == 20000 - 16384);
  auto ev = s.Drain();
  CHECK(ev.size() == 16384);
  // Drained, it takes waits again.
  s.read_(-1, &c, 1);
  CHECK(s.Drain().size() == 1);
}
