// What the viewer draws a trace from (issue 17): the trace's layout (groups, tracks, lanes) and, per visible
// window, its events. One interface, two implementations, so that the UI has one code path:
//   - LocalSource: a TraceModel in memory (a dropped file, a small trace, a mapped .gtindex natively);
//     every answer is immediate.
//   - RemoteTrace (gt/viewer/remote.h): a trace that stays on `gtrace serve`; answers come from tiles and
//     queries fetched as the view needs them, so any answer may be "not here yet" (false / nullptr) and
//     the UI draws what it has (a coarser tile, a placeholder) and asks again next frame.
// Search is not here: a remote trace's is the server's (RemoteTrace::SetSearch / SearchStep). Panels whose
// queries scan events (explicit flows, counters, roofline, notes, histograms, comparison) need the events in
// memory: they ask events_local() and offer to download the trace otherwise.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gt/viewer/index.h"
#include "gt/viewer/lod.h"
#include "gt/viewer/model.h"
#include "gt/viewer/profiled.h"
#include "gt/viewer/query.h"
#include "gt/viewer/summary.h"

namespace gt::viewer {

// What picks an event's colour besides its kind and name: a copy's direction (gt::CopyKind) for memcpys,
// kStyleRgb | 0xRRGGBB for an NVTX range with its own colour, else 0. Tiles carry it, so a remote event is
// coloured as a local one.
inline constexpr uint32_t kStyleRgb = 1u << 24;
uint32_t EventStyle(const TraceModel& model, EventId e);
// The same from the event's kind and payload (ref & kRefPayloadMask).
uint32_t EventStyleOf(const TraceModel& model, EventKind kind, uint32_t payload);

// One draw item of a lane (gt/viewer/lod.h's DrawItem) with what drawing it needs: the first event's name,
// kind and style (a merged block is drawn in its first event's colour, muted).
struct LaneItem {
  DrawItem item;
  StringId name = 0;
  EventKind kind = EventKind::kKernel;
  uint32_t style = 0;
};

// One event as the details panel, the tooltip and a share link show it.
struct EventInfo {
  EventId id;
  bool found = false;  // false: the trace has no such event (a stale link)
  std::string name;
  EventKind kind = EventKind::kKernel;
  std::string track;
  std::string key;  // TraceModel::EventKey
  int64_t start = 0, end = 0;
  std::vector<DetailField> fields;  // EventDetails
};

// The other end of an event's launch <-> GPU work link (FlowPartner), as "Go to the launch" and the flow
// arrow show it. id invalid: the event has none.
// The other end of one explicit flow record of an event (a framework op -> the CUDA call it issued, a
// Chrome/Kineto flow).
struct FlowEnd {
  EventId id;
  std::string name;
  EventKind kind = EventKind::kKernel;
  int64_t start = 0, end = 0;
  bool outgoing = false;  // the flow runs from the event to this end
};
inline constexpr size_t kFlowEndsMax = 64;  // explicit flows listed per event and direction

struct PartnerInfo {
  EventId id;  // the launch <-> GPU work partner; invalid when none
  std::string name;
  EventKind kind = EventKind::kKernel;
  int64_t start = 0, end = 0;
  bool launch = false;         // the partner is the launch (a CUDA API call), else the GPU work
  std::vector<FlowEnd> flows;  // explicit flows of the event: at most kFlowEndsMax each way
};

class TraceSource {
 public:
  virtual ~TraceSource() = default;

  // Groups, tracks and lanes (ids as the server's and the file's), the extent, the counts. A remote
  // trace's lanes hold no events: reading their columns is reading nothing.
  virtual const TraceModel& layout() const = 0;
  // The events are in memory: queries that scan them (search, flows, counters, notes) can run.
  virtual bool events_local() const = 0;
  // A name of an item or a kernel row ("" while unknown).
  virtual const std::string& Str(StringId id) const = 0;

