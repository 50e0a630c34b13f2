// ModelBuilder::Finish: each track's pieces become lanes (in parallel over tracks, and over the pieces of a
// long track), then track order, counters, flows and the per-device summaries.
//
// [SECTION] Copying events
// [SECTION] Sorting a piece
// [SECTION] Merging a track's pieces, nesting depth
// [SECTION] Lanes
// [SECTION] Track order
// [SECTION] Counters, flows, summaries
// [SECTION] Finish
//
// The lanes are a function of each track's events in arrival order only: ordered by (start, longer first,
// arrival), then one lane when consecutive events do not overlap, else the lowest free depth per event. How
// the events were split into pieces (one per chunk, or one per track) does not change them.
#include <algorithm>
#include <cctype>
#include <numeric>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

#include "builder_internal.h"
#include "gt/trace_data.h"
#include "gt/viewer/collectives.h"
#include "gt/viewer/lod.h"

namespace gt::viewer::detail {

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Copying events
// -----------------------------------------------------------------------------------------------------------------

namespace {

// How a piece's ids become the model's: payloads through its chunk's maps, synthetic names to
// `synthetic_base` + their builder-wide index (kSyntheticBase while loading, the final string ids at Finish).
struct Remap {
  const ChunkMaps* maps = nullptr;
  bool ref = false, name = false;
  StringId synthetic_base = kSyntheticBase;

