// A trace that stays on `gtrace serve` (issue 17; docs/server.md "GET /api/t/<id>/<what>"): the page asks
// for the layout (/meta), then for tiles of the visible window per track, an event's details when one is
// clicked, and the kernel and summary tables; it never holds the trace.
//
// [SECTION] Tiles: quantized windows and the cache
// [SECTION] RemoteTrace
//
// Tiles are quantized so that panning and small zooms reuse them: a tile has kRemoteTilePx pixels at a
// power-of-two ns per pixel (its *level*: 2^level ns/px, the finest power of two not coarser than the
// screen's), and tiles of a level sit end to end from the trace's first_ns. The visible window of a track
// is a few tiles of one level (at most 2·P/1024 + 2 for P screen pixels: 2-4 on a laptop); a pan asks only
// for the tiles that came into view. While a tile is on its
// way its ancestor (a coarser level, cached from an earlier zoom) is drawn in its place.
//
// Transport is the caller's: RemoteTrace hands out requests (an id and a URL relative to the trace's base,
// "tiles?track=3&t0=..&t1=..&px=1024") and takes answers in any order. The page sends them with fetch()
// and answers from its callback (web/app.js), so nothing here ever blocks; the tests answer in-process from
// a mapped index (AnswerIndexQuery).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gt/status.h"
#include "gt/viewer/source.h"

namespace gt::viewer {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Tiles: quantized windows and the cache
// ---------------------------------------------------------------------------------------------------------------

inline constexpr uint32_t kRemoteTilePx = 1024;  // pixels per tile (the server allows up to kTileMaxPx)
inline constexpr int kRemoteMaxLevel = 51;       // 1024 << 51 ns < 2^62: the server's widest tile

struct TileKey {
  TrackId track = kNone;
  int level = 0;      // ns per pixel = 2^level
  int64_t index = 0;  // the tile's place among its level's, from the trace's first_ns
  friend auto operator<=>(const TileKey&, const TileKey&) = default;
};

// The level for a screen at ns_per_px: floor(log2), at least 0, at most kRemoteMaxLevel.
int TileLevelFor(double ns_per_px);
// Width of a tile of `level` in ns.
inline int64_t TileWidth(int level) {
  return int64_t(kRemoteTilePx) << level;
}
// The tile's window [t0, t1) in trace ns.
std::pair<int64_t, int64_t> TileWindow(int64_t origin, const TileKey& key);
// The tiles of `level` covering [t0, t1) ∩ [first_ns, last_ns], in time order (none for an empty overlap).
void TilesCovering(int64_t first_ns, int64_t last_ns, TrackId track, int level, int64_t t0, int64_t t1,
                   std::vector<TileKey>* out);

// A tile as the server encoded it: per depth, its draw items; or, on a counter track, its columns.
struct RemoteTile {
  int64_t t0 = 0, t1 = 0;
  std::vector<std::vector<LaneItem>> lanes;  // by depth (empty where the tile has nothing)
  std::vector<CounterColumn> counter;
  bool truncated = false;
  size_t Bytes() const;
};
// Parses a /tiles answer; names of its items go to *names. kCorrupt for anything that is not one.
StatusOr<RemoteTile> ParseTile(std::string_view json, std::unordered_map<StringId, std::string>* names);

// Tiles by key, least recently used evicted beyond a byte budget.
class TileCache {
 public:
  explicit TileCache(size_t max_bytes) : max_bytes_(max_bytes) {}
  const RemoteTile* Find(const TileKey& key);  // a hit makes it the most recently used
  bool Contains(const TileKey& key) const { return map_.count(key) != 0; }
  void Put(const TileKey& key, RemoteTile tile);
  size_t bytes() const { return bytes_; }
  size_t size() const { return map_.size(); }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  uint64_t evictions() const { return evictions_; }

