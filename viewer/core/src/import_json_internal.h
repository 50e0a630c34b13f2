// Shared by the two JSON front ends (import_json.cc: nlohmann SAX, the reference; import_json_fast.cc: the
// streaming parser used by default): the parsed event and the mapping of events onto the builder. Both front
// ends fill the same JEvent with the same field texts, so the models they build are identical.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "gt/viewer/builder.h"
#include "gt/viewer/load.h"

namespace gt::viewer::json_import {

struct IdValue {  // pid / tid: numbers, or strings mapped to synthetic ids
  bool set = false;
  bool is_string = false;
  int64_t num = 0;
  std::string str;
};

// An event's args: key -> value text (strings unquoted). Slots are reused from event to event (clear keeps
// their strings' memory), so parsing a stream of events allocates nothing once the slots are warm.
class ArgList {
 public:
  using Arg = std::pair<std::string, std::string>;
  ArgList() = default;
  ArgList(ArgList&& o) noexcept : slots_(std::move(o.slots_)), n_(o.n_) { o.slots_.clear(), o.n_ = 0; }
  ArgList& operator=(ArgList&& o) noexcept {
    slots_ = std::move(o.slots_), n_ = o.n_;
    o.slots_.clear(), o.n_ = 0;
    return *this;
  }
  ArgList(const ArgList&) = default;
  ArgList& operator=(const ArgList&) = default;
  template <typename K, typename V>
  void emplace_back(K&& k, V&& v) {
    if (n_ == slots_.size()) slots_.emplace_back();
    slots_[n_].first.assign(std::forward<K>(k));
    slots_[n_].second.assign(std::forward<V>(v));
    ++n_;
  }
  void push_back(Arg&& a) { emplace_back(std::move(a.first), std::move(a.second)); }
  void clear() { n_ = 0; }
  size_t size() const { return n_; }
  Arg* begin() { return slots_.data(); }
  Arg* end() { return slots_.data() + n_; }
  const Arg* begin() const { return slots_.data(); }
  const Arg* end() const { return slots_.data() + n_; }

 private:
  std::vector<Arg> slots_;
  size_t n_ = 0;
};

struct JEvent {
  std::string ph, name, cat, id, bp, scope;
  IdValue pid, tid;
  int64_t ts = 0, dur = 0;
  bool has_ts = false, has_dur = false;
  ArgList args;
  void Clear() {
    ph.clear(), name.clear(), cat.clear(), id.clear(), bp.clear(), scope.clear();
    pid = {}, tid = {};
    ts = dur = 0;
    has_ts = has_dur = false;
    args.clear();
  }
  const std::string* Arg(std::string_view k) const {
    for (const auto& [key, v] : args)
      if (key == k) return &v;
    return nullptr;
  }
};

// A scalar of an event object ("ph", "ts", ...): its text is the string unescaped, or the number as written
// ("-0" as "0"), or true/false/null.
void SetEventField(JEvent& ev, std::string_view key, std::string_view text, bool is_string);
// Top-level keys that mark a Kineto file.
bool IsKinetoKey(std::string_view key);
// Structured arg values are kept as JSON text: strings re-quoted, control characters as spaces.
void AppendCaptureString(std::string& out, std::string_view s);
constexpr size_t kArgTextLimit = 1 << 16;  // an arg's text is cut here

// The event mapping (Chrome phases, Kineto categories), implemented in import_json.cc.

class Importer {
 public:
  explicit Importer(ModelBuilder& b) : b_(b) {}

  void OnEvent(JEvent& e);
  void OnDeviceProperties(const std::string& json_text);
  Status Finish(bool kineto);
  uint64_t accepted = 0;

