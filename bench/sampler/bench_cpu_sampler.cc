// The SIGPROF handler's cost per sample (collector/inject/cpu_sampler.h) with each unwinder, and what a busy
// thread loses to sampling in all (handler, signal delivery and return: what the handler cannot time itself).
// A thread spinning at the bottom of a call chain DEPTH frames deep is sampled at 1 kHz for MS milliseconds
// per run; runs interleave no sampling (the baseline) / libgcc / cached (cfi_unwind.h), in an order that
// rotates, for ROUNDS rounds. Prints, per run, the spinner's work rate, the handler's and the unwinding's
// microseconds per signalled sample (the sampler's own timing, GTRACE_SAMPLE_VERBOSE's numbers) and the
// frames kept; then the medians, the ratio libgcc / cached, and the work lost against the unsampled runs of
// the same run (per sample and as a share).
//   bench_cpu_sampler [--rounds N] [--ms MS] [--depth DEPTH] [--order rotate|012|...]
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gt/reader.h"
#include "gt/trace_data.h"
#include "gt/writer.h"
#include "inject/cpu_sampler.h"

namespace {

int64_t Now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

std::atomic<bool> g_stop{false};
std::atomic<uint64_t> g_work{0};  // the spinner's iterations so far (published every 1024)

__attribute__((noinline)) uint64_t Spin() {
  volatile uint64_t x = 0;
  uint64_t n = 0;
  while (!g_stop.load(std::memory_order_relaxed)) {
    x = x + 1;
    if ((++n & 1023) == 0) g_work.store(n, std::memory_order_relaxed);
  }
  return x;
}
// One frame per level: called through a volatile pointer (the compiler cannot turn the recursion into a
// loop), not a tail call (the + 1).
uint64_t Nest(int depth);
uint64_t (*volatile g_nest)(int) = Nest;
__attribute__((noinline)) uint64_t Nest(int depth) {
  return (depth <= 1 ? Spin() : g_nest(depth - 1)) + 1;
}

struct Run {
  double handler_us = 0, unwind_us = 0, frames = 0;
  double work_per_us = 0;    // the spinner's iterations per microsecond of the measured window
  double samples_per_s = 0;  // signals handled per second
  uint64_t handled = 0;
};

// Runs the spinner for `ms` (after 100 ms to settle), sampled by `unwinder`, or not sampled (null).
Run Measure(const gt::inject::cpu::Options::Unwinder* sampled, int ms, int depth) {
  using namespace gt;
  inject::cpu::Options o;
  o.max_overhead = 0;  // the handler at the rate asked for: the governor would lower it where signals cost
  o.hz = 1000;
  std::string error, bytes;
  auto w = std::move(TraceWriter::Create(MakeStringSink(&bytes)).value());
  inject::cpu::ResetWrittenNodes();  // a new trace (the writer may reuse the last one's address)
  g_stop = false;
  g_work = 0;
  std::thread t([&] { Nest(depth); });
  const auto before = inject::cpu::GetStats();
  Run r;
  if (!sampled) {
    timespec settle{0, 100'000'000};
    nanosleep(&settle, nullptr);
    const uint64_t w0 = g_work.load();
    const int64_t t0 = Now();
    timespec ts{ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, nullptr);
    r.work_per_us = double(g_work.load() - w0) / (double(Now() - t0) / 1e3);
    g_stop = true;
    t.join();
    return r;
  }
  const auto unwinder = *sampled;
  o.unwinder = unwinder;
  if (!inject::cpu::Start(o, &error)) {
    std::fprintf(stderr, "bench_cpu_sampler: %s\n", error.c_str());
    std::exit(1);
  }
  if (unwinder == inject::cpu::Options::Unwinder::kCached && !inject::cpu::GetStats().cached_unwind) {
    std::fprintf(stderr, "bench_cpu_sampler: no cached unwinder here (glibc before 2.35)\n");
    std::exit(1);
  }
  const int64_t settle_end = Now() + 100'000'000;
  while (Now() < settle_end) {
    timespec ts{0, 50'000'000};
    nanosleep(&ts, nullptr);
    inject::cpu::Drain(*w, 1);
  }
  const uint64_t w0 = g_work.load();
  const uint64_t h0 = inject::cpu::GetStats().handled;
  const int64_t t0 = Now(), end = t0 + int64_t(ms) * 1000000;
  while (Now() < end) {
    timespec ts{0, 50'000'000};
    nanosleep(&ts, nullptr);
    inject::cpu::Drain(*w, 1);
  }
  const double window_us = double(Now() - t0) / 1e3;
  r.work_per_us = double(g_work.load() - w0) / window_us;
  r.samples_per_s = double(inject::cpu::GetStats().handled - h0) / (window_us / 1e6);
  inject::cpu::Stop();
  g_stop = true;
  t.join();
  inject::cpu::Drain(*w, 1);
  const auto after = inject::cpu::GetStats();
  if (!w->Finish().ok()) std::exit(1);
  TraceData d;
  if (!ReadTrace({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, d).ok()) std::exit(1);
  // Frames per signalled sample of any thread (the spinner dominates): the work the unwinder did.
  std::unordered_map<uint32_t, uint32_t> parent_of;  // node ids are the process's, not this trace's
  for (const auto& n : d.cpu_stack_nodes) parent_of[n.node] = n.parent;
  uint64_t frames = 0, signalled = 0;
  for (const auto& s : d.cpu_samples) {
    if (s.flags & kSampleIdleRepeat) continue;
    ++signalled;
    for (uint32_t n = s.stack, g = 0; n && g < 1000; ++g) {
      const auto it = parent_of.find(n);
      if (it == parent_of.end()) break;
      ++frames;
      n = it->second;
    }
  }
  r.handled = after.handled - before.handled;
  if (r.handled) {
    r.handler_us = double(after.handler_ns - before.handler_ns) / double(r.handled) / 1e3;
    r.unwind_us = double(after.unwind_ns - before.unwind_ns) / double(r.handled) / 1e3;
  }
  r.frames = signalled ? double(frames) / double(signalled) : 0;
  return r;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5, ms = 1000, depth = 30;
  std::string order = "rotate";  // or a fixed order of the three, e.g. "012" (0 none, 1 libgcc, 2 cached)
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--ms")) ms = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--depth")) depth = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--order")) order = argv[i + 1];
  }
  using U = gt::inject::cpu::Options::Unwinder;
  const U kinds[2] = {U::kLibgcc, U::kCached};
  const char* names[3] = {"none", "libgcc", "cached"};
  std::printf(
      "depth %d, %d ms per run, 1 kHz; work: the spinner's iterations per us; us per signalled sample\n",
      depth, ms);
  std::printf("%-6s %-8s %9s %9s %9s %8s %8s\n", "round", "sampling", "work", "handler", "unwind", "frames",
              "samples");
  std::vector<double> h[3], u[3], work[3], rate[3];
  for (int r = 1; r <= rounds; ++r)
    for (int i = 0; i < 3; ++i) {
      // The order rotates by default: a slow spell of the machine hits each in turn.
      const int k = order.size() == 3 ? order[size_t(i)] - '0' : (i + r - 1) % 3;
      const Run x = Measure(k == 0 ? nullptr : &kinds[k - 1], ms, depth);
      h[k].push_back(x.handler_us), u[k].push_back(x.unwind_us), work[k].push_back(x.work_per_us);
      rate[k].push_back(x.samples_per_s);
      std::printf("%-6d %-8s %9.1f %9.2f %9.2f %8.1f %8llu\n", r, names[k], x.work_per_us, x.handler_us,
                  x.unwind_us, x.frames, static_cast<unsigned long long>(x.handled));
    }
  std::printf("median handler: libgcc %.2f us, cached %.2f us, ratio %.2fx\n", Median(h[1]), Median(h[2]),
              Median(h[1]) / Median(h[2]));
  std::printf("median unwind:  libgcc %.2f us, cached %.2f us, ratio %.2fx\n", Median(u[1]), Median(u[2]),
              Median(u[1]) / Median(u[2]));
  // Work lost to sampling: the median work rate against the unsampled runs', per second of the spinner and
  // per sample (at the samples per second handled).
  for (int k = 1; k < 3; ++k) {
    const double lost = 1.0 - Median(work[k]) / Median(work[0]);
    std::printf("work lost, %s: %.2f%% at %.0f samples/s, %.1f us a sample\n", names[k], 100 * lost,
                Median(rate[k]), Median(rate[k]) > 0 ? lost * 1e6 / Median(rate[k]) : 0.0);
  }
  return 0;
}
