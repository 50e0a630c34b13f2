// Chrome trace JSON and PyTorch profiler (Kineto) JSON -> ModelBuilder, through nlohmann's SAX interface (no
// DOM of the whole file, no exceptions), and the mapping of events onto the builder shared with the fast
// front end.
//
// [SECTION] Numbers and args
// [SECTION] Event mapping (Chrome phases, Kineto categories)
// [SECTION] SAX handler
// [SECTION] Entry point
//
// This is the reference front end (LoadOptions::JsonParser::kReference); import_json_fast.cc is the default.
//
// Kineto conventions (torch.profiler export_chrome_trace): GPU events carry pid = device index, tid = stream
// id and args {device, stream, correlation, grid, block, registers per thread, shared memory, bytes, ...};
// CUDA runtime calls carry args.correlation. GPU work is attributed to the host process that issued the
// runtime calls so that launch -> kernel arrows resolve by correlation id (the "ac2g" flow events become
// redundant and are skipped).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "gt/viewer/load.h"

#include "import_json_internal.h"
#include "json_scan.h"

namespace gt::viewer {

namespace json_import {

using json = nlohmann::json;

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Numbers and args
// -----------------------------------------------------------------------------------------------------------------

// Microseconds as written ("1712345678901234.567") -> integer nanoseconds, exactly: a double would lose the
// nanoseconds of epoch-based timestamps.
bool MicrosToNanos(std::string_view s, int64_t* out) {
  bool neg = false;
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i] == '-', ++i;
  // This runs for every "ts" and "dur": digits found and valued eight at a time.
  const size_t int_start = i;
  i = size_t(detail::SkipDigits(s.data() + i, s.data() + s.size()) - s.data());
  const size_t int_digits = i - int_start;
  size_t digits = int_digits;
  // 18 digits fit in 64 bits; longer ones go on in 128.
  __int128 whole = detail::DigitsValue(s.data() + int_start, std::min<size_t>(int_digits, 18));
  for (size_t k = 18; k < int_digits; ++k) {
    whole = whole * 10 + (s[int_start + k] - '0');
    if (whole > (__int128)INT64_MAX) return false;
  }
  int64_t frac_ns = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    int scale = 100;  // first fractional digit of a microsecond = 100 ns
    bool round_up = false;
    for (int k = 0; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++k) {
      if (k < 3)
        frac_ns += (s[i] - '0') * scale, scale /= 10;
      else if (k == 3)
        round_up = s[i] >= '5';
      ++digits;
    }
    frac_ns += round_up;
  }
  if (digits == 0) return false;
  if (i != s.size()) {  // exponent form: rare, precision is whatever the double has
    char* end = nullptr;
    std::string copy(s);
    double d = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size() || !std::isfinite(d) || std::fabs(d) > 9e15) return false;
    *out = static_cast<int64_t>(std::llround(d * 1000.0));
    return true;
  }
  if (int_digits <= 15) {  // below 1e15 us: nanoseconds fit in 64 bits (no 128-bit multiply, slow in wasm)
    const int64_t ns = static_cast<int64_t>(whole) * 1000 + frac_ns;
    *out = neg ? -ns : ns;
    return true;
  }
  __int128 ns = whole * 1000 + frac_ns;
  if (ns > (__int128)INT64_MAX) return false;
  *out = static_cast<int64_t>(neg ? -ns : ns);
  return true;
}

bool ParseInt(std::string_view s, int64_t* v) {
  if (s.empty()) return false;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    uint64_t u = 0;
    auto [p, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), u, 16);
    if (ec != std::errc() || p != s.data() + s.size()) return false;
    *v = static_cast<int64_t>(u);
    return true;
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  if (ec == std::errc() && p == s.data() + s.size()) return true;
  // "12.0" written by some exporters
  char* end = nullptr;
  std::string copy(s);
  double d = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(d) || std::fabs(d) > 9.2e18) return false;
  *v = static_cast<int64_t>(d);
  return true;
}

int64_t ArgInt(const JEvent& e, std::string_view key, int64_t def) {
  std::string_view v;
  int64_t x;
  return e.Arg(key, &v) && ParseInt(v, &x) ? x : def;
}

std::string_view ArgList::Text(std::initializer_list<std::string_view> skip, std::string* scratch) const {
  if (entries_.empty()) return {};
  const auto skipped = [&](size_t i) {
    for (std::string_view k : skip)
      if (k.size() == entries_[i].key_len && k == key(i)) return true;
    return false;
  };
  if (!long_) {
    // Runs of kept lines are copied whole; with nothing skipped the lines are the text.
    size_t run = 0;  // start of the pending run of kept lines
    bool any_skipped = false;
    scratch->clear();
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (!skipped(i)) continue;
      any_skipped = true;
      scratch->append(lines_, run, entries_[i].line - run);
      run = i + 1 < entries_.size() ? entries_[i + 1].line : lines_.size();
    }
    if (!any_skipped) return std::string_view(lines_).substr(0, lines_.size() - 1);
    scratch->append(lines_, run, lines_.size() - run);
    if (!scratch->empty()) scratch->pop_back();
    return *scratch;
  }
  scratch->clear();
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (skipped(i)) continue;
    const std::string_view v = value(i);
    scratch->append(key(i)).append(": ");
    if (v.size() > kShownValue)
      scratch->append(v.substr(0, kShownValue)).append("…");
    else
      scratch->append(v);
    scratch->push_back('\n');
  }
  if (!scratch->empty()) scratch->pop_back();
  return *scratch;
}

