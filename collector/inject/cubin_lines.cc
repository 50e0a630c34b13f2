#include "inject/cubin_lines.h"

#include <cupti_pcsampling.h>

#include <cstdlib>

namespace gt::inject {

using decode::JoinSourcePath;
using decode::SourceLine;

bool CubinLines::Keep(const void* cubin, size_t size, uint64_t* crc_out) {
  if (!cubin || size == 0) return false;
  CUpti_GetCubinCrcParams p{};
  p.size = CUpti_GetCubinCrcParamsSize;
  p.cubin = cubin;
  p.cubinSize = size;
  if (cuptiGetCubinCrc(&p) != CUPTI_SUCCESS) return false;
  if (crc_out) *crc_out = p.cubinCrc;
  std::lock_guard<std::mutex> lock(mu_);
  if (cubins_.count(p.cubinCrc)) return true;
  if (bytes_ + size > max_bytes_) {
    ++skipped_;
    return true;
  }
  const auto* b = static_cast<const uint8_t*>(cubin);
  cubins_[p.cubinCrc].assign(b, b + size);
  bytes_ += size;
  return true;
}

bool CubinLines::Resolve(uint64_t crc, const std::string& function, uint64_t pc, SourceLine* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cubins_.find(crc);
  if (it == cubins_.end() || function.empty()) return false;
  CUpti_GetSassToSourceCorrelationParams p{};
  p.size = CUpti_GetSassToSourceCorrelationParamsSize;
  p.cubin = it->second.data();
  p.cubinSize = it->second.size();
  p.functionName = function.c_str();
  p.pcOffset = pc;
  if (cuptiGetSassToSourceCorrelation(&p) != CUPTI_SUCCESS) return false;
  out->file = JoinSourcePath(p.dirName, p.fileName);
  out->line = p.lineNumber;
  std::free(p.fileName);  // CUPTI allocates both with malloc and leaves them to the caller
  std::free(p.dirName);
  return out->known();
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

}  // namespace gt::inject
