// Writes the files of a small simulated distributed job for the browser tests: two hosts with one rank each
// (node-b's clock 3.2 ms off, its NTP 1.5 ms off), 40 all-reduces, rank 1 arriving 20 ms late at steps 5, 12
// and 27. The same shape as the merge and collectives unit tests (tests/viewer/sim_job.h), so the page's
// merge and straggler diagnosis are checked on data whose truth is known.
//
//   gt_job_traces OUT_DIR   (writes OUT_DIR/rank0.gtrace and OUT_DIR/rank1.gtrace)
#include <cstdio>
#include <fstream>
#include <string>

#include "sim_job.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gt_job_traces OUT_DIR\n");
    return 2;
  }
  using namespace gt::simjob;
  const SimHost a{"node-a", "boot-a"}, b{"node-b", "boot-b", 3'200'000, 0, 1'500'000};
  SimRank r0{0, 0, 2}, r1{1, 0, 2};
  r1.pid = 2000;
  for (SimRank* r : {&r0, &r1}) {
    r->collectives = 40, r->interval_ns = 50'000'000;
    r->straggle = {{5, 20'000'000}, {12, 20'000'000}, {27, 20'000'000}}, r->straggler = 1;
  }
  const std::pair<std::string, std::string> files[] = {{"rank0.gtrace", RankFile(a, {r0})},
                                                       {"rank1.gtrace", RankFile(b, {r1})}};
  for (const auto& [name, bytes] : files) {
    const std::string path = std::string(argv[1]) + "/" + name;
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "gt_job_traces: cannot write %s\n", path.c_str());
      return 1;
    }
  }
  return 0;
}
