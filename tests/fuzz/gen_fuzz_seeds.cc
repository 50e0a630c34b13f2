// gen_fuzz_seeds DIR: writes a few small .gtrace files (clean, truncated, concatenated, one-record chunks) as
// the reader's seed corpus, so the committed tree holds no binary blobs.
#include <cstdio>
#include <string>

#include "sample_trace.h"

namespace {

bool Write(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

std::string SmallChunks() {
  std::string out;
  gt::WriterOptions o;
  o.max_records_per_chunk = 1;
  auto w = gt::TraceWriter::Create(gt::MakeStringSink(&out), o);
  if (!w.ok()) return out;
  (void)gt::test::WriteSampleTrace(**w);
  (void)(*w)->Finish();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gen_fuzz_seeds DIR\n");
    return 64;
  }
  std::string dir = argv[1];
  std::string sample = gt::test::SampleTraceBytes();
  std::string small = SmallChunks();
  bool ok = Write(dir + "/sample.gtrace", sample) && Write(dir + "/small_chunks.gtrace", small) &&
            Write(dir + "/truncated.gtrace", sample.substr(0, sample.size() * 2 / 3)) &&
            Write(dir + "/concatenated.gtrace", sample + small);
  if (!ok) std::perror(dir.c_str());
  return ok ? 0 : 1;
}
