#include "random_records.h"

#include <catch2/catch.hpp>

namespace gt::test {

void Randomize(Rng& r, uint32_t ns, ProcessRecord& x) {
  x.pid = r.U32(), x.parent_pid = r.U32(), x.name = r.Str(ns), x.command_line = r.Str(ns),
  x.start_ns = r.Ts(), x.end_ns = r.Ts(), x.exit_code = r.I32(), x.exit_kind = r.U8();
}
void Randomize(Rng& r, uint32_t ns, ThreadRecord& x) {
  x.pid = r.U32(), x.tid = r.U32(), x.name = r.Str(ns);
}
void Randomize(Rng& r, uint32_t ns, DeviceRecord& x) {
  x.device_id = r.U32(), x.pid = r.U32(), x.name = r.Str(ns), x.uuid = r.Str(ns), x.chip = r.Str(ns),
  x.cc_major = r.U8(), x.cc_minor = r.U8(), x.sm_count = r.U32(), x.sm_clock_khz = r.U32(),
  x.mem_clock_khz = r.U32(), x.mem_bus_width_bits = r.U32(), x.memory_bytes = r.U64(), x.l2_bytes = r.U64(),
  x.shared_mem_per_sm = r.U32(), x.shared_mem_per_block_max = r.U32(), x.regs_per_sm = r.U32(),
  x.max_warps_per_sm = r.U32(), x.max_blocks_per_sm = r.U32(), x.max_threads_per_block = r.U32(),
  x.warp_size = r.U32(), x.dram_bandwidth = r.F64(), x.l2_bandwidth = r.F64(), x.l1_bandwidth = r.F64();
  for (auto& f : x.peak_flops) f = r.F64();
  x.peak_source = r.U8();
}
void Randomize(Rng& r, uint32_t, ContextRecord& x) {
  x.pid = r.U32(), x.device_id = r.U32(), x.context_id = r.U32();
}
void Randomize(Rng& r, uint32_t ns, StreamRecord& x) {
  x.pid = r.U32(), x.device_id = r.U32(), x.context_id = r.U32(), x.stream_id = r.U32(), x.priority = r.I32(),
  x.is_default = r.U8(), x.name = r.Str(ns);
}
void Randomize(Rng& r, uint32_t ns, KernelRecord& x) {
  x.start = r.Ts(), x.end = r.Ts(), x.pid = r.U32(), x.device_id = r.U32(), x.context_id = r.U32(),
  x.stream_id = r.U32(), x.correlation_id = r.U32(), x.name = r.Str(ns);
  for (auto& v : x.grid) v = r.U32();
  for (auto& v : x.block) v = r.U32();
  for (auto& v : x.cluster) v = r.U32();
  x.registers_per_thread = r.U32(), x.static_shared_bytes = r.U32(), x.dynamic_shared_bytes = r.U32(),
  x.local_bytes_per_thread = r.U32(), x.launch_type = r.U8(), x.graph_id = r.U32(), x.graph_node_id = r.U64();
}
void Randomize(Rng& r, uint32_t, MemcpyRecord& x) {
  x.start = r.Ts(), x.end = r.Ts(), x.pid = r.U32(), x.device_id = r.U32(), x.context_id = r.U32(),
  x.stream_id = r.U32(), x.correlation_id = r.U32(), x.bytes = r.U64(), x.copy_kind = r.U8(),
  x.src_kind = r.U8(), x.dst_kind = r.U8(), x.is_async = r.U8(), x.peer_device_id = r.U32(),
  x.graph_id = r.U32();
}
void Randomize(Rng& r, uint32_t, MemsetRecord& x) {
  x.start = r.Ts(), x.end = r.Ts(), x.pid = r.U32(), x.device_id = r.U32(), x.context_id = r.U32(),
  x.stream_id = r.U32(), x.correlation_id = r.U32(), x.bytes = r.U64(), x.value = r.U32(),
  x.memory_kind = r.U8(), x.is_async = r.U8(), x.graph_id = r.U32();
}
void Randomize(Rng& r, uint32_t ns, ApiCallRecord& x) {
  x.start = r.Ts(), x.end = r.Ts(), x.pid = r.U32(), x.tid = r.U32(), x.correlation_id = r.U32(),
  x.callback_id = r.U32(), x.name = r.Str(ns), x.return_code = r.I32(), x.domain = r.U8();
}
void Randomize(Rng& r, uint32_t ns, NvtxRecord& x) {
  x.start = r.Ts(), x.end = r.Ts(), x.pid = r.U32(), x.tid = r.U32(), x.domain = r.Str(ns),
  x.message = r.Str(ns), x.category = r.U32(), x.color = r.U32(), x.payload = r.U64(),
  x.payload_kind = r.U8(), x.flags = r.U8();
}
void Randomize(Rng& r, uint32_t, SyncRecord& x) {
  x.start = r.Ts(), x.end = r.Ts(), x.pid = r.U32(), x.tid = r.U32(), x.device_id = r.U32(),
  x.context_id = r.U32(), x.stream_id = r.U32(), x.correlation_id = r.U32(), x.event_id = r.U32(),
  x.sync_kind = r.U8();
}
void Randomize(Rng& r, uint32_t, MemoryRecord& x) {
  x.timestamp = r.Ts(), x.pid = r.U32(), x.device_id = r.U32(), x.context_id = r.U32(), x.stream_id = r.U32(),
  x.correlation_id = r.U32(), x.address = r.U64(), x.bytes = r.U64(), x.op = r.U8(), x.memory_kind = r.U8(),
  x.is_async = r.U8();
}
void Randomize(Rng& r, uint32_t ns, OverheadRecord& x) {
  x.start = r.Ts(), x.end = r.Ts(), x.pid = r.U32(), x.tid = r.U32(), x.kind = r.Str(ns);
}
void Randomize(Rng& r, uint32_t ns, CounterDescriptor& x) {
  x.counter_id = r.U32(), x.pid = r.U32(), x.device_id = r.U32(), x.name = r.Str(ns), x.unit = r.Str(ns);
}
void Randomize(Rng& r, uint32_t, CounterSample& x) {
  x.counter_id = r.U32(), x.timestamp = r.Ts(), x.value = r.F64();
}
void Randomize(Rng& r, uint32_t ns, KernelMetricRecord& x) {
  x.pid = r.U32(), x.correlation_id = r.U32(), x.kernel_name = r.Str(ns), x.launch_ordinal = r.U32(),
  x.metric = r.Str(ns), x.value = r.F64(), x.flags = r.U8();
}
void Randomize(Rng& r, uint32_t ns, StallSample& x) {
  x.pid = r.U32(), x.correlation_id = r.U32(), x.kernel_name = r.Str(ns), x.launch_ordinal = r.U32(),
  x.reason = r.Str(ns), x.pc_offset = r.U64(), x.source_file = r.Str(ns), x.source_line = r.U32(),
  x.count = r.U64();
}
void Randomize(Rng& r, uint32_t, FlowRecord& x) {
  x.flow_id = r.U64(), x.pid = r.U32(), x.src_kind = r.U16(), x.dst_kind = r.U16(), x.src_key = r.U64(),
  x.dst_key = r.U64();
}
void Randomize(Rng& r, uint32_t ns, LossRecord& x) {
  x.name = r.Str(ns), x.severity = r.U8(), x.pid = r.U32(), x.count = r.U64(), x.detail = r.Str(ns);
}

// ---- equality
// ---------------------------------------------------------------------------------------------------
#define EQ(f) \
  if (!(a.f == b.f)) return #f;
#define EQF(f) \
  if (!Bits(a.f, b.f)) return #f;
#define EQS(f) \
  if (s.a.Str(a.f) != s.b.Str(b.f)) return #f " (\"" + s.a.Str(a.f) + "\" vs \"" + s.b.Str(b.f) + "\")";

std::string Diff(const Strings& s, const ProcessRecord& a, const ProcessRecord& b) {
  EQ(pid)
  EQ(parent_pid) EQS(name) EQS(command_line) EQ(start_ns) EQ(end_ns) EQ(exit_code) EQ(exit_kind) return "";
}
std::string Diff(const Strings& s, const ThreadRecord& a, const ThreadRecord& b) {
  EQ(pid) EQ(tid) EQS(name) return "";
}
std::string Diff(const Strings& s, const DeviceRecord& a, const DeviceRecord& b) {
  EQ(device_id)
  EQ(pid)
  EQS(name)
  EQS(uuid)
  EQS(chip)
  EQ(cc_major)
  EQ(cc_minor) EQ(sm_count) EQ(sm_clock_khz) EQ(mem_clock_khz) EQ(mem_bus_width_bits) EQ(memory_bytes)
      EQ(l2_bytes) EQ(shared_mem_per_sm) EQ(shared_mem_per_block_max) EQ(regs_per_sm) EQ(max_warps_per_sm)
          EQ(max_blocks_per_sm) EQ(max_threads_per_block) EQ(warp_size) EQF(dram_bandwidth) EQF(l2_bandwidth)
              EQF(l1_bandwidth);
  for (size_t i = 0; i < kPrecisionCount; ++i)
    if (!Bits(a.peak_flops[i], b.peak_flops[i])) return "peak_flops[" + std::to_string(i) + "]";
  EQ(peak_source) return "";
}
std::string Diff(const Strings&, const ContextRecord& a, const ContextRecord& b) {
  EQ(pid) EQ(device_id) EQ(context_id) return "";
}
std::string Diff(const Strings& s, const StreamRecord& a, const StreamRecord& b) {
  EQ(pid) EQ(device_id) EQ(context_id) EQ(stream_id) EQ(priority) EQ(is_default) EQS(name) return "";
}
std::string Diff(const Strings& s, const KernelRecord& a, const KernelRecord& b) {
  EQ(start)
  EQ(end)
  EQ(pid)
  EQ(device_id)
  EQ(context_id)
  EQ(stream_id)
  EQ(correlation_id) EQS(name) EQ(grid) EQ(block) EQ(cluster) EQ(registers_per_thread) EQ(static_shared_bytes)
      EQ(dynamic_shared_bytes) EQ(local_bytes_per_thread) EQ(launch_type) EQ(graph_id)
          EQ(graph_node_id) return "";
}
std::string Diff(const Strings&, const MemcpyRecord& a, const MemcpyRecord& b) {
  EQ(start)
  EQ(end)
  EQ(pid)
  EQ(device_id)
  EQ(context_id)
  EQ(stream_id)
  EQ(correlation_id) EQ(bytes) EQ(copy_kind) EQ(src_kind) EQ(dst_kind) EQ(is_async) EQ(peer_device_id)
      EQ(graph_id) return "";
}
std::string Diff(const Strings&, const MemsetRecord& a, const MemsetRecord& b) {
  EQ(start)
  EQ(end)
  EQ(pid)
  EQ(device_id)
  EQ(context_id)
  EQ(stream_id) EQ(correlation_id) EQ(bytes) EQ(value) EQ(memory_kind) EQ(is_async) EQ(graph_id) return "";
}
std::string Diff(const Strings& s, const ApiCallRecord& a, const ApiCallRecord& b) {
  EQ(start)
  EQ(end) EQ(pid) EQ(tid) EQ(correlation_id) EQ(callback_id) EQS(name) EQ(return_code) EQ(domain) return "";
}
std::string Diff(const Strings& s, const NvtxRecord& a, const NvtxRecord& b) {
  EQ(start)
  EQ(end)
  EQ(pid)
  EQ(tid) EQS(domain) EQS(message) EQ(category) EQ(color) EQ(payload) EQ(payload_kind) EQ(flags) return "";
}
std::string Diff(const Strings&, const SyncRecord& a, const SyncRecord& b) {
  EQ(start)
  EQ(end)
  EQ(pid)
  EQ(tid) EQ(device_id) EQ(context_id) EQ(stream_id) EQ(correlation_id) EQ(event_id) EQ(sync_kind) return "";
}
std::string Diff(const Strings&, const MemoryRecord& a, const MemoryRecord& b) {
  EQ(timestamp)
  EQ(pid)
  EQ(device_id)
  EQ(context_id)
  EQ(stream_id) EQ(correlation_id) EQ(address) EQ(bytes) EQ(op) EQ(memory_kind) EQ(is_async) return "";
}
std::string Diff(const Strings& s, const OverheadRecord& a, const OverheadRecord& b) {
  EQ(start) EQ(end) EQ(pid) EQ(tid) EQS(kind) return "";
}
std::string Diff(const Strings& s, const CounterDescriptor& a, const CounterDescriptor& b) {
  EQ(counter_id) EQ(pid) EQ(device_id) EQS(name) EQS(unit) return "";
}
std::string Diff(const Strings&, const CounterSample& a, const CounterSample& b) {
  EQ(counter_id) EQ(timestamp) EQF(value) return "";
}
std::string Diff(const Strings& s, const KernelMetricRecord& a, const KernelMetricRecord& b) {
  EQ(pid) EQ(correlation_id) EQS(kernel_name) EQ(launch_ordinal) EQS(metric) EQF(value) EQ(flags) return "";
}
std::string Diff(const Strings& s, const StallSample& a, const StallSample& b) {
  EQ(pid)
  EQ(correlation_id)
  EQS(kernel_name)
  EQ(launch_ordinal) EQS(reason) EQ(pc_offset) EQS(source_file) EQ(source_line) EQ(count) return "";
}
std::string Diff(const Strings&, const FlowRecord& a, const FlowRecord& b) {
  EQ(flow_id) EQ(pid) EQ(src_kind) EQ(dst_kind) EQ(src_key) EQ(dst_key) return "";
}
std::string Diff(const Strings& s, const LossRecord& a, const LossRecord& b) {
  EQS(name) EQ(severity) EQ(pid) EQ(count) EQS(detail) return "";
}
#undef EQ
#undef EQF
#undef EQS

template <class R>
static std::string DiffList(const Strings& s, const char* what, const std::vector<R>& a,
                            const std::vector<R>& b, bool b_may_be_prefix) {
  if (b_may_be_prefix ? b.size() > a.size() : a.size() != b.size())
    return std::string(what) + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) +
           " records";
  for (size_t i = 0; i < b.size(); ++i) {
    std::string d = Diff(s, a[i], b[i]);
    if (!d.empty()) return std::string(what) + "[" + std::to_string(i) + "]." + d;
  }
  return "";
}

