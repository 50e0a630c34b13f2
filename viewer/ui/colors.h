// Event colors: stable per name (the same kernel is the same color everywhere), by copy direction for memcpy,
// the NVTX color when the range set one. Merged LOD blocks get a muted, striped variant of their first
// event's.
#pragma once

#include <cstdint>
#include <string>

#include "gt/viewer/model.h"
#include "imgui.h"

namespace gt::ui {

ImU32 EventColor(const viewer::TraceModel& model, viewer::EventId e);
// The same from what a draw item carries (gt/viewer/source.h LaneItem: kind, name, style), so a remote
// trace's events are coloured as local ones.
ImU32 EventColor(viewer::EventKind kind, const std::string& name, uint32_t style);
ImU32 MergedColor(ImU32 color);
ImU32 TextColorOn(ImU32 background);  // black or white, whichever reads better
ImU32 Dim(ImU32 color, float alpha);  // for non-matches while a search is active

namespace colors {
inline constexpr ImU32 kSelection = IM_COL32(255, 255, 255, 255);
// Two traces compared: the counterpart outline (and the line to it, and the separator above B), and the
// header rows of A's and B's tracks.
inline constexpr ImU32 kCounterpart = IM_COL32(0, 220, 255, 255);
inline constexpr ImU32 kCompareA = IM_COL32(52, 78, 120, 255);
inline constexpr ImU32 kCompareB = IM_COL32(110, 62, 112, 255);
inline constexpr ImU32 kSearchMatch = IM_COL32(255, 214, 10, 255);
inline constexpr ImU32 kIdleGap = IM_COL32(220, 60, 60, 60);
inline constexpr ImU32 kIdleGapEdge = IM_COL32(230, 80, 80, 150);
inline constexpr ImU32 kFlow = IM_COL32(255, 160, 40, 230);
// One NCCL collective's kernels on the other ranks, outlined while one of them is selected.
inline constexpr ImU32 kCollectivePeer = IM_COL32(120, 255, 120, 230);
inline constexpr ImU32 kMeasure = IM_COL32(90, 160, 255, 50);
inline constexpr ImU32 kMeasureEdge = IM_COL32(120, 180, 255, 220);
inline constexpr ImU32 kRulerBg = IM_COL32(32, 32, 36, 255);
inline constexpr ImU32 kRulerTick = IM_COL32(150, 150, 160, 255);
inline constexpr ImU32 kGrid = IM_COL32(255, 255, 255, 14);
inline constexpr ImU32 kGroupBg = IM_COL32(44, 44, 52, 255);
inline constexpr ImU32 kTrackSep = IM_COL32(255, 255, 255, 18);
inline constexpr ImU32 kCounter = IM_COL32(90, 170, 230, 255);
inline constexpr ImU32 kCounterFill = IM_COL32(90, 170, 230, 70);
}  // namespace colors

}  // namespace gt::ui
