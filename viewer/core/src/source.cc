// The local implementation of the viewer's trace interface (gt/viewer/source.h): a model in memory answers
// everything at once.
#include "gt/viewer/source.h"

namespace gt::viewer {

uint32_t EventStyle(const TraceModel& m, EventId e) {
  return EventStyleOf(m, m.Kind(e), m.Payload(e));
}

uint32_t EventStyleOf(const TraceModel& m, EventKind kind, uint32_t p) {
  switch (kind) {
    case EventKind::kMemcpy: {
      return p < m.memcpys.size() ? m.memcpys[p].copy_kind : 0;
    }
    case EventKind::kNvtx: {
      if (p < m.nvtx.size() && (m.nvtx[p].flags & kNvtxHasColor))
        return kStyleRgb | (m.nvtx[p].color & 0xFFFFFF);
      return 0;
    }
    default:
      return 0;
  }
}

EventInfo MakeEventInfo(const TraceModel& m, EventId e) {
  EventInfo info;
  info.id = e;
  if (!e.valid() || e.lane >= m.lanes.size() || e.index >= m.lanes[e.lane].size()) return info;
  info.found = true;
  info.name = m.Str(m.Name(e));
  info.kind = m.Kind(e);
  info.track = m.TrackOf(e).name;
  info.key = m.EventKey(e);
  info.start = m.Start(e);
  info.end = m.End(e);
  info.fields = EventDetails(m, e);
  return info;
}

bool LocalSource::LaneItems(LaneId lane_id, int64_t t0, int64_t t1, double ns_per_px,
                            std::vector<LaneItem>* out) {
  out->clear();
  if (lane_id >= m_->lanes.size()) return true;
  const Lane& lane = m_->lanes[lane_id];
  QueryLane(lane, t0, t1, ns_per_px, &items_);
  out->reserve(items_.size());
  for (const DrawItem& it : items_) {
    const EventId first{lane_id, it.first};
    out->push_back({it, lane.name[it.first], m_->Kind(first), EventStyle(*m_, first)});
  }
  return true;
}

bool LocalSource::CounterColumns(TrackId track, int64_t t0, int64_t t1, double ns_per_px,
                                 std::vector<CounterColumn>* out) {
  out->clear();
  if (track >= m_->tracks.size() || m_->tracks[track].counter >= m_->counters.size()) return true;
  QueryCounter(m_->counters[m_->tracks[track].counter], t0, t1, ns_per_px, out);
  return true;
}

const EventInfo* LocalSource::Event(EventId e) {
  if (!(event_.id == e) || !event_.found) event_ = MakeEventInfo(*m_, e);
  return &event_;
}

const std::vector<KernelSummaryRow>* LocalSource::Kernels() {
  if (!kernels_built_) {
    // A mapped index has the table already: computing it would read every kernel's pages.
    kernels_ = pre_ ? pre_->kernels : KernelSummary(*m_);
    kernels_built_ = true;
  }
  return &kernels_;
}

const std::vector<NameSummary>* LocalSource::Summary(SummaryOf what) {
  const size_t k = static_cast<size_t>(what);
  if (k >= 4) return nullptr;
  if (!summary_built_[k]) {
    summary_[k] = pre_ ? pre_->by_name[k] : SummarizeByName(*m_, what);
    summary_built_[k] = true;
  }
  return &summary_[k];
}

const PartnerInfo* LocalSource::Partner(EventId e) {
  if (!(partner_of_ == e) || !partner_of_.valid()) {
    partner_of_ = e;
    partner_ = {};
    const EventId p = e.valid() && e.lane < m_->lanes.size() && e.index < m_->lanes[e.lane].size()
                          ? FlowPartner(*m_, e)
                          : EventId{};
    if (p.valid())
      partner_ = {p,           m_->Str(m_->Name(p)),
                  m_->Kind(p), m_->Start(p),
                  m_->End(p),  m_->TrackOf(p).kind == TrackKind::kThreadApi,
                  {}};
    if (e.valid() && e.lane < m_->lanes.size() && e.index < m_->lanes[e.lane].size()) {
      size_t out = 0, in = 0;
      std::vector<FlowArrow> explicit_flows;  // the correlation partner is above: not looked up twice
      AppendExplicitFlows(*m_, e, &explicit_flows);
      for (const FlowArrow& f : explicit_flows) {
        const bool outgoing = f.from == e;
        const EventId other = outgoing ? f.to : f.from;
        if (!other.valid() || (outgoing ? out++ : in++) >= kFlowEndsMax) continue;
        partner_.flows.push_back(
            {other, m_->Str(m_->Name(other)), m_->Kind(other), m_->Start(other), m_->End(other), outgoing});
      }
    }
  }
  return &partner_;
}

const std::vector<IdleGap>* LocalSource::IdleGaps() {
  if (!gaps_built_) gaps_ = ExplainIdleGaps(*m_, kIndexIdleGaps), gaps_built_ = true;
  return &gaps_;
}

const ProfiledData* LocalSource::Profiled() {
  if (!profiled_built_) profiled_ = CollectProfiledData(*m_), profiled_built_ = true;
  return &profiled_;
}

}  // namespace gt::viewer
