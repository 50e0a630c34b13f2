// The viewer index (.gtindex, docs/format.md "The viewer index"): a built TraceModel kept on disk so that a
// server maps it instead of loading the trace. Lane columns, LOD pyramids and counter samples are cut into
// blocks of 4,096 values, each compressed on its own (zstd, int64 columns as deltas) with its own checksum.
// The small tables (tracks, groups, interned names, detail tables), the counters and the precomputed
// aggregates (kernel table, per-name summaries) are decoded at open; a lane's blocks are decoded when a
// query first reads them, verified then, and kept in a cache of bounded size (IndexOpenOptions::cache_bytes),
// so a server's memory follows its requests, not the trace (the queries of index_query.h read lanes that
// way; Materialize() decodes everything for a caller that wants the whole model in memory).
//
// An index is a cache, never a source of truth: Open refuses one whose version, layout or source
// fingerprint differs (stale) or whose header, tables or directory fail a bounds or checksum test
// (damaged), and the caller builds it again from the trace (OpenOrBuildIndex). A block found damaged later
// fails the query that read it and sets damage(): the owner drops the index and rebuilds it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "gt/status.h"
#include "gt/viewer/load.h"
#include "gt/viewer/model.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"

namespace gt::viewer {

// Which trace an index was built from. Open compares both fields: an index of other bytes is stale.
// The server uses the trace id (a keyed hash of the bytes); `gtrace index` a CRC32C of the file.
struct IndexSource {
  uint64_t bytes = 0;
  std::string tag;  // at most kIndexTagMax bytes
  friend bool operator==(const IndexSource&, const IndexSource&) = default;
};
inline constexpr size_t kIndexTagMax = 64;

// "crc32c:<8 hex digits>" of `bytes`, with their size: the fingerprint of a trace file without an id.
IndexSource FingerprintBytes(std::span<const uint8_t> bytes);

// Aggregates computed once at build, so that a request never scans the events.
struct IndexSummaries {
  std::vector<KernelSummaryRow> kernels;  // KernelSummary(model): the kernel table, all devices
  std::vector<NameSummary> by_name[4];  // SummarizeByName(model, SummaryOf(k)) for kernels, copies, api, nvtx
  // The largest GPU idle gaps and what the CPU did meanwhile (ExplainIdleGaps(model, kIndexIdleGaps)), as the
  // server sends them: IdleGapsWithDevicesJson. It reads the events around each gap: done once, here.
  std::string idle_gaps_json;
  // The counter tables and what the timeline says of the profiled launches (CollectProfiledData, a scan of
  // the GPU lanes) as the server sends them: ProfiledDataJson. Empty when the trace has no counters.
  std::string profiled_json;
  // Per track, the distinct name ids of its events, ascending: track t's are track_names[track_name_ends[t -
  // 1] .. track_name_ends[t]). The search Filter hides a remote trace's tracks without a match by them. A
  // track of more than kTrackNamesMax distinct names lists kNone alone (not known: always shown).
  std::vector<uint64_t> track_name_ends;
  std::vector<StringId> track_names;
};
inline constexpr size_t kTrackNamesMax = size_t{1} << 16;
inline constexpr size_t kIndexIdleGaps = 5;  // the Summary tab's and `gtrace stats`' count

struct IndexWriteStats {
  uint64_t events = 0;       // timeline events + counter samples
  uint64_t index_bytes = 0;  // file size
  double summaries_s = 0;    // computing the aggregates
  double write_s = 0;        // encoding and writing (fsync included)
};

// Writes `model` as an index to `path` (PATH.tmp, fsync, rename: a reader sees the old file or the whole new
// one). The summaries are computed here.
// `threads` > 1 compresses blocks on that many threads (the file's bytes are the same).
Status WriteIndex(const TraceModel& model, const IndexSource& source, const std::string& path,
                  IndexWriteStats* stats = nullptr, unsigned threads = 1);
// The same bytes in memory (tests, the fuzz corpus).
std::vector<uint8_t> EncodeIndex(const TraceModel& model, const IndexSource& source);

namespace index_detail {
struct IndexBlocks;
}

struct IndexOpenOptions {
  // Off only for fuzzing: the fuzzer then reaches the structural checks behind the checksums (with them on,
  // any changed byte is refused before those run). Open checks the header, the section table, the small
  // tables and the block directory; each block's CRC32C is checked when the block is first decoded.
  bool verify_checksums = true;
  // Decoded blocks kept for later queries (least recently used dropped first; 256 MiB: a zoomed-out tile of
  // a 100 M-event trace reads blocks all along its lanes, docs/benchmarks.md). A request pins the blocks it
  // is reading, so the cache may briefly exceed this by a few blocks per request in flight.
  size_t cache_bytes = size_t{256} << 20;
};

class MappedIndex {
 public:
  // Refusals: kNotFound (no file), kUnsupported ("stale: ...": another version, layout or source),
  // kCorrupt / kTruncated ("damaged index: ..."); IndexNeedsRebuild says which of them a rebuild cures.
  // `expected` with an empty tag skips the source check.
  static StatusOr<std::unique_ptr<MappedIndex>> Open(const std::string& path, const IndexSource& expected,
                                                     IndexOpenOptions options = {});
  // Over bytes the caller keeps alive (tests, fuzzing; wasm has no mmap).
  static StatusOr<std::unique_ptr<MappedIndex>> FromBytes(std::span<const uint8_t> bytes,
                                                          const IndexSource& expected,
                                                          IndexOpenOptions options = {});
  ~MappedIndex();
  MappedIndex(const MappedIndex&) = delete;
  MappedIndex& operator=(const MappedIndex&) = delete;

