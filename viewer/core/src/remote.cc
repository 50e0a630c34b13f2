// A trace that stays on the server (gt/viewer/remote.h): the tile quantization, the tile cache and the
// remote implementation of the viewer's trace interface.
//
// [SECTION] Tiles
// [SECTION] Parsing answers
// [SECTION] RemoteTrace: requests
// [SECTION] RemoteTrace: the interface
#include "gt/viewer/remote.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "gt/sat_math.h"
#include "gt/viewer/index_query.h"
#include "gt/viewer/json.h"

namespace gt::viewer {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Tiles
// ---------------------------------------------------------------------------------------------------------------

int TileLevelFor(double ns_per_px) {
  if (!(ns_per_px >= 2.0)) return 0;  // NaN and sub-2 ns pixels: the finest level
  const int level = int(std::floor(std::log2(ns_per_px)));
  return std::clamp(level, 0, kRemoteMaxLevel);
}

std::pair<int64_t, int64_t> TileWindow(int64_t origin, const TileKey& key) {
  const int64_t w = TileWidth(key.level);
  // Saturating: a tile past INT64_MAX is cut there (the server cuts it the same way).
  const __int128 t0 = __int128(origin) + __int128(key.index) * w;
  const __int128 t1 = t0 + w;
  return {int64_t(std::clamp<__int128>(t0, INT64_MIN, INT64_MAX)),
          int64_t(std::clamp<__int128>(t1, INT64_MIN, INT64_MAX))};
}

void TilesCovering(int64_t first_ns, int64_t last_ns, TrackId track, int level, int64_t t0, int64_t t1,
                   std::vector<TileKey>* out) {
  out->clear();
  level = std::clamp(level, 0, kRemoteMaxLevel);
  const int64_t lo = std::max(t0, first_ns);
  const int64_t hi = last_ns == INT64_MAX ? t1 : std::min(t1, last_ns + 1);
  if (hi <= lo) return;
  const int64_t w = TileWidth(level);
  const int64_t first = int64_t((__int128(lo) - first_ns) / w);
  const int64_t last = int64_t((__int128(hi) - 1 - first_ns) / w);
  // A window wider than the screen's 2-4 tiles means a caller bug; cap it rather than ask for thousands.
  for (int64_t i = first; i <= last && i - first < 64; ++i) out->push_back({track, level, i});
}

size_t RemoteTile::Bytes() const {
  size_t b = sizeof(RemoteTile) + counter.capacity() * sizeof(CounterColumn);
  for (const auto& l : lanes) b += sizeof(l) + l.capacity() * sizeof(LaneItem);
  return b;
}

const RemoteTile* TileCache::Find(const TileKey& key) {
  auto it = map_.find(key);
  if (it == map_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it->second);
  return &it->second->second;
}

void TileCache::Put(const TileKey& key, RemoteTile tile) {
  if (auto it = map_.find(key); it != map_.end()) {
    bytes_ -= it->second->second.Bytes();
    lru_.erase(it->second);
    map_.erase(it);
  }
  bytes_ += tile.Bytes();
  lru_.emplace_front(key, std::move(tile));
  map_[key] = lru_.begin();
  // The newest stays even when it alone is over the budget: it is what the screen shows.
  while (bytes_ > max_bytes_ && lru_.size() > 1) {
    auto& last = lru_.back();
    bytes_ -= last.second.Bytes();
    map_.erase(last.first);
    lru_.pop_back();
    ++evictions_;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] Parsing answers
// ---------------------------------------------------------------------------------------------------------------

namespace {

// Reads JSON without exceptions: a malformed answer is a discarded value.
json Parse(std::string_view body) {
  return json::parse(body.begin(), body.end(), nullptr, false);
}

template <typename T>
T Get(const json& j, const char* key, T fallback = T{}) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->get<std::string>() : fallback;
  } else if constexpr (std::is_same_v<T, bool>) {
    return it->is_boolean() ? it->get<bool>() : fallback;
  } else {
    return it->is_number() ? it->get<T>() : fallback;
  }
}

EventKind KindFromName(std::string_view name) {
  for (int k = 0; k < int(EventKind::kCount); ++k)
    if (name == EventKindName(EventKind(k))) return EventKind(k);
  return EventKind::kHostOp;
}

TrackKind TrackKindFromName(std::string_view name) {
  for (TrackKind k : {TrackKind::kThreadApi, TrackKind::kThreadRanges, TrackKind::kThreadSync,
                      TrackKind::kGpuStream, TrackKind::kGpuAnnotations, TrackKind::kCounter})
    if (name == TrackKindName(k)) return k;
  return TrackKind::kThreadRanges;
}

// Everything but unreserved characters as %XX: a search text may hold '&', '#', '%' or any byte.
std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += char(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

NameSummary NameRow(const json& r) {
  NameSummary s;
  s.name = Get<std::string>(r, "name");
  s.count = Get<uint64_t>(r, "count");
  s.total_ns = Get<int64_t>(r, "total_ns");
  s.min_ns = Get<int64_t>(r, "min_ns");
  s.max_ns = Get<int64_t>(r, "max_ns");
  s.avg_ns = Get<double>(r, "avg_ns");
  s.share = Get<double>(r, "share");
  s.bytes = Get<uint64_t>(r, "bytes");
  return s;
}

}  // namespace

StatusOr<RemoteTile> ParseTile(std::string_view body, std::unordered_map<StringId, std::string>* names) {
  const json j = Parse(body);
  if (!j.is_object()) return Corrupt("a tile answer is not a JSON object");
  RemoteTile tile;
  tile.t0 = Get<int64_t>(j, "t0");
  tile.t1 = Get<int64_t>(j, "t1");
  tile.truncated = Get<bool>(j, "truncated");
  if (auto lanes = j.find("lanes"); lanes != j.end() && lanes->is_array()) {
    for (const json& l : *lanes) {
      const uint32_t depth = Get<uint32_t>(l, "depth");
      if (depth >= kTileMaxLanes) continue;
      if (tile.lanes.size() <= depth) tile.lanes.resize(depth + 1);
      auto items = l.find("items");
      if (items == l.end() || !items->is_array()) continue;
      auto& out = tile.lanes[depth];
      out.reserve(items->size());
      for (const json& it : *items) {
        if (!it.is_array() || it.size() < 6)
          return Corrupt("a tile item is not [start,end,first,count,name,kind]");
        LaneItem li;
        li.item.start = it[0].get<int64_t>();
        li.item.end = it[1].get<int64_t>();
        li.item.first = it[2].get<uint32_t>();
        li.item.count = std::max<uint32_t>(1, it[3].get<uint32_t>());
        li.name = it[4].get<StringId>();
        li.kind = EventKind(std::min<int>(it[5].get<int>(), int(EventKind::kCount) - 1));
        if (it.size() > 6 && it[6].is_number_unsigned()) li.style = it[6].get<uint32_t>();
        out.push_back(li);
      }
    }
  }
  if (auto cols = j.find("counter"); cols != j.end() && cols->is_array()) {
    for (const json& c : *cols) {
      if (!c.is_array() || c.size() < 7)
        return Corrupt("a counter column is not [t0,t1,first,min,max,last,n]");
      tile.counter.push_back({c[0].get<int64_t>(), c[1].get<int64_t>(), c[2].get<double>(),
                              c[3].get<double>(), c[4].get<double>(), c[5].get<double>(),
                              c[6].get<uint32_t>()});
    }
  }
  if (auto text = j.find("names"); names && text != j.end() && text->is_object())
    for (auto it = text->begin(); it != text->end(); ++it)
      if (it->is_string())
        (*names)[StringId(std::strtoul(it.key().c_str(), nullptr, 10))] = it->get<std::string>();
  return tile;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] RemoteTrace: requests
// ---------------------------------------------------------------------------------------------------------------

RemoteTrace::RemoteTrace(Send send, RemoteOptions options)
    : send_(std::move(send)), options_(options), cache_(options.cache_bytes) {}

void RemoteTrace::Start() {
  state_ = State::kMeta;
  Issue({Ask::kMeta, {}, {}});
}

std::string RemoteTrace::UrlOf(const Request& r) const {
  switch (r.ask) {
    case Ask::kMeta:
      return "meta";
    case Ask::kTile: {
      const auto [t0, t1] = TileWindow(layout_.first_ns, r.tile);
      return "tiles?track=" + std::to_string(r.tile.track) + "&t0=" + std::to_string(t0) +
             "&t1=" + std::to_string(t1) + "&px=" + std::to_string(kRemoteTilePx);
    }
    case Ask::kEvent:
      return "event?lane=" + std::to_string(r.event.lane) + "&index=" + std::to_string(r.event.index);
    case Ask::kKernels:
      return "kernels?limit=100000";
    case Ask::kSummary:
      return "summary";
    case Ask::kGaps:
      return "gaps";
    case Ask::kProfiled:
      return "profiled";
    case Ask::kFlows:
      return "flows?lane=" + std::to_string(r.event.lane) + "&index=" + std::to_string(r.event.index);
    case Ask::kSearch:
    case Ask::kSearchList:
    case Ask::kSearchStep: {
      std::string url = "search?q=" + PercentEncode(search_.text) + (search_.regex ? "&regex=1" : "");
      if (r.ask == Ask::kSearch) return url;
      if (r.ask == Ask::kSearchList)
        return url + "&dir=list&t0=" + std::to_string(r.t) + "&t1=" + std::to_string(r.t1) + "&limit=2000";
      url += std::string("&dir=") + (r.forward ? "next" : "prev") + "&t=" + std::to_string(r.t);
      if (r.event.valid())
        url += "&lane=" + std::to_string(r.event.lane) + "&index=" + std::to_string(r.event.index);
      return url;
    }
  }
  return "meta";
}

void RemoteTrace::Issue(const Request& r) {
  if (in_flight_.size() >= options_.max_in_flight) {
    waiting_.push_back(r);
    return;
  }
  const uint64_t id = next_id_++;
  in_flight_[id] = r;
  ++stats_.requests;
  send_(id, UrlOf(r));
}

void RemoteTrace::Retry(const Request& r, double after_s) {
  retries_.push_back({Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(std::max(0.0, after_s))),
                      r});
}

