// The MCP server: JSON-RPC framing, the tool table, and each tool over the viewer core's results.
//
// [SECTION] JSON-RPC
// [SECTION] Tools
// [SECTION] Dispatch
// [SECTION] Stdio loop
#include "mcp.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "gt/viewer/collectives.h"
#include "gt/viewer/cpu_samples.h"
#include "gt/viewer/json.h"
#include "gt/viewer/load.h"
#include "gt/viewer/profiled.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"
#include "load_options.h"
#include "sqlite_export.h"

namespace gt::cli {

using json = nlohmann::json;

struct McpServer::OpenTrace {
  std::string path;
  std::unique_ptr<viewer::TraceModel> model;
  sqlite3* db = nullptr;  // the SQL export, made on the first sql call
  ~OpenTrace() { sqlite3_close(db); }
};

namespace {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] JSON-RPC
// ---------------------------------------------------------------------------------------------------------------

constexpr int kParseError = -32700, kInvalidRequest = -32600, kMethodNotFound = -32601,
              kInvalidParams = -32602, kInternalError = -32603;
constexpr const char* kProtocolVersions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

std::string Dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string ErrorResponse(const json& id, int code, const std::string& message) {
  return Dump({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

// A bad tool argument: reported as a tool error (isError), which the model reads, not a protocol error.
struct ToolError {
  std::string message;
};

const json& Arg(const json& args, const char* name) {
  auto it = args.find(name);
  if (it == args.end()) throw ToolError{std::string("missing argument '") + name + "'"};
  return *it;
}
std::string StringArg(const json& args, const char* name) {
  const json& v = Arg(args, name);
  if (!v.is_string()) throw ToolError{std::string("argument '") + name + "' must be a string"};
  return v.get<std::string>();
}
std::string OptString(const json& args, const char* name, const std::string& def) {
  return args.contains(name) ? StringArg(args, name) : def;
}
size_t OptCount(const json& args, const char* name, size_t def, size_t max) {
  if (!args.contains(name)) return def;
  const json& v = args[name];
  if (!v.is_number_integer() || v.get<int64_t>() < 1)
    throw ToolError{std::string("argument '") + name + "' must be a positive integer"};
  return std::min<size_t>(v.get<uint64_t>(), max);
}

// Long arrays cut to `n` items, each cut noted with where it was ("kernels: 412 cut to 10"), so an answer
// stays small whatever the trace.
json Bounded(json j, size_t n, json* notes, const std::string& where = "result") {
  if (j.is_array()) {
    if (j.size() > n) {
      notes->push_back(where + ": " + std::to_string(j.size()) + " cut to " + std::to_string(n));
      j.erase(j.begin() + std::ptrdiff_t(n), j.end());
    }
    for (auto& e : j) e = Bounded(std::move(e), n, notes, where + "[]");
  } else if (j.is_object()) {
    for (auto& [k, v] : j.items())
      v = Bounded(std::move(v), n, notes, where == "result" ? k : where + "." + k);
  }
  return j;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Tools
// ---------------------------------------------------------------------------------------------------------------

json Schema(json properties, std::vector<std::string> required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}};
}

json ToolList() {
  const json trace = {{"type", "string"}, {"description", "id returned by open_trace"}};
  const json n = {
      {"type", "integer"}, {"minimum", 1}, {"description", "rows to return (default 20, max 200)"}};
  json tools = json::array();
  auto add = [&](const char* name, const char* description, json schema) {
    tools.push_back({{"name", name}, {"description", description}, {"inputSchema", std::move(schema)}});
  };
  add("open_trace",
      "Open a trace file (.gtrace from gcollect, Chrome or PyTorch profiler/Kineto JSON, plain or "
      "gzipped, or a NAME.gtrace.parts folder). Returns its id (for the other tools) and an overview: "
      "devices with GPU idle share, event counts, data loss, top kernels. Times are in ns.",
      Schema({{"path",
               {{"type", "string"},
                {"description",
                 "file path on the server's machine: absolute, or relative to the directory the server "
                 "started in"}}}},
             {"path"}));
  add("top_kernels", "GPU kernels by total time (or count/avg/max): count, total/avg/min/max ns, share.",
      Schema({{"trace", trace},
              {"n", n},
              {"sort", {{"type", "string"}, {"enum", {"total", "count", "avg", "max"}}}},
              {"filter", {{"type", "string"}, {"description", "substring of the kernel name"}}}},
             {"trace"}));
  add("idle_gaps",
      "The longest GPU idle gaps, with what the CPU did meanwhile (API calls, NVTX ranges) and a "
      "diagnosis of the likely cause.",
      Schema({{"trace", trace}, {"n", n}}, {"trace"}));
  add("kernel_counters",
      "Hardware-counter analysis of profiled kernels (gcollect --counters): speed-of-light compute/memory %, "
      "roofline (FLOP/s, arithmetic intensity), occupancy, cache hit rates, top warp stalls, bottleneck "
      "and a one-line verdict.",
      Schema({{"trace", trace},
              {"kernel", {{"type", "string"}, {"description", "regular expression on the kernel name"}}},
              {"n", n}},
             {"trace"}));
  add("nvtx_ranges", "NVTX ranges and host ops by total time: count, total/avg/min/max ns.",
      Schema(
          {{"trace", trace}, {"n", n}, {"filter", {{"type", "string"}, {"description", "name substring"}}}},
          {"trace"}));
  add("cpu_samples",
      "Sampled CPU stacks (gcollect --sample=cpu) in a time range: the hottest frames (innermost Python "
      "frame, else native) and the stacks with the most samples, outermost frame first. Answers 'what was "
      "the CPU doing' for an idle gap (pass its start_ns/end_ns from idle_gaps).",
      Schema(
          {{"trace", trace},
           {"start_ns", {{"type", "integer"}, {"description", "range start (default: the trace's start)"}}},
           {"end_ns", {{"type", "integer"}, {"description", "range end (default: the trace's end)"}}},
           {"pid", {{"type", "integer"}, {"description", "only this process"}}},
           {"tid", {{"type", "integer"}, {"description", "only this thread (with pid)"}}},
           {"n", n}},
          {"trace"}));
  add("compare",
      "Compare two opened traces (as `gtrace diff`): total kernel time change, and the kernels, copies "
      "and API calls whose total time changed most.",
      Schema({{"trace_a", trace}, {"trace_b", trace}, {"n", n}}, {"trace_a", "trace_b"}));
  add("sql",
      "Run one read-only SQL SELECT on the trace exported to SQLite (tables like nsys's: "
      "CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_RUNTIME, NVTX_EVENTS, "
      "StringIds; views KERNELS, COPIES, API_CALLS, NVTX with names; KERNEL_COUNTERS, IDLE_GAPS, "
      "IDLE_GAP_ACTIVITY, DEVICE_ACTIVITY, PROCESSES, LOSSES, META; CPU_SAMPLES, CPU_STACK_FRAMES, views "
      "CPU_STACK_PATHS, CPU_SAMPLE_FRAMES for sampled CPU stacks). Times in ns. Schema: docs/sqlite.md.",
      Schema({{"trace", trace},
              {"query", {{"type", "string"}}},
              {"limit", {{"type", "integer"}, {"minimum", 1}, {"description", "max rows (default 200)"}}}},
             {"trace", "query"}));
  add("collectives",
      "NCCL collectives matched across the ranks of a multi-rank trace: who arrives late, how long "
      "others wait.",
      Schema({{"trace", trace}, {"n", n}}, {"trace"}));
  return tools;
}

json NameRows(const std::vector<viewer::NameSummary>& rows, size_t n) {
  return json::parse(viewer::NameSummaryJson(rows, n));
}

json Overview(const std::string& id, const McpServer::OpenTrace& t) {
  const viewer::TraceModel& m = *t.model;
  const json devices = json::parse(viewer::DevicesJson(m));
  const auto kernels = viewer::SummarizeByName(m, viewer::SummaryOf::kKernels);
  const auto profiled = viewer::AnalyzeProfiledKernels(m);
  return {{"trace", id},
          {"path", t.path},
          {"format", viewer::SourceFormatName(m.format)},
          {"events", m.event_count},
          {"duration_ns", m.span_ns()},
          {"processes", m.processes.size()},
          {"devices", devices},
          {"distinct_kernels", kernels.size()},
          {"total_kernel_ns", viewer::TotalNs(kernels)},
          {"top_kernels", NameRows(kernels, 5)},
          {"profiled_kernels", profiled.kernels.size()},
          {"multi_rank_collectives", m.collectives != nullptr},
          {"losses", json::parse(viewer::LossesJson(viewer::LossSummary(m)))}};
}

// Only reading: the authorizer refuses anything but SELECT and reads (ATTACH, PRAGMA, writes, DDL).
int Authorize(void*, int action, const char*, const char*, const char*, const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_FUNCTION:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    default:
      return SQLITE_DENY;
  }
}

struct Deadline {
  std::chrono::steady_clock::time_point until;
};
int Progress(void* p) {
  return std::chrono::steady_clock::now() > static_cast<Deadline*>(p)->until ? 1 : 0;
}

json CellJson(sqlite3_stmt* s, int c) {
  switch (sqlite3_column_type(s, c)) {
    case SQLITE_INTEGER:
      return sqlite3_column_int64(s, c);
    case SQLITE_FLOAT:
      return sqlite3_column_double(s, c);
    case SQLITE_NULL:
      return nullptr;
    case SQLITE_BLOB:
      return "<blob " + std::to_string(sqlite3_column_bytes(s, c)) + " bytes>";
    default: {
      std::string v(reinterpret_cast<const char*>(sqlite3_column_text(s, c)),
                    size_t(sqlite3_column_bytes(s, c)));
      if (v.size() > 1000) v = v.substr(0, 1000) + "…(" + std::to_string(v.size()) + " chars)";
      return v;
    }
  }
}

}  // namespace

struct McpTools {
  McpServer& s;

