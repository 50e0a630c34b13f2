#include "counters/host_config.h"

#include "cupti/cupti_result.h"

#include <cupti.h>
#include <cupti_profiler_host.h>

namespace gt::counters {

namespace {
using cupti::ToStatus;
CUpti_Profiler_Host_Object* Obj(void* p) {
  return static_cast<CUpti_Profiler_Host_Object*>(p);
}
}  // namespace

StatusOr<std::unique_ptr<MetricHost>> MetricHost::Create(const std::string& chip,
                                                         const std::vector<uint8_t>& counter_availability) {
  if (chip.empty()) return InvalidArgument("no chip name for the profiler host");
  CUpti_Profiler_Host_Initialize_Params p{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = counter_availability.empty() ? nullptr : counter_availability.data();
  CUptiResult r = cuptiProfilerHostInitialize(&p);
  if (r != CUPTI_SUCCESS)
    return Unsupported("CUPTI profiler host does not support chip '" + chip +
                       "': " + cupti::ResultWithCode(r));
  std::unique_ptr<MetricHost> host(new MetricHost());
  host->chip_ = chip;
  host->host_object_ = p.pHostObject;
  return host;
}

MetricHost::~MetricHost() {
  if (!host_object_) return;
  CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
  p.pHostObject = Obj(host_object_);
  cuptiProfilerHostDeinitialize(&p);
}

bool MetricHost::IsValidMetric(const std::string& name, std::string* why) {
  CUpti_Profiler_Host_GetMetricProperties_Params p{
      CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
  p.pHostObject = Obj(host_object_);
  p.pMetricName = name.c_str();
  CUptiResult r = cuptiProfilerHostGetMetricProperties(&p);
  if (r != CUPTI_SUCCESS) {
    if (why) *why = cupti::ResultWithCode(r);
    return false;
  }
  // A bare base name validates here but fails in ConfigAddMetrics: require a rollup/submetric suffix.
  if (name.find('.') == std::string::npos) {
    if (why) *why = "needs a suffix such as .sum, .avg, .max, .pct or .per_second";
    return false;
  }
  return true;
}

StatusOr<MetricPlan> MetricHost::Plan(const std::vector<std::string>& metrics) {
  if (planned_) return Internal("MetricHost::Plan called twice on one host object");
  planned_ = true;
  MetricPlan plan;
  plan.chip = chip_;
  for (const auto& m : metrics) {
    std::string why;
    if (IsValidMetric(m, &why))
      plan.metrics.push_back(m);
    else
      plan.rejected.push_back(m + ": " + why);
  }
  if (plan.metrics.empty()) return InvalidArgument("none of the requested metrics exists on " + chip_);
  std::vector<const char*> names;
  for (const auto& m : plan.metrics) names.push_back(m.c_str());
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = Obj(host_object_);
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  GT_RETURN_IF_ERROR(ToStatus(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics"));
  CUpti_Profiler_Host_GetConfigImageSize_Params size{
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  size.pHostObject = Obj(host_object_);
  GT_RETURN_IF_ERROR(
      ToStatus(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize"));
  plan.config_image.resize(size.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params img{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  img.pHostObject = Obj(host_object_);
  img.configImageSize = plan.config_image.size();
  img.pConfigImage = plan.config_image.data();
  GT_RETURN_IF_ERROR(ToStatus(cuptiProfilerHostGetConfigImage(&img), "cuptiProfilerHostGetConfigImage"));
  CUpti_Profiler_Host_GetNumOfPasses_Params passes{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  passes.configImageSize = plan.config_image.size();
  passes.pConfigImage = plan.config_image.data();
  GT_RETURN_IF_ERROR(ToStatus(cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses"));
  plan.passes = passes.numOfPasses;
  return plan;
}

Status MetricHost::Evaluate(const std::vector<uint8_t>& counter_data, size_t range_index,
                            const std::vector<std::string>& metrics, std::vector<double>* values) {
  std::vector<const char*> names;
  for (const auto& m : metrics) names.push_back(m.c_str());
  values->assign(metrics.size(), 0.0);
  CUpti_Profiler_Host_EvaluateToGpuValues_Params p{
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
  p.pHostObject = Obj(host_object_);
  p.pCounterDataImage = counter_data.data();
  p.counterDataImageSize = counter_data.size();
  p.rangeIndex = range_index;
  p.ppMetricNames = names.data();
  p.numMetrics = names.size();
  p.pMetricValues = values->data();
  return ToStatus(cuptiProfilerHostEvaluateToGpuValues(&p), "cuptiProfilerHostEvaluateToGpuValues");
}

StatusOr<MetricPlan> PlanMetricsForChip(const std::string& chip, const std::vector<std::string>& metrics) {
  auto host = MetricHost::Create(chip);
  if (!host.ok()) return host.status();
  return (*host)->Plan(metrics);
}

}  // namespace gt::counters
