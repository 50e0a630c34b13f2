// The queries a server answers from a mapped viewer index (gt/viewer/index.h) for a page that does not hold
// the trace: tiles (the folded draw items QueryLane computes, for a track over a power-of-two window at a
// pixel width), one event's details, the kernel table, the summary and the trace's layout. Each works on any
// TraceModel (a mapped index's or a loaded one: the golden tests compare the two) and does work bounded by
// the request's caps, never by the trace's size. Answers are JSON (the core's one encoder, json.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gt/status.h"
#include "gt/viewer/index.h"
#include "gt/viewer/lod.h"
#include "gt/viewer/model.h"

namespace gt::viewer {

using QueryParams = std::vector<std::pair<std::string, std::string>>;

inline constexpr uint32_t kTileMaxPx = 4096;       // a tile wider than this is a client bug or an attack
inline constexpr uint32_t kTileMaxLanes = 256;     // depths per tile (deeper nesting: truncated)
inline constexpr size_t kTileMaxItems = 1u << 18;  // draw items per tile over all its lanes (truncated)
inline constexpr size_t kKernelRowsMax = 100'000;  // rows per /kernels answer
// Search (what=search): names examined per step request at most (a step that reaches it answers where to
// resume), and matching name ids sent for the highlight.
inline constexpr uint64_t kSearchScanBudget = uint64_t{1} << 22;
inline constexpr size_t kSearchIdsMax = size_t{1} << 16;
inline constexpr uint32_t kSearchListMax = 10'000;  // matches per list answer (the panel shows 2,000)

struct TileRequest {
  TrackId track = kNone;
  int64_t t0 = 0, t1 = 0;  // as asked; the tile covers QuantizeTileWindow of them
  uint32_t px = 0;         // the tile's width in pixels: ns per pixel = tile width / px
};

// Parses track (an index or a track key), t0, t1 (ns, t0 < t1) and px (1..kTileMaxPx). kInvalidArgument
// with a message for the client; kNotFound for a track the trace does not have.
StatusOr<TileRequest> ParseTileRequest(const TraceModel& model, const QueryParams& params);

// The tile holding [t0, t1): width W, the smallest power of two >= t1 - t0 for which one W-aligned tile
// (aligned from `origin`, the trace's first_ns) holds the whole window. Panning at one zoom asks for the same
// tiles again, so clients and caches reuse them. W is at most 2^62.
std::pair<int64_t, int64_t> QuantizeTileWindow(int64_t origin, int64_t t0, int64_t t1);

struct TileLane {
  uint32_t depth = 0;
  std::vector<DrawItem> items;  // QueryLane over the tile's window at its ns per pixel
};
struct Tile {
  TrackId track = kNone;
  int64_t t0 = 0, t1 = 0;  // the quantized window
  uint32_t px = 0;
  double ns_per_px = 0;
  std::vector<TileLane> lanes;         // lane tracks: one per depth with items
  std::vector<CounterColumn> counter;  // counter tracks
  bool truncated = false;              // a cap (lanes, items) was reached
};
Tile BuildTile(const TraceModel& model, const TileRequest& request);

// JSON: {"track","key","t0","t1","px","ns_per_px","truncated",
//        "lanes":[{"depth","items":[[start,end,first,count,name id,kind],...]}],
//        "counter":[[t0,t1,first,min,max,last,samples],...], "names":{"<id>":"text"}} (names of the items)
std::string TileJson(const TraceModel& model, const Tile& tile);

// One answer of the server's API for a stored trace: HTTP status and a JSON body ({"error","status"} when
// the status is not 200).
struct IndexAnswer {
  int status = 200;
  std::string body;
};
// what: "meta" (groups, tracks and the trace's extent), "tiles" (above), "event" (key=<event key> or
// lane=&index=: EventJson), "flows" (the same parameters: {"partner": the launch <-> GPU work partner's
// lane, index, key, name, kind, start, end, launch (it is the API call) | null}), "kernels" (limit=N: the
// kernel table, KernelSummaryJson), "summary" (devices, losses, the per-name tables), "gaps" (the largest GPU
// idle gaps explained, IdleGapsWithDevicesJson, computed at build), "profiled" (the counter tables and their
// timeline joins, ProfiledDataJson, computed at build: the counters section and the roofline of a remote
// trace), "search" (q=<text>, regex=1: the match count and the matching name ids; with dir=next|prev and t=
// (and lane=&index= of the event to step from): one IndexSearchStep, budget=N lowers its scan budget).
// Anything else is a 404.
IndexAnswer AnswerIndexQuery(const MappedIndex& index, std::string_view what, const QueryParams& params);

// One step of a search on a mapped index (the search box's next / previous match on a remote trace): the
// first match after (forward) or before the position `from` in the order of Search::Next (start, lane,
// index), or, when `from` is invalid, the first whose start is >= t (forward) / < t (backward). The scan
// walks time windows over every lane, reading name blocks, and stops after about `budget` names: then
// `resume` is where the next request starts (t, with no event), so a rare name costs several bounded requests
// rather than one unbounded one. No wrap-around: at the trace's end `end` is set (the client wraps).
struct SearchStepResult {
  EventId hit;  // invalid when none was found in what was scanned
  int64_t start = 0, end = 0;
  bool resume = false;  // budget spent: ask again from resume_t
  int64_t resume_t = 0;
  bool at_end = false;    // scanned to the trace's end (forward) / start (backward) without a match
  uint64_t examined = 0;  // names read
  Status status;          // a damaged block: nothing above holds
};
SearchStepResult IndexSearchStep(const MappedIndex& index, const Search& search, bool forward, int64_t t,
                                 EventId from, uint64_t budget = kSearchScanBudget);

// The search results list on a remote trace: the matches among the events that overlap [t0, t1)
// (Search::List's set and order: time, then lane and index), at most `limit`. `complete` is false when the
// scan stopped after about `budget` names (a wide window of a big trace): then `hits` are those found in the
// part scanned, and a narrower window lists them all.
struct SearchListResult {
  std::vector<EventId> hits;
  std::vector<int64_t> start, end;  // per hit
  std::vector<StringId> name;       // per hit
  bool complete = true;
  uint64_t examined = 0;
  Status status;  // a damaged block
};
SearchListResult IndexSearchList(const MappedIndex& index, const Search& search, int64_t t0, int64_t t1,
                                 size_t limit, uint64_t budget = kSearchScanBudget);

// A RemoteTrace request URL ("tiles?track=3&t0=...") as AnswerIndexQuery takes it: what, and its parameters
// (values percent-decoded, '+' as a space, as the server's HTTP layer decodes them). For viewers answering in
// process from a local index.
std::pair<std::string, QueryParams> SplitIndexUrl(std::string_view url);

}  // namespace gt::viewer
