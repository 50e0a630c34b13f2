// Two traces compared (gt/viewer/compare.h) at scale: what opening a comparison costs on top of the kernel
// table it always builds, and what a click (a kernel's counterpart) costs, for synthetic training-loop traces
// (tests/viewer/synth_trace.h; their NVTX ranges "step 0".."step 7" are instances of "step").
//
//   bench_compare [--millions N] [--repeat R]
//
// Baseline measured in the same run: CompareKernels (gtrace diff's kernel rows: two SummarizeByName passes),
// which every comparison computes anyway. Reported as CPU seconds and as a ratio to that baseline.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "gt/viewer/builder.h"
#include "gt/viewer/compare.h"
#include "synth_trace.h"

using namespace gt;
using namespace gt::viewer;

namespace {

double Now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

template <typename F>
double Best(int repeat, F&& f) {
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    const double t0 = Now();
    f();
    best = std::min(best, Now() - t0);
  }
  return best;
}

std::unique_ptr<TraceModel> Synth(uint64_t events, uint64_t seed) {
  gt::synth::SynthOptions o;
  o.events = events;
  o.seed = seed;
  ModelBuilder b;
  gt::synth::GenerateSynthTrace(b, o);
  return b.Finish();
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t millions = 1;
  int repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--millions")) millions = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--repeat")) repeat = std::atoi(argv[i + 1]);
  }
  auto a = Synth(millions * 1'000'000, 42), b = Synth(millions * 1'000'000, 43);
  std::printf("bench_compare: two synthetic traces of %llu M events each, best of %d\n",
              static_cast<unsigned long long>(millions), repeat);
  size_t rows = 0, steps = 0;
  const double base = Best(repeat, [&] { rows = CompareKernels(*a, *b).size(); });
  Alignment al;
  const double align = Best(repeat, [&] { al = Align(*a, *b, AlignRequest{}); });
  const double step = Best(repeat, [&] { steps = CompareSteps(*a, *b, al.name).size(); });
  // A click: the counterpart of a kernel in the middle of the trace.
  EventId mid;
  for (const Track& t : a->tracks)
    if (t.kind == TrackKind::kGpuStream && !mid.valid() && a->lanes[t.first_lane].size() > 0)
      mid = {t.first_lane, a->lanes[t.first_lane].size() / 2};
  EventId other;
  const double click = Best(repeat, [&] { other = Counterpart(*a, mid, *b, al.name); });
  std::printf("  kernel delta rows (baseline)  %8.3f s   %zu rows\n", base, rows);
  std::printf("  default alignment             %8.3f s   x%.2f   %s\n", align, align / base,
              al.reason.c_str());
  std::printf("  per-step deltas               %8.3f s   x%.2f   %zu steps\n", step, step / base, steps);
  std::printf("  counterpart of one kernel     %8.3f s   x%.2f   %s\n", click, click / base,
              other.valid() ? "found" : "none");
  return al.name.empty() || !other.valid() ? 1 : 0;
}