  Remap(const Piece& p, TrackKind kind, StringId base) : maps(p.maps.get()), synthetic_base(base) {
    if (maps && kind != TrackKind::kThreadApi)  // API rows: ref is the correlation id, never a payload
      for (const auto& m : maps->ref) ref |= !m.empty();
    name = p.synthetic_names && (base != kSyntheticBase || (maps && !maps->synthetic.empty()));
  }
  StringId Name(StringId n) const {
    if (n < kSyntheticBase) return n;
    uint32_t i = n - kSyntheticBase;
    if (maps && !maps->synthetic.empty()) i = maps->synthetic[i];
    return synthetic_base + i;
  }
  uint32_t Ref(uint32_t r) const {
    const auto& map = maps->ref[r >> kRefKindShift];
    return map.empty() ? r : (r & ~kRefPayloadMask) | map[r & kRefPayloadMask];
  }
};

// Events [from, from + count) of `p` to `out` (a Lane or a Piece) at `at`; columns already sized.
template <typename Out>
void CopyEvents(const Piece& p, uint32_t from, uint32_t count, Out& out, uint32_t at, const Remap& rm,
                bool out_aux) {
  std::copy_n(p.start.data() + from, count, out.start.data() + at);
  std::copy_n(p.dur.data() + from, count, out.dur.data() + at);
  if (rm.name) {
    for (uint32_t k = 0; k < count; ++k) out.name[at + k] = rm.Name(p.name[from + k]);
  } else {
    std::copy_n(p.name.data() + from, count, out.name.data() + at);
  }
  if (rm.ref) {
    for (uint32_t k = 0; k < count; ++k) out.ref[at + k] = rm.Ref(p.ref[from + k]);
  } else {
    std::copy_n(p.ref.data() + from, count, out.ref.data() + at);
  }
  if (out_aux) {
    if (p.has_aux)
      std::copy_n(p.aux.data() + from, count, out.aux.data() + at);
    else
      std::fill_n(out.aux.data() + at, count, 0u);
  }
}

// Order summary of q following p's (p non-empty).
void ChainSummary(Piece* p, const Piece& q) {
  p->sorted =
      p->sorted && q.sorted &&
      !(q.first_start < p->last_start || (q.first_start == p->last_start && q.first_end > p->last_end));
  p->disjoint = p->disjoint && q.disjoint && p->last_end <= q.first_start;
  p->corr_sorted = p->corr_sorted && q.corr_sorted && p->last_corr <= q.first_corr;
  p->last_start = q.last_start, p->last_end = q.last_end, p->last_corr = q.last_corr;
}

bool Chains(const Piece& p, const Piece& q) {  // q's first event may follow p's last in a sorted lane
  return !(q.first_start < p.last_start || (q.first_start == p.last_start && q.first_end > p.last_end));
}

}  // namespace

void AppendPiece(const Piece& src, TrackKind kind, Piece* dst) {
  if (src.n == 0) return;
  const Remap rm(src, kind, kSyntheticBase);
  const uint32_t at = dst->n, need = at + src.n;
  if (src.has_aux && !dst->has_aux) {
    dst->has_aux = true;
    dst->aux.resize(dst->start.size());
    std::fill_n(dst->aux.data(), at, 0u);
  }
  if (need > dst->start.size()) dst->Reserve(std::max<uint32_t>(need, uint32_t(dst->start.size() * 3 / 2)));
  CopyEvents(src, 0, src.n, *dst, at, rm, dst->has_aux);
  for (const auto& [i, v] : src.long_dur) dst->long_dur.emplace_back(at + i, v);
  for (const auto& [i, v] : src.ret) dst->ret.emplace_back(at + i, v);
  for (const auto& [i, v] : src.args) dst->args.emplace_back(at + i, v);
  if (at == 0) {
    dst->sorted = src.sorted, dst->disjoint = src.disjoint, dst->corr_sorted = src.corr_sorted;
    dst->first_start = src.first_start, dst->first_end = src.first_end, dst->first_corr = src.first_corr;
    dst->last_start = src.last_start, dst->last_end = src.last_end, dst->last_corr = src.last_corr;
  } else {
    ChainSummary(dst, src);
  }
  dst->synthetic_names |= src.synthetic_names;
  dst->n = need;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Sorting a piece
// -----------------------------------------------------------------------------------------------------------------

namespace {

// Reorders a piece by (start, longer first, arrival), which Push found unsorted (events that nest arrive in
// order of their ends). Records arrive in per-kind batches, so the piece is a few long sorted runs: merge
// them (sequential reads) rather than sort indices (random reads); sort when the runs are many. The columns
// are permuted one at a time through one scratch column per width, swapped in: fresh pages for two columns
// instead of a second piece (page faults are much of a load's cost).
void SortPiece(Piece& p, TrackKind kind) {
  const uint32_t n = p.n;
  auto end_of = [&p](uint32_t i) {
    const uint32_t d = p.dur[i];
    return d != kDurOverflow ? p.start[i] + d : p.End(i);
  };
  auto before = [&](uint32_t a, uint32_t b) {
    if (p.start[a] != p.start[b]) return p.start[a] < p.start[b];
    const int64_t ea = end_of(a), eb = end_of(b);
    if (ea != eb) return ea > eb;
    return a < b;
  };
  std::vector<uint32_t> perm;
  std::vector<uint32_t> run_start{0};
  for (uint32_t i = 1; i < n && run_start.size() <= 256; ++i)
    if (before(i, i - 1)) run_start.push_back(i);
  if (run_start.size() <= 256) {
    run_start.push_back(n);
    perm.reserve(n);
    using Head = std::pair<uint32_t, uint32_t>;  // (next index, run end)
    auto later = [&before](const Head& x, const Head& y) { return before(y.first, x.first); };
    std::priority_queue<Head, std::vector<Head>, decltype(later)> heads(later);
    for (size_t r = 0; r + 1 < run_start.size(); ++r) heads.push({run_start[r], run_start[r + 1]});
    while (!heads.empty()) {
      Head h = heads.top();
      heads.pop();
      const bool alone = heads.empty();  // take from this run while it stays ahead of the next run's head
      do {
        perm.push_back(h.first++);
      } while (h.first < h.second && (alone || before(h.first, heads.top().first)));
      if (h.first < h.second) heads.push(h);
    }
  } else {
    perm.resize(n);
    std::iota(perm.begin(), perm.end(), 0u);
    std::sort(perm.begin(), perm.end(), before);
  }
  // Long durations and sparse lists by old index first (they read the old columns).
  std::vector<std::pair<uint32_t, int64_t>> long_dur;
  for (uint32_t k = 0; k < n; ++k)
    if (p.dur[perm[k]] == kDurOverflow) [[unlikely]]
      long_dur.emplace_back(k, p.End(perm[k]) - p.start[perm[k]]);
  if (!p.ret.empty() || !p.args.empty()) {
    std::vector<uint32_t> new_index(n);
    for (uint32_t k = 0; k < n; ++k) new_index[perm[k]] = k;
    auto by_index = [](const auto& a, const auto& b) { return a.first < b.first; };
    for (auto& [i, v] : p.ret) i = new_index[i];
    for (auto& [i, v] : p.args) i = new_index[i];
    std::sort(p.ret.begin(), p.ret.end(), by_index);
    std::sort(p.args.begin(), p.args.end(), by_index);
  }
  p.long_dur = std::move(long_dur);
  Column<uint32_t> scratch(n);
  auto permute = [&](Column<uint32_t>& c) {
    for (uint32_t k = 0; k < n; ++k) scratch[k] = c[perm[k]];
    c.swap(scratch);
    scratch.resize(n);  // the old column, no shorter than n, is the next scratch
  };
  permute(p.dur), permute(p.name), permute(p.ref);
  if (p.has_aux) permute(p.aux);
  {
    Column<int64_t> start(n);
    for (uint32_t k = 0; k < n; ++k) start[k] = p.start[perm[k]];
    p.start.swap(start);
  }
  scratch = Column<uint32_t>();
  // The order summary in locals: stores to the piece's fields would alias the column stores.
  bool disjoint = true, corr_sorted = true;
  int64_t last_start = 0, last_end = 0;
  uint32_t last_corr = 0;
  size_t ld = 0;
  const uint32_t* corr_col = kind == TrackKind::kThreadApi ? p.ref.data()
                             : p.has_aux                   ? p.aux.data()
                                                           : nullptr;
  for (uint32_t k = 0; k < n; ++k) {
    const int64_t s = p.start[k];
    int64_t e = s + p.dur[k];
    if (p.dur[k] == kDurOverflow) [[unlikely]]
      e = s + p.long_dur[ld++].second;
    const uint32_t corr = corr_col ? corr_col[k] : 0;
    if (k == 0) {
      p.first_start = s, p.first_end = e, p.first_corr = corr;
    } else {
      disjoint &= last_end <= s;
      corr_sorted &= last_corr <= corr;
    }
    last_start = s, last_end = e, last_corr = corr;
  }
  p.sorted = true, p.disjoint = disjoint, p.corr_sorted = corr_sorted;
  p.last_start = last_start, p.last_end = last_end, p.last_corr = last_corr;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Merging a track's pieces, nesting depth
// -----------------------------------------------------------------------------------------------------------------

struct TrackOut {
  std::vector<Lane> lanes;
  int64_t first = INT64_MAX, last = INT64_MIN;
  uint64_t too_deep = 0;
};

void AuxSorted(Lane& l, TrackKind kind) {
  // Correlation ids ascending (GPU lanes: aux; API lanes: ref) lets FlowPartner binary-search.
  const auto& corr = kind == TrackKind::kThreadApi ? l.ref : l.aux;
  l.aux_sorted = std::is_sorted(corr.begin(), corr.end());
}

// Depth lanes from one sorted sequence whose events overlap. Depth: the lowest lane free at the event's start
// (first fit). For properly nested input this is the nesting depth (every ancestor's lane is still busy,
// every deeper lane is free); partially overlapping input packs compactly instead of stacking ever deeper.
// Lanes never overlap by construction.
void Nest(const Lane& seq, TrackKind kind, TrackOut* out) {
  const uint32_t n = seq.size();
  std::vector<int64_t> end(n);
  {
    size_t ld = 0;  // long_dur is sorted by index: walk it alongside
    for (uint32_t i = 0; i < n; ++i) {
      if (seq.dur[i] != kDurOverflow) {
        end[i] = seq.start[i] + seq.dur[i];
      } else {
        while (ld < seq.long_dur.size() && seq.long_dur[ld].first < i) ++ld;
        end[i] =
            seq.start[i] + (ld < seq.long_dur.size() && seq.long_dur[ld].first == i ? seq.long_dur[ld].second
                                                                                    : int64_t{kDurOverflow});
      }
    }
  }
  std::vector<uint32_t> depth(n, 0);
  uint32_t max_depth = 0;
  {
    using Busy = std::pair<int64_t, uint32_t>;  // (end, lane)
    std::priority_queue<Busy, std::vector<Busy>, std::greater<Busy>> busy;
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> free_lanes;
    uint32_t lanes_used = 0;
    for (uint32_t i = 0; i < n; ++i) {
      while (!busy.empty() && busy.top().first <= seq.start[i])
        free_lanes.push(busy.top().second), busy.pop();
      uint32_t d;
      if (!free_lanes.empty()) {
        d = free_lanes.top();
        free_lanes.pop();
      } else if (lanes_used < kMaxDepth) {
        d = lanes_used++;
      } else {
        depth[i] = kNone;
        ++out->too_deep;
        continue;
      }
      depth[i] = d;
      max_depth = std::max(max_depth, d);
      busy.push({end[i], d});
    }
  }
  const uint32_t lanes = max_depth + 1;
  std::vector<uint32_t> counts(lanes, 0);
  for (uint32_t i = 0; i < n; ++i)
    if (depth[i] != kNone) ++counts[depth[i]];
  out->lanes.resize(lanes);
  for (uint32_t d = 0; d < lanes; ++d) {
    Lane& l = out->lanes[d];
    l.depth = d;
    l.start.reserve(counts[d]);
    l.dur.reserve(counts[d]);
    l.name.reserve(counts[d]);
    l.ref.reserve(counts[d]);
    if (!seq.aux.empty()) l.aux.reserve(counts[d]);
  }
  // Sparse attributes follow their event: sequence index -> (lane, index).
  std::vector<uint32_t> new_index(n, kNone);
  out->first = INT64_MAX, out->last = INT64_MIN;
  for (uint32_t i = 0; i < n; ++i) {
    if (depth[i] == kNone) continue;
    Lane& l = out->lanes[depth[i]];
    const uint32_t idx = l.size();
    new_index[i] = idx;
    l.start.push_back(seq.start[i]);
    const int64_t d = end[i] - seq.start[i];
    if (d >= int64_t{kDurOverflow}) {
      l.dur.push_back(kDurOverflow);
      l.long_dur.emplace_back(idx, d);
    } else {
      l.dur.push_back(static_cast<uint32_t>(d));
    }
    l.name.push_back(seq.name[i]);
    l.ref.push_back(seq.ref[i]);
    if (!seq.aux.empty()) l.aux.push_back(seq.aux[i]);
    out->first = std::min(out->first, seq.start[i]);
    out->last = std::max(out->last, end[i]);
  }
  for (const auto& [i, v] : seq.return_code)
    if (depth[i] != kNone) out->lanes[depth[i]].return_code.emplace_back(new_index[i], v);
  for (const auto& [i, v] : seq.args)
    if (depth[i] != kNone) out->lanes[depth[i]].args.emplace_back(new_index[i], v);
  for (Lane& l : out->lanes) AuxSorted(l, kind);
}

// Merges a track's pieces (each sorted) into one sequence ordered by (start, longer first, arrival): pieces
// that follow each other form runs (a stream's kernel chunks), and the runs (kernels, then the copies of the
// same span, ...) are merged taking from one run while it stays ahead of the others. A long track is merged
// in time partitions (events by start; each partition's output range is known from binary searches in the
// runs) that run on several threads. One lane when the merged events do not overlap, depth lanes otherwise.
class TrackMerge {
 public:
  TrackMerge(std::vector<Piece>& pieces, TrackKind kind, StringId synthetic_base)
      : pieces_(pieces), kind_(kind) {
    uint64_t total = 0;
    for (uint32_t i = 0; i < pieces.size(); ++i) {
      total += pieces[i].n;
      has_aux_ |= pieces[i].has_aux;
      if (i == 0 || !Chains(pieces[i - 1], pieces[i]))
        runs_.push_back({i, i + 1});
      else
        runs_.back().end_piece = i + 1;
      remaps_.emplace_back(pieces[i], kind, synthetic_base);
    }
    GT_ASSERT(total < kNone);
    n_ = uint32_t(total);
    seq_.start.resize(n_), seq_.dur.resize(n_), seq_.name.resize(n_), seq_.ref.resize(n_);
    if (has_aux_) seq_.aux.resize(n_);
    // Partition bounds: starts at quantiles of the longest run; every event with a start in [T(j-1), T(j))
    // is in partition j, so partitions concatenate into the whole merge.
    const uint64_t kPartitionEvents = std::max<uint64_t>(1, Tuning::merge_partition_events);
    std::vector<int64_t> bounds;
    if (n_ > kPartitionEvents && runs_.size() > 1) {
      const RunSpan* longest = &runs_[0];
      uint64_t most = 0;
      for (const RunSpan& r : runs_) {
        uint64_t c = 0;
        for (uint32_t i = r.piece; i < r.end_piece; ++i) c += pieces[i].n;
        if (c > most) most = c, longest = &r;
      }
      const uint64_t parts = std::min<uint64_t>(256, n_ / kPartitionEvents + 1);
      for (uint64_t j = 1; j < parts; ++j) {
        uint64_t at = most * j / parts;
        uint32_t i = longest->piece;
        while (at >= pieces[i].n) at -= pieces[i++].n;
        const int64_t t = pieces[i].start[at];
        if (bounds.empty() || t > bounds.back()) bounds.push_back(t);
      }
    }
    parts_.resize(bounds.size() + 1);
    uint32_t offset = 0;
    for (size_t j = 0; j < parts_.size(); ++j) {
      Part& part = parts_[j];
      part.offset = offset;
      for (const RunSpan& r : runs_) {
        const Pos from = j == 0 ? Pos{r.piece, 0} : parts_[j - 1].to[&r - runs_.data()];
        const Pos to = j + 1 < parts_.size() ? Find(r, bounds[j]) : Pos{r.end_piece, 0};
        part.from.push_back(from);
        part.to.push_back(to);
        part.count += Count(from, to);
      }
      offset += part.count;
    }
    GT_ASSERT(offset == n_);
  }

  size_t partitions() const { return parts_.size(); }
  uint64_t partition_size(size_t j) const { return parts_[j].count; }

  void Run(size_t j) {
    Part& part = parts_[j];
    struct Head {
      Pos pos, end;
      int64_t s = 0, e = 0;
    };
    std::vector<Head> heads(runs_.size());
    std::vector<uint32_t> heap;
    auto load = [&](Head& h) {  // h.pos at a valid event: its start and end
      const Piece& p = pieces_[h.pos.piece];
      h.s = p.start[h.pos.at];
      h.e = p.dur[h.pos.at] == kDurOverflow ? p.End(h.pos.at) : h.s + p.dur[h.pos.at];
    };
    auto normalize = [&](Head& h) {  // past the end of a piece: the next one of the run; false when done
      while (h.pos.piece < h.end.piece && h.pos.at >= pieces_[h.pos.piece].n) h.pos = {h.pos.piece + 1, 0};
      return h.pos.piece < h.end.piece || (h.pos.piece == h.end.piece && h.pos.at < h.end.at);
    };
    // x before y: (start, longer first, run); runs are in arrival order.
    auto before = [](int64_t xs, int64_t xe, uint32_t xr, const Head& y, uint32_t yr) {
      if (xs != y.s) return xs < y.s;
      if (xe != y.e) return xe > y.e;
      return xr < yr;
    };
    auto later = [&](uint32_t x, uint32_t y) { return before(heads[y].s, heads[y].e, y, heads[x], x); };
    for (uint32_t r = 0; r < runs_.size(); ++r) {
      heads[r] = {part.from[r], part.to[r]};
      if (!normalize(heads[r])) continue;
      load(heads[r]);
      heap.push_back(r);
    }
    std::make_heap(heap.begin(), heap.end(), later);
    std::vector<uint8_t> started(pieces_.size(), 0);  // this partition's sparse cursors, set on first use
    std::vector<Cursor> cursors(pieces_.size());
    uint32_t o = part.offset;
    int64_t prev_end = INT64_MIN;
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), later);
      const uint32_t ri = heap.back();
      heap.pop_back();
      Head& h = heads[ri];
      const Piece& p = pieces_[h.pos.piece];
      const uint32_t limit = h.pos.piece == h.end.piece ? h.end.at : p.n;
      // The streak: this run's events that come before the best other head.
      const Head* next = heap.empty() ? nullptr : &heads[heap.front()];
      const uint32_t next_index = heap.empty() ? 0 : heap.front();
      const uint32_t from = h.pos.at;
      uint32_t k = from;
      do {
        const int64_t s = p.start[k], e = p.dur[k] == kDurOverflow ? p.End(k) : s + p.dur[k];
        if (k > from && next && !before(s, e, ri, *next, next_index)) break;
        if (o == part.offset) part.first_start = s;
        part.disjoint &= prev_end <= s;
        prev_end = e;
        part.max_end = std::max(part.max_end, e);
        ++k;
      } while (k < limit);
      const uint32_t count = k - from;
      CopyEvents(p, from, count, seq_, o, remaps_[h.pos.piece], has_aux_);
      Cursor& c = cursors[h.pos.piece];
      if (!started[h.pos.piece]) {
        started[h.pos.piece] = 1;
        auto first = [from](const auto& v) {
          return size_t(std::lower_bound(v.begin(), v.end(), from,
                                         [](const auto& x, uint32_t i) { return x.first < i; }) -
                        v.begin());
        };
        c = {first(p.long_dur), first(p.ret), first(p.args)};
      }
      for (; c.ld < p.long_dur.size() && p.long_dur[c.ld].first < k; ++c.ld)
        part.long_dur.emplace_back(o + (p.long_dur[c.ld].first - from), p.long_dur[c.ld].second);
      for (; c.rt < p.ret.size() && p.ret[c.rt].first < k; ++c.rt)
        part.ret.emplace_back(o + (p.ret[c.rt].first - from), p.ret[c.rt].second);
      for (; c.ar < p.args.size() && p.args[c.ar].first < k; ++c.ar)
        part.args.emplace_back(o + (p.args[c.ar].first - from), p.args[c.ar].second);
      o += count;
      h.pos.at = k;
      if (!normalize(h)) continue;
      load(h);
      heap.push_back(ri);
      std::push_heap(heap.begin(), heap.end(), later);
    }
    GT_ASSERT(o == part.offset + part.count);
    part.last_end = prev_end;
  }

  // Joins the partitions (one thread): one lane, or depth lanes when events overlap.
  void Finish(TrackOut* out) {
    bool disjoint = true;
    int64_t prev_end = INT64_MIN;
    for (Part& part : parts_) {
      if (part.count == 0) continue;
      disjoint &= part.disjoint && prev_end <= part.first_start;
      prev_end = part.last_end;
      out->last = std::max(out->last, part.max_end);
      seq_.long_dur.insert(seq_.long_dur.end(), part.long_dur.begin(), part.long_dur.end());
      seq_.return_code.insert(seq_.return_code.end(), part.ret.begin(), part.ret.end());
      seq_.args.insert(seq_.args.end(), part.args.begin(), part.args.end());
    }
    parts_.clear();
    for (Piece& p : pieces_) p.Free();
    out->first = n_ ? seq_.start[0] : INT64_MAX;
    if (disjoint) {
      AuxSorted(seq_, kind_);
      out->lanes.push_back(std::move(seq_));
    } else {
      Nest(seq_, kind_, out);
    }
  }

 private:
  struct RunSpan {
    uint32_t piece, end_piece;  // [piece, end_piece) of the pieces
  };
  struct Pos {
    uint32_t piece = 0, at = 0;  // event `at` of pieces[piece]; {end_piece, 0} = the run's end
  };
  struct Cursor {
    size_t ld = 0, rt = 0, ar = 0;  // next long_dur / ret / args entry
  };
  struct Part {
    std::vector<Pos> from, to;  // per run
    uint32_t offset = 0, count = 0;
    bool disjoint = true;
    int64_t first_start = 0, last_end = INT64_MIN, max_end = INT64_MIN;
    std::vector<std::pair<uint32_t, int64_t>> long_dur;
    std::vector<std::pair<uint32_t, int32_t>> ret;
    std::vector<std::pair<uint32_t, StringId>> args;
  };
  // The first event of run r with start >= t (pieces of a run follow each other, so starts ascend).
  Pos Find(const RunSpan& r, int64_t t) const {
    uint32_t i = r.piece;
    while (i < r.end_piece && pieces_[i].last_start < t) ++i;
    if (i == r.end_piece) return {r.end_piece, 0};
    const Piece& p = pieces_[i];
    return {i, uint32_t(std::lower_bound(p.start.begin(), p.start.begin() + p.n, t) - p.start.begin())};
  }
  uint32_t Count(Pos from, Pos to) const {
    uint64_t c = 0;
    for (uint32_t i = from.piece; i < to.piece; ++i) c += pieces_[i].n;
    return uint32_t(c - from.at + (to.piece < pieces_.size() ? to.at : 0));
  }

  std::vector<Piece>& pieces_;
  TrackKind kind_;
  bool has_aux_ = false;
  uint32_t n_ = 0;
  std::vector<RunSpan> runs_;
  std::vector<Remap> remaps_;
  std::vector<Part> parts_;
  Lane seq_;
};

}  // namespace
}  // namespace gt::viewer::detail

