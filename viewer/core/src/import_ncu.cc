// Nsight Compute `ncu --csv --page raw` import (gt/viewer/ncu.h).
//
// [SECTION] Parse   CSV rows, units, numbers
// [SECTION] Model   standalone model of the report
// [SECTION] Join    pairing with a timeline
#include "gt/viewer/ncu.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "gt/counter_vocab.h"
#include "gt/sat_math.h"
#include "gt/viewer/builder.h"
#include "gt/viewer/load.h"

#if defined(__has_include)
#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#define GT_HAVE_CXXABI 1
#endif
#endif

namespace gt::viewer {

// ---- [SECTION] Parse ------------------------------------------------------------------------------------

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The line's text up to (not including) its newline.
std::string_view LineAt(std::string_view text, size_t pos) {
  size_t end = text.find('\n', pos);
  return text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
}

bool IsHeaderLine(std::string_view line) {
  line = Trim(line);
  if (line.size() >= 3 && static_cast<uint8_t>(line[0]) == 0xEF && static_cast<uint8_t>(line[1]) == 0xBB &&
      static_cast<uint8_t>(line[2]) == 0xBF)
    line.remove_prefix(3);
  return line.starts_with("\"ID\",\"Process ID\"") || line.starts_with("ID,Process ID");
}

// One CSV row from `pos` (quotes may span lines); `pos` moves past it. RFC 4180 quoting ("" inside quotes).
std::vector<std::string> ReadRow(std::string_view text, size_t& pos) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  while (pos < text.size()) {
    const char c = text[pos++];
    if (quoted) {
      if (c == '"') {
        if (pos < text.size() && text[pos] == '"') {
          cells.back() += '"';
          ++pos;
        } else {
          quoted = false;
        }
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else if (c == '\n') {
      break;
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  return cells;
}

enum class Cell : uint8_t { kNumber, kEmpty, kNonFinite, kText };

// A number as ncu prints it: thousands separators ("1,234,567.5"), "n/a" for a metric it could not collect.
Cell ParseNumber(std::string_view s, double* out) {
  s = Trim(s);
  if (s.empty() || s == "n/a" || s == "N/A" || s == "-") return Cell::kEmpty;
  const char lead = s[0] == '-' || s[0] == '+' ? (s.size() > 1 ? s[1] : '\0') : s[0];
  if (lead == 'n' || lead == 'N' || lead == 'i' || lead == 'I') {
    std::string lower;
    for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "nan" || lower == "-nan" || lower == "inf" || lower == "-inf" || lower == "+inf" ||
        lower == "infinity" || lower == "-infinity")
      return Cell::kNonFinite;
  }
  std::string digits;
  bool any_digit = false;
  for (char c : s) {
    if (c == ',') continue;
    if (std::isdigit(static_cast<unsigned char>(c))) {
      any_digit = true;
    } else if (c != '.' && c != '-' && c != '+' && c != 'e' && c != 'E') {
      return Cell::kText;
    }
    digits += c;
  }
  if (!any_digit) return Cell::kText;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) return Cell::kText;
  if (errno == ERANGE && std::fabs(v) > 1) return Cell::kNonFinite;  // overflow; underflow is ~0 and fine
  if (!std::isfinite(v)) return Cell::kNonFinite;
  *out = v;
  return Cell::kNumber;
}

// "(256, 1, 1)" -> {256, 1, 1}; false otherwise.
bool ParseDim3(std::string_view s, std::array<uint32_t, 3>* out) {
  s = Trim(s);
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return false;
  s = s.substr(1, s.size() - 2);
  std::array<uint32_t, 3> d{1, 1, 1};
  for (int i = 0; i < 3; ++i) {
    size_t comma = s.find(',');
    std::string part(Trim(s.substr(0, comma)));
    char* end = nullptr;
    errno = 0;
    unsigned long v = std::strtoul(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || errno == ERANGE || v > UINT32_MAX) return false;
    d[i] = static_cast<uint32_t>(v);
    if (comma == std::string_view::npos) {
      if (i != 2) return false;
      break;
    }
    s.remove_prefix(comma + 1);
    if (i == 2) return false;
  }
  *out = d;
  return true;
}

bool ParseUint(std::string_view s, uint64_t* out) {
  double v = 0;
  if (ParseNumber(s, &v) != Cell::kNumber || v < 0 || v > 1.8e19 || v != std::floor(v)) return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

double SiPrefix(char c) {
  switch (c) {
    case 'K':
    case 'k':
      return 1e3;
    case 'M':
      return 1e6;
    case 'G':
      return 1e9;
    case 'T':
      return 1e12;
    case 'P':
      return 1e15;
  }
  return 0;
}

// One unit word ("Mbyte", "usecond", "cycle"): its scale to the base word, and whether it is a time.
bool WordScale(std::string_view w, double* scale, bool* time) {
  *time = false;
  *scale = 1;
  if (w.empty()) return true;
  if (w.ends_with("second")) {
    std::string_view p = w.substr(0, w.size() - 6);
    *time = true;
    if (p.empty()) return true;
    if (p.size() != 1) return false;
    switch (p[0]) {
      case 'm':
        *scale = 1e-3;
        return true;
      case 'u':
        *scale = 1e-6;
        return true;
      case 'n':
        *scale = 1e-9;
        return true;
      case 'p':
        *scale = 1e-12;
        return true;
    }
    return false;
  }
  // ncu's raw page abbreviates (ns, byte/s); its other pages spell out (nsecond, Gbyte/second).
  static const std::pair<std::string_view, double> kAbbreviated[] = {
      {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12}};
  for (const auto& [name, scale_of] : kAbbreviated)
    if (w == name) {
      *time = true;
      *scale = scale_of;
      return true;
    }
  if (w == "%") return true;
  std::string lower;
  for (char c : w) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "hz") return true;
  if (lower.size() == 3 && lower.ends_with("hz")) {  // Khz, Mhz, Ghz
    *scale = SiPrefix(w[0]);
    return *scale > 0;
  }
  auto plain = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  };
  if (plain(w)) return true;  // a base word: byte, cycle, inst, warp, sector, ...
  // ncu's SI-prefixed counts: Kbyte, Mbyte, Gbyte, Kinst... (decimal prefixes, as its unit scaling prints).
  if (w.size() >= 3 && SiPrefix(w[0]) > 0 && plain(w.substr(1))) {
    *scale = SiPrefix(w[0]);
    return true;
  }
  // Other words of ASCII letters ("SM") are units of their own; anything else (µs, symbols) is not ncu's.
  return std::all_of(w.begin(), w.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
}

const std::unordered_set<std::string>& Vocabulary() {
  static const std::unordered_set<std::string> v = [] {
    std::unordered_set<std::string> s;
    for (const char* m : kRooflineMetrics) s.insert(m);
    for (const char* m : kPeakMetrics) s.insert(m);
    for (const char* m : kHmmaMetrics) s.insert(m);
    for (const char* m : kOccupancyMetrics) s.insert(m);
    for (const char* m : kAccessMetrics) s.insert(m);
    for (const char* m : kSolMetrics) s.insert(m);
    for (const char* m : {metric::kDramBytes, metric::kIssued, metric::kGridSize, metric::kBlockSize,
                          metric::kRegisters, metric::kStaticShared, metric::kDynamicShared})
      s.insert(m);
    return s;
  }();
  return v;
}

void Problem(NcuReport& r, std::string p) {
  if (r.problems.size() < 20) r.problems.push_back(std::move(p));
}

// Counters gtrace reads that ncu's sections report only in another form, recomputed by the identity that
// defines that form (a x b x factor), exact up to the digits ncu printed. Only where the CSV lacks the
// counter itself (a CSV written with --metrics keeps its own); each derived column is marked and counted.
//  - Warp stalls: WarpStateStats gives smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio =
//    smsp__warps_issue_stalled_<reason>.sum / smsp__issue_active.sum; --set full has no
//    smsp__issue_active.sum, but its rate per active cycle x active cycles (within 1e-5 of
//    smsp__inst_issued.sum on the H200 fixtures).
//  - FLOPs: the roofline section's smsp__sass_thread_inst_executed_op_<op>_pred_on.sum.per_cycle_elapsed x
//    smsp__cycles_elapsed.avg (ncu's own roofline formula; the SMSP total is the SM total).
//  - L2 bytes: lts__t_sectors.sum x 32 (an L2 sector is 32 bytes).
//  - Divergence: smsp__thread_inst_executed_per_inst_executed.ratio x smsp__inst_executed.sum.
void DeriveCounters(NcuReport& r) {
  struct Rule {
    std::string target, a, b;
    double factor;
  };
  std::vector<Rule> rules = {
      {"smsp__issue_active.sum", "smsp__issue_active.sum.per_cycle_active", "smsp__cycles_active.avg", 1}};
  for (const StallReasonInfo& reason : StallReasonVocabulary())
    rules.push_back(
        {StallMetricName(reason.key),
         "smsp__average_warps_issue_stalled_" + std::string(reason.key) + "_per_issue_active.ratio",
         "smsp__issue_active.sum", 1});
  for (const char* op : {"dfma", "dadd", "dmul", "ffma", "fadd", "fmul", "hfma", "hadd", "hmul"})
    rules.push_back(
        {"sm__sass_thread_inst_executed_op_" + std::string(op) + "_pred_on.sum",
         "smsp__sass_thread_inst_executed_op_" + std::string(op) + "_pred_on.sum.per_cycle_elapsed",
         "smsp__cycles_elapsed.avg", 1});
  rules.push_back({metric::kL2Bytes, metric::kL2Sectors, "", 32});
  rules.push_back({metric::kThreadInstExecuted, "smsp__thread_inst_executed_per_inst_executed.ratio",
                   metric::kInstExecuted, 1});
  std::unordered_map<std::string, uint32_t> index;
  for (uint32_t i = 0; i < r.metrics.size(); ++i) index.emplace(r.metrics[i].name, i);
  auto find = [](const NcuLaunch& l, uint32_t m) -> const double* {
    auto it = std::lower_bound(l.values.begin(), l.values.end(), m,
                               [](const std::pair<uint32_t, double>& c, uint32_t i) { return c.first < i; });
    return it != l.values.end() && it->first == m ? &it->second : nullptr;
  };
  for (const Rule& rule : rules) {
    if (index.count(rule.target)) continue;
    auto a = index.find(rule.a);
    auto b = rule.b.empty() ? index.end() : index.find(rule.b);
    if (a == index.end() || (!rule.b.empty() && b == index.end())) continue;
    const uint32_t target = static_cast<uint32_t>(r.metrics.size());
    size_t added = 0;
    for (NcuLaunch& l : r.launches) {
      const double* va = find(l, a->second);
      const double* vb = rule.b.empty() ? &rule.factor : find(l, b->second);
      if (!va || !vb) continue;
      const double v = *va * *vb * (rule.b.empty() ? 1 : rule.factor);
      if (!std::isfinite(v)) continue;
      l.values.emplace_back(target, v);  // the new column is past every other: the values stay in order
      ++added;
    }
    if (!added) continue;
    NcuMetricColumn m;
    m.name = rule.target;
    m.unit =
        "derived: " + rule.a + (rule.b.empty() ? " x " + std::to_string(int(rule.factor)) : " x " + rule.b);
    m.in_vocabulary = Vocabulary().count(rule.target) > 0 || !StallReasonOfMetric(rule.target).empty();
    m.derived = true;
    index.emplace(rule.target, target);
    r.metrics.push_back(std::move(m));
    r.derived_values += added;
  }
}

}  // namespace

bool NcuUnitScale(std::string_view unit, double* scale) {
  *scale = 1;
  unit = Trim(unit);
  if (unit.empty()) return true;
  bool first = true, ok = true;
  double s = 1;
  while (true) {
    const size_t slash = unit.find('/');
    std::string_view word = Trim(unit.substr(0, slash));
    double w = 1;
    bool time = false;
    if (!WordScale(word, &w, &time)) ok = false;
    if (first) {
      s *= time ? w * 1e9 : w;  // a duration in ns, as gpu__time_duration is in a counters trace
    } else {
      s /= w;  // per unit of it: per second for a time
    }
    first = false;
    if (slash == std::string_view::npos) break;
    unit.remove_prefix(slash + 1);
  }
  if (!ok) return false;
  *scale = s;
  return true;
}

std::string KernelBaseName(std::string_view name) {
  std::string demangled;
#ifdef GT_HAVE_CXXABI
  if (name.starts_with("_Z")) {
    int status = 0;
    std::string mangled(name);
    char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
    if (d && status == 0) demangled = d;
    std::free(d);
    if (!demangled.empty()) name = demangled;
  }
#endif
  // Cut the parameter list and template arguments (at depth 0), then the return type and namespaces.
  std::string_view s = Trim(name);
  int depth = 0;
  size_t cut = s.size();
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' && depth == 0 && i > 0) {
      cut = std::min(cut, i);
      break;
    }
    if (c == '<' && i > 0 && !s.substr(0, i).ends_with("operator")) {
      if (depth == 0) cut = std::min(cut, i);
      ++depth;
    } else if (c == '>' && depth > 0) {
      --depth;
    }
  }
  s = Trim(s.substr(0, cut));
  const size_t space = s.rfind(' ');
  if (space != std::string_view::npos) s = s.substr(space + 1);
  const size_t colons = s.rfind("::");
  if (colons != std::string_view::npos) s = s.substr(colons + 2);
  return std::string(s.empty() ? Trim(name) : s);
}

