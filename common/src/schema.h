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

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "format.h"
#include "gt/model.h"

namespace gt::schema {

#define GT_REC(T)                                    \
  template <class V, class R>                        \
  requires std::is_same_v<std::remove_const_t<R>, T> \
  void Visit(V& v, R& r)

GT_REC(ProcessRecord) {
  v.Id(r.pid), v.Id(r.parent_pid), v.Str(r.name), v.Str(r.command_line), v.Ts(r.start_ns), v.Ts(r.end_ns),
      v.I32(r.exit_code), v.U8(r.exit_kind);
  // 1.1
  v.Str(r.host), v.Str(r.boot_id), v.Str(r.job), v.I32(r.rank), v.I32(r.local_rank), v.I32(r.world_size);
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
GT_REC(NvtxArgRecord) {
  v.Ts(r.start), v.Id(r.pid), v.Id(r.tid), v.Str(r.name), v.U8(r.kind), v.U64(r.value), v.Str(r.text);
}
GT_REC(NcclCollRecord) {  // 1.3
  v.Ts(r.start), v.Dur(r.end, r.start), v.Id(r.pid), v.Id(r.tid), v.Id64(r.comm_hash), v.U64(r.seq),
      v.Str(r.func), v.U64(r.count), v.Str(r.datatype), v.I32(r.root), v.I32(r.rank), v.I32(r.nranks),
      v.Str(r.algo), v.Str(r.proto), v.U8(r.n_channels), v.U8(r.n_warps), v.U8(r.kind);
}
GT_REC(NcclChannelRecord) {  // 1.3
  v.Ts(r.start), v.Dur(r.end, r.start), v.Id(r.pid), v.Id64(r.comm_hash), v.U64(r.seq), v.Str(r.func),
      v.U8(r.channel);
}
GT_REC(CpuStackNodeRecord) {  // 1.4
  v.Id(r.pid), v.Id(r.node), v.Id(r.parent), v.Str(r.frame), v.U8(r.kind);
}
GT_REC(CpuSampleRecord) {  // 1.4
  v.Ts(r.timestamp), v.Id(r.pid), v.Id(r.tid), v.Id(r.stack), v.U8(r.flags);
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
GT_KIND(NvtxArgRecord, kNvtxArg)
GT_KIND(NcclCollRecord, kNcclColl)
GT_KIND(NcclChannelRecord, kNcclChannel)
GT_KIND(CpuStackNodeRecord, kCpuStackNode)
GT_KIND(CpuSampleRecord, kCpuSample)
#undef GT_KIND

// Calls f(Tag<R>{}) for every record struct, in chunk-flush order (entities before the events that use them).
template <class R>
struct Tag {
  using Type = R;
};
template <class F>
void ForEachRecordType(F&& f) {
#define GT_TAG(R, Method, field) f(Tag<R>{});
  GT_FOR_EACH_RECORD_TYPE(GT_TAG)
#undef GT_TAG
}

// A visitor that leaves every field alone: derive from it and define only the column types you act on (a
// derived method hides the base's template of the same name).
struct PassFields {
  template <class T>
  void Ts(T&) {}
  template <class T, class U>
  void Dur(T&, U&) {}
  template <class T>
  void Id(T&) {}
  template <class T>
  void Id64(T&) {}
  template <class T>
  void U16(T&) {}
  template <class T>
  void U32(T&) {}
  template <class T>
  void U64(T&) {}
  template <class T>
  void I32(T&) {}
  template <class T>
  void U8(T&) {}
  template <class T>
  void F64(T&) {}
  template <class T>
  void Str(T&) {}
};

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

// Largest encoding of one record (varints at 10 bytes): bounds how many records fit under kMaxChunkRawSize.
struct MaxBytes {
  uint32_t n = 0;
  template <class T>
  void Ts(T&) {
    n += 10;
  }
  template <class T, class U>
  void Dur(T&, U&) {
    n += 10;
  }
  template <class T>
  void Id(T&) {
    n += 10;
  }
  template <class T>
  void Id64(T&) {
    n += 10;
  }
  template <class T>
  void U16(T&) {
    n += 10;
  }
  template <class T>
  void U32(T&) {
    n += 10;
  }
  template <class T>
  void U64(T&) {
    n += 10;
  }
  template <class T>
  void I32(T&) {
    n += 10;
  }
  template <class T>
  void U8(T&) {
    n += 1;
  }
  template <class T>
  void F64(T&) {
    n += 8;
  }
  template <class T>
  void Str(T&) {
    n += 10;
  }
};
template <class R>
uint32_t MaxRecordBytes() {
  MaxBytes m;
  R r{};
  Visit(m, r);
  return m.n;
}

// ---- blocked column codec
// ------------------------------------------------------------------------------------ Records are
// encoded/decoded a block at a time, one column after another within the block: each column loop keeps its
// cursor and delta state in registers, and the block (kBlock records) stays in L1/L2 across columns.
inline constexpr size_t kBlock = 256;

// Field `f` of record 0 of a block; At(f, k) is the same field of record k.
template <class R, class T>
GT_INLINE T& At(T& f, size_t k) {
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
  return *reinterpret_cast<T*>(reinterpret_cast<Byte*>(&f) + k * sizeof(R));
}

struct EncodeColumn {
  format::ByteBuf buf;
  uint64_t prev = 0;  // delta state; restarts with every chunk so chunks decode independently
  enum Type : uint8_t { kVarint, kByte, kRaw8 } type = kVarint;
  // While every value after the first is the same (`rest`), the column writes no bytes: it only counts.
  // The first differing value writes the deferred ones (Materialize). Most columns of a chunk stay constant
  // (pid, device, grid.y, ...) and end as repeat columns without ever being written.
  bool lazy = true;
  // The last block's value lengths changed often: write the next one with WriteVarintFlat.
  bool mixed = false;
  uint32_t count = 0;  // values deferred while lazy
  uint64_t first = 0, rest = 0;

  void Put(uint64_t v) {
    if (type == kByte)
      buf.PutByte(uint8_t(v));
    else
      buf.PutVarint(v);
  }
  void Materialize() {
    lazy = false;
    if (count > 0) Put(first);
    for (uint32_t i = 1; i < count; ++i) Put(rest);
    count = 0;
  }
  void Reset() {
    buf.Clear();
    prev = 0;
    lazy = type != kRaw8;
    count = 0;
  }
};

// Column types, for the repeat-column check.
struct ColumnTypes {
  EncodeColumn* c;
  template <class T>
  void Ts(T&) {
    (c++)->type = EncodeColumn::kVarint;
  }
  template <class T, class U>
  void Dur(T&, U&) {
    (c++)->type = EncodeColumn::kVarint;
  }
  template <class T>
  void Id(T&) {
    (c++)->type = EncodeColumn::kVarint;
  }
  template <class T>
  void Id64(T&) {
    (c++)->type = EncodeColumn::kVarint;
  }
  template <class T>
  void U16(T&) {
    (c++)->type = EncodeColumn::kVarint;
  }
  template <class T>
  void U32(T&) {
    (c++)->type = EncodeColumn::kVarint;
  }
  template <class T>
  void U64(T&) {
    (c++)->type = EncodeColumn::kVarint;
  }
  template <class T>
  void I32(T&) {
    (c++)->type = EncodeColumn::kVarint;
  }
  template <class T>
  void U8(T&) {
    (c++)->type = EncodeColumn::kByte;
  }
  template <class T>
  void F64(T&) {
    (c++)->type = EncodeColumn::kRaw8;
  }
  template <class T>
  void Str(T&) {
    (c++)->type = EncodeColumn::kVarint;
  }
};

// Column types of R in schema order (EncodeColumn::Type values), for the reader's column checks.
template <class R>
const std::vector<uint8_t>& ColumnTypesOf() {
  static const std::vector<uint8_t> types = [] {
    std::vector<EncodeColumn> cols(ColumnCount<R>());
    ColumnTypes t{cols.data()};
    R r{};
    Visit(t, r);
    std::vector<uint8_t> out;
    for (const auto& c : cols) out.push_back(uint8_t(c.type));
    return out;
  }();
  return types;
}

// Number of varint terminators (bytes < 0x80) in [p, p + n): 8 bytes per step, no popcount instruction
// needed (wasm, baseline x86-64).
inline uint64_t CountVarintEnds(const uint8_t* p, size_t n) {
  constexpr uint64_t kLow = 0x0101010101010101ull;
  const size_t words = n / 8;
  uint64_t cont = 0;
  for (size_t w0 = 0; w0 < words; w0 += 255) {  // per-byte counters flushed before they can overflow
    const size_t w1 = std::min(words, w0 + 255);
    uint64_t acc = 0;
    for (size_t w = w0; w < w1; ++w) {
      uint64_t x;
      std::memcpy(&x, p + 8 * w, 8);
      acc += (x >> 7) & kLow;
    }
    const uint64_t pairs = (acc & 0x00ff00ff00ff00ffull) + ((acc >> 8) & 0x00ff00ff00ff00ffull);
    cont += (pairs * 0x0001000100010001ull) >> 48;  // 16-bit lanes: the sum (<= 2040) cannot overflow
  }
  for (size_t i = words * 8; i < n; ++i) cont += p[i] >> 7;
  return n - cont;
}

// If the encoded column is "X, then Y for every other record", returns true with X and Y (as varint values; a
// byte column's bytes are its values). Saves the bytes of constant columns (pid, device, grid.y, ...) and
// lets the decoder fill them without reading.
inline bool DetectRepeat(const EncodeColumn& col, uint64_t* x, uint64_t* y) {
  const uint8_t* p = col.buf.data();
  const size_t n = col.buf.size();
  if (col.type == EncodeColumn::kRaw8 || n < 3) return false;
  // The periodicity checks compare the column with itself shifted by one period (memcmp only reads, so the
  // overlap is fine): p[k] == p[k + period] for every k from the start of the repeated part.
  if (col.type == EncodeColumn::kByte) {
    if (std::memcmp(p + 1, p + 2, n - 2) != 0) return false;
    *x = p[0], *y = p[1];
    return true;
  }
  auto read = [&](size_t& i, uint64_t* v) {
    uint64_t r = 0;
    for (int s = 0; i < n && s < 64; s += 7) {
      uint8_t b = p[i++];
      r |= uint64_t(b & 0x7f) << s;
      if (b < 0x80) {
        *v = r;
        return true;
      }
    }
    return false;
  };
  size_t i = 0;
  if (!read(i, x)) return false;
  size_t y_start = i;
  if (!read(i, y)) return false;
  size_t ly = i - y_start;
  if ((n - y_start) % ly != 0) return false;
  return n - y_start == ly || std::memcmp(p + y_start, p + i, n - i) == 0;
}

// ORs every record's bytes, XOR the reference record's, into changed[0..sizeof(R)): a field whose bytes there
// are all zero holds the reference's value in every record.
template <class R>
GT_INLINE void ChangedBytes(const R* records, size_t n, const R& ref, uint8_t* changed) {
  // 16-byte vectors (SSE2 natively; scalar pairs where there is no SIMD): one register per vector of R.
  using V = uint64_t __attribute__((vector_size(16)));
  constexpr size_t kVecs = sizeof(R) / 16, kTail = sizeof(R) % 16;
  V acc[kVecs + 1] = {}, r[kVecs + 1] = {};
  std::memcpy(r, &ref, sizeof(R));
  for (size_t k = 0; k < n; ++k) {
    const char* b = reinterpret_cast<const char*>(records + k);
#pragma GCC unroll 16  // the accumulators stay in registers only when this loop is unrolled
    for (size_t v = 0; v < kVecs; ++v) {
      V x;
      std::memcpy(&x, b + 16 * v, 16);
      acc[v] |= x ^ r[v];
    }
    if constexpr (kTail > 0) {
      V x = {};
      std::memcpy(&x, b + 16 * kVecs, kTail);
      acc[kVecs] |= x ^ r[kVecs];
    }
  }
  std::memcpy(changed, acc, sizeof(R));
}

template <class R, bool kPdep = false>
struct BlockEncoder {
  size_t n;         // records in this block
  EncodeColumn* c;  // walks the columns in schema order
  const R* block = nullptr;
  // ChangedBytes() of the block against the chunk's second record (whose values are the lazy columns'
  // `rest`), or null. Lets a column that stays constant skip its per-value comparisons.
  const uint8_t* changed = nullptr;

  // A lazy column whose field holds the reference record's value in every record of the block (for a delta
  // column, a delta of 0): the block adds only a count.
  template <class T>
  GT_INLINE bool Unchanged(EncodeColumn& col, const T& f, bool delta) {
    if (!changed || !col.lazy || col.count < 2 || (delta && col.rest != 0)) return false;
    T d;
    std::memcpy(&d, changed + (reinterpret_cast<const char*>(&f) - reinterpret_cast<const char*>(block)),
                sizeof(T));
    if (d != T{}) return false;
    col.count += uint32_t(n);
    return true;
  }

  // Values of a lazy column are only compared until one differs; returns the index of the first record
  // still to be written (n when the whole block stayed constant). value(k) is called once per k, in order.
  template <class F>
  GT_INLINE size_t Defer(EncodeColumn& col, F& value) {
    size_t k = 0;
    for (; col.count < 2 && k < n; ++k) {
      const uint64_t v = value(k);
      (col.count == 0 ? col.first : col.rest) = v;
      ++col.count;
    }
    const uint64_t rest = col.rest;
    const size_t start = k;
    for (; k < n; ++k) {
      const uint64_t v = value(k);
      if (v != rest) [[unlikely]] {
        col.count += uint32_t(k - start);
        col.Materialize();
        col.Put(v);
        return k + 1;
      }
    }
    col.count += uint32_t(n - start);
    return n;
  }
  template <class T, class F>
  GT_INLINE void Loop(EncodeColumn& col, F&& value) {
    size_t k = 0;
    if (col.lazy) {
      k = Defer(col, value);
      if (k == n) return;
    }
    uint8_t* start = col.buf.Reserve((n - k) * 10);  // WriteVarintFlat's 8-byte stores stay inside
    uint8_t* p = start;
    // Length changes cost WriteVarint's branches a misprediction each; past 1 in 8 values the branch-free
    // writer is faster (as in the reader's choice of its bitmap decoder).
    size_t changes = 0, last = 0;
    const size_t values = n - k;
    if (col.mixed) {
      for (; k < n; ++k) {
        const size_t len = format::WriteVarintFlat<kPdep>(p, value(k));
        changes += len != last;
        last = len;
        p += len;
      }
    } else {
      for (; k < n; ++k) {
        const size_t len = format::WriteVarint(p, value(k));
        changes += len != last;
        last = len;
        p += len;
      }
    }
    col.mixed = changes * 8 > values;
    col.buf.Commit(size_t(p - start));
  }
  GT_INLINE void Ts(const int64_t& f) {
    EncodeColumn& col = *c++;
    if (Unchanged(col, f, true)) return;
    uint64_t prev = col.prev;
    Loop<int64_t>(col, [&](size_t k) {
      uint64_t v = uint64_t(At<R>(f, k));
      uint64_t z = format::Zig(int64_t(v - prev));
      prev = v;
      return z;
    });
    col.prev = prev;
  }
  GT_INLINE void Dur(const int64_t& end, const int64_t& start) {
    Loop<int64_t>(*c++, [&](size_t k) {
      return format::Zig(int64_t(uint64_t(At<R>(end, k)) - uint64_t(At<R>(start, k))));
    });
  }
  GT_INLINE void Id(const uint32_t& f) {
    EncodeColumn& col = *c++;
    if (Unchanged(col, f, true)) return;
    uint32_t prev = uint32_t(col.prev);
    Loop<uint32_t>(col, [&](size_t k) {
      uint32_t v = At<R>(f, k);
      uint64_t z = format::Zig(int32_t(v - prev));
      prev = v;
      return z;
    });
    col.prev = prev;
  }
  GT_INLINE void Id64(const uint64_t& f) {
    EncodeColumn& col = *c++;
    if (Unchanged(col, f, true)) return;
    uint64_t prev = col.prev;
    Loop<uint64_t>(col, [&](size_t k) {
      uint64_t v = At<R>(f, k);
      uint64_t z = format::Zig(int64_t(v - prev));
      prev = v;
      return z;
    });
    col.prev = prev;
  }
  GT_INLINE void U16(const uint16_t& f) {
    EncodeColumn& col = *c++;
    if (Unchanged(col, f, false)) return;
    Loop<uint16_t>(col, [&](size_t k) { return uint64_t(At<R>(f, k)); });
  }
  GT_INLINE void U32(const uint32_t& f) {
    EncodeColumn& col = *c++;
    if (Unchanged(col, f, false)) return;
    Loop<uint32_t>(col, [&](size_t k) { return uint64_t(At<R>(f, k)); });
  }
  GT_INLINE void U64(const uint64_t& f) {
    EncodeColumn& col = *c++;
    if (Unchanged(col, f, false)) return;
    Loop<uint64_t>(col, [&](size_t k) { return At<R>(f, k); });
  }
  GT_INLINE void Str(const StringId& f) {
    EncodeColumn& col = *c++;
    if (Unchanged(col, f, false)) return;
    Loop<StringId>(col, [&](size_t k) { return uint64_t(At<R>(f, k)); });
  }
  GT_INLINE void I32(const int32_t& f) {
    EncodeColumn& col = *c++;
    if (Unchanged(col, f, false)) return;
    Loop<int32_t>(col, [&](size_t k) { return format::Zig(At<R>(f, k)); });
  }
  GT_INLINE void U8(const uint8_t& f) {
    EncodeColumn& col = *c++;
    if (Unchanged(col, f, false)) return;
    size_t k = 0;
    if (col.lazy) {
      auto value = [&](size_t i) { return uint64_t(At<R>(f, i)); };
      k = Defer(col, value);
      if (k == n) return;
    }
    uint8_t* p = col.buf.Reserve(n - k);
    for (size_t i = k; i < n; ++i) p[i - k] = At<R>(f, i);
    col.buf.Commit(n - k);
  }
  GT_INLINE void F64(const double& f) {
    EncodeColumn& col = *c++;
    uint8_t* p = col.buf.Reserve(n * 8);
    for (size_t k = 0; k < n; ++k) std::memcpy(p + 8 * k, &At<R>(f, k), 8);
    col.buf.Commit(n * 8);
  }
};

// Marks the repeat columns whose field is constant from the second record on (plain values; deltas of 0):
// after the first block the decoder stamps them from a prototype record instead of a loop per column.
struct MarkFill {
  format::ColumnReader* c;
  uint32_t marked = 0;
  GT_INLINE void Mark(bool constant) {
    c->fill = c->repeat && constant;
    marked += c->fill;
    ++c;
  }
  template <class T>
  void Ts(T&) {
    Mark(c->repeat_rest == 0);
  }
  template <class T, class U>
  void Dur(T&, U&) {
    Mark(false);  // end = start + constant: not one value
  }
  template <class T>
  void Id(T&) {
    Mark(c->repeat_rest == 0);
  }
  template <class T>
  void Id64(T&) {
    Mark(c->repeat_rest == 0);
  }
  template <class T>
  void U16(T&) {
    Mark(true);
  }
  template <class T>
  void U32(T&) {
    Mark(true);
  }
  template <class T>
  void U64(T&) {
    Mark(true);
  }
  template <class T>
  void I32(T&) {
    Mark(true);
  }
  template <class T>
  void U8(T&) {
    Mark(true);
  }
  template <class T>
  void F64(T&) {
    Mark(true);
  }
  template <class T>
  void Str(T&) {
    Mark(true);
  }
};

// Decodes into records; column errors are sticky in each ColumnReader and checked once per chunk. kPext:
// varints of bitmap columns are packed with PEXT (format::FastPext()).
template <class R, bool kPext = false>
struct BlockDecoder {
  size_t n;
  format::ColumnReader* c;
  const StringId* smap;  // segment-local -> global; ids without a string (lost strings chunk) map to 0
  uint64_t smap_size;

  // kVarint: the column holds varints (it may have a terminator bitmap).
  template <bool kVarint = true, class F>
  GT_INLINE void Loop(format::ColumnReader& col, F&& store) {
    if (col.repeat) {
      if (col.fill) return;  // stamped from the prototype record
      size_t k = 0;
      if (col.repeat_next != col.repeat_rest && n > 0) {  // the first value of the chunk
        format::RepeatReader first{col.repeat_next, col.prev};
        store(0, first);
        col.prev = first.prev;
        col.repeat_next = col.repeat_rest;
        k = 1;
      }
      format::RepeatReader r{col.repeat_rest, col.prev};  // a constant: the per-value work hoists out
      for (; k < n; ++k) store(k, r);
      col.prev = r.prev;
      return;
    }
    if constexpr (kVarint) {
      if (col.ends) {
        format::MaskReader<kPext> r(col);
        for (size_t k = 0; k < n; ++k) store(k, r);
        col.p = r.p();
        col.prev = r.prev;
        col.bad |= r.bad;
        return;
      }
    }
    const uint8_t* limit = col.limit ? col.limit : col.end;
    if (limit - col.p >= ptrdiff_t(10 * n) && !col.bad) [[likely]] {
      format::UncheckedReader r{col.p, col.prev, false};
      for (size_t k = 0; k < n; ++k) store(k, r);
      col.p = r.p;
      col.prev = r.prev;
      if (r.bad || r.p > col.end) col.bad = true;  // the chunk is rejected; p stays inside `limit`
      return;
    }
    format::ColumnReader r = col;  // local copy: cursor and state live in registers
    for (size_t k = 0; k < n; ++k) store(k, r);
    col = r;
  }
  GT_INLINE void Ts(int64_t& f) {
    Loop(*c++, [&](size_t k, auto& r) {
      r.prev += uint64_t(format::Unzig(r.Varint()));
      At<R>(f, k) = int64_t(r.prev);
    });
  }
  GT_INLINE void Dur(int64_t& end, const int64_t& start) {
    Loop(*c++, [&](size_t k, auto& r) {
      At<R>(end, k) = int64_t(uint64_t(At<R>(start, k)) + uint64_t(format::Unzig(r.Varint())));
    });
  }
  GT_INLINE void Id(uint32_t& f) {
    Loop(*c++, [&](size_t k, auto& r) {
      r.prev = uint32_t(uint32_t(r.prev) + uint32_t(format::Unzig(r.Varint())));
      At<R>(f, k) = uint32_t(r.prev);
    });
  }
  GT_INLINE void Id64(uint64_t& f) {
    Loop(*c++, [&](size_t k, auto& r) {
      r.prev += uint64_t(format::Unzig(r.Varint()));
      At<R>(f, k) = r.prev;
    });
  }
  GT_INLINE void U16(uint16_t& f) {
    Loop(*c++, [&](size_t k, auto& r) { At<R>(f, k) = uint16_t(r.Varint()); });
  }
  GT_INLINE void U32(uint32_t& f) {
    Loop(*c++, [&](size_t k, auto& r) { At<R>(f, k) = uint32_t(r.Varint()); });
  }
  GT_INLINE void U64(uint64_t& f) {
    Loop(*c++, [&](size_t k, auto& r) { At<R>(f, k) = r.Varint(); });
  }
  GT_INLINE void I32(int32_t& f) {
    Loop(*c++, [&](size_t k, auto& r) { At<R>(f, k) = int32_t(format::Unzig(r.Varint())); });
  }
  GT_INLINE void U8(uint8_t& f) {
    Loop<false>(*c++, [&](size_t k, auto& r) { At<R>(f, k) = r.Byte(); });
  }
  GT_INLINE void F64(double& f) {
    Loop<false>(*c++, [&](size_t k, auto& r) { At<R>(f, k) = r.F64(); });
  }
  GT_INLINE void Str(StringId& f) {
    const StringId* map = smap;
    uint64_t size = smap_size;
    Loop(*c++, [&](size_t k, auto& r) {
      uint64_t v = r.Varint();
      At<R>(f, k) = v < size ? map[v] : 0;
    });
  }
};

}  // namespace gt::schema