namespace gt::viewer {

using detail::MemoryDelta;
using detail::Piece;
using detail::StageKey;
using detail::ThreadPool;
using detail::TrackOut;

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Lanes
// -----------------------------------------------------------------------------------------------------------------

// Per string id, the first id with the same text; empty when every text has one id (nothing to rename).
static std::vector<StringId> FirstIdOfEachText(const std::vector<std::string>& strings) {
  std::unordered_map<std::string_view, StringId> first;
  first.reserve(strings.size());
  std::vector<StringId> out(strings.size());
  bool renamed = false;
  for (StringId id = 0; id < strings.size(); ++id) {
    const StringId f = first.try_emplace(strings[id], id).first->second;
    out[id] = f;
    renamed |= f != id;
  }
  if (!renamed) out.clear();
  return out;
}

// Tracks' lanes in three parallel passes: pieces that arrived out of order are sorted; each track's pieces
// are concatenated (a task per piece, into a lane sized once) or merged (a task per track); then every lane
// gets its LOD pyramid and name counts (tasks over ranges of long lanes). Tasks run largest first.
void ModelBuilder::Impl::BuildLanes(ThreadPool& pool, const std::vector<uint32_t>& order) {
  TraceModel& M = *m;
  const StringId base = synthetic_final_base_;
  auto lanes_time = std::make_unique<detail::ScopedTime>(timings ? &timings->lanes : nullptr);
  {
    std::vector<std::pair<uint32_t, uint32_t>> unsorted;  // (stage, piece)
    for (uint32_t si : order)
      for (uint32_t p = 0; p < stages[si].pieces.size(); ++p)
        if (!stages[si].pieces[p].sorted) unsorted.push_back({si, p});
    pool.For(unsorted.size(), [&](size_t i, unsigned) {
      auto [si, p] = unsorted[i];
      detail::SortPiece(stages[si].pieces[p], stages[si].key.kind);
    });
  }

  struct Job {
    uint32_t stage = 0;
    TrackOut out;
    std::unique_ptr<detail::TrackMerge> merge;  // when the pieces need merging
    std::vector<uint32_t> at;                   // concatenation: each piece's first index in the lane
    std::vector<size_t> ld_at, rt_at, ar_at;    // ... and in its sparse lists
  };
  struct Task {
    uint32_t job, piece;  // a piece to copy, a partition to merge, or kNone: the one piece moved
    uint64_t size;
  };
  std::vector<Job> jobs(order.size());
  std::vector<Task> tasks;
  for (uint32_t j = 0; j < order.size(); ++j) {
    Job& job = jobs[j];
    job.stage = order[j];
    std::vector<Piece>& pieces = stages[job.stage].pieces;
    uint64_t n = 0;
    bool concat = true, has_aux = false, corr_sorted = true;
    for (size_t i = 0; i < pieces.size(); ++i) {
      const Piece& p = pieces[i];
      n += p.n;
      has_aux |= p.has_aux;
      concat &= p.sorted && p.disjoint;
      corr_sorted &= p.corr_sorted;
      if (i > 0) {
        const Piece& q = pieces[i - 1];
        concat &= detail::Chains(q, p) && q.last_end <= p.first_start;
        corr_sorted &= q.last_corr <= p.first_corr;
      }
    }
    if (n == 0) continue;
    GT_ASSERT(n < kNone);
    if (concat && pieces.size() == 1) {
      tasks.push_back({j, kNone, n});
      continue;
    }
    if (!concat) {
      job.merge = std::make_unique<detail::TrackMerge>(pieces, stages[job.stage].key.kind, base);
      for (uint32_t part = 0; part < job.merge->partitions(); ++part)
        tasks.push_back({j, part, job.merge->partition_size(part)});
      continue;
    }
    // Concatenation: the lane is sized here, the pieces copy themselves into it in parallel.
    Lane& lane = job.out.lanes.emplace_back();
    lane.start.resize(n), lane.dur.resize(n), lane.name.resize(n), lane.ref.resize(n);
    if (has_aux) lane.aux.resize(n);
    lane.aux_sorted = corr_sorted;
    size_t ld = 0, rt = 0, ar = 0;
    uint32_t at = 0;
    for (uint32_t i = 0; i < pieces.size(); ++i) {
      job.at.push_back(at), job.ld_at.push_back(ld), job.rt_at.push_back(rt), job.ar_at.push_back(ar);
      at += pieces[i].n, ld += pieces[i].long_dur.size(), rt += pieces[i].ret.size(),
          ar += pieces[i].args.size();
      tasks.push_back({j, i, pieces[i].n});
    }
    lane.long_dur.resize(ld), lane.return_code.resize(rt), lane.args.resize(ar);
    job.out.first = pieces.front().first_start;
    job.out.last = pieces.back().last_end;
  }
  std::stable_sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) { return a.size > b.size; });
  pool.For(tasks.size(), [&](size_t t, unsigned) {
    Job& job = jobs[tasks[t].job];
    const TrackKind kind = stages[job.stage].key.kind;
    std::vector<Piece>& pieces = stages[job.stage].pieces;
    if (job.merge) return job.merge->Run(tasks[t].piece);
    if (tasks[t].piece != kNone) {
      const uint32_t i = tasks[t].piece;
      Piece& p = pieces[i];
      Lane& lane = job.out.lanes[0];
      const uint32_t at = job.at[i];
      detail::CopyEvents(p, 0, p.n, lane, at, detail::Remap(p, kind, base), !lane.aux.empty());
      for (size_t k = 0; k < p.long_dur.size(); ++k)
        lane.long_dur[job.ld_at[i] + k] = {at + p.long_dur[k].first, p.long_dur[k].second};
      for (size_t k = 0; k < p.ret.size(); ++k)
        lane.return_code[job.rt_at[i] + k] = {at + p.ret[k].first, p.ret[k].second};
      for (size_t k = 0; k < p.args.size(); ++k)
        lane.args[job.ar_at[i] + k] = {at + p.args[k].first, p.args[k].second};
      p.Free();
      return;
    }
    {
      // One piece in order (a track fed directly, or consolidated): its columns become the lane.
      Piece& p = pieces[0];
      const detail::Remap rm(p, kind, base);
      if (rm.name)
        for (uint32_t k = 0; k < p.n; ++k) p.name[k] = rm.Name(p.name[k]);
      if (rm.ref)
        for (uint32_t k = 0; k < p.n; ++k) p.ref[k] = rm.Ref(p.ref[k]);
      Lane& lane = job.out.lanes.emplace_back();
      // Pieces grew by doubling: give the slack back, the model lives as long as the view.
      auto take = [n = p.n](auto& from, auto& to) {
        from.resize(n);
        from.shrink_to_fit();
        to = std::move(from);
      };
      take(p.start, lane.start), take(p.dur, lane.dur), take(p.name, lane.name), take(p.ref, lane.ref);
      if (p.has_aux) take(p.aux, lane.aux);
      lane.long_dur = std::move(p.long_dur), lane.return_code = std::move(p.ret),
      lane.args = std::move(p.args);
      lane.aux_sorted = p.corr_sorted;
      job.out.first = p.first_start;
      job.out.last = p.last_end;
      p.Free();
    }
  });
  std::vector<uint32_t> merged;
  for (uint32_t j = 0; j < jobs.size(); ++j)
    if (jobs[j].merge) merged.push_back(j);
  pool.For(merged.size(), [&](size_t i, unsigned) {
    Job& job = jobs[merged[i]];
    job.merge->Finish(&job.out);
    job.merge.reset();
  });

  lanes_time.reset();
  detail::ScopedTime lod_time(timings ? &timings->lod : nullptr);
  // LOD pyramids and name counts, over ranges of at most kRange events.
  constexpr uint32_t F = kLaneLodFanout, kRange = 1u << 16;
  struct LaneRef {
    uint32_t job, lane;
  };
  struct Range {
    uint32_t lane;  // into `all`
    uint32_t first, last;
  };
  std::vector<LaneRef> all;
  std::vector<Range> ranges;
  for (uint32_t j = 0; j < jobs.size(); ++j)
    for (uint32_t d = 0; d < jobs[j].out.lanes.size(); ++d) {
      const uint32_t n = jobs[j].out.lanes[d].size(), li = uint32_t(all.size());
      all.push_back({j, d});
      for (uint32_t a = 0; a < n; a += kRange) ranges.push_back({li, a, std::min(n, a + kRange)});
    }
  std::vector<Column<LodMax>> level0(all.size());
  for (size_t li = 0; li < all.size(); ++li) {
    const uint32_t n = jobs[all[li].job].out.lanes[all[li].lane].size();
    if (n > F) level0[li].resize((n + F - 1) / F);
  }
  const size_t nstrings = M.strings.size();
  // A trace of several processes (one gcollect around torchrun) holds each process segment's string table, so
  // one name has an id per process. Events are named by the first id of their text here, so that what is
  // keyed by a lane's name (name counts, the kernel table, exact highlights, per-name summaries) sees one
  // name.
  const std::vector<StringId> first_of_text =
      record_strings_ && M.processes.size() > 1 ? FirstIdOfEachText(M.strings) : std::vector<StringId>{};
  std::vector<std::vector<uint32_t>> hist(pool.size());
  pool.For(ranges.size(), [&](size_t r, unsigned slot) {
    const Range& g = ranges[r];
    Lane& lane = jobs[all[g.lane].job].out.lanes[all[g.lane].lane];
    if (!first_of_text.empty())
      for (uint32_t i = g.first; i < g.last; ++i)
        if (lane.name[i] < nstrings) lane.name[i] = first_of_text[lane.name[i]];
    if (!level0[g.lane].empty())
      detail::BuildLaneLodLevel0(lane, &level0[g.lane], g.first / F, (g.last + F - 1) / F);
    std::vector<uint32_t>& h = hist[slot];
    if (h.empty()) h.assign(nstrings, 0);
    for (uint32_t i = g.first; i < g.last; ++i) {
      const StringId n = lane.name[i];
      if (n < nstrings) ++h[n];
    }
  });
  pool.For(all.size(), [&](size_t li, unsigned) {
    Lane& lane = jobs[all[li].job].out.lanes[all[li].lane];
    if (!level0[li].empty()) detail::BuildLaneLodUpper(lane, std::move(level0[li]));
  });
  M.name_counts.assign(nstrings, 0);
  for (const auto& h : hist)
    for (size_t i = 0; i < h.size(); ++i) M.name_counts[i] += h[i];

  // Counter records arrive in chunks, appended with doubling growth: hold what the trace has, not up to twice
  // that (and the same for any number of load threads).
  M.kernel_metrics.shrink_to_fit();
  M.stall_samples.shrink_to_fit();

  // Lanes in track order (tracks of stages are the first ones, in `order`).
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    Track& t = M.tracks[j];
    TrackOut& out = jobs[j].out;
    t.first_lane = static_cast<LaneId>(M.lanes.size());
    t.lane_count = uint32_t(out.lanes.size());
    uint64_t count = 0;
    for (uint32_t d = 0; d < out.lanes.size(); ++d) {
      Lane& l = out.lanes[d];
      l.track = j;
      l.depth = d;
      l.long_dur.shrink_to_fit(), l.return_code.shrink_to_fit(), l.args.shrink_to_fit();
      count += l.size();
      M.lanes.push_back(std::move(l));
    }
    t.event_count = count;
    t.first_ns = out.first == INT64_MAX || count == 0 ? 0 : out.first;
    t.last_ns = out.last == INT64_MIN || count == 0 ? 0 : out.last;
    too_deep += out.too_deep;
  }
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Track order
// -----------------------------------------------------------------------------------------------------------------

