// Queries over a mapped viewer index for `gtrace serve` (gt/viewer/index_query.h). The work per request is
// bounded by its caps (pixels, lanes, items, rows); whatever scans events was done once at build.
#include "gt/viewer/index_query.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <set>

#include "gt/viewer/json.h"
#include "gt/viewer/query.h"
#include "gt/viewer/source.h"

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

IndexAnswer EventAnswer(const TraceModel& m, const QueryParams& params) {
  EventId e;
  if (const std::string* key = Param(params, "key")) {
    if (key->size() > 1024) return Error(400, "event key too long");
    e = m.FindEventByKey(*key);
  } else {
    uint32_t lane = 0, index = 0;
    if (Status s = Number(params, "lane", &lane); !s.ok()) return ErrorOf(s);
    if (Status s = Number(params, "index", &index); !s.ok()) return ErrorOf(s);
    if (lane < m.lanes.size() && index < m.lanes[lane].size()) e = {lane, index};
  }
  if (!e.valid()) return Error(404, "no such event");
  return {200, EventJson(m, e)};
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

Tile BuildTile(const TraceModel& m, const TileRequest& r) {
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
    QueryLane(m.lanes[t.first_lane + d], tile.t0, tile.t1, tile.ns_per_px, &out);
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

std::string TileJson(const TraceModel& m, const Tile& tile) {
  const Track& t = m.tracks[tile.track];
  json lanes = json::array();
  std::set<StringId> names;
  for (const TileLane& tl : tile.lanes) {
    const Lane& lane = m.lanes[t.first_lane + tl.depth];
    json items = json::array();
    for (const DrawItem& it : tl.items) {
      const StringId name = lane.name[it.first];
      names.insert(name);
      const EventId first{t.first_lane + tl.depth, it.first};
      items.push_back({it.start, it.end, it.first, it.count, name, int(m.Kind(first)), EventStyle(m, first)});
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

IndexAnswer AnswerIndexQuery(const MappedIndex& index, std::string_view what, const QueryParams& params) {
  const TraceModel& m = index.model();
  if (what == "meta") return {200, MetaJson(m)};
  if (what == "tiles") {
    auto request = ParseTileRequest(m, params);
    if (!request.ok()) return ErrorOf(request.status());
    return {200, TileJson(m, BuildTile(m, *request))};
  }
  if (what == "event") return EventAnswer(m, params);
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
  return Error(404, "not found");
}

}  // namespace gt::viewer
