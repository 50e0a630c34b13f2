#include "inject/cubin_lines.h"

#include <cupti_pcsampling.h>
#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace gt::inject {

using decode::JoinSourcePath;
using decode::SourceLine;

namespace {

// The exit fence (see cubin_lines.h). Seen with CUPTI 13.0 (H200 crashes, and the same frames reproduced
// without a GPU in tests/collector/cubin_lines_test.cc): cuptiGetSassToSourceCorrelation parses a new cubin
// through a function-local std::vector<std::string> that it builds, and registers for destruction, on its
// first parse. exit() ran that destructor before the injection's handler stopped the flush thread, whose next
// parse read the freed strings: SIGBUS or SIGSEGV inside libcupti. Process-wide, like CUPTI's statics.
struct ExitFence {
  std::mutex mu;        // held around every source-correlation call, so closing waits for the call in flight
  bool closed = false;  // exit() has begun: no more CUPTI source-correlation calls
  std::atomic<void (*)()> before_close{nullptr};  // the owner's last lookups (taken once)
};

ExitFence& Fence() {
  static ExitFence* const fence = [] {
    // A child forked while another thread held mu (the flush thread, mid-lookup) must not inherit it locked.
    pthread_atfork(nullptr, nullptr, [] { new (&Fence().mu) std::mutex(); });
    return new ExitFence();  // never destroyed: used by exit handlers
  }();
  return *fence;
}

void CloseFence() {
  ExitFence& f = Fence();
  // A hook's lookups of new cubins may make CUPTI register more destructors, and ArmFence with them: those
  // run next (exit() runs what is registered during it), find the hook taken, and close.
  if (void (*hook)() = f.before_close.exchange(nullptr)) hook();
  std::lock_guard<std::mutex> lock(f.mu);
  f.closed = true;
}

// Called with the fence held, right after a CUPTI call that may have registered exit-time destructors: exit()
// runs handlers in reverse order of registration, so this one runs before those. Registering again for every
// new cubin covers statics that only some cubins' parses build; it is idempotent and there are tens of
// cubins.
void ArmFence() {
  std::atexit(CloseFence);
}

}  // namespace

bool CubinLines::Keep(const void* cubin, size_t size, uint64_t* crc_out) {
  if (!cubin || size == 0) return false;
  CUpti_GetCubinCrcParams p{};
  p.size = CUpti_GetCubinCrcParamsSize;
  p.cubin = cubin;
  p.cubinSize = size;
  // No fence: in CUPTI 13.0 the CRC is a leaf computation that touches no statics, and module loads (its
  // callers) must not wait for a lookup in flight.
  if (cuptiGetCubinCrc(&p) != CUPTI_SUCCESS) return false;
  if (crc_out) *crc_out = p.cubinCrc;
  std::lock_guard<std::mutex> lock(mu_);
  if (cubins_.count(p.cubinCrc)) return true;
  if (bytes_ + size > max_bytes_) {
    ++skipped_;
    return true;
  }
  const auto* b = static_cast<const uint8_t*>(cubin);
  cubins_[p.cubinCrc].bytes.assign(b, b + size);
  bytes_ += size;
  return true;
}

bool CubinLines::Resolve(uint64_t crc, const std::string& function, uint64_t pc, SourceLine* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cubins_.find(crc);
  if (it == cubins_.end() || function.empty()) return false;
  CUpti_GetSassToSourceCorrelationParams p{};
  p.size = CUpti_GetSassToSourceCorrelationParamsSize;
  p.cubin = it->second.bytes.data();
  p.cubinSize = it->second.bytes.size();
  p.functionName = function.c_str();
  p.pcOffset = pc;
  CUptiResult r;
  {
    ExitFence& f = Fence();
    std::lock_guard<std::mutex> fence(f.mu);
    if (f.closed) {
      ++refused_at_exit_;
      return false;
    }
    r = cuptiGetSassToSourceCorrelation(&p);
    if (!it->second.parsed) {
      it->second.parsed = true;
      ArmFence();
    }
  }
  if (r != CUPTI_SUCCESS) return false;
  out->file = JoinSourcePath(p.dirName, p.fileName);
  out->line = p.lineNumber;
  std::free(p.fileName);  // CUPTI allocates both with malloc and leaves them to the caller
  std::free(p.dirName);
  return out->known();
}

void CubinLines::SetBeforeExitHook(void (*hook)()) {
  Fence().before_close.store(hook);
}

size_t CubinLines::count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cubins_.size();
}

size_t CubinLines::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

uint64_t CubinLines::skipped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return skipped_;
}

uint64_t CubinLines::refused_at_exit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_at_exit_;
}

}  // namespace gt::inject
