// Inflater: zlib, or ISA-L's igzip opened at run time, behind one contract (inflate.h). Both keep what came
// before damage, read concatenated members as one text, and tell a stream cut short from one damaged before
// any text.
#include "inflate.h"

#include <zlib.h>

#include <algorithm>
#include <string>

#if GT_HAVE_ISAL
#include <dlfcn.h>
#include <isa-l/igzip_lib.h>
#endif

namespace gt::viewer::detail {
namespace {

constexpr size_t kMaxIo = size_t{1} << 30;  // both libraries count bytes in 32 bits

#if GT_HAVE_ISAL
// igzip's inflate entry points from libisal.so.2 (Debian's libisal2), or null when the machine lacks it.
struct IsalApi {
  void (*init)(inflate_state*);
  void (*reset)(inflate_state*);
  int (*inflate)(inflate_state*);
};
const IsalApi* Isal() {
  static const IsalApi* api = []() -> const IsalApi* {
    void* lib = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    static IsalApi a;
    a.init = reinterpret_cast<void (*)(inflate_state*)>(dlsym(lib, "isal_inflate_init"));
    a.reset = reinterpret_cast<void (*)(inflate_state*)>(dlsym(lib, "isal_inflate_reset"));
    a.inflate = reinterpret_cast<int (*)(inflate_state*)>(dlsym(lib, "isal_inflate"));
    return a.init && a.reset && a.inflate ? &a : nullptr;
  }();
  return api;
}

// zlib's inflateInit2(15 + 32) takes either wrapper at each member; igzip is told which one comes.
uint32_t WrapperAt(const uint8_t* p, size_t n) {
  return n >= 2 && p[0] == 0x1f && p[1] == 0x8b ? ISAL_GZIP : ISAL_ZLIB;
}

const char* IsalError(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK:
      return "invalid deflate block";
    case ISAL_INVALID_SYMBOL:
      return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK:
      return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER:
      return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD:
      return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM:
      return "incorrect data check";
    case ISAL_NEED_DICT:
      return "needs a preset dictionary";
    default:
      return "corrupt stream";
  }
}
#endif

}  // namespace

struct Inflater::State {
  bool zinit = false;
  z_stream zs{};
#if GT_HAVE_ISAL
  const IsalApi* isal = nullptr;
  inflate_state st;
#endif
};

Inflater::Inflater(std::span<const uint8_t> in, uint64_t max_bytes, Backend backend)
    : state_(std::make_unique<State>()), in_(in), max_(max_bytes) {
  State& s = *state_;
#if GT_HAVE_ISAL
  if (backend == Backend::kFastest && (s.isal = Isal())) {
    s.isal->init(&s.st);
    s.st.next_in = const_cast<uint8_t*>(in.data());
    s.st.avail_in = static_cast<uint32_t>(std::min(in.size(), kMaxIo));
    s.st.crc_flag = WrapperAt(in.data(), in.size());
    return;
  }
#else
  (void)backend;
#endif
  if (inflateInit2(&s.zs, 15 + 32) != Z_OK) {  // 32: gzip or zlib header
    status_ = Internal("zlib: inflateInit2 failed");
    done_ = true;
    return;
  }
  s.zinit = true;
  s.zs.next_in = const_cast<Bytef*>(in.data());
  s.zs.avail_in = static_cast<uInt>(std::min(in.size(), kMaxIo));
}

Inflater::~Inflater() {
  if (state_->zinit) inflateEnd(&state_->zs);
}

const char* Inflater::backend() const {
#if GT_HAVE_ISAL
  if (state_->isal) return "isa-l";
#endif
  return "zlib";
}

uint64_t Inflater::consumed() const {
#if GT_HAVE_ISAL
  if (state_->isal) return uint64_t(state_->st.next_in - in_.data());
#endif
  return state_->zinit ? uint64_t(state_->zs.next_in - in_.data()) : 0;
}

void Inflater::Fail(const char* what) {
  if (produced_ == 0) status_ = Corrupt(std::string("gzip: ") + what);
  truncated_ = true;
  done_ = true;
}

size_t Inflater::Read(char* out, size_t room) {
  if (done_ || room == 0) return 0;
  if (produced_ >= max_) {  // the limit reached and the stream goes on
    status_ =
        ResourceExhausted("gzip: inflated size exceeds the limit of " + std::to_string(max_) + " bytes");
    done_ = true;
    return 0;
  }
  room = std::min<uint64_t>(room, max_ - produced_);
  State& s = *state_;
#if GT_HAVE_ISAL
  if (s.isal) {
    inflate_state& st = s.st;
    st.next_out = reinterpret_cast<uint8_t*>(out);
    st.avail_out = static_cast<uint32_t>(std::min(room, kMaxIo));
    const uint32_t before = st.avail_out;
    const int rc = s.isal->inflate(&st);
    const size_t got = before - st.avail_out;
    produced_ += got;
    if (rc < 0 || rc == ISAL_NEED_DICT) {
      Fail(IsalError(rc));
      return got;
    }
    const size_t left = in_.size() - size_t(st.next_in - in_.data());
    if (st.avail_in == 0) st.avail_in = static_cast<uint32_t>(std::min(left, kMaxIo));
    if (st.block_state == ISAL_BLOCK_FINISH) {
      if (left == 0) {
        done_ = true;
        return got;
      }
      // Another member follows (concatenated files are one file); trailing junk fails its header check.
      uint8_t* next = st.next_in;
      const uint32_t avail = st.avail_in;
      s.isal->reset(&st);
      st.next_in = next;
      st.avail_in = avail;
      st.crc_flag = WrapperAt(next, left);
      return got;
    }
    // igzip returns when the input is used up, the output is full, or on an error: room left over with all
    // the input read means the stream stops mid-way.
    if (left == 0 && st.avail_out > 0) {
      truncated_ = true;
      done_ = true;
    }
    return got;
  }
#endif
  z_stream& zs = s.zs;
  zs.next_out = reinterpret_cast<Bytef*>(out);
  zs.avail_out = static_cast<uInt>(std::min(room, kMaxIo));
  const uInt before = zs.avail_out;
  const int rc = inflate(&zs, Z_NO_FLUSH);
  const size_t got = before - zs.avail_out;
  produced_ += got;
  if (zs.avail_in == 0)
    zs.avail_in = static_cast<uInt>(std::min(in_.size() - size_t(zs.next_in - in_.data()), kMaxIo));
  const bool input_done = zs.avail_in == 0;
  if (rc == Z_STREAM_END) {
    if (input_done) {
      done_ = true;
      return got;
    }
    // Another member follows (concatenated files are one file); trailing junk fails its header check.
    const Bytef* next = zs.next_in;
    const uInt avail = zs.avail_in;
    if (inflateReset(&zs) != Z_OK) {
      status_ = Internal("zlib: inflateReset failed");
      done_ = true;
      return got;
    }
    zs.next_in = const_cast<Bytef*>(next);
    zs.avail_in = avail;
    return got;
  }
  if (rc == Z_OK) return got;
  if (rc == Z_BUF_ERROR && input_done) {  // input ended mid-stream
    truncated_ = true;
    done_ = true;
    return got;
  }
  if (rc == Z_BUF_ERROR) return got;  // needs more output space
  // Z_DATA_ERROR, Z_NEED_DICT, Z_MEM_ERROR: keep what came before the damage.
  Fail(zs.msg ? zs.msg : "corrupt stream");
  return got;
}

}  // namespace gt::viewer::detail