// An id as its trace wrote it: JSON traces may give -1, which is stored as 4294967295 (no OS has such pids).
static std::string IdText(uint32_t id) {
  return id >= 0x80000000u ? std::to_string(int32_t(id)) : std::to_string(id);
}
// Whether `text` holds the number `id` on its own (no digit either side): Kineto names threads "thread 410
// (python3)", which needs no " (410)" after it.
static bool HasNumber(const std::string& text, const std::string& id) {
  for (size_t at = text.find(id); at != std::string::npos; at = text.find(id, at + 1)) {
    const bool digit_before = at > 0 && std::isdigit(static_cast<unsigned char>(text[at - 1]));
    const size_t end = at + id.size();
    const bool digit_after = end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]));
    if (!digit_before && !digit_after) return true;
  }
  return false;
}
static std::string ThreadLabel(const std::string& name, uint32_t tid) {
  if (name.empty()) return "Thread " + IdText(tid);
  const std::string id = IdText(tid);
  if (tid >= ModelBuilder::kImporterIdBase || HasNumber(name, id)) return name;
  return name + " (" + id + ")";
}
void ModelBuilder::Impl::BuildTracks(ThreadPool& pool) {
  TraceModel& M = *m;
  // Names from records, then importer metadata (which wins: it is what the user's tool showed).
  std::map<uint32_t, std::string> pname;
  for (const auto& p : M.processes)
    if (p.name != 0) pname[p.pid] = M.Str(p.name);
  for (const auto& [pid, n] : process_names) pname[pid] = n;
  std::map<std::pair<uint32_t, uint32_t>, std::string> tname;
  for (const auto& t : M.threads)
    if (t.name != 0) tname[{t.pid, t.tid}] = M.Str(t.name);
  for (const auto& [k, n] : thread_names) tname[k] = n;
  std::map<uint32_t, std::string> dname;
  for (const auto& d : M.devices)
    if (d.name != 0 && !dname.count(d.device_id)) dname[d.device_id] = M.Str(d.name);
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, const StreamRecord*> srec;
  for (const auto& s : M.streams) srec[{s.pid, s.device_id, s.context_id, s.stream_id}] = &s;

  // Distributed jobs: processes ordered host -> rank (a merged trace's hosts in merge order), labeled with
  // their rank, and with their host once there is more than one; a GPU is labeled with its host.
  std::map<std::string, int64_t> host_index;
  std::map<uint32_t, std::string> phost;
  std::map<uint32_t, int32_t> prank;
  for (const auto& p : M.processes) {
    const std::string host = M.Str(p.host);
    if (!host.empty()) {
      host_index.try_emplace(host, int64_t(host_index.size()));
      phost[p.pid] = host;
    }
    if (p.rank >= 0) prank[p.pid] = p.rank;
  }
  const bool multi_host = host_index.size() > 1;
  for (const auto& [pid, host] : phost)
    if (!process_sort.count(pid))
      process_sort[pid] = (host_index[host] << 32) + (prank.count(pid) ? prank[pid] + 1 : 0);
  for (const auto& [pid, rank] : prank)
    if (!process_sort.count(pid)) process_sort[pid] = rank + 1;

  // Sort order: host processes (sort index, pid) -> threads (sort index, main thread first, tid) -> ranges,
  // API, sync; then GPUs (device) -> streams (pid, context, stream) each followed by its annotations;
  // counters last.
  struct Order {
    int section;  // 0 host, 1 gpu, 2 counters
    int64_t s0;
    uint32_t g, s1;
    int64_t s2;
    uint32_t s3, s4, s5;
    int sub;
    auto tie() const { return std::tie(section, s0, g, s1, s2, s3, s4, s5, sub); }
  };
  std::vector<std::pair<Order, uint32_t>> order;
  std::map<uint32_t, std::set<uint32_t>> pids_per_device;
  for (const auto& s : stages)
    if (s.key.kind == TrackKind::kGpuStream || s.key.kind == TrackKind::kGpuAnnotations)
      pids_per_device[s.key.a].insert(s.key.pid);
  std::map<uint32_t, std::string> dhost;  // device -> host of the processes that put work on it
  for (const auto& [dev, pids] : pids_per_device)
    for (uint32_t pid : pids)
      if (multi_host && phost.count(pid)) dhost.try_emplace(dev, phost[pid]);
  for (uint32_t i = 0; i < stages.size(); ++i) {
    const StageKey& k = stages[i].key;
    Order o{};
    switch (k.kind) {
      case TrackKind::kThreadRanges:
      case TrackKind::kThreadApi:
      case TrackKind::kThreadSync: {
        auto ps = process_sort.find(k.pid);
        auto ts = thread_sort.find({k.pid, k.a});
        int sub = k.kind == TrackKind::kThreadRanges ? 0 : k.kind == TrackKind::kThreadApi ? 1 : 2;
        o = {0,
             ps != process_sort.end() ? ps->second : 0,
             k.pid,
             0,
             ts != thread_sort.end() ? ts->second : 0,
             k.a == k.pid ? 0u : 1u,
             k.a,
             0,
             sub};
        break;
      }
      case TrackKind::kGpuStream:
      case TrackKind::kGpuAnnotations:
        o = {1, 0, k.a, 0, 0, k.pid, k.b, k.c, k.kind == TrackKind::kGpuStream ? 0 : 1};
        break;
      case TrackKind::kCounter:
        break;
    }
    order.push_back({o, i});
  }
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    if (x.first.tie() != y.first.tie()) return x.first.tie() < y.first.tie();
    return x.second < y.second;
  });

  std::map<std::string, GroupId> group_by_key;
  auto group = [&](GroupKind kind, const std::string& key, const std::string& name, uint32_t pid,
                   uint32_t dev) -> GroupId {
    auto [it, inserted] = group_by_key.try_emplace(key, static_cast<GroupId>(M.groups.size()));
    if (inserted) {
      TrackGroup g;
      g.kind = kind;
      g.key = key;
      g.name = name;
      g.pid = pid;
      g.device_id = dev;
      M.groups.push_back(std::move(g));
    }
    return it->second;
  };
  auto process_group = [&](uint32_t pid) {
    auto it = pname.find(pid);
    std::string name = it == pname.end() || it->second.empty() ? "Process " + IdText(pid)
                       : pid >= ModelBuilder::kImporterIdBase  ? it->second
                                                               : it->second + " (pid " + IdText(pid) + ")";
    if (auto r = prank.find(pid); r != prank.end()) name += " · rank " + std::to_string(r->second);
    if (auto h = phost.find(pid); multi_host && h != phost.end()) name += " · " + h->second;
    return group(GroupKind::kProcess, "p" + std::to_string(pid), name, pid, kNone);
  };
  auto gpu_group = [&](uint32_t dev) {
    auto it = dname.find(dev);
    std::string name = "GPU " + std::to_string(dev) + (it != dname.end() ? ": " + it->second : "");
    if (auto h = dhost.find(dev); h != dhost.end()) name += " · " + h->second;
    return group(GroupKind::kGpu, "g" + std::to_string(dev), name, 0, dev);
  };

  for (const auto& [o, si] : order) {
    const detail::Stage& s = stages[si];
    const StageKey& k = s.key;
    Track t;
    t.kind = k.kind;
    t.pid = k.pid;
    if (k.kind == TrackKind::kGpuStream || k.kind == TrackKind::kGpuAnnotations) {
      t.device_id = k.a;
      t.context_id = k.b;
      t.stream_id = k.c;
      t.group = gpu_group(k.a);
      std::string sname = "Stream " + std::to_string(k.c);
      auto sr = srec.find({k.pid, k.a, k.b, k.c});
      if (sr != srec.end()) {
        if (sr->second->is_default) sname += " (default)";
        if (sr->second->name != 0) sname += " " + M.Str(sr->second->name);
      }
      if (pids_per_device[k.a].size() > 1) sname += " · pid " + std::to_string(k.pid);
      if (k.kind == TrackKind::kGpuAnnotations) sname += " · annotations";
      t.name = sname;
      t.key = "g" + std::to_string(k.a) + "/p" + std::to_string(k.pid) + "/c" + std::to_string(k.b) + "/s" +
              std::to_string(k.c) + (k.kind == TrackKind::kGpuAnnotations ? "/ann" : "");
    } else {
      t.tid = k.a;
      t.group = process_group(k.pid);
      auto tn = tname.find({k.pid, k.a});
      std::string label = ThreadLabel(tn != tname.end() ? tn->second : std::string(), k.a);
      const char* what = k.kind == TrackKind::kThreadApi    ? "CUDA API"
                         : k.kind == TrackKind::kThreadSync ? "Sync & overhead"
                                                            : "Ranges";
      t.name = label + " · " + what;
      t.key = "p" + std::to_string(k.pid) + "/t" + std::to_string(k.a) + "/" +
              (k.kind == TrackKind::kThreadApi    ? "api"
               : k.kind == TrackKind::kThreadSync ? "sync"
                                                  : "ranges");
      t.default_collapsed = k.kind == TrackKind::kThreadSync;
    }
    TrackId id = static_cast<TrackId>(M.tracks.size());
    M.groups[t.group].tracks.push_back(id);
    track_lookup[{int(k.kind), k.pid, k.a, k.b, k.c}] = id;
    M.tracks.push_back(std::move(t));
  }

  std::vector<uint32_t> stage_order;
  for (const auto& [o, si] : order) stage_order.push_back(si);
  BuildLanes(pool, stage_order);

  // Counters: device-bound ones join their GPU group, process-bound ones their process, the rest "Counters".
  std::vector<uint32_t> corder(M.counters.size());
  std::iota(corder.begin(), corder.end(), 0u);
  std::stable_sort(corder.begin(), corder.end(), [&](uint32_t x, uint32_t y) {
    const CounterTrack &a = M.counters[x], &b = M.counters[y];
    auto ka = std::make_tuple(a.device_id != kNone ? 0 : a.pid != 0 ? 1 : 2, a.device_id, a.pid, a.source_id);
    auto kb = std::make_tuple(b.device_id != kNone ? 0 : b.pid != 0 ? 1 : 2, b.device_id, b.pid, b.source_id);
    return ka < kb;
  });
  for (uint32_t ci : corder) {
    CounterTrack& c = M.counters[ci];
    Track t;
    t.kind = TrackKind::kCounter;
    t.pid = c.pid;
    t.device_id = c.device_id;
    t.counter = ci;
    if (c.device_id != kNone)
      t.group = gpu_group(c.device_id);
    else if (c.pid != 0)
      t.group = process_group(c.pid);
    else
      t.group = group(GroupKind::kCounters, "c", "Counters", 0, kNone);
    t.name = S(c.name);
    if (t.name.empty()) t.name = "Counter " + std::to_string(c.source_id);
    if (c.unit != 0 && !S(c.unit).empty()) t.name += " (" + S(c.unit) + ")";
    t.key = ci < is_memory_counter.size() && is_memory_counter[ci]
                ? "m/p" + std::to_string(c.pid) + "/g" + std::to_string(c.device_id)
                : "c/" + std::to_string(c.source_id);
    t.event_count = 0;
    if (!c.time.empty()) {
      t.first_ns = c.time.front();
      t.last_ns = c.time.back();
    }
    c.track = static_cast<TrackId>(M.tracks.size());
    M.groups[t.group].tracks.push_back(c.track);
    M.tracks.push_back(std::move(t));
  }
  // Groups in display order: processes, GPUs, counters (creation order above follows the track order, except
  // for groups first created by counters).
  std::vector<GroupId> gorder(M.groups.size());
  std::iota(gorder.begin(), gorder.end(), 0u);
  std::stable_sort(gorder.begin(), gorder.end(), [&](GroupId x, GroupId y) {
    const TrackGroup &a = M.groups[x], &b = M.groups[y];
    auto ka = std::make_tuple(int(a.kind), a.kind == GroupKind::kProcess ? SortIndex(a.pid) : 0, a.pid,
                              a.device_id);
    auto kb = std::make_tuple(int(b.kind), b.kind == GroupKind::kProcess ? SortIndex(b.pid) : 0, b.pid,
                              b.device_id);
    return ka < kb;
  });
  std::vector<GroupId> remap(M.groups.size());
  std::vector<TrackGroup> sorted;
  for (GroupId i = 0; i < gorder.size(); ++i) {
    remap[gorder[i]] = i;
    sorted.push_back(std::move(M.groups[gorder[i]]));
  }
  M.groups = std::move(sorted);
  for (auto& t : M.tracks) t.group = remap[t.group];
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Counters, flows, summaries
// -----------------------------------------------------------------------------------------------------------------

