// The default JSON front end: a streaming parser written for trace files (the reference is nlohmann's SAX
// parser in import_json.cc; both feed the same Importer, and tests compare the models they build).
//
// [SECTION] Source: the whole text, or gzip inflated piece by piece
// [SECTION] Lexer: whitespace, strings, numbers, skipped and captured values
// [SECTION] Document: the top-level state machine, events, args
// [SECTION] Entry points
//
// Why not simdjson: a Chrome trace is one document of hundreds of MB, and simdjson wants it whole and padded
// (a copy of the file, and of the inflated gzip), while each event is small and only its few known keys
// matter. The lexer below is about a third of an import's time (the event mapping and the builder are the
// rest: docs/benchmarks.md), streams gzip with bounded memory, builds with emcc as is, and accepts exactly
// what nlohmann accepts (strict JSON, UTF-8 checked, no comments) so the two front ends agree on every input.
//
// Resumable units: the parser works on a window of the text. Each unit (one event, one top-level member, one
// punctuation step) is parsed from a committed position; when the window ends inside a unit the window is
// refilled (keeping the unit's bytes) and the unit is parsed again from its start. Nothing reaches the
// Importer before a unit is complete, so a retry has no side effects.

#include <cmath>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <cstring>

#include "import_json_internal.h"
#include "inflate.h"
#include "json_scan.h"
#include "parallel.h"

namespace gt::viewer::json_import {

namespace {

using detail::Load8;
using detail::SpecialBits8;
#if defined(__SSE2__)
using detail::PlainStringLength16;
using detail::SpecialMask16;
#else
using detail::PlainStringLength8;
#endif

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Source: the whole text, or gzip inflated piece by piece
// -----------------------------------------------------------------------------------------------------------------

class Source {
 public:
  explicit Source(std::string_view text) : data_(text.data()), size_(text.size()), done_(true) {}
  Source(std::span<const uint8_t> gz, uint64_t max_inflated)
      : gz_size_(gz.size()), gzip_(true), inflater_(std::make_unique<detail::Inflater>(gz, max_inflated)) {
    status_ = inflater_->status();
    done_ = inflater_->done();
  }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  // The window holds the rest of the text: nothing more will come.
  bool eof() const { return done_ && ahead_.empty(); }
  bool gzip() const { return gzip_; }
  bool truncated() const { return truncated_; }
  const Status& status() const { return status_; }
  uint64_t total() const { return gzip_ ? total_ : size_; }
  // Absolute offset of data()[0] in the text.
  uint64_t base() const { return gzip_ ? total_ - size_ : 0; }
  double progress(size_t pos) const {
    if (!gzip_) return size_ ? double(pos) / double(size_) : 1.0;
    return gz_size_ == 0 ? 1.0 : double(inflater_->consumed()) / double(gz_size_);
  }

  // Drops the bytes before `keep`, inflates more after the rest (at least as much as is kept, so a long
  // unit parsed again costs linear time); what InflateAhead inflated comes first. With `need`, inflates only
  // until the window holds that many bytes (what was inflated ahead may be enough). False when the source
  // had already ended (nothing was moved); true otherwise, even when the stream ended without another byte:
  // the window moved, offsets restart.
  bool More(size_t keep, size_t need = 0) {
    if (eof()) return false;
    std::memmove(buf_.data(), buf_.data() + keep, size_ - keep);
    size_ -= keep;
    const size_t want = std::max<size_t>(kPiece, size_);
    if (buf_.size() < size_ + ahead_.size() + want) buf_.resize(size_ + ahead_.size() + want);
    const size_t before = size_;
    std::memcpy(buf_.data() + size_, ahead_.data(), ahead_.size());
    size_ += ahead_.size();
    ahead_.clear();
    while ((need ? size_ < need : size_ - before < want / 2) && !done_)
      size_ += Inflate(buf_.data() + size_, buf_.size() - size_);
    total_ += size_ - before;
    data_ = buf_.data();
    return true;
  }

  // Inflates up to `bytes` past the window into a buffer of its own, for the next More(): another thread may
  // run it while the window is parsed (the parallel rounds): it touches nothing the parsing threads read.
  void InflateAhead(size_t bytes) {
    if (!gzip_ || done_) return;
    const size_t have = ahead_.size();
    if (have >= bytes) return;
    ahead_.resize(bytes);
    size_t n = have;
    while (n < bytes && !done_) n += Inflate(ahead_.data() + n, bytes - n);
    ahead_.resize(n);
  }

 private:
  static constexpr size_t kPiece = 1 << 20;

