// Chrome trace-event JSON writer. Streams: events are formatted into a buffer handed out in ~1 MiB pieces.
// Strings are escaped once per interned id (nlohmann's escaper, invalid UTF-8 replaced), not once per event.
#include "chrome_export.h"

#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <unordered_map>

namespace gt {
namespace {

constexpr uint32_t kGpuPidBase = 1u << 30;  // pseudo-pids of GPUs, far above real pids (< 2^22 on Linux)
constexpr uint32_t kSystemPid = kGpuPidBase - 1;

std::string Escape(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

class Out {
 public:
  Out(const std::function<Status(std::string_view)>& write, size_t cap) : write_(write), cap_(cap) {
    buf_.reserve(cap + 4096);
  }
  Out& operator<<(std::string_view s) {
    buf_.append(s);
    return *this;
  }
  Out& operator<<(char c) {
    buf_.push_back(c);
    return *this;
  }
  Out& Int(int64_t v) {
    char tmp[24];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, size_t(r.ptr - tmp));
    return *this;
  }
  Out& UInt(uint64_t v) {
    char tmp[24];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, size_t(r.ptr - tmp));
    return *this;
  }
  // Nanoseconds as microseconds with three decimals, exactly (no floating point).
  Out& Micros(int64_t ns) {
    uint64_t u = uint64_t(ns);
    if (ns < 0) {
      buf_.push_back('-');
      u = uint64_t(0) - u;  // also right for INT64_MIN
    }
    UInt(u / 1000);
    unsigned frac = unsigned(u % 1000);
    if (frac) {
      char f[4] = {'.', char('0' + frac / 100), char('0' + frac / 10 % 10), char('0' + frac % 10)};
      size_t n = 4;
      while (f[n - 1] == '0') --n;
      buf_.append(f, n);
    }
    return *this;
  }
  Out& Double(double v) {
    if (!(v == v) || v > 1.7e308 || v < -1.7e308) return *this << "0";  // JSON has no NaN/Inf
    char tmp[40];
    int n = std::snprintf(tmp, sizeof tmp, "%.17g", v);
    buf_.append(tmp, size_t(n));
    return *this;
  }
  Status MaybeFlush() {
    if (buf_.size() < cap_) return Status::Ok();
    return Flush();
  }
  Status Flush() {
    if (buf_.empty()) return Status::Ok();
    Status s = write_(buf_);
    buf_.clear();
    return s;
  }

 private:
  const std::function<Status(std::string_view)>& write_;
  size_t cap_;
  std::string buf_;
};

class Exporter {
 public:
  Exporter(const TraceData& t, Out& out, const ChromeExportOptions& o) : t_(t), out_(out), options_(o) {
    escaped_.resize(t.strings.size());
  }

