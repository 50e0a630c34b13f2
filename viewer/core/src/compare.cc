// [SECTION] index
//  - names: events matched by text (imports may intern one text under several ids)
//  - alignment
//  - kernel rows and steps
//  - counterparts
//  - counters side by side
#include "gt/viewer/compare.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "gt/units.h"

namespace gt::viewer {
namespace {

// ---- names
// --------------------------------------------------------------------------------------------------

// Per StringId: whether its text is `text`.
std::vector<uint8_t> IdsOf(const TraceModel& model, std::string_view text) {
  std::vector<uint8_t> match(model.strings.size(), 0);
  for (size_t i = 0; i < model.strings.size(); ++i) match[i] = model.strings[i] == text;
  return match;
}

// Loops often number their ranges ("step 0", "step 1", "ProfilerStep#7"): those are instances of one range,
// "step" / "ProfilerStep". The name without a trailing number and the separator before it.
std::string_view Family(std::string_view s) {
  size_t n = s.size();
  while (n > 0 && s[n - 1] >= '0' && s[n - 1] <= '9') --n;
  if (n == s.size() || n == 0) return s;
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '#' || s[n - 1] == '_' || s[n - 1] == '-')) --n;
  return n > 0 ? s.substr(0, n) : s;
}

// Per StringId: whether it names an instance of range `name` (the text itself or `name` + a number).
std::vector<uint8_t> RangeIdsOf(const TraceModel& model, std::string_view name) {
  std::vector<uint8_t> match(model.strings.size(), 0);
  for (size_t i = 0; i < model.strings.size(); ++i)
    match[i] = model.strings[i] == name || Family(model.strings[i]) == name;
  return match;
}

bool IsRange(EventKind k) {
  return k == EventKind::kNvtx || k == EventKind::kHostOp;
}

template <typename F>
void ForEachRange(const TraceModel& model, F&& f) {
  for (const Track& t : model.tracks) {
    if (t.kind != TrackKind::kThreadRanges) continue;
    for (LaneId l = t.first_lane; l < t.first_lane + t.lane_count; ++l) {
      const Lane& lane = model.lanes[l];
      for (uint32_t i = 0; i < lane.size(); ++i)
        if (IsRange(model.Kind({l, i}))) f(EventId{l, i});
    }
  }
}

template <typename F>
void ForEachKernel(const TraceModel& model, F&& f) {
  for (const Track& t : model.tracks) {
    if (t.kind != TrackKind::kGpuStream) continue;
    for (LaneId l = t.first_lane; l < t.first_lane + t.lane_count; ++l) {
      const Lane& lane = model.lanes[l];
      for (uint32_t i = 0; i < lane.size(); ++i)
        if (model.Kind({l, i}) == EventKind::kKernel) f(EventId{l, i});
    }
  }
}

// Kernels whose name is `text`, by start (ties: lane, index): the order ordinals count in.
std::vector<EventId> KernelsNamed(const TraceModel& model, std::string_view text) {
  const std::vector<uint8_t> match = IdsOf(model, text);
  std::vector<EventId> out;
  ForEachKernel(model, [&](EventId e) {
    const StringId n = model.Name(e);
    if (n < match.size() && match[n]) out.push_back(e);
  });
  std::sort(out.begin(), out.end(), [&](EventId x, EventId y) {
    const int64_t sx = model.Start(x), sy = model.Start(y);
    return sx != sy ? sx < sy : x < y;
  });
  return out;
}

std::string Ordinal1(uint32_t zero_based) {
  const uint32_t n = zero_based + 1;
  const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th"
                       : n % 10 == 1                    ? "st"
                       : n % 10 == 2                    ? "nd"
                       : n % 10 == 3                    ? "rd"
                                                        : "th";
  return std::to_string(n) + suffix;
}

}  // namespace

// ---- alignment
// ----------------------------------------------------------------------------------------------

std::vector<RangeSpan> RangeInstances(const TraceModel& model, std::string_view name) {
  std::vector<RangeSpan> out;
  if (name.empty()) return out;
  const std::vector<uint8_t> match = RangeIdsOf(model, name);
  ForEachRange(model, [&](EventId e) {
    const StringId n = model.Name(e);
    if (n < match.size() && match[n]) out.push_back({model.Start(e), model.End(e)});
  });
  std::sort(out.begin(), out.end(), [](const RangeSpan& x, const RangeSpan& y) {
    return x.start != y.start ? x.start < y.start : x.end > y.end;
  });
  return out;
}