// Alloc/free records become a "Device memory" counter per (process, device): the running sum of live bytes.
void ModelBuilder::Impl::BuildMemoryCounters() {
  for (auto& [key, deltas] : memory) {
    std::stable_sort(deltas.begin(), deltas.end(),
                     [](const MemoryDelta& a, const MemoryDelta& b) { return a.t < b.t; });
    CounterTrack c;
    c.pid = key.first;
    c.device_id = key.second;
    c.name = tables.Synthetic(m->processes.size() > 1 || memory.size() > 1
                                  ? "Device memory · pid " + std::to_string(key.first)
                                  : std::string("Device memory"));
    c.unit = tables.Synthetic("bytes");
    int64_t live = 0;
    for (const auto& d : deltas) {
      live += d.delta;
      if (!c.time.empty() && c.time.back() == d.t) {
        c.value.back() = double(live);
      } else {
        c.time.push_back(d.t);
        c.value.push_back(double(live));
      }
    }
    is_memory_counter.resize(m->counters.size() + 1, false);
    is_memory_counter[m->counters.size()] = true;
    m->counters.push_back(std::move(c));
  }
  memory.clear();
}

static void BuildPyramid(CounterTrack& c) {
  // Samples arrive in time order per counter almost always; sort (stably, keeping the last value of a tie
  // last) only when they don't.
  if (!std::is_sorted(c.time.begin(), c.time.end())) {
    std::vector<uint32_t> perm(c.time.size());
    std::iota(perm.begin(), perm.end(), 0u);
    std::stable_sort(perm.begin(), perm.end(), [&](uint32_t a, uint32_t b) { return c.time[a] < c.time[b]; });
    std::vector<int64_t> t(perm.size());
    std::vector<double> v(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) t[i] = c.time[perm[i]], v[i] = c.value[perm[i]];
    c.time = std::move(t);
    c.value = std::move(v);
  }
  c.levels.clear();
  if (c.value.empty()) return;
  c.min = c.max = c.value[0];
  for (double v : c.value) c.min = std::min(c.min, v), c.max = std::max(c.max, v);
  std::vector<std::pair<double, double>> level;
  const size_t n = c.value.size();
  for (size_t j = 0; j < n; j += kCounterFanout) {
    double lo = c.value[j], hi = c.value[j];
    for (size_t i = j; i < std::min(n, j + kCounterFanout); ++i)
      lo = std::min(lo, c.value[i]), hi = std::max(hi, c.value[i]);
    level.emplace_back(lo, hi);
  }
  while (level.size() > 1) {
    std::vector<std::pair<double, double>> up;
    for (size_t j = 0; j < level.size(); j += kCounterFanout) {
      auto mm = level[j];
      for (size_t i = j; i < std::min(level.size(), j + kCounterFanout); ++i)
        mm.first = std::min(mm.first, level[i].first), mm.second = std::max(mm.second, level[i].second);
      up.push_back(mm);
    }
    c.levels.push_back(std::move(level));
    level = std::move(up);
  }
  c.levels.push_back(std::move(level));
}