  McpServer::OpenTrace& Trace(const json& args, const char* name = "trace") {
    const std::string id = StringArg(args, name);
    auto it = s.traces_.find(id);
    if (it == s.traces_.end()) {
      std::string open;
      for (const auto& [k, v] : s.traces_) open += (open.empty() ? "" : ", ") + k + " (" + v->path + ")";
      throw ToolError{"no open trace '" + id +
                      "'; open traces: " + (open.empty() ? "none (call open_trace)" : open)};
    }
    return *it->second;
  }

  json OpenTraceTool(const json& args) {
    const std::string path = StringArg(args, "path");
    if (!s.options_.allow_files) throw ToolError{"opening files is disabled in this server"};
    for (const auto& [id, t] : s.traces_)
      if (t->path == path) return Overview(id, *t);
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(st)) throw ToolError{path + ": no such file"};
    // Devices and pipes would be read forever; a folder is a NAME.gtrace.parts.
    if (!std::filesystem::is_regular_file(st) && !std::filesystem::is_directory(st))
      throw ToolError{path + ": not a regular file"};
    if (s.traces_.size() >= s.options_.max_open_traces)
      throw ToolError{"too many open traces (" + std::to_string(s.options_.max_open_traces) + ")"};
    auto model = viewer::LoadTraceFile(path, CommandLoadOptions());
    if (!model.ok()) throw ToolError{path + ": " + model.status().ToString()};
    auto t = std::make_unique<McpServer::OpenTrace>();
    t->path = path;
    t->model = std::move(model).value();
    const std::string id = "t" + std::to_string(s.next_id_++);
    json out = Overview(id, *t);
    s.traces_[id] = std::move(t);
    return out;
  }

