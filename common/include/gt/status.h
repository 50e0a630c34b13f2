// Two error tiers: GT_ASSERT for bugs (aborts), Status / StatusOr for bad input (returned, never thrown).
// Nothing in common/ throws, so the same code is safe across the wasm boundary.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace gt {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,  // bad flag, bad parameter
  kNotFound,         // file, key or id that does not exist
  kCorrupt,          // bytes that fail validation (bad magic, checksum, out-of-range field)
  kTruncated,        // input ended inside a structure
  kUnsupported,      // valid but not handled (future major version, unknown compression)
  kIoError,          // the OS said no
  kResourceExhausted,// limits hit (size caps, memory budgets)
  kInternal,         // a dependency failed in a way input cannot explain
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "corrupt: chunk 12 at offset 4096: checksum mismatch"
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status Corrupt(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }
inline Status Truncated(std::string m) { return {StatusCode::kTruncated, std::move(m)}; }
inline Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}            // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {       // NOLINT: implicit by design
    if (status_.ok()) status_ = Internal("StatusOr constructed from an OK status without a value");
  }
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

[[noreturn]] void AssertFail(const char* expr, const char* file, int line, const char* msg);

}  // namespace gt

#define GT_ASSERT(expr) ((expr) ? (void)0 : ::gt::AssertFail(#expr, __FILE__, __LINE__, nullptr))
#define GT_ASSERT_MSG(expr, msg) ((expr) ? (void)0 : ::gt::AssertFail(#expr, __FILE__, __LINE__, (msg)))

#define GT_RETURN_IF_ERROR(expr)         \
  do {                                   \
    ::gt::Status gt_status_ = (expr);    \
    if (!gt_status_.ok()) return gt_status_; \
  } while (0)
