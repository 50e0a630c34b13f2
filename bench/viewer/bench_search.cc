// Search on a remote trace (issue 17): what a server's what=search requests cost on a viewer index, in one
// run against a baseline measured in the same run (the page's ordinary request, a 1024-px tile of a GPU
// stream). For the most and the least frequent event names of the trace: the count answer (the names'
// match over the interned strings, no events read), and next-match steps walked forward from the trace's
// start, each request bounded by kSearchScanBudget names (a rare name's step takes several requests).
//
//   bench_search INDEX.gtindex [--steps N]
//
// Times are thread CPU time of the query in this process (JSON included; the build machine is shared), the
// block cache warm as it gets.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "gt/viewer/index.h"
#include "gt/viewer/index_query.h"

using namespace gt;
using namespace gt::viewer;

namespace {

// Thread CPU time: the build machine is shared, and a query is one thread's work.
double Wall() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

double RssMb() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  double rss = 0;
  char line[256];
  while (f && std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmRSS:", 6) == 0) rss = std::atof(line + 6) / 1024;
  if (f) std::fclose(f);
  return rss;
}

// A query value as the server's HTTP layer hands it over (decoded).
IndexAnswer Query(const MappedIndex& index, const std::string& what, QueryParams params, double* ms) {
  const double t0 = Wall();
  IndexAnswer a = AnswerIndexQuery(index, what, params);
  *ms = (Wall() - t0) * 1e3;
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_search INDEX.gtindex [--steps N]\n");
    return 64;
  }
  int steps = 50;
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--steps") == 0) steps = std::atoi(argv[++i]);
  double t0 = Wall();
  auto opened = MappedIndex::Open(argv[1], {});
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
    return 1;
  }
  const MappedIndex& index = **opened;
  const TraceModel& m = index.model();
  std::printf("index %s: %llu events, %zu lanes, %zu strings, opened in %.2f s\n", argv[1],
              (unsigned long long)m.event_count, m.lanes.size(), m.strings.size(), Wall() - t0);

  // Baseline: tiles of the busiest GPU stream along the trace at 1024 px (the page's request), cache warm.
  TrackId busiest = 0;
  for (TrackId t = 0; t < m.tracks.size(); ++t)
    if (m.tracks[t].lane_count && m.tracks[t].event_count > m.tracks[busiest].event_count) busiest = t;
  std::vector<double> tile_ms;
  for (int i = 0; i < 64; ++i) {
    const int64_t span = std::max<int64_t>(1000, m.span_ns() >> (i % 16));
    const int64_t a = m.first_ns + (m.span_ns() - span) / 2;
    double ms = 0;
    Query(index, "tiles",
          {{"track", std::to_string(busiest)},
           {"t0", std::to_string(a)},
           {"t1", std::to_string(a + span)},
           {"px", "1024"}},
          &ms);
    tile_ms.push_back(ms);
  }
  const double tile_p50 = Pct(tile_ms, 0.5), tile_p95 = Pct(tile_ms, 0.95);
  std::printf("baseline tile (1024 px, track %u): p50 %.2f ms, p95 %.2f ms\n", busiest, tile_p50, tile_p95);

  // The most and the least frequent names with events.
  StringId common = 0, rare = 0;
  for (StringId id = 1; id < m.strings.size(); ++id) {
    const uint32_t n = m.name_counts[id];
    if (!n) continue;
    if (!common || n > m.name_counts[common]) common = id;
    if (!rare || n < m.name_counts[rare]) rare = id;
  }
  for (StringId id : {common, rare}) {
    const std::string& q = m.strings[id];
    double count_ms = 0;
    const IndexAnswer c = Query(index, "search", {{"q", q}}, &count_ms);
    std::vector<double> req_ms, step_ms;
    std::vector<double> per_step;
    uint64_t examined_max = 0;
    int64_t t = m.first_ns;
    std::string lane, idx;
    int found = 0;
    const double rss0 = RssMb();
    for (int s = 0; s < steps; ++s) {
      int requests = 0;
      double total = 0;
      bool hit = false, end = false;
      while (!hit && !end) {
        QueryParams p{{"q", q}, {"dir", "next"}, {"t", std::to_string(t)}};
        if (!lane.empty()) p.push_back({"lane", lane}), p.push_back({"index", idx});
        double ms = 0;
        const IndexAnswer a = Query(index, "search", p, &ms);
        ++requests, total += ms, req_ms.push_back(ms);
        if (a.status != 200) {
          std::fprintf(stderr, "search: %s\n", a.body.c_str());
          return 1;
        }
        // The answer's fields, read without a JSON library:
        // "hit":{"end":..,"index":..,"key":..,"lane":..,"start":..}
        auto field = [&](const char* name) -> std::string {
          const size_t at = a.body.find(std::string("\"") + name + "\":");
          if (at == std::string::npos) return "";
          const size_t from = at + std::strlen(name) + 3;
          return a.body.substr(from, a.body.find_first_of(",}", from) - from);
        };
        examined_max =
            std::max<uint64_t>(examined_max, std::strtoull(field("examined").c_str(), nullptr, 10));
        if (a.body.find("\"hit\":null") == std::string::npos) {
          hit = true;
          lane = field("lane"), idx = field("index"), t = std::strtoll(field("start").c_str(), nullptr, 10);
        } else if (field("resume") != "null") {
          t = std::strtoll(field("resume").c_str(), nullptr, 10), lane.clear();
        } else {
          end = true;
        }
      }
      if (end) break;
      ++found;
      step_ms.push_back(total);
      per_step.push_back(requests);
    }
    const double mean_requests = per_step.empty() ? 0 : [&] {
      double s = 0;
      for (double r : per_step) s += r;
      return s / double(per_step.size());
    }();
    std::printf(
        "%-6s name (%u events, '%.40s'): count answer %.2f ms; %d steps found, %.1f requests/step, request "
        "p50 "
        "%.2f p95 %.2f max %.2f ms (%.1fx the tile p95), step p50 %.2f max %.2f ms, at most %llu names read "
        "a request, RSS +%.0f MB\n",
        id == common ? "common" : "rare", m.name_counts[id], q.c_str(), count_ms, found, mean_requests,
        Pct(req_ms, 0.5), Pct(req_ms, 0.95), Pct(req_ms, 1.0), Pct(req_ms, 0.95) / std::max(tile_p95, 1e-6),
        Pct(step_ms, 0.5), Pct(step_ms, 1.0), (unsigned long long)examined_max, RssMb() - rss0);
    (void)c;
  }
  // The worst case of a step: a name that occurs once, the whole trace between here and it. A search whose
  // names match no event (count claimed 1) walks the whole trace: every request spends the budget.
  {
    const Search nowhere = Search::FromMatches("nowhere", false, {}, 1, 1);
    std::vector<double> req_ms;
    int64_t t = m.first_ns;
    uint64_t names = 0;
    const double w0 = Wall();
    while (true) {
      const double q0 = Wall();
      const SearchStepResult r = IndexSearchStep(index, nowhere, true, t, {});
      req_ms.push_back((Wall() - q0) * 1e3);
      names += r.examined;
      if (!r.resume) break;
      t = r.resume_t;
    }
    std::printf(
        "worst step (the match at the far end): %zu requests of at most %llu names, request p50 %.1f max "
        "%.1f "
        "ms (%.1fx the tile p95), %.2f s for the whole trace (%.1f M names/s)\n",
        req_ms.size(), (unsigned long long)kSearchScanBudget, Pct(req_ms, 0.5), Pct(req_ms, 1.0),
        Pct(req_ms, 0.5) / std::max(tile_p95, 1e-6), Wall() - w0, double(names) / (Wall() - w0) / 1e6);
  }
  std::printf("RSS %.0f MB, block cache %.0f MB\n", RssMb(), double(index.cached_bytes()) / 1048576.0);
  return 0;
}