  Status Run() {
    out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    GT_RETURN_IF_ERROR(NameTracks());
    IndexApiCalls();
    for (const auto& r : t_.api_calls) {
      Begin('X', Str(r.name), "cuda_api", r.pid, r.tid, r.start);
      Dur(r.start, r.end);
      out_ << ",\"args\":{\"correlation\":";
      out_.UInt(r.correlation_id) << ",\"cbid\":";
      out_.UInt(r.callback_id) << ",\"return\":";
      out_.Int(r.return_code) << "}}";
      GT_RETURN_IF_ERROR(End());
    }
    for (const auto& r : t_.kernels) {
      uint32_t gpid = GpuPid(r.pid, r.device_id);
      Begin('X', Str(r.name), "kernel", gpid, r.stream_id, r.start);
      Dur(r.start, r.end);
      out_ << ",\"args\":{\"correlation\":";
      out_.UInt(r.correlation_id) << ",\"grid\":[";
      out_.UInt(r.grid[0]) << ',';
      out_.UInt(r.grid[1]) << ',';
      out_.UInt(r.grid[2]) << "],\"block\":[";
      out_.UInt(r.block[0]) << ',';
      out_.UInt(r.block[1]) << ',';
      out_.UInt(r.block[2]) << "],\"registers\":";
      out_.UInt(r.registers_per_thread) << ",\"shared\":";
      out_.UInt(uint64_t(r.static_shared_bytes) + r.dynamic_shared_bytes) << "}}";
      GT_RETURN_IF_ERROR(End());
      GT_RETURN_IF_ERROR(Flow(r.pid, r.correlation_id, gpid, r.stream_id, r.start));
    }
    for (const auto& r : t_.memcpys) {
      uint32_t gpid = GpuPid(r.pid, r.device_id);
      std::string name = std::string("\"Memcpy ") + CopyKindName(r.copy_kind) + "\"";
      Begin('X', name, "memcpy", gpid, r.stream_id, r.start);
      Dur(r.start, r.end);
      out_ << ",\"args\":{\"bytes\":";
      out_.UInt(r.bytes) << ",\"correlation\":";
      out_.UInt(r.correlation_id) << ",\"src\":\"" << MemoryKindName(r.src_kind) << "\",\"dst\":\""
                                  << MemoryKindName(r.dst_kind) << "\"}}";
      GT_RETURN_IF_ERROR(End());
      GT_RETURN_IF_ERROR(Flow(r.pid, r.correlation_id, gpid, r.stream_id, r.start));
    }
    for (const auto& r : t_.memsets) {
      uint32_t gpid = GpuPid(r.pid, r.device_id);
      Begin('X', "\"Memset\"", "memset", gpid, r.stream_id, r.start);
      Dur(r.start, r.end);
      out_ << ",\"args\":{\"bytes\":";
      out_.UInt(r.bytes) << ",\"value\":";
      out_.UInt(r.value) << ",\"correlation\":";
      out_.UInt(r.correlation_id) << "}}";
      GT_RETURN_IF_ERROR(End());
      GT_RETURN_IF_ERROR(Flow(r.pid, r.correlation_id, gpid, r.stream_id, r.start));
    }
    for (const auto& r : t_.nvtx) {
      bool mark = (r.flags & kNvtxMark) != 0;
      Begin(mark ? 'i' : 'X', Str(r.message), "nvtx", r.pid, r.tid, r.start);
      if (mark)
        out_ << ",\"s\":\"t\"";
      else
        Dur(r.start, r.end);
      if (r.domain) out_ << ",\"args\":{\"domain\":" << Str(r.domain) << "}";
      out_ << '}';
      GT_RETURN_IF_ERROR(End());
    }
    for (const auto& r : t_.syncs) {
      std::string name = std::string("\"") + SyncKindName(r.sync_kind) + "\"";
      Begin('X', name, "sync", r.pid, r.tid, r.start);
      Dur(r.start, r.end);
      out_ << '}';
      GT_RETURN_IF_ERROR(End());
    }
    for (const auto& r : t_.overheads) {
      Begin('X', Str(r.kind), "overhead", r.pid, r.tid, r.start);
      Dur(r.start, r.end);
      out_ << '}';
      GT_RETURN_IF_ERROR(End());
    }
    GT_RETURN_IF_ERROR(MemoryCounters());
    GT_RETURN_IF_ERROR(Counters());
    out_ << "\n],\"otherData\":{";
    bool first = true;
    for (const auto& [k, v] : t_.metadata.entries) {
      out_ << (first ? "" : ",") << Escape(k) << ':' << Escape(v);
      first = false;
    }
    out_ << "}}\n";
    return out_.Flush();
  }

 private:
  const std::string& Str(StringId id) {
    if (id >= escaped_.size()) {
      static const std::string kEmpty = "\"\"";
      return kEmpty;
    }
    std::string& e = escaped_[id];
    if (e.empty()) e = Escape(t_.strings[id]);
    return e;
  }

  void Begin(char ph, std::string_view quoted_name, const char* cat, uint32_t pid, uint32_t tid, int64_t ts) {
    out_ << (first_event_ ? "" : ",\n") << "{\"ph\":\"" << ph << "\",\"name\":" << quoted_name
         << ",\"cat\":\"" << cat << "\",\"pid\":";
    out_.UInt(pid) << ",\"tid\":";
    out_.UInt(tid) << ",\"ts\":";
    out_.Micros(ts);
    first_event_ = false;
  }
  void Dur(int64_t start, int64_t end) {
    out_ << ",\"dur\":";
    out_.Micros(end > start ? end - start : 0);
  }
  Status End() { return out_.MaybeFlush(); }

