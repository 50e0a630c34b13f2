// Shared by the two JSON front ends (import_json.cc: nlohmann SAX, the reference; import_json_fast.cc: the
// streaming parser used by default): the parsed event and the mapping of events onto the builder. Both front
// ends fill the same JEvent with the same field texts, so the models they build are identical.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "gt/viewer/builder.h"
#include "gt/viewer/load.h"
#include "text_index.h"

namespace gt::viewer::detail {
class ThreadPool;
}

namespace gt::viewer::json_import {

struct IdValue {  // pid / tid: numbers, or strings mapped to synthetic ids
  bool set = false;
  bool is_string = false;
  int64_t num = 0;
  std::string str;
  void Clear() {
    set = is_string = false;
    num = 0;
    str.clear();
  }
};

// An event's args: key -> value text (strings unquoted), kept as the lines of the args text the model shows
// ("key: value\n" each, values whole), so the text of an event is built straight from the parsed bytes: a
// view of these lines when nothing is skipped, runs of them copied otherwise. Parsing a stream of events
// allocates nothing once the buffers are warm.
class ArgList {
 public:
  static constexpr size_t kShownValue = 4096;  // a value is cut here in the args text

  void emplace_back(std::string_view k, std::string_view v) {
    const Entry e{lines_.size(), k.size(), v.size()};
    // One resize and plain copies: the string's appends are calls in wasm (libc++), four per arg.
    const size_t need = e.line + k.size() + v.size() + 3;
    if (need > lines_.capacity()) lines_.reserve(std::max(need, 2 * lines_.capacity()));
    lines_.resize(need);
    char* o = lines_.data() + e.line;
    if (!k.empty()) std::memcpy(o, k.data(), k.size());
    o += k.size();
    *o++ = ':';
    *o++ = ' ';
    if (!v.empty()) std::memcpy(o, v.data(), v.size());
    o[v.size()] = '\n';
    long_ |= v.size() > kShownValue;
    entries_.push_back(e);
    hash_of_ = -1;
  }
  // Appends a line whose value the caller writes into value() (then calls EndValue): the fast front end
  // captures structured values straight into the line.
  std::string& BeginValue(std::string_view k) {
    open_ = {lines_.size(), k.size(), 0};
    lines_.append(k).append(": ", 2);
    return lines_;
  }
  void EndValue(size_t limit) {
    const size_t from = open_.line + open_.key_len + 2;
    if (lines_.size() - from > limit) lines_.resize(from + limit);
    open_.val_len = lines_.size() - from;
    lines_.push_back('\n');
    long_ |= open_.val_len > kShownValue;
    entries_.push_back(open_);
    hash_of_ = -1;
  }
  void DropValue() { lines_.resize(open_.line); }  // a BeginValue whose value failed to parse
  void Append(const ArgList& o) {
    for (size_t i = 0; i < o.size(); ++i) emplace_back(o.key(i), o.value(i));
  }
  void clear() {
    lines_.clear();
    entries_.clear();
    long_ = false;
    hash_of_ = -1;
  }
  // The hash of Text(skip set `which`), computed ahead (Importer::HashArgs); forgotten when args change.
  void SetHash(int8_t which, uint64_t h) { hash_of_ = which, hash_ = h; }
  bool Hash(int8_t which, uint64_t* h) const { return hash_of_ == which && (*h = hash_, true); }
  size_t size() const { return entries_.size(); }
  std::string_view key(size_t i) const { return {lines_.data() + entries_[i].line, entries_[i].key_len}; }
  std::string_view value(size_t i) const {
    const Entry& e = entries_[i];
    return {lines_.data() + e.line + e.key_len + 2, e.val_len};
  }
  // The value of the first arg named k.
  bool Find(std::string_view k, std::string_view* v) const {
    for (size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].key_len == k.size() && key(i) == k) return *v = value(i), true;
    return false;
  }
  // "key: value" lines (values cut at kShownValue) of the args whose keys are not in `skip`. A view of the
  // lines when none is skipped or cut, else built in *scratch.
  std::string_view Text(std::initializer_list<std::string_view> skip, std::string* scratch) const;