void RemoteTrace::Tick(Clock::time_point now) {
  for (size_t i = 0; i < retries_.size();) {
    if (retries_[i].first <= now) {
      const Request r = retries_[i].second;
      retries_.erase(retries_.begin() + ptrdiff_t(i));
      Issue(r);
    } else {
      ++i;
    }
  }
}

void RemoteTrace::OnAnswer(uint64_t request, int status, std::string_view body, double retry_after_s) {
  auto it = in_flight_.find(request);
  if (it == in_flight_.end()) return;
  const Request r = it->second;
  in_flight_.erase(it);
  ++stats_.answers;
  stats_.bytes += body.size();
  if (status != 200) ++stats_.failures;
  // A slot is free: the oldest waiting request goes out (the screen's order: it asked for them first).
  if (!waiting_.empty() && in_flight_.size() < options_.max_in_flight) {
    const Request next = waiting_.front();
    waiting_.erase(waiting_.begin());
    Issue(next);
  }
  // 202: the index is being built; 503: too many wait for theirs; 0: the network. Asked again later.
  const bool again = status == 202 || status == 503 || status == 0 || status == 429;
  const double after = retry_after_s > 0 ? retry_after_s : options_.retry_s;
  switch (r.ask) {
    case Ask::kMeta: {
      if (again) return Retry(r, after);
      Status s = status == 200 ? TakeMeta(body) : Status(StatusCode::kNotFound, "");
      if (!s.ok()) {
        state_ = State::kFailed;
        error_ = status == 200 ? s.message()
                               : "the server answered " + std::to_string(status) + ": " +
                                     std::string(body.substr(0, 300));
      }
      return;
    }
    case Ask::kTile: {
      if (again) return Retry(r, after);
      tiles_asked_.erase(r.tile);
      RemoteTile tile;  // an error answer caches an empty tile: the window stays blank, not re-asked
      if (status == 200) {
        auto parsed = ParseTile(body, &names_);
        if (parsed.ok()) tile = std::move(*parsed);
      }
      cache_.Put(r.tile, std::move(tile));
      return;
    }
    case Ask::kEvent:
      if (again) return Retry(r, after);
      events_asked_.erase(r.event);
      TakeEvent(r.event, status, body);
      return;
    case Ask::kKernels:
      if (again) return Retry(r, after);
      kernels_ready_ = true;  // a failure shows an empty table rather than asking forever
      if (status == 200) (void)TakeKernels(body);
      return;
    case Ask::kSummary:
      if (again) return Retry(r, after);
      summary_ready_ = true;
      if (status == 200) (void)TakeSummary(body);
      return;
    case Ask::kFlows: {
      if (again) return Retry(r, after);
      partners_asked_.erase(r.event);
      PartnerInfo info;  // an error answer: no partner (not asked again)
      const json j = status == 200 ? Parse(body) : json();
      if (j.is_object())
        if (auto p = j.find("partner"); p != j.end() && p->is_object()) {
          const EventId id{Get<uint32_t>(*p, "lane", kNone), Get<uint32_t>(*p, "index", kNone)};
          if (id.valid() && id.lane < layout_.lanes.size()) {
            info.id = id;
            info.name = Get<std::string>(*p, "name");
            info.kind = KindFromName(Get<std::string>(*p, "kind"));
            info.start = Get<int64_t>(*p, "start");
            info.end = Get<int64_t>(*p, "end");
            info.launch = Get<bool>(*p, "launch");
          }
        }
      if (j.is_object())
        if (auto f = j.find("flows"); f != j.end() && f->is_array())
          for (const json& end : *f) {
            const EventId id{Get<uint32_t>(end, "lane", kNone), Get<uint32_t>(end, "index", kNone)};
            if (!end.is_object() || !id.valid() || id.lane >= layout_.lanes.size()) continue;
            if (info.flows.size() >= 2 * kFlowEndsMax) break;
            info.flows.push_back({id, Get<std::string>(end, "name"),
                                  KindFromName(Get<std::string>(end, "kind")), Get<int64_t>(end, "start"),
                                  Get<int64_t>(end, "end"), Get<bool>(end, "outgoing")});
          }
      if (partners_.size() >= 512) partners_.erase(partners_.begin());
      partners_[r.event] = std::move(info);
      return;
    }
    case Ask::kGaps:
      if (again) return Retry(r, after);
      gaps_ready_ = true;  // a failure shows none rather than asking forever
      if (status == 200)
        if (auto gaps = ParseIdleGapsJson(body); gaps.ok()) gaps_ = std::move(*gaps);
      return;
    case Ask::kProfiled: {
      if (again) return Retry(r, after);
      // A failure is said, not asked again: the counters section shows the reason.
      if (status == 200) {
        auto data = ParseProfiledData(body);
        if (data.ok())
          profiled_ = std::move(*data), profiled_ready_ = true;
        else
          profiled_error_ = data.status().message();
        return;
      }
      if (const json j = Parse(body); j.is_object()) profiled_error_ = Get<std::string>(j, "error");
      if (profiled_error_.empty()) profiled_error_ = "the server answered " + std::to_string(status);
      return;
    }
    case Ask::kSearchList: {
      if (again) return Retry(r, after);
      list_in_flight_ = false;
      if (r.generation != search_generation_) return;  // the text changed since: asked again by the panel
      RemoteSearchList list;
      list.t0 = r.t, list.t1 = r.t1, list.generation = r.generation, list.ready = true;
      // An error answer: an empty, incomplete list (the panel asks again when the window changes).
      list.complete = false;
      const json j = status == 200 ? Parse(body) : json();
      if (j.is_object()) {
        list.complete = Get<bool>(j, "complete", true);
        const json* names = j.contains("names") && j["names"].is_object() ? &j["names"] : nullptr;
        if (auto hits = j.find("hits"); hits != j.end() && hits->is_array())
          for (const json& h : *hits) {
            if (!h.is_array() || h.size() != 5 || !h[0].is_number_unsigned() || !h[1].is_number_unsigned() ||
                !h[2].is_number_integer() || !h[3].is_number_integer() || !h[4].is_number_unsigned())
              continue;
            const EventId e{h[0].get<uint32_t>(), h[1].get<uint32_t>()};
            if (e.lane >= layout_.lanes.size() || list.hits.size() >= kSearchListMax) continue;
            list.hits.push_back(e);
            list.start.push_back(h[2].get<int64_t>());
            list.end.push_back(h[3].get<int64_t>());
            std::string name;
            if (names)
              if (auto n = names->find(std::to_string(h[4].get<uint64_t>()));
                  n != names->end() && n->is_string())
                name = n->get<std::string>();
            list.name.push_back(std::move(name));
          }
      }
      list_ = std::move(list);
      return;
    }
    case Ask::kSearch:
      if (r.generation != search_generation_) return;  // the text changed since
      if (again) return Retry(r, after);
      search_.ready = true;
      if (status == 200) {
        TakeSearch(body);
      } else {
        const json j = Parse(body);
        search_.error =
            j.is_object() ? Get<std::string>(j, "error") : "the server answered " + std::to_string(status);
      }
      return;
    case Ask::kSearchStep:
      if (r.generation != step_generation_ || !step_pending_) return;
      if (again) return Retry(r, after);
      if (status != 200) {
        step_pending_ = false;
        return;
      }
      TakeSearchStep(r, body);
      return;
  }
}

