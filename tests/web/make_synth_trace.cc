// A synthetic training-loop trace of about N events (tests/viewer/synth_trace.h) written as a .gtrace: the
// remote-trace browser test serves it through `gtrace serve`.
//   gt_synth_trace OUT.gtrace EVENTS
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gt/writer.h"
#include "synth_trace.h"
#include "writer_sink.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: gt_synth_trace OUT.gtrace EVENTS\n");
    return 64;
  }
  auto sink = gt::MakeFileSink(argv[1], /*overwrite=*/true);
  if (!sink.ok()) {
    std::fprintf(stderr, "cannot write %s: %s\n", argv[1], sink.status().ToString().c_str());
    return 1;
  }
  auto w = gt::TraceWriter::Create(std::move(*sink));
  if (!w.ok()) return 1;
  gt::synth::SynthOptions o;
  o.events = std::strtoull(argv[2], nullptr, 10);
  gt::synth::WriterSink ws(**w);
  const auto n = gt::synth::GenerateSynthTrace(ws, o);
  (void)n;
  const gt::Status st = (*w)->Finish();
  if (!st.ok() || !ws.ok()) {
    std::fprintf(stderr, "cannot write %s: %s\n", argv[1], st.ToString().c_str());
    return 1;
  }
  return 0;
}
