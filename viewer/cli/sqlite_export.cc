// The SQLite export: schema, then every table from the model in one transaction through prepared statements.
//
// [SECTION] Statements
// [SECTION] Schema
// [SECTION] Tables
// [SECTION] Entry points
#include "sqlite_export.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gt/reader.h"
#include "gt/viewer/analysis.h"
#include "gt/viewer/profiled.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"

namespace gt::cli {

namespace {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Statements
// ---------------------------------------------------------------------------------------------------------------

Status SqlError(sqlite3* db, const std::string& what) {
  return Status(StatusCode::kInternal, what + ": " + sqlite3_errmsg(db));
}

Status Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "unknown error";
    sqlite3_free(err);
    return Status(StatusCode::kInternal, std::string("sqlite: ") + m);
  }
  return Status::Ok();
}

struct Null {};

// One prepared INSERT, reused for every row of its table.
class Insert {
 public:
  Insert(sqlite3* db, const char* sql, uint64_t* rows) : db_(db), rows_(rows) {
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK)
      status_ = SqlError(db, std::string("prepare ") + sql);
  }
  ~Insert() { sqlite3_finalize(stmt_); }
  Insert(const Insert&) = delete;
  Insert& operator=(const Insert&) = delete;

  template <typename... Args>
  void Row(const Args&... args) {
    if (!status_.ok()) return;
    int i = 1;
    (Bind(i++, args), ...);
    if (sqlite3_step(stmt_) != SQLITE_DONE) status_ = SqlError(db_, "insert");
    sqlite3_reset(stmt_);
    ++*rows_;
  }
  const Status& status() const { return status_; }

 private:
  void Bind(int i, Null) { sqlite3_bind_null(stmt_, i); }
  void Bind(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  void Bind(int i, std::string_view s) {
    sqlite3_bind_text(stmt_, i, s.data(), int(s.size()), SQLITE_STATIC);
  }
  void Bind(int i, const std::string& s) { Bind(i, std::string_view(s)); }
  void Bind(int i, const char* s) { Bind(i, std::string_view(s)); }
  template <typename T>
  void Bind(int i, const std::optional<T>& v) {
    if (v)
      Bind(i, *v);
    else
      sqlite3_bind_null(stmt_, i);
  }
  template <typename T>
  requires std::is_integral_v<T> || std::is_enum_v<T>
  void Bind(int i, T v) { sqlite3_bind_int64(stmt_, i, static_cast<int64_t>(v)); }

  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  uint64_t* rows_;
  Status status_ = Status::Ok();
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Schema
// ---------------------------------------------------------------------------------------------------------------

// Column names follow nsys's export where the table exists there (docs/sqlite.md lists the differences);
// globalPid/globalTid use nsys's packing, (pid << 24) | tid, so `globalTid >> 24` queries keep working.
constexpr const char* kSchema = R"sql(
CREATE TABLE META(name TEXT NOT NULL, value TEXT);
CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER(id INTEGER PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEM_KIND(id INTEGER PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE PROCESSES(globalPid INTEGER, pid INTEGER, parentPid INTEGER, name TEXT, commandLine TEXT,
  host TEXT, bootId TEXT, job TEXT, rank INTEGER, localRank INTEGER, worldSize INTEGER, start INTEGER,
  end INTEGER, exitCode INTEGER);
CREATE TABLE ThreadNames(nameId INTEGER, priority INTEGER, globalTid INTEGER);
CREATE TABLE THREADS(globalTid INTEGER, pid INTEGER, tid INTEGER, name TEXT);
CREATE TABLE TARGET_INFO_GPU(id INTEGER, pid INTEGER, name TEXT, uuid TEXT, chip TEXT, computeMajor INTEGER,
  computeMinor INTEGER, smCount INTEGER, clockRate INTEGER, memoryClockRate INTEGER, busWidth INTEGER,
  totalMemory INTEGER, l2CacheSize INTEGER, maxShmemPerBlock INTEGER, maxShmemPerSm INTEGER,
  maxRegistersPerSm INTEGER, maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER, maxThreadsPerBlock INTEGER,
  threadsPerWarp INTEGER, memoryBandwidth REAL);
CREATE TABLE DEVICE_ACTIVITY(deviceId INTEGER, name TEXT, start INTEGER, end INTEGER, spanNs INTEGER,
  busyNs INTEGER, idleNs INTEGER, idleShare REAL, kernels INTEGER, memcpys INTEGER, memsets INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
  shortName INTEGER, mangledName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER,
  blockY INTEGER, blockZ INTEGER, clusterX INTEGER, clusterY INTEGER, clusterZ INTEGER,
  registersPerThread INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER,
  localMemoryPerThread INTEGER, graphId INTEGER, graphNodeId INTEGER, launchType INTEGER, pid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER,
  copyKind INTEGER, srcKind INTEGER, dstKind INTEGER, dstDeviceId INTEGER, graphId INTEGER, isAsync INTEGER,
  nameId INTEGER, pid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER,
  value INTEGER, memKind INTEGER, graphId INTEGER, isAsync INTEGER, nameId INTEGER, pid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER, returnValue INTEGER, depth INTEGER, pid INTEGER, tid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER(start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER, returnValue INTEGER, depth INTEGER, pid INTEGER, tid INTEGER);
CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER, eventType INTEGER, category INTEGER,
  color INTEGER, text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,
  int64Value INTEGER, doubleValue REAL, depth INTEGER, kind TEXT, pid INTEGER, tid INTEGER);
CREATE TABLE KERNEL_COUNTERS(pid INTEGER, name TEXT, profiledLaunches INTEGER, timePerLaunchNs REAL,
  totalGpuTimeNs REAL, computePct REAL, memoryPct REAL, memoryLevel TEXT, solFromHardware INTEGER,
  issuePct REAL, flopsPerSecond REAL, mainPrecision TEXT, achievedOccupancyPct REAL,
  theoreticalOccupancyPct REAL, l1HitPct REAL, l2HitPct REAL, dramReadBytes REAL, dramWriteBytes REAL,
  topStall TEXT, topStallShare REAL, bottleneck TEXT, verdict TEXT, flaggedValues INTEGER, flags TEXT);
CREATE TABLE KERNEL_STALLS(pid INTEGER, name TEXT, reason TEXT, count REAL, perIssued REAL, share REAL,
  stallShare REAL);
CREATE TABLE IDLE_GAPS(id INTEGER PRIMARY KEY, deviceId INTEGER, device TEXT, start INTEGER, end INTEGER,
  duration INTEGER, diagnosis TEXT);
CREATE TABLE IDLE_GAP_ACTIVITY(gapId INTEGER, name TEXT, kind TEXT, overlapNs INTEGER);
CREATE TABLE LOSSES(name TEXT, severity INTEGER, pid INTEGER, count INTEGER, detail TEXT);
CREATE TABLE COUNTER_TRACKS(id INTEGER PRIMARY KEY, name TEXT, unit TEXT, pid INTEGER, deviceId INTEGER,
  sourceId INTEGER);
CREATE TABLE COUNTER_SAMPLES(counterId INTEGER, timestamp INTEGER, value REAL);
CREATE TABLE CPU_STACK_FRAMES(id INTEGER PRIMARY KEY, parentId INTEGER, frameId INTEGER, kind TEXT);
CREATE TABLE CPU_SAMPLES(id INTEGER PRIMARY KEY, start INTEGER NOT NULL, globalTid INTEGER, stackId INTEGER,
  flags INTEGER, pid INTEGER, tid INTEGER);
)sql";

// Views with names resolved, for people (and agents) who would rather not join StringIds by hand.
constexpr const char* kViews = R"sql(
CREATE VIEW KERNELS AS SELECT k.*, s.value AS name, k.end - k.start AS duration
  FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName;
CREATE VIEW COPIES AS
  SELECT 'memcpy' AS kind, c.start, c.end, c.end - c.start AS duration, c.deviceId, c.streamId, c.bytes,
         s.value AS name, c.pid FROM CUPTI_ACTIVITY_KIND_MEMCPY c JOIN StringIds s ON s.id = c.nameId
  UNION ALL
  SELECT 'memset', m.start, m.end, m.end - m.start, m.deviceId, m.streamId, m.bytes, s.value, m.pid
  FROM CUPTI_ACTIVITY_KIND_MEMSET m JOIN StringIds s ON s.id = m.nameId;
CREATE VIEW API_CALLS AS
  SELECT 'runtime' AS api, a.start, a.end, a.end - a.start AS duration, a.depth, a.pid, a.tid,
         a.correlationId, a.returnValue, s.value AS name
  FROM CUPTI_ACTIVITY_KIND_RUNTIME a JOIN StringIds s ON s.id = a.nameId
  UNION ALL
  SELECT 'driver', a.start, a.end, a.end - a.start, a.depth, a.pid, a.tid, a.correlationId, a.returnValue,
         s.value FROM CUPTI_ACTIVITY_KIND_DRIVER a JOIN StringIds s ON s.id = a.nameId;
CREATE VIEW NVTX AS SELECT n.*, n.end - n.start AS duration, d.value AS domain
  FROM NVTX_EVENTS n LEFT JOIN StringIds d ON d.id = n.domainId AND n.domainId != 0;
CREATE VIEW CPU_STACK_PATHS AS
  WITH RECURSIVE walk(stackId, nodeId, stackDepth) AS (
    SELECT id, id, 0 FROM CPU_STACK_FRAMES
    UNION ALL
    SELECT w.stackId, f.parentId, w.stackDepth + 1 FROM walk w JOIN CPU_STACK_FRAMES f ON f.id = w.nodeId
    WHERE f.parentId != 0)
  SELECT w.stackId, w.stackDepth, s.value AS frame, f.kind, f.id AS frameNodeId
  FROM walk w JOIN CPU_STACK_FRAMES f ON f.id = w.nodeId JOIN StringIds s ON s.id = f.frameId;
CREATE VIEW CPU_SAMPLE_FRAMES AS
  SELECT c.id AS sampleId, p.stackDepth, p.frame, p.kind, p.frameNodeId
  FROM CPU_SAMPLES c JOIN CPU_STACK_PATHS p ON p.stackId = c.stackId;
)sql";

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Tables
// ---------------------------------------------------------------------------------------------------------------

inline int64_t GlobalPid(uint32_t pid) {
  return int64_t(pid) << 24;
}
inline int64_t GlobalTid(uint32_t pid, uint32_t tid) {
  return GlobalPid(pid) | int64_t(tid & 0xFFFFFF);
}

// gtrace's CopyKind -> CUPTI_ACTIVITY_MEMCPY_KIND_* (what nsys stores in copyKind).
int CuptiCopyKind(uint8_t k) {
  switch (static_cast<CopyKind>(k)) {
    case CopyKind::kHtoD:
      return 1;
    case CopyKind::kDtoH:
      return 2;
    case CopyKind::kHtoA:
      return 3;
    case CopyKind::kAtoH:
      return 4;
    case CopyKind::kAtoA:
      return 5;
    case CopyKind::kAtoD:
      return 6;
    case CopyKind::kDtoA:
      return 7;
    case CopyKind::kDtoD:
      return 8;
    case CopyKind::kHtoH:
      return 9;
    case CopyKind::kPtoP:
      return 10;
    default:
      return 0;
  }
}

// A CUDA driver API call (cuLaunchKernel) rather than a runtime one (cudaLaunchKernel): the model keeps the
// name only, and the two APIs' prefixes tell them apart.
bool IsDriverApi(std::string_view name) {
  return name.size() > 2 && name[0] == 'c' && name[1] == 'u' && name.substr(0, 4) != "cuda";
}

// "void at::native::foo<float>(int, float*)" -> "foo": nsys's shortName (no return type, scope, template or
// arguments). Scanned from the end, so "(anonymous namespace)" and lambdas inside the name do not confuse it.
std::string ShortName(std::string_view n) {
  std::string_view s = n;
  auto strip_group = [&](char open, char close) {
    if (s.empty() || s.back() != close) return;
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == close) ++depth;
      if (s[i] == open && --depth == 0) {
        s = s.substr(0, i);
        return;
      }
    }
  };
  while (s.size() > 6 && s.substr(s.size() - 6) == " const") s.remove_suffix(6);
  strip_group('(', ')');
  strip_group('<', '>');
  int depth = 0;
  size_t cut = 0;
  for (size_t i = s.size(); i-- > 0;) {
    const char c = s[i];
    if (c == ')' || c == '>' || c == '}') ++depth;
    if ((c == '(' || c == '<' || c == '{') && depth > 0) --depth;
    if (depth == 0 && (c == ' ' || c == ':')) {
      cut = i + 1;
      break;
    }
  }
  s = s.substr(cut);
  return s.empty() ? std::string(n) : std::string(s);
}

