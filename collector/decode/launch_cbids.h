// The driver API calls that launch one kernel, for the in-process modules that act at a launch (the counters
// module profiles it, PC sampling takes its data there). Graph launches are not among them: their kernels run
// without a launch call.
#pragma once

#include <cupti_driver_cbid.h>

namespace gt::decode {

inline constexpr CUpti_driver_api_trace_cbid kKernelLaunchCbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
};

constexpr bool IsKernelLaunchCbid(unsigned cbid) {
  for (auto id : kKernelLaunchCbids)
    if (cbid == static_cast<unsigned>(id)) return true;
  return false;
}

}  // namespace gt::decode
