// JSON import benchmark: a generated Kineto trace (tests/viewer/kineto_gen.h: the event mix of a transformer
// training loop, like the 170 MB trace of issue 16), or with --format chrome a plain Chrome trace (B/E
// nesting, counters, async pairs, flows), or with --format threads one event on each of many threads (what a
// track costs), plain and gzipped, loaded by the fast front end and by the reference (nlohmann SAX, today's
// importer), next to python3's json.load of the same file, in one run.
//
//   bench_json [--format kineto|chrome|threads] [--mb 170] [--dir DIR] [--repeat R] [--no-python]
//              [--threads T]
//   bench_json [--threads T] --one fast|reference FILE
//       one load in this process: CPU s, peak RSS, text bytes, fingerprint, wall s, gzip inflater, events,
//       problems; used by the driver; runs under node for the wasm build
//
// Each load runs in a child process of its own (the driver runs itself with --one), so each peak resident
// set is that load's alone: the file's bytes in memory plus what the load allocates. Speed is MB of JSON
// text (inflated, for gzip) per CPU second of one thread. Python's time is taken around json.load only.
// With --threads T (T > 1) the fast front end also loads on T threads (LoadOptions::threads: slices of the
// event array parsed in parallel); its speed is MB per wall second, next to the same load on one thread.
#include <sys/resource.h>

#include <zlib.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "gt/viewer/load.h"
#if defined(__EMSCRIPTEN__)
#include <emscripten.h>
#endif
#include "inflate.h"  // which gzip inflater this machine has
#include "kineto_gen.h"
#include "model_diff.h"

using namespace gt;
using namespace gt::viewer;