 private:
  uint32_t Pid(const IdValue& v) {
    if (!v.set) return 0;
    if (!v.is_string) return static_cast<uint32_t>(v.num);
    auto [it, inserted] = string_pids_.try_emplace(v.str, 0x40000000u + uint32_t(string_pids_.size()));
    if (inserted) b_.SetProcessName(it->second, v.str);
    return it->second;
  }
  uint32_t Tid(uint32_t pid, const IdValue& v) {
    if (!v.set) return 0;
    if (!v.is_string) return static_cast<uint32_t>(v.num);
    auto [it, inserted] = string_tids_.try_emplace({pid, v.str}, 0x40000000u + uint32_t(string_tids_.size()));
    if (inserted) b_.SetThreadName(pid, it->second, v.str);
    return it->second;
  }
  StringId ArgsText(const JEvent& e, std::initializer_list<std::string_view> skip) {
    AppendArgs(e, skip, &args_buf_);
    return b_.Intern(args_buf_);
  }
  std::string ArgsString(const JEvent& e, std::initializer_list<std::string_view> skip) {
    AppendArgs(e, skip, &args_buf_);
    return args_buf_;
  }
  // "key: value" lines (values cut at 4 KiB) into *t, reused between events.
  static void AppendArgs(const JEvent& e, std::initializer_list<std::string_view> skip, std::string* t) {
    t->clear();
    for (const auto& [k, v] : e.args) {
      if (std::find(skip.begin(), skip.end(), k) != skip.end()) continue;
      t->append(k);
      t->append(": ");
      if (v.size() > 4096) {
        t->append(v, 0, 4096);
        t->append("…");
      } else {
        t->append(v);
      }
      t->push_back('\n');
    }
    if (!t->empty()) t->pop_back();
  }
  void Skip(const char* why) { ++skipped_[why]; }
  void Complete(JEvent& e, int64_t start, int64_t end, uint32_t pid, uint32_t tid);

  ModelBuilder& b_;
  std::string args_buf_;
  std::map<std::string, uint32_t> string_pids_;
  std::map<std::pair<uint32_t, std::string>, uint32_t> string_tids_;
  struct Open {
    int64_t ts;
    JEvent e;
  };
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Open>> be_stacks_;
  std::map<std::tuple<uint32_t, std::string, std::string>, std::vector<Open>> async_open_;
  std::map<std::pair<uint32_t, std::string>, uint32_t> counter_ids_;
  // Flow steps are matched once the whole file is read: writers (Kineto among them) do not emit them in time
  // order, and the viewers people compare us with chain each id's steps by timestamp.
  struct FlowStep {
    std::string id;  // category + '\x1f' + id: ids are scoped by category
    int64_t ts;
    uint32_t pid, tid;
    char ph;
  };
  std::vector<FlowStep> flow_steps_;
  void ResolveFlows();
  std::map<std::string, uint64_t> skipped_;
  // GPU events wait for the host pid (known once all runtime calls were seen).
  // Only what Finish needs is kept (not the parsed event: its args are most of an import's peak memory);
  // the texts are interned at Finish, in the order the strings table has always had.
  struct Gpu {
    int64_t start, end;
    uint64_t bytes;
    uint32_t device, stream, context, corr;
    std::array<uint32_t, 3> grid, block;
    uint32_t registers, shared;
    enum class Kind : uint8_t { kKernel, kMemcpy, kMemset, kAnnotation } kind;
    uint8_t copy_kind, src_kind, dst_kind;
    std::string name;  // kernels and annotations
    std::string args;  // the args text
  };
  std::vector<Gpu> gpu_;
  std::map<uint32_t, uint64_t> runtime_pids_;
  std::map<uint32_t, uint64_t> host_pids_;
  std::vector<std::pair<JEvent, std::pair<int64_t, int64_t>>> pending_counters_;
  uint32_t next_counter_id_ = 1;

 public:
  std::vector<DeviceRecord> pending_devices_;
};

// The default front end (import_json_fast.cc): a streaming parser of its own that delivers each event
// object to the Importer as soon as it is complete, over the whole text or over a gzip stream inflated piece
// by piece into a window (memory: the window plus the longest event, not the inflated file), resumable so
// that a load can run in steps.
class FastJsonImport {
 public:
  FastJsonImport(std::string_view text, ModelBuilder& b);
  FastJsonImport(std::span<const uint8_t> gz, uint64_t max_inflated, ModelBuilder& b);
  ~FastJsonImport();
  // gzip: inflates the first piece. Fails on a stream corrupt before any byte could be inflated.
  Status Prime();
  std::string_view Head() const;     // the text inflated so far (to sniff what the gzip holds)
  void Step(uint64_t budget_bytes);  // parses about that many bytes
  bool done() const;
  double progress() const;
  uint64_t text_bytes() const;  // the text's size (inflated so far)
  Status Finish();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Shared with the loader's whole-file gunzip path.
void AddGzipTruncatedLoss(ModelBuilder& b);

}  // namespace gt::viewer::json_import