void RemoteTrace::SetSearch(std::string_view text, bool regex) {
  if (text == search_.text && regex == search_.regex) return;
  search_ = RemoteSearch{};
  search_.text = std::string(text);
  search_.regex = regex;
  ++search_generation_;
  step_pending_ = false;  // a step of the old text is dropped
  ++step_generation_;
  search_hit_ = {};
  list_ = RemoteSearchList{};
  if (text.empty()) {
    search_.ready = true;
    return;
  }
  if (state_ == State::kReady) Issue({.ask = Ask::kSearch, .generation = search_generation_});
}

void RemoteTrace::AskSearchList(int64_t t0, int64_t t1) {
  if (state_ != State::kReady || search_.text.empty() || list_in_flight_) return;
  if (list_.ready && list_.generation == search_generation_ && list_.t0 == t0 && list_.t1 == t1) return;
  list_in_flight_ = true;
  Issue({.ask = Ask::kSearchList, .generation = search_generation_, .t = t0, .t1 = t1});
}

void RemoteTrace::TakeSearch(std::string_view body) {
  const json j = Parse(body);
  if (!j.is_object()) {
    search_.error = "the server's search answer is not an object";
    return;
  }
  search_.count = Get<uint64_t>(j, "count");
  search_.names = Get<uint32_t>(j, "names");
  search_.ids_truncated = Get<bool>(j, "ids_truncated");
  if (auto ids = j.find("ids"); ids != j.end() && ids->is_array())
    for (const json& id : *ids)
      if (id.is_number_unsigned() && id.get<uint64_t>() < (uint64_t{1} << 31))
        search_.ids.push_back(id.get<StringId>());
  if (auto tracks = j.find("tracks"); tracks != j.end() && tracks->is_array()) {
    search_.tracks_known = true;
    for (const json& t : *tracks)
      if (t.is_number_unsigned() && t.get<uint64_t>() < layout_.tracks.size())
        search_.tracks.push_back(t.get<TrackId>());
  }
}

