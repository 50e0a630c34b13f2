#include <catch2/catch.hpp>

#include "launcher/launcher.h"

using namespace gt;
using namespace gt::launcher;

namespace {
StringId Add(TraceData& d, const std::string& s) {
  d.strings.push_back(s);
  return static_cast<StringId>(d.strings.size() - 1);
}
KernelRecord K(StringId name, Timestamp s, Timestamp e, uint32_t device = 0) {
  KernelRecord k;
  k.name = name;
  k.start = s;
  k.end = e;
  k.device_id = device;
  k.pid = 1;
  return k;
}
}  // namespace

TEST_CASE("summary: top kernels, copy totals, idle share, losses") {
  TraceData d;
  StringId a = Add(d, "big_kernel"), b = Add(d, "small_kernel");
  d.kernels = {K(a, 0, 100), K(a, 150, 250), K(b, 240, 260), K(b, 300, 310)};
  MemcpyRecord m;
  m.copy_kind = static_cast<uint8_t>(CopyKind::kHtoD);
  m.bytes = 1000;
  m.start = 400;
  m.end = 500;
  d.memcpys.push_back(m);
  LossRecord l;
  l.name = Add(d, "cupti_dropped_records");
  l.severity = static_cast<uint8_t>(Severity::kDataLoss);
  l.count = 5;
  d.losses.push_back(l);
  l.count = 7;
  d.losses.push_back(l);
  LossRecord w;
  w.name = Add(d, "cupti_second_client");
  w.severity = static_cast<uint8_t>(Severity::kWarning);
  w.detail = Add(d, "libkineto tried to subscribe");
  d.losses.push_back(w);

  TraceSummary s = Summarize(d, 1);
  CHECK(s.kernels == 4);
  CHECK(s.kernel_ns == 230);
  REQUIRE(s.top_kernels.size() == 1);
  CHECK(s.top_kernels[0].name == "big_kernel");
  CHECK(s.top_kernels[0].count == 2);
  CHECK(s.top_kernels[0].total_ns == 200);
  REQUIRE(s.copies.size() == 1);
  CHECK(s.copies[0].GBps() == Approx(10.0));
  // busy: [0,100] [150,260] [300,310] [400,500] = 100+110+10+100 = 320 of span 500
  CHECK(s.gpu_span_ns == 500);
  CHECK(s.gpu_busy_ns == 320);
  CHECK(s.gpu_idle_share() == Approx(0.36));
  REQUIRE(s.losses.size() == 1);
  CHECK(s.losses[0].find("12") != std::string::npos);
  REQUIRE(s.warnings.size() == 1);
  CHECK(s.warnings[0].find("libkineto") != std::string::npos);

  std::string text = FormatSummary(s, "out.gtrace", 2048);
  CHECK(text.find("big_kernel") != std::string::npos);
  CHECK(text.find("GPU idle: 36.0%") != std::string::npos);
  CHECK(text.find("DROPPED cupti_dropped_records: 12") != std::string::npos);
  CHECK(text.find("out.gtrace (2.00 KiB)") != std::string::npos);
}

TEST_CASE("summary: an empty trace summarizes without dividing by zero") {
  TraceData d;
  TraceSummary s = Summarize(d);
  CHECK(s.kernels == 0);
  CHECK(s.gpu_idle_share() == 0);
  CHECK_FALSE(FormatSummary(s, "x.gtrace", 0).empty());
}
