// libFuzzer: the NVTX payload decoder (collector/decode/nvtx_payload.cc) with schemas and payload both taken
// from the input, the way a hostile app could register and push them. The first bytes describe up to 4
// schemas and 2 enums (ids in a small range, so entries refer to each other: nesting, cycles, enum-or-schema
// clashes), the rest is the payload, decoded against every schema id. Nothing may crash or read out of
// bounds; refusals are fine. Seeds (tests/fuzz/corpus/fuzz_nvtx_payload) are NCCL's AllReduce and
// CommInitRank layouts.
#include <cstdint>
#include <span>
#include <vector>

#include "decode/nvtx_payload.h"

namespace {

struct Input {
  const uint8_t* p;
  size_t n;
  uint8_t Byte() {
    if (!n) return 0;
    --n;
    return *p++;
  }
};

uint64_t Id(uint8_t b) {
  return gt::decode::nvtxp::kSchemaIdStaticStart + (b % 8);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gt::decode;
  Input in{data, size};
  PayloadRegistry r;
  const uint8_t schemas = in.Byte() % 5, enums = in.Byte() % 3;
  for (uint8_t s = 0; s < schemas; ++s) {
    PayloadSchema schema;
    schema.id = Id(in.Byte());
    const uint8_t size_byte = in.Byte();
    schema.static_size = size_byte == 0xFF ? ~uint64_t{0} : size_byte;
    const uint8_t entries = in.Byte() % 9;
    for (uint8_t e = 0; e < entries; ++e) {
      PayloadEntry entry;
      const uint8_t flags = in.Byte();
      if (flags & 1) entry.flags |= nvtxp::kFlagHide;
      if (flags & 2) entry.flags |= nvtxp::kFlagArrayFixedSize;
      if (flags & 4) entry.flags |= uint64_t{1} << (flags >> 3);  // any other flag
      const uint8_t type = in.Byte();
      entry.type = type >= 200 ? Id(type) : type;
      const uint8_t len = in.Byte();
      entry.array_length = len == 0xFF ? ~uint64_t{0} : len;
      const uint8_t off = in.Byte();
      entry.offset = off == 0xFF ? ~uint64_t{0} - 3 : off;
      entry.name = "e" + std::to_string(e);
      schema.entries.push_back(entry);
    }
    (void)r.AddSchema(1, std::move(schema));
  }
  for (uint8_t k = 0; k < enums; ++k) {
    PayloadEnum e;
    e.id = Id(in.Byte());
    e.size = in.Byte() % 10;
    const uint8_t values = in.Byte() % 8;
    for (uint8_t v = 0; v < values; ++v) e.values.push_back({"v" + std::to_string(v), in.Byte()});
    (void)r.AddEnum(1, std::move(e));
  }
  const std::span<const uint8_t> payload(in.p, in.n);
  std::vector<PayloadField> fields;
  for (uint8_t id = 0; id < 8; ++id) (void)r.Decode(1, Id(id), payload, &fields);
  return 0;
}
