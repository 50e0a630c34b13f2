// gtrace merge -o OUT IN...: one trace for a distributed job from its per-rank / per-node files, placed on
// one clock (viewer/core merge.h says how), with a report of what was done per host.
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"
#include "gt/trace_data.h"
#include "gt/viewer/merge.h"
#include "gt/writer.h"

namespace gt::cli {

int CmdMerge(int argc, char** argv) {
  const char* kUsage =
      "Usage: gtrace merge -o OUT [--align MODE] [--force] IN.gtrace...\n\n"
      "Merges the traces of one distributed job (one file per rank, node or gcollect) into OUT.\n"
      "Files recorded during one boot of one host share a clock and are merged as they are; every other\n"
      "host is placed by its wall-clock anchors, then refined by matching NCCL collectives across ranks\n"
      "(the same collective ends within microseconds on every rank). Per host it prints the offset, the\n"
      "drift, the residual and how many collectives support them. Process ids that two hosts share are\n"
      "moved up by multiples of 2^22 in the later host.\n\n"
      "Options:\n"
      "  -o OUT            output file (required)\n"
      "  --align MODE      auto (default): as above\n"
      "                    collectives: place every input by collectives, even inputs of one host (to check\n"
      "                    the alignment against the truth; the offsets should then be near zero)\n"
      "                    wall: wall-clock anchors only;  none: trace clocks as recorded\n"
      "  --force           overwrite OUT if it exists\n"
      "  -h, --help        this help\n\n"
      "Inputs that cannot be read are left out with a message; damaged ones are merged as far as they "
      "read.\n\n";
  std::vector<std::string> paths;
  OutputArgs output;
  viewer::MergeOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (IsHelp(a)) {
      std::printf("%s%s", kUsage, kExitCodesHelp);
      return kExitOk;
    }
    std::string usage_error;
    if (output.Parse(argc, argv, &i, &usage_error)) {
      if (!usage_error.empty()) return UsageError("merge", usage_error);
    } else if (a == "--align" || a.rfind("--align=", 0) == 0) {
      std::string v = a == "--align" ? (i + 1 < argc ? argv[++i] : "") : a.substr(8);
      if (v == "auto")
        options.align = viewer::AlignMode::kAuto;
      else if (v == "collectives")
        options.align = viewer::AlignMode::kCollectives;
      else if (v == "wall")
        options.align = viewer::AlignMode::kWallClock;
      else if (v == "none")
        options.align = viewer::AlignMode::kNone;
      else
        return UsageError("merge", "bad --align '" + v + "' (auto, collectives, wall, none)");
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      return UsageError("merge", "unknown option '" + a + "'");
    } else {
      paths.push_back(a);
    }
  }
  const std::string& out_path = output.path;
  if (out_path.empty()) return UsageError("merge", "-o OUT is required");
  if (paths.empty()) return UsageError("merge", "no input traces");
  for (const auto& p : paths)
    if (p == out_path) return UsageError("merge", "output '" + out_path + "' is also an input");

  std::vector<std::string> bytes(paths.size());
  std::vector<viewer::MergeInput> inputs;
  for (size_t i = 0; i < paths.size(); ++i) {
    auto b = ReadFileBytes(paths[i]);
    if (!b.ok()) {
      std::fprintf(stderr, "gtrace merge: %s: %s (left out)\n", paths[i].c_str(),
                   b.status().message().c_str());
      continue;  // an empty input is reported unusable by the plan
    }
    bytes[i] = std::move(*b);
  }
  for (size_t i = 0; i < paths.size(); ++i)
    inputs.push_back({paths[i], std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes[i].data()),
                                                         bytes[i].size())});
  auto plan = viewer::PlanMerge(inputs, options);
  if (!plan.ok()) return Fail("merge", plan.status());

  if (Status free = output.CheckWritable(); !free.ok()) return Fail("merge", free);
  const std::string tmp = out_path + ".tmp";
  auto sink = MakeFileSink(tmp, /*overwrite=*/true);
  if (!sink.ok()) return Fail("merge", sink.status());
  auto writer = TraceWriter::Create(std::move(*sink));
  if (!writer.ok()) return Fail("merge", writer.status());
  uint64_t events = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!plan->inputs[i].usable) continue;
    TraceData data;  // one input at a time: memory follows the largest input, not the job
    auto fed = viewer::FeedMergeInput(*plan, i, inputs[i].bytes, data, 0);
    if (!fed.ok()) return Fail("merge", fed.status());
    events += data.EventCount();
    Status s = WriteTraceData(data, **writer);
    if (!s.ok()) return Fail("merge", s);
  }
  (*writer)->SetMetadata(viewer::MergedMetadata(*plan));
  Status s = (*writer)->Finish();
  if (!s.ok()) return Fail("merge", s);
  writer->reset();
  if (std::rename(tmp.c_str(), out_path.c_str()) != 0)
    return Fail("merge", IoError("cannot rename " + tmp + " to " + out_path));

  std::printf("merged %u of %zu inputs (%zu hosts, %llu events) into %s\n", plan->usable_inputs(),
              paths.size(), plan->hosts.size(), static_cast<unsigned long long>(events), out_path.c_str());
  std::printf("%s", viewer::FormatMergeReport(*plan).c_str());
  bool lossy = plan->usable_inputs() < paths.size();
  for (const auto& in : plan->inputs) lossy |= in.usable && !in.report.clean();
  return lossy ? kExitPartial : kExitOk;
}

}  // namespace gt::cli