struct Exporter {
  const viewer::TraceModel& m;
  sqlite3* db;
  uint64_t rows = 0;
  std::vector<std::string> extra_strings;                // interned after the model's (short names)
  std::unordered_map<StringId, StringId> short_name_of;  // kernel name -> its short name's id

  Status Run();
  Status Meta();
  Status Strings();
  Status ProcessesAndDevices();
  Status Events();
  Status Analyses();
  Status Counters();
  Status CpuSamples();

  StringId ShortNameId(StringId name) {
    auto [it, fresh] = short_name_of.try_emplace(name, 0);
    if (fresh) {
      std::string s = ShortName(m.Str(name));
      if (s == m.Str(name)) {
        it->second = name;
      } else {
        extra_strings.push_back(std::move(s));
        it->second = StringId(m.strings.size() + extra_strings.size() - 1);
      }
    }
    return it->second;
  }
};

Status Exporter::Meta() {
  Insert ins(db, "INSERT INTO META VALUES(?,?)", &rows);
  ins.Row("gtrace_sqlite_schema_version", std::to_string(kSqliteSchemaVersion));
  ins.Row("gtrace_format_version", FormatVersionString());
  ins.Row("source_format", viewer::SourceFormatName(m.format));
  ins.Row("events", std::to_string(m.event_count));
  ins.Row("counter_samples", std::to_string(m.sample_count));
  ins.Row("first_ns", std::to_string(m.first_ns));
  ins.Row("last_ns", std::to_string(m.last_ns));
  ins.Row("duration_ns", std::to_string(m.span_ns()));
  ins.Row("data_loss", viewer::HasDataLoss(m) ? "1" : "0");
  for (const auto& [k, v] : m.metadata.entries) ins.Row("metadata." + k, v);
  return ins.status();
}

