// NVTX's payload extension. Two jobs:
//  1. Ranges end. NCCL (2.19+) ends every API range it attached a payload to with nvtxRangePopPayload,
//     which CUPTI does not implement (its documentation lists the payload range calls as unsupported).
//     Without a handler the pop is a no-op, the range never ends, and ncclCommInitRankConfig spans the whole
//     run. The injection library is the NVTX injection (NVTX_INJECTION64_PATH), so NVTX asks it for the
//     extension's handlers: CUPTI's go in first, and the payload pops and ends it left empty become the plain
//     domain pop and end, which CUPTI records.
//  2. Payloads kept. The schema and enum registrations are observed (forwarded to CUPTI's handler when it
//     has one) and copied into a decode::PayloadRegistry; NCCL pushes its ranges with nvtxDomainRangePushEx
//     and an event attribute of payloadType NVTX_PAYLOAD_TYPE_EXT whose ullValue points at an array of
//     nvtxPayloadData_t (count in reserved0; NCCL's nvtx3.hpp sets 1). CUPTI's NVTX callback delivers that
//     call synchronously, so OnNvtxPayloadPush copies and decodes the bytes there, and the decoder pairs the
//     fields with CUPTI's range record when it arrives (decode::PayloadJoiner).
// Tested on synthetic payloads built like NCCL's (tests/collector/nvtx_payload_test.cc); not yet on a real
// NCCL run.
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <ctime>

#include <cupti.h>
// CUPTI's NVTX parameter structs need the NVTX types above.
#include <generated_nvtx_meta.h>

#include "decode/cupti_decode.h"
#include "decode/nvtx_payload.h"
#include "inject/injection.h"

