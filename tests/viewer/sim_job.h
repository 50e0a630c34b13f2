// A simulated distributed job for tests: hosts with their own clocks (offset, drift, NTP error), ranks that
// run one NCCL all-reduce per step with a compute kernel before it, a launch call and an NVTX step range
// around each, stragglers on chosen steps. Each host's file is what gcollect would write there.
// Free of Catch2: the browser tests' generator (tests/web/make_job_traces.cc) writes its rank files with it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "gt/model.h"
#include "gt/writer.h"
#include "synth_trace.h"

namespace gt::simjob {

inline constexpr int64_t kT0 = 1'000'000'000'000;            // the job's true start, ns
inline constexpr int64_t kWall = 1'700'000'000'000'000'000;  // wall clock at true time 0

struct SimHost {
  std::string name, boot;
  int64_t offset_ns = 0;  // local trace clock = true + offset + drift * (true - kT0)
  double drift = 0;
  int64_t wall_error_ns = 0;  // the host's NTP error: its wall anchors are off by this
  int64_t Local(int64_t t) const { return t + offset_ns + int64_t(drift * double(t - kT0)); }
};

struct SimRank {
  int32_t rank = 0, local_rank = 0, world = 2;
  // Straggling: at collective c the rank `straggler` arrives straggle[c] late, and every rank's end moves
  // with it.
  std::map<uint32_t, int64_t> straggle;
  int32_t straggler = -1;
  int32_t (*straggler_of)(uint32_t c) =
      nullptr;              // when set, who straggles at collective c (overrides straggler)
  int64_t late_end_ns = 0;  // the rank that arrived late ends this much later (NCCL's protocol latency)
  uint32_t pid = 1000;
  std::string job = "job-1";
  uint32_t collectives = 200;
  int64_t interval_ns = 5'000'000;  // one all-reduce every 5 ms
  int64_t jitter_ns = 1'000;        // how far apart ranks' ends of one collective lie
  int exit_kind = int(ExitKind::kExited), exit_code = 0;
  // NCCL's NVTX payloads (NCCL 2.19+, format 1.2): an ncclCommInitRankConfig range at start and an
  // ncclAllReduce range around each launch, with the fields NCCL attaches (comm hash, size, op).
  bool payloads = false;
  uint64_t comm = 0x5eedc0ffee000001ull;
  uint64_t bytes = 64ull << 20;
  // NCCL's profiler plugin (format 1.3): an nccl_coll record per collective, on the launching thread right
  // after the launch, with NCCL's sequence number c + plugin_seq_base; with channels, two nccl_channel
  // records inside the kernel.
  bool plugin = false, channels = false;
  uint64_t plugin_seq_base = 0;
  uint32_t skip = 0;  // the first `skip` collectives are missing from this rank's file (as with --delay)
};

// The true end of collective c (a straggler delays everyone's end) and this rank's (jittered) view of it.
inline int64_t Delay(uint32_t c, const SimRank& r) {
  auto it = r.straggle.find(c);
  return it == r.straggle.end() ? 0 : it->second;
}
inline int64_t TrueEnd(uint32_t c, const SimRank& r) {
  return kT0 + 10'000'000 + int64_t(c) * r.interval_ns + Delay(c, r);
}
inline int64_t Jitter(uint32_t c, const SimRank& r) {
  synth::Rng rng(c * 131 + r.rank * 7 + 1);
  return int64_t(rng.Below(uint32_t(2 * r.jitter_ns + 1))) - r.jitter_ns;
}

// A writer failure is a broken test setup, not something to test: stop with the reason.
inline void SimCheck(const Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "sim_job: %s: %s\n", what, s.ToString().c_str());
  std::abort();
}