  json TopKernels(const json& args) {
    const auto& t = Trace(args);
    const size_t n = OptCount(args, "n", 20, 200);
    const std::string sort = OptString(args, "sort", "total"), filter = OptString(args, "filter", "");
    auto rows = viewer::SummarizeByName(*t.model, viewer::SummaryOf::kKernels);
    const size_t all = rows.size();
    if (!filter.empty())
      std::erase_if(rows,
                    [&](const viewer::NameSummary& r) { return r.name.find(filter) == std::string::npos; });
    auto by = [&](auto key) {
      std::stable_sort(rows.begin(), rows.end(),
                       [&](const auto& a, const auto& b) { return key(a) > key(b); });
    };
    if (sort == "count")
      by([](const viewer::NameSummary& r) { return double(r.count); });
    else if (sort == "avg")
      by([](const viewer::NameSummary& r) { return r.avg_ns; });
    else if (sort == "max")
      by([](const viewer::NameSummary& r) { return double(r.max_ns); });
    else if (sort != "total")
      throw ToolError{"sort must be one of total, count, avg, max"};
    return {
        {"kernels", NameRows(rows, n)},
        {"matching", rows.size()},
        {"distinct_kernels", all},
        {"total_kernel_ns", viewer::TotalNs(viewer::SummarizeByName(*t.model, viewer::SummaryOf::kKernels))}};
  }

