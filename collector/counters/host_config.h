// CUPTI Profiler *host* API: validates metric names, builds the config image, counts replay passes and turns
// counter data into values. Needs libcupti + libnvperf_host but no GPU: a chip name ("GH100") is enough, so
// tests and `gcollect --counters-plan` run on CPU-only machines.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gt/status.h"

namespace gt::counters {

struct MetricPlan {
  std::string chip;
  std::vector<std::string> metrics;   // accepted, in request order
  std::vector<std::string> rejected;  // "name: why" for names the chip does not know
  std::vector<uint8_t> config_image;
  size_t passes = 0;
};

// One CUpti_Profiler_Host_Object. Not thread-safe.
class MetricHost {
 public:
  // `counter_availability` may be empty (host-only planning) or the image from the target device.
  static StatusOr<std::unique_ptr<MetricHost>> Create(const std::string& chip,
                                                      const std::vector<uint8_t>& counter_availability = {});
  ~MetricHost();
  MetricHost(const MetricHost&) = delete;
  MetricHost& operator=(const MetricHost&) = delete;

  // True when the chip knows the metric (with its rollup/submetric suffix).
  bool IsValidMetric(const std::string& name, std::string* why = nullptr);
  // Validates every name, adds the valid ones and builds the config image. Call once per host object.
  StatusOr<MetricPlan> Plan(const std::vector<std::string>& metrics);
  // Evaluates `metrics` for range `range_index` of a decoded counter data image.
  Status Evaluate(const std::vector<uint8_t>& counter_data, size_t range_index,
                  const std::vector<std::string>& metrics, std::vector<double>* values);

  const std::string& chip() const { return chip_; }

 private:
  MetricHost() = default;
  std::string chip_;
  void* host_object_ = nullptr;  // CUpti_Profiler_Host_Object*
  bool planned_ = false;
};

// Convenience for tests and planning: a fresh host object, plan, pass count.
StatusOr<MetricPlan> PlanMetricsForChip(const std::string& chip, const std::vector<std::string>& metrics);

}  // namespace gt::counters
