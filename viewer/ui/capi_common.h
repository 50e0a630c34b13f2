// What the C API's files (capi.cc, capi_teamui.cc) share: the export attribute (kept alive in wasm, visible
// natively so the headless tests call the same functions) and the one way a returned string is owned.
#pragma once

#include <string>

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#define GT_EXPORT extern "C" EMSCRIPTEN_KEEPALIVE
#else
#define GT_EXPORT extern "C" __attribute__((visibility("default"), used))
#endif

namespace gt::ui {

// Strings returned to the page live in a slot per function, valid until that function's next call.
inline const char* KeepString(std::string* slot, std::string value) {
  *slot = std::move(value);
  return slot->c_str();
}

}  // namespace gt::ui