bool LooksLikeNcuCsv(std::span<const uint8_t> bytes) {
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), std::min<size_t>(bytes.size(), 1 << 20));
  // ncu's own lines ("==PROF== ...") and the app's output may come first when stdout was captured.
  for (size_t pos = 0, lines = 0; pos < text.size() && lines < 10000; ++lines) {
    std::string_view line = LineAt(text, pos);
    if (IsHeaderLine(line)) return true;
    pos += line.size() + 1;
  }
  return false;
}

StatusOr<NcuReport> ParseNcuCsv(std::string_view text) {
  NcuReport r;
  size_t pos = 0;
  while (pos < text.size()) {
    std::string_view line = LineAt(text, pos);
    if (IsHeaderLine(line)) break;
    if (!Trim(line).empty()) ++r.prof_lines;
    pos += line.size() + 1;
  }
  if (pos >= text.size())
    return InvalidArgument(
        "not Nsight Compute CSV: no header starting \"ID\",\"Process ID\" (write it with ncu --csv --page "
        "raw)");
  std::vector<std::string> header = ReadRow(text, pos);
  if (!header.empty() && header[0].starts_with("\xEF\xBB\xBF")) header[0].erase(0, 3);
  // Rows after the header; ncu's own lines may follow the CSV too ("==PROF== Disconnected").
  auto next_row = [&](std::vector<std::string>* row) {
    while (pos < text.size()) {
      std::string_view line = LineAt(text, pos);
      if (Trim(line).empty() || line.starts_with("==")) {
        if (!Trim(line).empty()) ++r.prof_lines;
        pos += line.size() + 1;
        continue;
      }
      *row = ReadRow(text, pos);
      return true;
    }
    return false;
  };
  std::vector<std::string> units;
  if (!next_row(&units))
    return InvalidArgument(
        "Nsight Compute CSV without rows: no units row and no launch (ncu profiled nothing?)");
  {
    uint64_t id = 0;
    if (!units.empty() && ParseUint(units[0], &id))
      return InvalidArgument(
          "Nsight Compute CSV without its units row (row 2): values cannot be converted without units; write "
          "it with ncu --csv --page raw (any --print-units)");
  }
  if (units.size() != header.size())
    return InvalidArgument("Nsight Compute CSV: the units row has " + std::to_string(units.size()) +
                           " cells where the header has " + std::to_string(header.size()));
  // Columns: ncu's launch attributes by name, metrics (every name with "__") by position.
  enum Attr { kNoAttr, kId, kPid, kProcess, kKernel, kStream, kBlock, kGrid, kDevice, kCc };
  std::vector<Attr> attr(header.size(), kNoAttr);
  std::vector<int32_t> metric_of(header.size(), -1);
  std::unordered_map<std::string, uint32_t> seen;
  const std::map<std::string, Attr> attrs = {
      {"ID", kId},         {"Process ID", kPid},   {"Process Name", kProcess}, {"Kernel Name", kKernel},
      {"Stream", kStream}, {"Block Size", kBlock}, {"Grid Size", kGrid},       {"Device", kDevice},
      {"CC", kCc}};
  for (size_t c = 0; c < header.size(); ++c) {
    const std::string& h = header[c];
    if (auto it = attrs.find(h); it != attrs.end()) {
      attr[c] = it->second;
      continue;
    }
    if (h.find("__") == std::string::npos) continue;  // another attribute ncu prints ("Host Name", "Context")
    if (seen.count(h)) {
      ++r.duplicate_columns;
      Problem(r, "metric column '" + h + "' repeated: the first one kept");
      continue;
    }
    NcuMetricColumn m;
    m.name = h;
    m.unit = units[c];
    m.known_unit = NcuUnitScale(units[c], &m.scale);
    if (!m.known_unit) {
      ++r.unknown_unit_columns;
      Problem(r, "unit '" + units[c] + "' of " + h + " not understood: its values are left out");
    }
    if (m.scale != 1) r.base_units = false;
    m.in_vocabulary = Vocabulary().count(h) > 0 || !StallReasonOfMetric(h).empty();
    seen[h] = static_cast<uint32_t>(r.metrics.size());
    metric_of[c] = static_cast<int32_t>(r.metrics.size());
    r.metrics.push_back(std::move(m));
  }
  if (std::find(attr.begin(), attr.end(), kKernel) == attr.end())
    return InvalidArgument("Nsight Compute CSV without a \"Kernel Name\" column");
  std::vector<std::string> row;
  uint64_t row_number = 2;
  while (next_row(&row)) {
    ++row_number;
    if (row.size() != header.size()) {
      ++r.ragged_rows;
      Problem(r, "row " + std::to_string(row_number) + " has " + std::to_string(row.size()) +
                     " cells where the header has " + std::to_string(header.size()) + ": skipped");
      continue;
    }
    NcuLaunch l;
    l.id = r.launches.empty() ? 0 : r.launches.back().id + 1;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string& cell = row[c];
      uint64_t u = 0;
      switch (attr[c]) {
        case kId:
          if (ParseUint(cell, &u)) l.id = u;
          break;
        case kPid:
          if (ParseUint(cell, &u) && u <= UINT32_MAX) l.pid = static_cast<uint32_t>(u);
          break;
        case kProcess:
          l.process = cell;
          break;
        case kKernel:
          l.kernel = cell;
          break;
        case kStream:
          if (ParseUint(cell, &u) && u <= UINT32_MAX) l.stream = static_cast<uint32_t>(u);
          break;
        case kDevice:
          if (ParseUint(cell, &u) && u <= UINT32_MAX) l.device = static_cast<uint32_t>(u);
          break;
        case kBlock:
          ParseDim3(cell, &l.block);
          break;
        case kGrid:
          ParseDim3(cell, &l.grid);
          break;
        case kCc: {
          const size_t dot = cell.find('.');
          uint64_t major = 0, minor = 0;
          if (dot != std::string::npos && ParseUint(cell.substr(0, dot), &major) &&
              ParseUint(cell.substr(dot + 1), &minor) && major < 256 && minor < 256) {
            l.cc_major = static_cast<uint8_t>(major);
            l.cc_minor = static_cast<uint8_t>(minor);
          }
          break;
        }
        case kNoAttr: {
          if (metric_of[c] < 0) break;
          const NcuMetricColumn& m = r.metrics[metric_of[c]];
          double v = 0;
          switch (ParseNumber(cell, &v)) {
            case Cell::kNumber:
              if (!m.known_unit) break;
              v *= m.scale;
              // Launch attributes are integers the analysis reads as such (grid size as 64 bits).
              if (!std::isfinite(v) ||
                  (m.name.starts_with("launch__") &&
                   (v < 0 || v >= (m.name == metric::kGridSize ? 1.8e19 : 4294967295.0)))) {
                ++r.non_finite_cells;
                Problem(r, "row " + std::to_string(row_number) + ": " + m.name + " is '" + cell +
                               "': out of range, left out");
                break;
              }
              l.values.emplace_back(static_cast<uint32_t>(metric_of[c]), v);
              break;
            case Cell::kEmpty:
              ++r.na_cells;
              break;
            case Cell::kNonFinite:
              ++r.non_finite_cells;
              Problem(r,
                      "row " + std::to_string(row_number) + ": " + m.name + " is '" + cell + "': left out");
              break;
            case Cell::kText:
              ++r.text_cells;
              l.texts.emplace_back(static_cast<uint32_t>(metric_of[c]), cell);
              break;
          }
          break;
        }
      }
    }
    if (l.kernel.empty()) {
      ++r.ragged_rows;
      Problem(r, "row " + std::to_string(row_number) + " has no kernel name: skipped");
      continue;
    }
    r.launches.push_back(std::move(l));
  }
  if (r.launches.empty())
    return InvalidArgument("Nsight Compute CSV without a readable launch row" +
                           (r.problems.empty() ? std::string() : " (" + r.problems.front() + ")"));
  std::stable_sort(r.launches.begin(), r.launches.end(),
                   [](const NcuLaunch& a, const NcuLaunch& b) { return a.id < b.id; });
  DeriveCounters(r);
  return r;
}

