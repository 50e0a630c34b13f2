// Cubins kept for PC sampling's source correlation: copied at MODULE_LOADED (the driver's image may go away),
// keyed by CUPTI's cubin CRC (the key PC records carry), asked once per sampled PC for its file and line with
// cuptiGetSassToSourceCorrelation. Both CUPTI calls are host-only: tests run them on a cubin built by nvcc,
// without a GPU (tests/collector/cubin_lines_test.cc).
//
// Process exit: CUPTI's cubin parser builds function-local statics the first time it parses a
// cubin and registers their destructors with __cxa_atexit then, i.e. after the injection's own exit handler,
// so exit() destroys them while the flush thread may still look lines up. CubinLines therefore (re)registers
// an exit fence after each cubin's first lookup: it runs before whatever that lookup registered, waits for
// the lookup in flight and refuses every later one (no line: counted in refused_at_exit()). A process whose
// first lookup happens inside exit() (a short app, looked up at the final drain) keeps its lines: CUPTI's
// statics are then built after every pending handler was registered, and outlive them. Before it closes, the
// fence runs the owner's before-exit hook once (SetBeforeExitHook): PC sampling takes what the GPU sampled up
// to then and looks its lines up while the parser is alive, so only PCs sampled later go without lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "decode/pc_sampling_decode.h"

namespace gt::inject {

class CubinLines {
 public:
  explicit CubinLines(size_t max_bytes) : max_bytes_(max_bytes) {}
  // Copies the cubin unless one with the same CRC is kept or the copy would pass max_bytes (then counted in
  // skipped()). Returns false when CUPTI cannot compute the CRC (not a cubin).
  bool Keep(const void* cubin, size_t size, uint64_t* crc = nullptr);
  // False when the cubin is unknown, the function is not in it, the cubin has no line info (-lineinfo), or
  // the process is exiting (see the top of this file).
  bool Resolve(uint64_t crc, const std::string& function, uint64_t pc_offset, decode::SourceLine* out) const;
  size_t count() const;
  size_t bytes() const;
  uint64_t skipped() const;
  uint64_t refused_at_exit() const;  // lookups refused because exit() had begun
  // Process-wide, like CUPTI's statics: called once, from the exit fence, before it refuses lookups (without
  // the fence held: the hook may Resolve). nullptr clears it.
  static void SetBeforeExitHook(void (*hook)());

 private:
  struct Kept {
    std::vector<uint8_t> bytes;
    mutable bool parsed = false;  // CUPTI was asked about it (and may have built statics doing so)
  };
  mutable std::mutex mu_;  // Keep runs in the app's module-load callbacks, Resolve on the flush thread
  size_t max_bytes_;
  size_t bytes_ = 0;
  uint64_t skipped_ = 0;
  mutable uint64_t refused_at_exit_ = 0;
  std::map<uint64_t, Kept> cubins_;
};

}  // namespace gt::inject
