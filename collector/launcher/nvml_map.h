// --gpu-metrics: which NVML device is which CUDA device. NVML numbers every GPU of the machine; the app's
// CUDA device ordinals count only the GPUs in CUDA_VISIBLE_DEVICES, in that variable's order. The metric
// tracks must carry the CUDA ordinal, the id the app's kernels and device records use. Pure (no NVML), tested
// without a GPU.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gt::launcher {

struct NvmlGpu {
  std::string uuid;  // "GPU-8-4-4-4-12 hex" (nvmlDeviceGetUUID), the form CUPTI's device records carry too
  uint64_t pci_key = UINT64_MAX;  // domain << 32 | bus << 8 | device; UINT64_MAX = unknown
  std::string name;               // "NVIDIA H200"
};

struct NvmlCudaMap {
  std::vector<int> cuda_ordinal;  // per NVML index: the CUDA ordinal, or -1 when CUDA does not see that GPU
  std::string warning;            // empty, or why the mapping may be off / partial
};

// `visible` = CUDA_VISIBLE_DEVICES (null: unset), `order` = CUDA_DEVICE_ORDER (null: unset, FASTEST_FIRST).
// Entries are indices or UUIDs ("GPU-" + a unique prefix), separated by commas; as in CUDA, the list ends at
// the first entry that names no device (or repeats one). Indices count GPUs in PCI bus order: exact with
// CUDA_DEVICE_ORDER=PCI_BUS_ID, and with the default order whenever all GPUs are the same model (CUDA's
// "fastest first" breaks ties by PCI bus id); otherwise the warning says so. MIG entries are not mapped.
inline NvmlCudaMap MapNvmlToCuda(const std::vector<NvmlGpu>& gpus, const char* visible, const char* order) {
  NvmlCudaMap m;
  m.cuda_ordinal.assign(gpus.size(), -1);
  // PCI bus order (NVML's own order where a bus id is unknown).
  std::vector<size_t> pci(gpus.size());
  for (size_t i = 0; i < pci.size(); ++i) pci[i] = i;
  std::stable_sort(pci.begin(), pci.end(),
                   [&](size_t a, size_t b) { return gpus[a].pci_key < gpus[b].pci_key; });
  bool mixed_models = false;
  for (const auto& g : gpus) mixed_models |= g.name != gpus[0].name;
  const bool pci_order = order && std::string_view(order) == "PCI_BUS_ID";
  const char* kOrderCaveat =
      "GPUs of different models and CUDA_DEVICE_ORDER is not PCI_BUS_ID: GPU metrics assume PCI bus order "
      "for "
      "CUDA device numbers";

  if (!visible) {
    for (size_t k = 0; k < pci.size(); ++k) m.cuda_ordinal[pci[k]] = static_cast<int>(k);
    if (mixed_models && !pci_order) m.warning = kOrderCaveat;
    return m;
  }
  std::string_view list(visible);
  int next = 0;
  bool used_index = false;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view e = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    while (!e.empty() && e.front() == ' ') e.remove_prefix(1);
    while (!e.empty() && e.back() == ' ') e.remove_suffix(1);
    int found = -1;
    if (!e.empty() && std::all_of(e.begin(), e.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      if (e.size() <= 6) {
        size_t idx = std::stoul(std::string(e));
        if (idx < pci.size()) found = static_cast<int>(pci[idx]);
      }
      used_index = true;
    } else if (e.substr(0, 4) == "MIG-") {
      m.warning = "CUDA_VISIBLE_DEVICES names MIG instances: their GPU metrics are not mapped";
      break;
    } else if (e.substr(0, 4) == "GPU-" && e.size() > 4) {
      for (size_t i = 0; i < gpus.size(); ++i) {
        if (gpus[i].uuid.compare(0, e.size(), e) != 0) continue;
        if (found >= 0) {  // an ambiguous prefix names no device
          found = -1;
          break;
        }
        found = static_cast<int>(i);
      }
    }
    if (found < 0 || m.cuda_ordinal[found] >= 0) break;  // CUDA ignores the rest of the list
    m.cuda_ordinal[found] = next++;
  }
  if (m.warning.empty() && used_index && mixed_models && !pci_order) m.warning = kOrderCaveat;
  return m;
}

}  // namespace gt::launcher