TrackId ModelBuilder::Impl::FindTrack(TrackKind kind, uint32_t pid, uint32_t a, uint32_t b,
                                      uint32_t c) const {
  auto it = track_lookup.find({int(kind), pid, a, b, c});
  return it == track_lookup.end() ? kNone : it->second;
}

// The deepest event of track t that contains ts (start <= ts <= end).
EventId ModelBuilder::Impl::EnclosingEvent(TrackId t, Timestamp ts) const {
  if (t == kNone) return {};
  const Track& tr = m->tracks[t];
  EventId best;
  for (uint32_t d = 0; d < tr.lane_count; ++d) {
    const Lane& l = m->lanes[tr.first_lane + d];
    auto it = std::upper_bound(l.start.begin(), l.start.end(), ts);
    if (it == l.start.begin()) continue;
    uint32_t i = static_cast<uint32_t>(it - l.start.begin() - 1);
    if (l.End(i) >= ts) best = {tr.first_lane + d, i};
  }
  return best;
}

void ModelBuilder::Impl::ResolveFlows() {
  TraceModel& M = *m;
  uint64_t unresolved = 0;
  for (const auto& f : flow_endpoints) {
    EventId from =
        EnclosingEvent(FindTrack(TrackKind::kThreadRanges, f.from_pid, f.from_tid, 0, 0), f.from_ts);
    if (!from.valid())
      from = EnclosingEvent(FindTrack(TrackKind::kThreadApi, f.from_pid, f.from_tid, 0, 0), f.from_ts);
    EventId to;
    if (f.to_gpu) {
      for (const auto& [key, id] : track_lookup)
        if (std::get<0>(key) == int(TrackKind::kGpuStream) && std::get<1>(key) == f.to_pid &&
            std::get<2>(key) == f.to_device && std::get<4>(key) == f.to_tid) {
          to = EnclosingEvent(id, f.to_ts);
          if (to.valid()) break;
        }
    } else {
      to = EnclosingEvent(FindTrack(TrackKind::kThreadRanges, f.to_pid, f.to_tid, 0, 0), f.to_ts);
      if (!to.valid())
        to = EnclosingEvent(FindTrack(TrackKind::kThreadApi, f.to_pid, f.to_tid, 0, 0), f.to_ts);
    }
    if (from.valid() && to.valid())
      M.flows.push_back({from, to});
    else
      ++unresolved;
  }
  flow_endpoints.clear();
  // FlowRecords between correlation-carrying kinds are implied by correlation ids (FlowPartner); others refer
  // to external ids the viewer does not index yet: counted, not silently dropped.
  for (const auto& f : flow_records) {
    auto corr_kind = [](uint16_t k) {
      return k == uint16_t(RecordKind::kApiCall) || k == uint16_t(RecordKind::kKernel) ||
             k == uint16_t(RecordKind::kMemcpy) || k == uint16_t(RecordKind::kMemset);
    };
    if (!(corr_kind(f.src_kind) && corr_kind(f.dst_kind))) ++unresolved;
  }
  flow_records.clear();
  // One NCCL collective on every rank: arrows from the rank that arrived last to each of the others, so
  // selecting a rank's collective shows whom it waited for.
  // Payload fields in key order (pid, tid, range start, then arrival), so a range finds its own by search.
  std::stable_sort(M.nvtx_args.begin(), M.nvtx_args.end(),
                   [](const NvtxArgRecord& a, const NvtxArgRecord& b) {
                     return std::tie(a.pid, a.tid, a.start) < std::tie(b.pid, b.tid, b.start);
                   });
  M.nvtx_args.shrink_to_fit();
  std::stable_sort(M.nccl_colls.begin(), M.nccl_colls.end(),
                   [](const NcclCollRecord& a, const NcclCollRecord& b) {
                     return std::tie(a.pid, a.start) < std::tie(b.pid, b.start);
                   });
  std::stable_sort(M.nccl_channels.begin(), M.nccl_channels.end(),
                   [](const NcclChannelRecord& a, const NcclChannelRecord& b) {
                     return std::tie(a.pid, a.comm_hash, a.func, a.seq, a.channel) <
                            std::tie(b.pid, b.comm_hash, b.func, b.seq, b.channel);
                   });
  M.nccl_colls.shrink_to_fit();
  M.nccl_channels.shrink_to_fit();
  auto collectives = std::make_shared<CollectiveReport>(AnalyzeCollectives(M));
  for (const Collective& c : collectives->collectives)
    for (size_t i = 0; i < c.ranks.size(); ++i)
      if (i != c.last) M.flows.push_back({c.ranks[c.last].kernel, c.ranks[i].kernel});
  if (!collectives->collectives.empty()) M.collectives = std::move(collectives);
  std::sort(M.flows.begin(), M.flows.end(),
            [](const Flow& a, const Flow& b) { return std::tie(a.from, a.to) < std::tie(b.from, b.to); });
  if (unresolved)
    builder_losses["flows_unresolved"] = {"flows_unresolved", uint8_t(Severity::kInfo), 0, unresolved,
                                          "flow arrows whose endpoints match no event"};
}

