// `gtrace merge` at scale: N simulated ranks on N hosts (other boot ids, so every timestamp is moved) of M
// events each, merged into one .gtrace; CPU time, events per second and peak resident memory. Baseline in the
// same run: re-encoding the same inputs without a merge (ReadTrace into TraceData, WriteTraceData), the work
// a merge cannot avoid; the ratio merge/baseline is what the merge itself adds (its scan, the alignment, the
// record moves).
//
//   bench_merge [--ranks 8] [--events 1] (millions of events per rank)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "gt/trace_data.h"
#include "gt/viewer/merge.h"
#include "gt/writer.h"
#include "synth_trace.h"
#include "writer_sink.h"

using namespace gt;

namespace {

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
double PeakRssMiB() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;
}

// Every rank runs the same 2000 all-reduces, one per 25 ms; each ends within +-2 us of its true end on every
// rank.
constexpr uint32_t kCollectives = 2000;
constexpr int64_t kT0 = 1'000'000'000'000, kInterval = 25'000'000, kJitter = 2'000;
int64_t TrueEnd(uint32_t c) {
  return kT0 + int64_t(c) * kInterval;
}
int64_t Jitter(uint32_t c, uint32_t rank) {
  synth::Rng rng(c * 977 + rank + 1);
  return int64_t(rng.Below(2 * kJitter + 1)) - kJitter;
}
// Host r's trace clock: 1.5 s * r ahead, drifting by (r - 4) ppm.
int64_t Local(uint32_t rank, int64_t t) {
  return t + int64_t(rank) * 1'500'000'000 + int64_t((double(rank) - 4) * 1e-6 * double(t - kT0));
}

// One rank's file: the synthetic training-loop trace, its host's metadata (wall clock 3 ms off) and its
// all-reduces.
std::string RankFile(uint32_t rank, uint64_t events) {
  std::string out;
  auto w = TraceWriter::Create(MakeStringSink(&out));
  if (!w.ok()) std::abort();
  synth::WriterSink sink(**w);
  synth::SynthOptions o;
  o.events = events;
  o.seed = 42 + rank;
  synth::GenerateSynthTrace(sink, o);
  const StringId nccl =
      (*w)->Intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  for (uint32_t c = 0; c < kCollectives; ++c) {
    KernelRecord k;
    k.pid = 4242, k.stream_id = 99, k.correlation_id = 1u << 30 | c, k.name = nccl;
    const int64_t end = TrueEnd(c) + Jitter(c, rank);
    k.start = Local(rank, end - 400'000 - 50'000 * rank), k.end = Local(rank, end);
    (*w)->Add(k);
  }
  TraceMetadata meta;
  meta.entries = {{"host", "node-" + std::to_string(rank)}, {"boot_id", "boot-" + std::to_string(rank)}};
  meta.clock_syncs = {{1'700'000'000'000'000'000 + kT0 + 3'000'000 * (rank % 2), Local(rank, kT0)}};
  (*w)->SetMetadata(meta);
  if (!(*w)->Finish().ok()) std::abort();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t ranks = 8;
  double millions = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--ranks")) ranks = uint32_t(std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--events")) millions = std::atof(argv[i + 1]);
  }
  std::vector<std::string> files;
  for (uint32_t r = 0; r < ranks; ++r) files.push_back(RankFile(r, uint64_t(millions * 1e6)));
  std::vector<viewer::MergeInput> in;
  uint64_t bytes = 0;
  for (uint32_t r = 0; r < ranks; ++r) {
    in.push_back(
        {"rank" + std::to_string(r),
         std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(files[r].data()), files[r].size())});
    bytes += files[r].size();
  }
  const double rss_inputs = PeakRssMiB();

  // Baseline: re-encode every input as it is.
  double t0 = CpuSeconds();
  std::string baseline;
  {
    auto w = TraceWriter::Create(MakeStringSink(&baseline));
    for (const auto& i : in) {
      TraceData d;
      if (!ReadTrace(i.bytes, d).ok() || !WriteTraceData(d, **w).ok()) std::abort();
    }
    if (!(*w)->Finish().ok()) std::abort();
  }
  const double baseline_s = CpuSeconds() - t0;
  baseline = std::string();

  t0 = CpuSeconds();
  std::string merged;
  uint64_t events = 0;
  auto plan = viewer::PlanMerge(in);
  if (!plan.ok()) std::abort();
  const double plan_s = CpuSeconds() - t0;
  {
    auto w = TraceWriter::Create(MakeStringSink(&merged));
    for (size_t i = 0; i < in.size(); ++i) {
      TraceData d;
      if (!viewer::FeedMergeInput(*plan, i, in[i].bytes, d, 0).ok()) std::abort();
      events += d.EventCount();
      if (!WriteTraceData(d, **w).ok()) std::abort();
    }
    (*w)->SetMetadata(viewer::MergedMetadata(*plan));
    if (!(*w)->Finish().ok()) std::abort();
  }
  const double merge_s = CpuSeconds() - t0;
  std::printf("bench_merge: %u ranks x %.1f M events = %llu events, %.1f MB of input\n", ranks, millions,
              static_cast<unsigned long long>(events), double(bytes) / 1e6);
  std::printf("  merge      %.2f s CPU (plan %.2f s), %.1f M events/s, output %.1f MB\n", merge_s, plan_s,
              double(events) / merge_s / 1e6, double(merged.size()) / 1e6);
  std::printf("  baseline   %.2f s CPU (re-encode without merging)\n", baseline_s);
  std::printf("  ratio      merge / baseline = %.2f\n", merge_s / baseline_s);
  std::printf("  peak RSS   %.0f MiB (inputs and output held in memory: %.0f MiB before merging)\n",
              PeakRssMiB(), rss_inputs);
  // Alignment error: every collective end moved onto rank 0's clock, against its truth there (jitter
  // included).
  double worst = 0, sum = 0;
  uint32_t n = 0, fitted = 0;
  for (size_t h = 1; h < plan->hosts.size(); ++h) {
    const auto& host = plan->hosts[h];
    fitted += host.method == "collectives";
    const uint32_t rank = host.inputs.front();
    for (uint32_t c = 0; c < kCollectives; ++c) {
      const int64_t end = TrueEnd(c) + Jitter(c, rank);
      const double err = std::fabs(double(host.clock.Apply(Local(rank, end)) - Local(0, end)));
      worst = std::max(worst, err), sum += err, ++n;
    }
  }
  std::printf(
      "  alignment  %u of %zu hosts placed by collectives; error vs truth: mean %.2f us, max %.2f us "
      "(ends jittered +-%.0f us per rank)\n",
      fitted, plan->hosts.size() - 1, sum / n / 1e3, worst / 1e3, kJitter / 1e3);
  return 0;
}
