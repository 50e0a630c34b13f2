// gtrace diff [--top N] [--fail-above PCT] BEFORE AFTER: what changed between two traces of the same program
// (an optimization, a library upgrade, a regression hunt): GPU busy time per device, total kernel time, and
// the kernels, copies and API calls whose total time changed most. --fail-above makes it a CI gate.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli.h"
#include "gt/viewer/compare.h"
#include "gt/viewer/json.h"
#include "gt/viewer/load.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"
#include "load_options.h"

namespace gt::cli {

namespace {
constexpr int kExitRegression = 3;  // --fail-above: total kernel time grew by more than the threshold
}

int CmdDiff(int argc, char** argv) {
  const char* kUsage =
      "Usage: gtrace diff [--top N] [--fail-above PCT] [--align NAME[:N]] [--json] BEFORE AFTER\n\n"
      "Compares two traces of the same program: GPU busy time per device, total kernel time, then the\n"
      "kernels, memory copies and CUDA API calls whose total time changed most, matched by name (names "
      "found\n"
      "in one trace only are marked). Either file may be .gtrace, Chrome or Kineto JSON, plain or "
      "gzipped.\n\n"
      "Options:\n"
      "  --top N           rows per table (default 20, 0 = all)\n"
      "  --fail-above PCT  exit 3 when the total kernel time of AFTER exceeds BEFORE's by more than PCT "
      "percent\n"
      "                    (a regression gate for CI; the report is printed either way)\n"
      "  --align NAME[:N]  also a per-step summary: instances of NVTX range NAME paired by ordinal "
      "(duration\n"
      "                    and kernel time in each); the traces are aligned on its Nth instance (1-based,\n"
      "                    default 1). 'auto' picks a range name both traces have at least twice, on its\n"
      "                    2nd instance, as the viewer's compare does; 'start' aligns on the starts\n"
      "  --json            machine-readable output (every row; times in ns, change_pct null for new names)\n"
      "  -h, --help        this help\n\n";
  std::string paths[2];
  int npaths = 0;
  size_t top = 20;
  double fail_above = NAN;
  bool json = false;
  bool aligned = false;
  viewer::AlignRequest align_request;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (IsHelp(a)) {
      std::printf("%s%s            3 with --fail-above: kernel time grew by more than PCT.\n", kUsage,
                  kExitCodesHelp);
      return kExitOk;
    }
    if (a == "--json") {
      json = true;
    } else if (a == "--align") {
      if (i + 1 >= argc) return UsageError("diff", "--align needs a range name, NAME:N, auto or start");
      const std::string spec = argv[++i];
      aligned = true;
      if (spec != "auto") {
        auto r = viewer::ParseAlignSpec(spec);
        if (!r.ok()) return UsageError("diff", r.status().message());
        align_request = *r;
      }
    } else if (a == "--top" || a == "--fail-above") {
      if (i + 1 >= argc) return UsageError("diff", a + " needs a number");
      char* end = nullptr;
      const char* v = argv[++i];
      if (a == "--top") {
        long n = std::strtol(v, &end, 10);
        if (*end != '\0' || end == v || n < 0)
          return UsageError("diff", std::string("bad --top value '") + v + "'");
        top = n == 0 ? SIZE_MAX : size_t(n);
      } else {
        fail_above = std::strtod(v, &end);
        if (*end != '\0' || end == v || !std::isfinite(fail_above) || fail_above < 0)
          return UsageError("diff", std::string("bad --fail-above value '") + v + "' (a percentage >= 0)");
      }
    } else if (a.size() > 1 && a[0] == '-') {
      return UsageError("diff", "unknown option '" + a + "'");
    } else if (npaths < 2) {
      paths[npaths++] = a;
    } else {
      return UsageError("diff", "more than two files given");
    }
  }
  if (npaths < 2) return UsageError("diff", "needs two files: BEFORE AFTER");
  std::unique_ptr<viewer::TraceModel> models[2];
  for (int k = 0; k < 2; ++k) {
    auto m = viewer::LoadTraceFile(paths[k], CommandLoadOptions());
    if (!m.ok()) return Fail("diff", Status(m.status().code(), paths[k] + ": " + m.status().message()));
    models[k] = std::move(m).value();
  }
  viewer::Alignment alignment;
  std::vector<viewer::StepDelta> steps;
  if (aligned) {
    alignment = viewer::Align(*models[0], *models[1], align_request);
    steps = viewer::CompareSteps(*models[0], *models[1], alignment.name);
  }
  std::string out = json ? viewer::DiffJson(*models[0], paths[0], *models[1], paths[1],
                                            aligned ? &alignment : nullptr, aligned ? &steps : nullptr)
                         : viewer::DiffReport(*models[0], paths[0], *models[1], paths[1], top);
  if (aligned && !json) out += viewer::StepDeltaReport(alignment, steps, top == SIZE_MAX ? 0 : top);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!std::isnan(fail_above)) {
    auto kernel_ns = [](const viewer::TraceModel& m) {
      return double(viewer::TotalNs(viewer::SummarizeByName(m, viewer::SummaryOf::kKernels)));
    };
    const double change = viewer::PercentChange(kernel_ns(*models[0]), kernel_ns(*models[1]));
    if (change > fail_above) {
      char grew[64];
      if (std::isinf(change))
        std::snprintf(grew, sizeof grew, "from nothing");
      else
        std::snprintf(grew, sizeof grew, "by %.1f%%", change);
      std::fprintf(stderr, "gtrace diff: total kernel time grew %s (more than --fail-above %g%%)\n", grew,
                   fail_above);
      return kExitRegression;
    }
  }
  for (int k = 0; k < 2; ++k)
    if (viewer::HasDataLoss(*models[k])) {
      std::fprintf(stderr, "gtrace diff: %s loaded with losses: its totals miss what was lost\n",
                   paths[k].c_str());
      return kExitPartial;
    }
  return kExitOk;
}

}  // namespace gt::cli