// Per device: the union of GPU activity over its stream lanes and the gaps between, in time slices of about
// Tuning::device_slice_events events that run in parallel. A slice starts from the latest end of all earlier
// events (lanes are sorted and disjoint, so that is one End() per lane): busy time is what its events cover
// beyond that, and a gap opens only after it. Slices are a function of the data, not of the threads.
namespace {

constexpr size_t kMaxGaps = 256;
using Gap = std::pair<int64_t, int64_t>;  // (length, start)
// Longer first; of equal ones, the earlier.
bool BetterGap(const Gap& a, const Gap& b) {
  return a.first > b.first || (a.first == b.first && a.second < b.second);
}
struct GapCmp {
  bool operator()(const Gap& a, const Gap& b) const { return BetterGap(a, b); }
};
// The kMaxGaps best gaps seen (worst on top).
struct TopGaps {
  std::priority_queue<Gap, std::vector<Gap>, GapCmp> heap;
  void Add(const Gap& g) {
    if (heap.size() < kMaxGaps) {
      heap.push(g);
    } else if (BetterGap(g, heap.top())) {
      heap.pop();
      heap.push(g);
    }
  }
};

struct DeviceSlice {
  uint32_t device = 0;             // into the device list
  std::vector<uint32_t> from, to;  // per lane: events [from, to) start in this slice
  int64_t carry = INT64_MIN;       // latest end of the device's events before the slice (INT64_MIN: none)
  // results
  bool any = false;
  int64_t first = 0, busy = 0, end = INT64_MIN;
  uint64_t kernels = 0, memcpys = 0, memsets = 0;
  TopGaps gaps;
};

void RunSlice(const TraceModel& M, const std::vector<LaneId>& lanes, DeviceSlice& s) {
  std::vector<uint32_t> pos = s.from;
  std::vector<int64_t> head(lanes.size(), INT64_MAX);
  for (uint32_t i = 0; i < lanes.size(); ++i)
    if (pos[i] < s.to[i]) head[i] = M.lanes[lanes[i]].start[pos[i]];
  const bool carried = s.carry != INT64_MIN;
  bool open = carried;  // an interval is open: [cur_s, cur_e]
  int64_t cur_s = s.carry, cur_e = s.carry;
  while (true) {
    // K-way merge by start: streams take turns every few events, so one scan finds the smallest head and the
    // second-smallest (no heap churn per event); consume lane li up to the latter.
    uint32_t li = 0;
    int64_t limit = INT64_MAX;
    for (uint32_t i = 1; i < head.size(); ++i) {
      if (head[i] < head[li]) {
        limit = head[li];
        li = i;
      } else {
        limit = std::min(limit, head[i]);
      }
    }
    if (head[li] == INT64_MAX) break;
    const Lane& l = M.lanes[lanes[li]];
    uint32_t& p = pos[li];
    do {
      const uint32_t k = l.ref[p] >> kRefKindShift;
      s.kernels += k == uint32_t(EventKind::kKernel);
      s.memcpys += k == uint32_t(EventKind::kMemcpy);
      s.memsets += k == uint32_t(EventKind::kMemset);
      const uint32_t dd = l.dur[p];
      const int64_t es = l.start[p], ee = dd != kDurOverflow ? SatAdd(es, int64_t{dd}) : l.End(p);
      if (!s.any) s.any = true, s.first = es;
      if (!open) {
        open = true;
        cur_s = es, cur_e = ee;
      } else if (es > cur_e) {
        s.busy = SatAdd(s.busy, SatSub(cur_e, cur_s));  // imported times may reach the int64 limits
        s.gaps.Add({SatSub(es, cur_e), cur_e});
        cur_s = es, cur_e = ee;
      } else {
        cur_e = std::max(cur_e, ee);
      }
      ++p;
    } while (p < s.to[li] && l.start[p] <= limit);
    head[li] = p < s.to[li] ? l.start[p] : INT64_MAX;
  }
  if (open) s.busy = SatAdd(s.busy, SatSub(cur_e, cur_s));
  s.end = open ? cur_e : s.carry;
}

}  // namespace

