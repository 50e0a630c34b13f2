// What a failed CUPTI call says, in one place: every CUPTI call site of the injection and the counters host
// code reports "<call>: <CUPTI's text> (<code>)" through these.
#pragma once

#include <cupti_result.h>

#include <string>

#include "gt/status.h"

namespace gt::cupti {

const char* ResultText(CUptiResult r);      // CUPTI's text for `r`, "CUPTI error" when it has none
std::string ResultWithCode(CUptiResult r);  // "CUPTI_ERROR_INVALID_PARAMETER (1)"
std::string Describe(const char* what, CUptiResult r);  // "cuptiSubscribe_v2: CUPTI_ERROR_... (N)"
// true on CUPTI_SUCCESS; else false with `*error` = Describe(what, r).
bool Check(CUptiResult r, const char* what, std::string* error);
Status ToStatus(CUptiResult r, const char* what);  // Ok, else Internal(Describe(what, r))

}  // namespace gt::cupti