  // Draw items of `lane` over [t0, t1) at ns_per_px (QueryLane's). False when part of the window is not
  // here yet: what is missing is drawn from a coarser level when one is cached, or left out.
  virtual bool LaneItems(LaneId lane, int64_t t0, int64_t t1, double ns_per_px,
                         std::vector<LaneItem>* out) = 0;
  // Columns of a counter track over [t0, t1) (QueryCounter's); false as above.
  virtual bool CounterColumns(TrackId track, int64_t t0, int64_t t1, double ns_per_px,
                              std::vector<CounterColumn>* out) = 0;
  // The event's details; nullptr while they are on their way.
  virtual const EventInfo* Event(EventId e) = 0;
  // A share link's event key of `e`, and back (ids as in TraceModel::EventKey / FindEventByKey). A remote
  // trace cannot check the index part without asking: Event() says whether it exists.
  virtual std::string EventKey(EventId e) const = 0;
  virtual EventId FindEventByKey(std::string_view key) const = 0;
  // The kernel table (KernelSummary of every device) and the per-name tables; nullptr while on their way.
  virtual const std::vector<KernelSummaryRow>* Kernels() = 0;
  virtual const std::vector<NameSummary>* Summary(SummaryOf what) = 0;
  // The largest GPU idle gaps and what the CPU did meanwhile (ExplainIdleGaps(model, kIndexIdleGaps));
  // nullptr while on their way.
  virtual const std::vector<IdleGap>* IdleGaps() = 0;
  // The launch <-> GPU work partner of `e`; nullptr while on its way.
  virtual const PartnerInfo* Partner(EventId e) = 0;
  // The counter tables and what the timeline says of the profiled launches (gt/viewer/profiled.h): what the
  // counters section and the roofline analyse. nullptr while on their way (or when the server failed).
  virtual const ProfiledData* Profiled() = 0;
};

// A model in memory. `precomputed`: a mapped index's aggregates, which spare the scans (may be null).
class LocalSource final : public TraceSource {
 public:
  explicit LocalSource(const TraceModel* model, const IndexSummaries* precomputed = nullptr)
      : m_(model), pre_(precomputed) {}
  const TraceModel& layout() const override { return *m_; }
  bool events_local() const override { return true; }
  const std::string& Str(StringId id) const override { return m_->Str(id); }
  bool LaneItems(LaneId lane, int64_t t0, int64_t t1, double ns_per_px, std::vector<LaneItem>* out) override;
  bool CounterColumns(TrackId track, int64_t t0, int64_t t1, double ns_per_px,
                      std::vector<CounterColumn>* out) override;
  const EventInfo* Event(EventId e) override;
  std::string EventKey(EventId e) const override { return m_->EventKey(e); }
  EventId FindEventByKey(std::string_view key) const override { return m_->FindEventByKey(key); }
  const std::vector<KernelSummaryRow>* Kernels() override;
  const std::vector<NameSummary>* Summary(SummaryOf what) override;
  const std::vector<IdleGap>* IdleGaps() override;
  const PartnerInfo* Partner(EventId e) override;
  const ProfiledData* Profiled() override;

 private:
  const TraceModel* m_;
  const IndexSummaries* pre_;
  std::vector<DrawItem> items_;
  EventInfo event_;  // the last event asked for (the details panel asks every frame)
  bool kernels_built_ = false;
  std::vector<KernelSummaryRow> kernels_;
  bool summary_built_[4] = {};
  std::vector<NameSummary> summary_[4];
  bool gaps_built_ = false;
  EventId partner_of_;  // the event partner_ is of (the details panel and the timeline ask every frame)
  PartnerInfo partner_;
  std::vector<IdleGap> gaps_;
  bool profiled_built_ = false;
  ProfiledData profiled_;
};

// EventInfo of an event of a model in memory (what the server's /event answer encodes).
EventInfo MakeEventInfo(const TraceModel& model, EventId e);

}  // namespace gt::viewer