std::string_view Importer::KeepGpuText(std::string_view s) {
  constexpr size_t kBlock = 1 << 20;
  if (gpu_text_.empty() || gpu_text_.back().capacity() - gpu_text_.back().size() < s.size()) {
    gpu_text_.emplace_back();
    gpu_text_.back().reserve(std::max(kBlock, s.size()));
  }
  std::string& b = gpu_text_.back();
  const size_t at = b.size();
  b.append(s);  // within the capacity: earlier views stay valid
  return std::string_view(b).substr(at, s.size());
}

uint32_t ToU32(int64_t v) {
  return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, UINT32_MAX));
}

// "[128, 1, 1]" -> {128, 1, 1}
std::array<uint32_t, 3> ArgDim3(const JEvent& e, std::string_view key) {
  std::array<uint32_t, 3> d{1, 1, 1};
  std::string_view v;
  if (!e.Arg(key, &v)) return d;
  size_t k = 0, i = 0;
  while (i < v.size() && k < 3) {
    while (i < v.size() && !(v[i] >= '0' && v[i] <= '9')) ++i;
    size_t j = i;
    while (j < v.size() && v[j] >= '0' && v[j] <= '9') ++j;
    if (j > i) {
      uint64_t x = 0;
      std::from_chars(v.data() + i, v.data() + j, x);
      d[k++] = static_cast<uint32_t>(std::min<uint64_t>(x, UINT32_MAX));
    }
    i = j;
  }
  return d;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Event mapping (Chrome phases, Kineto categories; the Importer class is in import_json_internal.h)
// -----------------------------------------------------------------------------------------------------------------

// Rows of the importer's own (ModelBuilder::kImporterIdBase and up, above the ids of string pids and tids).
constexpr uint32_t kAsyncTid = 0xFFFFFFF0u;     // one "Async events" row per process
constexpr uint32_t kInstantsTid = 0xFFFFFFF1u;  // instants of scope "p" (and "g": under kGlobalPid), one row
constexpr uint32_t kGlobalPid = 0xFFFFFFF2u;    // the trace-wide instants' process
static_assert(kAsyncTid >= ModelBuilder::kImporterIdBase && kGlobalPid >= ModelBuilder::kImporterIdBase);

void Importer::OnEvent(JEvent& e) {
  if (!e.ph_valid) return Skip("events without a valid \"ph\"");
  const char ph = e.ph;
  const uint32_t pid = Pid(e.pid);
  const uint32_t tid = Tid(pid, e.tid);
  if (ph == 'M') {
    std::string_view n;
    const bool has_name = e.Arg("name", &n);
    if (e.name == "process_name" && has_name)
      b_.SetProcessName(pid, n);
    else if (e.name == "thread_name" && has_name)
      b_.SetThreadName(pid, tid, n);
    else if (e.name == "process_sort_index")
      b_.SetProcessSortIndex(pid, ArgInt(e, "sort_index", 0));
    else if (e.name == "thread_sort_index")
      b_.SetThreadSortIndex(pid, tid, ArgInt(e, "sort_index", 0));
    ++accepted;
    return;
  }
  if (!e.has_ts) return Skip("events without a valid \"ts\"");
  switch (ph) {
    case 'X': {
      if (!e.has_dur) e.dur = 0;
      if (e.dur < 0) return Skip("complete events with negative \"dur\"");
      if (e.ts > INT64_MAX - e.dur) return Skip("events with out-of-range times");
      Complete(e, e.ts, e.ts + e.dur, pid, tid);
      return;
    }
    case 'B': {
      OpenStack& st = BeStack(pid, tid);
      if (st.depth == st.slots.size()) st.slots.emplace_back();
      Open& o = st.slots[st.depth++];
      o.ts = e.ts;
      o.e.Swap(e);  // e's caller clears it before parsing into it again
      return;
    }
    case 'E': {
      OpenStack& st = BeStack(pid, tid);
      if (st.depth == 0) return Skip("\"E\" events without a matching \"B\"");
      Open& o = st.slots[--st.depth];
      o.e.args.Append(e.args);  // E may add args
      if (e.ts < o.ts) return Skip("\"E\" events before their \"B\"");
      Complete(o.e, o.ts, e.ts, pid, tid);
      return;
    }
    case 'i':
    case 'I':
    case 'R': {
      HostSliceRecord r;
      r.start = r.end = e.ts;
      r.pid = pid;
      r.tid = tid;
      // Scope "g" (the whole trace) and "p" (a process) get rows of their own, as Perfetto and
      // chrome://tracing show them; "t" and none, the event's thread.
      if (e.scope == 'g') {
        r.pid = kGlobalPid, r.tid = kInstantsTid;
        if (!global_instants_) {
          global_instants_ = true;
          b_.SetProcessName(kGlobalPid, "Global");
          b_.SetProcessSortIndex(kGlobalPid, INT64_MIN);  // above every process
          b_.SetThreadName(kGlobalPid, kInstantsTid, "Global instants");
        }
      } else if (e.scope == 'p') {
        r.tid = kInstantsTid;
        b_.SetThreadName(pid, kInstantsTid, "Process instants");
      }
      r.name = Name(e.name);
      r.category = Name(e.cat);
      r.args = ArgsText(e, kSkipNone);
      r.kind = EventKind::kInstant;
      b_.AddHostSlice(r);
      if (r.pid != kGlobalPid) host_pids_[pid]++;
      ++accepted;
      return;
    }
    case 'C': {
      // One counter track per (pid, name, series key).
      std::string v;
      for (size_t i = 0; i < e.args.size(); ++i) {
        const std::string_view k = e.args.key(i);
        v.assign(e.args.value(i));  // NUL-terminated for strtod (a value with a NUL in it ends there)
        char* end = nullptr;
        double value = std::strtod(v.c_str(), &end);
        if (end == v.c_str() || *end != '\0' || !std::isfinite(value)) {
          Skip("counter values that are not numbers");
          continue;
        }
        std::string series =
            (k == "value" || k == e.name || k.empty()) ? e.name : e.name + " " + std::string(k);
        auto [it, inserted] = counter_ids_.try_emplace({pid, series}, next_counter_id_);
        if (inserted) {
          ++next_counter_id_;
          CounterDescriptor d;
          d.counter_id = it->second;
          d.pid = pid;
          d.name = b_.Intern(series.empty() ? "counter" : series);
          b_.OnCounterDescriptors({&d, 1});
        }
        CounterSample s{it->second, e.ts, value};
        b_.OnCounterSamples({&s, 1});
      }
      ++accepted;
      return;
    }
    case 'b':
    case 'e':
    case 'S':
    case 'F': {  // async (nestable and legacy): paired by (pid, cat, id), drawn on the process's async row
      const bool begin = ph == 'b' || ph == 'S';
      auto it = async_open_.find(std::tuple{pid, std::string_view(e.cat), std::string_view(e.id)});
      if (begin) {
        if (it == async_open_.end()) it = async_open_.try_emplace(std::tuple{pid, e.cat, e.id}).first;
        auto n = it->second.find(std::string_view(e.name));
        if (n == it->second.end()) n = it->second.emplace(e.name, std::vector<Open>()).first;
        const int64_t ts = e.ts;
        n->second.push_back({ts, std::move(e)});
        return;
      }
      if (it == async_open_.end()) return Skip("async end events without a begin");
      // The latest open event of this name (an end without a name closes a begin without one); "e" events
      // may omit the name, so failing that the latest of the id's smallest name.
      OpenByName& by_name = it->second;
      auto n = by_name.find(std::string_view(e.name));
      if (n == by_name.end()) n = by_name.begin();
      Open o = std::move(n->second.back());
      n->second.pop_back();
      if (n->second.empty()) by_name.erase(n);
      if (by_name.empty()) async_open_.erase(it);
      if (e.ts < o.ts) return Skip("async events ending before they begin");
      b_.SetThreadName(pid, kAsyncTid, "Async events");
      Complete(o.e, o.ts, e.ts, pid, kAsyncTid);
      return;
    }
    case 'n': {  // async instant
      HostSliceRecord r;
      r.start = r.end = e.ts;
      r.pid = pid;
      r.tid = kAsyncTid;
      r.name = Name(e.name);
      r.category = Name(e.cat);
      r.kind = EventKind::kInstant;
      b_.SetThreadName(pid, kAsyncTid, "Async events");
      b_.AddHostSlice(r);
      ++accepted;
      return;
    }
    case 's':
    case 't':
    case 'f': {
      if (e.cat == "ac2g") {  // Kineto launch -> GPU flows: implied by correlation ids
        ++accepted;
        return;
      }
      if (e.id.empty()) return Skip("flow events without an id");
      flow_key_.assign(e.cat).append(1, '\x1f').append(e.id);
      const uint64_t h = detail::HashText(flow_key_);
      uint32_t key = flow_key_index_.Find(flow_key_, h, flow_keys_);
      if (key == 0) {
        key = static_cast<uint32_t>(flow_keys_.size());
        flow_keys_.push_back(flow_key_);
        flow_key_index_.Insert(key, h);
      }
      flow_steps_.push_back({key, pid, tid, ph, e.ts});
      ++accepted;
      return;
    }
    default:
      return Skip("events of unsupported phases");
  }
}

enum class Category : uint8_t { kOther, kKernel, kMemcpy, kMemset, kGpuAnnotation, kRuntime, kDriver };

// Kineto's categories (and the older capitalized ones), compared once per event.
static Category Classify(std::string_view c) {
  using namespace std::string_view_literals;
  switch (c.size()) {
    case 6:
      if (c == "kernel"sv || c == "Kernel"sv) return Category::kKernel;
      if (c == "Memcpy"sv) return Category::kMemcpy;
      if (c == "Memset"sv) return Category::kMemset;
      if (c == "Driver"sv) return Category::kDriver;
      return Category::kOther;
    case 7:
      return c == "Runtime"sv ? Category::kRuntime : Category::kOther;
    case 10:
      if (c == "gpu_memcpy"sv) return Category::kMemcpy;
      if (c == "gpu_memset"sv) return Category::kMemset;
      return Category::kOther;
    case 11:
      return c == "cuda_driver"sv ? Category::kDriver : Category::kOther;
    case 12:
      return c == "cuda_runtime"sv ? Category::kRuntime : Category::kOther;
    case 19:
      return c == "gpu_user_annotation"sv ? Category::kGpuAnnotation : Category::kOther;
    default:
      return Category::kOther;
  }
}

static void ParseCopyKinds(const std::string& name, MemcpyRecord* r);

void Importer::HashArgs(JEvent& e, std::string* scratch) {
  if (!e.ph_valid || e.args.size() == 0) return;
  const char ph = e.ph;
  if (ph == 'i' || ph == 'I' || ph == 'R') {
    e.args.SetHash(kSkipNone, detail::HashText(e.args.Text({}, scratch)));
    return;
  }
  if (ph != 'X') return;  // B/E and async pairs merge args later; GPU texts are interned at Finish
  switch (Classify(e.cat)) {
    case Category::kRuntime:
    case Category::kDriver:
      e.args.SetHash(kSkipCorrelation, detail::HashText(e.args.Text({"correlation"}, scratch)));
      return;
    case Category::kOther:
      e.args.SetHash(kSkipNone, detail::HashText(e.args.Text({}, scratch)));
      return;
    default:
      return;
  }
}

void Importer::Complete(JEvent& e, int64_t start, int64_t end, uint32_t pid, uint32_t tid) {
  ++accepted;
  const Category cat = Classify(e.cat);
  if (cat == Category::kKernel || cat == Category::kMemcpy || cat == Category::kMemset ||
      cat == Category::kGpuAnnotation) {
    Gpu g{};
    g.start = start, g.end = end;
    g.device = ToU32(ArgInt(e, "device", e.pid.set && !e.pid.is_string ? e.pid.num : 0));
    g.stream = ToU32(ArgInt(e, "stream", e.tid.set && !e.tid.is_string ? e.tid.num : 0));
    g.context = ToU32(ArgInt(e, "context", 0));
    g.corr = ToU32(ArgInt(e, "correlation", 0));
    if (cat == Category::kKernel) {
      g.kind = Gpu::Kind::kKernel;
      g.name = KeepGpuText(e.name);
      g.grid = ArgDim3(e, "grid");
      g.block = ArgDim3(e, "block");
      g.registers = ToU32(ArgInt(e, "registers per thread", 0));
      g.shared = ToU32(ArgInt(e, "shared memory", 0));
      g.args = KeepGpuText(e.args.Text({"device", "stream", "context", "correlation", "grid", "block",
                                        "registers per thread", "shared memory"},
                                       &args_buf_));
    } else if (cat == Category::kMemcpy) {
      g.kind = Gpu::Kind::kMemcpy;
      g.bytes = static_cast<uint64_t>(std::max<int64_t>(0, ArgInt(e, "bytes", 0)));
      MemcpyRecord r;
      ParseCopyKinds(e.name, &r);
      g.copy_kind = r.copy_kind, g.src_kind = r.src_kind, g.dst_kind = r.dst_kind;
      g.args = KeepGpuText(e.args.Text({"device", "stream", "context", "correlation", "bytes"}, &args_buf_));
    } else if (cat == Category::kMemset) {
      g.kind = Gpu::Kind::kMemset;
      g.bytes = static_cast<uint64_t>(std::max<int64_t>(0, ArgInt(e, "bytes", 0)));
      g.args = KeepGpuText(e.args.Text({"device", "stream", "context", "correlation", "bytes"}, &args_buf_));
    } else {
      g.kind = Gpu::Kind::kAnnotation;
      g.name = KeepGpuText(e.name);
      g.args = KeepGpuText(e.args.Text({"device", "stream"}, &args_buf_));
    }
    g.text_block = static_cast<uint32_t>(gpu_text_.size() - 1);
    gpu_.push_back(g);
    return;
  }
  if (cat == Category::kRuntime || cat == Category::kDriver) {
    ApiCallRecord r;
    r.start = start, r.end = end, r.pid = pid, r.tid = tid;
    r.correlation_id = ToU32(ArgInt(e, "correlation", 0));
    r.callback_id = ToU32(ArgInt(e, "cbid", 0));
    r.name = Name(e.name);
    r.domain = cat == Category::kDriver ? uint8_t(ApiDomain::kDriver) : uint8_t(ApiDomain::kRuntime);
    b_.AddApiCall(r, ArgsText(e, kSkipCorrelation));
    runtime_pids_[pid]++;
    return;
  }
  HostSliceRecord r;
  r.start = start, r.end = end, r.pid = pid, r.tid = tid;
  r.name = Name(e.name);
  r.category = Name(e.cat);
  r.args = ArgsText(e, kSkipNone);
  b_.AddHostSlice(r);
  host_pids_[pid]++;
}

static void ParseCopyKinds(const std::string& name, MemcpyRecord* r) {
  struct K {
    const char* text;
    CopyKind kind;
  };
  static const K kKinds[] = {{"HtoD", CopyKind::kHtoD}, {"DtoH", CopyKind::kDtoH}, {"DtoD", CopyKind::kDtoD},
                             {"HtoH", CopyKind::kHtoH}, {"PtoP", CopyKind::kPtoP}, {"HtoA", CopyKind::kHtoA},
                             {"AtoH", CopyKind::kAtoH}, {"AtoD", CopyKind::kAtoD}, {"DtoA", CopyKind::kDtoA},
                             {"AtoA", CopyKind::kAtoA}};
  for (const auto& k : kKinds)
    if (name.find(k.text) != std::string::npos) {
      r->copy_kind = uint8_t(k.kind);
      break;
    }
  auto mem = [](std::string_view s) -> uint8_t {
    if (s.find("Pageable") != std::string_view::npos) return uint8_t(MemoryKind::kPageable);
    if (s.find("Pinned") != std::string_view::npos) return uint8_t(MemoryKind::kPinned);
    if (s.find("Managed") != std::string_view::npos) return uint8_t(MemoryKind::kManaged);
    if (s.find("Array") != std::string_view::npos) return uint8_t(MemoryKind::kArray);
    if (s.find("Device") != std::string_view::npos) return uint8_t(MemoryKind::kDevice);
    return uint8_t(MemoryKind::kUnknown);
  };
  size_t open = name.find('('), arrow = name.find("->");
  if (open != std::string::npos && arrow != std::string::npos && arrow > open) {
    r->src_kind = mem(std::string_view(name).substr(open, arrow - open));
    r->dst_kind = mem(std::string_view(name).substr(arrow));
  }
}

void Importer::OnDeviceProperties(const std::string& text) {
  json props = json::parse(text, nullptr, false);
  if (props.is_discarded() || !props.is_array()) return;
  std::vector<DeviceRecord> devs;
  for (const auto& p : props) {
    if (!p.is_object()) continue;
    // Padding zeroed too: models are compared byte for byte (the two JSON front ends, tests, fuzzing).
    DeviceRecord d;
    std::memset(static_cast<void*>(&d), 0, sizeof d);
    d.warp_size = DeviceRecord{}.warp_size;  // the one default that is not zero
    auto num = [&](const char* k, uint64_t def) -> uint64_t {
      auto it = p.find(k);
      return it != p.end() && it->is_number_unsigned() ? it->get<uint64_t>() : def;
    };
    d.device_id = ToU32(int64_t(num("id", 0)));
    auto n = p.find("name");
    if (n != p.end() && n->is_string()) d.name = b_.Intern(n->get<std::string>());
    d.memory_bytes = num("totalGlobalMem", 0);
    d.cc_major = static_cast<uint8_t>(num("computeMajor", 0));
    d.cc_minor = static_cast<uint8_t>(num("computeMinor", 0));
    d.sm_count = ToU32(int64_t(std::min<uint64_t>(num("numSms", 0), UINT32_MAX)));
    d.regs_per_sm = ToU32(int64_t(std::min<uint64_t>(num("regsPerMultiprocessor", 0), UINT32_MAX)));
    d.max_threads_per_block = ToU32(int64_t(std::min<uint64_t>(num("maxThreadsPerBlock", 0), UINT32_MAX)));
    d.shared_mem_per_block_max = ToU32(int64_t(std::min<uint64_t>(num("sharedMemPerBlock", 0), UINT32_MAX)));
    d.shared_mem_per_sm =
        ToU32(int64_t(std::min<uint64_t>(num("sharedMemPerMultiprocessor", 0), UINT32_MAX)));
    devs.push_back(d);
  }
  pending_devices_.insert(pending_devices_.end(), devs.begin(), devs.end());
}

void Importer::ResolveFlows() {
  // Chains in the order of their keys' texts (the flows' order in the model), each by time.
  std::vector<uint32_t> by_text(flow_keys_.size() - 1), rank(flow_keys_.size());
  for (uint32_t i = 0; i < by_text.size(); ++i) by_text[i] = i + 1;
  std::sort(by_text.begin(), by_text.end(),
            [&](uint32_t a, uint32_t b) { return flow_keys_[a] < flow_keys_[b]; });
  for (uint32_t i = 0; i < by_text.size(); ++i) rank[by_text[i]] = i;
  auto phase_order = [](char ph) { return ph == 's' ? 0 : ph == 't' ? 1 : 2; };
  std::stable_sort(flow_steps_.begin(), flow_steps_.end(), [&](const FlowStep& a, const FlowStep& b) {
    if (a.key != b.key) return rank[a.key] < rank[b.key];
    if (a.ts != b.ts) return a.ts < b.ts;
    return phase_order(a.ph) < phase_order(b.ph);
  });
  const FlowStep* from = nullptr;  // the chain's last step, while a chain of this id is open
  for (size_t i = 0; i < flow_steps_.size(); ++i) {
    const FlowStep& st = flow_steps_[i];
    if (from && from->key != st.key) from = nullptr;
    if (st.ph == 's') {
      from = &st;
      continue;
    }
    if (!from) {
      Skip("flow steps without a start");
      continue;
    }
    FlowEndpoints f;
    f.from_pid = from->pid, f.from_tid = from->tid, f.from_ts = from->ts;
    f.to_pid = st.pid, f.to_tid = st.tid, f.to_ts = st.ts;
    b_.AddFlow(f);
    from = st.ph == 'f' ? nullptr : &st;  // a "t" step continues the chain from here
  }
  flow_steps_.clear();
  flow_keys_.resize(1);
  flow_key_index_.clear();
}

Status Importer::Finish(bool kineto) {
  ResolveFlows();
  // Unclosed B and async begins: shown up to their last known time would invent data; count them instead.
  uint64_t unclosed = 0;
  for (auto& [k, st] : be_stacks_) unclosed += st.depth;
  for (auto& [k, by_name] : async_open_)
    for (auto& [name, st] : by_name) unclosed += st.size();
  if (unclosed) skipped_["begin events never ended"] += unclosed;

  // The host process of GPU work: the one issuing runtime calls (Kineto traces one process).
  uint32_t host = 0;
  uint64_t best = 0;
  for (auto [pid, n] : runtime_pids_.empty() ? host_pids_ : runtime_pids_)
    if (n > best) best = n, host = pid;
  for (auto& d : pending_devices_) d.pid = host;
  if (!pending_devices_.empty()) b_.OnDevices(pending_devices_);

  size_t freed = 0;
  for (auto& g : gpu_) {
    const uint64_t args_hash = detail::HashText(g.args);
    switch (g.kind) {
      case Gpu::Kind::kKernel: {
        KernelRecord r;
        r.start = g.start, r.end = g.end, r.pid = host, r.device_id = g.device, r.context_id = g.context;
        r.stream_id = g.stream, r.correlation_id = g.corr;
        r.name = Name(g.name);
        r.grid = g.grid;
        r.block = g.block;
        r.registers_per_thread = g.registers;
        r.static_shared_bytes = g.shared;
        b_.AddKernel(r, b_.InternArgs(g.args, args_hash));
        break;
      }
      case Gpu::Kind::kMemcpy: {
        MemcpyRecord r;
        r.start = g.start, r.end = g.end, r.pid = host, r.device_id = g.device, r.context_id = g.context;
        r.stream_id = g.stream, r.correlation_id = g.corr;
        r.bytes = g.bytes;
        r.copy_kind = g.copy_kind, r.src_kind = g.src_kind, r.dst_kind = g.dst_kind;
        b_.AddMemcpy(r, b_.InternArgs(g.args, args_hash));
        break;
      }
      case Gpu::Kind::kMemset: {
        MemsetRecord r;
        r.start = g.start, r.end = g.end, r.pid = host, r.device_id = g.device, r.context_id = g.context;
        r.stream_id = g.stream, r.correlation_id = g.corr;
        r.bytes = g.bytes;
        b_.AddMemset(r, b_.InternArgs(g.args, args_hash));
        break;
      }
      case Gpu::Kind::kAnnotation: {
        GpuAnnotationRecord r;
        r.start = g.start, r.end = g.end, r.pid = host, r.device_id = g.device, r.stream_id = g.stream;
        r.name = Name(g.name);
        r.args = b_.InternArgs(g.args, args_hash);
        b_.AddGpuAnnotation(r);
        break;
      }
    }
    for (; freed < g.text_block; ++freed)
      std::string().swap(gpu_text_[freed]);  // freed as they go into the model
  }
  gpu_.clear();
  gpu_text_.clear();
  for (const auto& [why, n] : skipped_)
    b_.AddLoss("json_events_skipped", Severity::kWarning, n, "skipped: " + why);
  for (const auto& [why, n] : skipped_) b_.AddProblem(std::to_string(n) + " " + why);
  b_.SetFormat(kineto ? SourceFormat::kKinetoJson : SourceFormat::kChromeJson);
  return Status::Ok();
}

// --- Sax implementation (needs Importer)
// ---------------------------------------------------------------------

// The first N (2 to 4) bytes of a key as one integer, so that SetEventField compares each candidate in one
// instruction (GCC calls memcmp for short string_view compares: 5% of a Chrome trace's load, whose "tts" and
// "tdur" keys missed every candidate). The same function packs the literals at compile time.
template <size_t N>
constexpr uint32_t KeyWord(const char* k) {
  uint32_t w = 0;
  for (size_t i = 0; i < N; ++i) w |= uint32_t(uint8_t(k[i])) << (8 * i);
  return w;
}

void SetEventField(JEvent& ev, std::string_view k, std::string_view text, bool is_string) {
  // By length first: this runs for every member of every event.
  switch (k.size()) {
    case 1:
      if (k[0] == 's') ev.scope = text.size() == 1 ? text[0] : 0;  // an instant's scope
      return;
    case 2:
      switch (KeyWord<2>(k.data())) {
        case KeyWord<2>("ph"):
          ev.ph_valid = text.size() == 1;
          ev.ph = ev.ph_valid ? text[0] : 0;
          return;
        case KeyWord<2>("ts"):
          ev.has_ts = MicrosToNanos(text, &ev.ts);
          return;
        case KeyWord<2>("id"):
          ev.id = text;
          return;
      }
      return;
    case 3: {
      const uint32_t w = KeyWord<3>(k.data());
      if (w == KeyWord<3>("cat")) {
        ev.cat = text;
      } else if (w == KeyWord<3>("dur")) {
        ev.has_dur = MicrosToNanos(text, &ev.dur);
      } else if (w == KeyWord<3>("pid") || w == KeyWord<3>("tid")) {
        IdValue& v = k[0] == 'p' ? ev.pid : ev.tid;
        v.set = true;
        v.is_string = false;
        v.num = 0;
        v.str.clear();
        int64_t n;
        if (!is_string && ParseInt(text, &n)) {
          v.num = n;
        } else if (is_string && ParseInt(text, &n) && n >= 0) {
          v.num = n;  // "pid": "1234"
        } else {
          v.is_string = true;
          v.str = text;
        }
      }
      return;
    }
    case 4:
      if (KeyWord<4>(k.data()) == KeyWord<4>("name")) ev.name = text;
      return;
    case 7:
      if (k == "bind_id") ev.id = text;
      return;
    default:
      return;
  }
}

bool IsKinetoKey(std::string_view k) {
  return k == "schemaVersion" || k == "deviceProperties" || k == "traceName" || k == "baseTimeNanoseconds";
}

void AppendCaptureString(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
      continue;
    }
    out += c;
  }
  out += '"';
}

}  // namespace json_import

