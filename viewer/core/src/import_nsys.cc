// Nsight Systems SQLite export -> gtrace records. Pure: columns in, TraceData out (docs/nsys-import.md).
//
// [SECTION] schema · tables · ids and strings · GPU activity · CUDA API · NVTX · entities · hook
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <tuple>
#include <unordered_map>

#include "gt/viewer/nsys.h"

namespace gt::viewer {

// ---- [SECTION] schema
// --------------------------------------------------------------------------------------- Column names as
// nsys writes them (docs/nsys-import.md cites the sources). Several spellings of one field across nsys
// versions are all asked for; the mapping takes the first that is present.

const std::vector<NsysTableSpec>& NsysSchema() {
  static const std::vector<NsysTableSpec> kSchema = {
      {"StringIds", {"id"}, {"value"}},
      {"CUPTI_ACTIVITY_KIND_KERNEL",
       {"start",
        "end",
        "deviceId",
        "contextId",
        "streamId",
        "correlationId",
        "globalPid",
        "demangledName",
        "shortName",
        "mangledName",
        "gridX",
        "gridY",
        "gridZ",
        "blockX",
        "blockY",
        "blockZ",
        "clusterX",
        "clusterY",
        "clusterZ",
        "registersPerThread",
        "staticSharedMemory",
        "dynamicSharedMemory",
        "localMemoryPerThread",
        "launchType",
        "graphId",
        "graphNodeId"},
       {}},
      {"CUPTI_ACTIVITY_KIND_MEMCPY",
       {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "bytes",
        "copyKind", "srcKind", "dstKind", "dstDeviceId", "graphId", "flags", "isAsync"},
       {}},
      {"CUPTI_ACTIVITY_KIND_MEMSET",
       {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "bytes", "value",
        "memKind", "graphId", "flags", "isAsync"},
       {}},
      {"CUPTI_ACTIVITY_KIND_RUNTIME",
       {"start", "end", "globalTid", "correlationId", "nameId", "returnValue"},
       {}},
      {"CUPTI_ACTIVITY_KIND_DRIVER",
       {"start", "end", "globalTid", "correlationId", "nameId", "returnValue"},
       {}},
      {"NVTX_EVENTS",
       {"start", "end", "eventType", "rangeId", "category", "color", "globalTid", "endGlobalTid", "textId",
        "domainId", "uint64Value", "int64Value", "uint32Value", "int32Value"},
       {"text", "doubleValue", "floatValue"}},
      {"TARGET_INFO_GPU",
       {"id", "cuDevice", "smCount", "totalMemory", "l2CacheSize", "clockRate", "memoryBandwidth",
        "computeMajor", "computeMinor", "maxWarpsPerSm", "threadsPerWarp", "maxShmemPerBlock"},
       {"name", "uuid", "chipName"}},
      {"TARGET_INFO_CUDA_DEVICE",
       {"cudaId", "pid", "numMultiprocessors", "computeCapabilityMajor", "computeCapabilityMinor"},
       {"name", "uuid"}},
      {"TARGET_INFO_CUDA_STREAM", {"streamId", "processId", "contextId", "priority", "flag"}, {}},
      {"ThreadNames", {"nameId", "globalTid"}, {}},
      {"PROCESSES", {"globalPid", "pid"}, {"name"}},
      {"TARGET_INFO_SESSION_START_TIME", {"utcEpochNs"}, {}},
  };
  return kSchema;
}

// ---- [SECTION] tables
// ---------------------------------------------------------------------------------------

const std::vector<int64_t>* NsysTable::IntColumn(std::string_view column) const {
  for (const auto& [name, col] : int_cache_)
    if (name == column.data()) return col;
  auto it = ints.find(column);
  const std::vector<int64_t>* col = it == ints.end() ? nullptr : &it->second;
  if (int_cache_.size() < 64) int_cache_.emplace_back(column.data(), col);
  return col;
}

int64_t NsysTable::Int(std::string_view column, size_t row) const {
  const std::vector<int64_t>* col = IntColumn(column);
  if (!col || row >= col->size()) return kNsysNull;
  return (*col)[row];
}

const std::string* NsysTable::Text(std::string_view column, size_t row) const {
  auto it = texts.find(column);
  if (it == texts.end() || row >= it->second.size()) return nullptr;
  return &it->second[row];
}

const NsysTable& NsysTables::Get(std::string_view name) const {
  static const NsysTable kEmpty;
  auto it = tables.find(name);
  return it == tables.end() ? kEmpty : it->second;
}

namespace {
const char* const kActivityTables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                       "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
                                       "CUPTI_ACTIVITY_KIND_DRIVER", "NVTX_EVENTS"};
}  // namespace