namespace {

double WallNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double CpuNow() {
#if defined(__EMSCRIPTEN__)
  return EM_ASM_DOUBLE({
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  });
#endif
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Read straight into one buffer of the file's size: the file's bytes are in memory once.
std::string ReadFile(const std::string& path) {
  std::string out;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  std::fseek(f, 0, SEEK_END);
  out.resize(static_cast<size_t>(std::ftell(f)));
  std::fseek(f, 0, SEEK_SET);
  out.resize(std::fread(out.data(), 1, out.size(), f));
  std::fclose(f);
  return out;
}

bool Gzip(const std::string& in, std::string* out) {
#if defined(__EMSCRIPTEN__)  // the wasm build's zlib inflates only; the files come from the native build
  (void)in, (void)out;
  return false;
#else
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  out->assign(deflateBound(&zs, in.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out->data());
  zs.avail_out = static_cast<uInt>(out->size());
  const bool ok = deflate(&zs, Z_FINISH) == Z_STREAM_END;
  out->resize(zs.total_out);
  deflateEnd(&zs);
  return ok;
#endif
}

// One load: prints "cpu_s peak_rss_kb text_bytes fingerprint wall_s inflater events problems" (problems: the
// importer's named counts of what it skipped; the generated files should have none).
int One(const std::string& mode, const std::string& path, uint32_t threads) {
  const std::string bytes = ReadFile(path);
  if (bytes.empty()) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  LoadOptions o;
  o.json_parser = mode == "reference" ? LoadOptions::JsonParser::kReference : LoadOptions::JsonParser::kFast;
  o.threads = threads;
  const double w0 = WallNow();
  const double t0 = CpuNow();
  auto m =
      LoadTrace(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), o);
  const double cpu = CpuNow() - t0;
  const double wall = WallNow() - w0;
  if (!m.ok()) {
    std::fprintf(stderr, "load failed: %s\n", m.status().message().c_str());
    return 1;
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
#if defined(__EMSCRIPTEN__)
  ru.ru_maxrss = EM_ASM_INT({ return HEAP8.length / 1024; });  // the wasm heap's size, KiB
#endif
  const TraceModel& model = *m.value();
  std::printf("%.4f %ld %llu %016llx %.4f %s %llu %zu\n", cpu, ru.ru_maxrss,
              (unsigned long long)model.report.bytes_total, (unsigned long long)test::ModelFingerprint(model),
              wall, gt::viewer::detail::Inflater(std::span<const uint8_t>()).backend(),
              (unsigned long long)model.event_count, model.report.problems.size());
  for (const std::string& p : model.report.problems) std::fprintf(stderr, "problem: %s\n", p.c_str());
  return 0;
}

struct Result {
  double cpu = 0, wall = 0;
  long rss_kb = 0;
  uint64_t text = 0, events = 0;
  std::string fingerprint;
  bool ok = false;
};

Result RunChild(const std::string& self, const std::string& mode, const std::string& file, int repeat,
                uint32_t threads = 1) {
  Result best;
  for (int i = 0; i < repeat; ++i) {
    const std::string cmd =
        "'" + self + "' --threads " + std::to_string(threads) + " --one " + mode + " '" + file + "'";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return best;
    char line[256] = {0};
    const bool got = std::fgets(line, sizeof line, p) != nullptr;
    const int rc = pclose(p);
    Result r;
    char fp[64] = {0}, inflater[32] = {0};
    unsigned long long text = 0, events = 0;
    size_t problems = 0;
    if (!got || rc != 0 ||
        std::sscanf(line, "%lf %ld %llu %63s %lf %31s %llu %zu", &r.cpu, &r.rss_kb, &text, fp, &r.wall,
                    inflater, &events, &problems) != 8 ||
        problems != 0)  // a generated file's events are all well formed: a skip is a bug in the load
      return best;
    r.events = events;
    r.text = text;
    r.fingerprint = fp;
    r.ok = true;
    if (!best.ok || (threads > 1 ? r.wall < best.wall : r.cpu < best.cpu)) best = r;
  }
  return best;
}

double PythonLoad(const std::string& file, bool gz, int repeat) {
  double best = -1;
  for (int i = 0; i < repeat; ++i) {
    const std::string cmd =
        std::string("python3 -c 'import json,gzip,sys,time\nf=") + (gz ? "gzip.open" : "open") +
        "(sys.argv[1],\"rb\")\nt=time.process_time()\njson.load(f)\nprint(time.process_time()-t)' '" + file +
        "'";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return -1;
    char line[128] = {0};
    const bool got = std::fgets(line, sizeof line, p) != nullptr;
    if (pclose(p) != 0 || !got) return -1;
    const double t = std::atof(line);
    if (best < 0 || t < best) best = t;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t mb = 170;
  std::string dir = "/tmp";
  int repeat = 1;
  bool python = true;
  uint32_t threads = 1;
  std::string format = "kineto";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--one" && i + 2 < argc) return One(argv[i + 1], argv[i + 2], threads);
    if (a == "--threads" && i + 1 < argc)
      threads = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    else if (a == "--format" && i + 1 < argc &&
             (std::string(argv[i + 1]) == "kineto" || std::string(argv[i + 1]) == "chrome" ||
              std::string(argv[i + 1]) == "threads"))
      format = argv[++i];
    else if (a == "--mb" && i + 1 < argc)
      mb = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--dir" && i + 1 < argc)
      dir = argv[++i];
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--no-python")
      python = false;
    else {
      std::fprintf(stderr,
                   "usage: bench_json [--format kineto|chrome|threads] [--mb N] [--dir DIR] [--repeat R] "
                   "[--no-python] [--threads T]\n");
      return 2;
    }
  }
  const std::string plain = dir + "/bench_json_" + format + ".json", gz = plain + ".gz";
  {
    const std::string json = format == "chrome"    ? test::ChromeJson(mb << 20, 1)
                             : format == "threads" ? test::ManyThreadsJson(mb << 20)
                                                   : test::KinetoJson(mb << 20, 1);
    std::string z;
    if (!Gzip(json, &z)) return 1;
    std::ofstream(plain, std::ios::binary) << json;
    std::ofstream(gz, std::ios::binary) << z;
    std::printf("generated %s JSON: %.1f MB (gzip %.1f MB) in %s\n", format.c_str(), json.size() / 1e6,
                z.size() / 1e6, dir.c_str());
  }
  const std::string self = argv[0];
  bool ok = true;
  std::printf("%-22s %10s %10s %12s %14s\n", "load", "CPU s", "MB/s", "peak RSS MB", "RSS / file");
  for (const auto& [file, label] :
       {std::pair{plain, std::string("plain")}, std::pair{gz, std::string("gzip")}}) {
    const uint64_t file_bytes = ReadFile(file).size();
    Result fast = RunChild(self, "fast", file, repeat), ref = RunChild(self, "reference", file, repeat);
    if (!fast.ok || !ref.ok) {
      std::printf("%s: a load failed\n", label.c_str());
      ok = false;
      continue;
    }
    for (const auto& [name, r] : {std::pair{"fast", fast}, std::pair{"reference (nlohmann)", ref}})
      std::printf("%-5s %-16s %10.3f %10.1f %12.1f %14.2f\n", label.c_str(), name, r.cpu,
                  r.text / 1e6 / r.cpu, r.rss_kb / 1024.0, r.rss_kb * 1024.0 / file_bytes);
    double py = python ? PythonLoad(file, label == "gzip", repeat) : -1;
    if (py > 0)
      std::printf("%-5s %-16s %10.3f %10.1f\n", label.c_str(), "python3 json.load", py, fast.text / 1e6 / py);
    std::printf("%-5s fast / reference: %.2fx", label.c_str(), ref.cpu / fast.cpu);
    if (py > 0) std::printf(", fast / python3: %.2fx", py / fast.cpu);
    const bool same = fast.fingerprint == ref.fingerprint;
    std::printf(", models %s (fingerprint %s, %llu events)\n", same ? "identical" : "DIFFER",
                fast.fingerprint.c_str(), (unsigned long long)fast.events);
    ok &= same;
    if (threads > 1) {
      const Result par = RunChild(self, "fast", file, repeat, threads);
      if (!par.ok) {
        std::printf("%s: the load on %u threads failed\n", label.c_str(), threads);
        ok = false;
        continue;
      }
      std::printf(
          "%-5s fast, %2u threads: %.3f s wall = %.1f MB/s (%.3f CPU s), one thread %.3f s wall = %.1f "
          "MB/s: %.2fx; peak RSS %.1f MB (%.2fx the file); model %s\n",
          label.c_str(), threads, par.wall, par.text / 1e6 / par.wall, par.cpu, fast.wall,
          fast.text / 1e6 / fast.wall, fast.wall / par.wall, par.rss_kb / 1024.0,
          par.rss_kb * 1024.0 / file_bytes, par.fingerprint == fast.fingerprint ? "identical" : "DIFFERS");
      ok &= par.fingerprint == fast.fingerprint;
    }
  }
  return ok ? 0 : 1;
}