// ---- [SECTION] Model ------------------------------------------------------------------------------------

namespace {

// A launch's value of one metric. Its values are in column order, so by metric index: a binary search.
template <typename T>
const T* Lookup(const NcuReport& r, const std::vector<std::pair<uint32_t, T>>& cells, std::string_view name) {
  uint32_t index = 0;
  while (index < r.metrics.size() && r.metrics[index].name != name) ++index;
  auto it = std::lower_bound(cells.begin(), cells.end(), index,
                             [](const std::pair<uint32_t, T>& c, uint32_t i) { return c.first < i; });
  return it != cells.end() && it->first == index ? &it->second : nullptr;
}
const double* ValueOf(const NcuReport& r, const NcuLaunch& l, std::string_view name) {
  return Lookup(r, l.values, name);
}
const std::string* TextOf(const NcuReport& r, const NcuLaunch& l, std::string_view name) {
  return Lookup(r, l.texts, name);
}

// Sets an integer field from a value that fits it (a value that does not is left out, not wrapped).
template <typename T>
void SetIf(T& field, const double* v) {
  if (v && *v >= 0 && *v < static_cast<double>(std::numeric_limits<T>::max())) field = static_cast<T>(*v);
}

// The device a launch ran on, from ncu's device__attribute_* metrics and the peaks its counters imply (the
// hardware's per-cycle peaks x the clocks it ran at, as a `gcollect --counters` trace derives them).
DeviceRecord DeviceOf(const NcuReport& r, std::span<const NcuLaunch* const> launches, uint32_t pid,
                      const std::function<StringId(std::string_view)>& intern) {
  DeviceRecord d;
  const NcuLaunch& l = *launches.front();
  d.pid = pid;
  d.device_id = l.device;
  d.cc_major = l.cc_major;
  d.cc_minor = l.cc_minor;
  if (const std::string* n = TextOf(r, l, "device__attribute_display_name")) d.name = intern(*n);
  if (const std::string* n = TextOf(r, l, "device__attribute_chip")) d.chip = intern(*n);
  SetIf(d.sm_count, ValueOf(r, l, "device__attribute_multiprocessor_count"));
  SetIf(d.max_warps_per_sm, ValueOf(r, l, "device__attribute_max_warps_per_multiprocessor"));
  SetIf(d.max_blocks_per_sm, ValueOf(r, l, "device__attribute_max_blocks_per_multiprocessor"));
  SetIf(d.max_threads_per_block, ValueOf(r, l, "device__attribute_max_threads_per_block"));
  SetIf(d.regs_per_sm, ValueOf(r, l, "device__attribute_max_registers_per_multiprocessor"));
  SetIf(d.shared_mem_per_sm, ValueOf(r, l, "device__attribute_max_shared_memory_per_multiprocessor"));
  SetIf(d.shared_mem_per_block_max, ValueOf(r, l, "device__attribute_max_shared_memory_per_block_optin"));
  SetIf(d.l2_bytes, ValueOf(r, l, "device__attribute_l2_cache_size"));
  SetIf(d.mem_bus_width_bits, ValueOf(r, l, "device__attribute_global_memory_bus_width"));
  SetIf(d.warp_size, ValueOf(r, l, "device__attribute_warp_size"));
  if (d.warp_size == 0) d.warp_size = 32;
  // Highest clock seen per unit and the per-cycle peaks (constant per chip).
  auto best = [&](const char* name) {
    double b = 0;
    for (const NcuLaunch* x : launches)
      if (const double* v = ValueOf(r, *x, name)) b = std::max(b, *v);
    return b;
  };
  const double sm_hz = best(metric::kSmClock);
  if (sm_hz > 0) d.sm_clock_khz = static_cast<uint32_t>(std::min(sm_hz / 1e3, 4e9));
  bool any = false;
  auto set = [&](double& field, double v) {
    if (v > 0) field = v, any = true;
  };
  if (sm_hz > 0) {
    set(d.dram_bandwidth, best(metric::kDramBytesPeak) * best(metric::kDramClock));
    set(d.l2_bandwidth, best(metric::kL2BytesPeak) * best(metric::kL2Clock));
    set(d.l1_bandwidth, best(metric::kL1BytesPeak) * sm_hz);
    const std::pair<Precision, std::pair<const char*, double>> peaks[] = {
        {Precision::kFp64, {metric::kDfmaPeak, 2}},
        {Precision::kFp32, {metric::kFfmaPeak, 2}},
        {Precision::kFp16, {metric::kHfmaPeak, 2}},
        {Precision::kFp64Tensor, {metric::kTensorFp64Peak, 1}},
        {Precision::kTf32Tensor, {metric::kTensorHgmmaTf32Peak, 1}},
        {Precision::kFp16Tensor, {metric::kTensorHgmmaFp16Peak, 1}},
        {Precision::kBf16Tensor, {metric::kTensorHgmmaBf16Peak, 1}},
        {Precision::kFp8Tensor, {metric::kTensorFp8Peak, 1}},
        {Precision::kInt8Tensor, {metric::kTensorIgmmaInt8Peak, 1}},
    };
    for (const auto& [p, m] : peaks)
      set(d.peak_flops[static_cast<size_t>(p)], best(m.first) * m.second * sm_hz);
    set(d.peak_flops[static_cast<size_t>(Precision::kBf16)],
        d.peak_flops[static_cast<size_t>(Precision::kFp16)]);
  }
  if (any) d.peak_source = static_cast<uint8_t>(PeakSource::kDerived);
  return d;
}

// Metric records of one launch under the given identity (pid, correlation id, name, ordinal).
void AppendMetrics(const NcuReport& r, const NcuLaunch& l, uint32_t pid, uint32_t corr, StringId name,
                   uint32_t ordinal, const std::vector<StringId>& metric_ids,
                   std::vector<KernelMetricRecord>* out) {
  for (const auto& [m, v] : l.values) {
    KernelMetricRecord k;
    k.pid = pid;
    k.correlation_id = corr;
    k.kernel_name = name;
    k.launch_ordinal = ordinal;
    k.metric = metric_ids[m];
    k.value = v;
    out->push_back(k);
  }
  (void)r;
}

// The losses every import reports: what could not be read, and how much of ncu's vocabulary gtrace reads.
std::vector<LossStat> ReportLosses(const NcuReport& r) {
  std::vector<LossStat> out;
  auto add = [&](const char* name, Severity s, uint64_t count, std::string detail) {
    if (count) out.push_back({name, static_cast<uint8_t>(s), 0, count, std::move(detail)});
  };
  size_t known = 0, columns = 0;
  for (const auto& m : r.metrics)
    if (!m.derived) ++columns, known += m.in_vocabulary;
  add("ncu_metrics", Severity::kInfo, columns,
      std::to_string(known) + " of ncu's metric columns are gtrace's counter vocabulary (panels, roofline, " +
          "verdicts); the other " + std::to_string(columns - known) +
          " are kept by name (Python: gtrace.load(FILE).metrics)" +
          (r.base_units ? "" : "; units converted to bytes, ns, /s"));
  std::string first = r.problems.empty() ? "" : " (first: " + r.problems.front() + ")";
  add("ncu_rows_skipped", Severity::kWarning, r.ragged_rows,
      "rows whose cells do not line up with the header, skipped whole" + first);
  add("ncu_duplicate_columns", Severity::kWarning, r.duplicate_columns,
      "metric columns repeated; the first kept");
  add("ncu_unknown_units", Severity::kWarning, r.unknown_unit_columns,
      "metric columns whose unit gtrace does not know; their values are left out");
  add("ncu_non_finite", Severity::kWarning, r.non_finite_cells,
      "values that are nan, inf or out of range: left out");
  add("ncu_na_values", Severity::kInfo, r.na_cells, "values ncu printed as n/a or empty: absent");
  add("ncu_text_values", Severity::kInfo, r.text_cells,
      "metric values that are text (device name, cache config, ...): not numbers, not counters");
  add("ncu_other_lines", Severity::kInfo, r.prof_lines, "==PROF== and other non-CSV lines skipped");
  std::string derived;
  for (const auto& m : r.metrics)
    if (m.derived) derived += (derived.empty() ? "" : ", ") + m.name;
  add("ncu_derived", Severity::kInfo, r.derived_values,
      "values computed from the forms ncu reports, by their defining identities (docs/ncu-import.md): " +
          derived);
  return out;
}

}  // namespace