  // Same outcomes as Gunzip (load.cc's whole-file path), through the same Inflater: a damaged or short stream
  // keeps what came before, a stream over the limit fails. Returns the bytes written to `out`.
  size_t Inflate(char* out, size_t room) {
    detail::Inflater& z = *inflater_;
    const size_t got = z.Read(out, room);
    if (z.done()) {
      done_ = true;
      truncated_ = z.truncated();
      status_ = z.status();
    }
    return got;
  }

  const char* data_ = nullptr;
  size_t size_ = 0;
  bool done_ = false;  // the inflater has finished (the end, damage, the limit); the text: from the start
  size_t gz_size_ = 0;
  bool gzip_ = false, truncated_ = false;
  std::unique_ptr<detail::Inflater> inflater_;
  std::string buf_;
  std::string ahead_;   // inflated past the window (InflateAhead), taken by the next More()
  uint64_t total_ = 0;  // bytes moved into the window so far
  Status status_ = Status::Ok();
};

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Lexer: whitespace, strings, numbers, skipped and captured values
// -----------------------------------------------------------------------------------------------------------------

inline int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

enum class Fail : uint8_t { kNone, kMore, kError };

#if defined(__GNUC__) || defined(__clang__)
#define GT_LEXER_INLINE inline __attribute__((always_inline))
#else
#define GT_LEXER_INLINE inline
#endif

class Lexer {
 public:
  const char* end = nullptr;  // of the window
  bool eof = false;           // nothing comes after the window
  Fail fail = Fail::kNone;
  const char* error_at = nullptr;
  const char* error = "";