void RemoteTrace::SearchStep(bool forward, EventId from, int64_t t) {
  if (search_.text.empty() || state_ != State::kReady) return;
  ++step_generation_;
  step_pending_ = true;
  step_requests_ = 1;
  search_hit_ = {};
  Issue({.ask = Ask::kSearchStep, .event = from, .generation = step_generation_, .forward = forward, .t = t});
}

void RemoteTrace::TakeSearchStep(const Request& r, std::string_view body) {
  const json j = Parse(body);
  if (!j.is_object()) {
    step_pending_ = false;
    return;
  }
  if (auto hit = j.find("hit"); hit != j.end() && hit->is_object()) {
    const EventId e{Get<uint32_t>(*hit, "lane", kNone), Get<uint32_t>(*hit, "index", kNone)};
    step_pending_ = false;
    if (e.valid() && e.lane < layout_.lanes.size()) search_hit_ = e;
    return;
  }
  // Bounded by the trace's size over the budget (about 25 requests a pass at 100 M events); a server that
  // never finishes is not followed forever.
  if (++step_requests_ > 10'000) {
    step_pending_ = false;
    return;
  }
  Request next = r;
  next.event = {};
  if (auto resume = j.find("resume"); resume != j.end() && resume->is_number_integer()) {
    next.t = resume->get<int64_t>();
  } else if (!r.wrapped) {  // at the end: once more from the other end, as Search::Next wraps
    next.wrapped = true;
    next.t = r.forward ? layout_.first_ns : SatAdd(layout_.last_ns, int64_t{1});
  } else {
    step_pending_ = false;
    return;
  }
  Issue(next);
}