AlignRequest DefaultAlignRequest(const TraceModel& a, const TraceModel& b) {
  // Per string id first (one pass over the ranges, no text per event), then per range name (numbered ranges
  // and texts interned twice fold into one name): instances in each trace, and where each first starts in A.
  struct PerId {
    uint64_t count = 0;
    std::pair<int64_t, int64_t> first{INT64_MAX, 0};  // (start, -duration): the outer range of a tie first
  };
  auto per_id = [](const TraceModel& m) {
    std::vector<PerId> ids(m.strings.size());
    ForEachRange(m, [&](EventId e) {
      PerId& p = ids[m.Name(e)];
      ++p.count;
      p.first = std::min(p.first, std::pair<int64_t, int64_t>{m.Start(e), -(m.End(e) - m.Start(e))});
    });
    return ids;
  };
  const std::vector<PerId> ia = per_id(a), ib = per_id(b);
  std::map<std::string, PerId> by_name_a;
  std::map<std::string, uint64_t> count_b;
  for (size_t i = 0; i < ia.size(); ++i) {
    if (!ia[i].count) continue;
    PerId& p = by_name_a[std::string(Family(a.strings[i]))];
    p.count += ia[i].count;
    p.first = std::min(p.first, ia[i].first);
  }
  for (size_t i = 0; i < ib.size(); ++i)
    if (ib[i].count) count_b[std::string(Family(b.strings[i]))] += ib[i].count;
  AlignRequest best;
  best.automatic = false;
  std::pair<int64_t, int64_t> best_key{INT64_MAX, 0};
  for (const auto& [name, p] : by_name_a) {
    if (p.count < 2 || name.empty()) continue;
    auto it = count_b.find(name);
    if (it == count_b.end() || it->second < 2) continue;
    if (best.name.empty() || p.first < best_key) best.name = name, best_key = p.first;
  }
  best.ordinal = best.name.empty() ? 0 : 1;  // the second instance: the first is warm-up
  return best;
}

Alignment Align(const TraceModel& a, const TraceModel& b, const AlignRequest& request) {
  const AlignRequest req = request.automatic ? DefaultAlignRequest(a, b) : request;
  Alignment out;
  out.a_anchor_ns = a.first_ns;
  out.b_anchor_ns = b.first_ns;
  if (req.name.empty()) {
    out.reason = request.automatic
                     ? "aligned on the start: no NVTX range name occurs at least twice in both traces"
                     : "aligned on the start";
  } else {
    const std::vector<RangeSpan> ia = RangeInstances(a, req.name), ib = RangeInstances(b, req.name);
    if (req.ordinal < ia.size() && req.ordinal < ib.size()) {
      out.name = req.name;
      out.ordinal = req.ordinal;
      out.a_anchor_ns = ia[req.ordinal].start;
      out.b_anchor_ns = ib[req.ordinal].start;
      out.reason = "aligned on the " + Ordinal1(req.ordinal) + " '" + req.name + "'";
      if (request.automatic)
        out.reason +=
            " (the first range name both traces have at least twice; its 2nd instance skips warm-up)";
    } else {
      out.reason = "aligned on the start: '" + req.name + "' has " + std::to_string(ia.size()) + " instance" +
                   (ia.size() == 1 ? "" : "s") + " in A and " + std::to_string(ib.size()) + " in B, no " +
                   Ordinal1(req.ordinal);
    }
  }
  out.offset_ns = SatSub(out.a_anchor_ns, out.b_anchor_ns);
  return out;
}

StatusOr<AlignRequest> ParseAlignSpec(std::string_view spec) {
  AlignRequest r;
  if (spec.empty()) return r;
  r.automatic = false;
  if (spec == "start") return r;
  if (spec.size() > 4096) return InvalidArgument("align: range name too long");
  // "name:N" when what follows the last ':' is a number; else all of it is the name ("domain:work",
  // "cub::DeviceRadixSort").
  const size_t colon = spec.rfind(':');
  const std::string_view num = colon == std::string_view::npos ? std::string_view() : spec.substr(colon + 1);
  const bool numbered =
      !num.empty() && std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!numbered) {
    r.name = std::string(spec);
    return r;
  }
  uint32_t n = 0;
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
  if (ec != std::errc() || p != num.data() + num.size() || n == 0)
    return InvalidArgument("align: '" + std::string(num) + "' is no instance number (1 = the first)");
  r.name = std::string(spec.substr(0, colon));
  if (r.name.empty()) return InvalidArgument("align: no range name before ':'");
  r.ordinal = n - 1;
  return r;
}

