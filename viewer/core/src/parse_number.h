// Whole-string integer parsing for the text formats the viewer reads back (view-state links, notes).
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>

namespace gt::viewer::detail {

// The whole of `s` as a decimal int64 (at most 20 characters): false for anything else, no partial reads.
inline bool ParseI64(std::string_view s, int64_t* v) {
  if (s.empty() || s.size() > 20) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace gt::viewer::detail