Status RemoteTrace::TakeMeta(std::string_view body) {
  const json j = Parse(body);
  if (!j.is_object() || !j.contains("tracks") || !j["tracks"].is_array())
    return Corrupt("the server's /meta answer is not a trace layout");
  TraceModel m;
  m.first_ns = Get<int64_t>(j, "first_ns");
  m.last_ns = Get<int64_t>(j, "last_ns");
  m.event_count = Get<uint64_t>(j, "events");
  m.sample_count = Get<uint64_t>(j, "samples");
  for (const json& g : j.value("groups", json::array())) {
    TrackGroup group;
    group.kind = GroupKind(std::clamp(Get<int>(g, "kind"), 0, 2));
    group.name = Get<std::string>(g, "name");
    group.key = Get<std::string>(g, "key");
    for (const json& t : g.value("tracks", json::array()))
      if (t.is_number_unsigned()) group.tracks.push_back(t.get<TrackId>());
    m.groups.push_back(std::move(group));
  }
  LaneId next_lane = 0;
  for (const json& t : j["tracks"]) {
    Track track;
    track.kind = TrackKindFromName(Get<std::string>(t, "kind"));
    track.name = Get<std::string>(t, "name");
    track.key = Get<std::string>(t, "key");
    track.group = Get<uint32_t>(t, "group", kNone);
    track.lane_count = std::min<uint32_t>(Get<uint32_t>(t, "lanes"), 4096);
    // The server's lane ids (what /event?lane= means); older servers without them: in track order.
    track.first_lane = Get<uint32_t>(t, "first_lane", next_lane);
    track.event_count = Get<uint64_t>(t, "events");
    track.first_ns = Get<int64_t>(t, "first_ns");
    track.last_ns = Get<int64_t>(t, "last_ns");
    track.device_id = Get<uint32_t>(t, "device", kNone);
    track.pid = Get<uint32_t>(t, "pid");  // the counters of a selected kernel are its process's
    track.default_collapsed = Get<bool>(t, "collapsed");
    next_lane = std::max(next_lane, track.first_lane + track.lane_count);
    m.tracks.push_back(std::move(track));
  }
  if (next_lane > (1u << 24)) return Corrupt("the server's /meta answer has too many lanes");
  // Lanes without events: the layout the timeline builds its rows from.
  m.lanes.resize(next_lane);
  for (TrackId t = 0; t < m.tracks.size(); ++t)
    for (uint32_t d = 0; d < m.tracks[t].lane_count; ++d) {
      m.lanes[m.tracks[t].first_lane + d].track = t;
      m.lanes[m.tracks[t].first_lane + d].depth = d;
    }
  for (const TrackGroup& g : m.groups)
    for (TrackId t : g.tracks)
      if (t >= m.tracks.size()) return Corrupt("the server's /meta answer names a track it does not have");
  layout_ = std::move(m);
  stats_.events = layout_.event_count + layout_.sample_count;
  state_ = State::kReady;
  if (!search_.text.empty() && !search_.ready) Issue({.ask = Ask::kSearch, .generation = search_generation_});
  return Status::Ok();
}

