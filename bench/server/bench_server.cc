// Loopback load test of the share server: concurrent downloads of a 1 MB trace and concurrent uploads, with
// requests/s and p50/p99 latency, against a baseline measured in the same run: the same client against a
// trivial httplib endpoint that returns 1 MB from memory. Bounded: fixed request counts plus a wall-clock
// cap; binds 127.0.0.1 only.
//
//   bench_server [--threads N] [--downloads N] [--uploads N] [--size BYTES] [--max-seconds S]
//                [--server-cpus A-B] [--client-cpus C-D]
// --server-cpus pins the server's threads (they inherit the affinity of the thread that starts them) and
// --client-cpus the load generator, so "the server on 2 cores" can be measured with the client elsewhere.
#include <httplib.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gt/server/server.h"
#include "gt/writer.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kLoopback = "127.0.0.1";  // never any other address

struct Args {
  std::string server_cpus, client_cpus;
  int threads = 8;
  int downloads = 20000;
  int uploads = 400;
  size_t size = 1 << 20;
  double max_seconds = 60;
};

// "2-3" or "5": pins the calling thread (and every thread it creates afterwards).
bool PinTo(const std::string& cpus) {
  if (cpus.empty()) return true;
  int lo = 0, hi = 0;
  if (std::sscanf(cpus.c_str(), "%d-%d", &lo, &hi) != 2) hi = lo = std::atoi(cpus.c_str());
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c = lo; c <= hi && c < CPU_SETSIZE; ++c) CPU_SET(c, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

std::string MakeTrace(uint32_t seed, size_t min_bytes) {
  std::string out;
  auto w = gt::TraceWriter::Create(gt::MakeStringSink(&out));
  GT_ASSERT(w.ok());
  std::mt19937 rng(seed);
  int64_t t = 0;
  uint32_t i = 0;
  while (out.size() < min_bytes) {
    for (int k = 0; k < 512; ++k, ++i) {
      std::string name = "k" + std::to_string(seed) + "_";
      for (int c = 0; c < 20; ++c) name.push_back(static_cast<char>('a' + rng() % 26));
      gt::KernelRecord r;
      r.start = t;
      r.end = t + 100 + static_cast<int64_t>(rng() % 5000);
      t = r.end + static_cast<int64_t>(rng() % 100);
      r.name = (*w)->Intern(name);
      r.correlation_id = i;
      (*w)->Add(r);
    }
    GT_ASSERT((*w)->Flush().ok());
  }
  GT_ASSERT((*w)->Finish().ok());
  return out;
}

struct Result {
  std::string name;
  int requests = 0;
  int errors = 0;
  double seconds = 0;
  double bytes = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  double rps() const { return seconds > 0 ? requests / seconds : 0; }
};

// `op` performs one request with the thread's client and returns the bytes moved, or -1 on error.
template <typename Op>
Result Run(const std::string& name, int port, int threads, int total, double max_seconds, Op op) {
  std::atomic<int> next{0};
  std::atomic<int> errors{0};
  std::atomic<double> bytes{0};
  std::vector<std::vector<double>> lat(static_cast<size_t>(threads));
  const auto deadline = Clock::now() + std::chrono::duration<double>(max_seconds);
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      httplib::Client c(kLoopback, port);
      c.set_keep_alive(true);
      c.set_read_timeout(60, 0);
      c.set_write_timeout(60, 0);
      for (int i = next++; i < total && Clock::now() < deadline; i = next++) {
        auto t0 = Clock::now();
        double moved = op(c, i);
        auto t1 = Clock::now();
        if (moved < 0) {
          ++errors;
          continue;
        }
        lat[static_cast<size_t>(t)].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        double cur = bytes.load();
        while (!bytes.compare_exchange_weak(cur, cur + moved)) {
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  Result r;
  r.name = name;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  r.requests = static_cast<int>(all.size());
  r.errors = errors;
  r.bytes = bytes;
  if (!all.empty()) {
    r.p50_ms = all[all.size() / 2];
    r.p99_ms = all[std::min(all.size() - 1, all.size() * 99 / 100)];
    r.max_ms = all.back();
  }
  return r;
}

void Print(const Result& r) {
  std::printf(
      "%-34s %7d req %3d err %7.2f s %9.0f req/s %8.1f MB/s  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms\n",
      r.name.c_str(), r.requests, r.errors, r.seconds, r.rps(), r.bytes / r.seconds / 1e6, r.p50_ms, r.p99_ms,
      r.max_ms);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; i += 2) {
    std::string a = argv[i];
    if (i + 1 >= argc) a = "";  // a flag without its value: usage
    if (a == "--threads")
      args.threads = std::clamp(std::atoi(argv[i + 1]), 1, 256);
    else if (a == "--downloads")
      args.downloads = std::clamp(std::atoi(argv[i + 1]), 1, 10'000'000);
    else if (a == "--uploads")
      args.uploads = std::clamp(std::atoi(argv[i + 1]), 1, 100'000);
    else if (a == "--size")
      args.size = static_cast<size_t>(std::clamp(std::atoll(argv[i + 1]), 1024LL, 1LL << 30));
    else if (a == "--max-seconds")
      args.max_seconds = std::clamp(std::atof(argv[i + 1]), 1.0, 600.0);
    else if (a == "--server-cpus")
      args.server_cpus = argv[i + 1];
    else if (a == "--client-cpus")
      args.client_cpus = argv[i + 1];
    else {
      std::fprintf(stderr,
                   "usage: bench_server [--threads N] [--downloads N] [--uploads N] [--size BYTES] "
                   "[--server-cpus A-B] "
                   "[--client-cpus C-D] [--max-seconds S]\n");
      return 64;
    }
  }

  std::string pattern = (std::filesystem::temp_directory_path() / "gtrace-bench-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) return 1;
  const std::string store_dir = pattern;

  std::printf(
      "bench_server: %d client threads, %d downloads, %d uploads, trace >= %zu bytes, %u hardware threads\n",
      args.threads, args.downloads, args.uploads, args.size, std::thread::hardware_concurrency());
  const std::string trace = MakeTrace(1, args.size);
  // Distinct traces for the upload phase (so every upload is stored, not deduplicated).
  const int distinct = std::min(args.uploads, 64);
  std::vector<std::string> upload_traces;
  for (int i = 0; i < distinct; ++i)
    upload_traces.push_back(MakeTrace(1000 + static_cast<uint32_t>(i), args.size));

  if (!PinTo(args.server_cpus)) {
    std::fprintf(stderr, "bench_server: cannot pin to cpus %s\n", args.server_cpus.c_str());
    return 64;
  }
  std::printf("server cpus: %s, client cpus: %s\n",
              args.server_cpus.empty() ? "all" : args.server_cpus.c_str(),
              args.client_cpus.empty() ? "all" : args.client_cpus.c_str());
  // --- baseline: a trivial endpoint that returns the same bytes from memory --------------------------------
  httplib::Server baseline;
  baseline.new_task_queue = [] { return new httplib::ThreadPool(64); };
  baseline.set_keep_alive_max_count(1000);
  baseline.set_tcp_nodelay(true);
  baseline.Get("/blob", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(trace, "application/octet-stream");
  });
  const int baseline_port = baseline.bind_to_any_port(kLoopback);
  std::thread baseline_thread([&] { baseline.listen_after_bind(); });
  while (!baseline.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  // --- the share server
  // ---------------------------------------------------------------------------------------
  int rc = 0;
  {
    auto store = gt::server::OpenLocalDirStore(store_dir);
    GT_ASSERT(store.ok());
    gt::server::ServerOptions options;
    options.bind = kLoopback;
    options.port = 0;
    options.max_upload = 64ull << 20;
    auto srv = gt::server::ShareServer::Create(std::move(*store), options);
    GT_ASSERT(srv.ok());
    GT_ASSERT((*srv)->Start().ok());
    const int port = (*srv)->port();
    if (!PinTo(args.client_cpus)) return 64;  // both servers' threads exist now and keep the server pinning

    httplib::Client setup(kLoopback, port);
    auto up = setup.Post("/api/traces", trace, "application/octet-stream");
    GT_ASSERT(up && up->status == 201);
    const std::string id = up->body.substr(up->body.find("\"id\":\"") + 6, 32);
    const std::string url = "/api/traces/" + id;
    auto check = setup.Get(url);
    GT_ASSERT(check && check->body == trace);
    std::printf("trace: %zu bytes, id %s\n\n", trace.size(), id.c_str());

    const size_t want = trace.size();
    auto download = [&](httplib::Client& c, const std::string& path) -> double {
      auto r = c.Get(path);
      if (!r || r->status != 200 || r->body.size() != want) return -1;
      return static_cast<double>(r->body.size());
    };
    // Warm both up (page cache, connections), then measure the baseline and the server back to back.
    Run("warm-up", baseline_port, args.threads, args.threads * 20, 10,
        [&](httplib::Client& c, int) { return download(c, "/blob"); });
    Run("warm-up", port, args.threads, args.threads * 20, 10,
        [&](httplib::Client& c, int) { return download(c, url); });
    Result base = Run("baseline: 1 MB from memory", baseline_port, args.threads, args.downloads,
                      args.max_seconds, [&](httplib::Client& c, int) { return download(c, "/blob"); });
    Print(base);
    Result get = Run("GET /api/traces/<id> (1 MB)", port, args.threads, args.downloads, args.max_seconds,
                     [&](httplib::Client& c, int) { return download(c, url); });
    Print(get);
    Result range =
        Run("GET 64 KiB Range of the trace", port, args.threads, args.downloads, args.max_seconds,
            [&](httplib::Client& c, int i) -> double {
              size_t off = (static_cast<size_t>(i) * 4096) % (want - 65536);
              auto r =
                  c.Get(url, {{"Range", "bytes=" + std::to_string(off) + "-" + std::to_string(off + 65535)}});
              if (!r || r->status != 206 || r->body.size() != 65536) return -1;
              return 65536;
            });
    Print(range);
    Result up_new = Run("POST distinct 1 MB traces", port, args.threads, distinct, args.max_seconds,
                        [&](httplib::Client& c, int i) -> double {
                          const std::string& body = upload_traces[static_cast<size_t>(i)];
                          auto r = c.Post("/api/traces", body, "application/octet-stream");
                          if (!r || r->status != 201) return -1;
                          return static_cast<double>(body.size());
                        });
    Print(up_new);
    Result up_dup = Run("POST same 1 MB trace (dedup)", port, args.threads, args.uploads, args.max_seconds,
                        [&](httplib::Client& c, int) -> double {
                          auto r = c.Post("/api/traces", trace, "application/octet-stream");
                          if (!r || r->status != 200) return -1;
                          return static_cast<double>(trace.size());
                        });
    Print(up_dup);
    std::printf("\nratio GET trace / baseline: %.2f (req/s), p99 %.2f ms vs %.2f ms\n",
                get.rps() / base.rps(), get.p99_ms, base.p99_ms);
    const bool target = get.rps() >= 1000 && get.p99_ms <= 50;
    std::printf("target (>= 1000 downloads/s, p99 <= 50 ms): %s\n", target ? "met" : "NOT met");
    if (get.errors + range.errors + up_new.errors + up_dup.errors > 0) rc = 1;
    (*srv)->Stop();
  }
  baseline.stop();
  baseline_thread.join();
  std::error_code ec;
  std::filesystem::remove_all(store_dir, ec);
  return rc;
}
