// libFuzzer: the `&view=` part of a share link is whatever a link's author (or an attacker) wrote. Parse must
// never crash or abort on it, and whatever it accepts must serialize and parse back to the same state (so a
// shared link re-shared from the receiving page stays the same link).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "gt/viewer/view_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using gt::viewer::ViewState;
  auto parsed = ViewState::Parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok()) return 0;
  const std::string again = parsed->Serialize();
  auto reparsed = ViewState::Parse(again);
  if (!reparsed.ok() || !(*reparsed == *parsed) || reparsed->Serialize() != again) std::abort();
  return 0;
}