void RemoteTrace::TakeEvent(EventId e, int status, std::string_view body) {
  EventInfo info;
  info.id = e;
  const json j = status == 200 ? Parse(body) : json();
  if (j.is_object()) {
    info.found = true;
    info.name = Get<std::string>(j, "name");
    info.kind = KindFromName(Get<std::string>(j, "kind"));
    info.track = Get<std::string>(j, "track");
    info.key = Get<std::string>(j, "key");
    info.start = Get<int64_t>(j, "start");
    info.end = Get<int64_t>(j, "end");
    if (auto f = j.find("fields"); f != j.end() && f->is_object())
      for (auto it = f->begin(); it != f->end(); ++it)
        info.fields.push_back({it.key(), it->is_string() ? it->get<std::string>() : it->dump()});
    event_json_[e] = std::string(body);
  }
  // A few hundred clicked events at most are kept: the oldest id goes first.
  if (events_.size() >= 512) {
    event_json_.erase(events_.begin()->first);
    events_.erase(events_.begin());
  }
  events_[e] = std::move(info);
}

Status RemoteTrace::TakeKernels(std::string_view body) {
  const json j = Parse(body);
  if (!j.is_array()) return Corrupt("the kernel table is not an array");
  for (const json& r : j) {
    const NameSummary s = NameRow(r);
    KernelSummaryRow k;
    // The server's string id, so that a row and the timeline's items agree on the name.
    k.name = Get<StringId>(r, "name_id");
    if (!names_.count(k.name)) names_[k.name] = s.name;
    k.count = s.count, k.total_ns = s.total_ns, k.min_ns = s.min_ns, k.max_ns = s.max_ns;
    k.avg_ns = s.avg_ns, k.share = s.share;
    k.first_ns = Get<int64_t>(r, "first_ns", layout_.first_ns);
    k.last_ns = Get<int64_t>(r, "last_ns", layout_.last_ns);
    kernels_.push_back(k);
  }
  return Status::Ok();
}