bool LooksLikeNsysExport(const NsysTables& t, std::string* missing) {
  for (const char* name : kActivityTables)
    if (t.Get(name).present) return true;
  if (missing) {
    *missing = "none of the tables ";
    for (size_t i = 0; i < std::size(kActivityTables); ++i)
      *missing += (i ? ", " : "") + std::string(kActivityTables[i]);
    if (!t.Get("StringIds").present) *missing += " (nor StringIds)";
  }
  return false;
}

bool LooksLikeSqlite(std::span<const uint8_t> bytes) {
  static const char kMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                  'o', 'r', 'm', 'a', 't', ' ', '3', 0};
  return bytes.size() >= 16 && std::equal(bytes.begin(), bytes.begin() + 16, kMagic,
                                          [](uint8_t a, char b) { return a == uint8_t(b); });
}

namespace {

// ---- [SECTION] ids and strings
// ------------------------------------------------------------------------------

constexpr int64_t kU32Max = int64_t(UINT32_MAX) - 1;  // UINT32_MAX itself is kNone
constexpr const char* kBadRows =
    "rows without start/end, or with ids that are missing, negative or over 32 bits";
// nsys times are ns from the session's start: beyond ~11.6 days either way they are garbage, and sums of such
// durations would overflow the summaries' int64 totals.
constexpr int64_t kMaxAbsTime = 1'000'000'000'000'000;

class Mapper {
 public:
  Mapper(const NsysTables& t, TraceData* out) : t_(t), out_(*out) {
    const NsysTable& s = t.Get("StringIds");
    for (size_t i = 0; i < s.rows; ++i) {
      int64_t id = s.Int("id", i);
      const std::string* v = s.Text("value", i);
      if (id == kNsysNull || !v) {
        Lose("nsys_bad_rows", "StringIds rows without id or value");
        continue;
      }
      nsys_strings_.emplace(id, *v);
    }
  }

  void Run() {
    NvtxDomains();
    Kernels();
    Memcpys();
    Memsets();
    Api("CUPTI_ACTIVITY_KIND_RUNTIME", ApiDomain::kRuntime);
    Api("CUPTI_ACTIVITY_KIND_DRIVER", ApiDomain::kDriver);
    Nvtx();
    Entities();
    Losses();
  }

