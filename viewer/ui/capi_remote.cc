// The C API of a remote trace (issue 17, gt/viewer/remote.h): the page opens a trace that stays on
// `gtrace serve`, the viewer hands out requests through Module.gtRemoteFetch(id, url) (web/app.js sends them
// with fetch()), and the page hands each answer back with gt_remote_answer. Nothing here blocks: a frame
// draws what has arrived.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "gt/viewer/json.h"
#include "ui/app.h"
#include "ui/capi_common.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif

namespace {

using gt::ui::GlobalApp;
using gt::viewer::JsonNumber;

}  // namespace

// Opens the stored trace whose API base the page knows ("/api/t/<id>/"): the viewer asks for its layout now.
// Returns 0 when the open started (gt_load_state says when it is in), -1 without a viewer.
GT_EXPORT int gt_open_remote(const char* name) {
  gt::ui::App* app = GlobalApp();
  if (!app) return -1;
#ifdef __EMSCRIPTEN__
  app->OpenRemote(name ? name : "trace", [](uint64_t id, const std::string& url) {
    // Request ids stay far below 2^53: a JS number carries them exactly.
    EM_ASM(
        {
          if (Module.gtRemoteFetch) Module.gtRemoteFetch($0, UTF8ToString($1));
        },
        double(id), url.c_str());
  });
#else
  (void)name;  // natively a remote trace is opened with App::OpenRemote and a transport of the caller's
  return -1;
#endif
  return 0;
}

// The answer to request `id`: its HTTP status (0: the network failed) and body, `size` bytes at `body`
// (malloc'ed by the page; freed here, whatever happens). `retry_after_s`: the server's Retry-After, or 0.
GT_EXPORT void gt_remote_answer(double id, int status, uint8_t* body, uint32_t size, double retry_after_s) {
  gt::ui::App* app = GlobalApp();
  if (app && app->remote())
    app->remote()->OnAnswer(uint64_t(id), status,
                            std::string_view(reinterpret_cast<const char*>(body), body ? size : 0),
                            retry_after_s);
  std::free(body);
}

// {"remote":bool,"events","requests","answers","failures","bytes","in_flight","tiles","tile_bytes",
// "tile_hits","tile_misses","tile_evictions"}: what a remote trace asked for and keeps (tests, benchmarks).
GT_EXPORT const char* gt_remote_stats() {
  static std::string s;
  gt::ui::App* app = GlobalApp();
  if (!app || !app->remote()) return gt::ui::KeepString(&s, "{\"remote\":false}");
  const gt::viewer::RemoteStats st = app->remote()->stats();
  auto n = [](double v) { return JsonNumber(v); };
  return gt::ui::KeepString(
      &s, "{\"remote\":true,\"events\":" + n(double(st.events)) + ",\"requests\":" + n(double(st.requests)) +
              ",\"answers\":" + n(double(st.answers)) + ",\"failures\":" + n(double(st.failures)) +
              ",\"bytes\":" + n(double(st.bytes)) + ",\"in_flight\":" + n(st.in_flight) +
              ",\"tiles\":" + n(double(st.tiles)) + ",\"tile_bytes\":" + n(double(st.tile_bytes)) +
              ",\"tile_hits\":" + n(double(st.tile_hits)) + ",\"tile_misses\":" + n(double(st.tile_misses)) +
              ",\"tile_evictions\":" + n(double(st.tile_evictions)) + "}");
}
