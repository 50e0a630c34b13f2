#include "ui/colors.h"

#include "gt/viewer/source.h"

#include <algorithm>
#include <string>

namespace gt::ui {
namespace {

uint32_t Hash(const std::string& s) {
  uint32_t h = 2166136261u;  // FNV-1a: stable across runs and builds, unlike std::hash
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

// Hue from the name, saturation/value kept in a band that reads well on the dark background with text on top.
ImU32 FromName(const std::string& name, float sat, float val) {
  const uint32_t h = Hash(name);
  float r, g, b;
  ImGui::ColorConvertHSVtoRGB((h % 360) / 360.0f, sat + ((h >> 9) % 16) / 100.0f,
                              val + ((h >> 13) % 12) / 100.0f, r, g, b);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(r, g, b, 1.0f));
}

}  // namespace

ImU32 EventColor(const viewer::TraceModel& model, viewer::EventId e) {
  return EventColor(model.Kind(e), model.Str(model.Name(e)), viewer::EventStyle(model, e));
}

ImU32 EventColor(viewer::EventKind kind, const std::string& name, uint32_t style) {
  using viewer::EventKind;
  switch (kind) {
    case EventKind::kKernel:
      return FromName(name, 0.45f, 0.70f);
    case EventKind::kMemcpy:
      switch (static_cast<CopyKind>(style & 0xff)) {
        case CopyKind::kHtoD:
          return IM_COL32(80, 190, 110, 255);
        case CopyKind::kDtoH:
          return IM_COL32(230, 140, 60, 255);
        case CopyKind::kDtoD:
          return IM_COL32(170, 110, 220, 255);
        case CopyKind::kPtoP:
          return IM_COL32(210, 90, 170, 255);
        default:
          return IM_COL32(150, 150, 110, 255);
      }
    case EventKind::kMemset:
      return IM_COL32(110, 140, 190, 255);
    case EventKind::kApi:
      return FromName(name, 0.25f, 0.62f);
    case EventKind::kNvtx:
      if (style & viewer::kStyleRgb)
        return IM_COL32((style >> 16) & 0xff, (style >> 8) & 0xff, style & 0xff, 255);
      return FromName(name, 0.35f, 0.66f);
    case EventKind::kSync:
      return IM_COL32(200, 70, 70, 255);
    case EventKind::kOverhead:
      return IM_COL32(95, 95, 100, 255);
    case EventKind::kInstant:
      return IM_COL32(240, 200, 80, 255);
    default:
      return FromName(name, 0.40f, 0.68f);
  }
}

ImU32 MergedColor(ImU32 color) {
  ImVec4 c = ImGui::ColorConvertU32ToFloat4(color);
  const float grey = (c.x + c.y + c.z) / 3.0f;
  c.x = grey + (c.x - grey) * 0.35f;
  c.y = grey + (c.y - grey) * 0.35f;
  c.z = grey + (c.z - grey) * 0.35f;
  c.x *= 0.75f, c.y *= 0.75f, c.z *= 0.75f;
  return ImGui::ColorConvertFloat4ToU32(c);
}

ImU32 TextColorOn(ImU32 background) {
  const ImVec4 c = ImGui::ColorConvertU32ToFloat4(background);
  const float luma = 0.299f * c.x + 0.587f * c.y + 0.114f * c.z;
  return luma > 0.55f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
}

ImU32 Dim(ImU32 color, float alpha) {
  ImVec4 c = ImGui::ColorConvertU32ToFloat4(color);
  c.w *= alpha;
  return ImGui::ColorConvertFloat4ToU32(c);
}

}  // namespace gt::ui