Status Exporter::Strings() {
  Insert ins(db, "INSERT INTO StringIds VALUES(?,?)", &rows);
  for (size_t i = 0; i < m.strings.size(); ++i) ins.Row(i, m.strings[i]);
  for (size_t i = 0; i < extra_strings.size(); ++i) ins.Row(m.strings.size() + i, extra_strings[i]);
  Insert op(db, "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(?,?,?)", &rows);
  const char* kOps[][2] = {
      {"UNKNOWN", "Unknown"},      {"HTOD", "Host-to-Device"},  {"DTOH", "Device-to-Host"},
      {"HTOA", "Host-to-Array"},   {"ATOH", "Array-to-Host"},   {"ATOA", "Array-to-Array"},
      {"ATOD", "Array-to-Device"}, {"DTOA", "Device-to-Array"}, {"DTOD", "Device-to-Device"},
      {"HTOH", "Host-to-Host"},    {"PTOP", "Peer-to-Peer"}};
  for (int i = 0; i < 11; ++i) op.Row(i, std::string("CUPTI_ACTIVITY_MEMCPY_KIND_") + kOps[i][0], kOps[i][1]);
  Insert mk(db, "INSERT INTO ENUM_CUDA_MEM_KIND VALUES(?,?,?)", &rows);
  const char* kKinds[][2] = {{"UNKNOWN", "Unknown"},
                             {"PAGEABLE", "Pageable"},
                             {"PINNED", "Pinned"},
                             {"DEVICE", "Device"},
                             {"ARRAY", "Array"},
                             {"MANAGED", "Managed"},
                             {"DEVICE_STATIC", "Device Static"},
                             {"MANAGED_STATIC", "Managed Static"}};
  for (int i = 0; i < 8; ++i)
    mk.Row(i, std::string("CUPTI_ACTIVITY_MEMORY_KIND_") + kKinds[i][0], kKinds[i][1]);
  GT_RETURN_IF_ERROR(ins.status());
  GT_RETURN_IF_ERROR(op.status());
  return mk.status();
}