 private:
  using Lru = std::list<std::pair<TileKey, RemoteTile>>;
  size_t max_bytes_;
  size_t bytes_ = 0;
  Lru lru_;  // front: most recently used
  std::map<TileKey, Lru::iterator> map_;
  uint64_t hits_ = 0, misses_ = 0, evictions_ = 0;
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] RemoteTrace
// ---------------------------------------------------------------------------------------------------------------

struct RemoteOptions {
  size_t cache_bytes = size_t(64) << 20;  // tiles kept (the page's memory for them)
  uint32_t max_in_flight = 16;            // requests outstanding at once; the rest wait for a later frame
  int fallback_levels = 16;               // how much coarser a stand-in for a missing tile may be
  double retry_s = 1.0;                   // after a 202/503 without Retry-After, or a failed request
};

struct RemoteStats {
  uint64_t requests = 0;  // sent
  uint64_t answers = 0;   // received (any status)
  uint64_t failures = 0;  // answers that were not 200 (202 included)
  uint64_t bytes = 0;     // answer bodies received
  uint32_t in_flight = 0;
  size_t tiles = 0, tile_bytes = 0;
  uint64_t tile_hits = 0, tile_misses = 0, tile_evictions = 0;
  uint64_t events = 0;  // the trace's, from /meta
};

// The search box on a remote trace (the server's what=search): the match count and the matching names' ids
// (the timeline highlights tile items by them), for the text and mode last asked.
struct RemoteSearch {
  std::string text;
  bool regex = false;
  bool ready = false;  // the answer for `text` is in
  std::string error;   // the server's reason (a bad regular expression)
  uint64_t count = 0;
  uint32_t names = 0;
  std::vector<StringId> ids;
  bool ids_truncated = false;  // more names match than the answer lists (highlight partial)
  bool tracks_known = false;   // the server listed the tracks with a match (the Filter toggle)
  std::vector<TrackId> tracks;
};

// The search results panel on a remote trace (what=search&dir=list): the matches overlapping a window.
struct RemoteSearchList {
  int64_t t0 = 0, t1 = 0;   // the window answered
  uint64_t generation = 0;  // of the search text it is for
  bool ready = false;
  bool complete = true;  // false: the server scanned part of a wide window (narrow it to list all)
  std::vector<EventId> hits;
  std::vector<int64_t> start, end;
  std::vector<std::string> name;  // per hit
};

class RemoteTrace final : public TraceSource {
 public:
  // `url` is relative to the trace's base (the page prefixes "/api/t/<id>/").
  using Send = std::function<void(uint64_t request, const std::string& url)>;
  using Clock = std::chrono::steady_clock;
  RemoteTrace(Send send, RemoteOptions options = {});

  enum class State : uint8_t { kMeta, kReady, kFailed };
  State state() const { return state_; }
  const std::string& error() const { return error_; }
  // Asks for /meta. Once ready, layout() is the trace's groups, tracks and lanes.
  void Start();
  // An answer to request `request` (its HTTP status and body). Unknown ids are ignored.
  void OnAnswer(uint64_t request, int status, std::string_view body, double retry_after_s = 0);
  // Sends what waits for its retry time (an index still building answers 202).
  void Tick(Clock::time_point now = Clock::now());
  // Requests on their way, queued or waiting for their retry: the view should keep drawing (Tick sends the
  // retries, and answers change what is shown).
  bool busy() const { return !in_flight_.empty() || !waiting_.empty() || !retries_.empty(); }
  RemoteStats stats() const;

  const TraceModel& layout() const override { return layout_; }
  bool events_local() const override { return false; }
  const std::string& Str(StringId id) const override;
  bool LaneItems(LaneId lane, int64_t t0, int64_t t1, double ns_per_px, std::vector<LaneItem>* out) override;
  bool CounterColumns(TrackId track, int64_t t0, int64_t t1, double ns_per_px,
                      std::vector<CounterColumn>* out) override;
  const EventInfo* Event(EventId e) override;
  std::string EventKey(EventId e) const override;
  EventId FindEventByKey(std::string_view key) const override;
  const std::vector<KernelSummaryRow>* Kernels() override;
  const std::vector<NameSummary>* Summary(SummaryOf what) override;
  const std::vector<IdleGap>* IdleGaps() override;
  const PartnerInfo* Partner(EventId e) override;
  const ProfiledData* Profiled() override;
  // Why the server's counters could not be had ("" while on their way, or once they are in).
  const std::string& profiled_error() const { return profiled_error_; }
  // The raw /event answer of `e` (the C API hands it on as the local EventJson), "" while on its way.
  const std::string& EventJsonOf(EventId e) const;

