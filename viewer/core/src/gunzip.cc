// gzip / zlib inflation with a size cap; truncated or damaged streams keep what was inflated.
#include <zlib.h>

#include "gt/viewer/load.h"

namespace gt::viewer {

StatusOr<std::string> Gunzip(std::span<const uint8_t> bytes, uint64_t max_bytes, bool* truncated) {
  *truncated = false;
  std::string out;
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) return Internal("zlib: inflateInit2 failed");  // 32: gzip or zlib
  zs.next_in = const_cast<Bytef*>(bytes.data());
  size_t remaining = bytes.size();
  constexpr size_t kIn = 1u << 30;  // avail_in is 32-bit
  zs.avail_in = static_cast<uInt>(std::min(remaining, kIn));
  remaining -= zs.avail_in;
  Status status = Status::Ok();
  size_t chunk = std::min<uint64_t>(std::max<uint64_t>(bytes.size() * 4, 1 << 16), 64ull << 20);
  while (true) {
    if (out.size() >= max_bytes) {
      status = ResourceExhausted("gzip: inflated size exceeds the limit of " + std::to_string(max_bytes) +
                                 " bytes");
      break;
    }
    size_t old = out.size();
    size_t grow = std::min<uint64_t>(chunk, max_bytes - old);
    out.resize(old + grow);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + old);
    zs.avail_out = static_cast<uInt>(grow);
    int rc = inflate(&zs, Z_NO_FLUSH);
    out.resize(old + (grow - zs.avail_out));
    if (zs.avail_in == 0 && remaining > 0) {
      zs.avail_in = static_cast<uInt>(std::min(remaining, kIn));
      remaining -= zs.avail_in;
    }
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members are one file (what `cat a.gz b.gz` produces).
      if (zs.avail_in == 0 && remaining == 0) break;
      const Bytef* next = zs.next_in;
      uInt avail = zs.avail_in;
      if (inflateReset(&zs) != Z_OK) {
        status = Internal("zlib: inflateReset failed");
        break;
      }
      zs.next_in = const_cast<Bytef*>(next);
      zs.avail_in = avail;
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && remaining == 0) {  // input ended mid-stream
      *truncated = true;
      break;
    }
    if (rc == Z_BUF_ERROR) continue;  // needs more output space
    // Z_DATA_ERROR, Z_NEED_DICT, Z_MEM_ERROR: keep what came before the damage.
    if (out.empty()) status = Corrupt(std::string("gzip: ") + (zs.msg ? zs.msg : "corrupt stream"));
    *truncated = true;
    break;
  }
  inflateEnd(&zs);
  if (!status.ok()) return status;
  out.shrink_to_fit();
  return out;
}

}  // namespace gt::viewer