// ---- kernel rows and steps
// ----------------------------------------------------------------------------------

std::vector<NameChange> CompareKernels(const TraceModel& a, const TraceModel& b) {
  return CompareSummaries(SummarizeByName(a, SummaryOf::kKernels), SummarizeByName(b, SummaryOf::kKernels));
}

int64_t KernelTimeIn(const TraceModel& model, int64_t t0, int64_t t1) {
  int64_t sum = 0;
  for (const Track& t : model.tracks) {
    if (t.kind != TrackKind::kGpuStream) continue;
    for (LaneId l = t.first_lane; l < t.first_lane + t.lane_count; ++l) {
      const Lane& lane = model.lanes[l];
      // Events of a lane never overlap: only the one before the first start >= t0 can reach into the window.
      uint32_t i = static_cast<uint32_t>(std::lower_bound(lane.start.begin(), lane.start.end(), t0) -
                                         lane.start.begin());
      if (i > 0) --i;
      for (; i < lane.size() && lane.start[i] < t1; ++i) {
        if (model.Kind({l, i}) != EventKind::kKernel) continue;
        const int64_t s = std::max(t0, lane.start[i]), e = std::min(t1, lane.End(i));
        if (e > s) sum += e - s;
      }
    }
  }
  return sum;
}

std::vector<StepDelta> CompareSteps(const TraceModel& a, const TraceModel& b, std::string_view name,
                                    size_t limit) {
  std::vector<StepDelta> out;
  if (name.empty()) return out;
  const std::vector<RangeSpan> ia = RangeInstances(a, name), ib = RangeInstances(b, name);
  const size_t n = std::min(limit, std::max(ia.size(), ib.size()));
  for (size_t k = 0; k < n; ++k) {
    StepDelta s;
    s.ordinal = static_cast<uint32_t>(k);
    if (k < ia.size()) {
      s.in_a = true;
      s.a_ns = ia[k].end - ia[k].start;
      s.a_kernel_ns = KernelTimeIn(a, ia[k].start, ia[k].end);
    }
    if (k < ib.size()) {
      s.in_b = true;
      s.b_ns = ib[k].end - ib[k].start;
      s.b_kernel_ns = KernelTimeIn(b, ib[k].start, ib[k].end);
    }
    out.push_back(s);
  }
  return out;
}

std::string StepDeltaReport(const Alignment& align, const std::vector<StepDelta>& steps, size_t top_n) {
  std::string o = "\nAlignment: " + align.reason + "\n";
  if (align.name.empty()) return o;
  o += "\nPer '" + align.name +
       "' (paired by instance; kernel time = kernels running inside the range):\n  " +
       PadColumn("#", 6, false) + PadColumn("Before", 12, true) + PadColumn("After", 12, true) +
       PadColumn("Change", 12, true) + PadColumn("Kernels before", 16, true) + PadColumn("after", 12, true) +
       PadColumn("change", 12, true) + "\n";
  int64_t sum[4] = {0, 0, 0, 0};
  size_t shown = 0;
  for (const StepDelta& s : steps) {
    if (s.in_a && s.in_b)
      sum[0] += s.a_ns, sum[1] += s.b_ns, sum[2] += s.a_kernel_ns, sum[3] += s.b_kernel_ns;
    if (top_n && shown >= top_n) continue;
    ++shown;
    auto dur = [](bool in, int64_t ns) { return in ? FormatDuration(double(ns)) : std::string("-"); };
    o += "  " + PadColumn(std::to_string(s.ordinal + 1), 6, false) +
         PadColumn(dur(s.in_a, s.a_ns), 12, true) + PadColumn(dur(s.in_b, s.b_ns), 12, true) +
         PadColumn(s.in_a && s.in_b ? SignedDuration(s.delta_ns()) : "-", 12, true) +
         PadColumn(dur(s.in_a, s.a_kernel_ns), 16, true) + PadColumn(dur(s.in_b, s.b_kernel_ns), 12, true) +
         PadColumn(s.in_a && s.in_b ? SignedDuration(s.kernel_delta_ns()) : "-", 12, true) + "\n";
  }
  if (shown < steps.size()) o += "  ... " + std::to_string(steps.size() - shown) + " more\n";
  o += "  " + PadColumn("paired", 6, false) + PadColumn(FormatDuration(double(sum[0])), 12, true) +
       PadColumn(FormatDuration(double(sum[1])), 12, true) +
       PadColumn(SignedDuration(sum[1] - sum[0]), 12, true) +
       PadColumn(FormatDuration(double(sum[2])), 16, true) +
       PadColumn(FormatDuration(double(sum[3])), 12, true) +
       PadColumn(SignedDuration(sum[3] - sum[2]), 12, true) + "\n";
  return o;
}