  bool Need(const char* p) {
    if (!eof) {
      fail = Fail::kMore;
      return false;
    }
    return Err(p, "unexpected end of input");
  }
  bool Err(const char* p, const char* what) {
    fail = Fail::kError;
    error_at = p;
    error = what;
    return false;
  }
  // Whitespace, then ':' (compact files have none between a key and its colon: tested first).
  GT_LEXER_INLINE bool Colon(const char*& p) {
    if (p < end && *p == ':') return ++p, true;
    if (!Ws(p)) return false;
    if (*p != ':') return Err(p, "expected ':'");
    ++p;
    return true;
  }
  bool Ws(const char*& p) {
    // One compare for the usual byte (punctuation, a quote, a digit): whitespace is at most ' '.
    while (p < end && static_cast<unsigned char>(*p) <= ' ' &&
           (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
      ++p;
    return p < end || Need(p);
  }

  // String(), inlined for the usual key or value: under 16 bytes, plain ASCII, 16 bytes readable after the
  // quote. Keys and short values are most of an event's strings; the call, the loop set-up and the return
  // through memory were a third of their time.
  GT_LEXER_INLINE bool ShortString(const char*& p, std::string_view* out, std::string* scratch) {
#if defined(__SSE2__)
    const int len = end - p > 16 ? PlainStringLength16(p + 1) : -1;
#else
    const int len = end - p > 8 ? PlainStringLength8(Load8(p + 1)) : -1;  // wasm has no SSE2
#endif
    if (len >= 0) {
      *out = std::string_view(p + 1, size_t(len));
      p += len + 2;
      return true;
    }
    return String(p, out, scratch);
  }

  // p at '"'. *out views the window when the string has no escapes, else `scratch`.
  bool String(const char*& p, std::string_view* out, std::string* scratch) {
    const char* s = p + 1;
    for (;;) {
      bool at_special = false;
#if defined(__SSE2__)
      // 16 bytes at a time: '"', '\\', and (signed compare) control characters and non-ASCII bytes.
      while (end - s >= 16) {
        const unsigned mask = SpecialMask16(s);
        if (mask) {
          s += __builtin_ctz(mask);
          // Not the 8-byte test again on the byte just found: a third of this function's time.
          at_special = true;
          break;
        }
        s += 16;
      }
#endif
      while (!at_special && end - s >= 8) {
        if (SpecialBits8(Load8(s))) break;
        s += 8;
      }
      if (s >= end) return Need(s);
      const unsigned char c = static_cast<unsigned char>(*s);
      if (c == '"') {
        *out = std::string_view(p + 1, s - p - 1);
        p = s + 1;
        return true;
      }
      if (c == '\\') break;
      if (c < 0x20) return Err(s, "control character in a string");
      if (c >= 0x80) {
        if (!Utf8(s)) return false;
      } else {
        ++s;
      }
    }
    scratch->assign(p + 1, s);
    while (true) {
      if (s >= end) return Need(s);
      const unsigned char c = static_cast<unsigned char>(*s);
      if (c == '"') break;
      if (c < 0x20) return Err(s, "control character in a string");
      if (c >= 0x80) {
        const char* from = s;
        if (!Utf8(s)) return false;
        scratch->append(from, s);
        continue;
      }
      if (c != '\\') {
        *scratch += char(c);
        ++s;
        continue;
      }
      if (end - s < 2) return Need(s);
      const char e = s[1];
      s += 2;
      switch (e) {
        case '"':
          *scratch += '"';
          break;
        case '\\':
          *scratch += '\\';
          break;
        case '/':
          *scratch += '/';
          break;
        case 'b':
          *scratch += '\b';
          break;
        case 'f':
          *scratch += '\f';
          break;
        case 'n':
          *scratch += '\n';
          break;
        case 'r':
          *scratch += '\r';
          break;
        case 't':
          *scratch += '\t';
          break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(s, &cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (end - s < 2) return Need(s);
            if (s[0] != '\\' || s[1] != 'u') return Err(s, "a high surrogate without its low surrogate");
            s += 2;
            uint32_t lo;
            if (!Hex4(s, &lo)) return false;
            if (lo < 0xDC00 || lo > 0xDFFF) return Err(s, "a high surrogate without its low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return Err(s, "a low surrogate without its high surrogate");
          }
          AppendUtf8(*scratch, cp);
          break;
        }
        default:
          return Err(s - 1, "invalid escape in a string");
      }
    }
    *out = *scratch;
    p = s + 1;
    return true;
  }

  // JSON's number grammar; the text as written, "-0" as "0" (what nlohmann reports for that integer).
  bool Number(const char*& p, std::string_view* out) {
    const char* s = p;
    if (*s == '-') ++s;
    if (s >= end) return Need(s);
    const char* int_start = s;
    if (*s == '0') {
      ++s;
    } else if (*s >= '1' && *s <= '9') {
      s = detail::SkipDigits(s + 1, end);
    } else {
      return Err(s, "invalid number");
    }
    const size_t int_digits = s - int_start;
    bool is_float = false;
    bool nonzero_mantissa = !(int_digits == 1 && *int_start == '0');
    if (s < end && *s == '.') {
      is_float = true;
      ++s;
      if (s >= end) return Need(s);
      if (!(*s >= '0' && *s <= '9')) return Err(s, "invalid number");
      const char* frac = s;
      s = detail::SkipDigits(s, end);
      for (const char* d = frac; d < s && !nonzero_mantissa; ++d) nonzero_mantissa = *d != '0';
    }
    int64_t exp = 0;
    bool has_exp = false;
    if (s < end && (*s == 'e' || *s == 'E')) {
      is_float = has_exp = true;
      ++s;
      if (s >= end) return Need(s);
      bool neg = false;
      if (*s == '+' || *s == '-') neg = *s++ == '-';
      if (s >= end) return Need(s);
      if (!(*s >= '0' && *s <= '9')) return Err(s, "invalid number");
      for (; s < end && *s >= '0' && *s <= '9'; ++s) exp = std::min<int64_t>(exp * 10 + (*s - '0'), 1000000);
      if (neg) exp = -exp;
    }
    if (s >= end && !eof) return Need(s);  // the number may go on in the next window
    std::string_view text(p, s - p);
    // nlohmann rejects a number whose double is infinite: decide cheaply when the magnitude is clear.
    if (nonzero_mantissa && (static_cast<int64_t>(int_digits) + (has_exp ? exp : 0) > 300 ||
                             (is_float && has_exp && exp > 280))) {
      std::string copy(text);
      if (!std::isfinite(std::strtod(copy.c_str(), nullptr))) return Err(p, "number overflow");
    }
    *out = text == "-0" ? std::string_view("0") : text;
    p = s;
    return true;
  }

  // A string, number or literal; *is_string tells which.
  bool Scalar(const char*& p, std::string_view* out, bool* is_string, std::string* scratch) {
    *is_string = false;
    switch (*p) {
      case '"':
        *is_string = true;
        return ShortString(p, out, scratch);
      case 't':
        return Literal(p, "true", out);
      case 'f':
        return Literal(p, "false", out);
      case 'n':
        return Literal(p, "null", out);
      default:
        if (*p == '-' || (*p >= '0' && *p <= '9')) return Number(p, out);
        return Err(p, "unexpected character");
    }
  }

  // p at '{' or '['. Validates the value; with `cap`, appends its JSON text the way the reference front end
  // captures it. Iterative: nesting depth is bounded by memory only, as in nlohmann.
  bool Container(const char*& p, std::string* cap) {
    stack_.clear();
    std::string_view sv;
    bool is_str;
    bool first = true;  // right after an opening bracket: the closing one may follow
    stack_.push_back(*p);
    if (cap) *cap += *p;
    ++p;
    for (;;) {
      if (!Ws(p)) return false;
      const bool obj = stack_.back() == '{';
      if (first && *p == (obj ? '}' : ']')) goto close;
      if (obj) {
        if (*p != '"') return Err(p, "expected a key");
        if (!String(p, &sv, &scratch_)) return false;
        if (cap) {
          AppendCaptureString(*cap, sv);
          *cap += ':';
        }
        if (!Ws(p)) return false;
        if (*p != ':') return Err(p, "expected ':'");
        ++p;
        if (!Ws(p)) return false;
      }
      if (*p == '{' || *p == '[') {
        stack_.push_back(*p);
        if (cap) *cap += *p;
        ++p;
        first = true;
        continue;
      }
      if (!Scalar(p, &sv, &is_str, &scratch_)) return false;
      if (cap) {
        if (is_str)
          AppendCaptureString(*cap, sv);
        else
          cap->append(sv);
      }
      for (;;) {  // after a value: ',' or the closing bracket
        if (!Ws(p)) return false;
        if (*p == ',') {
          ++p;
          if (cap) *cap += ',';
          first = false;
          break;
        }
        if (*p != (stack_.back() == '{' ? '}' : ']')) return Err(p, "expected ',' or a closing bracket");
      close:
        if (cap) *cap += *p;
        ++p;
        stack_.pop_back();
        if (stack_.empty()) return true;
      }
    }
  }

  // Container(p, cap), faster for the usual value: validated first, then its bytes copied without the
  // whitespace between tokens, which is the captured text unless a string has an escape (re-encoded) or a
  // number is "-0" (written "0"); those take Container's way.
  bool Capture(const char*& p, std::string* cap) {
    const char* start = p;
    if (!Container(p, nullptr)) return false;
    const size_t at = cap->size();
    cap->resize(at + (p - start));
    char* o = cap->data() + at;
    bool in_string = false;
    for (const char* q = start; q < p; ++q) {
      const char c = *q;
      if (in_string) {
        if (c == '\\') goto slow;
        in_string = c != '"';
        *o++ = c;
        continue;
      }
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
      // A number's '-' is followed by a digit and the number by more of the value (its closing bracket).
      if (c == '-' && q[1] == '0' && q[2] != '.' && q[2] != 'e' && q[2] != 'E') goto slow;
      in_string = c == '"';
      *o++ = c;
    }
    cap->resize(o - cap->data());
    return true;
  slow:
    cap->resize(at);
    p = start;
    return Container(p, cap);
  }

  // Any value, validated and dropped.
  bool Skip(const char*& p) {
    if (*p == '{' || *p == '[') return Container(p, nullptr);
    std::string_view sv;
    bool is_str;
    return Scalar(p, &sv, &is_str, &scratch_);
  }

 private:
  bool Literal(const char*& p, std::string_view word, std::string_view* out) {
    for (size_t i = 0; i < word.size(); ++i) {
      if (p + i >= end) return Need(p + i);
      if (p[i] != word[i]) return Err(p + i, "invalid literal");
    }
    *out = word;
    p += word.size();
    return true;
  }
  bool Hex4(const char*& s, uint32_t* cp) {
    if (end - s < 4) return Need(s);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = Hex(s[i]);
      if (h < 0) return Err(s + i, "invalid \\u escape");
      v = v << 4 | uint32_t(h);
    }
    *cp = v;
    s += 4;
    return true;
  }
  // One well-formed UTF-8 sequence (RFC 3629: no overlongs, no surrogates, at most U+10FFFF).
  bool Utf8(const char*& s) {
    const auto b = [&](int i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char c = b(0);
    int n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return Err(s, "invalid UTF-8");
    }
    for (int i = 1; i < n; ++i) {
      if (s + i >= end) return Need(s + i);
      const unsigned char x = b(i);
      if (x < (i == 1 ? lo : 0x80) || x > (i == 1 ? hi : 0xBF)) return Err(s + i, "invalid UTF-8");
    }
    s += n;
    return true;
  }

  std::vector<char> stack_;
  std::string scratch_;
};

}  // namespace

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Document: the top-level state machine, events, args
// -----------------------------------------------------------------------------------------------------------------

// One event object (p at '{') into *ev, delivered to nobody: the sequential path hands it to the Importer,
// the parallel path keeps it in a slice's batch. The lexer's window (end, eof) is the caller's.
struct EventParser {
  Lexer lx;
  std::string key_scratch, val_scratch;