  // Search: asks for the count and names of `text` (cheap when unchanged; "" clears).
  void SetSearch(std::string_view text, bool regex);
  const RemoteSearch& search() const { return search_; }
  // Asks for the next (previous) match after (before) event `from`, whose start is `t`, or, with `from`
  // invalid, the first whose start is >= t (< t). Wraps around once at the trace's end, as Search::Next
  // does; a step replaces one still on its way. The server scans with a budget, so a rare name may take
  // several requests: they follow each other here.
  void SearchStep(bool forward, EventId from, int64_t t);
  bool search_step_pending() const { return step_pending_; }
  // The match the last step found, once (then invalid); invalid also when it found none.
  EventId TakeSearchHit() { return std::exchange(search_hit_, EventId{}); }
  // The list of matches overlapping [t0, t1) for the search results panel: asked when the text or the
  // window changed, one request at a time (a pan asks again once the answer for the last window is in).
  // search_list() is the last answer, for search_list().t0/t1 (ready false before the first).
  void AskSearchList(int64_t t0, int64_t t1);
  const RemoteSearchList& search_list() const { return list_; }

 private:
  enum class Ask : uint8_t {
    kMeta,
    kTile,
    kEvent,
    kKernels,
    kSummary,
    kSearch,
    kSearchStep,
    kGaps,
    kFlows,
    kProfiled,
    kSearchList,
  };
  struct Request {
    Ask ask = Ask::kMeta;
    TileKey tile = {};
    EventId event = {};  // kEvent; kSearchStep: the event stepped from (invalid: from t)
    // kSearch, kSearchStep: which search (answers of an older one are dropped) and where a step is.
    uint64_t generation = 0;
    bool forward = true, wrapped = false;
    int64_t t = 0, t1 = 0;  // kSearchList: the window
  };
  void Issue(const Request& r);  // sends now, or queues when max_in_flight are out
  void Retry(const Request& r, double after_s);
  std::string UrlOf(const Request& r) const;
  Status TakeMeta(std::string_view body);
  void TakeEvent(EventId e, int status, std::string_view body);
  Status TakeKernels(std::string_view body);
  Status TakeSummary(std::string_view body);
  void TakeSearch(std::string_view body);
  void TakeSearchStep(const Request& r, std::string_view body);
  // Draws the tile `key` from a cached ancestor into *out (items overlapping [t0, t1)); false when none.
  bool FromAncestor(const TileKey& key, uint32_t depth, int64_t t0, int64_t t1, std::vector<LaneItem>* out);
  const RemoteTile* TileOrAsk(const TileKey& key);

  Send send_;
  RemoteOptions options_;
  State state_ = State::kMeta;
  std::string error_;
  TraceModel layout_;
  std::unordered_map<StringId, std::string> names_;
  TileCache cache_;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, Request> in_flight_;
  std::set<TileKey> tiles_asked_;  // in flight or waiting
  std::vector<Request> waiting_;   // over max_in_flight: sent as answers come back
  std::vector<std::pair<Clock::time_point, Request>> retries_;
  std::map<EventId, EventInfo> events_;  // answered (found or not); bounded, oldest dropped
  std::map<EventId, std::string> event_json_;
  std::set<EventId> events_asked_;
  bool kernels_asked_ = false, kernels_ready_ = false;
  std::vector<KernelSummaryRow> kernels_;
  bool summary_asked_ = false, summary_ready_ = false;
  std::vector<NameSummary> summary_[4];
  std::map<EventId, PartnerInfo> partners_;  // answered; bounded like events_
  std::set<EventId> partners_asked_;
  bool gaps_asked_ = false, gaps_ready_ = false;
  std::vector<IdleGap> gaps_;
  bool profiled_asked_ = false, profiled_ready_ = false;
  ProfiledData profiled_;
  std::string profiled_error_;
  RemoteSearch search_;
  uint64_t search_generation_ = 0, step_generation_ = 0;
  uint32_t step_requests_ = 0;  // of the step in progress (a bound: a pathological server cannot loop us)
  bool step_pending_ = false;
  EventId search_hit_;
  RemoteSearchList list_;
  bool list_in_flight_ = false;
  RemoteStats stats_;
};

}  // namespace gt::viewer
