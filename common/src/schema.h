// Internal: the column layout of every record chunk, written once and used by the encoder, the decoder and
// the string-id remapper. Each Visit() call lists the fields of one struct in on-disk column order; a visitor
// decides what to do with each (encode, decode, remap). Appending a field = appending a column (a minor
// version bump, see format_upgrade.cc); never reorder.
//
// Column encodings (docs/format.md "Columns"):
//   Ts    zigzag varint of the delta from the previous value in the column
//   Dur   zigzag varint of (end - start); start is decoded first
//   Id    zigzag varint of the 32-bit wrapping delta from the previous value (ids repeat or grow slowly)
//   Id64  same with 64 bits
//   U32/U64/U16 plain varint; I32 zigzag varint; U8 one raw byte; F64 8 raw little-endian bytes
//   Str   varint StringId (segment-local on disk, global once decoded)
#pragma once

#include <type_traits>

#include "gt/model.h"

namespace gt::schema {

#define GT_REC(T)                                    \
  template <class V, class R>                        \
  requires std::is_same_v<std::remove_const_t<R>, T> \
  void Visit(V& v, R& r)

GT_REC(ProcessRecord) {
  v.Id(r.pid), v.Id(r.parent_pid), v.Str(r.name), v.Str(r.command_line), v.Ts(r.start_ns), v.Ts(r.end_ns),
      v.I32(r.exit_code), v.U8(r.exit_kind);
}
GT_REC(ThreadRecord) {
  v.Id(r.pid), v.Id(r.tid), v.Str(r.name);
}
GT_REC(DeviceRecord) {
  v.U32(r.device_id), v.U32(r.pid), v.Str(r.name), v.Str(r.uuid), v.Str(r.chip), v.U8(r.cc_major),
      v.U8(r.cc_minor), v.U32(r.sm_count), v.U32(r.sm_clock_khz), v.U32(r.mem_clock_khz),
      v.U32(r.mem_bus_width_bits), v.U64(r.memory_bytes), v.U64(r.l2_bytes), v.U32(r.shared_mem_per_sm),
      v.U32(r.shared_mem_per_block_max), v.U32(r.regs_per_sm), v.U32(r.max_warps_per_sm),
      v.U32(r.max_blocks_per_sm), v.U32(r.max_threads_per_block), v.U32(r.warp_size), v.F64(r.dram_bandwidth),
      v.F64(r.l2_bandwidth), v.F64(r.l1_bandwidth);
  for (auto& f : r.peak_flops) v.F64(f);
  v.U8(r.peak_source);
}
GT_REC(ContextRecord) {
  v.Id(r.pid), v.U32(r.device_id), v.U32(r.context_id);
}
GT_REC(StreamRecord) {
  v.Id(r.pid), v.U32(r.device_id), v.U32(r.context_id), v.U32(r.stream_id), v.I32(r.priority),
      v.U8(r.is_default), v.Str(r.name);
}
GT_REC(KernelRecord) {
  v.Ts(r.start), v.Dur(r.end, r.start), v.Id(r.pid), v.Id(r.device_id), v.Id(r.context_id), v.Id(r.stream_id),
      v.Id(r.correlation_id), v.Str(r.name);
  for (auto& x : r.grid) v.U32(x);
  for (auto& x : r.block) v.U32(x);
  for (auto& x : r.cluster) v.U32(x);
  v.U32(r.registers_per_thread), v.U32(r.static_shared_bytes), v.U32(r.dynamic_shared_bytes),
      v.U32(r.local_bytes_per_thread), v.U8(r.launch_type), v.Id(r.graph_id), v.Id64(r.graph_node_id);
}
GT_REC(MemcpyRecord) {
  v.Ts(r.start), v.Dur(r.end, r.start), v.Id(r.pid), v.Id(r.device_id), v.Id(r.context_id), v.Id(r.stream_id),
      v.Id(r.correlation_id), v.U64(r.bytes), v.U8(r.copy_kind), v.U8(r.src_kind), v.U8(r.dst_kind),
      v.U8(r.is_async), v.Id(r.peer_device_id), v.Id(r.graph_id);
}
GT_REC(MemsetRecord) {
  v.Ts(r.start), v.Dur(r.end, r.start), v.Id(r.pid), v.Id(r.device_id), v.Id(r.context_id), v.Id(r.stream_id),
      v.Id(r.correlation_id), v.U64(r.bytes), v.U32(r.value), v.U8(r.memory_kind), v.U8(r.is_async),
      v.Id(r.graph_id);
}
GT_REC(ApiCallRecord) {
  v.Ts(r.start), v.Dur(r.end, r.start), v.Id(r.pid), v.Id(r.tid), v.Id(r.correlation_id),
      v.U32(r.callback_id), v.Str(r.name), v.I32(r.return_code), v.U8(r.domain);
}
GT_REC(NvtxRecord) {
  v.Ts(r.start), v.Dur(r.end, r.start), v.Id(r.pid), v.Id(r.tid), v.Str(r.domain), v.Str(r.message),
      v.U32(r.category), v.U32(r.color), v.U64(r.payload), v.U8(r.payload_kind), v.U8(r.flags);
}
GT_REC(SyncRecord) {
  v.Ts(r.start), v.Dur(r.end, r.start), v.Id(r.pid), v.Id(r.tid), v.Id(r.device_id), v.Id(r.context_id),
      v.Id(r.stream_id), v.Id(r.correlation_id), v.Id(r.event_id), v.U8(r.sync_kind);
}
GT_REC(MemoryRecord) {
  v.Ts(r.timestamp), v.Id(r.pid), v.Id(r.device_id), v.Id(r.context_id), v.Id(r.stream_id),
      v.Id(r.correlation_id), v.Id64(r.address), v.U64(r.bytes), v.U8(r.op), v.U8(r.memory_kind),
      v.U8(r.is_async);
}
GT_REC(OverheadRecord) {
  v.Ts(r.start), v.Dur(r.end, r.start), v.Id(r.pid), v.Id(r.tid), v.Str(r.kind);
}
GT_REC(CounterDescriptor) {
  v.U32(r.counter_id), v.Id(r.pid), v.Id(r.device_id), v.Str(r.name), v.Str(r.unit);
}
GT_REC(CounterSample) {
  v.Id(r.counter_id), v.Ts(r.timestamp), v.F64(r.value);
}
GT_REC(KernelMetricRecord) {
  v.Id(r.pid), v.Id(r.correlation_id), v.Str(r.kernel_name), v.U32(r.launch_ordinal), v.Str(r.metric),
      v.F64(r.value), v.U8(r.flags);
}
GT_REC(StallSample) {
  v.Id(r.pid), v.Id(r.correlation_id), v.Str(r.kernel_name), v.Id(r.launch_ordinal), v.Str(r.reason),
      v.Id64(r.pc_offset), v.Str(r.source_file), v.U32(r.source_line), v.U64(r.count);
}
GT_REC(FlowRecord) {
  v.Id64(r.flow_id), v.Id(r.pid), v.U16(r.src_kind), v.U16(r.dst_kind), v.Id64(r.src_key), v.Id64(r.dst_key);
}
GT_REC(LossRecord) {
  v.Str(r.name), v.U8(r.severity), v.Id(r.pid), v.U64(r.count), v.Str(r.detail);
}

#undef GT_REC

// Record kind <-> struct, for the dispatch tables in the writer and the reader.
template <class R>
struct KindOf;
#define GT_KIND(T, K)                                   \
  template <>                                           \
  struct KindOf<T> {                                    \
    static constexpr RecordKind kValue = RecordKind::K; \
  };
GT_KIND(ProcessRecord, kProcess)
GT_KIND(ThreadRecord, kThread)
GT_KIND(DeviceRecord, kDevice)
GT_KIND(ContextRecord, kContext)
GT_KIND(StreamRecord, kStream)
GT_KIND(KernelRecord, kKernel)
GT_KIND(MemcpyRecord, kMemcpy)
GT_KIND(MemsetRecord, kMemset)
GT_KIND(ApiCallRecord, kApiCall)
GT_KIND(NvtxRecord, kNvtx)
GT_KIND(SyncRecord, kSync)
GT_KIND(MemoryRecord, kMemory)
GT_KIND(OverheadRecord, kOverhead)
GT_KIND(CounterDescriptor, kCounterDescriptor)
GT_KIND(CounterSample, kCounterSample)
GT_KIND(KernelMetricRecord, kKernelMetric)
GT_KIND(StallSample, kStallSample)
GT_KIND(FlowRecord, kFlow)
GT_KIND(LossRecord, kLoss)
#undef GT_KIND

// Calls f(Tag<R>{}) for every record struct, in chunk-flush order (entities before the events that use them).
template <class R>
struct Tag {
  using Type = R;
};
template <class F>
void ForEachRecordType(F&& f) {
  f(Tag<ProcessRecord>{}), f(Tag<ThreadRecord>{}), f(Tag<DeviceRecord>{}), f(Tag<ContextRecord>{}),
      f(Tag<StreamRecord>{}), f(Tag<CounterDescriptor>{}), f(Tag<KernelRecord>{}), f(Tag<MemcpyRecord>{}),
      f(Tag<MemsetRecord>{}), f(Tag<ApiCallRecord>{}), f(Tag<NvtxRecord>{}), f(Tag<SyncRecord>{}),
      f(Tag<MemoryRecord>{}), f(Tag<OverheadRecord>{}), f(Tag<CounterSample>{}), f(Tag<KernelMetricRecord>{}),
      f(Tag<StallSample>{}), f(Tag<FlowRecord>{}), f(Tag<LossRecord>{});
}

// Number of columns of R (arrays count one column per element).
struct ColumnCounter {
  uint32_t n = 0;
  template <class T>
  void Ts(T&) {
    ++n;
  }
  template <class T, class U>
  void Dur(T&, U&) {
    ++n;
  }
  template <class T>
  void Id(T&) {
    ++n;
  }
  template <class T>
  void Id64(T&) {
    ++n;
  }
  template <class T>
  void U16(T&) {
    ++n;
  }
  template <class T>
  void U32(T&) {
    ++n;
  }
  template <class T>
  void U64(T&) {
    ++n;
  }
  template <class T>
  void I32(T&) {
    ++n;
  }
  template <class T>
  void U8(T&) {
    ++n;
  }
  template <class T>
  void F64(T&) {
    ++n;
  }
  template <class T>
  void Str(T&) {
    ++n;
  }
};
template <class R>
uint32_t ColumnCount() {
  ColumnCounter c;
  R r{};
  Visit(c, r);
  return c.n;
}

}  // namespace gt::schema