Status ImportNcuCsv(std::string_view text, ModelBuilder& b) {
  auto parsed = ParseNcuCsv(text);
  if (!parsed.ok()) return parsed.status();
  const NcuReport& r = *parsed;
  b.SetFormat(SourceFormat::kNcuCsv);
  std::vector<StringId> metric_ids;
  for (const auto& m : r.metrics) metric_ids.push_back(b.Intern(m.name));
  std::map<uint32_t, std::string> processes;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<const NcuLaunch*>> by_device;
  for (const NcuLaunch& l : r.launches) {
    if (!l.process.empty()) processes[l.pid] = l.process;
    by_device[{l.pid, l.device}].push_back(&l);
  }
  for (const auto& [pid, name] : processes) b.SetProcessName(pid, name);
  std::vector<DeviceRecord> devices;
  for (const auto& [key, launches] : by_device)
    devices.push_back(DeviceOf(r, launches, key.first, [&](std::string_view s) { return b.Intern(s); }));
  b.OnDevices(devices);
  // Back to back per device, in ID order: ncu serializes the launches it profiles, and the CSV has no start
  // times, only each launch's duration.
  std::map<std::pair<uint32_t, uint32_t>, Timestamp> cursor;
  std::map<std::pair<uint32_t, std::string>, uint32_t> ordinals;
  std::vector<KernelMetricRecord> metrics;
  uint32_t corr = 0;
  size_t without_time = 0;
  for (const NcuLaunch& l : r.launches) {
    KernelRecord k;
    k.pid = l.pid;
    k.device_id = l.device;
    k.stream_id = l.stream;
    k.correlation_id = ++corr;
    k.name = b.Intern(l.kernel);
    for (int i = 0; i < 3; ++i) {
      if (l.grid[i]) k.grid[i] = l.grid[i];
      if (l.block[i]) k.block[i] = l.block[i];
    }
    SetIf(k.registers_per_thread, ValueOf(r, l, metric::kRegisters));
    SetIf(k.static_shared_bytes, ValueOf(r, l, metric::kStaticShared));
    SetIf(k.dynamic_shared_bytes, ValueOf(r, l, metric::kDynamicShared));
    const double* t = ValueOf(r, l, metric::kTime);
    int64_t duration = 1;
    if (t && *t >= 1 && *t < 1e15)
      duration = static_cast<int64_t>(std::llround(*t));
    else
      ++without_time;
    Timestamp& at = cursor[{l.pid, l.device}];
    k.start = at;
    k.end = SatAdd(at, duration);
    at = k.end;
    b.AddKernel(k, 0);
    AppendMetrics(r, l, l.pid, k.correlation_id, k.name, ordinals[{l.pid, l.kernel}]++, metric_ids, &metrics);
  }
  b.OnKernelMetrics(metrics);
  b.AddLoss("ncu_standalone", Severity::kInfo, r.launches.size(),
            "Nsight Compute report without a timeline: each profiled launch is placed back to back on its "
            "device in ncu's ID order, as long as its gpu__time_duration" +
                std::string(without_time ? " (" + std::to_string(without_time) + " without one: 1 ns)" : "") +
                "; the times between launches are not real. Open it together with a timeline of the same "
                "app to see ncu's counters on the real kernels");
  for (const LossStat& l : ReportLosses(r))
    b.AddLoss(l.name, static_cast<Severity>(l.severity), l.count, l.detail);
  return Status::Ok();
}