  bool Event(const char*& p, JEvent& ev) {
    ev.Clear();
    ++p;
    if (!lx.Ws(p)) return false;
    if (*p == '}') {
      ++p;
      return true;
    }
    std::string_view key, val;
    bool is_str;
    for (;;) {
      if (!lx.Ws(p)) return false;
      if (*p != '"') return lx.Err(p, "expected a key");
      if (!lx.ShortString(p, &key, &key_scratch)) return false;
      if (!lx.Colon(p)) return false;
      if (!lx.Ws(p)) return false;
      if (*p == '{' && key == "args") {
        if (!Args(p, ev)) return false;
      } else if (*p == '{' || *p == '[') {
        if (!lx.Container(p, nullptr)) return false;
      } else {
        if (!lx.Scalar(p, &val, &is_str, &val_scratch)) return false;
        SetEventField(ev, key, val, is_str);
      }
      if (!lx.Ws(p)) return false;
      if (*p == ',') {
        ++p;
        continue;
      }
      if (*p != '}') return lx.Err(p, "expected ',' or '}'");
      ++p;
      return true;
    }
  }

  bool Args(const char*& p, JEvent& ev) {
    ++p;
    if (!lx.Ws(p)) return false;
    if (*p == '}') {
      ++p;
      return true;
    }
    std::string_view key, val;
    bool is_str;
    for (;;) {
      if (!lx.Ws(p)) return false;
      if (*p != '"') return lx.Err(p, "expected a key");
      if (!lx.ShortString(p, &key, &key_scratch)) return false;
      if (!lx.Colon(p)) return false;
      if (!lx.Ws(p)) return false;
      if (*p == '{' || *p == '[') {
        // Captured straight into the args line (a failed unit is parsed again from its start).
        if (!lx.Capture(p, &ev.args.BeginValue(key))) return false;
        ev.args.EndValue(kArgTextLimit);
      } else {
        if (!lx.Scalar(p, &val, &is_str, &val_scratch)) return false;
        ev.args.emplace_back(key, val.substr(0, kArgTextLimit));
      }
      if (!lx.Ws(p)) return false;
      if (*p == ',') {
        ++p;
        continue;
      }
      if (*p != '}') return lx.Err(p, "expected ',' or '}'");
      ++p;
      return true;
    }
  }
};

struct FastJsonImport::Impl {
  enum class State : uint8_t {
    kBegin,
    kObjFirst,     // after the top '{': a key or '}'
    kObjKey,       // after ',': a key
    kObjNext,      // after a member: ',' or '}'
    kEventsFirst,  // after the events' '[': an element or ']'
    kEventsElem,   // after ',': an element
    kEventsNext,   // after an element: ',' or ']'
    kEnd,          // after the top value: whitespace only
    kDone,
  };

