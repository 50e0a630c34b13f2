// Internal: the byte layout of the viewer index (docs/format.md "The viewer index") and the one list of what
// it holds. VisitModel / VisitSummaries name every field once, in file order; the writer's visitor encodes
// them (index_write.cc), the reader's decodes and bounds-checks them (index_read.cc), so the two cannot
// disagree. Appending or changing a field is an index version bump (common/src/format.h).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gt/index_format.h"
#include "gt/viewer/index.h"
#include "gt/viewer/model.h"

namespace gt::viewer::index_detail {

static_assert(std::endian::native == std::endian::little, "the index is little-endian and mapped as it is");

inline constexpr char kMagic[8] = {'G', 'T', 'I', 'D', 'X', '\r', '\n', '\x1a'};
inline constexpr size_t kHeaderBytes = 128;
inline constexpr size_t kSectionEntryBytes = 32;
inline constexpr size_t kMaxSections = 16;
inline constexpr size_t kAlign = 64;  // every section and every column starts at a multiple of this

// Header field offsets.
inline constexpr size_t kOffMajor = 8, kOffMinor = 10, kOffLayout = 12, kOffFileBytes = 16,
                        kOffSourceBytes = 24, kOffTagLen = 32, kOffTag = 33, kOffSectionCount = 104,
                        kOffTableCrc = 108, kOffHeaderCrc = 124;

enum SectionKind : uint32_t {
  kSectionModel = 1,      // VisitModel's small tables and the column references into kSectionColumns
  kSectionSummaries = 2,  // VisitSummaries: the precomputed kernel table and per-name summaries
  kSectionBlocks = 3,     // lane columns, LOD levels, counter samples: compressed blocks (index_blocks.h)
  kSectionDirectory = 4,  // per block: its offset in kSectionBlocks, compressed size, CRC32C
};

// The model structs the index stores as raw bytes (plain records of common/include/gt/model.h). Their sizes
// and alignments go into the layout key, so an index written by a build where any of them differs is stale.
uint32_t LayoutKey();

template <typename T>
inline T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
inline void Store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

inline constexpr uint64_t AlignUp(uint64_t v) {
  return (v + kAlign - 1) / kAlign * kAlign;
}

// Everything of a TraceModel but the collectives report. `v` provides: Pod(x) for one fixed-width scalar or
// enum, Str(s), Count(container, min_bytes_per_element) (sizes a container on decode, returns the count),
// Col(column) for a lane column in the blocks section (read block by block through the cache),
// Array(vector) for a vector of scalars there (decoded whole at open), Raw(vector) for a vector of plain
// records stored as their bytes.
template <class V, class M>
void VisitModel(V& v, M& m) {
  v.Pod(m.format);
  {
    auto& e = m.metadata.entries;
    const size_t n = v.Count(e, 8);
    for (size_t i = 0; i < n; ++i) v.Str(e[i].first), v.Str(e[i].second);
    v.Raw(m.metadata.clock_syncs);
  }
  auto& r = m.report;
  v.Pod(r.version_major), v.Pod(r.version_minor), v.Pod(r.segments), v.Pod(r.chunks_ok), v.Pod(r.chunks_lost),
      v.Pod(r.chunks_unknown), v.Pod(r.records), v.Pod(r.bytes_total), v.Pod(r.bytes_lost),
      v.Pod(r.truncated);
  v.Strs(r.problems);
  {
    const size_t n = v.Count(m.losses, 4 + 1 + 4 + 8 + 4);
    for (size_t i = 0; i < n; ++i) {
      auto& l = m.losses[i];
      v.Str(l.name), v.Pod(l.severity), v.Pod(l.pid), v.Pod(l.count), v.Str(l.detail);
    }
  }
  v.Strs(m.problems);
  v.Strs(m.strings);
  v.Array(m.name_counts);
  {
    const size_t n = v.Count(m.groups, 1 + 4 + 4 + 4 + 4 + 8);
    for (size_t i = 0; i < n; ++i) {
      auto& g = m.groups[i];
      v.Pod(g.kind), v.Str(g.name), v.Str(g.key), v.Pod(g.pid), v.Pod(g.device_id), v.Array(g.tracks);
    }
  }
  {
    const size_t n = v.Count(m.tracks, 64);
    for (size_t i = 0; i < n; ++i) {
      auto& t = m.tracks[i];
      v.Pod(t.kind), v.Pod(t.group), v.Str(t.name), v.Str(t.key), v.Pod(t.pid), v.Pod(t.tid),
          v.Pod(t.device_id), v.Pod(t.context_id), v.Pod(t.stream_id), v.Pod(t.counter), v.Pod(t.first_lane),
          v.Pod(t.lane_count), v.Pod(t.event_count), v.Pod(t.first_ns), v.Pod(t.last_ns),
          v.Pod(t.default_collapsed);
    }
  }
  {
    const size_t n = v.Count(m.lanes, 64);
    for (size_t i = 0; i < n; ++i) {
      auto& l = m.lanes[i];
      v.Pod(l.track), v.Pod(l.depth), v.Col(l.start), v.Col(l.dur), v.Col(l.name), v.Col(l.ref), v.Col(l.aux);
      v.Pairs(l.long_dur), v.Pairs(l.return_code), v.Pairs(l.args);
      const size_t levels = v.Count(l.lod, 16);
      for (size_t k = 0; k < levels; ++k) v.Col(l.lod[k]);
      v.Pod(l.aux_sorted);
    }
  }
  {
    const size_t n = v.Count(m.counters, 64);
    for (size_t i = 0; i < n; ++i) {
      auto& c = m.counters[i];
      v.Pod(c.name), v.Pod(c.unit), v.Pod(c.pid), v.Pod(c.device_id), v.Pod(c.source_id), v.Pod(c.track);
      v.Array(c.time), v.Array(c.value);
      const size_t levels = v.Count(c.levels, 16);
      for (size_t k = 0; k < levels; ++k) v.Pairs(c.levels[k]);
      v.Pod(c.min), v.Pod(c.max);
    }
  }
  {
    const size_t n = v.Count(m.flows, 16);
    for (size_t i = 0; i < n; ++i) {
      auto& f = m.flows[i];
      v.Pod(f.from.lane), v.Pod(f.from.index), v.Pod(f.to.lane), v.Pod(f.to.index);
    }
  }
  {
    const size_t n = v.Count(m.launch_configs, 64);
    for (size_t i = 0; i < n; ++i) {
      auto& c = m.launch_configs[i];
      v.Pod(c.name);
      for (auto& x : c.grid) v.Pod(x);
      for (auto& x : c.block) v.Pod(x);
      for (auto& x : c.cluster) v.Pod(x);
      v.Pod(c.registers_per_thread), v.Pod(c.static_shared_bytes), v.Pod(c.dynamic_shared_bytes),
          v.Pod(c.local_bytes_per_thread), v.Pod(c.graph_id), v.Pod(c.graph_node_id), v.Pod(c.launch_type);
    }
  }
  {
    const size_t n = v.Count(m.memcpys, 20);
    for (size_t i = 0; i < n; ++i) {
      auto& c = m.memcpys[i];
      v.Pod(c.bytes), v.Pod(c.peer_device_id), v.Pod(c.graph_id), v.Pod(c.copy_kind), v.Pod(c.src_kind),
          v.Pod(c.dst_kind), v.Pod(c.is_async);
    }
  }
  {
    const size_t n = v.Count(m.memsets, 18);
    for (size_t i = 0; i < n; ++i) {
      auto& c = m.memsets[i];
      v.Pod(c.bytes), v.Pod(c.value), v.Pod(c.graph_id), v.Pod(c.memory_kind), v.Pod(c.is_async);
    }
  }
  {
    const size_t n = v.Count(m.nvtx, 22);
    for (size_t i = 0; i < n; ++i) {
      auto& c = m.nvtx[i];
      v.Pod(c.domain), v.Pod(c.category), v.Pod(c.color), v.Pod(c.payload), v.Pod(c.payload_kind),
          v.Pod(c.flags);
    }
  }
  {
    const size_t n = v.Count(m.syncs, 21);
    for (size_t i = 0; i < n; ++i) {
      auto& c = m.syncs[i];
      v.Pod(c.device_id), v.Pod(c.context_id), v.Pod(c.stream_id), v.Pod(c.correlation_id), v.Pod(c.event_id),
          v.Pod(c.sync_kind);
    }
  }
  v.Raw(m.processes), v.Raw(m.threads), v.Raw(m.devices), v.Raw(m.streams);
  {
    const size_t n = v.Count(m.device_summaries, 64);
    for (size_t i = 0; i < n; ++i) {
      auto& d = m.device_summaries[i];
      v.Pod(d.device_id), v.Pod(d.group), v.Str(d.name), v.Pod(d.first_ns), v.Pod(d.last_ns),
          v.Pod(d.busy_ns), v.Pod(d.kernel_count), v.Pod(d.memcpy_count), v.Pod(d.memset_count),
          v.Pairs(d.largest_gaps);
    }
  }
  v.Raw(m.kernel_metrics), v.Raw(m.stall_samples), v.Raw(m.nvtx_args);
  v.Raw(m.nccl_colls), v.Raw(m.nccl_channels);
  v.Raw(m.cpu.node_parent), v.Raw(m.cpu.node_frame), v.Raw(m.cpu.node_kind), v.Raw(m.cpu.ts),
      v.Raw(m.cpu.pid), v.Raw(m.cpu.tid), v.Raw(m.cpu.stack), v.Raw(m.cpu.flags);
  v.Pod(m.first_ns), v.Pod(m.last_ns), v.Pod(m.event_count), v.Pod(m.sample_count);
}

template <class V, class S>
void VisitSummaries(V& v, S& s) {
  {
    const size_t n = v.Count(s.kernels, 68);
    for (size_t i = 0; i < n; ++i) {
      auto& r = s.kernels[i];
      v.Pod(r.name), v.Pod(r.count), v.Pod(r.total_ns), v.Pod(r.min_ns), v.Pod(r.max_ns), v.Pod(r.avg_ns),
          v.Pod(r.share), v.Pod(r.first_ns), v.Pod(r.last_ns);
    }
  }
  for (auto& rows : s.by_name) {
    const size_t n = v.Count(rows, 60);
    for (size_t i = 0; i < n; ++i) {
      auto& r = rows[i];
      v.Str(r.name), v.Pod(r.count), v.Pod(r.total_ns), v.Pod(r.min_ns), v.Pod(r.max_ns), v.Pod(r.avg_ns),
          v.Pod(r.share), v.Pod(r.bytes);
    }
  }
  v.Str(s.idle_gaps_json);  // 2.2
  v.Str(s.profiled_json);   // 2.3
  v.Raw(s.track_name_ends), v.Raw(s.track_names);
}

}  // namespace gt::viewer::index_detail