namespace {

using json = nlohmann::json;
using namespace json_import;

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] SAX handler
// -----------------------------------------------------------------------------------------------------------------

// Frames of the document: only the structure that matters is tracked; other values are captured as text
// (args) or skipped.
enum class Role : uint8_t { kTopObject, kTopArray, kEvents, kEvent, kArgs, kCapture, kDeviceProps };

class Sax {
 public:
  explicit Sax(Importer* imp) : imp_(imp) {}
  bool null() { return Scalar("null", false); }
  bool boolean(bool v) { return Scalar(v ? "true" : "false", false); }
  bool number_integer(json::number_integer_t v) { return Scalar(std::to_string(v), false); }
  bool number_unsigned(json::number_unsigned_t v) { return Scalar(std::to_string(v), false); }
  bool number_float(json::number_float_t, const json::string_t& raw) { return Scalar(raw, false); }
  bool string(json::string_t& v) { return Scalar(v, true); }
  bool binary(json::binary_t&) { return Scalar("null", false); }
  bool start_object(std::size_t) { return Open(true); }
  bool start_array(std::size_t) { return Open(false); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(json::string_t& k) {
    if (!stack_.empty() && stack_.back().role == Role::kCapture) {
      if (cap_discard_) return true;
      CaptureComma();
      AppendJsonString(k);
      cap_ += ':';
      cap_first_.back() = true;  // the value follows without a comma
      return true;
    }
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    error_position_ = position;
    error_ = ex.what();
    return false;
  }

  size_t error_position_ = 0;
  std::string error_;
  bool saw_trace_events_ = false;
  bool kineto_ = false;

 private:
  struct Frame {
    Role role;
    bool object;
    std::string key;  // the key under which this container sits in its parent
  };

  void AppendJsonString(const std::string& s) { AppendCaptureString(cap_, s); }
  void CaptureComma() {
    if (!cap_first_.back()) cap_ += ',';
    cap_first_.back() = false;
  }

  bool Scalar(const std::string& text, bool is_string);
  bool Open(bool object);
  bool Close();

  Importer* imp_;
  std::vector<Frame> stack_;
  std::string key_;
  JEvent ev_;
  std::string cap_;
  std::vector<bool> cap_first_;
  size_t cap_limit_ = kArgTextLimit;
  bool cap_discard_ = false;
  size_t capture_base_ = 0;  // stack depth of the outermost capture frame (0 = not capturing an arg value)
};

bool Sax::Open(bool object) {
  if (!stack_.empty() && (stack_.back().role == Role::kCapture || stack_.back().role == Role::kDeviceProps)) {
    if (!cap_discard_) {
      CaptureComma();
      cap_ += object ? '{' : '[';
    }
    cap_first_.push_back(true);
    stack_.push_back({Role::kCapture, object, key_});
    return true;
  }
  Role parent = stack_.empty() ? Role::kCapture : stack_.back().role;
  Role role = Role::kCapture;
  bool discard = false;
  if (stack_.empty()) {
    role = object ? Role::kTopObject : Role::kEvents;
  } else if (parent == Role::kTopObject) {
    if (key_ == "traceEvents" && !object) {
      role = Role::kEvents;
      saw_trace_events_ = true;
    } else if (key_ == "deviceProperties" && !object) {
      role = Role::kCapture;  // captured, then parsed as a small DOM
      kineto_ = true;
      stack_.push_back({Role::kDeviceProps, false, key_});
      cap_.clear();
      cap_first_.assign(1, true);
      cap_discard_ = false;
      cap_ += '[';
      return true;
    } else {
      discard = true;
    }
  } else if (parent == Role::kEvents) {
    if (object) {
      role = Role::kEvent;
      ev_.Clear();
    } else {
      discard = true;
    }
  } else if (parent == Role::kEvent) {
    if (key_ == "args" && object)
      role = Role::kArgs;
    else
      discard = true;
  } else if (parent == Role::kArgs) {
    role = Role::kCapture;  // a structured arg value ("grid": [1,1,1]) becomes its JSON text
  } else {
    discard = true;
  }
  if (role == Role::kCapture) {
    cap_.clear();
    cap_first_.assign(1, true);
    cap_discard_ = discard;
    if (!discard) cap_ += object ? '{' : '[';
    cap_first_.push_back(true);
    stack_.push_back({Role::kCapture, object, key_});
    // Mark the outermost capture frame so Close() knows where the value belongs.
    capture_base_ = stack_.size();
    return true;
  }
  stack_.push_back({role, object, key_});
  return true;
}

bool Sax::Close() {
  if (stack_.empty()) return false;
  Frame f = std::move(stack_.back());
  stack_.pop_back();
  if (f.role == Role::kCapture) {
    if (!cap_discard_) cap_ += f.object ? '}' : ']';
    cap_first_.pop_back();
    if (stack_.size() + 1 == capture_base_) {  // the captured value is complete
      capture_base_ = 0;
      if (!cap_discard_ && !stack_.empty() && stack_.back().role == Role::kArgs)
        ev_.args.emplace_back(f.key, cap_.size() > cap_limit_ ? cap_.substr(0, cap_limit_) : cap_);
      cap_.clear();
      cap_discard_ = false;
    }
    return true;
  }
  if (f.role == Role::kDeviceProps) {
    cap_ += ']';
    imp_->OnDeviceProperties(cap_);
    cap_.clear();
    return true;
  }
  if (f.role == Role::kEvent) imp_->OnEvent(ev_);
  return true;
}

bool Sax::Scalar(const std::string& text, bool is_string) {
  if (stack_.empty()) return true;  // a bare scalar document: no events
  Frame& top = stack_.back();
  if (top.role == Role::kCapture || top.role == Role::kDeviceProps) {
    if (cap_discard_ && top.role == Role::kCapture) return true;
    if (top.role == Role::kDeviceProps) {
      if (!cap_first_.back()) cap_ += ',';
      cap_first_.back() = false;
    } else {
      CaptureComma();
    }
    if (is_string)
      AppendJsonString(text);
    else
      cap_ += text;
    return true;
  }
  if (top.role == Role::kTopObject) {
    if (IsKinetoKey(key_)) kineto_ = true;
    return true;
  }
  if (top.role == Role::kArgs) {
    ev_.args.emplace_back(key_, text.size() > cap_limit_ ? text.substr(0, cap_limit_) : text);
    return true;
  }
  if (top.role == Role::kEvent) SetEventField(ev_, key_, text, is_string);
  return true;
}

}  // namespace

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Entry point
// -----------------------------------------------------------------------------------------------------------------

Status ImportJsonReference(std::string_view text, ModelBuilder& builder) {
  Importer imp(builder);
  Sax sax(&imp);
  const bool ok = json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json, true, false);
  if (!ok) {
    if (imp.accepted == 0)
      return Corrupt("JSON parse error at byte " + std::to_string(sax.error_position_) + ": " + sax.error_);
    // A truncated/damaged JSON trace keeps every event before the damage.
    builder.AddLoss("json_truncated", Severity::kDataLoss, 1,
                    "the JSON ends early or is damaged at byte " + std::to_string(sax.error_position_) +
                        "; events after that point are missing");
  }
  if (imp.accepted == 0)
    return InvalidArgument("no trace events found (expected Chrome trace or Kineto JSON)");
  return imp.Finish(sax.kineto_);
}

}  // namespace gt::viewer