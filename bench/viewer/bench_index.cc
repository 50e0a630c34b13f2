// Viewer index benchmark (issue 17): for the synthetic trace of bench_viewer at each size, in one run:
// the .gtrace load (the baseline), the index build (summaries + write, fsync included) with its throughput
// per core and its ratio to the load, index bytes per event and against the .gtrace size, the open (header,
// tables and block directory checked; blocks are checked when a tile first reads them), and tile answers
// (JSON included, lanes decoded through the block cache) over a scripted pan/zoom path.
//
//   bench_index [--sizes 1,10] [--dir DIR] [--tiles N] [--px PX] [--index PATH]
//
// CPU times are thread CPU time (the build machine is shared); the open and the write also report wall
// clock, which includes the disk.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "gt/viewer/builder.h"
#include "gt/viewer/index.h"
#include "gt/viewer/index_query.h"
#include "gt/viewer/load.h"
#include "gt/writer.h"
#include "synth_trace.h"
#include "writer_sink.h"

using namespace gt;
using namespace gt::viewer;

namespace {

double Cpu() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
double Wall() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A scripted path: zoom in by halves on a moving centre, then pan at the deepest zoom, over every
// stream/thread track in turn; each answer is the full JSON a server would send. Milliseconds per tile.
bool TilePath(const MappedIndex& index, int tiles, uint32_t px, std::vector<double>* ms, size_t* bytes_out) {
  const TraceModel& m = index.model();
  for (int i = 0; i < tiles; ++i) {
    const TrackId t = TrackId(i % m.tracks.size());
    const int zoom = (i / int(m.tracks.size())) % 24;
    const int64_t span = std::max<int64_t>(1000, m.span_ns() >> zoom);
    const int64_t t0 = m.first_ns + (m.span_ns() - span) / 2 + int64_t(i % 7) * span / 4;
    const double q0 = Wall();
    const IndexAnswer a = AnswerIndexQuery(index, "tiles",
                                           {{"track", std::to_string(t)},
                                            {"t0", std::to_string(t0)},
                                            {"t1", std::to_string(t0 + span)},
                                            {"px", std::to_string(px)}});
    ms->push_back((Wall() - q0) * 1e3);
    *bytes_out += a.body.size();
    if (a.status != 200 && a.status != 404) {
      std::fprintf(stderr, "tile: %s\n", a.body.c_str());
      return false;
    }
  }
  return true;
}

// VmRSS and VmHWM of this process, MB.
std::pair<double, double> Memory() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  double rss = 0, hwm = 0;
  char line[256];
  while (f && std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) rss = std::atof(line + 6) / 1024;
    if (std::strncmp(line, "VmHWM:", 6) == 0) hwm = std::atof(line + 6) / 1024;
  }
  if (f) std::fclose(f);
  return {rss, hwm};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<uint64_t> sizes = {1, 10};
  std::string dir = std::filesystem::temp_directory_path().string();
  int tiles = 400;
  uint32_t px = 1024;
  std::string open_only;  // --index PATH: open an index built elsewhere and run the tile path (no build)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (std::string s = argv[++i]; !s.empty();) {
        const size_t c = s.find(',');
        sizes.push_back(std::strtoull(s.substr(0, c).c_str(), nullptr, 10));
        s = c == std::string::npos ? "" : s.substr(c + 1);
      }
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--tiles" && i + 1 < argc) {
      tiles = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--index" && i + 1 < argc) {
      open_only = argv[++i];
    } else if (a == "--px" && i + 1 < argc) {
      px = uint32_t(std::clamp(std::atoi(argv[++i]), 1, int(kTileMaxPx)));
    } else {
      std::fprintf(stderr,
                   "usage: bench_index [--sizes 1,10] [--dir DIR] [--tiles N] [--px PX] [--index PATH]\n");
      return 64;
    }
  }
  if (!open_only.empty()) {
    const double o0 = Wall();
    auto index = MappedIndex::Open(open_only, {});
    if (!index.ok()) {
      std::fprintf(stderr, "%s\n", index.status().ToString().c_str());
      return 1;
    }
    const double open_wall = Wall() - o0;
    const auto [rss0, hwm0] = Memory();
    std::vector<double> ms;
    size_t bytes_out = 0;
    if (!TilePath(**index, tiles, px, &ms, &bytes_out)) return 1;
    std::sort(ms.begin(), ms.end());
    const auto [rss, hwm] = Memory();
    const uint64_t events = (*index)->model().event_count + (*index)->model().sample_count;
    std::printf(
        "%s: %llu events, %.2f bytes/event, open %.3f s (RSS %.0f MB); %d tiles: p50 %.3f ms, p95 %.3f ms,"
        " max %.3f ms; RSS %.0f MB, VmHWM %.0f MB, decoded blocks cached %.1f MB\n",
        open_only.c_str(), static_cast<unsigned long long>(events),
        double((*index)->file_bytes()) / double(std::max<uint64_t>(events, 1)), open_wall, rss0, tiles,
        ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 95 / 100)], ms.back(), rss, hwm,
        double((*index)->cached_bytes()) / 1e6);
    (void)hwm0;
    return 0;
  }
  std::printf("%-6s %10s %10s %12s %10s %12s %9s %9s %9s %10s %10s %10s\n", "size", "events", "load s",
              "build s", "build/load", "build ev/s", "gtrace B", "index B", "idx/gtr", "open s", "tile p50",
              "tile p95");
  for (uint64_t millions : sizes) {
    synth::SynthOptions o;
    o.events = millions * 1'000'000;
    std::string file;
    {
      auto w = TraceWriter::Create(MakeStringSink(&file));
      if (!w.ok()) return 1;
      synth::WriterSink ws(**w);
      synth::GenerateSynthTrace(ws, o);
      if (!(*w)->Finish().ok()) return 1;
    }
    const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(file.data()), file.size());
    const std::string path = dir + "/bench_index_" + std::to_string(millions) + "M.gtindex";

    LoadOptions load;
    load.threads = 1;
    double c0 = Cpu();
    auto model = LoadTrace(bytes, load);
    const double load_s = Cpu() - c0;
    if (!model.ok()) {
      std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
      return 1;
    }
    const uint64_t events = (*model)->event_count + (*model)->sample_count;
    IndexWriteStats ws;
    c0 = Cpu();
    const double w0 = Wall();
    const Status written = WriteIndex(**model, FingerprintBytes(bytes), path, &ws);
    const double build_s = Cpu() - c0, build_wall = Wall() - w0;
    if (!written.ok()) {
      std::fprintf(stderr, "%s\n", written.ToString().c_str());
      return 1;
    }
    model.value().reset();

    c0 = Cpu();
    const double o0 = Wall();
    auto index = MappedIndex::Open(path, {});
    const double open_s = Cpu() - c0, open_wall = Wall() - o0;
    if (!index.ok()) {
      std::fprintf(stderr, "%s\n", index.status().ToString().c_str());
      return 1;
    }
    std::vector<double> ms;
    size_t bytes_out = 0;
    const TraceModel& m = (*index)->model();
    if (!TilePath(**index, tiles, px, &ms, &bytes_out)) return 1;
    std::sort(ms.begin(), ms.end());
    const double p50 = ms[ms.size() / 2], p95 = ms[std::min(ms.size() - 1, ms.size() * 95 / 100)];
    const double ix = double((*index)->file_bytes());
    char label[16];
    std::snprintf(label, sizeof label, "%lluM", static_cast<unsigned long long>(millions));
    std::printf("%-6s %10llu %10.3f %12.3f %10.2f %12.3g %9.2f %9.2f %9.2f %10.3f %8.3fms %8.3fms\n", label,
                static_cast<unsigned long long>(events), load_s, build_s, build_s / load_s,
                double(events) / build_s, double(file.size()) / double(events), ix / double(events),
                ix / double(file.size()), open_s, p50, p95);
    std::printf(
        "       build: summaries %.3f s + write %.3f s (wall %.3f s, fsync included); open wall %.3f s;"
        " resident tables %.1f MB of %.1f MB, decoded blocks cached after the tiles %.1f MB; %d tiles of %u "
        "px,"
        " %.1f KB each on average\n",
        ws.summaries_s, ws.write_s, build_wall, open_wall, double(m.MemoryBytes()) / 1e6, ix / 1e6,
        double((*index)->cached_bytes()) / 1e6, tiles, px, double(bytes_out) / tiles / 1e3);
    std::fflush(stdout);
    index.value().reset();
    std::filesystem::remove(path);
  }
  return 0;
}
