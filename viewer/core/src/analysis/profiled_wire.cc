// ProfiledData as JSON (the server's what=profiled, built with the viewer index): each record an array of its
// fields in the order one visitor per type names them, so the writer and the reader cannot disagree. Numbers
// are exact (integers as integers, doubles in their shortest round-trip spelling, non-finite ones as
// strings); strings the records refer to travel once, by id.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>
#include <type_traits>

#include "gt/viewer/profiled.h"

namespace gt::viewer {
namespace {

using nlohmann::json;

template <class V, class R>
requires std::is_same_v<std::remove_const_t<R>, DeviceRecord>
void Fields(V& v, R& r) {
  v(r.device_id), v(r.pid), v(r.name), v(r.uuid), v(r.chip), v(r.cc_major), v(r.cc_minor), v(r.sm_count),
      v(r.sm_clock_khz), v(r.mem_clock_khz), v(r.mem_bus_width_bits), v(r.memory_bytes), v(r.l2_bytes),
      v(r.shared_mem_per_sm), v(r.shared_mem_per_block_max), v(r.regs_per_sm), v(r.max_warps_per_sm),
      v(r.max_blocks_per_sm), v(r.max_threads_per_block), v(r.warp_size), v(r.dram_bandwidth),
      v(r.l2_bandwidth), v(r.l1_bandwidth);
  for (auto& f : r.peak_flops) v(f);
  v(r.peak_source);
}
template <class V, class R>
requires std::is_same_v<std::remove_const_t<R>, KernelMetricRecord>
void Fields(V& v, R& r) {
  v(r.pid), v(r.correlation_id), v(r.kernel_name), v(r.launch_ordinal), v(r.metric), v(r.value), v(r.flags);
}
template <class V, class R>
requires std::is_same_v<std::remove_const_t<R>, StallSample>
void Fields(V& v, R& r) {
  v(r.pid), v(r.correlation_id), v(r.kernel_name), v(r.launch_ordinal), v(r.reason), v(r.pc_offset),
      v(r.source_file), v(r.source_line), v(r.count);
}
template <class V, class R>
requires std::is_same_v<std::remove_const_t<R>, ProfiledJoin>
void Fields(V& v, R& r) {
  v(r.pid), v(r.correlation_id), v(r.device_id), v(r.shape.grid_blocks), v(r.shape.block_threads),
      v(r.shape.registers_per_thread), v(r.shape.static_shared_bytes), v(r.shape.dynamic_shared_bytes);
}
template <class V, class R>
requires std::is_same_v<std::remove_const_t<R>, ProfiledName>
void Fields(V& v, R& r) {
  v(r.pid), v(r.name), v(r.total_s), v(r.first.lane), v(r.first.index);
}
template <class V, class R>
requires std::is_same_v<std::remove_const_t<R>, std::pair<EventId, uint32_t>>
void Fields(V& v, R& r) {
  v(r.first.lane), v(r.first.index), v(r.second);
}

struct Writer {
  json row = json::array();
  template <class T>
  void operator()(const T& x) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isfinite(x))
        row.push_back(x);
      else
        row.push_back(std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
    } else {
      row.push_back(x);
    }
  }
};

struct Reader {
  const json* row = nullptr;
  size_t at = 0;
  bool ok = true;
  template <class T>
  void operator()(T& x) {
    if (!ok || at >= row->size()) {
      ok = false;
      return;
    }
    const json& v = (*row)[at++];
    if constexpr (std::is_same_v<T, std::string>) {
      if (!(ok = v.is_string())) return;
      x = v.get<std::string>();
    } else if constexpr (std::is_floating_point_v<T>) {
      if (v.is_number()) {
        x = v.get<T>();
      } else if (v.is_string()) {
        const std::string& s = v.get_ref<const std::string&>();
        if (s == "nan")
          x = NAN;
        else if (s == "inf" || s == "-inf")
          x = s[0] == '-' ? -INFINITY : INFINITY;
        else
          ok = false;
      } else {
        ok = false;
      }
    } else {
      static_assert(std::is_integral_v<T> && std::is_unsigned_v<T>);
      if (!(ok = v.is_number_unsigned() && v.get<uint64_t>() <= std::numeric_limits<T>::max())) return;
      x = static_cast<T>(v.get<uint64_t>());
    }
  }
};

template <class T>
json Rows(const std::vector<T>& records) {
  json a = json::array();
  for (const T& r : records) {
    Writer w;
    Fields(w, r);
    a.push_back(std::move(w.row));
  }
  return a;
}

template <class T>
bool ReadRows(const json& doc, const char* key, std::vector<T>* out) {
  auto it = doc.find(key);
  if (it == doc.end()) return true;  // absent: none
  if (!it->is_array()) return false;
  out->reserve(it->size());
  for (const json& row : *it) {
    if (!row.is_array()) return false;
    Reader r{&row};
    T record{};
    Fields(r, record);
    if (!r.ok || r.at != row.size()) return false;
    out->push_back(std::move(record));
  }
  return true;
}

}  // namespace

std::string ProfiledDataJson(const ProfiledData& d) {
  json doc = json::object();
  doc["devices"] = Rows(d.devices);
  doc["metrics"] = Rows(d.kernel_metrics);
  doc["stalls"] = Rows(d.stall_samples);
  json strings = json::object();
  for (const auto& [id, text] : d.strings) strings[std::to_string(id)] = text;
  doc["strings"] = std::move(strings);
  doc["joins"] = Rows(d.joins);
  doc["names"] = Rows(d.names);
  doc["launch_of"] = Rows(d.launch_of);
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

StatusOr<ProfiledData> ParseProfiledData(std::string_view text) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return Corrupt("profiled: not a JSON object");
  ProfiledData d;
  if (!ReadRows(doc, "devices", &d.devices) || !ReadRows(doc, "metrics", &d.kernel_metrics) ||
      !ReadRows(doc, "stalls", &d.stall_samples) || !ReadRows(doc, "joins", &d.joins) ||
      !ReadRows(doc, "names", &d.names) || !ReadRows(doc, "launch_of", &d.launch_of))
    return Corrupt("profiled: a table is not an array of records of the expected fields");
  if (auto it = doc.find("strings"); it != doc.end()) {
    if (!it->is_object()) return Corrupt("profiled: strings is not an object");
    for (const auto& [key, value] : it->items()) {
      char* end = nullptr;
      const unsigned long id = std::strtoul(key.c_str(), &end, 10);
      if (key.empty() || *end || id > UINT32_MAX || !value.is_string())
        return Corrupt("profiled: a string entry is not \"<id>\": \"<text>\"");
      d.strings[StringId(id)] = value.get<std::string>();
    }
  }
  // The analysis looks joins up by binary search: an answer out of order must not make it miss.
  std::sort(d.joins.begin(), d.joins.end(), [](const ProfiledJoin& a, const ProfiledJoin& b) {
    return std::tie(a.pid, a.correlation_id) < std::tie(b.pid, b.correlation_id);
  });
  return d;
}

}  // namespace gt::viewer
