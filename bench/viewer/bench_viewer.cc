// Viewer core benchmark: load throughput, memory per event, CPU time to prepare one frame at three zoom
// levels, for synthetic traces of 1 M / 10 M / 100 M events. Runs natively and as wasm under node.
//
//   bench_viewer [--sizes 1,10,100] [--frames N] [--width PX] [--no-gtrace] [--threads N] [--repeat R]
//                [--peak-memory] [--staging auto|pieces|compact] [--chunks-per-step N] [--no-build]
//                [--parallel-only] [--save-gtrace DIR] [--gtrace-dir DIR]
//
// Baselines measured in the same run: "TraceData" (the format library's keep-every-record sink: plain
// vectors, no model) for the builder path, and ReadTrace into a no-op sink (decode only) for the .gtrace
// path, and the one-core floor beside it (zstd alone, and fresh pages the size of the model: what any loader
// pays). .gtrace loading is timed on one thread (thread CPU time) and, with --threads N (N > 1, 0 = one per
// hardware thread; native, or wasm built with GT_WASM_THREADS), with N loading threads in wall-clock time,
// next to a wall-clock one-thread load of the same bytes (best of R runs each), with the parallel load's
// phases; the run fails if the parallel model differs from the one-thread model in any field.
// --staging and --chunks-per-step set those LoadOptions for every load; --parallel-only times only the
// threaded load. --peak-memory samples the resident
// set (native) or the heap size (wasm) during one more load. The wasm build has no writer: generate the files
// natively with
// --save-gtrace DIR, then run the wasm build with
// --gtrace-dir DIR (the files are bench_viewer_<N>M.gtrace, the same synthetic trace as the in-memory one).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include <zstd.h>

#include "gt/reader.h"
#include "gt/trace_data.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#endif
#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif
#include "gt/viewer/builder.h"
#include "gt/viewer/load.h"
#include "gt/viewer/lod.h"
#include "model_diff.h"
#include "synth_trace.h"
#if GT_HAVE_ZSTD_COMPRESS
#include "gt/writer.h"
#include "writer_sink.h"
#endif

using namespace gt;
using namespace gt::viewer;

