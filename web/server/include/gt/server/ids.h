// Trace ids and tokens. An id is HMAC-SHA256(server secret, content) cut to 160 bits and spelled in lowercase
// base32: the same bytes always get the same id on one server (dedup), yet nobody without the secret can
// compute or guess the id of a trace they have not seen. Delete tokens are 128 random bits; only their
// SHA-256 is stored.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "gt/status.h"

namespace gt::server {

inline constexpr size_t kTraceIdChars = 32;  // 160 bits / 5 bits per base32 character

// Lowercase RFC 4648 base32 without padding.
std::string Base32(std::span<const uint8_t> bytes);
std::string HexLower(std::span<const uint8_t> bytes);
// True only for exactly kTraceIdChars characters of [a-z2-7]: everything else is answered 404 before any
// store access, so odd names ("..", "%2f", absolute paths) never reach the file system.
bool IsValidTraceId(std::string_view id);
// The file name an uploader gave a trace, made safe to store and to send back in Content-Disposition: the
// last path component, only [A-Za-z0-9._+-] and spaces kept (others become '_'), at most 100 bytes, never a
// dot first. "" when nothing usable is left (the id names the trace then).
std::string SanitizeTraceName(std::string_view name);

StatusOr<std::string> RandomBytes(size_t n);
// 128 random bits, base32 (26 characters).
StatusOr<std::string> NewDeleteToken();
std::string Sha256Hex(std::string_view data);
// Compares without leaking where the first difference is.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// Streaming HMAC-SHA256 over an upload body.
class TraceIdHasher {
 public:
  explicit TraceIdHasher(std::string_view secret);
  ~TraceIdHasher();
  TraceIdHasher(const TraceIdHasher&) = delete;
  TraceIdHasher& operator=(const TraceIdHasher&) = delete;
  void Update(const char* data, size_t size);
  std::string FinishId();  // the trace id; the hasher is spent afterwards

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string TraceIdFor(std::string_view secret, std::string_view content);

}  // namespace gt::server