  Impl(Source s, ModelBuilder& b) : src(std::move(s)), builder(b), imp(b) {}
  Impl(std::span<const uint8_t> gz, uint64_t max, ModelBuilder& b) : src(gz, max), builder(b), imp(b) {}

  Source src;
  ModelBuilder& builder;
  Importer imp;
  EventParser ep;
  Lexer& lx = ep.lx;
  State state = State::kBegin;
  bool events_in_object = false;
  bool kineto = false;
  size_t pos = 0;  // committed offset in the window
  bool failed = false;
  uint64_t error_offset = 0;
  std::string error;
  JEvent ev;  // the sequential path's event, parsed and mapped in turn
  std::string cap, hash_scratch;

  // Parallel slices of the event array (SetParallel): a round parses slices of the text on the pool's
  // threads, each from a guessed element start; a slice counts only when the one before it stopped exactly
  // there, so the events are those the sequential parse finds, and they are handed to the Importer in file
  // order while the next round is parsed.
  struct Slice {
    EventParser ep;
    std::vector<JEvent> events;  // reused round to round
    std::string scratch;
    size_t n = 0;
    const char* begin = nullptr;  // an element start (guessed, but for the round's first slice)
    const char* limit = nullptr;  // the slice stops at the first element that starts here or later
    const char* stop = nullptr;   // where it stopped: an element start (after ',' and whitespace)
    const char* after = nullptr;  // kArrayEnd: after the ']'
    enum class End : uint8_t { kLimit, kArrayEnd, kFailed } end = End::kLimit;
  };
  detail::ThreadPool* pool = nullptr;
  size_t slice_bytes = 0;
  std::vector<Slice> slice_sets[2];
  size_t round = 0;
  std::vector<Slice>* pending = nullptr;  // parsed and confirmed, not yet handed to the Importer
  size_t pending_slices = 0;

  bool Round();
  void MapPending();
  static void ParseSlice(Slice& s, const char* end, bool eof);

