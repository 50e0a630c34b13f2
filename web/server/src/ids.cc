#include "gt/server/ids.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

namespace gt::server {

std::string Base32(std::span<const uint8_t> bytes) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::string out;
  out.reserve((bytes.size() * 8 + 4) / 5);
  uint32_t buffer = 0;
  int bits = 0;
  for (uint8_t b : bytes) {
    buffer = (buffer << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out.push_back(kAlphabet[(buffer >> (bits - 5)) & 31]);
      bits -= 5;
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(buffer << (5 - bits)) & 31]);
  return out;
}

std::string HexLower(std::span<const uint8_t> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

std::string SanitizeTraceName(std::string_view name) {
  if (size_t slash = name.find_last_of("/\\"); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  std::string out;
  for (char c : name) {
    if (out.size() >= 100) break;
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-' || c == '+' || c == ' ';
    out.push_back(ok ? c : '_');
  }
  while (!out.empty() && (out.front() == '.' || out.front() == ' ')) out.erase(out.begin());
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.find_first_not_of("._ -") == std::string::npos) out.clear();
  return out;
}

bool IsValidTraceId(std::string_view id) {
  if (id.size() != kTraceIdChars) return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= '2' && c <= '7'))) return false;
  return true;
}

StatusOr<std::string> RandomBytes(size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    return Internal("the system random number generator failed");
  return out;
}

StatusOr<std::string> NewDeleteToken() {
  auto bytes = RandomBytes(16);
  if (!bytes.ok()) return bytes.status();
  return Base32({reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()});
}

std::string Sha256Hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  GT_ASSERT(EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) == 1);
  return HexLower({md, len});
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Length is not secret (tokens have fixed lengths); the content is.
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

struct TraceIdHasher::Impl {
  EVP_MAC* mac = nullptr;
  EVP_MAC_CTX* ctx = nullptr;
};

TraceIdHasher::TraceIdHasher(std::string_view secret) : impl_(std::make_unique<Impl>()) {
  impl_->mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  GT_ASSERT_MSG(impl_->mac != nullptr, "OpenSSL has no HMAC");
  impl_->ctx = EVP_MAC_CTX_new(impl_->mac);
  GT_ASSERT(impl_->ctx != nullptr);
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end()};
  GT_ASSERT(EVP_MAC_init(impl_->ctx, reinterpret_cast<const unsigned char*>(secret.data()), secret.size(),
                         params) == 1);
}

TraceIdHasher::~TraceIdHasher() {
  EVP_MAC_CTX_free(impl_->ctx);
  EVP_MAC_free(impl_->mac);
}

void TraceIdHasher::Update(const char* data, size_t size) {
  GT_ASSERT(EVP_MAC_update(impl_->ctx, reinterpret_cast<const unsigned char*>(data), size) == 1);
}

std::string TraceIdHasher::FinishId() {
  unsigned char md[EVP_MAX_MD_SIZE];
  size_t len = 0;
  GT_ASSERT(EVP_MAC_final(impl_->ctx, md, &len, sizeof(md)) == 1);
  GT_ASSERT(len >= 20);
  return Base32({md, 20});
}

std::string TraceIdFor(std::string_view secret, std::string_view content) {
  TraceIdHasher hasher(secret);
  hasher.Update(content.data(), content.size());
  return hasher.FinishId();
}

}  // namespace gt::server