// ---- [SECTION] Join ---------------------------------------------------------------------------------------

NcuJoinResult AttachNcuReport(const NcuReport& r, TraceModel& m, std::string_view source) {
  NcuJoinResult res;
  res.launches = r.launches.size();
  std::unordered_map<std::string, StringId> ids;
  for (StringId i = 0; i < m.strings.size(); ++i) ids.emplace(m.strings[i], i);
  auto intern = [&](std::string_view s) -> StringId {
    auto [it, added] = ids.emplace(std::string(s), static_cast<StringId>(m.strings.size()));
    if (added) m.strings.emplace_back(s);
    return it->second;
  };
  // The timeline's kernels per process, with the ordinal a counters trace gives each: direct launches of a
  // name counted in start order, graph-launched ones apart (kGraphOrdinalBit) by correlation id, then start.
  struct TimelineKernel {
    int64_t start;
    uint32_t lane, index, corr;
    StringId name;
    bool graph;
    uint32_t ordinal = 0;
  };
  std::map<uint32_t, std::vector<TimelineKernel>> kernels;  // by pid
  for (uint32_t l = 0; l < m.lanes.size(); ++l) {
    const Lane& lane = m.lanes[l];
    if (lane.track == kNone || m.tracks[lane.track].kind != TrackKind::kGpuStream) continue;
    const uint32_t pid = m.tracks[lane.track].pid;
    for (uint32_t i = 0; i < lane.size(); ++i) {
      const EventId e{l, i};
      if (m.Kind(e) != EventKind::kKernel) continue;
      const uint32_t cfg = m.Payload(e);
      const bool graph = cfg < m.launch_configs.size() && m.launch_configs[cfg].graph_id;
      kernels[pid].push_back({m.Start(e), l, i, m.CorrelationId(e), lane.name[i], graph});
      ++res.timeline_kernels;
    }
  }
  std::vector<uint32_t> timeline_pids;
  for (auto& [pid, ks] : kernels) {
    std::sort(ks.begin(), ks.end(), [](const TimelineKernel& a, const TimelineKernel& b) {
      return std::tie(a.start, a.lane, a.index) < std::tie(b.start, b.lane, b.index);
    });
    std::map<StringId, uint32_t> direct;
    std::map<StringId, std::vector<TimelineKernel*>> graph;
    for (auto& k : ks) {
      if (k.graph)
        graph[k.name].push_back(&k);
      else
        k.ordinal = direct[k.name]++;
    }
    for (auto& [name, list] : graph) {
      std::stable_sort(list.begin(), list.end(), [](const TimelineKernel* a, const TimelineKernel* b) {
        return std::tie(a->corr, a->start, a->lane, a->index) <
               std::tie(b->corr, b->start, b->lane, b->index);
      });
      for (uint32_t o = 0; o < list.size(); ++o) list[o]->ordinal = kGraphOrdinalBit | o;
    }
    timeline_pids.push_back(pid);
  }
  std::sort(timeline_pids.begin(), timeline_pids.end(),
            [&](uint32_t a, uint32_t b) { return kernels[a].front().start < kernels[b].front().start; });
  std::vector<uint32_t> ncu_pids;
  for (const NcuLaunch& l : r.launches)
    if (std::find(ncu_pids.begin(), ncu_pids.end(), l.pid) == ncu_pids.end()) ncu_pids.push_back(l.pid);

  std::vector<StringId> metric_ids;
  for (const auto& mc : r.metrics) metric_ids.push_back(intern(mc.name));
  auto unpaired = [&](const NcuLaunch& l, std::string why) {
    ++res.unpaired_count;
    if (res.unpaired.size() < 20)
      res.unpaired.push_back(KernelBaseName(l.kernel) + " (ncu ID " + std::to_string(l.id) + "): " + why);
  };
  std::vector<KernelMetricRecord> added;
  for (size_t p = 0; p < ncu_pids.size(); ++p) {
    const uint32_t npid = ncu_pids[p];
    if (p >= timeline_pids.size()) {
      for (const NcuLaunch& l : r.launches)
        if (l.pid == npid)
          unpaired(l, "its process (ncu pid " + std::to_string(npid) + ") has no timeline process");
      continue;
    }
    const uint32_t tpid = timeline_pids[p];
    std::map<std::string, std::vector<const TimelineKernel*>> by_base;
    std::map<StringId, std::string> base_of;
    for (const auto& k : kernels[tpid]) {
      auto it = base_of.find(k.name);
      if (it == base_of.end()) it = base_of.emplace(k.name, KernelBaseName(m.Str(k.name))).first;
      by_base[it->second].push_back(&k);
    }
    std::map<std::string, size_t> next;
    std::map<std::string, std::string> base_cache;
    for (const NcuLaunch& l : r.launches) {
      if (l.pid != npid) continue;
      auto bc = base_cache.find(l.kernel);
      if (bc == base_cache.end()) bc = base_cache.emplace(l.kernel, KernelBaseName(l.kernel)).first;
      const std::string& base = bc->second;
      const size_t n = next[base]++;
      auto it = by_base.find(base);
      if (it == by_base.end()) {
        unpaired(l, "no kernel of that name in the timeline");
        continue;
      }
      if (n >= it->second.size()) {
        unpaired(l, "launch #" + std::to_string(n + 1) + " of it, the timeline has " +
                        std::to_string(it->second.size()));
        continue;
      }
      const TimelineKernel& k = *it->second[n];
      AppendMetrics(r, l, tpid, k.corr, k.name, k.ordinal, metric_ids, &added);
      ++res.paired;
    }
    // A device the timeline does not describe (an imported JSON timeline) comes from ncu's attributes.
    std::map<uint32_t, std::vector<const NcuLaunch*>> by_device;
    for (const NcuLaunch& l : r.launches)
      if (l.pid == npid) by_device[l.device].push_back(&l);
    for (const auto& [device, launches] : by_device) {
      const uint32_t dev = device;  // older clang cannot capture a structured binding in a lambda
      const bool known = std::any_of(m.devices.begin(), m.devices.end(), [&](const DeviceRecord& d) {
        return d.pid == tpid && d.device_id == dev;
      });
      if (!known) m.devices.push_back(DeviceOf(r, launches, tpid, intern));
    }
  }
  res.metrics = added.size();
  m.kernel_metrics.insert(m.kernel_metrics.end(), added.begin(), added.end());
  m.name_counts.resize(m.strings.size(), 0);
  const std::string src = source.empty() ? std::string("ncu") : "ncu " + std::string(source);
  res.summary = src + ": " + std::to_string(res.paired) + " of " + std::to_string(res.launches) +
                " profiled launches paired with timeline kernels (by kernel name and launch order)";
  if (res.unpaired_count) res.summary += "; " + std::to_string(res.unpaired_count) + " not";
  m.losses.push_back({"ncu_join", static_cast<uint8_t>(Severity::kInfo), 0, res.paired, res.summary});
  if (res.unpaired_count) {
    std::string detail;
    for (size_t i = 0; i < res.unpaired.size() && i < 5; ++i) detail += (i ? "; " : "") + res.unpaired[i];
    if (res.unpaired_count > 5) detail += "; and " + std::to_string(res.unpaired_count - 5) + " more";
    m.losses.push_back(
        {"ncu_unpaired", static_cast<uint8_t>(Severity::kWarning), 0, res.unpaired_count, detail});
  }
  for (LossStat l : ReportLosses(r)) m.losses.push_back(std::move(l));
  return res;
}