Status RemoteTrace::TakeSummary(std::string_view body) {
  const json j = Parse(body);
  if (!j.is_object()) return Corrupt("the summary is not an object");
  for (size_t k = 0; k < 4; ++k) {
    auto rows = j.find(SummaryOfName(SummaryOf(k)));
    if (rows == j.end() || !rows->is_array()) continue;
    for (const json& r : *rows) summary_[k].push_back(NameRow(r));
  }
  return Status::Ok();
}

RemoteStats RemoteTrace::stats() const {
  RemoteStats s = stats_;
  s.in_flight = uint32_t(in_flight_.size());
  s.tiles = cache_.size();
  s.tile_bytes = cache_.bytes();
  s.tile_hits = cache_.hits();
  s.tile_misses = cache_.misses();
  s.tile_evictions = cache_.evictions();
  return s;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] RemoteTrace: the interface
// ---------------------------------------------------------------------------------------------------------------

const std::string& RemoteTrace::Str(StringId id) const {
  static const std::string kEmpty;
  auto it = names_.find(id);
  return it == names_.end() ? kEmpty : it->second;
}

const RemoteTile* RemoteTrace::TileOrAsk(const TileKey& key) {
  if (const RemoteTile* t = cache_.Find(key)) return t;
  if (state_ == State::kReady && tiles_asked_.insert(key).second) Issue({Ask::kTile, key, {}});
  return nullptr;
}

bool RemoteTrace::FromAncestor(const TileKey& key, uint32_t depth, int64_t t0, int64_t t1,
                               std::vector<LaneItem>* out) {
  for (int up = 1; up <= options_.fallback_levels && key.level + up <= kRemoteMaxLevel; ++up) {
    const TileKey a{key.track, key.level + up, key.index >> up};
    if (!cache_.Contains(a)) continue;
    const RemoteTile* t = cache_.Find(a);
    if (depth < t->lanes.size())
      for (const LaneItem& it : t->lanes[depth])
        if (it.item.start < t1 && it.item.end >= t0) out->push_back(it);
    return true;
  }
  return false;
}

bool RemoteTrace::LaneItems(LaneId lane_id, int64_t t0, int64_t t1, double ns_per_px,
                            std::vector<LaneItem>* out) {
  out->clear();
  if (state_ != State::kReady || lane_id >= layout_.lanes.size()) return state_ == State::kReady;
  const Lane& lane = layout_.lanes[lane_id];
  std::vector<TileKey> keys;
  TilesCovering(layout_.first_ns, layout_.last_ns, lane.track, TileLevelFor(ns_per_px), t0, t1, &keys);
  bool complete = true;
  int64_t drawn_to = INT64_MIN;  // an event across a tile edge is in both tiles: drawn once
  for (const TileKey& key : keys) {
    const auto [w0, w1] = TileWindow(layout_.first_ns, key);
    const int64_t a = std::max(t0, w0), b = std::min(t1, w1);
    const RemoteTile* tile = TileOrAsk(key);
    if (!tile) {
      complete = false;
      FromAncestor(key, lane.depth, a, b, out);
      continue;
    }
    if (lane.depth >= tile->lanes.size()) continue;
    for (const LaneItem& it : tile->lanes[lane.depth]) {
      if (it.item.start >= b || it.item.end < a) continue;
      // A single event drawn from the tile before; a merged block across the edge is kept (the tiles fold
      // differently there, and a block may also hold events past the edge).
      if (!it.item.merged() && it.item.start < w0 && it.item.start <= drawn_to) continue;
      out->push_back(it);
      drawn_to = std::max(drawn_to, it.item.start);
    }
  }
  return complete;
}