  json IdleGaps(const json& args) {
    const auto& t = Trace(args);
    const size_t n = OptCount(args, "n", 10, 200);
    json devices = json::array();
    for (const auto& d : t.model->device_summaries)
      devices.push_back({{"id", d.device_id}, {"idle_share", d.idle_share()}, {"idle_ns", d.idle_ns()}});
    return {{"devices", devices},
            {"gaps", json::parse(viewer::IdleGapsJson(viewer::ExplainIdleGaps(*t.model, n)))}};
  }

  json KernelCounters(const json& args) {
    const auto& t = Trace(args);
    const size_t n = OptCount(args, "n", 20, 200);
    const std::string pattern = OptString(args, "kernel", "");
    if (pattern.size() > 500) throw ToolError{"kernel pattern too long (500 characters at most)"};
    std::regex re;
    try {
      re = std::regex(pattern, std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
    } catch (const std::regex_error& e) {
      throw ToolError{"bad regular expression '" + pattern + "': " + e.what()};
    }
    const viewer::ProfiledKernels p = viewer::AnalyzeProfiledKernels(*t.model);
    auto pct = [](const Quantity& q) { return q ? json(q.value) : json(nullptr); };
    json out = json::array();
    size_t matching = 0;
    for (size_t i = 0; i < p.kernels.size(); ++i) {
      const KernelAnalysis& a = p.kernels[i];
      if (!pattern.empty() && !std::regex_search(a.kernel_name, re)) continue;
      if (++matching > n) continue;
      json stalls = json::array();
      for (const auto& st : a.stalls) {
        if (st.stall_share <= 0) continue;
        stalls.push_back({{"reason", st.reason}, {"share_of_stalls", st.stall_share}});
        if (stalls.size() == 3) break;
      }
      json flags = json::array();
      for (const auto& f : a.flags) flags.push_back(f.metric + ": " + f.message);
      const size_t dram = size_t(MemoryLevel::kDram);
      out.push_back({{"name", a.kernel_name},
                     {"pid", a.pid},
                     {"profiled_launches", a.launches},
                     {"time_per_launch_ns", a.time_s ? json(a.time_s.value * 1e9) : json(nullptr)},
                     {"total_gpu_time_ns", p.kernel_total_time_s[i] * 1e9},
                     {"sol_compute_pct", pct(a.compute_pct)},
                     {"sol_memory_pct", pct(a.memory_pct)},
                     {"memory_level", MemoryLevelName(a.memory_level)},
                     {"flops_per_s", pct(a.flops_per_s)},
                     {"dram_intensity_flop_per_byte", pct(a.intensity[dram])},
                     {"achieved_occupancy_pct", pct(a.achieved_occupancy_pct)},
                     {"theoretical_occupancy_pct",
                      a.occupancy.valid ? json(a.occupancy.theoretical_pct) : json(nullptr)},
                     {"occupancy_limiter", a.occupancy.valid ? json(a.occupancy.explanation) : json(nullptr)},
                     {"l1_hit_pct", pct(a.l1_hit_pct)},
                     {"l2_hit_pct", pct(a.l2_hit_pct)},
                     {"top_stalls", stalls},
                     {"bottleneck", BottleneckName(a.bottleneck)},
                     {"verdict", a.verdict},
                     {"flagged_values", flags}});
    }
    json r = {{"kernels", out}, {"matching", matching}, {"profiled_kernels", p.kernels.size()}};
    if (p.kernels.empty())
      r["note"] = "this trace has no hardware counters (record them with gcollect --counters)";
    return r;
  }

  json CpuSamples(const json& args) {
    const auto& t = Trace(args);
    const viewer::TraceModel& m = *t.model;
    const size_t n = OptCount(args, "n", 20, 200);
    auto integer = [&](const char* name, int64_t def) {
      if (!args.contains(name)) return def;
      if (!args[name].is_number_integer())
        throw ToolError{std::string("argument '") + name + "' must be an integer"};
      return args[name].get<int64_t>();
    };
    int64_t first = m.first_ns, last = m.last_ns;
    if (m.cpu.size()) first = std::min(first, m.cpu.ts.front()), last = std::max(last, m.cpu.ts.back());
    const int64_t start = integer("start_ns", first),
                  end = integer("end_ns", last == INT64_MAX ? last : last + 1);
    const int64_t pid = integer("pid", -1), tid = integer("tid", -1);
    if (tid >= 0 && pid < 0) throw ToolError{"argument 'tid' needs 'pid'"};
    const uint32_t pids[] = {uint32_t(pid)};
    const viewer::ThreadKey threads[] = {{uint32_t(pid), uint32_t(tid)}};
    std::span<const uint32_t> p = pid >= 0 ? std::span<const uint32_t>(pids) : std::span<const uint32_t>();
    std::span<const viewer::ThreadKey> th =
        tid >= 0 ? std::span<const viewer::ThreadKey>(threads) : std::span<const viewer::ThreadKey>();
    json out = json::parse(viewer::CpuRangeProfileJson(viewer::ProfileCpuRange(m, start, end, p, th, n)));
    out["start_ns"] = start, out["end_ns"] = end;
    out["stacks"] = json::parse(viewer::HotStacksJson(m, viewer::BuildFlameGraph(m, start, end, p, th), n));
    if (m.cpu.size() == 0) out["note"] = "this trace has no CPU samples (record with gcollect --sample=cpu)";
    return out;
  }
  json NvtxRanges(const json& args) {
    const auto& t = Trace(args);
    const size_t n = OptCount(args, "n", 20, 200);
    const std::string filter = OptString(args, "filter", "");
    auto rows = viewer::SummarizeByName(*t.model, viewer::SummaryOf::kNvtx);
    if (!filter.empty())
      std::erase_if(rows,
                    [&](const viewer::NameSummary& r) { return r.name.find(filter) == std::string::npos; });
    return {{"ranges", NameRows(rows, n)}, {"matching", rows.size()}};
  }

  json Compare(const json& args, json* notes) {
    const auto& a = Trace(args, "trace_a");
    const auto& b = Trace(args, "trace_b");
    const size_t n = OptCount(args, "n", 10, 200);
    return Bounded(json::parse(viewer::DiffJson(*a.model, a.path, *b.model, b.path)), n, notes);
  }

  json Collectives(const json& args, json* notes) {
    const auto& t = Trace(args);
    const size_t n = OptCount(args, "n", 20, 200);
    if (!t.model->collectives)
      return {{"note", "no NCCL collectives across two or more ranks in this trace"}};
    return Bounded(json::parse(viewer::CollectivesJson(*t.model->collectives)), n, notes);
  }

  json Sql(const json& args, json* notes) {
    auto& t = Trace(args);
    const std::string query = StringArg(args, "query");
    const size_t limit = OptCount(args, "limit", 200, s.options_.max_sql_rows);
    if (!t.db) {
      sqlite3* db = nullptr;
      if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
          SQLITE_OK) {
        sqlite3_close(db);
        throw ToolError{"cannot create an in-memory database"};
      }
      Status st = ExportSqlite(*t.model, db);
      if (!st.ok()) {
        sqlite3_close(db);
        throw ToolError{"SQL export failed: " + st.ToString()};
      }
      // Read-only from here: no writes, no ATTACH (which could create files), no extensions.
      sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
      sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 16 << 20);
      // Sorts and temporary tables stay in memory: no temporary files either.
      (void)sqlite3_exec(db, "PRAGMA temp_store=MEMORY; PRAGMA query_only=1", nullptr, nullptr, nullptr);
      sqlite3_set_authorizer(db, &Authorize, nullptr);
      t.db = db;
    }
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(t.db, query.c_str(), int(query.size()), &stmt, &tail) != SQLITE_OK) {
      std::string e = sqlite3_errmsg(t.db);
      sqlite3_finalize(stmt);
      if (e.find("not authorized") != std::string::npos)
        e += " (the sql tool runs read-only SELECT queries only)";
      throw ToolError{"SQL error: " + e};
    }
    if (!stmt) throw ToolError{"empty query"};
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> guard(stmt, &sqlite3_finalize);
    if (tail && std::string_view(tail).find_first_not_of(" \t\r\n;") != std::string_view::npos)
      throw ToolError{"one statement per call"};
    if (!sqlite3_stmt_readonly(stmt)) throw ToolError{"the sql tool runs read-only SELECT queries only"};
    Deadline deadline{std::chrono::steady_clock::now() +
                      std::chrono::milliseconds(int64_t(s.options_.sql_timeout_s * 1000))};
    sqlite3_progress_handler(t.db, 10000, &Progress, &deadline);
    json columns = json::array(), rows = json::array();
    const int nc = sqlite3_column_count(stmt);
    for (int c = 0; c < nc; ++c)
      columns.push_back(sqlite3_column_name(stmt, c) ? sqlite3_column_name(stmt, c) : "");
    bool more = false;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      if (rows.size() == limit) {
        more = true;
        break;
      }
      json row = json::array();
      for (int c = 0; c < nc; ++c) row.push_back(CellJson(stmt, c));
      rows.push_back(std::move(row));
    }
    sqlite3_progress_handler(t.db, 0, nullptr, nullptr);
    if (rc == SQLITE_INTERRUPT)
      throw ToolError{"query interrupted: it ran longer than " +
                      std::to_string(int(s.options_.sql_timeout_s)) + " s"};
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
      throw ToolError{std::string("SQL error: ") + sqlite3_errmsg(t.db)};
    if (more) notes->push_back("rows cut at limit " + std::to_string(limit));
    return {{"columns", columns}, {"rows", rows}};
  }
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Dispatch
// ---------------------------------------------------------------------------------------------------------------