StatusOr<std::unique_ptr<TraceModel>> LoadTracesWithNcu(std::span<const MergeInput> inputs,
                                                        std::vector<std::string>* warnings,
                                                        MergePlan* plan_out) {
  std::vector<MergeInput> timeline, ncu;
  for (const MergeInput& in : inputs) (LooksLikeNcuCsv(in.bytes) ? ncu : timeline).push_back(in);
  StatusOr<std::unique_ptr<TraceModel>> model = InvalidArgument("nothing to open");
  if (timeline.empty()) {
    if (ncu.size() != 1)
      return InvalidArgument(
          "several Nsight Compute CSVs and no timeline: open one CSV alone, or CSVs together "
          "with the timeline (.gtrace) of the same app");
    return LoadTrace(ncu.front().bytes);
  }
  if (timeline.size() == 1) {
    model = LoadTrace(timeline.front().bytes);
    if (!model.ok())
      return Status(model.status().code(), timeline.front().name + ": " + model.status().message());
  } else {
    MergePlan plan;
    model = LoadMergedTraces(timeline, {}, &plan);
    if (!model.ok()) return model.status();
    if (warnings) warnings->insert(warnings->end(), plan.warnings.begin(), plan.warnings.end());
    if (plan_out) *plan_out = std::move(plan);
  }
  for (const MergeInput& in : ncu) {
    std::string_view text(reinterpret_cast<const char*>(in.bytes.data()), in.bytes.size());
    auto report = ParseNcuCsv(text);
    if (!report.ok()) {
      (*model)->losses.push_back({"ncu: " + in.name + " left out", static_cast<uint8_t>(Severity::kError), 0,
                                  1, report.status().message()});
      if (warnings) warnings->push_back(in.name + ": " + report.status().message());
      continue;
    }
    NcuJoinResult j = AttachNcuReport(*report, **model, in.name);
    if (warnings && j.unpaired_count) warnings->push_back(j.summary);
  }
  return model;
}

}  // namespace gt::viewer