  void Meta(const char* what, uint32_t pid, uint32_t tid, const std::string& quoted_value,
            bool sort = false) {
    out_ << (first_event_ ? "" : ",\n") << "{\"ph\":\"M\",\"name\":\"" << what << "\",\"pid\":";
    out_.UInt(pid) << ",\"tid\":";
    out_.UInt(tid) << ",\"args\":{\"" << (sort ? "sort_index" : "name") << "\":" << quoted_value << "}}";
    first_event_ = false;
  }

  uint32_t GpuPid(uint32_t pid, uint32_t device) {
    auto key = std::make_pair(pid, device);
    auto it = gpu_pids_.find(key);
    if (it != gpu_pids_.end()) return it->second;
    uint32_t gpid = kGpuPidBase + uint32_t(gpu_pids_.size());
    gpu_pids_.emplace(key, gpid);
    return gpid;
  }

  // Names processes, threads, GPUs and streams up front (Chrome applies M events regardless of position).
  Status NameTracks() {
    std::map<uint32_t, std::string> process_names;
    for (const auto& p : t_.processes) {
      std::string n = t_.Str(p.name).empty() ? "process" : t_.Str(p.name);
      process_names[p.pid] = n + " (pid " + std::to_string(p.pid) + ")";
    }
    std::set<uint32_t> pids;
    for (const auto& p : t_.processes) pids.insert(p.pid);
    for (const auto& r : t_.api_calls) pids.insert(r.pid);
    std::set<uint32_t> gpu_processes;
    for (const auto& r : t_.kernels) gpu_processes.insert(r.pid);
    for (uint32_t pid : pids) {
      auto it = process_names.find(pid);
      Meta("process_name", pid, 0,
           Escape(it != process_names.end() ? it->second : "pid " + std::to_string(pid)));
    }
    for (const auto& th : t_.threads) {
      std::string n = t_.Str(th.name).empty() ? "thread " + std::to_string(th.tid)
                                              : t_.Str(th.name) + " (" + std::to_string(th.tid) + ")";
      Meta("thread_name", th.pid, th.tid, Escape(n));
    }
    // GPUs: every (pid, device) with GPU work or a DeviceRecord, streams from records and StreamRecords.
    std::map<std::pair<uint32_t, uint32_t>, std::string> device_names;
    for (const auto& d : t_.devices) device_names[{d.pid, d.device_id}] = t_.Str(d.name);
    std::set<std::tuple<uint32_t, uint32_t, uint32_t>> streams;
    auto add = [&](uint32_t pid, uint32_t dev, uint32_t stream) {
      device_names.try_emplace({pid, dev}, "");
      streams.insert({pid, dev, stream});
    };
    for (const auto& r : t_.kernels) add(r.pid, r.device_id, r.stream_id);
    for (const auto& r : t_.memcpys) add(r.pid, r.device_id, r.stream_id);
    for (const auto& r : t_.memsets) add(r.pid, r.device_id, r.stream_id);
    std::set<uint32_t> device_pids;
    for (const auto& [key, name] : device_names) device_pids.insert(key.first);
    for (const auto& [key, name] : device_names) {
      uint32_t gpid = GpuPid(key.first, key.second);
      std::string n = "GPU " + std::to_string(key.second);
      if (!name.empty()) n += " (" + name + ")";
      if (device_pids.size() > 1) n += " [pid " + std::to_string(key.first) + "]";
      Meta("process_name", gpid, 0, Escape(n));
      Meta("process_sort_index", gpid, 0, std::to_string(gpid - kGpuPidBase + 1000), true);
    }
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::string> stream_names;
    for (const auto& s : t_.streams)
      if (s.name) stream_names[{s.pid, s.device_id, s.stream_id}] = t_.Str(s.name);
    for (const auto& key : streams) {
      auto [pid, dev, stream] = key;
      std::string n = "stream " + std::to_string(stream);
      auto it = stream_names.find(key);
      if (it != stream_names.end()) n += " (" + it->second + ")";
      Meta("thread_name", GpuPid(pid, dev), stream, Escape(n));
    }
    return out_.MaybeFlush();
  }