void ModelBuilder::Impl::Summarize(ThreadPool& pool) {
  TraceModel& M = *m;
  int64_t first = INT64_MAX, last = INT64_MIN;
  uint64_t events_total = 0;
  for (const Lane& l : M.lanes) events_total += l.size();
  for (const Track& t : M.tracks) {
    bool has = t.kind == TrackKind::kCounter ? M.counters[t.counter].time.size() > 0 : t.event_count > 0;
    if (!has) continue;
    first = std::min(first, t.first_ns);
    last = std::max(last, t.last_ns);
  }
  M.event_count = events_total;
  M.sample_count = 0;
  for (const auto& c : M.counters) M.sample_count += c.time.size();
  M.first_ns = first == INT64_MAX ? 0 : first;
  M.last_ns = last == INT64_MIN ? 0 : last;

  std::map<uint32_t, std::vector<LaneId>> dev_lanes;
  std::map<uint32_t, GroupId> dev_group;
  for (TrackId ti = 0; ti < M.tracks.size(); ++ti) {
    const Track& t = M.tracks[ti];
    if (t.kind != TrackKind::kGpuStream) continue;
    dev_group[t.device_id] = t.group;
    for (uint32_t d = 0; d < t.lane_count; ++d) dev_lanes[t.device_id].push_back(t.first_lane + d);
  }
  std::vector<std::pair<uint32_t, const std::vector<LaneId>*>> devs;
  for (const auto& [dev, lanes] : dev_lanes) devs.push_back({dev, &lanes});
  // Slice boundaries: quantiles of the starts of each device's longest lane.
  const uint64_t kSliceEvents = std::max<uint64_t>(1, detail::Tuning::device_slice_events);
  std::vector<DeviceSlice> slices;
  for (uint32_t d = 0; d < devs.size(); ++d) {
    const std::vector<LaneId>& lanes = *devs[d].second;
    uint64_t total = 0;
    LaneId longest = lanes[0];
    for (LaneId l : lanes) {
      total += M.lanes[l].size();
      if (M.lanes[l].size() > M.lanes[longest].size()) longest = l;
    }
    const uint64_t count = std::max<uint64_t>(1, total / kSliceEvents);
    std::vector<int64_t> bounds{INT64_MIN};
    const Lane& ll = M.lanes[longest];
    for (uint64_t j = 1; j < count; ++j) {
      const int64_t t = ll.start[size_t(ll.size() * j / count)];
      if (t > bounds.back()) bounds.push_back(t);
    }
    for (size_t j = 0; j < bounds.size(); ++j) {
      DeviceSlice& s = slices.emplace_back();
      s.device = d;
      for (LaneId l : lanes) {
        const Lane& lane = M.lanes[l];
        auto at = [&](int64_t t) {
          return t == INT64_MIN ? 0u
                                : uint32_t(std::lower_bound(lane.start.begin(), lane.start.end(), t) -
                                           lane.start.begin());
        };
        const uint32_t from = at(bounds[j]), to = j + 1 < bounds.size() ? at(bounds[j + 1]) : lane.size();
        s.from.push_back(from), s.to.push_back(to);
        if (from > 0) s.carry = std::max(s.carry, lane.End(from - 1));
      }
    }
  }
  pool.For(slices.size(),
           [&](size_t i, unsigned) { RunSlice(M, *devs[slices[i].device].second, slices[i]); });
  for (uint32_t d = 0, i = 0; d < devs.size(); ++d) {
    DeviceSummary s;
    s.device_id = devs[d].first;
    s.group = dev_group[s.device_id];
    s.name = M.groups[s.group].name;
    bool any = false;
    int64_t last = INT64_MIN;
    TopGaps gaps;
    for (; i < slices.size() && slices[i].device == d; ++i) {
      DeviceSlice& x = slices[i];
      if (!x.any) continue;
      if (!any) s.first_ns = x.first;
      any = true;
      s.busy_ns += x.busy;
      last = std::max(last, x.end);
      s.kernel_count += x.kernels, s.memcpy_count += x.memcpys, s.memset_count += x.memsets;
      for (; !x.gaps.heap.empty(); x.gaps.heap.pop()) gaps.Add(x.gaps.heap.top());
    }
    if (!any) continue;
    s.last_ns = last;
    std::vector<Gap> best;
    for (; !gaps.heap.empty(); gaps.heap.pop()) best.push_back(gaps.heap.top());
    std::sort(best.begin(), best.end(), BetterGap);
    for (const Gap& g : best) s.largest_gaps.push_back({g.second, g.second + g.first});
    M.device_summaries.push_back(std::move(s));
  }
}

void ModelBuilder::Impl::AppendSyntheticStrings() {
  synthetic_final_base_ = static_cast<StringId>(m->strings.size());
  auto remap = [&](StringId& id) {
    if (id >= detail::kSyntheticBase && id - detail::kSyntheticBase < tables.synthetic.size())
      id = synthetic_final_base_ + (id - detail::kSyntheticBase);
  };
  for (const std::string& s : tables.synthetic) m->strings.push_back(s);
  for (CounterTrack& c : m->counters) remap(c.name), remap(c.unit);
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Finish
// -----------------------------------------------------------------------------------------------------------------

std::unique_ptr<TraceModel> ModelBuilder::Impl::Finish(ThreadPool* pool_or_null) {
  std::unique_ptr<ThreadPool> own;
  if (!pool_or_null) own = std::make_unique<ThreadPool>(1);
  ThreadPool& pool = pool_or_null ? *pool_or_null : *own;
  detail::ScopedTime total(timings ? &timings->other : nullptr);
  const double nested_before = timings ? timings->lanes + timings->lod + timings->devices : 0;
  FlushDirect();
  BuildMemoryCounters();     // before the synthetic names get their final ids: it names counters
  AppendSyntheticStrings();  // lanes are written with the final ids
  m->launch_configs = std::move(tables.configs);
  m->memcpys = std::move(tables.memcpys);
  m->memsets = std::move(tables.memsets);
  m->nvtx = std::move(tables.nvtx);
  m->syncs = std::move(tables.syncs);
  CollapseProcesses(m->processes);
  BuildTracks(pool);
  stages.clear();
  stage_index.clear();
  pool.For(m->counters.size(), [&](size_t i, unsigned) { BuildPyramid(m->counters[i]); });
  ResolveFlows();
  {
    detail::ScopedTime t(timings ? &timings->devices : nullptr);
    Summarize(pool);
  }
  if (negative_durations)
    builder_losses["negative_duration"] = {"negative_duration", uint8_t(Severity::kWarning), 0,
                                           negative_durations,
                                           "events ending before they start; shown with zero duration"};
  if (too_deep)
    builder_losses["nesting_too_deep"] = {
        "nesting_too_deep", uint8_t(Severity::kDataLoss), 0, too_deep,
        "events nested deeper than 1024 levels were not placed on the timeline"};
  BuildCpuSamples();
  for (auto& [name, l] : builder_losses) m->losses.push_back(std::move(l));
  builder_losses.clear();
  interned.clear();
  if (timings) timings->other -= timings->lanes + timings->lod + timings->devices - nested_before;
  return std::move(m);
}

}  // namespace gt::viewer
