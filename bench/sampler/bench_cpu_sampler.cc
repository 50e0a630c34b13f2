// The SIGPROF handler's cost per sample (collector/inject/cpu_sampler.h) with each unwinder: a thread
// spinning at the bottom of a call chain DEPTH frames deep is sampled at 1 kHz for MS milliseconds per run,
// runs interleaved libgcc / cached (cfi_unwind.h) for ROUNDS rounds. Prints, per run, the handler's and the
// unwinding's microseconds per signalled sample (the sampler's own timing, GTRACE_SAMPLE_VERBOSE's numbers)
// and the frames kept, then the medians and the ratio libgcc / cached (the baseline is libgcc, measured in
// the same run).
//   bench_cpu_sampler [--rounds N] [--ms MS] [--depth DEPTH]
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

__attribute__((noinline)) uint64_t Spin() {
  volatile uint64_t x = 0;
  while (!g_stop.load(std::memory_order_relaxed)) x = x + 1;
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
  uint64_t handled = 0;
};

Run Measure(gt::inject::cpu::Options::Unwinder unwinder, int ms, int depth) {
  using namespace gt;
  inject::cpu::Options o;
  o.hz = 1000;
  o.unwinder = unwinder;
  std::string error, bytes;
  auto w = std::move(TraceWriter::Create(MakeStringSink(&bytes)).value());
  inject::cpu::ResetWrittenNodes();  // a new trace (the writer may reuse the last one's address)
  g_stop = false;
  std::thread t([&] { Nest(depth); });
  const auto before = inject::cpu::GetStats();
  if (!inject::cpu::Start(o, &error)) {
    std::fprintf(stderr, "bench_cpu_sampler: %s\n", error.c_str());
    std::exit(1);
  }
  if (unwinder == inject::cpu::Options::Unwinder::kCached && !inject::cpu::GetStats().cached_unwind) {
    std::fprintf(stderr, "bench_cpu_sampler: no cached unwinder here (glibc before 2.35)\n");
    std::exit(1);
  }
  const int64_t end = Now() + int64_t(ms) * 1000000;
  while (Now() < end) {
    timespec ts{0, 50'000'000};
    nanosleep(&ts, nullptr);
    inject::cpu::Drain(*w, 1);
  }
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
  Run r;
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
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--ms")) ms = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--depth")) depth = std::atoi(argv[i + 1]);
  }
  using U = gt::inject::cpu::Options::Unwinder;
  std::printf("depth %d, %d ms per run, 1 kHz; us per signalled sample\n", depth, ms);
  std::printf("%-6s %-10s %9s %9s %8s %8s\n", "round", "unwinder", "handler", "unwind", "frames", "samples");
  std::vector<double> h[2], u[2];
  for (int r = 1; r <= rounds; ++r)
    for (int k = 0; k < 2; ++k) {
      const Run x = Measure(k == 0 ? U::kLibgcc : U::kCached, ms, depth);
      h[k].push_back(x.handler_us), u[k].push_back(x.unwind_us);
      std::printf("%-6d %-10s %9.2f %9.2f %8.1f %8llu\n", r, k == 0 ? "libgcc" : "cached", x.handler_us,
                  x.unwind_us, x.frames, static_cast<unsigned long long>(x.handled));
    }
  std::printf("median handler: libgcc %.2f us, cached %.2f us, ratio %.2fx\n", Median(h[0]), Median(h[1]),
              Median(h[0]) / Median(h[1]));
  std::printf("median unwind:  libgcc %.2f us, cached %.2f us, ratio %.2fx\n", Median(u[0]), Median(u[1]),
              Median(u[0]) / Median(u[1]));
  return 0;
}