namespace {

// CPU time: the machine that runs benchmarks is often shared, and the numbers are CPU time. Under
// node, process.cpuUsage() (the wasm runs on node's one JS thread).
double Now() {
#if defined(__EMSCRIPTEN__)
  return EM_ASM_DOUBLE({
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  });
#else
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
#endif
}

// Wall clock, for multi-threaded loads (CPU time would add up the threads).
double WallNow() {
#if defined(__EMSCRIPTEN__)
  return emscripten_get_now() / 1e3;
#else
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
#endif
}

class NullSink : public TraceSink {};

// What no .gtrace builder avoids on one core, measured beside each load: the chunks walked and inflated (zstd
// alone, into one reused buffer) and the first touch of fresh memory the size of the loaded model (the kernel
// maps and zeroes every page). Their sum bounds the one-core end-to-end rate from above.
struct Floor {
  double zstd_s = -1, fresh_memory_s = -1;
};
double ZstdOnlySeconds(std::span<const uint8_t> bytes) {
  TraceReader reader;
  if (!reader.Open(bytes).ok()) return -1;
  NullSink null;
  std::vector<PendingChunk> pending;
  std::vector<uint8_t> out;
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  const double t0 = Now();
  while (!reader.done()) {
    pending.clear();
    reader.Walk(null, 64, &pending);
    for (const PendingChunk& c : pending) {
      if (!c.is_loss && c.raw_size > 0 && c.stored_size != c.raw_size) {
        if (out.size() < c.raw_size) out.resize(c.raw_size);
        ZSTD_decompressDCtx(dctx, out.data(), c.raw_size, c.payload, c.stored_size);
      }
      reader.Settle(c, Status::Ok(), null);
    }
  }
  const double seconds = Now() - t0;
  ZSTD_freeDCtx(dctx);
  return seconds;
}
double FreshMemorySeconds(size_t bytes) {
#if defined(__EMSCRIPTEN__)
  (void)bytes;
  return -1;  // the wasm heap grows by memory.grow: not the same cost, and not separable here
#else
  const double t0 = Now();
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return -1;
  for (size_t i = 0; i < bytes; i += 4096) static_cast<volatile char*>(m)[i] = 1;
  munmap(m, bytes);
  return Now() - t0;
#endif
}

std::string GtracePath(const std::string& dir, uint64_t millions) {
  return dir + "/bench_viewer_" + std::to_string(millions) + "M.gtrace";
}

struct FrameStats {
  double ms_avg = 0, ms_max = 0;
  uint64_t items = 0;
};

// One frame: every lane of every track and every counter folded over [t0, t1) at `width` pixels, plus the
// idle gaps of every GPU: what the timeline asks of the core per frame. A function of its own, called once
// per frame like the viewer's frame callback: V8 runs wasm in its baseline tier until a function is *called*
// again after tier-up (no on-stack replacement for wasm), and the optimizer inlines single-caller functions
// into their caller, so queries inlined into a loop inside main() would be timed in baseline code for the
// whole run.
__attribute__((noinline)) uint64_t PrepareFrame(const TraceModel& m, int64_t t0, int64_t t1, double nspx,
                                                std::vector<DrawItem>& items,
                                                std::vector<CounterColumn>& cols,
                                                std::vector<std::pair<int64_t, int64_t>>& gaps) {
  uint64_t n = 0;
  for (const Track& t : m.tracks) {
    if (t.kind == TrackKind::kCounter) {
      QueryCounter(m.counters[t.counter], t0, t1, nspx, &cols);
      n += cols.size();
      continue;
    }
    for (uint32_t d = 0; d < t.lane_count; ++d) {
      QueryLane(m.lanes[t.first_lane + d], t0, t1, nspx, &items);
      n += items.size();
    }
  }
  for (const auto& dev : m.device_summaries) {
    QueryIdleGaps(m, dev.device_id, t0, t1, nspx, &gaps);
    n += gaps.size();
  }
  return n;
}

FrameStats Frames(const TraceModel& m, int64_t span, int frames, double width, uint64_t seed) {
  gt::synth::Rng rng(seed);
  std::vector<DrawItem> items;
  std::vector<CounterColumn> cols;
  std::vector<std::pair<int64_t, int64_t>> gaps;
  FrameStats st;
  double total = 0;
  const int64_t full = std::max<int64_t>(1, m.last_ns - m.first_ns);
  span = std::min(span, full);
  for (int f = 0; f < frames; ++f) {
    int64_t t0 = m.first_ns + (full > span ? int64_t(rng.Next() % uint64_t(full - span + 1)) : 0);
    int64_t t1 = t0 + span;
    double nspx = double(span) / width;
    double a = Now();
    const uint64_t n = PrepareFrame(m, t0, t1, nspx, items, cols, gaps);
    double ms = (Now() - a) * 1e3;
    total += ms;
    st.ms_max = std::max(st.ms_max, ms);
    st.items += n;
  }
  st.ms_avg = total / frames;
  st.items /= std::max(1, frames);
  return st;
}

// Memory the process holds now: resident set natively, the wasm heap (it only grows) in wasm.
uint64_t MemoryNow() {
#if defined(__EMSCRIPTEN__)
  return uint64_t(EM_ASM_DOUBLE({ return HEAP8.length; }));
#else
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2 ? uint64_t(resident) * 4096 : 0;
#endif
}

// Peak of MemoryNow() while `load` runs (a sampling thread every millisecond natively; the heap after the
// load in wasm, whose memory never shrinks).
template <typename F>
uint64_t PeakMemoryDuring(F&& load) {
#if defined(__EMSCRIPTEN__)
  load();
  return MemoryNow();
#else
  std::atomic<bool> done{false};
  std::atomic<uint64_t> peak{MemoryNow()};
  std::thread sampler([&] {
    while (!done.load()) {
      peak.store(std::max(peak.load(), MemoryNow()));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  load();
  done.store(true);
  sampler.join();
  return std::max(peak.load(), MemoryNow());
#endif
}

void PrintPhases(const char* label, const char* name, const LoadTimings& t) {
  std::printf(
      "%-6s %-28s %s: walk %.3f, route %.3f, merge %.3f, lanes %.3f, lod %.3f, devices %.3f, other %.3f s\n",
      label, "", name, t.walk, t.route, t.merge, t.lanes, t.lod, t.devices, t.other);
}

// One load of `bytes` with `threads`: wall seconds, the model, where the time went.
// The model is kept (to tell where a parallel model differs) where memory allows two at once; wasm32
// compares fingerprints only.
constexpr bool kKeepModels = sizeof(void*) == 8;
struct TimedLoad {
  double seconds = -1;  // < 0: failed
  std::unique_ptr<TraceModel> model;
  uint64_t fingerprint = 0;
  uint64_t events = 0;
  LoadTimings phases;
};
LoadOptions::Staging g_staging = LoadOptions::Staging::kAuto;  // --staging, for every load
uint32_t g_chunks_per_step = LoadOptions{}.chunks_per_step;    // --chunks-per-step, for every load

TimedLoad LoadOnce(std::span<const uint8_t> bytes, unsigned threads) {
  TimedLoad r;
  LoadOptions o;
  o.threads = threads;
  o.staging = g_staging;
  o.chunks_per_step = g_chunks_per_step;
  TraceLoader loader;
  const double t0 = WallNow();
  if (!loader.Open(bytes, o).ok()) return r;
  while (!loader.done()) loader.Step();
  auto m = loader.Finish();
  const double seconds = WallNow() - t0;
  if (!m.ok()) return r;
  r.seconds = seconds;
  r.fingerprint = gt::test::ModelFingerprint(*m.value());
  r.events = m.value()->event_count;
  if (kKeepModels) r.model = std::move(m.value());
  r.phases = loader.timings();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<uint64_t> sizes = {1, 10, 100};
  int frames = 50;
  double width = 2000;
  bool gtrace = true;
  unsigned threads = 1;
  int repeat = 1;
  bool peak_memory = false, build = true, parallel_only = false;
  std::string save_dir, gtrace_dir;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::string s = argv[++i];
      size_t p = 0;
      while (p < s.size()) {
        size_t q = s.find(',', p);
        if (q == std::string::npos) q = s.size();
        sizes.push_back(std::strtoull(s.substr(p, q - p).c_str(), nullptr, 10));
        p = q + 1;
      }
    } else if (a == "--frames" && i + 1 < argc) {
      frames = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--width" && i + 1 < argc) {
      width = std::max(100, std::atoi(argv[++i]));
    } else if (a == "--no-gtrace") {
      gtrace = false;
    } else if (a == "--threads" && i + 1 < argc) {
      threads = unsigned(std::atoi(argv[++i]));
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--peak-memory") {
      peak_memory = true;
    } else if (a == "--no-build") {
      build = false;
    } else if (a == "--parallel-only") {
      parallel_only = true;
    } else if (a == "--chunks-per-step" && i + 1 < argc) {
      g_chunks_per_step = uint32_t(std::max(1, std::atoi(argv[++i])));
    } else if (a == "--staging" && i + 1 < argc) {
      const std::string v = argv[++i];
      g_staging = v == "compact"  ? LoadOptions::Staging::kCompact
                  : v == "pieces" ? LoadOptions::Staging::kPieces
                                  : LoadOptions::Staging::kAuto;
    } else if (a == "--save-gtrace" && i + 1 < argc) {
      save_dir = argv[++i];
    } else if (a == "--gtrace-dir" && i + 1 < argc) {
      gtrace_dir = argv[++i];
    } else {
      std::fprintf(
          stderr,
          "usage: bench_viewer [--sizes 1,10,100] [--frames N] [--width PX] [--no-gtrace] [--threads N]\n"
          "                    [--repeat R] [--peak-memory] [--staging auto|pieces|compact] "
          "[--chunks-per-step N]\n"
          "                    [--no-build] [--parallel-only] [--save-gtrace DIR] [--gtrace-dir DIR]\n");
      return 2;
    }
  }
#ifdef __EMSCRIPTEN__
  const char* platform = "wasm (node)";
#else
  const char* platform = "native";
#endif
  std::printf("bench_viewer (%s): frame width %.0f px, %d frames per zoom level, times are %s\n", platform,
              width, frames,
#if defined(__EMSCRIPTEN__)
              "node process CPU time"
#else
              "thread CPU time"
#endif
  );
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::printf("load threads: %u (--threads; this machine reports %u hardware threads)\n", threads,
              std::thread::hardware_concurrency());
#else
  threads = 1;  // no threads in this wasm build (GT_WASM_THREADS=OFF)
#endif
  std::printf("%-6s %-28s %12s %10s %14s\n", "events", "measure", "value", "unit", "vs baseline");
  for (uint64_t millions : sizes) {
    gt::synth::SynthOptions o;
    o.events = millions * 1'000'000;
    char label[16];
    std::snprintf(label, sizeof label, "%" PRIu64 "M", millions);

    if (build) {  // records -> model, memory, frames (--no-build: .gtrace loading only)
      // Baseline: the same records into TraceData (vectors of plain records, no model).
      double base_rate = 0;
      if (millions <= 10) {
        TraceData td;
        double a = Now();
        auto c = gt::synth::GenerateSynthTrace(td, o);
        base_rate = double(c.events()) / (Now() - a);
      }
      // Generator alone (its cost is inside both numbers above and below).
      double gen_rate;
      {
        NullSink null;
        double a = Now();
        auto c = gt::synth::GenerateSynthTrace(null, o);
        gen_rate = double(c.events()) / (Now() - a);
      }
      ModelBuilder b;
      double a = Now();
      auto counts = gt::synth::GenerateSynthTrace(b, o);
      double fed = Now();
      auto m = b.Finish();
      double done = Now();
      const double build_s = done - a;
      const double gen_s = double(counts.events()) / gen_rate;
      const double rate = double(counts.events()) / build_s;
      const double rate_net = double(counts.events()) / std::max(1e-9, build_s - gen_s);
      std::printf(
          "%-6s %-28s %12.1f %10s %14s\n", label, "build (records->model)", rate / 1e6, "M ev/s",
          base_rate > 0 ? (std::to_string(rate / base_rate).substr(0, 5) + "x TraceData").c_str() : "-");
      std::printf("%-6s %-28s %12.1f %10s %14s\n", label, "  excluding generator", rate_net / 1e6, "M ev/s",
                  "");
      std::printf("%-6s %-28s %12.3f %10s %14s\n", label, "  of which Finish()", done - fed, "s", "");
      const double bytes_per_event = double(m->MemoryBytes()) / double(m->event_count);
      std::printf("%-6s %-28s %12.2f %10s %14s\n", label, "memory per event", bytes_per_event, "B/event",
                  (std::to_string(bytes_per_event / 24.0).substr(0, 5) + "x target").c_str());

      const int64_t full = m->last_ns - m->first_ns;
      struct Zoom {
        const char* name;
        int64_t span;
      } zooms[] = {{"frame: full zoom-out", full},
                   {"frame: mid zoom (1/1000)", std::max<int64_t>(full / 1000, 1000)},
                   {"frame: deep zoom (50 us)", 50'000}};
      for (const auto& z : zooms) {
        FrameStats fs = Frames(*m, z.span, frames, width, 77);
        char extra[64];
        std::snprintf(extra, sizeof extra, "max %.2f, %" PRIu64 " it", fs.ms_max, fs.items);
        std::printf("%-6s %-28s %12.3f %10s %14s\n", label, z.name, fs.ms_avg, "ms", extra);
      }
      m.reset();
    }

    if (gtrace && millions <= 100) {
      std::string file;
      if (!gtrace_dir.empty()) {
        auto f = ReadFileBytes(GtracePath(gtrace_dir, millions));
        if (!f.ok()) {
          std::fprintf(stderr, "%s (write it natively with --save-gtrace)\n", f.status().ToString().c_str());
          return 1;
        }
        file = std::move(f.value());
      } else {
#if GT_HAVE_ZSTD_COMPRESS
        auto w = TraceWriter::Create(MakeStringSink(&file));
        if (!w.ok()) return 1;
        gt::synth::WriterSink ws(*w.value());
        gt::synth::GenerateSynthTrace(ws, o);
        if (!w.value()->Finish().ok()) return 1;
        if (!save_dir.empty()) {
          auto sink = MakeFileSink(GtracePath(save_dir, millions), /*overwrite=*/true);
          if (!sink.ok() ||
              !sink.value()->Write({reinterpret_cast<const uint8_t*>(file.data()), file.size()}).ok()) {
            std::fprintf(stderr, "cannot write %s\n", GtracePath(save_dir, millions).c_str());
            return 1;
          }
        }
#else
        std::printf("%-6s %-28s (this build has no .gtrace writer: pass --gtrace-dir)\n", label,
                    "load .gtrace");
        std::fflush(stdout);
        continue;
#endif
      }
      std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(file.data()), file.size());
      if (parallel_only) {
        TimedLoad par;
        for (int r = 0; r < repeat; ++r) {
          TimedLoad x = LoadOnce(bytes, threads);
          if (x.seconds < 0) return 1;
          if (par.seconds < 0 || x.seconds < par.seconds) par = std::move(x);
        }
        char name[64];
        std::snprintf(name, sizeof name, "load, %u threads (wall)", threads);
        std::printf("%-6s %-28s %12.1f %10s %14s\n", label, name, double(par.events) / par.seconds / 1e6,
                    "M ev/s", "");
        PrintPhases(label, "phases", par.phases);
        std::fflush(stdout);
        continue;
      }
      NullSink null;
      double r0 = Now();
      auto rep = ReadTrace(bytes, null);
      double decode_s = Now() - r0;
      if (!rep.ok()) return 1;
      double l0 = Now();
      LoadOptions one_thread;
      one_thread.staging = g_staging;
      one_thread.chunks_per_step = g_chunks_per_step;
      auto lm = LoadTrace(bytes, one_thread);
      double load_s = Now() - l0;
      if (!lm.ok()) return 1;
      const double ev = double(lm.value()->event_count);
      const double loaded_bytes = double(lm.value()->MemoryBytes()) / ev;
      lm.value().reset();
      std::printf("%-6s %-28s %12.1f %10s %14s\n", label, "load .gtrace (end to end)", ev / load_s / 1e6,
                  "M ev/s", (std::to_string(decode_s / load_s).substr(0, 5) + "x decode").c_str());
      std::printf("%-6s %-28s %12.1f %10s %14s\n", label, "  decode only (no-op sink)", ev / decode_s / 1e6,
                  "M ev/s", "");
      std::printf("%-6s %-28s %12.2f %10s %14s\n", label, "  file size", double(file.size()) / ev, "B/event",
                  "");
      std::printf("%-6s %-28s %12.2f %10s %14s\n", label, "  model memory", loaded_bytes, "B/event", "");
      const double zstd_s = ZstdOnlySeconds(bytes);
      const double fresh_s = FreshMemorySeconds(size_t(loaded_bytes * ev));
      if (zstd_s > 0 && fresh_s > 0) {
        std::printf("%-6s %-28s %12.1f %10s %14s\n", label, "  floor: zstd only", ev / zstd_s / 1e6, "M ev/s",
                    "");
        std::printf("%-6s %-28s %12.1f %10s %14s\n", label, "  floor: fresh model pages", ev / fresh_s / 1e6,
                    "M ev/s", "");
        std::printf("%-6s %-28s %12.1f %10s %14s\n", label, "  floor: both (at most)",
                    ev / (zstd_s + fresh_s) / 1e6, "M ev/s",
                    (std::to_string((zstd_s + fresh_s) / load_s).substr(0, 5) + "x load time").c_str());
      }
      // In wasm32, inputs over 256 MB load on one thread (LoadOptions::threads), and a heap that held one
      // model of this size has no room for a second one (its memory never shrinks, frees leave holes).
      const bool one_load_only = sizeof(void*) < 8 && file.size() > (size_t{256} << 20);
      if (threads != 1 && one_load_only)
        std::printf("%-6s %-28s (wasm32: inputs over 256 MB load on one thread, once per process)\n", label,
                    "load, threads");
      if (threads != 1 && !one_load_only) {
        // Wall clock for both, one thread first, best of `repeat` (the ratio is the parallel speed-up on this
        // machine now).
        TimedLoad one, par;
        for (int r = 0; r < repeat; ++r) {
          TimedLoad x = LoadOnce(bytes, 1);
          if (x.seconds < 0) return 1;
          if (one.seconds < 0 || x.seconds < one.seconds) one = std::move(x);
        }
        for (int r = 0; r < repeat; ++r) {
          TimedLoad x = LoadOnce(bytes, threads);
          if (x.seconds < 0) return 1;
          if (par.seconds < 0 || x.seconds < par.seconds) par = std::move(x);
        }
        std::string diff = one.fingerprint == par.fingerprint ? "" : "fingerprints differ";
        if (one.model && par.model) diff = gt::test::ModelDiff(*one.model, *par.model);
        char name[64], extra[64];
        std::snprintf(name, sizeof name, "load, %u threads (wall)", threads);
        std::snprintf(extra, sizeof extra, "%.2fx 1 thread%s", one.seconds / par.seconds,
                      diff.empty() ? "" : " MODEL DIFFERS");
        std::printf("%-6s %-28s %12.1f %10s %14s\n", label, name, ev / par.seconds / 1e6, "M ev/s", extra);
        PrintPhases(label, "phases", par.phases);
        std::printf("%-6s %-28s %12.1f %10s %14s\n", label, "load, 1 thread (wall)", ev / one.seconds / 1e6,
                    "M ev/s", "");
        PrintPhases(label, "phases", one.phases);
        if (!diff.empty()) {
          std::fprintf(stderr, "parallel model differs: %s\n", diff.c_str());
          return 1;
        }
      }
      if (peak_memory) {
#if defined(__GLIBC__)
        malloc_trim(0);  // earlier loads' freed memory would count as "before"
#endif
        const uint64_t before = MemoryNow();
        std::unique_ptr<TraceModel> kept;
        const uint64_t peak = PeakMemoryDuring([&] {
          LoadOptions o;
          o.threads = threads;
          o.staging = g_staging;
          o.chunks_per_step = g_chunks_per_step;
          auto m = LoadTrace(bytes, o);
          if (m.ok()) kept = std::move(m.value());
        });
        if (!kept) return 1;
        const double model_b = double(kept->MemoryBytes()) / ev;
        char name[64], extra[64];
        std::snprintf(name, sizeof name, "peak memory, %u thread%s", threads, threads == 1 ? "" : "s");
        std::snprintf(extra, sizeof extra, "model %.2f B/ev", model_b);
        std::printf("%-6s %-28s %12.2f %10s %14s\n", label, name, double(peak - std::min(peak, before)) / ev,
                    "B/event", extra);
      }
    }
    std::fflush(stdout);
  }
  return 0;
}
