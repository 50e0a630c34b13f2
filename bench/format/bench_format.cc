// bench_format [--events N] [--repeat R] [--no-json] [--level L] [--portable]
//
// One run reports, for the same synthetic events: bytes/event of .gtrace, Chrome JSON and gzipped Chrome JSON
// (the baselines, measured here), and single-core write/read throughput of .gtrace in events per CPU second
// (thread CPU time, so a busy shared machine does not skew it). Targets
// (docs/benchmarks.md): <= 6 bytes/event, write >= 20 M events/s, read >= 50 M events/s.
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "chrome_export.h"
#include "format.h"
#include "gt/trace_data.h"
#include "synthetic_trace.h"

using namespace gt;
// Thread CPU time: the machine may be shared, and the targets are per core.
struct Clock {
  using time_point = double;
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  }
};

namespace {

double Seconds(double a, double b) {
  return b - a;
}

// Decodes into record structs and touches them, but keeps nothing: the reader's own speed.
struct CountingSink : TraceSink {
  uint64_t events = 0, checksum = 0;
  template <class R>
  void Count(std::span<const R> r) {
    events += r.size();
    if (!r.empty()) checksum += uint64_t(r.back().start);
  }
  void OnKernels(std::span<const KernelRecord> r) override { Count(r); }
  void OnMemcpys(std::span<const MemcpyRecord> r) override { Count(r); }
  void OnMemsets(std::span<const MemsetRecord> r) override { Count(r); }
  void OnApiCalls(std::span<const ApiCallRecord> r) override { Count(r); }
  void OnNvtx(std::span<const NvtxRecord> r) override { Count(r); }
};

// Re-interns the synthetic trace's strings in the writer, then Add()s every record: what the collector does.
double WriteOnce(const TraceData& t, int level, std::string* out, uint64_t* written) {
  out->clear();
  WriterOptions o;
  o.zstd_level = level;
  auto w = TraceWriter::Create(MakeStringSink(out), o);
  if (!w.ok()) {
    std::fprintf(stderr, "%s\n", w.status().ToString().c_str());
    std::exit(1);
  }
  TraceWriter& tw = **w;
  auto t0 = Clock::now();
  std::vector<StringId> ids(t.strings.size());
  for (size_t i = 0; i < t.strings.size(); ++i) ids[i] = tw.Intern(t.strings[i]);
  tw.SetMetadata(t.metadata);
  for (auto r : t.processes) r.name = ids[r.name], r.command_line = ids[r.command_line], tw.Add(r);
  for (auto r : t.threads) r.name = ids[r.name], tw.Add(r);
  for (auto r : t.devices) r.name = ids[r.name], tw.Add(r);
  for (const auto& r : t.contexts) tw.Add(r);
  for (const auto& r : t.streams) tw.Add(r);
  // Interleaved as a collector would deliver them (host API calls and GPU activity arrive together).
  size_t ia = 0, ik = 0, im = 0, is = 0, in = 0;
  while (ia < t.api_calls.size() || ik < t.kernels.size()) {
    for (int k = 0; k < 1024 && ia < t.api_calls.size(); ++k) {
      ApiCallRecord r = t.api_calls[ia++];
      r.name = ids[r.name];
      tw.Add(r);
    }
    for (int k = 0; k < 512 && ik < t.kernels.size(); ++k) {
      KernelRecord r = t.kernels[ik++];
      r.name = ids[r.name];
      tw.Add(r);
    }
    for (int k = 0; k < 32 && im < t.memcpys.size(); ++k) tw.Add(t.memcpys[im++]);
    for (int k = 0; k < 16 && is < t.memsets.size(); ++k) tw.Add(t.memsets[is++]);
    for (int k = 0; k < 128 && in < t.nvtx.size(); ++k) {
      NvtxRecord r = t.nvtx[in++];
      r.domain = ids[r.domain], r.message = ids[r.message];
      tw.Add(r);
    }
  }
  for (; im < t.memcpys.size(); ++im) tw.Add(t.memcpys[im]);
  for (; is < t.memsets.size(); ++is) tw.Add(t.memsets[is]);
  for (; in < t.nvtx.size(); ++in) {
    NvtxRecord r = t.nvtx[in];
    r.domain = ids[r.domain], r.message = ids[r.message];
    tw.Add(r);
  }
  Status s = tw.Finish();
  auto t1 = Clock::now();
  if (!s.ok()) {
    std::fprintf(stderr, "write failed: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  *written = tw.records_written();
  return Seconds(t0, t1);
}

struct JsonSizes {
  uint64_t json = 0, gz = 0;
  double seconds = 0;
};

JsonSizes ChromeJsonSizes(const TraceData& t) {
  JsonSizes r;
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // gzip, level 6
  std::vector<unsigned char> buf(1 << 20);
  auto drain = [&](int flush) {
    do {
      z.next_out = buf.data();
      z.avail_out = unsigned(buf.size());
      deflate(&z, flush);
      r.gz += buf.size() - z.avail_out;
    } while (z.avail_out == 0);
  };
  auto t0 = Clock::now();
  Status s = ExportChromeJson(t, [&](std::string_view piece) {
    r.json += piece.size();
    z.next_in = reinterpret_cast<unsigned char*>(const_cast<char*>(piece.data()));
    z.avail_in = unsigned(piece.size());
    drain(Z_NO_FLUSH);
    return Status::Ok();
  });
  z.next_in = nullptr;
  z.avail_in = 0;
  drain(Z_FINISH);
  deflateEnd(&z);
  r.seconds = Seconds(t0, Clock::now());
  if (!s.ok()) std::fprintf(stderr, "export failed: %s\n", s.ToString().c_str());
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t events = 10'000'000;
  int repeat = 3, level = 1;
  bool json = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--events" && i + 1 < argc) {
      events = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--level" && i + 1 < argc) {
      level = std::atoi(argv[++i]);
    } else if (a == "--no-json") {
      json = false;
    } else if (a == "--portable") {
      // The codec paths of CPUs without a fast PEXT/PDEP (AMD before Zen 3, non-x86).
      format::SetFastPextForTesting(false);
    } else {
      std::fprintf(
          stderr,
          "usage: bench_format [--events N] [--repeat R] [--level ZSTD_LEVEL] [--no-json] [--portable]\n"
          "  N events (default 10000000), R timed repetitions (default 3; best and median printed)\n"
          "  --portable: varint codec without BMI2 (PEXT/PDEP), as on CPUs where it is slow or missing\n");
      return a == "--help" || a == "-h" ? 0 : 64;
    }
  }

  std::printf("generating %llu synthetic events...\n", static_cast<unsigned long long>(events));
  TraceData t = bench::MakeSyntheticTrace(events);
  const double n = double(t.EventCount());
  std::printf("events: %llu (kernels %zu, api %zu, memcpy %zu, memset %zu, nvtx %zu)\n",
              static_cast<unsigned long long>(t.EventCount()), t.kernels.size(), t.api_calls.size(),
              t.memcpys.size(), t.memsets.size(), t.nvtx.size());

  std::string file;
  std::vector<double> wt, rt, rt_full;
  uint64_t records = 0;
  for (int i = 0; i < repeat; ++i) wt.push_back(WriteOnce(t, level, &file, &records));
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(file.data()), file.size());
  for (int i = 0; i < repeat; ++i) {
    CountingSink sink;
    auto t0 = Clock::now();
    auto r = ReadTrace(bytes, sink);
    rt.push_back(Seconds(t0, Clock::now()));
    if (!r.ok() || !r->clean() || sink.events != t.EventCount()) {
      std::fprintf(stderr, "read back failed or incomplete\n");
      return 1;
    }
  }
  for (int i = 0; i < repeat; ++i) {
    TraceData back;
    auto t0 = Clock::now();
    auto r = ReadTrace(bytes, back);
    rt_full.push_back(Seconds(t0, Clock::now()));
    if (!r.ok() || back.EventCount() != t.EventCount()) return 1;
  }
  auto best = [](std::vector<double> v) { return *std::min_element(v.begin(), v.end()); };
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };

  double gt_bpe = double(file.size()) / n;
  std::printf("\nvarint codec: %s\n", format::FastPext() ? "BMI2 (PEXT/PDEP)" : "portable");
  std::printf(".gtrace (zstd level %d): %llu bytes, %.3f bytes/event  [target <= 6]\n", level,
              static_cast<unsigned long long>(file.size()), gt_bpe);
  std::printf("write:             best %6.1f M events/s, median %6.1f M events/s  [target >= 20]\n",
              n / best(wt) / 1e6, n / median(wt) / 1e6);
  std::printf("read (decode):     best %6.1f M events/s, median %6.1f M events/s  [target >= 50]\n",
              n / best(rt) / 1e6, n / median(rt) / 1e6);
  std::printf("read (+TraceData): best %6.1f M events/s, median %6.1f M events/s  (copies every record)\n",
              n / best(rt_full) / 1e6, n / median(rt_full) / 1e6);
  if (json) {
    JsonSizes js = ChromeJsonSizes(t);
    std::printf("\nChrome JSON:       %llu bytes, %.1f bytes/event (export %.1f CPU s incl. gzip)\n",
                static_cast<unsigned long long>(js.json), double(js.json) / n, js.seconds);
    std::printf("Chrome JSON.gz:    %llu bytes, %.2f bytes/event (zlib level 6)\n",
                static_cast<unsigned long long>(js.gz), double(js.gz) / n);
    std::printf("\nratio: .gtrace is %.1fx smaller than Chrome JSON, %.2fx smaller than gzipped JSON\n",
                double(js.json) / double(file.size()), double(js.gz) / double(file.size()));
  }
  return 0;
}