std::string DiffRecordLists(const TraceData& a, const TraceData& b, bool b_may_be_prefix) {
  Strings s{a, b};
  std::string d;
#define L(f) \
  if (!(d = DiffList(s, #f, a.f, b.f, b_may_be_prefix)).empty()) return d;
  L(processes)
  L(threads)
  L(devices)
  L(contexts)
  L(streams)
  L(kernels)
  L(memcpys) L(memsets) L(api_calls) L(nvtx) L(syncs) L(memory) L(overheads) L(counter_descriptors)
      L(counter_samples) L(kernel_metrics) L(stall_samples) L(flows)
#undef L
          return "";
}

std::string DiffTraces(const TraceData& a, const TraceData& b) {
  std::string d = DiffRecordLists(a, b, /*b_may_be_prefix=*/false);
  if (!d.empty()) return d;
  Strings s{a, b};
  if (!(d = DiffList(s, "losses", a.losses, b.losses, false)).empty()) return d;

  if (a.metadata.entries != b.metadata.entries) return "metadata.entries";
  if (a.metadata.clock_syncs.size() != b.metadata.clock_syncs.size()) return "metadata.clock_syncs.size";
  for (size_t i = 0; i < a.metadata.clock_syncs.size(); ++i)
    if (a.metadata.clock_syncs[i].realtime_ns != b.metadata.clock_syncs[i].realtime_ns ||
        a.metadata.clock_syncs[i].trace_ns != b.metadata.clock_syncs[i].trace_ns)
      return "metadata.clock_syncs[" + std::to_string(i) + "]";
  return "";
}

template <class R>
static void Fill(Rng& r, uint32_t ns, std::vector<R>& v, size_t n) {
  v.resize(n);
  for (auto& x : v) Randomize(r, ns, x);
}

TraceData RandomTrace(uint64_t seed, size_t n) {
  Rng r(seed);
  TraceData t;
  // Strings: empty, ASCII, UTF-8, embedded NUL, quotes and control characters, a long one.
  t.strings = {"",
               "cudaLaunchKernel",
               "void gemm<float>(float*, int)",
               "ünïcødé ✓",
               std::string("nul\0in", 6),
               "quote\" back\\slash \n\t\x01",
               std::string(5000, 'x')};
  for (int i = 0; i < 40; ++i) t.strings.push_back("s" + std::to_string(seed) + "_" + std::to_string(i));
  uint32_t ns = uint32_t(t.strings.size());
  t.metadata.entries = {{"command_line", "./app --flag"}, {"host", "node1"}, {"tool_version", "gtrace 0.1"}};
  t.metadata.clock_syncs = {{1'700'000'000'000'000'000, 12345}, {-5, INT64_MIN}};
  Fill(r, ns, t.processes, n), Fill(r, ns, t.threads, n), Fill(r, ns, t.devices, n),
      Fill(r, ns, t.contexts, n);
  Fill(r, ns, t.streams, n), Fill(r, ns, t.kernels, n), Fill(r, ns, t.memcpys, n), Fill(r, ns, t.memsets, n);
  Fill(r, ns, t.api_calls, n), Fill(r, ns, t.nvtx, n), Fill(r, ns, t.syncs, n), Fill(r, ns, t.memory, n);
  Fill(r, ns, t.overheads, n), Fill(r, ns, t.counter_descriptors, n), Fill(r, ns, t.counter_samples, n);
  Fill(r, ns, t.kernel_metrics, n), Fill(r, ns, t.stall_samples, n), Fill(r, ns, t.flows, n);
  Fill(r, ns, t.losses, n);
  return t;
}

std::string Encode(const TraceData& data, uint32_t max_records_per_chunk, bool finish) {
  std::string out;
  WriterOptions o;
  o.max_records_per_chunk = max_records_per_chunk;
  auto w = TraceWriter::Create(MakeStringSink(&out), o);
  REQUIRE(w.ok());
  REQUIRE(WriteTraceData(data, **w).ok());
  if (finish) REQUIRE((*w)->Finish().ok());
  return out;
}

Loaded Decode(const std::string& bytes) {
  Loaded l;
  auto r = ReadTrace({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, l.data);
  if (r.ok())
    l.report = *r;
  else
    l.status = r.status();
  return l;
}

}  // namespace gt::test