  void IndexApiCalls() {
    if (!options_.flows) return;
    api_by_corr_.reserve(t_.api_calls.size());
    for (uint32_t i = 0; i < t_.api_calls.size(); ++i) {
      const auto& a = t_.api_calls[i];
      if (a.correlation_id) api_by_corr_.emplace((uint64_t(a.pid) << 32) | a.correlation_id, i);
    }
  }

  Status Flow(uint32_t pid, uint32_t corr, uint32_t gpid, uint32_t stream, int64_t ts) {
    if (!options_.flows || corr == 0) return Status::Ok();
    auto it = api_by_corr_.find((uint64_t(pid) << 32) | corr);
    if (it == api_by_corr_.end()) return Status::Ok();
    const ApiCallRecord& a = t_.api_calls[it->second];
    uint64_t id = ++flow_id_;
    out_ << ",\n{\"ph\":\"s\",\"name\":\"launch\",\"cat\":\"flow\",\"id\":";
    out_.UInt(id) << ",\"pid\":";
    out_.UInt(a.pid) << ",\"tid\":";
    out_.UInt(a.tid) << ",\"ts\":";
    out_.Micros(a.start) << "},\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"launch\",\"cat\":\"flow\",\"id\":";
    out_.UInt(id) << ",\"pid\":";
    out_.UInt(gpid) << ",\"tid\":";
    out_.UInt(stream) << ",\"ts\":";
    out_.Micros(ts) << '}';
    return out_.MaybeFlush();
  }

  // Device memory in use per GPU, from alloc/free records.
  Status MemoryCounters() {
    std::map<std::pair<uint32_t, uint32_t>, int64_t> in_use;
    for (const auto& m : t_.memory) {
      int64_t& v = in_use[{m.pid, m.device_id}];
      v += m.op == uint8_t(MemoryOp::kFree) ? -int64_t(m.bytes) : int64_t(m.bytes);
      Begin('C', "\"Device memory\"", "memory", GpuPid(m.pid, m.device_id), 0, m.timestamp);
      out_ << ",\"args\":{\"bytes\":";
      out_.Int(v) << "}}";
      GT_RETURN_IF_ERROR(End());
    }
    return Status::Ok();
  }

  Status Counters() {
    std::unordered_map<uint32_t, const CounterDescriptor*> desc;
    for (const auto& d : t_.counter_descriptors) desc[d.counter_id] = &d;
    bool system_named = false;
    for (const auto& s : t_.counter_samples) {
      auto it = desc.find(s.counter_id);
      uint32_t pid = kSystemPid;
      std::string name = "\"counter " + std::to_string(s.counter_id) + "\"";
      if (it != desc.end()) {
        const CounterDescriptor& d = *it->second;
        name = Str(d.name);
        if (d.device_id != kNone)
          pid = GpuPid(d.pid, d.device_id);
        else if (d.pid != 0)
          pid = d.pid;
      }
      if (pid == kSystemPid && !system_named) {
        Meta("process_name", kSystemPid, 0, "\"System\"");
        system_named = true;
      }
      Begin('C', name, "counter", pid, 0, s.timestamp);
      out_ << ",\"args\":{\"value\":";
      out_.Double(s.value) << "}}";
      GT_RETURN_IF_ERROR(End());
    }
    return Status::Ok();
  }

  const TraceData& t_;
  Out& out_;
  const ChromeExportOptions& options_;
  std::vector<std::string> escaped_;
  bool first_event_ = true;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> gpu_pids_;
  std::unordered_map<uint64_t, uint32_t> api_by_corr_;
  uint64_t flow_id_ = 0;
};

}  // namespace

Status ExportChromeJson(const TraceData& trace, const std::function<Status(std::string_view)>& write,
                        const ChromeExportOptions& options) {
  Out out(write, options.buffer_bytes);
  Exporter e(trace, out, options);
  return e.Run();
}

}  // namespace gt
