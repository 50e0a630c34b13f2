// gzip / zlib inflation of a whole file with a size cap (the reference JSON parser's input, gzipped traces of
// other formats); truncated or damaged streams keep what was inflated. The streaming JSON parser reads the
// same text through the same Inflater.
#include "gt/viewer/load.h"
#include "inflate.h"

namespace gt::viewer {

StatusOr<std::string> Gunzip(std::span<const uint8_t> bytes, uint64_t max_bytes, bool* truncated) {
  *truncated = false;
  std::string out;
  detail::Inflater z(bytes, max_bytes);
  const size_t chunk = std::min<uint64_t>(std::max<uint64_t>(bytes.size() * 4, 1 << 16), 64ull << 20);
  while (!z.done()) {
    const size_t old = out.size();
    const size_t grow = std::min<uint64_t>(chunk, std::max<uint64_t>(max_bytes - old, 1));
    out.resize(old + grow);
    out.resize(old + z.Read(out.data() + old, grow));
  }
  if (!z.status().ok()) return z.status();
  *truncated = z.truncated();
  out.shrink_to_fit();
  return out;
}

}  // namespace gt::viewer
