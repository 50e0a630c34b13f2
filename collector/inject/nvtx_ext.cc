// NVTX's payload extension: NCCL (2.19+) ends every API range it attached a payload to with
// nvtxRangePopPayload, which CUPTI does not implement (its documentation lists the payload range calls as
// unsupported). Without a handler the pop is a no-op, the range never ends, and ncclCommInitRankConfig spans
// the whole run. The injection library is the NVTX injection (NVTX_INJECTION64_PATH), so NVTX asks it for the
// extension's handlers: CUPTI's go in first, and the payload pops and ends it left empty become the plain
// domain pop and end, which CUPTI records. The payload itself is dropped (CUPTI cannot take it there).
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <dlfcn.h>

#include <cupti.h>

namespace gt::inject {
namespace {

int NVTX_API PopPayload(nvtxDomainHandle_t domain, const nvtxPayloadData_t*, size_t) {
  return nvtxDomainRangePop(domain);
}

void NVTX_API EndPayload(nvtxDomainHandle_t domain, nvtxRangeId_t id, const nvtxPayloadData_t*, size_t) {
  nvtxDomainRangeEnd(domain, id);
}

}  // namespace
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
  fill(NVTX3EXT_CBID_nvtxRangePopPayload, reinterpret_cast<intptr_t>(&gt::inject::PopPayload));
  fill(NVTX3EXT_CBID_nvtxRangeEndPayload, reinterpret_cast<intptr_t>(&gt::inject::EndPayload));
  return 1;  // 0 would turn every call of the extension into a no-op
}