 private:
  StringId Intern(std::string_view text) {
    if (text.empty()) return 0;
    auto it = interned_.find(std::string(text));
    if (it != interned_.end()) return it->second;
    StringId id = StringId(out_.strings.size());
    out_.strings.emplace_back(text);
    interned_.emplace(std::string(text), id);
    return id;
  }
  // A StringIds reference: NULL -> none, an id StringIds lacks -> a placeholder, counted.
  StringId NsysString(int64_t id, const char* what) {
    if (id == kNsysNull) return 0;
    auto it = nsys_strings_.find(id);
    if (it != nsys_strings_.end()) return Intern(it->second);
    Lose("nsys_string_ids_missing", "names whose StringIds id is not in StringIds (shown as <string N>)");
    return Intern(std::string("<") + what + " string " + std::to_string(id) + ">");
  }
  void Lose(const std::string& name, const char* detail) {
    auto& l = losses_[name];
    ++l.first;
    l.second = detail;
  }
  // A 32-bit id column: NULL / negative / too large -> false (the row is dropped by the caller).
  static bool U32(int64_t v, uint32_t* out) {
    if (v == kNsysNull || v < 0 || v > kU32Max) return false;
    *out = uint32_t(v);
    return true;
  }
  static uint32_t U32Or(int64_t v, uint32_t fallback) {
    uint32_t r;
    return U32(v, &r) ? r : fallback;
  }
  static uint64_t U64Or(int64_t v, uint64_t fallback) {
    return v == kNsysNull || v < 0 ? fallback : uint64_t(v);
  }
  // nsys packs ids as (vm << 56) | (pid << 24) | (tid & 0xFFFFFF); globalPid has tid 0.
  static bool SplitGlobal(int64_t g, uint32_t* pid, uint32_t* tid) {
    if (g == kNsysNull || g < 0) return false;
    *pid = uint32_t((uint64_t(g) >> 24) & 0xFFFFFF);
    if (tid) *tid = uint32_t(uint64_t(g) & 0xFFFFFF);
    return true;
  }
  bool Times(const NsysTable& tb, size_t i, Timestamp* start, Timestamp* end) {
    int64_t s = tb.Int("start", i), e = tb.Int("end", i);
    if (s == kNsysNull || e == kNsysNull) {
      Lose("nsys_bad_rows", kBadRows);
      return false;
    }
    if (e < s) {
      Lose("nsys_negative_durations", "rows whose end is before their start (dropped)");
      return false;
    }
    if (!SaneTime(s) || !SaneTime(e)) return false;
    *start = s, *end = e;
    return true;
  }
  bool SaneTime(int64_t t) {
    if (t >= -kMaxAbsTime && t <= kMaxAbsTime) return true;
    Lose("nsys_times_out_of_range",
         "rows with times over 10^15 ns (11.6 days) from the session start (dropped)");
    return false;
  }
  struct Gpu {
    uint32_t pid, device, context, stream, corr;
  };
  bool GpuIds(const NsysTable& tb, size_t i, Gpu* g) {
    if (!SplitGlobal(tb.Int("globalPid", i), &g->pid, nullptr) || !U32(tb.Int("deviceId", i), &g->device) ||
        !U32(tb.Int("streamId", i), &g->stream)) {
      Lose("nsys_bad_rows", kBadRows);
      return false;
    }
    g->context = U32Or(tb.Int("contextId", i), 0);
    g->corr = U32Or(tb.Int("correlationId", i), 0);
    streams_.insert({g->pid, g->device, g->context, g->stream});
    pids_.insert(g->pid);
    return true;
  }

  // ---- [SECTION] GPU activity -----------------------------------------------------------------------------