  // The model's tables. Its lanes have their track, depth and side tables (long durations, return codes,
  // args) but no columns and no LOD levels: those are read through the block cache (index_blocks.h, the
  // queries of index_query.h) or decoded by Materialize. lane_size() gives a lane's event count. The model
  // has no collectives report (not kept in the index yet).
  const TraceModel& model() const { return *model_; }
  uint32_t lane_size(LaneId lane) const;
  // The whole model in memory, every block decoded and verified (gtrace-ui --index, tests): as much memory
  // as the loaded trace.
  StatusOr<std::unique_ptr<TraceModel>> Materialize() const;
  // The model's tables decoded again, lanes without columns: a scratch copy a query may fill (events).
  StatusOr<std::unique_ptr<TraceModel>> Shell() const;
  // Why a block read by a query was refused ("damaged index: ..."); empty while none was.
  std::string damage() const;
  // Decoded bytes held by the block cache now.
  size_t cached_bytes() const;
  const index_detail::IndexBlocks& blocks() const { return *blocks_; }
  const IndexSummaries& summaries() const { return summaries_; }
  const IndexSource& source() const { return source_; }
  uint64_t file_bytes() const { return bytes_.size(); }
  // model().flows ordered by target (indices into it): an event's incoming flows by binary search. Sorted on
  // first use, once (concurrent requests wait for it), then shared.
  std::span<const uint32_t> flows_by_target() const;

 private:
  MappedIndex() = default;
  static StatusOr<std::unique_ptr<MappedIndex>> Decode(std::unique_ptr<MappedIndex> index,
                                                       const IndexSource& expected, IndexOpenOptions options);
  std::unique_ptr<TraceModel> model_;
  std::unique_ptr<index_detail::IndexBlocks> blocks_;
  std::span<const uint8_t> model_section_;
  IndexSummaries summaries_;
  IndexSource source_;
  std::span<const uint8_t> bytes_;
  void* map_ = nullptr;  // munmap'ed last (after model_)
  mutable std::once_flag flows_by_target_once_;
  mutable std::vector<uint32_t> flows_by_target_;
  size_t map_bytes_ = 0;
};

// Whether a failed Open means "build it again" (stale or damaged) rather than an I/O error worth reporting.
bool IndexNeedsRebuild(const Status& open_status);

struct IndexBuildReport {
  bool rebuilt = false;      // the index was (re)built, not just opened
  std::string why;           // why it was rebuilt: "no index", or the refusal ("stale: ...", "damaged: ...")
  uint64_t trace_bytes = 0;  // the trace's size as read (a parts folder: as recovered)
  double load_s = 0;         // loading the trace (wall clock)
  std::string spill_dir;  // where the model's long columns were files (LoadOptions::spill_dir); empty: memory
  IndexWriteStats write;  // when rebuilt
};

// Whether a rebuild holds the model in memory or spills its long columns to files in the index's folder
// (LoadOptions::spill_dir; a spill_dir given in `load` is used as it is). kAuto spills when the trace's model
// would not fit in the memory available now (IndexBuildShouldSpill): an index of a trace bigger than RAM
// still builds, through the disk.
enum class IndexSpill : uint8_t { kAuto, kNever };
uint64_t MemoryAvailableForModels();  // MemAvailable, or the cgroup's limit less its use if lower
bool IndexBuildShouldSpill(uint64_t trace_bytes, uint64_t available_bytes);

// Opens `index_path` if it matches `source`; otherwise loads the trace from `trace_bytes`, writes the index
// and opens that. The loaded model is dropped before the index is opened. `write_threads` compress the
// index's blocks (0: as many as load.threads gives the load).
StatusOr<std::unique_ptr<MappedIndex>> OpenOrBuildIndex(std::span<const uint8_t> trace_bytes,
                                                        const IndexSource& source,
                                                        const std::string& index_path, LoadOptions load = {},
                                                        IndexBuildReport* report = nullptr,
                                                        IndexSpill spill = IndexSpill::kAuto,
                                                        unsigned write_threads = 0);

// The same for a trace file (a .gtrace, JSON, an Nsight export, a NAME.gtrace.parts folder), fingerprinted as
// `gtrace index build` does (FingerprintBytes), so either reuses the other's index. A plain file is mapped,
// not read into memory; only a rebuild loads its model. The native viewer's `gtrace-ui --index TRACE`.
StatusOr<std::unique_ptr<MappedIndex>> OpenOrBuildIndexFile(
    const std::string& trace_path, const std::string& index_path, LoadOptions load = {},
    IndexBuildReport* report = nullptr, IndexSpill spill = IndexSpill::kAuto, unsigned write_threads = 0);

}  // namespace gt::viewer