  bool Unit(const char*& p);
  bool Member(const char*& p);
  bool Element(const char*& p);
  void Run(uint64_t budget);
};

// A member of the top object: "traceEvents" opens the event array, "deviceProperties" is captured and read,
// the rest is validated and dropped.
bool FastJsonImport::Impl::Member(const char*& p) {
  if (*p != '"') return lx.Err(p, "expected a key");
  std::string_view key;
  if (!lx.String(p, &key, &ep.key_scratch)) return false;
  if (!lx.Ws(p)) return false;
  if (*p != ':') return lx.Err(p, "expected ':'");
  ++p;
  if (!lx.Ws(p)) return false;
  if (*p == '[' && key == "traceEvents") {
    ++p;
    events_in_object = true;
    state = State::kEventsFirst;
    return true;
  }
  if (*p == '[' && key == "deviceProperties") {
    kineto = true;  // set on the opening bracket, as the reference does
    cap.clear();
    if (!lx.Container(p, &cap)) return false;
    imp.OnDeviceProperties(cap);
  } else if (*p == '{' || *p == '[') {
    if (!lx.Container(p, nullptr)) return false;
  } else {
    if (!lx.Skip(p)) return false;
    if (IsKinetoKey(key)) kineto = true;
  }
  state = State::kObjNext;
  return true;
}

bool FastJsonImport::Impl::Element(const char*& p) {
  if (*p == '{') {
    if (!ep.Event(p, ev)) return false;
    Importer::HashArgs(ev, &hash_scratch);
    imp.OnEvent(ev);
  } else if (!lx.Skip(p)) {
    return false;
  }
  state = State::kEventsNext;
  return true;
}

bool FastJsonImport::Impl::Unit(const char*& p) {
  switch (state) {
    case State::kBegin: {
      if (src.base() + (p - src.data()) == 0) {  // a UTF-8 byte order mark, skipped as nlohmann does
        if (lx.end - p < 3 && !lx.eof) return lx.Need(p);
        if (lx.end - p >= 3 && std::memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;
      }
      if (!lx.Ws(p)) return false;
      if (*p == '{') {
        ++p;
        state = State::kObjFirst;
      } else if (*p == '[') {
        ++p;
        events_in_object = false;
        state = State::kEventsFirst;
      } else {
        if (!lx.Skip(p)) return false;
        state = State::kEnd;
      }
      return true;
    }
    case State::kObjFirst:
      if (!lx.Ws(p)) return false;
      if (*p == '}') {
        ++p;
        state = State::kEnd;
        return true;
      }
      return Member(p);
    case State::kObjKey:
      if (!lx.Ws(p)) return false;
      return Member(p);
    case State::kObjNext:
      if (!lx.Ws(p)) return false;
      if (*p == ',') {
        ++p;
        state = State::kObjKey;
        return true;
      }
      if (*p == '}') {
        ++p;
        state = State::kEnd;
        return true;
      }
      return lx.Err(p, "expected ',' or '}'");
    case State::kEventsFirst:
      if (!lx.Ws(p)) return false;
      if (*p == ']') {
        ++p;
        state = events_in_object ? State::kObjNext : State::kEnd;
        return true;
      }
      return Element(p);
    case State::kEventsElem:
      if (!lx.Ws(p)) return false;
      return Element(p);
    case State::kEventsNext:
      if (!lx.Ws(p)) return false;
      if (*p == ',') {
        ++p;
        state = State::kEventsElem;
        return true;
      }
      if (*p == ']') {
        ++p;
        state = events_in_object ? State::kObjNext : State::kEnd;
        return true;
      }
      return lx.Err(p, "expected ',' or ']'");
    case State::kEnd:
      while (p < lx.end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
      // A NUL ends the input, as for the reference parser: a file whose tail is zeros (preallocated, or cut
      // by a crash) lost nothing after a complete document.
      if (p < lx.end && *p == '\0') {
        state = State::kDone;
        return true;
      }
      if (p < lx.end) return lx.Err(p, "unexpected content after the JSON value");
      if (!lx.eof) return lx.Need(p);
      state = State::kDone;
      return true;
    case State::kDone:
      return true;
  }
  return true;
}

void FastJsonImport::Impl::Run(uint64_t budget) {
  const uint64_t start_abs = src.base() + pos;
  while (state != State::kDone && !failed) {
    if (src.base() + pos - start_abs >= budget) break;
    if (pool && state == State::kEventsElem && Round()) continue;
    MapPending();  // before anything else reaches the Importer
    lx.end = src.data() + src.size();
    lx.eof = src.eof();
    lx.fail = Fail::kNone;
    const char* p = src.data() + pos;
    if (Unit(p)) {
      pos = p - src.data();
      continue;
    }
    if (lx.fail == Fail::kMore) {
      if (src.More(pos)) {
        pos = 0;
        continue;
      }
      lx.eof = true;  // the source ended (or failed): parse the unit once more to report where
      continue;
    }
    failed = true;
    error_offset = src.base() + (lx.error_at - src.data());
    error = lx.error;
  }
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Parallel slices of the event array
// -----------------------------------------------------------------------------------------------------------------

namespace {

bool IsWs(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// The first '{' at or after t that follows "}" "," (whitespace between) after `floor`: likely an event's
// start. A wrong guess (inside a string, a nested value) costs that slice's work only.
const char* GuessElementStart(const char* floor, const char* t, const char* end) {
  while (t < end) {
    const char* q = static_cast<const char*>(std::memchr(t, '{', end - t));
    if (!q) return nullptr;
    t = q + 1;
    const char* b = q - 1;
    while (b > floor && IsWs(*b)) --b;
    if (b <= floor || *b != ',') continue;
    --b;
    while (b > floor && IsWs(*b)) --b;
    if (*b == '}') return q;
  }
  return nullptr;
}

}  // namespace

void FastJsonImport::Impl::ParseSlice(Slice& s, const char* end, bool eof) {
  Lexer& lx = s.ep.lx;
  lx.end = end;
  lx.eof = eof;
  lx.fail = Fail::kNone;
  s.n = 0;
  const char* p = s.begin;
  s.stop = p;
  if (!lx.Ws(p)) {
    s.end = Slice::End::kFailed;
    return;
  }
  for (;;) {
    s.stop = p;  // an element start
    if (p >= s.limit) {
      s.end = Slice::End::kLimit;
      return;
    }
    const size_t n = s.n;
    bool ok;
    if (*p == '{') {
      if (s.n == s.events.size()) s.events.emplace_back();
      ok = s.ep.Event(p, s.events[s.n]);
      if (ok) Importer::HashArgs(s.events[s.n++], &s.scratch);
    } else {
      ok = lx.Skip(p);
    }
    if (ok && lx.Ws(p)) {
      if (*p == ',') {
        ++p;
        if (lx.Ws(p)) continue;
      } else if (*p == ']') {
        s.after = p + 1;
        s.end = Slice::End::kArrayEnd;
        return;
      }
    }
    // This element (or what follows it) did not parse here: the sequential path parses it again from
    // s.stop, to the same outcome, with the window refilled or the error reported where it lies.
    s.n = n;
    s.end = Slice::End::kFailed;
    return;
  }
}

void FastJsonImport::Impl::MapPending() {
  if (!pending) return;
  for (size_t k = 0; k < pending_slices; ++k) {
    Slice& s = (*pending)[k];
    for (size_t i = 0; i < s.n; ++i) imp.OnEvent(s.events[i]);
  }
  pending = nullptr;
  pending_slices = 0;
}

// One round from pos (state kEventsElem). False when the window is too short for slices (the sequential
// path takes over), or when the round's first element failed (it parses that element sequentially).
bool FastJsonImport::Impl::Round() {
  const size_t threads = pool->size();
  const size_t want = threads * 2 * slice_bytes;
  // gzip: a window long enough for a round (the pending events are copies: moving the window is safe),
  // mostly from what the last round inflated ahead.
  while (!src.eof() && src.size() - pos < want + slice_bytes) {
    if (!src.More(pos, want + slice_bytes)) break;
    pos = 0;
  }
  const char* from = src.data() + pos;
  const char* end = src.data() + src.size();
  const size_t avail = end - from;
  if (avail < 2 * slice_bytes) return false;
  const size_t span = std::min(avail, want);
  const char* round_end = from + span;
  std::vector<Slice>& cur = slice_sets[round & 1];
  const size_t slots = threads * 2;
  if (cur.size() < slots) cur.resize(slots);
  size_t m = 0;
  cur[m++].begin = from;
  for (size_t k = 1; k < slots; ++k) {
    const char* g = GuessElementStart(from, from + span * k / slots, round_end);
    if (!g || g <= cur[m - 1].begin) continue;
    cur[m++].begin = g;
  }
  for (size_t k = 0; k < m; ++k) cur[k].limit = k + 1 < m ? cur[k + 1].begin : round_end;
  const bool eof = src.eof();
  // gzip: the next round's text is inflated meanwhile (zlib is serial: on the caller's thread between rounds
  // it left the other threads idle).
  const size_t ahead = src.gzip() && !eof ? 1 : 0;
  pool->For(m + 1 + ahead, [&](size_t i, unsigned) {
    if (i == 0)
      MapPending();  // the previous round's events, in file order, while this one is parsed
    else if (i <= ahead)
      src.InflateAhead(want);
    else
      ParseSlice(cur[i - 1 - ahead], end, eof);
  });
  // Confirm the slices in order: each must start where the one before it stopped.
  const size_t before = pos;
  size_t confirmed = 0;
  for (size_t k = 0; k < m; ++k) {
    const Slice& s = cur[k];
    if (k > 0 && !(cur[k - 1].end == Slice::End::kLimit && cur[k - 1].stop == s.begin)) break;
    ++confirmed;
    pos = s.stop - src.data();
    if (s.end == Slice::End::kArrayEnd) {
      pos = s.after - src.data();
      state = events_in_object ? State::kObjNext : State::kEnd;
      break;
    }
    if (s.end == Slice::End::kFailed) break;
  }
  pending = &cur;
  pending_slices = confirmed;
  ++round;
  return pos != before || state != State::kEventsElem;
}

// -----------------------------------------------------------------------------------------------------------------
// [SECTION] Entry points
// -----------------------------------------------------------------------------------------------------------------

void AddGzipTruncatedLoss(ModelBuilder& b) {
  b.AddLoss("gzip_truncated", Severity::kDataLoss, 1,
            "the gzip stream ends early or is damaged; only the part before that was read");
}

FastJsonImport::FastJsonImport(std::string_view text, ModelBuilder& b)
    : impl_(std::make_unique<Impl>(Source(text), b)) {}
FastJsonImport::FastJsonImport(std::span<const uint8_t> gz, uint64_t max_inflated, ModelBuilder& b)
    : impl_(std::make_unique<Impl>(gz, max_inflated, b)) {}
FastJsonImport::~FastJsonImport() = default;

Status FastJsonImport::Prime() {
  Source& s = impl_->src;
  if (!s.gzip()) return Status::Ok();
  // Enough text to sniff: past leading whitespace and a byte order mark.
  auto blank = [&] {
    for (size_t i = 0; i < s.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(s.data()[i]);
      if (!(c == ' ' || c == '\n' || c == '\r' || c == '\t' ||
            (i < 3 && (c == 0xEF || c == 0xBB || c == 0xBF))))
        return false;
    }
    return true;
  };
  while (blank() && s.More(0)) {
  }
  if (!s.status().ok()) return s.status();
  return Status::Ok();
}

std::string_view FastJsonImport::Head() const {
  return std::string_view(impl_->src.data(), impl_->src.size());
}

void FastJsonImport::SetParallel(detail::ThreadPool* pool, size_t slice_bytes) {
  if (!pool || pool->size() < 2) return;
  // gzip too: a round inflates the next one's text while it is parsed (Source::InflateAhead). Inflating
  // between rounds on the caller's thread had made two threads slower than one on a 2-core VM.
  impl_->pool = pool;
  impl_->slice_bytes = slice_bytes ? slice_bytes : size_t{32} << 10;  // the batches stay in cache
}

void FastJsonImport::Step(uint64_t budget_bytes) {
  impl_->Run(budget_bytes);
}

bool FastJsonImport::done() const {
  return impl_->failed || impl_->state == Impl::State::kDone;
}

double FastJsonImport::progress() const {
  return done() ? 1.0 : impl_->src.progress(impl_->pos);
}

uint64_t FastJsonImport::events() const {
  return impl_->imp.accepted;
}

uint64_t FastJsonImport::text_bytes() const {
  return impl_->src.total();
}

Status FastJsonImport::Finish() {
  Impl& I = *impl_;
  while (!done()) I.Run(UINT64_MAX);
  I.MapPending();
  if (I.failed)  // the rest of a damaged text still counts in the size (as when inflated whole)
    while (I.src.More(I.src.size())) {
    }
  if (!I.src.status().ok()) return I.src.status();
  if (I.src.truncated()) AddGzipTruncatedLoss(I.builder);
  if (I.failed) {
    if (I.imp.accepted == 0)
      return Corrupt("JSON parse error at byte " + std::to_string(I.error_offset) + ": " + I.error);
    I.builder.AddLoss("json_truncated", Severity::kDataLoss, 1,
                      "the JSON ends early or is damaged at byte " + std::to_string(I.error_offset) +
                          "; events after that point are missing");
  }
  if (I.imp.accepted == 0)
    return InvalidArgument("no trace events found (expected Chrome trace or Kineto JSON)");
  return I.imp.Finish(I.kineto);
}

}  // namespace gt::viewer::json_import

namespace gt::viewer {

Status ImportJson(std::string_view text, ModelBuilder& builder) {
  json_import::FastJsonImport imp(text, builder);
  return imp.Finish();
}

}  // namespace gt::viewer
