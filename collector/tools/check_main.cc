// gtrace_check TRACE [WORKLOAD]: validates a trace recorded from a kernels/ workload; exit 0 when it holds.
#include <cstdio>
#include <map>
#include <string>

#include "gt/reader.h"
#include "tools/check.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gtrace_check TRACE [WORKLOAD]\n");
    return 2;
  }
  auto bytes = gt::ReadFileBytes(argv[1]);
  if (!bytes.ok()) {
    std::fprintf(stderr, "gtrace_check: %s\n", bytes.status().ToString().c_str());
    return 2;
  }
  gt::TraceData data;
  auto report = gt::ReadTrace(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), data);
  if (!report.ok()) {
    std::fprintf(stderr, "gtrace_check: %s\n", report.status().ToString().c_str());
    return 2;
  }
  if (argc > 2 && std::string(argv[2]) == "--dump") {  // debugging aid: API histogram, NVTX, threads
    std::map<std::string, int> api;
    for (const auto& a : data.api_calls) api[data.Str(a.name) + (a.domain ? " [driver]" : "")]++;
    for (const auto& [n, c] : api) std::printf("api %6d %s\n", c, n.c_str());
    for (const auto& n : data.nvtx)
      std::printf("nvtx pid=%u tid=%u %lld..%lld flags=%u color=%08x payload=%llu dom='%s' '%s'\n", n.pid,
                  n.tid, (long long)n.start, (long long)n.end, n.flags, n.color,
                  (unsigned long long)n.payload, data.Str(n.domain).c_str(), data.Str(n.message).c_str());
    for (const auto& a : data.nvtx_args)
      std::printf("nvtx_arg pid=%u tid=%u start=%lld kind=%u '%s' = %llu '%s'\n", a.pid, a.tid,
                  (long long)a.start, a.kind, data.Str(a.name).c_str(), (unsigned long long)a.value,
                  data.Str(a.text).c_str());
    for (const auto& t : data.threads)
      std::printf("thread pid=%u tid=%u '%s'\n", t.pid, t.tid, data.Str(t.name).c_str());
    for (const auto& p : data.processes)
      std::printf("process pid=%u ppid=%u '%s' exit=%d kind=%u\n", p.pid, p.parent_pid,
                  data.Str(p.name).c_str(), p.exit_code, p.exit_kind);
    for (const auto& l : data.losses)
      std::printf("loss %s %llu sev=%u '%s'\n", data.Str(l.name).c_str(), (unsigned long long)l.count,
                  l.severity, data.Str(l.detail).c_str());
    for (const auto& d : data.devices)
      std::printf("device %s cc %u.%u sms %u clk %u kHz dram %.3g B/s fp32 %.3g bf16tc %.3g l2 %llu\n",
                  data.Str(d.name).c_str(), d.cc_major, d.cc_minor, d.sm_count, d.sm_clock_khz,
                  d.dram_bandwidth, d.peak_flops[1], d.peak_flops[7], (unsigned long long)d.l2_bytes);
    for (const auto& c : data.nccl_colls)  // NCCL's profiler plugin (format 1.3)
      std::printf(
          "nccl_coll pid=%u tid=%u kind=%s comm=%016llx seq=%llu %s count=%llu %s root=%d rank=%d/%d "
          "algo=%s proto=%s ch=%u warps=%u %lld..%lld\n",
          c.pid, c.tid, gt::NcclOpKindName(c.kind), (unsigned long long)c.comm_hash,
          (unsigned long long)c.seq, data.Str(c.func).c_str(), (unsigned long long)c.count,
          data.Str(c.datatype).c_str(), c.root, c.rank, c.nranks, data.Str(c.algo).c_str(),
          data.Str(c.proto).c_str(), c.n_channels, c.n_warps, (long long)c.start, (long long)c.end);
    for (const auto& c : data.nccl_channels)
      std::printf("nccl_channel pid=%u comm=%016llx seq=%llu %s ch=%u %lld..%lld\n", c.pid,
                  (unsigned long long)c.comm_hash, (unsigned long long)c.seq, data.Str(c.func).c_str(),
                  c.channel, (long long)c.start, (long long)c.end);
    std::printf("counters %zu samples %zu overheads %zu syncs %zu memory %zu streams %zu\n",
                data.counter_descriptors.size(), data.counter_samples.size(), data.overheads.size(),
                data.syncs.size(), data.memory.size(), data.streams.size());
    return 0;
  }
  gt::check::CheckReport r;
  gt::check::CheckWorkload(data, argc > 2 ? argv[2] : "", r);
  for (const auto& n : r.notes) std::printf("note: %s\n", n.c_str());
  for (const auto& f : r.failures) std::printf("FAIL: %s\n", f.c_str());
  std::printf("%s: %s\n", argv[1], r.ok() ? "ok" : "FAILED");
  return r.ok() ? 0 : 1;
}