// ---- counterparts
// -------------------------------------------------------------------------------------------

namespace {

// The step a time falls in: the last instance starting at or before t (ranges of one name rarely overlap;
// when they do, the latest start is the one the work belongs to).
int64_t StepAt(const std::vector<RangeSpan>& steps, int64_t t) {
  auto it = std::upper_bound(steps.begin(), steps.end(), t,
                             [](int64_t v, const RangeSpan& s) { return v < s.start; });
  return it == steps.begin() ? -1 : int64_t(it - steps.begin()) - 1;
}

}  // namespace

std::optional<KernelPlace> PlaceOfKernel(const TraceModel& model, EventId kernel,
                                         std::string_view align_name) {
  if (!kernel.valid() || kernel.lane >= model.lanes.size() ||
      kernel.index >= model.lanes[kernel.lane].size() || model.Kind(kernel) != EventKind::kKernel)
    return std::nullopt;
  const std::vector<EventId> same = KernelsNamed(model, model.Str(model.Name(kernel)));
  const auto pos = std::find(same.begin(), same.end(), kernel);
  if (pos == same.end()) return std::nullopt;
  KernelPlace place;
  const std::vector<RangeSpan> steps = RangeInstances(model, align_name);
  place.step = StepAt(steps, model.Start(kernel));
  if (place.step < 0) {
    place.ordinal = uint64_t(pos - same.begin());
    return place;
  }
  const int64_t step_start = steps[size_t(place.step)].start;
  uint64_t ord = 0;
  for (auto it = same.begin(); it != pos; ++it)
    if (model.Start(*it) >= step_start && StepAt(steps, model.Start(*it)) == place.step) ++ord;
  place.ordinal = ord;
  return place;
}

EventId Counterpart(const TraceModel& from, EventId kernel, const TraceModel& to,
                    std::string_view align_name) {
  const std::optional<KernelPlace> place = PlaceOfKernel(from, kernel, align_name);
  if (!place) return {};
  const std::vector<EventId> same = KernelsNamed(to, from.Str(from.Name(kernel)));
  if (same.empty()) return {};
  if (place->step >= 0) {
    const std::vector<RangeSpan> steps = RangeInstances(to, align_name);
    if (size_t(place->step) < steps.size()) {
      uint64_t ord = 0;
      for (EventId e : same) {
        if (StepAt(steps, to.Start(e)) != place->step) continue;
        if (ord++ == place->ordinal) return e;
      }
      return {};  // that step of `to` ran fewer kernels of the name
    }
    // No such step in `to`: the overall ordinal is the best guess left.
    const std::optional<KernelPlace> overall = PlaceOfKernel(from, kernel, "");
    return overall && overall->ordinal < same.size() ? same[overall->ordinal] : EventId{};
  }
  return place->ordinal < same.size() ? same[place->ordinal] : EventId{};
}

// ---- counters side by side
// ----------------------------------------------------------------------------------

std::vector<CounterPair> PairProfiledKernels(const ProfiledKernels& a, const ProfiledKernels& b) {
  std::map<std::string, const KernelAnalysis*> in_b;
  for (const KernelAnalysis& k : b.kernels) in_b.try_emplace(k.kernel_name, &k);
  std::vector<CounterPair> out;
  std::map<std::string, bool> seen;
  for (const KernelAnalysis& k : a.kernels) {
    auto it = in_b.find(k.kernel_name);
    if (it == in_b.end() || !seen.try_emplace(k.kernel_name, true).second) continue;
    out.push_back({k.kernel_name, &k, it->second});
  }
  return out;
}

}  // namespace gt::viewer
