// CPU stack sampling (collector/inject/cpu_sampler.h) in this test process: a spinning thread, a sleeping
// thread, threads that exit while sampled, and (where libpython3 is embedded) the Python frames of a running
// script, read back through the trace format.
#include "inject/cpu_sampler.h"

#include <dlfcn.h>

#include <alloca.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gt/reader.h"
#include "gt/trace_data.h"
#include "gt/writer.h"
#include "inject/cfi_unwind.h"

#ifdef GT_TEST_PYTHON_EMBED
#include <Python.h>
#endif

namespace {

using namespace gt;

int64_t MonoNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// A writer into a string, drained now and then like the injection's flusher does, read back at the end.
struct Recorder {
  std::string bytes;
  std::unique_ptr<TraceWriter> w;
  Recorder() { w = std::move(TraceWriter::Create(MakeStringSink(&bytes)).value()); }
  void Drain() { inject::cpu::Drain(*w, 42); }
  TraceData Finish() {
    Drain();
    REQUIRE(w->Finish().ok());
    TraceData d;
    auto r = ReadTrace({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, d);
    REQUIRE(r.ok());
    return d;
  }
};

// Waits up to `limit_ns` for `child`; if it is still there, describes where each of its threads waits (for
// the failure message), kills it and reaps it. Empty when the child ended in time.
std::string WaitOrDescribe(pid_t child, int64_t limit_ns, int* status) {
  const int64_t until = MonoNs() + limit_ns;
  while (MonoNs() < until) {
    const pid_t r = waitpid(child, status, WNOHANG);
    if (r == child) return "";
    if (r < 0 && errno != EINTR) return ", waitpid: " + std::string(std::strerror(errno));
    usleep(10000);
  }
  std::string out = ", still running after " + std::to_string(limit_ns / 1000000000) + " s:";
  const std::string task = "/proc/" + std::to_string(child) + "/task";
  if (DIR* d = opendir(task.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      out += std::string("\n  thread ") + e->d_name;
      for (const char* what : {"stat", "wchan", "syscall"}) {
        char buf[512] = {};
        if (FILE* f = std::fopen((task + "/" + e->d_name + "/" + what).c_str(), "r")) {
          const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
          std::fclose(f);
          buf[n] = 0;
          if (n && buf[n - 1] == '\n') buf[n - 1] = 0;
        }
        out += std::string(" ") + what + "=[" + buf + "]";
      }
    }
    closedir(d);
  }
  kill(child, SIGKILL);
  waitpid(child, status, 0);
  return out;
}

// The frames of a sample's stack, outermost first.
std::vector<std::string> Frames(const TraceData& d, uint32_t leaf) {
  std::map<uint32_t, const CpuStackNodeRecord*> by_id;
  for (const auto& n : d.cpu_stack_nodes) by_id[n.node] = &n;
  std::vector<std::string> out;
  for (uint32_t n = leaf, guard = 0; n && guard < 1000; ++guard) {
    auto it = by_id.find(n);
    if (it == by_id.end()) {
      out.insert(out.begin(), "<missing node>");
      break;
    }
    out.insert(out.begin(), d.Str(it->second->frame));
    n = it->second->parent;
  }
  return out;
}

bool HasFrame(const std::vector<std::string>& frames, const std::string& part) {
  for (const auto& f : frames)
    if (f.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

// Exported (the test links with -rdynamic) so that dladdr names it, as it names a library's symbols.
extern "C" __attribute__((noinline, visibility("default"))) uint64_t GtSpinForTest(int64_t until_ns) {
  volatile uint64_t x = 0;
  while (MonoNs() < until_ns) x = x + 1;
  return x;
}
extern "C" __attribute__((noinline, visibility("default"))) void GtSleepForTest(int64_t ns) {
  timespec ts{time_t(ns / 1000000000), long(ns % 1000000000)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

TEST_CASE("cpu sampler: a spinning thread and a sleeping thread are sampled where they are") {
  inject::cpu::Options o;
  o.hz = 1000;
  o.max_overhead = 0;  // the rate as given: this counts samples (the governor has its own test)
  std::string error;
  // The sleeping thread exists before sampling starts: threads the injection finds already running count too.
  std::atomic<uint32_t> sleeper_tid{0}, spinner_tid{0};
  const int64_t t0 = MonoNs();
  std::thread sleeper([&] {
    sleeper_tid = uint32_t(gettid());
    GtSleepForTest(700'000'000);
  });
  REQUIRE(inject::cpu::Start(o, &error));
  Recorder rec;
  std::thread spinner([&] {
    spinner_tid = uint32_t(gettid());
    GtSpinForTest(t0 + 600'000'000);
  });
  // Threads that start and exit while sampled: nothing may crash, their samples stay.
  for (int i = 0; i < 20; ++i) {
    std::thread([&] { GtSpinForTest(MonoNs() + 3'000'000); }).join();
    rec.Drain();
  }
  while (MonoNs() < t0 + 650'000'000) {
    GtSleepForTest(50'000'000);
    rec.Drain();
  }
  spinner.join();
  sleeper.join();
  inject::cpu::Stop();
  const TraceData d = rec.Finish();
  const auto stats = inject::cpu::GetStats();
  INFO("samples " << stats.samples << " idle " << stats.idle_repeats << " unwind_failed "
                  << stats.unwind_failed);
  // The drain's tables as the verbose line reports them: every node this trace holds (earlier tests' nodes
  // stay in the table: ids are the process's), a name per address (call sites of one function share a node),
  // far fewer than the samples.
  CHECK(stats.stack_nodes >= d.cpu_stack_nodes.size());
  CHECK(stats.native_names > 0);
  CHECK(stats.native_names < d.cpu_samples.size());

  uint64_t spin = 0, spin_named = 0, sleep = 0, sleep_named = 0, sleep_idle = 0;
  for (const auto& s : d.cpu_samples) {
    CHECK(s.pid == 42);
    const auto frames = Frames(d, s.stack);
    CHECK_FALSE(HasFrame(frames, "<missing node>"));
    if (s.tid == spinner_tid && s.timestamp < t0 + 550'000'000) {
      ++spin;
      spin_named += HasFrame(frames, "GtSpinForTest");
    }
    if (s.tid == sleeper_tid && s.timestamp < t0 + 600'000'000) {
      ++sleep;
      const bool named = HasFrame(frames, "GtSleepForTest") && HasFrame(frames, "nanosleep");
      sleep_named += named;
      if (!named && std::getenv("GT_DEBUG_SAMPLES")) {
        std::string all;
        for (const auto& f : frames) all += f + " <- ";
        std::fprintf(stderr, "sleeper sample flags %u: %s\n", s.flags, all.c_str());
      }
      sleep_idle += (s.flags & kSampleIdleRepeat) != 0;
    }
  }
  // About 1 kHz for ~0.5 s on the spinner (a loaded 2-core machine may lose ticks; not less than a fifth).
  CHECK(spin >= 100);
  CHECK(spin_named >= spin * 9 / 10);
  CHECK(sleep >= 100);
  // Its first sample may catch it starting up; the sample after it stopped shows where it sleeps.
  CHECK(sleep_named >= sleep * 3 / 4);
  // A sleeping thread is interrupted once, then recorded from its CPU clock without being woken.
  CHECK(sleep_idle >= sleep / 2);
  CHECK(stats.threads_exited >= 1);
  // Node ids are unique within the process, and every parent was written.
  std::map<uint32_t, int> ids;
  for (const auto& n : d.cpu_stack_nodes) CHECK(++ids[n.node] == 1);
  for (const auto& n : d.cpu_stack_nodes) CHECK((n.parent == 0 || ids.count(n.parent) == 1));
}

TEST_CASE("cpu sampler: the governor's period keeps a sample's cost under the budget") {
  using inject::cpu::GovernedPeriodNs;
  const int64_t ms = 1000000, requested = ms;  // 1 kHz asked
  // 5 us a sample under a 1.5% budget: 333 us would do, the requested 1 ms stays.
  CHECK(GovernedPeriodNs(ms, requested, 5000, 0.015) == requested);
  // 80 us (gVisor's signal delivery): 5.33 ms (187 Hz), at once.
  CHECK(GovernedPeriodNs(ms, requested, 80000, 0.015) == 5333333);
  // A cost no rate down to 20 Hz keeps under the budget: 20 Hz, not less.
  CHECK(GovernedPeriodNs(ms, requested, 5e6, 0.015) == 50 * ms);
  // Cheaper again (or nothing measured): faster by a quarter of the excess a window, not at once.
  CHECK(GovernedPeriodNs(50 * ms, requested, 0, 0.015) == 50 * ms - 49 * ms / 4);
  int64_t p = 50 * ms;
  for (int i = 0; i < 40; ++i) p = GovernedPeriodNs(p, requested, 2000, 0.015);
  CHECK(p == requested);
  // Budget 0: the rate as given, whatever a sample costs. A requested rate under 20 Hz is kept.
  CHECK(GovernedPeriodNs(ms, requested, 5e6, 0) == requested);
  CHECK(GovernedPeriodNs(100 * ms, 100 * ms, 5e6, 0.015) == 100 * ms);
}

TEST_CASE("cpu sampler: the rate comes down when samples cost more than the budget, and the stats say so") {
  // A budget no signal can meet (0.001% of a thread's time: 10 ms a second at 1 kHz would need samples of
  // 10 ns) against no budget, on the same spinning thread: the governed run ends at 20 Hz.
  const auto run = [](double max_overhead, uint64_t* spinner_samples) {
    inject::cpu::Options o;
    o.hz = 1000;
    o.max_overhead = max_overhead;
    std::string error;
    REQUIRE(inject::cpu::Start(o, &error));
    Recorder rec;
    std::atomic<uint32_t> tid{0};
    const int64_t t0 = MonoNs();
    std::thread spinner([&] {
      tid = uint32_t(gettid());
      GtSpinForTest(t0 + 1'500'000'000);
    });
    while (MonoNs() < t0 + 1'550'000'000) {
      GtSleepForTest(50'000'000);
      rec.Drain();
    }
    spinner.join();
    inject::cpu::Stop();
    const TraceData d = rec.Finish();
    *spinner_samples = 0;
    for (const auto& s : d.cpu_samples) *spinner_samples += s.tid == tid && s.timestamp > t0 + 1'000'000'000;
    return inject::cpu::GetStats();
  };
  uint64_t governed = 0, fixed = 0;
  const auto g = run(0.00001, &governed);
  INFO("governed: " << governed << " samples in the last 0.5 s, lowest " << g.rate_min_hz << " Hz, final "
                    << g.rate_final_hz << " Hz, cost " << g.sample_cost_ns << " ns, not taken "
                    << g.ticks_not_taken);
  CHECK(g.rate_min_hz == inject::cpu::kMinGovernedHz);
  CHECK(g.rate_final_hz == inject::cpu::kMinGovernedHz);
  CHECK(g.sample_cost_ns > 0);
  CHECK(g.ticks_not_taken > 500);  // about 1,300 of 1.5 s at 1 kHz
  CHECK(g.rate_lowered_ns > 1'000'000'000);
  CHECK(governed >= 5);  // 20 Hz for the last half second: about 10
  CHECK(governed <= 15);
  const auto f = run(0, &fixed);
  INFO("fixed: " << fixed << " samples in the last 0.5 s");
  CHECK(f.rate_min_hz == 1000);
  CHECK(f.ticks_not_taken == 0);
  CHECK(f.rate_lowered_ns == 0);
  CHECK(fixed >= 100);  // about 500 (a loaded 2-core machine loses ticks)
}

TEST_CASE("cpu sampler: a read that faults in the handler is caught, and other faults still reach the app") {
  // A page that faults when read: what the Python walk meets when a frame chain points into a data-stack
  // chunk the interpreter freed after the last snapshot of the mappings. Before the guard this killed the
  // process (SIGSEGV is blocked in the handler). Reserved with no access rather than unmapped: an unmapped
  // range is handed to the next mmap (the sampler's own rings), and then reads fine.
  void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(page != MAP_FAILED);
  // After the native unwind (as in the Python walk): the native frames are kept. Before it: the sample keeps
  // the interrupted address alone, flagged as not unwound.
  for (const bool before_unwind : {false, true}) {
    inject::cpu::Options o;
    o.hz = 1000;
    o.max_overhead = 0;
    o.fault_test_address = reinterpret_cast<uintptr_t>(page);
    o.fault_test_before_unwind = before_unwind;
    const uint64_t faults_before = inject::cpu::GetStats().read_faults;
    std::string error;
    REQUIRE(inject::cpu::Start(o, &error));
    Recorder rec;
    std::atomic<uint32_t> tid{0};
    std::thread spinner([&] {
      tid = uint32_t(gettid());
      GtSpinForTest(MonoNs() + 300'000'000);
    });
    spinner.join();
    inject::cpu::Stop();
    const TraceData d = rec.Finish();
    const uint64_t faults = inject::cpu::GetStats().read_faults - faults_before;
    uint64_t spun = 0, named = 0, one_frame = 0, not_unwound = 0;
    for (const auto& s : d.cpu_samples) {
      if (s.tid != tid) continue;
      ++spun;
      const auto frames = Frames(d, s.stack);
      named += HasFrame(frames, "GtSpinForTest");
      one_frame += frames.size() == 1;
      not_unwound += (s.flags & kSampleUnwindFailed) != 0;
    }
    INFO("before unwind " << before_unwind << ": faults " << faults << ", spinner samples " << spun
                          << ", named " << named << ", one frame " << one_frame << ", not unwound "
                          << not_unwound);
    CHECK(faults >= 50);  // every signalled sample faulted once: about 300 at 1 kHz
    CHECK(spun >= 50);
    if (before_unwind) {  // the interrupted address alone (mostly in the clock read the spinner loops on)
      CHECK(one_frame >= spun * 9 / 10);
      CHECK(not_unwound >= spun * 9 / 10);
    } else {
      CHECK(named >= spun * 9 / 10);
      CHECK(one_frame <= spun / 10);  // the spinner's callers were unwound before the fault
    }
  }

  // A fault outside the handler is the app's as before: its own SIGSEGV handler runs (here: exits 42), and
  // without one the process dies of SIGSEGV. In children, the sampler running.
  for (const bool app_handler : {true, false}) {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // No core file. A piped core_pattern ignores RLIMIT_CORE (all ASan's disable_coredump sets), and the
      // pipe cannot skip the holes of ASan's terabytes of shadow: the dying child stays in the dump (CI hung
      // here). A plain core would land in the build tree.
      prctl(PR_SET_DUMPABLE, 0);
      const rlimit no_core{0, 0};
      setrlimit(RLIMIT_CORE, &no_core);
      if (app_handler)
        signal(SIGSEGV, [](int) { _exit(42); });
      else
        signal(SIGSEGV, SIG_DFL);  // not Catch2's fatal-condition handler: the app has none
      inject::cpu::ForgetAfterFork();
      inject::cpu::Options oc;
      oc.hz = 1000;
      std::string e;
      const uint64_t handled_before = inject::cpu::GetStats().handled;
      if (!inject::cpu::Start(oc, &e)) _exit(3);
      GtSpinForTest(MonoNs() + 50'000'000);
      if (inject::cpu::GetStats().handled == handled_before) _exit(5);  // the forking thread went unsampled
      *static_cast<volatile int*>(page) = 1;  // no access: a real fault of the app's
      _exit(4);
    }
    int status = 0;
    const std::string stuck = WaitOrDescribe(child, 40'000'000'000, &status);
    INFO("app handler " << app_handler << ", status " << status << stuck);
    REQUIRE(stuck.empty());
    if (app_handler)
      CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 42));
    else
      CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV));
  }
  munmap(page, 4096);
}

// Code that retries an interrupted timed wait with its whole timeout again (NCCL's proxy service thread:
// `do poll(fds, n, 500) while EINTR`, checked for its stop flag only when the poll returns) never times out
// if a blocked thread is interrupted more often than its timeout. A 2-rank DDP job hung at exit that way
// while the sampler re-interrupted idle threads every 100 ms. A blocked thread must not be interrupted again
// and again.
TEST_CASE("cpu sampler: a timed wait retried on EINTR with its whole timeout still times out") {
  inject::cpu::Options o;
  o.hz = 1000;
  std::string error;
  REQUIRE(inject::cpu::Start(o, &error));
  Recorder rec;
  std::atomic<int> timeouts{0}, interrupted{0};
  std::atomic<bool> stop{false};
  std::thread waiter([&] {
    GtSpinForTest(MonoNs() + 20'000'000);  // busy first: it is sampled while it runs, then while it waits
    while (!stop.load() && timeouts.load() < 3) {
      int r;
      do {
        r = poll(nullptr, 0, 300);
        if (r < 0 && errno == EINTR) ++interrupted;
      } while (r < 0 && errno == EINTR);
      ++timeouts;
    }
  });
  // Three 300 ms timeouts take 0.9 s; allow 3 s on a loaded machine.
  const int64_t t0 = MonoNs();
  while (timeouts.load() < 3 && MonoNs() < t0 + 3'000'000'000) {
    GtSleepForTest(50'000'000);
    rec.Drain();
  }
  const int done = timeouts.load();
  inject::cpu::Stop();  // a sampler that kept interrupting would keep the waiter from finishing
  stop = true;
  waiter.join();
  const TraceData d = rec.Finish();
  INFO("interrupted " << interrupted.load() << " samples " << d.cpu_samples.size());
  CHECK(done == 3);
  // The signal sent while it still ran and the one that confirms where it stopped, not one per tick (the old
  // rule: 31 in 3 s). Each of the three timeouts may add such a pair when the thread's turn through its loop
  // costs more CPU than the idle threshold (50 us: a loaded machine; 1 run in 12 here): at most 8.
  CHECK(interrupted.load() <= 8);
}

// The handler reads CPython's frames with plain loads; a torn frame's pointer is followed only into memory
// that a snapshot of the mappings says is readable (a fault there would kill the app).
TEST_CASE("cpu sampler: the Python walk's pointer check refuses unmapped, unreadable and device memory") {
  using inject::cpu::AddressReadableForTest;
  const long page = sysconf(_SC_PAGESIZE);
  // Three pages with a hole after them (the next mapping could otherwise be adjacent: ranges are merged).
  auto* p = static_cast<uint8_t*>(
      mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(p != MAP_FAILED);
  REQUIRE(munmap(p + 3 * page, page) == 0);
  static uint64_t global = 0;
  std::vector<uint64_t> heap(64);
  CHECK(AddressReadableForTest(&global, 8));
  CHECK(AddressReadableForTest(heap.data(), 64 * 8));
  CHECK(AddressReadableForTest(p, 3 * page));
  CHECK_FALSE(AddressReadableForTest(p + 8, 3 * page));  // runs past the end
  CHECK_FALSE(AddressReadableForTest(p + 1, 8));         // misaligned
  REQUIRE(mprotect(p + page, page, PROT_NONE) == 0);
  CHECK(AddressReadableForTest(p, page));
  CHECK_FALSE(AddressReadableForTest(p + page, 8));
  CHECK_FALSE(AddressReadableForTest(p + page - 8, 16));  // straddles into the protected page
  REQUIRE(munmap(p, 3 * page) == 0);
  CHECK_FALSE(AddressReadableForTest(p, 8));
  CHECK_FALSE(AddressReadableForTest(nullptr, 8));
  CHECK_FALSE(AddressReadableForTest(reinterpret_cast<void*>(uintptr_t(1) << 50), 8));
  // A device file's mapping (the GPU driver's) is never read; shared memory and anonymous memory are.
  using inject::cpu::MapsLineReadable;
  uintptr_t lo = 0, hi = 0;
  CHECK(MapsLineReadable("7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n", &lo, &hi));
  CHECK((lo == 0x7f0000000000 && hi == 0x7f0000001000));
  CHECK(MapsLineReadable("55d0a000-55d0b000 rw-p 00000000 00:00 0   [heap]\n", &lo, &hi));
  CHECK(MapsLineReadable("7f00a000-7f00b000 r--s 00000000 00:05 12 /dev/shm/nccl-abc\n", &lo, &hi));
  CHECK_FALSE(MapsLineReadable("7f00a000-7f00b000 rw-s 00000000 00:05 12 /dev/nvidiactl\n", &lo, &hi));
  CHECK_FALSE(MapsLineReadable("7f00a000-7f00b000 rw-s 00000000 00:05 12 /dev/nvidia0\n", &lo, &hi));
  CHECK_FALSE(MapsLineReadable("7f00a000-7f00b000 ---p 00000000 00:00 0 \n", &lo, &hi));
  CHECK_FALSE(MapsLineReadable("garbage\n", &lo, &hi));
}

// A known nest of calls, each kept as a frame (not inlined, not a tail call: the +1 after each call).
extern "C" __attribute__((noinline, visibility("default"))) uint64_t GtNestInnerForTest(int64_t until_ns) {
  return GtSpinForTest(until_ns) + 1;
}
// A frame that realigns the stack (a 64-byte aligned local and alloca): GCC describes its CFA and saved rbp
// with DWARF expressions (a DRAP register), which the cached unwinder must follow too.
extern "C" __attribute__((noinline, visibility("default"))) uint64_t GtNestRealignedForTest(int64_t until_ns,
                                                                                            int n) {
  alignas(64) volatile char aligned[64];
  volatile char* dynamic = static_cast<char*>(alloca(size_t(n)));
  aligned[0] = 1;
  dynamic[0] = 2;
  return GtNestInnerForTest(until_ns) + aligned[0] + dynamic[0];
}
extern "C" __attribute__((noinline, visibility("default"))) uint64_t GtNestMiddleForTest(int64_t until_ns) {
  return GtNestRealignedForTest(until_ns, 16 + int(until_ns & 7)) + 1;
}
extern "C" __attribute__((noinline, visibility("default"))) uint64_t GtNestOuterForTest(int64_t until_ns) {
  return GtNestMiddleForTest(until_ns) + 1;
}

// The distinct stacks (outermost first) of a thread spinning in the nest, sampled ~300 ms with one unwinder,
// with how often each was seen.
std::map<std::vector<std::string>, int> NestStacks(inject::cpu::Options::Unwinder unwinder, bool* cached,
                                                   int* samples, int* not_unwound) {
  inject::cpu::Options o;
  o.hz = 1000;
  o.max_overhead = 0;  // the rate as given: this counts samples (the governor has its own test)
  o.unwinder = unwinder;
  std::string error;
  REQUIRE(inject::cpu::Start(o, &error));
  *cached = inject::cpu::GetStats().cached_unwind;
  Recorder rec;
  std::atomic<uint32_t> tid{0};
  const int64_t until = MonoNs() + 300'000'000;
  std::thread t([&] {
    tid = uint32_t(gettid());
    GtNestOuterForTest(until);
  });
  while (MonoNs() < until) {
    GtSleepForTest(50'000'000);
    rec.Drain();
  }
  t.join();
  inject::cpu::Stop();
  const TraceData d = rec.Finish();
  std::map<std::vector<std::string>, int> out;
  *samples = 0, *not_unwound = 0;
  for (const auto& s : d.cpu_samples) {
    if (s.tid != tid || (s.flags & kSampleIdleRepeat)) continue;
    const auto frames = Frames(d, s.stack);
    if (!HasFrame(frames, "GtSpinForTest")) continue;  // starting or leaving the nest
    ++*samples;
    *not_unwound += (s.flags & kSampleUnwindFailed) != 0;
    ++out[frames];
  }
  return out;
}

TEST_CASE("cpu sampler: the cached unwinder from the signal's context gives libgcc's frames") {
  using U = inject::cpu::Options::Unwinder;
  bool cached = true;
  int n_gcc = 0, n_cached = 0, failed_gcc = 0, failed_cached = 0;
  const auto before = inject::cpu::GetStats();
  const auto gcc = NestStacks(U::kLibgcc, &cached, &n_gcc, &failed_gcc);
  CHECK_FALSE(cached);
  const auto mid = inject::cpu::GetStats();
  const auto cached_stacks = NestStacks(U::kCached, &cached, &n_cached, &failed_cached);
  const auto after = inject::cpu::GetStats();
  REQUIRE(cached);  // glibc 2.35+ (_dl_find_object)
  // The libgcc run did not touch the cache; the cached one unwound without libgcc and read each rule once per
  // thread and address, not per sample. "Without libgcc": every thread of the process is sampled, and one
  // caught starting, exiting or in libc's own assembly may stop in a frame whose rules the cache does not
  // follow (a clean CI run saw one such sample in ~300); the nest's samples themselves are checked below.
  CHECK(mid.unwind_cached_frames == before.unwind_cached_frames);
  CHECK(after.unwind_fallbacks - mid.unwind_fallbacks <= uint64_t(n_cached) / 50 + 1);
  CHECK(after.unwind_cached_frames - mid.unwind_cached_frames >= uint64_t(n_cached) * 8);
  CHECK((after.unwind_rules_read - mid.unwind_rules_read) * 4 <
        after.unwind_cached_frames - mid.unwind_cached_frames);
  CHECK(n_gcc >= 60);  // ~300 at 1 kHz; a loaded 2-core machine loses ticks
  CHECK(n_cached >= 60);
  CHECK(failed_gcc == 0);
  CHECK(failed_cached == 0);
  // Every stack has the whole nest, outermost to innermost, under the thread's entry.
  const auto nest_ok = [](const std::vector<std::string>& f) {
    for (size_t i = 0; i + 4 < f.size(); ++i)
      if (f[i].find("GtNestOuterForTest") != std::string::npos &&
          f[i + 1].find("GtNestMiddleForTest") != std::string::npos &&
          f[i + 2].find("GtNestRealignedForTest") != std::string::npos &&
          f[i + 3].find("GtNestInnerForTest") != std::string::npos &&
          f[i + 4].find("GtSpinForTest") != std::string::npos)
        return i >= 1;  // the thread's start routine and libc's thread entry are below
    return false;
  };
  std::string all;
  for (const auto* m : {&gcc, &cached_stacks})
    for (const auto& [frames, count] : *m) {
      CHECK(nest_ok(frames));
      std::string line = (m == &gcc ? "libgcc " : "cached ") + std::to_string(count) + ":";
      for (const auto& f : frames) line += " " + f;
      all += line + "\n";
    }
  INFO(all);
  // Stacks seen often (the spin loop and its clock read) must be the same frame for frame. Each stack seen in
  // at least 5% of one unwinder's samples is seen by the other.
  for (const auto& [mine, other, n] :
       {std::tuple{&gcc, &cached_stacks, n_gcc}, std::tuple{&cached_stacks, &gcc, n_cached}})
    for (const auto& [frames, count] : *mine)
      if (count * 20 >= n) CHECK(other->count(frames) == 1);
  // The frames below the spin loop (thread entry to GtSpinForTest) are one and the same chain in both.
  std::set<std::vector<std::string>> roots;
  for (const auto* m : {&gcc, &cached_stacks})
    for (const auto& [frames, count] : *m) {
      std::vector<std::string> root;
      for (const auto& f : frames) {
        root.push_back(f);
        if (f.find("GtSpinForTest") != std::string::npos) break;
      }
      roots.insert(root);
    }
  CHECK(roots.size() == 1);
}

TEST_CASE("cpu sampler: refuses a bad rate and a foreign SIGPROF handler") {
  std::string error;
  inject::cpu::Options o;
  o.hz = 0;
  CHECK_FALSE(inject::cpu::Start(o, &error));
  o.hz = 20000;
  CHECK_FALSE(inject::cpu::Start(o, &error));
  struct sigaction sa {
  }, old{};
  sa.sa_handler = [](int) {};
  sigaction(SIGPROF, &sa, &old);
  o.hz = 100;
  CHECK_FALSE(inject::cpu::Start(o, &error));
  CHECK(error.find("SIGPROF") != std::string::npos);
  sigaction(SIGPROF, &old, nullptr);
}

TEST_CASE("cpu sampler: CPython 3.11+ location tables give a code unit's line") {
  // Hand-built table, first line 10: 2 units on line 10 (short form), 3 units on line 12 (one-line form,
  // delta 2), 1 unit with no location, 2 units on line 7 (no-column form, delta -5 zigzagged as 11).
  const uint8_t table[] = {0x80 | (0 << 3) | 1,  0x00, 0x80 | (12 << 3) | 2, 1, 2, 0x80 | (15 << 3) | 0,
                           0x80 | (13 << 3) | 1, 11};
  using inject::cpu::LineFromLocationTable;
  CHECK(LineFromLocationTable(table, sizeof table, 10, -1) == 10);  // a frame just pushed
  CHECK(LineFromLocationTable(table, sizeof table, 10, 0) == 10);
  CHECK(LineFromLocationTable(table, sizeof table, 10, 1) == 10);
  CHECK(LineFromLocationTable(table, sizeof table, 10, 2) == 12);
  CHECK(LineFromLocationTable(table, sizeof table, 10, 4) == 12);
  CHECK(LineFromLocationTable(table, sizeof table, 10, 5) == 10);  // no location: the first line
  CHECK(LineFromLocationTable(table, sizeof table, 10, 6) == 7);
  CHECK(LineFromLocationTable(table, sizeof table, 10, 7) == 7);
  const uint8_t garbage[] = {0x12, 0x34};
  CHECK(LineFromLocationTable(garbage, sizeof garbage, 5, 3) == 5);
  CHECK(inject::cpu::PythonVersionSupported(11));
  CHECK(inject::cpu::PythonVersionSupported(12));
  CHECK(inject::cpu::PythonVersionSupported(13));
  CHECK(inject::cpu::PythonVersionSupported(14));
  CHECK_FALSE(inject::cpu::PythonVersionSupported(9));
}

// The interpreter's own offsets (_Py_DebugOffsets) as 3.14.10 publishes them, at the places its header gives:
// they agree with the row; a build that moved any field the walk reads, or a free-threaded or other version's
// block, is refused with the field named.
TEST_CASE("cpu sampler: a layout row is checked against the interpreter's own debug offsets") {
  using inject::cpu::CheckDebugOffsets;
  using inject::cpu::DebugOffsetsSize;
  REQUIRE(DebugOffsetsSize(14) == 760);
  CHECK(DebugOffsetsSize(13) == 584);
  CHECK(DebugOffsetsSize(12) == 0);  // 3.12 publishes none: nothing to check
  std::vector<uint8_t> d(DebugOffsetsSize(14), 0);
  const auto put = [&](size_t at, uint64_t v) { std::memcpy(d.data() + at, &v, 8); };
  std::memcpy(d.data(), "xdebugpy", 8);
  put(8, 0x030E0AF0);  // 3.14.10 final
  // offsetof(_Py_DebugOffsets, field) -> the value 3.14.10 stores there.
  const std::pair<size_t, uint64_t> fields[] = {{208, 72},  {256, 8},   {264, 0},   {272, 56}, {288, 74},
                                                {320, 112}, {336, 128}, {344, 136}, {352, 68}, {384, 208}};
  for (const auto& [at, v] : fields) put(at, v);
  CHECK(std::string(CheckDebugOffsets(14, d.data(), d.size())).empty());
  CHECK(std::string(CheckDebugOffsets(12, d.data(), d.size())).empty());
  CHECK(std::string(CheckDebugOffsets(14, d.data(), d.size() - 1)) == "size");
  auto moved = d;
  std::memcpy(moved.data() + 288, "\x4c\0\0\0\0\0\0\0", 8);  // owner at 76
  CHECK(std::string(CheckDebugOffsets(14, moved.data(), moved.size())) == "interpreter_frame.owner");
  moved = d;
  moved[384] = 216;
  CHECK(std::string(CheckDebugOffsets(14, moved.data(), moved.size())) == "code_object.co_code_adaptive");
  moved = d;
  moved[16] = 1;
  CHECK(std::string(CheckDebugOffsets(14, moved.data(), moved.size())) == "free_threaded");
  moved = d;
  moved[0] = 'y';
  CHECK(std::string(CheckDebugOffsets(14, moved.data(), moved.size())) == "cookie");
  CHECK(std::string(CheckDebugOffsets(13, d.data(), d.size())) == "version");  // 3.14's block read as 3.13's
}

#ifdef GT_TEST_PYTHON_EMBED
// A module body, or code exec'd once, is freed when it finishes, often before the drain reads it, and the
// next one often takes its address. The sampler thread names such frames right after their samples, and a
// frame's key holds its file name's hash. Here the drain comes only at the end, after all of them are gone:
// before, all 600 samples read the last piece's name (the drain found it at every piece's address); with the
// early names but no hash, the first piece's; with the hash but no check of it at the drain, a sample whose
// early name could not be read took the last piece's name (under load, ~1 run in 15). `prefix` names the
// pieces "<prefix00>".."<prefix19>". Declared before the test that finalizes the interpreter.
void CheckFreedCodeKeepsNames(const std::string& prefix) {
  Py_InitializeEx(0);
  inject::cpu::Options o;
  o.hz = 1000;
  o.max_overhead = 0;
  std::string error;
  REQUIRE(inject::cpu::Start(o, &error));
  Recorder rec;
  rec.Drain();  // the writer the names go to, before any sample
  const uint64_t early_before = inject::cpu::GetStats().python_names_early;
  // Each piece spins on its line 3 for 30 ms, then its code object is dropped.
  const std::string script =
      "def run(i):\n"
      "    src = 'import time\\nt = time.time()\\nwhile time.time() - t < 0.03: pass\\n'\n"
      "    exec(compile(src, '<" +
      prefix +
      "%02d>' % i, 'exec'), {})\n"
      "for i in range(20): run(i)\n";
  REQUIRE(PyRun_SimpleString(script.c_str()) == 0);
  inject::cpu::Stop();
  const TraceData d = rec.Finish();
  const auto stats = inject::cpu::GetStats();
  const uint32_t me = uint32_t(gettid());
  const std::string start = "<" + prefix;
  uint64_t in_gen = 0, unreadable = 0, out_of_order = 0;
  int last_gen = -1;
  std::set<int> gens;
  for (const auto& smp : d.cpu_samples) {  // in time order per thread
    if (smp.tid != me) continue;
    const auto f = Frames(d, smp.stack);
    int gen = -1;
    for (const auto& name : f) {
      unreadable += name == "<unreadable code object>";
      if (name.rfind(start, 0) == 0 && name.find(">:<module>:3") != std::string::npos)
        gen = std::atoi(name.c_str() + start.size());
    }
    if (gen < 0) continue;
    ++in_gen;
    // A name from another piece (a freed code object's address taken by the next one) would go backwards.
    out_of_order += gen < last_gen;
    last_gen = gen;
    gens.insert(gen);
  }
  INFO("samples in the pieces " << in_gen << " under " << gens.size() << " names, unreadable frames "
                                << unreadable << ", read early " << stats.python_names_early - early_before);
  CHECK(in_gen >= 200);  // ~600 at 1 kHz
  CHECK(unreadable * 20 <= in_gen);
  CHECK(out_of_order == 0);
  CHECK(gens.size() >= 18);  // each piece under its own name (~30 samples each), not the last one's for all
  CHECK(last_gen == 19);
  CHECK(stats.python_names_early > early_before);
}

TEST_CASE("cpu sampler: frames of code freed before the drain keep their names") {
  CheckFreedCodeKeepsNames("gen");
}

// The handler hashes only compact ASCII names; the sampler thread hashes the others and fills the hash in
// (before, every piece after the first took the first one's name), reading the code points where no UTF-8
// form is cached (compile() leaves none: before, the file showed as "?").
TEST_CASE("cpu sampler: freed code with a non-ASCII file name keeps its name") {
  CheckFreedCodeKeepsNames("g\xc3\xa9n");
}

TEST_CASE("cpu sampler: the Python frames of an embedded interpreter, with file, function and line") {
  Py_InitializeEx(0);
  inject::cpu::Options o;
  o.hz = 1000;
  o.max_overhead = 0;  // the rate as given: this counts samples (the governor has its own test)
  std::string error;
  REQUIRE(inject::cpu::Start(o, &error));
  Recorder rec;
  // Line numbers matter: spin_here's loop is line 5 and sleepy's sleep line 9 of "<string>".
  const char* script =
      "import time\n"                              // 1
      "def spin_here(sec):\n"                      // 2
      "    t = time.time()\n"                      // 3
      "    n = 0\n"                                // 4
      "    while time.time() - t < sec: n += 1\n"  // 5
      "    return n\n"                             // 6
      "class Loader:\n"                            // 7
      "    def sleepy(self, sec):\n"               // 8
      "        time.sleep(sec)\n"                  // 9
      "def outer():\n"                             // 10
      "    spin_here(0.4)\n"                       // 11
      "    Loader().sleepy(0.4)\n"                 // 12
      "outer()\n";                                 // 13
  std::atomic<bool> done{false};
  std::thread drainer([&] {
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      rec.Drain();
    }
  });
  REQUIRE(PyRun_SimpleString(script) == 0);
  done = true;
  drainer.join();
  inject::cpu::Stop();
  const auto stats = inject::cpu::GetStats();
  CHECK(stats.python_minor == PY_MINOR_VERSION);
  CHECK(std::string(stats.python_layout_mismatch).empty());  // 3.13+: the interpreter's own offsets agree
  const TraceData d = rec.Finish();
  const uint32_t me = uint32_t(gettid());
  uint64_t mine = 0, spin = 0, sleep = 0, python = 0;
  for (const auto& s : d.cpu_samples) {
    if (s.tid != me) continue;
    ++mine;
    python += (s.flags & kSamplePython) != 0;
    const auto f = Frames(d, s.stack);
    if (HasFrame(f, "<string>:outer:11") && HasFrame(f, "<string>:spin_here:5")) ++spin;
    if (HasFrame(f, "<string>:outer:12") && HasFrame(f, "<string>:Loader.sleepy:9")) {
      ++sleep;
      // The native frames run by the innermost Python frame follow it: the sleep itself.
      CHECK(HasFrame(f, "sleep"));
    }
  }
  INFO("samples " << mine << " python " << python << " spin " << spin << " sleep " << sleep);
  CHECK(mine >= 200);
  CHECK(spin >= 100);
  CHECK(sleep >= 100);
  CHECK(stats.python_unreadable == 0);
  // Objects created after the last read of the mappings cost a few Python stacks, not many.
  CHECK(stats.maps_misses * 10 <= mine);
  Py_FinalizeEx();
}
#endif

// Any function at its first instruction unwinds with CFA = rsp + 8 and its return address at rsp.
extern "C" __attribute__((noinline)) int GtUnwindTarget(int x) {
  return x * 3 + 1;
}

TEST_CASE("cpu sampler: the cached unwinder reads no stack slot past the stack's end") {
  using namespace gt::inject::cpu;
  const auto find = reinterpret_cast<FindObjectFn>(dlsym(RTLD_DEFAULT, "_dl_find_object"));
  REQUIRE(find);  // glibc 2.35+, as the sampler's cached unwinder needs
  // A one-page stack with a guard page above it, as if the thread's stack ended there.
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  auto* mem = static_cast<uint8_t*>(
      mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(mem != MAP_FAILED);
  REQUIRE(mprotect(mem + page, page, PROT_NONE) == 0);
  const uintptr_t end = uintptr_t(mem + page), entry = uintptr_t(&GtUnwindTarget);
  // Interrupted at the function's entry; its return address, the stack's last slot, points just past that
  // entry again, so the caller's frame has the same rule, whose return address would be on the guard page:
  // an outermost frame not marked as one.
  const uintptr_t rsp = end - 8;
  *reinterpret_cast<uintptr_t*>(rsp) = entry + 1;
  auto cache = std::make_unique<RuleCache>();
  uint64_t out[16] = {};
  const UnwindResult r = UnwindFromContext(find, *cache, 1, entry, rsp, 0, end, 0, 0, out, 16);
  CHECK(!r.complex);
  CHECK(!r.truncated);
  REQUIRE(r.frames == 2);  // the interrupted frame and its caller; then the end of the stack, not a fault
  CHECK(out[0] == entry);
  CHECK(out[1] == entry + 1);
  munmap(mem, 2 * page);
}