namespace gt::inject {
namespace {

static_assert(decode::nvtxp::kPayloadTypeExt == NVTX_PAYLOAD_TYPE_EXT);
static_assert(decode::nvtxp::kSchemaIdStaticStart == NVTX_PAYLOAD_SCHEMA_ID_STATIC_START);
static_assert(decode::nvtxp::kSchemaTypeStatic == NVTX_PAYLOAD_SCHEMA_TYPE_STATIC);
static_assert(decode::nvtxp::kFlagHide == NVTX_PAYLOAD_ENTRY_FLAG_HIDE);
static_assert(decode::nvtxp::kFlagArrayFixedSize == NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_FIXED_SIZE);
// decode/nvtx_payload.cc restates the entry types it reads; the ones NCCL uses, checked here.
static_assert(NVTX_PAYLOAD_ENTRY_TYPE_INT == 5 && NVTX_PAYLOAD_ENTRY_TYPE_UINT64 == 18 &&
              NVTX_PAYLOAD_ENTRY_TYPE_SIZE == 22 && NVTX_PAYLOAD_ENTRY_TYPE_CHAR == 1 &&
              NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE == 20 && NVTX_PAYLOAD_ENTRY_TYPE_FLOAT32 == 43);

decode::PayloadRegistry& Registry() {
  static auto* r = new decode::PayloadRegistry();  // never destroyed: NVTX may call during exit
  return *r;
}

using SchemaRegisterFn = uint64_t(NVTX_API*)(nvtxDomainHandle_t, const nvtxPayloadSchemaAttr_t*);
using EnumRegisterFn = uint64_t(NVTX_API*)(nvtxDomainHandle_t, const nvtxPayloadEnumAttr_t*);
std::atomic<SchemaRegisterFn> g_cupti_schema_register{nullptr};
std::atomic<EnumRegisterFn> g_cupti_enum_register{nullptr};
std::atomic<uint64_t> g_next_dynamic_id{NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START};

std::string Copy(const char* s) {
  if (!s) return {};
  return std::string(s, strnlen(s, decode::PayloadRegistry::kMaxNameBytes));
}

uint64_t NVTX_API SchemaRegister(nvtxDomainHandle_t domain, const nvtxPayloadSchemaAttr_t* attr) {
  uint64_t id = 0;
  if (auto cupti = g_cupti_schema_register.load()) id = cupti(domain, attr);
  if (!attr) return id;
  const uint64_t mask = attr->fieldMask;
  if (!id)
    id = (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID) ? attr->schemaId : g_next_dynamic_id.fetch_add(1);
  decode::PayloadSchema s;
  s.id = id;
  if (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME) s.name = Copy(attr->name);
  if (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE) s.type = attr->type;
  if (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE) s.static_size = attr->payloadStaticSize;
  const size_t n = (mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES) ? attr->numEntries : 0;
  if ((mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES) && attr->entries &&
      n <= decode::PayloadRegistry::kMaxEntries)
    for (size_t i = 0; i < n; ++i) {
      const nvtxPayloadSchemaEntry_t& e = attr->entries[i];
      s.entries.push_back({e.flags, e.type, Copy(e.name), e.arrayOrUnionDetail, e.offset});
    }
  (void)Registry().AddSchema(reinterpret_cast<uintptr_t>(domain), std::move(s));  // refusals are counted
  return id;
}

uint64_t NVTX_API EnumRegister(nvtxDomainHandle_t domain, const nvtxPayloadEnumAttr_t* attr) {
  uint64_t id = 0;
  if (auto cupti = g_cupti_enum_register.load()) id = cupti(domain, attr);
  if (!attr) return id;
  const uint64_t mask = attr->fieldMask;
  if (!id)
    id = (mask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID) ? attr->schemaId : g_next_dynamic_id.fetch_add(1);
  decode::PayloadEnum e;
  e.id = id;
  if (mask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_NAME) e.name = Copy(attr->name);
  if (mask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE) e.size = attr->sizeOfEnum;
  const size_t n = (mask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES) ? attr->numEntries : 0;
  if ((mask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_ENTRIES) && attr->entries &&
      n <= decode::PayloadRegistry::kMaxEnumValues)
    for (size_t i = 0; i < n; ++i) e.values.push_back({Copy(attr->entries[i].name), attr->entries[i].value});
  (void)Registry().AddEnum(reinterpret_cast<uintptr_t>(domain), std::move(e));
  return id;
}

int NVTX_API PopPayload(nvtxDomainHandle_t domain, const nvtxPayloadData_t*, size_t) {
  return nvtxDomainRangePop(domain);
}

void NVTX_API EndPayload(nvtxDomainHandle_t domain, nvtxRangeId_t id, const nvtxPayloadData_t*, size_t) {
  nvtxDomainRangeEnd(domain, id);
}

}  // namespace

void EnableNvtxPayloads(Injection& inj) {
  cuptiEnableCallback(1, inj.subscriber, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxDomainRangePushEx);
}

namespace {

// What a refused push looked like, for the loss's first instance (see OnNvtxPayloadPush).
std::string PushContext(const nvtxEventAttributes_t* attr, const nvtxPayloadData_t* array, size_t index,
                        size_t count) {
  int local = 0;
  char b[400];
  const auto* first = reinterpret_cast<const uint64_t*>(array);
  const auto* entry = reinterpret_cast<const uint64_t*>(array + index);
  std::snprintf(b, sizeof b,
                "push: payloadType %d reserved0 %d, entry %zu of %zu, attr %p, array %p, this frame %p, "
                "message type %d value %#llx, category %u; entry 0 words %#llx %#llx %#llx; this entry's "
                "%#llx %#llx %#llx",
                int(attr->payloadType), int(attr->reserved0), index, count, static_cast<const void*>(attr),
                static_cast<const void*>(array), static_cast<void*>(&local), int(attr->messageType),
                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(attr->message.registered)),
                unsigned(attr->category), static_cast<unsigned long long>(first[0]),
                static_cast<unsigned long long>(first[1]), static_cast<unsigned long long>(first[2]),
                static_cast<unsigned long long>(entry[0]), static_cast<unsigned long long>(entry[1]),
                static_cast<unsigned long long>(entry[2]));
  return b;
}

// Decodes one push's payloads (the app's own attributes, valid for the duration of the call).
void RecordPayloadPush(Injection& inj, nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr) {
  if (!attr || attr->payloadType != NVTX_PAYLOAD_TYPE_EXT || attr->payload.ullValue == 0 || !inj.decoder)
    return;
  // In the clock CUPTI stamps its records with: its own (shifted later by the decoder), or CLOCK_MONOTONIC
  // when gtrace registered CUPTI's timestamp callback (GTRACE_CLOCK=monotonic; then the shift is 0).
  uint64_t stamp = 0;
  if (inj.clock_shifted) {
    if (cuptiGetTimestamp(&stamp) != CUPTI_SUCCESS) return;
  } else {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    stamp = uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
  }
  // NVTX lets one event carry several payloads; NCCL attaches one. Each is decoded; fields are concatenated.
  const auto* data_array = reinterpret_cast<const nvtxPayloadData_t*>(attr->payload.ullValue);
  const size_t count = attr->reserved0 > 0 && attr->reserved0 <= 8 ? size_t(attr->reserved0) : 1;
  decode::PendingPayload pending;
  pending.tid = static_cast<uint32_t>(gettid());
  pending.at = int64_t(stamp);
  for (size_t i = 0; i < count; ++i) {
    const nvtxPayloadData_t& d = data_array[i];
    const uint64_t dom = reinterpret_cast<uintptr_t>(domain);
    if (!d.payload || !Registry().Accepts(dom, d.schemaId, d.size)) {
      std::vector<decode::PayloadField> none;
      (void)Registry().Decode(dom, d.schemaId, {}, &none,
                              PushContext(attr, data_array, i, count));  // counts it
      continue;
    }
    // Copied first: the decoder never reads app memory it was not given bytes of.
    uint8_t bytes[decode::PayloadRegistry::kMaxPayloadBytes];
    std::memcpy(bytes, d.payload, d.size);
    (void)Registry().Decode(dom, d.schemaId, std::span<const uint8_t>(bytes, d.size), &pending.fields);
  }
  if (!pending.fields.empty()) inj.decoder->nvtx_payloads().Add(std::move(pending));
}

}  // namespace