  void Kernels() {
    const NsysTable& tb = t_.Get("CUPTI_ACTIVITY_KIND_KERNEL");
    for (size_t i = 0; i < tb.rows; ++i) {
      KernelRecord r;
      Gpu g;
      if (!Times(tb, i, &r.start, &r.end) || !GpuIds(tb, i, &g)) continue;
      r.pid = g.pid, r.device_id = g.device, r.context_id = g.context, r.stream_id = g.stream;
      r.correlation_id = g.corr;
      // The demangled name is what gcollect records; older exports have only shortName.
      int64_t name = tb.Int("demangledName", i);
      if (name == kNsysNull) name = tb.Int("shortName", i);
      if (name == kNsysNull) name = tb.Int("mangledName", i);
      r.name = NsysString(name, "kernel");
      if (r.name == 0) r.name = Intern("<unnamed kernel>");
      const char* grid[3] = {"gridX", "gridY", "gridZ"};
      const char* block[3] = {"blockX", "blockY", "blockZ"};
      const char* cluster[3] = {"clusterX", "clusterY", "clusterZ"};
      for (int k = 0; k < 3; ++k) {
        r.grid[k] = U32Or(tb.Int(grid[k], i), 1);
        r.block[k] = U32Or(tb.Int(block[k], i), 1);
        r.cluster[k] = U32Or(tb.Int(cluster[k], i), 0);
      }
      r.registers_per_thread = U32Or(tb.Int("registersPerThread", i), 0);
      r.static_shared_bytes = U32Or(tb.Int("staticSharedMemory", i), 0);
      r.dynamic_shared_bytes = U32Or(tb.Int("dynamicSharedMemory", i), 0);
      r.local_bytes_per_thread = U32Or(tb.Int("localMemoryPerThread", i), 0);
      r.graph_id = U32Or(tb.Int("graphId", i), 0);
      r.graph_node_id = U64Or(tb.Int("graphNodeId", i), 0);
      // CUpti_ActivityLaunchType: 0 regular, 1 cooperative single-device, 2 cooperative multi-device.
      int64_t lt = tb.Int("launchType", i);
      r.launch_type = r.graph_id             ? uint8_t(LaunchType::kGraph)
                      : (lt >= 0 && lt <= 2) ? uint8_t(lt)
                      : r.cluster[0] > 1 || r.cluster[1] > 1 || r.cluster[2] > 1
                          ? uint8_t(LaunchType::kCluster)
                          : uint8_t(LaunchType::kRegular);
      out_.kernels.push_back(r);
    }
  }

  // CUPTI_ACTIVITY_MEMCPY_KIND_* (what nsys stores in copyKind, ENUM_CUDA_MEMCPY_OPER) -> gt::CopyKind.
  uint8_t CopyKindOf(int64_t v) {
    static const CopyKind kMap[] = {CopyKind::kUnknown, CopyKind::kHtoD, CopyKind::kDtoH, CopyKind::kHtoA,
                                    CopyKind::kAtoH,    CopyKind::kAtoA, CopyKind::kAtoD, CopyKind::kDtoA,
                                    CopyKind::kDtoD,    CopyKind::kHtoH, CopyKind::kPtoP};
    if (v >= 0 && v < int64_t(std::size(kMap))) return uint8_t(kMap[v]);
    Lose("nsys_unknown_enum_values",
         "copy/memory kinds nsys numbers that gtrace does not know (shown as unknown)");
    return uint8_t(CopyKind::kUnknown);
  }
  // CUPTI_ACTIVITY_MEMORY_KIND_* (ENUM_CUDA_MEM_KIND) has gt::MemoryKind's numbering.
  uint8_t MemKindOf(int64_t v) {
    if (v == kNsysNull) return 0;
    if (v >= 0 && v <= int64_t(MemoryKind::kManagedStatic)) return uint8_t(v);
    Lose("nsys_unknown_enum_values",
         "copy/memory kinds nsys numbers that gtrace does not know (shown as unknown)");
    return 0;
  }
  static uint8_t AsyncOf(const NsysTable& tb, size_t i) {
    int64_t a = tb.Int("isAsync", i);
    if (a != kNsysNull) return a != 0;
    int64_t f = tb.Int("flags", i);  // CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC / _MEMSET_ASYNC = 1
    return f != kNsysNull && f >= 0 && (f & 1);
  }

  void Memcpys() {
    const NsysTable& tb = t_.Get("CUPTI_ACTIVITY_KIND_MEMCPY");
    for (size_t i = 0; i < tb.rows; ++i) {
      MemcpyRecord r;
      Gpu g;
      if (!Times(tb, i, &r.start, &r.end) || !GpuIds(tb, i, &g)) continue;
      r.pid = g.pid, r.device_id = g.device, r.context_id = g.context, r.stream_id = g.stream;
      r.correlation_id = g.corr;
      r.bytes = U64Or(tb.Int("bytes", i), 0);
      int64_t ck = tb.Int("copyKind", i);
      r.copy_kind = ck == kNsysNull ? 0 : CopyKindOf(ck);
      r.src_kind = MemKindOf(tb.Int("srcKind", i));
      r.dst_kind = MemKindOf(tb.Int("dstKind", i));
      r.is_async = AsyncOf(tb, i);
      if (r.copy_kind == uint8_t(CopyKind::kPtoP)) r.peer_device_id = U32Or(tb.Int("dstDeviceId", i), kNone);
      r.graph_id = U32Or(tb.Int("graphId", i), 0);
      out_.memcpys.push_back(r);
    }
  }

