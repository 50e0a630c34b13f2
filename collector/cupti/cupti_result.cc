#include "cupti/cupti_result.h"

#include <cupti.h>

namespace gt::cupti {

const char* ResultText(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : "CUPTI error";
}

std::string ResultWithCode(CUptiResult r) {
  return std::string(ResultText(r)) + " (" + std::to_string(int(r)) + ")";
}

std::string Describe(const char* what, CUptiResult r) {
  return std::string(what) + ": " + ResultWithCode(r);
}

bool Check(CUptiResult r, const char* what, std::string* error) {
  if (r == CUPTI_SUCCESS) return true;
  *error = Describe(what, r);
  return false;
}

Status ToStatus(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return Status::Ok();
  return Internal(Describe(what, r));
}

}  // namespace gt::cupti