void OnNvtxPayloadPush(Injection& inj, const void* data) {
  // On 2 H200s (NCCL 2.28.9, PyTorch 2.11) the pushes of NCCL's small main-thread all-reduces and broadcasts
  // carry attributes that live on the heap (NCCL builds its own on the stack) whose payload array points at a
  // stack slot holding a saved frame (a stack address, a return address, 0): a pointer left from a frame that
  // had returned. The entries are therefore read only where their schema is registered with the entry's size
  // (PayloadRegistry::Accepts) and counted as nvtx_payloads_unknown_schema otherwise; who builds those
  // attributes is not known yet. The profiler plugin identifies those collectives instead.
  const auto* cb = static_cast<const CUpti_NvtxData*>(data);
  if (!cb || !cb->functionParams) return;
  const auto* p = static_cast<const nvtxDomainRangePushEx_params*>(cb->functionParams);
  RecordPayloadPush(inj, p->domain, p->core.eventAttrib);
}

void ReportNvtxPayloads(Injection& inj) {
  const decode::PayloadStats s = Registry().stats();
  // One named loss per cause, each saying its first instance, so a real app's refusals can be diagnosed.
  if (s.unknown_schema)
    AddLoss(inj, "nvtx_payloads_unknown_schema", static_cast<uint8_t>(Severity::kWarning), s.unknown_schema,
            "NVTX extended payloads (NCCL's) of a schema never registered; first: " + s.first_unknown);
  if (s.refused)
    AddLoss(inj, "nvtx_payloads_refused", static_cast<uint8_t>(Severity::kWarning), s.refused,
            "NVTX extended payloads (NCCL's) not decoded; first: " + s.first_refusal);
  if (s.bad_registrations)
    AddLoss(inj, "nvtx_payload_schemas_refused", static_cast<uint8_t>(Severity::kWarning),
            s.bad_registrations,
            "NVTX payload schemas or enums not registered; first: " + s.first_bad_registration);
  if (const uint64_t unpaired =
          inj.decoder->nvtx_payloads().dropped() + inj.decoder->nvtx_payloads().pending())
    AddLoss(inj, "nvtx_payloads_unpaired", static_cast<uint8_t>(Severity::kInfo), unpaired,
            "decoded NVTX payloads whose range CUPTI did not report (or not within 50 us of the push)");
}

}  // namespace gt::inject

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(
    nvtxExtModuleInfo_t* info) {
  if (!info) return 0;
  int ok = 1;
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &self) && self.dli_fname)
    if (void* cupti = dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD)) {
      using Init = int (*)(nvtxExtModuleInfo_t*);
      if (auto forward = reinterpret_cast<Init>(dlsym(cupti, "InitializeInjectionNvtxExtension")))
        ok = forward(info);
    }
  if (info->moduleId != NVTX_EXT_PAYLOAD_MODULEID || !info->segments || info->segmentsCount == 0) return ok;
  nvtxExtModuleSegment_t& segment = info->segments[0];
  if (!segment.functionSlots) return ok;
  auto fill = [&](size_t slot, intptr_t fn) {
    if (slot < segment.slotCount && segment.functionSlots[slot] == 0) segment.functionSlots[slot] = fn;
  };
  // Registrations: observed, and forwarded to CUPTI's handler where it installed one.
  auto wrap = [&](size_t slot, intptr_t fn, auto* saved) {
    if (slot >= segment.slotCount) return;
    using Fn = typename std::remove_reference_t<decltype(*saved)>::value_type;
    if (segment.functionSlots[slot]) saved->store(reinterpret_cast<Fn>(segment.functionSlots[slot]));
    segment.functionSlots[slot] = fn;
  };
  wrap(NVTX3EXT_CBID_nvtxPayloadSchemaRegister, reinterpret_cast<intptr_t>(&gt::inject::SchemaRegister),
       &gt::inject::g_cupti_schema_register);
  wrap(NVTX3EXT_CBID_nvtxPayloadEnumRegister, reinterpret_cast<intptr_t>(&gt::inject::EnumRegister),
       &gt::inject::g_cupti_enum_register);
  fill(NVTX3EXT_CBID_nvtxRangePopPayload, reinterpret_cast<intptr_t>(&gt::inject::PopPayload));
  fill(NVTX3EXT_CBID_nvtxRangeEndPayload, reinterpret_cast<intptr_t>(&gt::inject::EndPayload));
  return 1;  // 0 would turn every call of the extension into a no-op
}
