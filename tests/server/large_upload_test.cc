// An upload larger than the old 512 MiB default cap streams to disk: the server's anonymous memory (its heap,
// what a buffered body would occupy) stays small however large the body is.
#include <fstream>
#include <thread>

#include "server_fixture.h"

using namespace gt::server;
using namespace gt::server::testing;

namespace {

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The body's bytes are generated where they are sent (the test holds none of them): word i is SplitMix(i).
void FillBody(uint64_t offset, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t at = offset + i;
    out[i] = uint8_t(SplitMix(at / 8) >> (8 * (at % 8)));
  }
}

uint64_t Fold(uint64_t h, const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// Resident anonymous memory of this process (kB in /proc/self/status), in bytes.
uint64_t RssAnonBytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  uint64_t kb = 0;
  while (in >> key) {
    if (key == "RssAnon:") {
      in >> kb;
      return kb * 1024;
    }
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

}  // namespace

TEST_CASE("an upload over 512 MiB streams to disk with bounded server memory", "[server][large]") {
  constexpr uint64_t kBody = 600ull << 20;
  TestServer ts;
  ts.options.max_upload = 1ull << 30;
  // Instead of a 600 MiB trace (minutes to generate), a validator that reads every stored byte: the server
  // received the whole body, in order, and nothing else.
  uint64_t seen_bytes = 0, seen_hash = 0;
  ts.options.validator = [&](std::span<const uint8_t> bytes) -> gt::StatusOr<Validation> {
    seen_bytes = bytes.size();
    seen_hash = Fold(0xcbf29ce484222325ull, bytes.data(), bytes.size());
    return Validation{};
  };
  ts.Start();

  std::atomic<bool> done{false};
  std::atomic<uint64_t> peak{0};
  const uint64_t base = RssAnonBytes();
  std::thread sampler([&] {
    while (!done) {
      peak = std::max<uint64_t>(peak, RssAnonBytes());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  uint64_t sent_hash = 0xcbf29ce484222325ull;
  auto c = ts.Client();
  std::vector<uint8_t> chunk(1 << 20);
  auto r = c.Post(
      "/api/traces", size_t(kBody),
      [&](size_t offset, size_t length, httplib::DataSink& sink) {
        const size_t n = std::min(length, chunk.size());
        FillBody(offset, chunk.data(), n);
        sent_hash = Fold(sent_hash, chunk.data(), n);
        return sink.write(reinterpret_cast<const char*>(chunk.data()), n);
      },
      "application/octet-stream");
  done = true;
  sampler.join();
  REQUIRE(r);
  CHECK(r->status == 201);
  CHECK(seen_bytes == kBody);
  CHECK(seen_hash == sent_hash);
  // The stored file is the body.
  CHECK(ts.StoredTraces() == 1);
  for (auto& e : std::filesystem::recursive_directory_iterator(ts.store_dir.path / "traces"))
    if (e.path().extension() == ".gtrace") CHECK(e.file_size() == kBody);
  // A buffered body would add 600 MiB; streaming adds the staging buffer and the connection's.
  const uint64_t grew = peak > base ? peak - base : 0;
  INFO("anonymous memory grew by " << grew / 1024 << " KiB during a " << (kBody >> 20) << " MiB upload");
  CHECK(grew < (64ull << 20));
  ts.Stop();
  CHECK(ts.TempFiles() == 0);
}

TEST_CASE("the default upload cap admits multi-GB traces", "[server]") {
  CHECK(ServerOptions{}.max_upload >= (4ull << 30));
}