  void Memsets() {
    const NsysTable& tb = t_.Get("CUPTI_ACTIVITY_KIND_MEMSET");
    for (size_t i = 0; i < tb.rows; ++i) {
      MemsetRecord r;
      Gpu g;
      if (!Times(tb, i, &r.start, &r.end) || !GpuIds(tb, i, &g)) continue;
      r.pid = g.pid, r.device_id = g.device, r.context_id = g.context, r.stream_id = g.stream;
      r.correlation_id = g.corr;
      r.bytes = U64Or(tb.Int("bytes", i), 0);
      int64_t v = tb.Int("value", i);
      r.value = v == kNsysNull ? 0 : uint32_t(uint64_t(v));
      r.memory_kind = MemKindOf(tb.Int("memKind", i));
      r.is_async = AsyncOf(tb, i);
      r.graph_id = U32Or(tb.Int("graphId", i), 0);
      out_.memsets.push_back(r);
    }
  }

  // ---- [SECTION] CUDA API ---------------------------------------------------------------------------------

  void Api(const char* table, ApiDomain domain) {
    const NsysTable& tb = t_.Get(table);
    for (size_t i = 0; i < tb.rows; ++i) {
      ApiCallRecord r;
      if (!Times(tb, i, &r.start, &r.end)) continue;
      if (!SplitGlobal(tb.Int("globalTid", i), &r.pid, &r.tid)) {
        Lose("nsys_bad_rows", kBadRows);
        continue;
      }
      r.correlation_id = U32Or(tb.Int("correlationId", i), 0);
      r.name = NsysString(tb.Int("nameId", i), "API");
      if (r.name == 0) r.name = Intern(domain == ApiDomain::kDriver ? "<driver call>" : "<runtime call>");
      int64_t rv = tb.Int("returnValue", i);
      r.return_code = rv == kNsysNull ? 0 : int32_t(std::clamp<int64_t>(rv, INT32_MIN, INT32_MAX));
      r.domain = uint8_t(domain);
      pids_.insert(r.pid);
      out_.api_calls.push_back(r);
    }
  }

  // ---- [SECTION] NVTX -------------------------------------------------------------------------------------
  // eventType (nsys's ENUM_NSYS_EVENT_TYPE): 34 mark, 59 push/pop range, 60 start/end range, 70 NVTXT
  // push/pop range, 75 domain create (text = the domain's name, domainId = its handle within the process).

  static constexpr int64_t kMark = 34, kPushPop = 59, kStartEnd = 60, kNvtxtPushPop = 70, kDomainCreate = 75;

  void NvtxDomains() {
    const NsysTable& tb = t_.Get("NVTX_EVENTS");
    for (size_t i = 0; i < tb.rows; ++i) {
      if (tb.Int("eventType", i) != kDomainCreate) continue;
      uint32_t pid;
      int64_t id = tb.Int("domainId", i);
      if (!SplitGlobal(tb.Int("globalTid", i), &pid, nullptr) || id == kNsysNull) continue;
      const std::string* text = tb.Text("text", i);
      domains_[{pid, id}] =
          text && !text->empty() ? Intern(*text) : NsysString(tb.Int("textId", i), "domain");
    }
  }