Status Exporter::ProcessesAndDevices() {
  Insert p(db, "INSERT INTO PROCESSES VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &rows);
  for (const ProcessRecord& r : m.processes)
    p.Row(GlobalPid(r.pid), r.pid, r.parent_pid, m.Str(r.name), m.Str(r.command_line), m.Str(r.host),
          m.Str(r.boot_id), m.Str(r.job), r.rank, r.local_rank, r.world_size, r.start_ns, r.end_ns,
          r.exit_code);
  Insert tn(db, "INSERT INTO ThreadNames VALUES(?,?,?)", &rows);
  Insert th(db, "INSERT INTO THREADS VALUES(?,?,?,?)", &rows);
  for (const ThreadRecord& t : m.threads) {
    if (t.name != 0) tn.Row(t.name, 0, GlobalTid(t.pid, t.tid));
    th.Row(GlobalTid(t.pid, t.tid), t.pid, t.tid, m.Str(t.name));
  }
  Insert g(db, "INSERT INTO TARGET_INFO_GPU VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &rows);
  for (const DeviceRecord& d : m.devices)
    g.Row(d.device_id, d.pid, m.Str(d.name), m.Str(d.uuid), m.Str(d.chip), d.cc_major, d.cc_minor, d.sm_count,
          int64_t(d.sm_clock_khz) * 1000, int64_t(d.mem_clock_khz) * 1000, d.mem_bus_width_bits,
          d.memory_bytes, d.l2_bytes, d.shared_mem_per_block_max, d.shared_mem_per_sm, d.regs_per_sm,
          d.max_warps_per_sm, d.max_blocks_per_sm, d.max_threads_per_block, d.warp_size, d.dram_bandwidth);
  Insert a(db, "INSERT INTO DEVICE_ACTIVITY VALUES(?,?,?,?,?,?,?,?,?,?,?)", &rows);
  for (const viewer::DeviceSummary& d : m.device_summaries)
    a.Row(d.device_id, d.name, d.first_ns, d.last_ns, d.span_ns(), d.busy_ns, d.idle_ns(), d.idle_share(),
          d.kernel_count, d.memcpy_count, d.memset_count);
  for (const Insert* i : {&p, &tn, &th, &g, &a}) GT_RETURN_IF_ERROR(i->status());
  return Status::Ok();
}

Status Exporter::Events() {
  using viewer::EventKind;
  using viewer::TrackKind;
  Insert kernel(
      db,
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
      &rows);
  Insert memcpy(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &rows);
  Insert memset(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &rows);
  Insert runtime(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(?,?,?,?,?,?,?,?,?)", &rows);
  Insert driver(db, "INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER VALUES(?,?,?,?,?,?,?,?,?)", &rows);
  Insert nvtx(db, "INSERT INTO NVTX_EVENTS VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &rows);
  std::vector<int8_t> driver_name(m.strings.size(),
                                  -1);  // per StringId: 1 driver, 0 runtime, -1 not yet known
  for (const viewer::Track& t : m.tracks) {
    for (uint32_t d = 0; d < t.lane_count; ++d) {
      const viewer::Lane& lane = m.lanes[t.first_lane + d];
      for (uint32_t i = 0; i < lane.size(); ++i) {
        const int64_t start = lane.start[i], end = lane.End(i);
        const StringId name = lane.name[i];
        if (t.kind == TrackKind::kThreadApi) {
          int8_t& drv = driver_name[name < driver_name.size() ? name : 0];
          if (drv < 0) drv = IsDriverApi(m.Str(name)) ? 1 : 0;
          (drv ? driver : runtime)
              .Row(start, end, GlobalTid(t.pid, t.tid), lane.ref[i], name, lane.ReturnCode(i), d, t.pid,
                   t.tid);
          continue;
        }
        const auto kind = static_cast<EventKind>(lane.ref[i] >> viewer::kRefKindShift);
        const uint32_t payload = lane.ref[i] & viewer::kRefPayloadMask;
        if (t.kind == TrackKind::kGpuStream) {
          const uint32_t corr = lane.aux.empty() ? 0 : lane.aux[i];
          if (kind == EventKind::kKernel) {
            viewer::LaunchConfig lc;
            if (payload < m.launch_configs.size()) lc = m.launch_configs[payload];
            kernel.Row(start, end, t.device_id, t.context_id, t.stream_id, corr, GlobalPid(t.pid), name,
                       ShortNameId(name), Null{}, lc.grid[0], lc.grid[1], lc.grid[2], lc.block[0],
                       lc.block[1], lc.block[2], lc.cluster[0], lc.cluster[1], lc.cluster[2],
                       lc.registers_per_thread, lc.static_shared_bytes, lc.dynamic_shared_bytes,
                       lc.local_bytes_per_thread, lc.graph_id, lc.graph_node_id, lc.launch_type, t.pid);
          } else if (kind == EventKind::kMemcpy) {
            viewer::MemcpyInfo c;
            if (payload < m.memcpys.size()) c = m.memcpys[payload];
            memcpy.Row(start, end, t.device_id, t.context_id, t.stream_id, corr, GlobalPid(t.pid), c.bytes,
                       CuptiCopyKind(c.copy_kind), c.src_kind, c.dst_kind,
                       c.peer_device_id == kNone ? int64_t(-1) : int64_t(c.peer_device_id), c.graph_id,
                       c.is_async, name, t.pid);
          } else if (kind == EventKind::kMemset) {
            viewer::MemsetInfo s;
            if (payload < m.memsets.size()) s = m.memsets[payload];
            memset.Row(start, end, t.device_id, t.context_id, t.stream_id, corr, GlobalPid(t.pid), s.bytes,
                       s.value, s.memory_kind, s.graph_id, s.is_async, name, t.pid);
          }
          continue;
        }
        if (t.kind == TrackKind::kThreadRanges && (kind == EventKind::kNvtx || kind == EventKind::kHostOp)) {
          // nsys eventType: 59 push/pop range, 60 start/end range, 34 mark.
          int event_type = 59;
          int64_t category = 0, color = 0, domain = 0;
          std::optional<uint64_t> u64;
          std::optional<int64_t> i64;
          std::optional<double> f64;
          if (kind == EventKind::kNvtx && payload < m.nvtx.size()) {
            const viewer::NvtxInfo& n = m.nvtx[payload];
            if (n.flags & kNvtxMark)
              event_type = 34;
            else if (n.flags & kNvtxStartEnd)
              event_type = 60;
            category = n.category, domain = n.domain;
            if (n.flags & kNvtxHasColor) color = n.color;
            switch (static_cast<NvtxPayloadKind>(n.payload_kind)) {
              case NvtxPayloadKind::kU64:
              case NvtxPayloadKind::kU32:
                u64 = n.payload;
                break;
              case NvtxPayloadKind::kI64:
              case NvtxPayloadKind::kI32:
                i64 = int64_t(n.payload);
                break;
              case NvtxPayloadKind::kF64: {
                double v;
                std::memcpy(&v, &n.payload, sizeof v);
                f64 = v;
                break;
              }
              case NvtxPayloadKind::kF32: {
                float v;
                uint32_t bits = uint32_t(n.payload);
                std::memcpy(&v, &bits, sizeof v);
                f64 = v;
                break;
              }
              default:
                break;
            }
          }
          nvtx.Row(start, end, event_type, category, color, m.Str(name), GlobalTid(t.pid, t.tid), name,
                   domain, u64, i64, f64, d, kind == EventKind::kNvtx ? "nvtx" : "host_op", t.pid, t.tid);
        }
      }
    }
  }
  for (const Insert* i : {&kernel, &memcpy, &memset, &runtime, &driver, &nvtx})
    GT_RETURN_IF_ERROR(i->status());
  return Status::Ok();
}

Status Exporter::Analyses() {
  // Counters' verdicts: the same analysis `gtrace stats` prints (per kernel, its profiled launches merged).
  const viewer::ProfiledKernels profiled = viewer::AnalyzeProfiledKernels(m);
  Insert kc(db, "INSERT INTO KERNEL_COUNTERS VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &rows);
  Insert ks(db, "INSERT INTO KERNEL_STALLS VALUES(?,?,?,?,?,?,?)", &rows);
  auto q = [](const Quantity& v) { return v ? std::optional<double>(v.value) : std::nullopt; };
  for (size_t i = 0; i < profiled.kernels.size(); ++i) {
    const KernelAnalysis& a = profiled.kernels[i];
    const StallShare* top = nullptr;
    for (const auto& s : a.stalls)
      if (s.stall_share > 0 && (!top || s.count > top->count)) top = &s;
    std::string flags;
    for (const auto& f : a.flags) flags += (flags.empty() ? "" : "; ") + f.metric + ": " + f.message;
    kc.Row(a.pid, a.kernel_name, a.launches,
           a.time_s ? std::optional<double>(a.time_s.value * 1e9) : std::nullopt,
           profiled.kernel_total_time_s[i] * 1e9, q(a.compute_pct), q(a.memory_pct),
           MemoryLevelName(a.memory_level), a.sol_from_hardware ? 1 : 0, q(a.issue_pct), q(a.flops_per_s),
           PrecisionName(a.main_precision), q(a.achieved_occupancy_pct),
           a.occupancy.valid ? std::optional<double>(a.occupancy.theoretical_pct) : std::nullopt,
           q(a.l1_hit_pct), q(a.l2_hit_pct), q(a.dram_read_bytes), q(a.dram_write_bytes),
           top ? std::optional<std::string>(top->reason) : std::nullopt,
           top ? std::optional<double>(top->stall_share) : std::nullopt, BottleneckName(a.bottleneck),
           a.verdict, a.flags.size(), flags);
    for (const auto& s : a.stalls)
      ks.Row(a.pid, a.kernel_name, s.reason, s.count, s.per_issued, s.share, s.stall_share);
  }
  // Idle gaps with what the CPU did meanwhile: every gap the model kept (the 256 largest per device).
  size_t kept = 0;
  for (const auto& d : m.device_summaries) kept += d.largest_gaps.size();
  const std::vector<viewer::IdleGap> gaps = viewer::ExplainIdleGaps(m, kept);
  Insert g(db, "INSERT INTO IDLE_GAPS VALUES(?,?,?,?,?,?,?)", &rows);
  Insert ga(db, "INSERT INTO IDLE_GAP_ACTIVITY VALUES(?,?,?,?)", &rows);
  for (size_t i = 0; i < gaps.size(); ++i) {
    const viewer::IdleGap& gap = gaps[i];
    g.Row(i + 1, gap.device_id, gap.device, gap.start_ns, gap.end_ns, gap.end_ns - gap.start_ns,
          gap.diagnosis);
    for (const auto& a : gap.activity) ga.Row(i + 1, a.name, a.kind(), a.overlap_ns);
  }
  Insert l(db, "INSERT INTO LOSSES VALUES(?,?,?,?,?)", &rows);
  for (const viewer::LossStat& s : viewer::LossSummary(m))
    l.Row(s.name, s.severity, s.pid, s.count, s.detail);
  for (const Insert* i : {&kc, &ks, &g, &ga, &l}) GT_RETURN_IF_ERROR(i->status());
  return Status::Ok();
}

Status Exporter::Counters() {
  Insert t(db, "INSERT INTO COUNTER_TRACKS VALUES(?,?,?,?,?,?)", &rows);
  Insert s(db, "INSERT INTO COUNTER_SAMPLES VALUES(?,?,?)", &rows);
  for (size_t c = 0; c < m.counters.size(); ++c) {
    const viewer::CounterTrack& ct = m.counters[c];
    t.Row(c, m.Str(ct.name), m.Str(ct.unit), ct.pid,
          ct.device_id == kNone ? std::optional<int64_t>() : std::optional<int64_t>(ct.device_id),
          ct.source_id);
    for (size_t i = 0; i < ct.time.size(); ++i) s.Row(c, ct.time[i], ct.value[i]);
  }
  GT_RETURN_IF_ERROR(t.status());
  return s.status();
}

// The model's global frame tree (parents before children, so CPU_SAMPLE_FRAMES' walk ends) and one row per
// sample pointing at its innermost frame; stackId 0: nothing could be unwound.
Status Exporter::CpuSamples() {
  const auto& c = m.cpu;
  Insert f(db, "INSERT INTO CPU_STACK_FRAMES VALUES(?,?,?,?)", &rows);
  for (size_t n = 1; n < c.node_parent.size(); ++n)
    f.Row(n, c.node_parent[n], c.node_frame[n],
          c.node_kind[n] == uint8_t(FrameKind::kPython) ? "python" : "native");
  Insert s(db, "INSERT INTO CPU_SAMPLES VALUES(?,?,?,?,?,?,?)", &rows);
  for (size_t i = 0; i < c.size(); ++i)
    s.Row(i + 1, c.ts[i], GlobalTid(c.pid[i], c.tid[i]), c.stack[i], c.flags[i], c.pid[i], c.tid[i]);
  GT_RETURN_IF_ERROR(f.status());
  return s.status();
}

Status Exporter::Run() {
  GT_RETURN_IF_ERROR(Exec(db, kSchema));
  GT_RETURN_IF_ERROR(Exec(db, kViews));
  GT_RETURN_IF_ERROR(Exec(db, "BEGIN"));
  Status st = Meta();
  if (st.ok()) st = ProcessesAndDevices();
  if (st.ok()) st = Events();  // before Strings: interns the kernels' short names
  if (st.ok()) st = Strings();
  if (st.ok()) st = Analyses();
  if (st.ok()) st = Counters();
  if (st.ok()) st = CpuSamples();
  if (!st.ok()) {
    (void)Exec(db, "ROLLBACK");
    return st;
  }
  return Exec(db, "COMMIT");
}

}  // namespace

Status ExportSqlite(const viewer::TraceModel& model, sqlite3* db, SqliteExportStats* stats) {
  const auto t0 = std::chrono::steady_clock::now();
  Exporter e{model, db, 0, {}, {}};
  Status st = e.Run();
  if (stats) {
    stats->rows = e.rows;
    stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return st;
}

Status ExportSqliteFile(const viewer::TraceModel& model, const std::string& path, bool force,
                        SqliteExportStats* stats) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    if (!force) return Status(StatusCode::kInvalidArgument, path + " exists (use --force to replace it)");
    if (!std::filesystem::is_regular_file(path, ec))
      return Status(StatusCode::kInvalidArgument, path + " is not a regular file");
    if (!std::filesystem::remove(path, ec))
      return Status(StatusCode::kIoError, "cannot replace " + path + ": " + ec.message());
  }
  // Created here first so that an unwritable place fails with the system's reason, not SQLite's generic one.
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fclose(f);
  } else {
    return Status(StatusCode::kIoError, "cannot write " + path + ": " + std::strerror(errno));
  }
  sqlite3* db = nullptr;
  Status st = Status::Ok();
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    st = Status(StatusCode::kIoError,
                "cannot open " + path + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
  } else {
    // A fresh file that is deleted on failure: no journal, no fsync until the end.
    st = Exec(db,
              "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=65536; PRAGMA "
              "locking_mode=EXCLUSIVE; PRAGMA cache_size=-65536");
    if (st.ok()) st = ExportSqlite(model, db, stats);
  }
  if (db && sqlite3_close(db) != SQLITE_OK && st.ok()) st = Status(StatusCode::kIoError, "closing " + path);
  if (!st.ok()) {
    std::filesystem::remove(path, ec);
    return Status(st.code(), path + ": " + st.message());
  }
  return st;
}

}  // namespace gt::cli
