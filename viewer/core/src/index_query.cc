// Queries over a mapped viewer index for `gtrace serve` (gt/viewer/index_query.h). The work per request is
// bounded by its caps (pixels, lanes, items, rows); whatever scans events was done once at build.
#include "gt/viewer/index_query.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <set>

#include "flow_partner.h"
#include "gt/viewer/json.h"
#include "gt/viewer/query.h"
#include "gt/viewer/source.h"
#include "index_blocks.h"
#include "lod_query.h"

namespace gt::viewer {
namespace {

using nlohmann::json;

const std::string* Param(const QueryParams& params, std::string_view name) {
  for (const auto& [k, v] : params)
    if (k == name) return &v;
  return nullptr;
}

template <typename T>
bool ParseNumber(const std::string& s, T* out) {
  if (s.empty() || s.size() > 24) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// A required integer parameter.
template <typename T>
Status Number(const QueryParams& params, std::string_view name, T* out) {
  const std::string* v = Param(params, name);
  if (!v) return InvalidArgument("missing parameter '" + std::string(name) + "'");
  if (!ParseNumber(*v, out))
    return InvalidArgument("parameter '" + std::string(name) + "' is not a number in range");
  return Status::Ok();
}

// Names, keys and echoed parameters may be any bytes: invalid UTF-8 is replaced, never thrown about.
std::string Dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

IndexAnswer Error(int status, const std::string& reason) {
  return {status, Dump(json{{"error", reason}, {"status", status}})};
}

IndexAnswer ErrorOf(const Status& s) {
  return Error(s.code() == StatusCode::kNotFound ? 404 : 400, s.message());
}

std::string MetaJson(const TraceModel& m) {
  json groups = json::array(), tracks = json::array();
  for (const TrackGroup& g : m.groups)
    groups.push_back({{"kind", int(g.kind)}, {"name", g.name}, {"key", g.key}, {"tracks", g.tracks}});
  for (size_t i = 0; i < m.tracks.size(); ++i) {
    const Track& t = m.tracks[i];
    tracks.push_back({{"id", i},
                      {"kind", TrackKindName(t.kind)},
                      {"name", t.name},
                      {"key", t.key},
                      {"group", t.group == kNone ? json(nullptr) : json(t.group)},
                      {"lanes", t.lane_count},
                      {"first_lane", t.first_lane},
                      {"device", t.device_id == kNone ? json(nullptr) : json(t.device_id)},
                      {"pid", t.pid},
                      {"events", t.event_count},
                      {"first_ns", t.first_ns},
                      {"last_ns", t.last_ns},
                      {"collapsed", t.default_collapsed}});
  }
  return Dump(json{{"format", SourceFormatName(m.format)},
                   {"first_ns", m.first_ns},
                   {"last_ns", m.last_ns},
                   {"events", m.event_count},
                   {"samples", m.sample_count},
                   {"strings", m.strings.size()},
                   {"tile_max_px", kTileMaxPx},
                   {"groups", std::move(groups)},
                   {"tracks", std::move(tracks)}});
}

std::string SummaryJson(const MappedIndex& index) {
  const TraceModel& m = index.model();
  // The core's own encoders, spliced as text: the same shapes `gtrace stats --json` has.
  std::string out = "{\"devices\":" + DevicesJson(m) + ",\"losses\":" + LossesJson(LossSummary(m));
  for (size_t k = 0; k < std::size(index.summaries().by_name); ++k)
    out += ",\"" + std::string(SummaryOfName(SummaryOf(k))) +
           "\":" + NameSummaryJson(index.summaries().by_name[k], 1000);
  return out + "}";
}

// A block that failed its checks: this request fails, the index's damage() is set, and the server drops
// and rebuilds it (serve_index.cc).
IndexAnswer DamagedAnswer(const Status& s) {
  return Error(500, s.message() + "; the index will be rebuilt");
}

}  // namespace

std::pair<int64_t, int64_t> QuantizeTileWindow(int64_t origin, int64_t t0, int64_t t1) {
  // In 128 bits: origin, t0 and t1 may be anywhere in int64 (imported traces).
  const __int128 span = __int128(t1) - t0;
  __int128 w = 1;
  while (w < span && w < (__int128(1) << 62)) w <<= 1;
  while (true) {
    const __int128 rel = __int128(t0) - origin;
    const __int128 q = rel >= 0 ? rel / w : -((-rel + w - 1) / w);  // floor division
    const __int128 start = __int128(origin) + q * w;
    if (start + w >= t1 || w >= (__int128(1) << 62)) {
      const __int128 lo = std::max<__int128>(start, INT64_MIN), hi = std::min<__int128>(start + w, INT64_MAX);
      return {int64_t(lo), int64_t(hi)};
    }
    w <<= 1;
  }
}

StatusOr<TileRequest> ParseTileRequest(const TraceModel& m, const QueryParams& params) {
  TileRequest r;
  const std::string* track = Param(params, "track");
  if (!track || track->empty()) return InvalidArgument("missing parameter 'track' (a track id or key)");
  if (uint32_t id = 0; ParseNumber(*track, &id)) {
    if (id >= m.tracks.size())
      return NotFound("no track " + *track + " (the trace has " + std::to_string(m.tracks.size()) + ")");
    r.track = id;
  } else {
    if (track->size() > 256) return InvalidArgument("track key too long");
    r.track = m.FindTrackByKey(*track);
    if (r.track == kNone) return NotFound("no track with key '" + *track + "'");
  }
  GT_RETURN_IF_ERROR(Number(params, "t0", &r.t0));
  GT_RETURN_IF_ERROR(Number(params, "t1", &r.t1));
  GT_RETURN_IF_ERROR(Number(params, "px", &r.px));
  if (r.t1 <= r.t0) return InvalidArgument("empty window: t1 must be after t0");
  if (r.px == 0 || r.px > kTileMaxPx)
    return InvalidArgument("px must be 1.." + std::to_string(kTileMaxPx) +
                           " (ask for several tiles instead)");
  if (r.t1 <= m.first_ns || r.t0 > m.last_ns)
    return NotFound("window [" + std::to_string(r.t0) + ", " + std::to_string(r.t1) +
                    ") is outside the trace [" + std::to_string(m.first_ns) + ", " +
                    std::to_string(m.last_ns) + "]");
  return r;
}

namespace {

// query(lane, t0, t1, ns_per_px, &items): QueryLane over a loaded lane or a mapped index's.
template <class Query>
Tile BuildTileOf(const TraceModel& m, const TileRequest& r, Query&& query) {
  GT_ASSERT(r.track < m.tracks.size() && r.px > 0 && r.px <= kTileMaxPx);
  Tile tile;
  tile.track = r.track;
  std::tie(tile.t0, tile.t1) = QuantizeTileWindow(m.first_ns, r.t0, r.t1);
  tile.px = r.px;
  tile.ns_per_px = (double(tile.t1) - double(tile.t0)) / double(r.px);
  const Track& t = m.tracks[r.track];
  if (t.kind == TrackKind::kCounter) {
    if (t.counter < m.counters.size())
      QueryCounter(m.counters[t.counter], tile.t0, tile.t1, tile.ns_per_px, &tile.counter);
    return tile;
  }
  size_t items = 0;
  std::vector<DrawItem> out;
  for (uint32_t d = 0; d < t.lane_count; ++d) {
    if (d == kTileMaxLanes || items >= kTileMaxItems) {
      tile.truncated = true;
      break;
    }
    // A lane gives at most about two items per pixel (an item is wider than min_px or followed by a gap
    // of gap_px), so one lane's work is bounded by px whatever its length.
    query(LaneId(t.first_lane + d), tile.t0, tile.t1, tile.ns_per_px, &out);
    if (out.empty()) continue;
    if (items + out.size() > kTileMaxItems) {
      out.resize(kTileMaxItems - items);
      tile.truncated = true;
    }
    items += out.size();
    tile.lanes.push_back({d, out});
  }
  return tile;
}

// What a tile item says of its first event: name id, kind, style.
struct ItemAttrs {
  StringId name;
  EventKind kind;
  uint32_t style;
};

// attrs(lane, index) -> ItemAttrs.
template <class Attrs>
std::string TileJsonOf(const TraceModel& m, const Tile& tile, Attrs&& attrs) {
  const Track& t = m.tracks[tile.track];
  json lanes = json::array();
  std::set<StringId> names;
  for (const TileLane& tl : tile.lanes) {
    const LaneId lane = t.first_lane + tl.depth;
    json items = json::array();
    for (const DrawItem& it : tl.items) {
      const ItemAttrs a = attrs(lane, it.first);
      names.insert(a.name);
      items.push_back({it.start, it.end, it.first, it.count, a.name, int(a.kind), a.style});
    }
    lanes.push_back({{"depth", tl.depth}, {"items", std::move(items)}});
  }
  json counter = json::array();
  for (const CounterColumn& c : tile.counter)
    counter.push_back({c.t0, c.t1, c.first, c.min, c.max, c.last, c.samples});
  json text = json::object();
  for (StringId id : names) text[std::to_string(id)] = m.Str(id);
  return Dump(json{{"track", tile.track},
                   {"key", t.key},
                   {"t0", tile.t0},
                   {"t1", tile.t1},
                   {"px", tile.px},
                   {"ns_per_px", tile.ns_per_px},
                   {"truncated", tile.truncated},
                   {"lanes", std::move(lanes)},
                   {"counter", std::move(counter)},
                   {"names", std::move(text)}});
}

}  // namespace

Tile BuildTile(const TraceModel& m, const TileRequest& r) {
  return BuildTileOf(m, r,
                     [&m](LaneId l, int64_t t0, int64_t t1, double ns_per_px, std::vector<DrawItem>* out) {
                       QueryLane(m.lanes[l], t0, t1, ns_per_px, out);
                     });
}

std::string TileJson(const TraceModel& m, const Tile& tile) {
  return TileJsonOf(m, tile, [&m](LaneId l, uint32_t i) {
    const EventId e{l, i};
    return ItemAttrs{m.lanes[l].name[i], m.Kind(e), EventStyle(m, e)};
  });
}

namespace {

// A tile of a mapped index: the same folding and JSON, the lanes read through the block cache. A damaged
// block fails the whole tile (what was read cannot be trusted).
IndexAnswer IndexTile(const MappedIndex& index, const TileRequest& r) {
  using index_detail::LaneReader;
  const TraceModel& m = index.model();
  Status status;
  const Tile tile =
      BuildTileOf(m, r, [&](LaneId l, int64_t t0, int64_t t1, double ns_per_px, std::vector<DrawItem>* out) {
        const LaneReader lane(index.blocks(), m.lanes[l], l);
        lod_detail::QueryLaneOf(lane, t0, t1, ns_per_px, out, LodOptions{});
        if (!lane.status().ok() && status.ok()) status = lane.status();
      });
  if (!status.ok()) return DamagedAnswer(status);
  // One reader per lane of the tile: consecutive items read neighbouring events.
  std::vector<std::unique_ptr<LaneReader>> readers(m.tracks[r.track].lane_count);
  std::string body = TileJsonOf(m, tile, [&](LaneId l, uint32_t i) {
    auto& rd = readers[l - m.tracks[r.track].first_lane];
    if (!rd) rd = std::make_unique<LaneReader>(index.blocks(), m.lanes[l], l);
    const uint32_t ref = rd->Ref(i);
    const EventKind kind = KindOfRef(m.tracks[r.track].kind, ref);
    return ItemAttrs{rd->Name(i), kind, EventStyleOf(m, kind, ref & kRefPayloadMask)};
  });
  for (const auto& rd : readers)
    if (rd && !rd->status().ok()) return DamagedAnswer(rd->status());
  return {200, std::move(body)};
}

// "lane/depth/index" of TraceModel::EventKey, bounded by the index's lane sizes.
EventId IndexEventByKey(const MappedIndex& index, std::string_view key) {
  const TraceModel& m = index.model();
  const size_t slash2 = key.rfind('/');
  if (slash2 == std::string_view::npos || slash2 == 0) return {};
  const size_t slash1 = key.rfind('/', slash2 - 1);
  if (slash1 == std::string_view::npos) return {};
  uint32_t depth = 0, i = 0;
  if (!ParseNumber(std::string(key.substr(slash1 + 1, slash2 - slash1 - 1)), &depth) ||
      !ParseNumber(std::string(key.substr(slash2 + 1)), &i))
    return {};
  const TrackId t = m.FindTrackByKey(key.substr(0, slash1));
  if (t == kNone || depth >= m.tracks[t].lane_count) return {};
  const LaneId lane = m.tracks[t].first_lane + depth;
  return i < index.lane_size(lane) ? EventId{lane, i} : EventId{};
}

// The event of a request: key=<event key>, or lane= and index=. Invalid (with *error unset) when the trace
// has no such event.
EventId RequestedEvent(const MappedIndex& index, const QueryParams& params, IndexAnswer* error) {
  const TraceModel& m = index.model();
  if (const std::string* key = Param(params, "key")) {
    if (key->size() > 1024) return *error = Error(400, "event key too long"), EventId{};
    return IndexEventByKey(index, *key);
  }
  uint32_t lane = 0, i = 0;
  if (Status s = Number(params, "lane", &lane); !s.ok()) return *error = ErrorOf(s), EventId{};
  if (Status s = Number(params, "index", &i); !s.ok()) return *error = ErrorOf(s), EventId{};
  return lane < m.lanes.size() && i < index.lane_size(lane) ? EventId{lane, i} : EventId{};
}

// The launch <-> GPU work partner of `e` (FlowPartner's search through the block cache: a few blocks per
// lane searched). `reader(l)` gives lane l's reader.
template <class Reader>
EventId IndexFlowPartner(const TraceModel& m, EventId e, Reader&& reader) {
  auto& own = reader(e.lane);
  const uint32_t ref = own.Ref(e.index);
  const Track& track = m.tracks[m.lanes[e.lane].track];
  const uint32_t corr = track.kind == TrackKind::kThreadApi ? ref : own.Aux(e.index);
  return query_detail::FlowPartnerOf(m, track, KindOfRef(track.kind, ref), corr, [&](LaneId l, bool by_aux) {
    auto& rd = reader(l);
    const bool sorted = m.lanes[l].aux_sorted;
    return by_aux ? query_detail::FindCorrelationOf(sorted, rd.aux_size(), corr,
                                                    [&rd](uint32_t i) { return rd.Aux(i); })
                  : query_detail::FindCorrelationOf(sorted, rd.size(), corr,
                                                    [&rd](uint32_t i) { return rd.Ref(i); });
  });
}

// The flows of an event on a remote trace: its launch <-> GPU work partner ("Go to the launch", the arrow)
// and the other end of each explicit flow record (framework op -> CUDA call, Chrome flows; outgoing by the
// table's order, incoming through MappedIndex::flows_by_target), each with what the page draws and labels
// it by. At most kFlowEndsMax each way: a few blocks read per end.
IndexAnswer IndexFlows(const MappedIndex& index, const QueryParams& params) {
  using index_detail::LaneReader;
  const TraceModel& m = index.model();
  IndexAnswer error;
  const EventId e = RequestedEvent(index, params, &error);
  if (!error.body.empty()) return error;
  if (!e.valid()) return Error(404, "no such event");
  std::vector<std::unique_ptr<LaneReader>> readers(m.lanes.size());
  auto reader = [&](LaneId l) -> LaneReader& {
    if (!readers[l]) readers[l] = std::make_unique<LaneReader>(index.blocks(), m.lanes[l], l);
    return *readers[l];
  };
  auto end_json = [&](EventId p) -> json {
    LaneReader& rd = reader(p.lane);
    const Lane& lane = m.lanes[p.lane];
    const Track& track = m.tracks[lane.track];
    const EventKind kind = KindOfRef(track.kind, rd.Ref(p.index));
    return {{"lane", p.lane},
            {"index", p.index},
            {"key", track.key + "/" + std::to_string(lane.depth) + "/" + std::to_string(p.index)},
            {"name", m.Str(rd.Name(p.index))},
            {"kind", EventKindName(kind)},
            {"start", rd.Start(p.index)},
            {"end", rd.End(p.index)},
            {"launch", track.kind == TrackKind::kThreadApi}};  // it is the launch (an API call)
  };
  const EventId p = IndexFlowPartner(m, e, reader);
  json partner = p.valid() ? end_json(p) : json(nullptr);
  // Explicit flows: the table may be damaged (its ends are checked against the lanes before they are read).
  json flows = json::array();
  auto add = [&](EventId other, bool outgoing) {
    if (other.lane >= m.lanes.size() || other.index >= index.lane_size(other.lane)) return;
    json end = end_json(other);
    end["outgoing"] = outgoing;
    flows.push_back(std::move(end));
  };
  const auto& table = m.flows;
  auto out =
      std::lower_bound(table.begin(), table.end(), e, [](const Flow& f, EventId x) { return f.from < x; });
  for (size_t n = 0; out != table.end() && out->from == e && n < kFlowEndsMax; ++out, ++n) add(out->to, true);
  const std::span<const uint32_t> by_target = index.flows_by_target();
  auto in = std::lower_bound(by_target.begin(), by_target.end(), e,
                             [&](uint32_t i, EventId x) { return table[i].to < x; });
  for (size_t n = 0; in != by_target.end() && table[*in].to == e && n < kFlowEndsMax; ++in, ++n)
    add(table[*in].from, false);
  for (const auto& rd : readers)
    if (rd && !rd->status().ok()) return DamagedAnswer(rd->status());
  return {200, Dump(json{{"partner", std::move(partner)}, {"flows", std::move(flows)}})};
}

// One event's details: the model's own EventJson over a scratch copy of the tables whose lanes hold just
// what it reads, the event's blocks and those its launch partner's search probes (the same search, run
// first through the cache with every block it reads copied in): bounded by a few blocks per lane searched,
// not by the trace.
IndexAnswer IndexEvent(const MappedIndex& index, const QueryParams& params) {
  using index_detail::LaneReader;
  const TraceModel& m = index.model();
  IndexAnswer error;
  const EventId e = RequestedEvent(index, params, &error);
  if (!error.body.empty()) return error;
  if (!e.valid()) return Error(404, "no such event");
  auto view = index.Shell();
  if (!view.ok()) return DamagedAnswer(view.status());
  TraceModel& v = **view;
  std::vector<std::unique_ptr<LaneReader>> readers(m.lanes.size());
  auto reader = [&](LaneId l) -> LaneReader& {
    if (!readers[l]) {
      readers[l] = std::make_unique<LaneReader>(index.blocks(), m.lanes[l], l);
      readers[l]->FillInto(&v.lanes[l]);
    }
    return *readers[l];
  };
  LaneReader& own = reader(e.lane);
  own.Start(e.index), own.Dur(e.index), own.Name(e.index), own.Aux(e.index);
  const EventId partner = IndexFlowPartner(m, e, reader);
  if (partner.valid()) reader(partner.lane).Start(partner.index), reader(partner.lane).Name(partner.index);
  for (const auto& rd : readers)
    if (rd && !rd->status().ok()) return DamagedAnswer(rd->status());
  return {200, EventJson(v, e)};
}

// The search box: the matching names (count, ids for the highlight) and, with dir=, one bounded step
// (IndexSearchStep).
IndexAnswer IndexSearch(const MappedIndex& index, const QueryParams& params) {
  const TraceModel& m = index.model();
  const std::string* q = Param(params, "q");
  if (!q || q->empty()) return Error(400, "missing parameter 'q' (the text searched for)");
  if (q->size() > 1024) return Error(400, "search text too long");
  const std::string* regex = Param(params, "regex");
  Search search;
  if (regex && *regex == "1") {
    auto r = Search::MatchRegex(m, *q);
    if (!r.ok()) return Error(400, r.status().message());
    search = std::move(*r);
  } else {
    search = Search(m, *q);
  }
  json out{{"count", search.match_count()}, {"names", search.matching_names()}};
  const std::string* dir = Param(params, "dir");
  if (!dir) {
    // The ids of the names with events, for the highlight (tiles carry name ids).
    json ids = json::array();
    bool truncated = false;
    for (StringId id = 1; id < m.strings.size(); ++id) {
      if (!search.Matches(id) || m.name_counts[id] == 0) continue;
      if (ids.size() == kSearchIdsMax) {
        truncated = true;
        break;
      }
      ids.push_back(id);
    }
    out["ids"] = std::move(ids);
    out["ids_truncated"] = truncated;
    // The tracks with a match (the Filter toggle), from each track's distinct names (checked: ends that do
    // not ascend to at most the names' count are a damaged index, and the answer has no track list); a track
    // whose names were too many to list counts as one.
    const auto& ends = index.summaries().track_name_ends;
    const auto& names = index.summaries().track_names;
    if (ends.size() == m.tracks.size() && std::is_sorted(ends.begin(), ends.end()) &&
        (ends.empty() || ends.back() <= names.size())) {
      json tracks = json::array();
      for (TrackId t = 0; t < ends.size(); ++t) {
        for (uint64_t k = t ? ends[t - 1] : 0; k < ends[t]; ++k)
          if (names[k] == kNone || search.Matches(names[k])) {
            tracks.push_back(t);
            break;
          }
      }
      out["tracks"] = std::move(tracks);
    }
    return {200, Dump(out)};
  }
  if (*dir == "list") {  // the matches overlapping [t0, t1): the search results panel
    int64_t t0 = 0, t1 = 0;
    uint32_t limit = 2000;
    if (Status s = Number(params, "t0", &t0); !s.ok()) return ErrorOf(s);
    if (Status s = Number(params, "t1", &t1); !s.ok()) return ErrorOf(s);
    if (Param(params, "limit"))
      if (Status s = Number(params, "limit", &limit); !s.ok()) return ErrorOf(s);
    const SearchListResult list =
        IndexSearchList(index, search, t0, t1, std::min<uint32_t>(limit, kSearchListMax));
    if (!list.status.ok()) return DamagedAnswer(list.status);
    json hits = json::array(), names = json::object();
    for (size_t i = 0; i < list.hits.size(); ++i) {
      hits.push_back({list.hits[i].lane, list.hits[i].index, list.start[i], list.end[i], list.name[i]});
      names[std::to_string(list.name[i])] = m.Str(list.name[i]);
    }
    out["hits"] = std::move(hits);  // [lane, index, start, end, name id]
    out["names"] = std::move(names);
    out["complete"] = list.complete;
    out["examined"] = list.examined;
    return {200, Dump(out)};
  }
  if (*dir != "next" && *dir != "prev") return Error(400, "dir must be next, prev or list");
  int64_t t = 0;
  if (Status s = Number(params, "t", &t); !s.ok()) return ErrorOf(s);
  EventId from;
  if (Param(params, "lane") || Param(params, "index")) {
    uint32_t lane = 0, i = 0;
    if (Status s = Number(params, "lane", &lane); !s.ok()) return ErrorOf(s);
    if (Status s = Number(params, "index", &i); !s.ok()) return ErrorOf(s);
    if (lane >= m.lanes.size() || i >= index.lane_size(lane)) return Error(404, "no such event");
    from = {lane, i};
  }
  uint64_t budget = kSearchScanBudget;
  if (Param(params, "budget")) {
    if (Status s = Number(params, "budget", &budget); !s.ok()) return ErrorOf(s);
    budget = std::clamp<uint64_t>(budget, 1024, kSearchScanBudget);
  }
  const SearchStepResult r = IndexSearchStep(index, search, *dir == "next", t, from, budget);
  if (!r.status.ok()) return DamagedAnswer(r.status);
  if (r.hit.valid()) {
    const Lane& lane = m.lanes[r.hit.lane];
    out["hit"] = {{"lane", r.hit.lane},
                  {"index", r.hit.index},
                  {"start", r.start},
                  {"end", r.end},
                  {"key", m.tracks[lane.track].key + "/" + std::to_string(lane.depth) + "/" +
                              std::to_string(r.hit.index)}};
  } else {
    out["hit"] = nullptr;
  }
  out["resume"] = r.resume ? json(r.resume_t) : json(nullptr);
  out["at_end"] = r.at_end;
  out["examined"] = r.examined;
  return {200, Dump(out)};
}

// %XX and '+' of a query value, as cpp-httplib decodes them for the server.
std::string PercentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += char(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::pair<std::string, QueryParams> SplitIndexUrl(std::string_view url) {
  const size_t q = url.find('?');
  QueryParams params;
  std::string_view rest = q == std::string_view::npos ? std::string_view() : url.substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view kv = rest.substr(0, amp);
    const size_t eq = kv.find('=');
    if (!kv.empty())
      params.emplace_back(PercentDecode(kv.substr(0, eq)),
                          eq == std::string_view::npos ? std::string() : PercentDecode(kv.substr(eq + 1)));
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
  }
  return {std::string(url.substr(0, q)), std::move(params)};
}

IndexAnswer AnswerIndexQuery(const MappedIndex& index, std::string_view what, const QueryParams& params) {
  const TraceModel& m = index.model();
  if (what == "meta") return {200, MetaJson(m)};
  if (what == "tiles") {
    auto request = ParseTileRequest(m, params);
    if (!request.ok()) return ErrorOf(request.status());
    return IndexTile(index, *request);
  }
  if (what == "event") return IndexEvent(index, params);
  if (what == "flows") return IndexFlows(index, params);
  if (what == "kernels") {
    size_t limit = 1000;
    if (Param(params, "limit")) {
      if (Status s = Number(params, "limit", &limit); !s.ok()) return ErrorOf(s);
      limit = std::min(limit, kKernelRowsMax);
    }
    const auto& all = index.summaries().kernels;
    const std::vector<KernelSummaryRow> rows(all.begin(),
                                             all.begin() + ptrdiff_t(std::min(limit, all.size())));
    // `gtrace stats --json`'s rows plus what the page's table needs: the name's string id (the one tiles
    // use) and the span of the kernel's instances (a row click zooms there).
    json out = json::parse(KernelSummaryJson(m, rows), nullptr, false);
    for (size_t i = 0; i < rows.size() && out.is_array() && i < out.size(); ++i) {
      out[i]["name_id"] = rows[i].name;
      out[i]["first_ns"] = rows[i].first_ns;
      out[i]["last_ns"] = rows[i].last_ns;
    }
    return {200, Dump(out)};
  }
  if (what == "summary") return {200, SummaryJson(index)};
  if (what == "search") return IndexSearch(index, params);
  if (what == "gaps") {  // computed at build (ExplainIdleGaps reads the events around each gap)
    const std::string& gaps = index.summaries().idle_gaps_json;
    return {200, gaps.empty() ? IdleGapsWithDevicesJson({}) : gaps};
  }
  if (what == "profiled") {  // computed at build (CollectProfiledData scans the GPU lanes)
    const std::string& profiled = index.summaries().profiled_json;
    return {200, profiled.empty() ? std::string("{}") : profiled};
  }
  return Error(404, "not found");
}

}  // namespace gt::viewer