  void Nvtx() {
    const NsysTable& tb = t_.Get("NVTX_EVENTS");
    Timestamp trace_end = 0;
    for (const auto& k : out_.kernels) trace_end = std::max(trace_end, k.end);
    for (const auto& a : out_.api_calls) trace_end = std::max(trace_end, a.end);
    for (size_t i = 0; i < tb.rows; ++i)
      for (int64_t t : {tb.Int("start", i), tb.Int("end", i)})
        if (t >= -kMaxAbsTime && t <= kMaxAbsTime) trace_end = std::max(trace_end, t);
    for (size_t i = 0; i < tb.rows; ++i) {
      int64_t type = tb.Int("eventType", i);
      if (type == kDomainCreate) continue;
      if (type != kMark && type != kPushPop && type != kStartEnd && type != kNvtxtPushPop) {
        Lose("nsys_nvtx_other_events",
             "NVTX_EVENTS rows of other event types (category names, ...) not shown");
        continue;
      }
      NvtxRecord r;
      int64_t s = tb.Int("start", i), e = tb.Int("end", i);
      if (s == kNsysNull || !SplitGlobal(tb.Int("globalTid", i), &r.pid, &r.tid)) {
        Lose("nsys_bad_rows", kBadRows);
        continue;
      }
      if (!SaneTime(s) || (e != kNsysNull && !SaneTime(e))) continue;
      r.start = s;
      if (type == kMark) {
        r.end = s;
        r.flags |= kNvtxMark;
      } else if (e == kNsysNull) {
        r.end = std::max(trace_end, s);
        r.flags |= kNvtxUnclosed;
      } else if (e < s) {
        Lose("nsys_negative_durations", "rows whose end is before their start (dropped)");
        continue;
      } else {
        r.end = e;
      }
      if (type == kStartEnd) r.flags |= kNvtxStartEnd;
      const std::string* text = tb.Text("text", i);
      r.message = text && !text->empty() ? Intern(*text) : NsysString(tb.Int("textId", i), "NVTX");
      int64_t dom = tb.Int("domainId", i);
      if (dom != kNsysNull && dom != 0) {
        auto it = domains_.find({r.pid, dom});
        // gtrace's own export stores the domain's StringIds id here, with no domain-create rows.
        r.domain = it != domains_.end() ? it->second : NsysString(dom, "domain");
      }
      r.category = U32Or(tb.Int("category", i), 0);
      int64_t color = tb.Int("color", i);
      if (color != kNsysNull && color != 0) {
        r.color = uint32_t(uint64_t(color));
        r.flags |= kNvtxHasColor;
      }
      Payload(tb, i, &r);
      pids_.insert(r.pid);
      out_.nvtx.push_back(r);
    }
  }

  static void Payload(const NsysTable& tb, size_t i, NvtxRecord* r) {
    auto real = [&](const char* col, NvtxPayloadKind kind) {
      const std::string* t = tb.Text(col, i);
      if (!t || t->empty()) return false;
      char* endp = nullptr;
      double d = std::strtod(t->c_str(), &endp);
      if (endp == t->c_str()) return false;
      if (kind == NvtxPayloadKind::kF32) {
        float f = float(d);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        r->payload = bits;
      } else {
        std::memcpy(&r->payload, &d, 8);
      }
      r->payload_kind = uint8_t(kind);
      return true;
    };
    auto integer = [&](const char* col, NvtxPayloadKind kind) {
      int64_t v = tb.Int(col, i);
      if (v == kNsysNull) return false;
      r->payload = uint64_t(v);
      r->payload_kind = uint8_t(kind);
      return true;
    };
    integer("uint64Value", NvtxPayloadKind::kU64) || integer("int64Value", NvtxPayloadKind::kI64) ||
        real("doubleValue", NvtxPayloadKind::kF64) || integer("uint32Value", NvtxPayloadKind::kU32) ||
        integer("int32Value", NvtxPayloadKind::kI32) || real("floatValue", NvtxPayloadKind::kF32);
  }

  // ---- [SECTION] entities ---------------------------------------------------------------------------------
  // Processes, threads, devices, contexts and streams as gcollect writes them, so the tracks are the same.

