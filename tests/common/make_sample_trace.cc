// make_sample_trace OUT [--truncate N]: writes the sample trace (optionally cut to N bytes) for the CLI
// tests.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sample_trace.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_sample_trace OUT [--truncate N]\n");
    return 64;
  }
  std::string bytes = gt::test::SampleTraceBytes();
  if (argc >= 4 && std::string(argv[2]) == "--truncate")
    bytes.resize(std::min<size_t>(bytes.size(), std::atoi(argv[3])));
  FILE* f = std::fopen(argv[1], "wb");
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
    std::perror(argv[1]);
    return 1;
  }
  return 0;
}