 private:
  struct Entry {
    size_t line, key_len, val_len;
  };
  std::string lines_;
  std::vector<Entry> entries_;
  Entry open_{};
  bool long_ = false;
  int8_t hash_of_ = -1;
  uint64_t hash_ = 0;
};

struct JEvent {
  std::string name, cat, id;
  IdValue pid, tid;
  int64_t ts = 0, dur = 0;
  bool has_ts = false, has_dur = false;
  char ph = 0;  // valid when ph_valid: "ph" was one character
  bool ph_valid = false;
  char scope = 0;  // "s" of an instant when one character: 'g'lobal, 'p'rocess, 't'hread
  ArgList args;
  void Clear() {
    name.clear(), cat.clear(), id.clear();
    pid.Clear(), tid.Clear();
    ts = dur = 0;
    has_ts = has_dur = ph_valid = false;
    ph = scope = 0;
    args.clear();
  }
  bool Arg(std::string_view k, std::string_view* v) const { return args.Find(k, v); }
  void Swap(JEvent& o) noexcept {
    using std::swap;
    swap(name, o.name), swap(cat, o.cat), swap(id, o.id);
    swap(pid, o.pid), swap(tid, o.tid), swap(ts, o.ts), swap(dur, o.dur);
    swap(has_ts, o.has_ts), swap(has_dur, o.has_dur), swap(ph, o.ph), swap(ph_valid, o.ph_valid);
    swap(scope, o.scope);
    swap(args, o.args);
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
  // Ahead of OnEvent (any thread, no Importer state): hashes the args text the mapping will intern.
  static void HashArgs(JEvent& e, std::string* scratch);
  void OnDeviceProperties(const std::string& json_text);
  Status Finish(bool kineto);
  uint64_t accepted = 0;

 private:
  uint32_t Pid(const IdValue& v) {
    if (!v.set) return 0;
    if (!v.is_string) return static_cast<uint32_t>(v.num);
    auto [it, inserted] =
        string_pids_.try_emplace(v.str, ModelBuilder::kImporterIdBase + uint32_t(string_pids_.size()));
    if (inserted) b_.SetProcessName(it->second, v.str);
    return it->second;
  }
  uint32_t Tid(uint32_t pid, const IdValue& v) {
    if (!v.set) return 0;
    if (!v.is_string) return static_cast<uint32_t>(v.num);
    auto [it, inserted] =
        string_tids_.try_emplace({pid, v.str}, ModelBuilder::kImporterIdBase + uint32_t(string_tids_.size()));
    if (inserted) b_.SetThreadName(pid, it->second, v.str);
    return it->second;
  }
  // Names and categories repeat from event to event: a small cache of their ids saves the builder's lookup
  // (a probe of a table as large as the model's strings, mostly a cache miss). A miss interns through the
  // builder, so ids are assigned in the same order as without the cache.
  StringId Name(std::string_view text) {
    if (text.empty()) return 0;
    const uint64_t h = detail::HashText(text);
    NameSlot& s = names_[h & (kNameSlots - 1)];
    if (s.hash == h && s.text == text) return s.id;
    const StringId id = b_.Intern(text);
    if (text.size() <= 256) s.hash = h, s.id = id, s.text.assign(text);
    return id;
  }
  // The args texts interned while events are mapped: all args, or all but "correlation" (runtime calls).
  enum ArgsSkip : int8_t { kSkipNone, kSkipCorrelation };
  StringId ArgsText(const JEvent& e, ArgsSkip which) {
    const std::string_view text =
        which == kSkipNone ? e.args.Text({}, &args_buf_) : e.args.Text({"correlation"}, &args_buf_);
    uint64_t h;
    return b_.InternArgs(text, e.args.Hash(which, &h) ? h : detail::HashText(text));
  }
  void Skip(const char* why) { ++skipped_[why]; }
  void Complete(JEvent& e, int64_t start, int64_t end, uint32_t pid, uint32_t tid);

  ModelBuilder& b_;
  std::string args_buf_;
  struct NameSlot {
    uint64_t hash = 0;
    StringId id = 0;
    std::string text;
  };
  static constexpr size_t kNameSlots = 4096;
  std::vector<NameSlot> names_ = std::vector<NameSlot>(kNameSlots);
  std::map<std::string, uint32_t> string_pids_;
  std::map<std::pair<uint32_t, std::string>, uint32_t> string_tids_;
  struct Open {
    int64_t ts;
    JEvent e;
  };
  // A thread's "B" events waiting for their "E". A B swaps its parsed event into a slot and the parser gets
  // the slot's old buffers back: nesting allocates nothing once warm (moving events in and out allocated and
  // freed every B's strings and args).
  struct OpenStack {
    std::vector<Open> slots;
    size_t depth = 0;
  };
  OpenStack& BeStack(uint32_t pid, uint32_t tid) {
    if (be_last_ && be_last_key_ == std::pair{pid, tid}) return *be_last_;  // runs of one thread's events
    be_last_key_ = {pid, tid};
    return *(be_last_ = &be_stacks_[be_last_key_]);
  }
  std::map<std::pair<uint32_t, uint32_t>, OpenStack> be_stacks_;
  std::pair<uint32_t, uint32_t> be_last_key_;
  OpenStack* be_last_ = nullptr;  // map nodes do not move
  // Open async events by (pid, cat, id), then by name, each name's in the order they began. Entries go once
  // nothing is open under them, so an end costs a lookup however many ids came before (an "e" without a name
  // used to scan every id ever seen: 84 s for 40 K such pairs).
  struct AsyncKeyLess {  // (pid, cat, id), compared as views: lookups build no strings
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return std::tuple<uint32_t, std::string_view, std::string_view>(std::get<0>(a), std::get<1>(a),
                                                                      std::get<2>(a)) <
             std::tuple<uint32_t, std::string_view, std::string_view>(std::get<0>(b), std::get<1>(b),
                                                                      std::get<2>(b));
    }
  };
  using OpenByName = std::map<std::string, std::vector<Open>, std::less<>>;
  std::map<std::tuple<uint32_t, std::string, std::string>, OpenByName, AsyncKeyLess> async_open_;
  std::map<std::pair<uint32_t, std::string>, uint32_t> counter_ids_;
  // Flow steps are matched once the whole file is read: writers (Kineto among them) do not emit them in time
  // order, and the viewers people compare us with chain each id's steps by timestamp.
  struct FlowStep {
    uint32_t key;  // index in flow_keys_
    uint32_t pid, tid;
    char ph;
    int64_t ts;
  };
  std::vector<FlowStep> flow_steps_;
  // Flow keys, category + '\x1f' + id (ids are scoped by category), each once: steps hold an index, so
  // neither a string per step nor string compares while sorting. [0] is unused (the index's ids start at 1).
  std::vector<std::string> flow_keys_{std::string()};
  detail::StringIndex flow_key_index_;
  std::string flow_key_;
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
    std::string_view name;  // kernels and annotations
    std::string_view args;  // the args text
    uint32_t text_block;    // the block of gpu_text_ holding both
  };
  std::vector<Gpu> gpu_;
  // The texts of gpu_ in blocks that never move (one allocation per some thousand events instead of two
  // strings per event), freed block by block as the events go into the model.
  std::vector<std::string> gpu_text_;
  std::string_view KeepGpuText(std::string_view s);
  std::map<uint32_t, uint64_t> runtime_pids_;
  std::map<uint32_t, uint64_t> host_pids_;
  bool global_instants_ = false;  // the "Global" process of instants of scope "g" is named
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
  std::string_view Head() const;  // the text inflated so far (to sniff what the gzip holds)
  // Parses the event array in slices on the pool's threads (slice_bytes 0: the default). The model is the
  // same as without.
  void SetParallel(detail::ThreadPool* pool, size_t slice_bytes);
  void Step(uint64_t budget_bytes);  // parses about that many bytes
  bool done() const;
  double progress() const;
  uint64_t text_bytes() const;  // the text's size (inflated so far)
  uint64_t events() const;      // events taken so far (the progress bar's count)
  Status Finish();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Shared with the loader's whole-file gunzip path.
void AddGzipTruncatedLoss(ModelBuilder& b);

}  // namespace gt::viewer::json_import