McpServer::McpServer(McpOptions options) : options_(options) {}
McpServer::~McpServer() = default;

std::string McpServer::AdoptTrace(const std::string& label, std::unique_ptr<viewer::TraceModel> model) {
  auto t = std::make_unique<OpenTrace>();
  t->path = label;
  t->model = std::move(model);
  const std::string id = "t" + std::to_string(next_id_++);
  traces_[id] = std::move(t);
  return id;
}

std::string McpServer::TooLargeResponse() {
  return ErrorResponse(nullptr, kInvalidRequest,
                       "message longer than " + std::to_string(kMcpMaxLineBytes) + " bytes (not read)");
}

std::string McpServer::Handle(std::string_view message) {
  json req = json::parse(message.begin(), message.end(), nullptr, /*allow_exceptions=*/false);
  if (req.is_discarded()) return ErrorResponse(nullptr, kParseError, "parse error: not valid JSON");
  if (req.is_array()) return ErrorResponse(nullptr, kInvalidRequest, "batches are not supported");
  if (!req.is_object()) return ErrorResponse(nullptr, kInvalidRequest, "a request must be a JSON object");
  json id = nullptr;
  const bool has_id = req.contains("id");
  if (has_id) {
    id = req["id"];
    if (!id.is_string() && !id.is_number_integer() && !id.is_null())
      return ErrorResponse(nullptr, kInvalidRequest, "id must be a string or an integer");
  }
  if (!req.contains("method")) {
    // A response to a request we never send, or garbage: answer only what looks like a bad request.
    if (req.contains("result") || req.contains("error")) return "";
    return ErrorResponse(id, kInvalidRequest, "missing method");
  }
  if (req.value("jsonrpc", json()) != "2.0")
    return ErrorResponse(id, kInvalidRequest, "jsonrpc must be \"2.0\"");
  if (!req["method"].is_string()) return ErrorResponse(id, kInvalidRequest, "method must be a string");
  const std::string method = req["method"].get<std::string>();
  if (!has_id) return "";  // a notification (notifications/initialized, cancelled, ...): no answer
  json params = req.contains("params") ? req["params"] : json::object();
  if (!params.is_object()) return ErrorResponse(id, kInvalidParams, "params must be an object");
  auto ok = [&](json result) {
    return Dump({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
  };
  try {
    if (method == "initialize") {
      std::string version = kProtocolVersions[0];
      if (params.contains("protocolVersion") && params["protocolVersion"].is_string())
        for (const char* v : kProtocolVersions)
          if (params["protocolVersion"] == v) version = v;
      return ok({{"protocolVersion", version},
                 {"capabilities", {{"tools", {{"listChanged", false}}}}},
                 {"serverInfo", {{"name", "gtrace"}, {"version", "0.1.0"}}},
                 {"instructions",
                  "Open a GPU trace with open_trace, then ask top_kernels, idle_gaps, kernel_counters, "
                  "nvtx_ranges, cpu_samples, compare, collectives or sql with the returned trace id. Times "
                  "are in ns."}});
    }
    if (method == "ping") return ok(json::object());
    if (method == "tools/list") return ok({{"tools", ToolList()}});
    if (method != "tools/call") return ErrorResponse(id, kMethodNotFound, "unknown method '" + method + "'");
    if (!params.contains("name") || !params["name"].is_string())
      return ErrorResponse(id, kInvalidParams, "tools/call needs a string 'name'");
    const std::string tool = params["name"].get<std::string>();
    const json args = params.contains("arguments") ? params["arguments"] : json::object();
    if (!args.is_object()) return ErrorResponse(id, kInvalidParams, "arguments must be an object");
    McpTools tools{*this};
    json notes = json::array();
    json result;
    try {
      if (tool == "open_trace")
        result = tools.OpenTraceTool(args);
      else if (tool == "top_kernels")
        result = tools.TopKernels(args);
      else if (tool == "idle_gaps")
        result = tools.IdleGaps(args);
      else if (tool == "kernel_counters")
        result = tools.KernelCounters(args);
      else if (tool == "nvtx_ranges")
        result = tools.NvtxRanges(args);
      else if (tool == "cpu_samples")
        result = tools.CpuSamples(args);
      else if (tool == "compare")
        result = tools.Compare(args, &notes);
      else if (tool == "sql")
        result = tools.Sql(args, &notes);
      else if (tool == "collectives")
        result = tools.Collectives(args, &notes);
      else
        return ErrorResponse(id, kInvalidParams, "unknown tool '" + tool + "'");
    } catch (const ToolError& e) {
      return ok({{"content", {{{"type", "text"}, {"text", e.message}}}}, {"isError", true}});
    }
    if (!notes.empty()) result["truncated"] = notes;
    std::string text = Dump(result);
    if (text.size() > options_.max_result_bytes) {
      text.resize(options_.max_result_bytes);
      text +=
          "\n…(result cut at " + std::to_string(options_.max_result_bytes) + " bytes; ask for fewer rows)";
    }
    return ok({{"content", {{{"type", "text"}, {"text", text}}}}, {"isError", false}});
  } catch (const json::exception& e) {
    return ErrorResponse(id, kInvalidParams, std::string("bad params: ") + e.what());
  } catch (const std::exception& e) {
    return ErrorResponse(id, kInternalError, std::string("internal error: ") + e.what());
  }
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Stdio loop
// ---------------------------------------------------------------------------------------------------------------

int RunMcpStdio(McpServer& server, int in_fd, std::FILE* out) {
  std::string line, buf;
  bool oversized = false;
  char chunk[65536];
  auto emit = [&](const std::string& r) {
    if (r.empty()) return;
    std::fwrite(r.data(), 1, r.size(), out);
    std::fputc('\n', out);
    std::fflush(out);
  };
  for (;;) {
    const ssize_t got = ::read(in_fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    size_t from = 0;
    for (ssize_t i = 0; i < got; ++i) {
      if (chunk[i] != '\n') continue;
      if (!oversized) line.append(chunk + from, size_t(i) - from);
      if (oversized)
        emit(McpServer::TooLargeResponse());
      else if (line.find_first_not_of(" \t\r") != std::string::npos)
        emit(server.Handle(line));
      line.clear();
      oversized = false;
      from = size_t(i) + 1;
    }
    if (!oversized) line.append(chunk + from, size_t(got) - from);
    if (line.size() > kMcpMaxLineBytes) {
      oversized = true;
      line.clear();
      line.shrink_to_fit();
    }
  }
  if (oversized)
    emit(McpServer::TooLargeResponse());
  else if (line.find_first_not_of(" \t\r") != std::string::npos)
    emit(server.Handle(line));
  return 0;
}

}  // namespace gt::cli