  void Entities() {
    out_.metadata.entries.push_back({"source", "nsys export --type sqlite"});
    const NsysTable& st = t_.Get("TARGET_INFO_SESSION_START_TIME");
    if (st.rows > 0 && st.Int("utcEpochNs", 0) != kNsysNull)
      out_.metadata.clock_syncs.push_back({st.Int("utcEpochNs", 0), 0});

    std::map<uint32_t, StringId> process_names;
    const NsysTable& pr = t_.Get("PROCESSES");
    for (size_t i = 0; i < pr.rows; ++i) {
      uint32_t pid;
      int64_t p = pr.Int("pid", i);
      if (p != kNsysNull && p >= 0 && p <= kU32Max)
        pid = uint32_t(p);
      else if (!SplitGlobal(pr.Int("globalPid", i), &pid, nullptr))
        continue;
      const std::string* name = pr.Text("name", i);
      if (name && !name->empty()) process_names[pid] = Intern(*name);
      pids_.insert(pid);
    }
    for (uint32_t pid : pids_) {
      ProcessRecord p;
      p.pid = pid;
      auto it = process_names.find(pid);
      p.name = it != process_names.end() ? it->second : 0;
      out_.processes.push_back(p);
    }
    const NsysTable& tn = t_.Get("ThreadNames");
    std::set<std::pair<uint32_t, uint32_t>> named;
    for (size_t i = 0; i < tn.rows; ++i) {
      ThreadRecord th;
      if (!SplitGlobal(tn.Int("globalTid", i), &th.pid, &th.tid)) continue;
      th.name = NsysString(tn.Int("nameId", i), "thread");
      if (th.name && named.insert({th.pid, th.tid}).second) out_.threads.push_back(th);
    }

    // Devices: one record per (process, device) that has GPU work, described by TARGET_INFO_GPU (matched on
    // cuDevice, else id) or TARGET_INFO_CUDA_DEVICE (cudaId and pid).
    std::set<std::pair<uint32_t, uint32_t>> devices;
    std::set<std::tuple<uint32_t, uint32_t, uint32_t>> contexts;
    for (const auto& [pid, dev, ctx, stream] : streams_) {
      devices.insert({pid, dev});
      contexts.insert({pid, dev, ctx});
    }
    const NsysTable& gpu = t_.Get("TARGET_INFO_GPU");
    const NsysTable& cd = t_.Get("TARGET_INFO_CUDA_DEVICE");
    for (const auto& [pid, dev] : devices) {
      DeviceRecord d;
      d.pid = pid, d.device_id = dev;
      bool found = false;
      for (size_t i = 0; i < gpu.rows && !found; ++i) {
        int64_t id = gpu.Int("cuDevice", i);
        if (id == kNsysNull) id = gpu.Int("id", i);
        if (id != int64_t(dev)) continue;
        found = true;
        if (const std::string* n = gpu.Text("name", i)) d.name = Intern(*n);
        if (const std::string* u = gpu.Text("uuid", i)) d.uuid = Intern(*u);
        if (const std::string* c = gpu.Text("chipName", i)) d.chip = Intern(*c);
        d.sm_count = U32Or(gpu.Int("smCount", i), 0);
        d.memory_bytes = U64Or(gpu.Int("totalMemory", i), 0);
        d.l2_bytes = U64Or(gpu.Int("l2CacheSize", i), 0);
        d.sm_clock_khz =
            U32Or(gpu.Int("clockRate", i) == kNsysNull ? kNsysNull : gpu.Int("clockRate", i) / 1000, 0);
        d.dram_bandwidth = double(U64Or(gpu.Int("memoryBandwidth", i), 0));
        d.cc_major = uint8_t(std::clamp<int64_t>(
            gpu.Int("computeMajor", i) == kNsysNull ? 0 : gpu.Int("computeMajor", i), 0, 255));
        d.cc_minor = uint8_t(std::clamp<int64_t>(
            gpu.Int("computeMinor", i) == kNsysNull ? 0 : gpu.Int("computeMinor", i), 0, 255));
        d.max_warps_per_sm = U32Or(gpu.Int("maxWarpsPerSm", i), 0);
        d.warp_size = U32Or(gpu.Int("threadsPerWarp", i), 32);
        d.shared_mem_per_block_max = U32Or(gpu.Int("maxShmemPerBlock", i), 0);
      }
      for (size_t i = 0; i < cd.rows; ++i) {
        if (cd.Int("cudaId", i) != int64_t(dev)) continue;
        int64_t p = cd.Int("pid", i);
        if (p != kNsysNull && p != int64_t(pid)) continue;
        const std::string* n = cd.Text("name", i);
        if (d.name == 0 && n) d.name = Intern(*n);
        if (d.sm_count == 0) d.sm_count = U32Or(cd.Int("numMultiprocessors", i), 0);
        int64_t ma = cd.Int("computeCapabilityMajor", i), mi = cd.Int("computeCapabilityMinor", i);
        if (d.cc_major == 0 && ma >= 0 && ma < 256)
          d.cc_major = uint8_t(ma), d.cc_minor = uint8_t(std::clamp<int64_t>(mi, 0, 255));
        break;
      }
      out_.devices.push_back(d);
    }
    for (const auto& [pid, dev, ctx] : contexts) out_.contexts.push_back({pid, dev, ctx});
    const NsysTable& ts = t_.Get("TARGET_INFO_CUDA_STREAM");
    for (const auto& [pid, dev, ctx, stream] : streams_) {
      StreamRecord s;
      s.pid = pid, s.device_id = dev, s.context_id = ctx, s.stream_id = stream;
      for (size_t i = 0; i < ts.rows; ++i) {
        if (ts.Int("streamId", i) != int64_t(stream)) continue;
        int64_t p = ts.Int("processId", i);
        if (p != kNsysNull && p != int64_t(pid)) continue;
        int64_t prio = ts.Int("priority", i);
        if (prio != kNsysNull) s.priority = int32_t(std::clamp<int64_t>(prio, INT32_MIN, INT32_MAX));
        break;
      }
      out_.streams.push_back(s);
    }
  }