// One rank's file, as gcollect on `host` would write it.
inline std::string RankFile(const SimHost& h, const std::vector<SimRank>& ranks, bool with_wall = true) {
  std::string out;
  auto w = TraceWriter::Create(MakeStringSink(&out));
  SimCheck(w.status(), "TraceWriter::Create");
  TraceWriter& tw = **w;
  TraceMetadata meta;
  meta.entries = {{"tool", "test"}, {"host", h.name}, {"boot_id", h.boot}};
  if (with_wall)
    for (int64_t t : {kT0, kT0 + 500'000'000, kT0 + 2'000'000'000})
      meta.clock_syncs.push_back({kWall + t + h.wall_error_ns, h.Local(t)});
  tw.SetMetadata(meta);
  const StringId allreduce =
      tw.Intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  const StringId gemm = tw.Intern("sm90_xmma_gemm_bf16");
  const StringId launch = tw.Intern("cudaLaunchKernel");
  std::vector<StringId> steps;
  for (int i = 0; i < 64; ++i) steps.push_back(tw.Intern("step " + std::to_string(i)));
  // NCCL's payload fields, as its schemas name them (src/include/nvtx_payload_schemas.h).
  auto arg = [&tw](const NvtxRecord& range, const char* name, NvtxArgKind kind, uint64_t value,
                   const char* text = nullptr) {
    NvtxArgRecord a;
    a.pid = range.pid, a.tid = range.tid, a.start = range.start;
    a.name = tw.Intern(name), a.kind = uint8_t(kind), a.value = value, a.text = text ? tw.Intern(text) : 0;
    tw.Add(a);
  };
  for (const SimRank& r : ranks) {
    ProcessRecord p;
    p.pid = r.pid;
    p.name = tw.Intern("python3");
    p.start_ns = h.Local(kT0);
    p.end_ns = h.Local(TrueEnd(r.collectives, r));
    p.exit_kind = uint8_t(r.exit_kind);
    p.exit_code = r.exit_code;
    p.host = tw.Intern(h.name);
    p.boot_id = tw.Intern(h.boot);
    p.job = tw.Intern(r.job);
    p.rank = r.rank, p.local_rank = r.local_rank, p.world_size = r.world;
    tw.Add(p);
    if (r.payloads) {
      NvtxRecord init;
      init.pid = r.pid, init.tid = r.pid, init.domain = tw.Intern("NCCL");
      init.message = tw.Intern("ncclCommInitRankConfig");
      init.start = h.Local(kT0 + 1'000'000), init.end = h.Local(kT0 + 3'000'000);
      tw.Add(init);
      arg(init, "NCCL communicator ID", NvtxArgKind::kUint, r.comm);
      arg(init, "No. of ranks", NvtxArgKind::kInt, uint64_t(r.world));
      arg(init, "Rank", NvtxArgKind::kInt, uint64_t(r.rank));
      arg(init, "CUDA device", NvtxArgKind::kInt, uint64_t(r.local_rank));
    }
    for (uint32_t c = r.skip; c < r.collectives; ++c) {
      const int64_t end = TrueEnd(c, r) + Jitter(c, r);
      KernelRecord g;  // compute before the collective; its length differs per rank (arrival skew)
      g.pid = r.pid, g.name = gemm, g.stream_id = 7, g.correlation_id = 2 * c + 1;
      g.start = h.Local(end - Delay(c, r) - 3'000'000 - 100'000 * r.rank);
      g.end = h.Local(end - Delay(c, r) - 1'500'000 - 100'000 * r.rank);
      tw.Add(g);
      KernelRecord k;
      k.pid = r.pid, k.name = allreduce, k.stream_id = 13, k.correlation_id = 2 * c + 2;
      const int64_t delay = Delay(c, r), arrival = end - delay - 1'200'000 + 30'000 * r.rank;
      const bool late = r.rank == (r.straggler_of ? r.straggler_of(c) : r.straggler);
      k.start = h.Local(late ? arrival + delay : arrival);
      k.end = h.Local(late && delay > 0 ? end + r.late_end_ns : end);
      tw.Add(k);
      ApiCallRecord api;  // its launch, so the process has a thread track
      api.pid = r.pid, api.tid = r.pid, api.name = launch, api.correlation_id = k.correlation_id;
      api.start = k.start - 20'000, api.end = k.start - 15'000;
      tw.Add(api);
      if (r.plugin) {  // NCCL's task event: right after the launch, on the launching thread
        NcclCollRecord n;
        n.pid = r.pid, n.tid = r.pid, n.start = api.end + 2'000, n.end = api.end + 5'000;
        n.comm_hash = r.comm, n.seq = c + r.plugin_seq_base, n.count = r.bytes / 4;
        n.func = tw.Intern("AllReduce"), n.datatype = tw.Intern("ncclFloat32");
        n.algo = tw.Intern("Ring"), n.proto = tw.Intern("LL");
        n.root = -1, n.rank = r.rank, n.nranks = r.world, n.n_channels = 2, n.n_warps = 16;
        n.kind = uint8_t(NcclOpKind::kColl);
        tw.Add(n);
        for (uint8_t ch = 0; r.channels && ch < 2; ++ch) {
          NcclChannelRecord cr;
          cr.pid = r.pid, cr.comm_hash = n.comm_hash, cr.seq = n.seq, cr.func = n.func, cr.channel = ch;
          cr.start = k.start + 1'000 + ch, cr.end = k.end - 1'000 + ch;
          tw.Add(cr);
        }
      }
      NvtxRecord step;  // one step per collective, around its launch
      step.pid = r.pid, step.tid = r.pid, step.message = steps[c % 64];
      step.start = api.start - 1'000, step.end = api.end + 1'000;
      tw.Add(step);
      if (r.payloads) {  // the ncclAllReduce call inside the step, around the launch
        NvtxRecord call;
        call.pid = r.pid, call.tid = r.pid, call.domain = tw.Intern("NCCL");
        call.message = tw.Intern("ncclAllReduce");
        call.start = api.start - 500, call.end = api.end + 500;
        tw.Add(call);
        arg(call, "NCCL communicator ID", NvtxArgKind::kUint, r.comm);
        arg(call, "Message size [bytes]", NvtxArgKind::kUint, r.bytes);
        arg(call, "Reduction operation", NvtxArgKind::kEnum, 0, "Sum");
      }
    }
  }
  SimCheck(tw.Finish(), "TraceWriter::Finish");
  return out;
}

}  // namespace gt::simjob