bool RemoteTrace::CounterColumns(TrackId track, int64_t t0, int64_t t1, double ns_per_px,
                                 std::vector<CounterColumn>* out) {
  out->clear();
  if (state_ != State::kReady || track >= layout_.tracks.size()) return state_ == State::kReady;
  std::vector<TileKey> keys;
  TilesCovering(layout_.first_ns, layout_.last_ns, track, TileLevelFor(ns_per_px), t0, t1, &keys);
  bool complete = true;
  for (const TileKey& key : keys) {
    const RemoteTile* tile = TileOrAsk(key);
    if (!tile) {
      complete = false;
      continue;
    }
    for (const CounterColumn& c : tile->counter)
      if (c.t0 < t1 && c.t1 > t0) out->push_back(c);
  }
  return complete;
}

const EventInfo* RemoteTrace::Event(EventId e) {
  if (!e.valid() || state_ != State::kReady) return nullptr;
  if (auto it = events_.find(e); it != events_.end()) return &it->second;
  if (e.lane >= layout_.lanes.size()) {
    EventInfo& missing = events_[e];
    missing.id = e;
    return &missing;
  }
  if (events_asked_.insert(e).second) Issue({Ask::kEvent, {}, e});
  return nullptr;
}

const std::string& RemoteTrace::EventJsonOf(EventId e) const {
  static const std::string kNone;
  auto it = event_json_.find(e);
  return it == event_json_.end() ? kNone : it->second;
}

std::string RemoteTrace::EventKey(EventId e) const {
  // TraceModel::EventKey's spelling; the index part is not checked here (the layout has no events).
  if (!e.valid() || e.lane >= layout_.lanes.size()) return {};
  const Lane& l = layout_.lanes[e.lane];
  if (l.track >= layout_.tracks.size()) return {};
  return layout_.tracks[l.track].key + "/" + std::to_string(l.depth) + "/" + std::to_string(e.index);
}

EventId RemoteTrace::FindEventByKey(std::string_view key) const {
  const size_t slash2 = key.rfind('/');
  if (slash2 == std::string_view::npos || slash2 == 0) return {};
  const size_t slash1 = key.rfind('/', slash2 - 1);
  if (slash1 == std::string_view::npos) return {};
  auto number = [](std::string_view s, uint32_t* out) {
    if (s.empty() || s.size() > 10) return false;
    uint64_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + uint64_t(c - '0');
    }
    if (v >= kNone) return false;
    *out = uint32_t(v);
    return true;
  };
  uint32_t depth = 0, index = 0;
  if (!number(key.substr(slash1 + 1, slash2 - slash1 - 1), &depth) || !number(key.substr(slash2 + 1), &index))
    return {};
  const TrackId t = layout_.FindTrackByKey(key.substr(0, slash1));
  if (t == kNone || depth >= layout_.tracks[t].lane_count) return {};
  return {layout_.tracks[t].first_lane + depth, index};
}

const std::vector<KernelSummaryRow>* RemoteTrace::Kernels() {
  if (kernels_ready_) return &kernels_;
  if (!kernels_asked_ && state_ == State::kReady) {
    kernels_asked_ = true;
    Issue({Ask::kKernels, {}, {}});
  }
  return nullptr;
}

const PartnerInfo* RemoteTrace::Partner(EventId e) {
  if (!e.valid() || state_ != State::kReady || e.lane >= layout_.lanes.size()) return nullptr;
  if (auto it = partners_.find(e); it != partners_.end()) return &it->second;
  if (partners_asked_.insert(e).second) Issue({.ask = Ask::kFlows, .event = e});
  return nullptr;
}

const std::vector<IdleGap>* RemoteTrace::IdleGaps() {
  if (gaps_ready_) return &gaps_;
  if (!gaps_asked_ && state_ == State::kReady) {
    gaps_asked_ = true;
    Issue({.ask = Ask::kGaps});
  }
  return nullptr;
}

const ProfiledData* RemoteTrace::Profiled() {
  if (profiled_ready_) return &profiled_;
  if (!profiled_asked_ && state_ == State::kReady) {
    profiled_asked_ = true;
    Issue({.ask = Ask::kProfiled});
  }
  return nullptr;
}

const std::vector<NameSummary>* RemoteTrace::Summary(SummaryOf what) {
  const size_t k = static_cast<size_t>(what);
  if (k >= 4) return nullptr;
  if (summary_ready_) return &summary_[k];
  if (!summary_asked_ && state_ == State::kReady) {
    summary_asked_ = true;
    Issue({Ask::kSummary, {}, {}});
  }
  return nullptr;
}

}  // namespace gt::viewer