  void Losses() {
    for (const auto& [name, v] : losses_) {
      LossRecord l =
          MakeLoss(Intern(name), name == "nsys_nvtx_other_events" ? Severity::kInfo : Severity::kWarning,
                   v.first, Intern(v.second));
      out_.losses.push_back(l);
    }
  }

  const NsysTables& t_;
  TraceData& out_;
  std::unordered_map<int64_t, std::string> nsys_strings_;
  std::unordered_map<std::string, StringId> interned_;
  std::map<std::pair<uint32_t, int64_t>, StringId> domains_;
  std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> streams_;
  std::set<uint32_t> pids_;
  std::map<std::string, std::pair<uint64_t, const char*>> losses_;
};

}  // namespace

Status MapNsysTables(const NsysTables& tables, TraceData* out) {
  std::string missing;
  if (!LooksLikeNsysExport(tables, &missing))
    return InvalidArgument(
        "an SQLite database, but not an Nsight Systems export (nsys export --type sqlite): " + missing);
  Mapper(tables, out).Run();
  return Status::Ok();
}

void ReplayTraceData(const TraceData& data, TraceSink& sink) {
  if (!data.metadata.entries.empty() || !data.metadata.clock_syncs.empty()) sink.OnMetadata(data.metadata);
  if (data.strings.size() > 1) {
    std::vector<std::string_view> views(data.strings.begin() + 1, data.strings.end());
    sink.OnStrings(1, views);
  }
#define GT_REPLAY(R, Method, field) \
  if (!data.field.empty()) sink.Method(std::span<const R>(data.field));
  GT_FOR_EACH_RECORD_TYPE(GT_REPLAY)
#undef GT_REPLAY
}

// ---- [SECTION] hook
// -------------------------------------------------------------------------------------------

namespace {
NsysTableReader g_reader = nullptr;
}
void SetNsysTableReader(NsysTableReader reader) {
  g_reader = reader;
}
NsysTableReader GetNsysTableReader() {
  return g_reader;
}

}  // namespace gt::viewer
