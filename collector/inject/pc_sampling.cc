// The PC-sampling module (see pc_sampling.h for what it records).
//
// [SECTION] buffers     CUpti_PCSamplingData with the arrays CUPTI fills (one for GetData, one for the
// config) [SECTION] contexts    enable on CONTEXT_CREATED (config: continuous, period, all reasons), drain on
// destroy [SECTION] data        GetData every flush (a crash loses at most one flush interval), cubins for
// source lines [SECTION] module      start / flush / stop, loss records
//
// Sequence checked on the H200: per context, in its CONTEXT_CREATED callback, cuptiPCSamplingEnable ->
// GetNumStallReasons -> GetStallReasons -> SetConfigurationAttribute{collection mode CONTINUOUS, sampling
// period 2^N, stall reasons = all, sampling data buffer, parsed output}; cuptiPCSamplingGetData every flush;
// at the end cuptiPCSamplingDisable, which copies the records still held into the configured buffer.
#include "inject/pc_sampling.h"

#include <cupti_pcsampling.h>

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "cupti/cupti_result.h"
#include "decode/cupti_decode.h"
#include "decode/launch_cbids.h"
#include "decode/pc_sampling_decode.h"
#include "gt/env.h"
#include "inject/cubin_lines.h"
#include "inject/injection.h"

namespace gt::inject {

using config::kPcSamplingDefaultPeriodExp;
using config::kPcSamplingMaxPeriodExp;
using config::kPcSamplingMinPeriodExp;
using config::TraceClockNow;
using decode::Demangle;
using decode::PcSampleAggregator;
using decode::PcSampleRow;
using decode::PcSamplingTotals;
using decode::PcStallReasonTable;
using decode::SourceLine;
using decode::SourceLineCache;

namespace {

// ---- [SECTION] buffers
// -------------------------------------------------------------------------------------------

constexpr size_t kGetDataPcs = 8192;  // PCs per GetData call (more are fetched by calling again)
constexpr size_t kConfigPcs = 16384;  // PCs CUPTI may park in the configured buffer (module reload, Disable)
constexpr int kMaxGetDataRounds = 256;  // bounds one drain even if CUPTI keeps reporting remaining PCs
constexpr size_t kMaxCubinBytes = size_t{512} << 20;  // copies kept for source correlation

struct SampleBuffer {
  CUpti_PCSamplingData data{};
  std::vector<CUpti_PCSamplingPCData> pcs;
  std::vector<CUpti_PCSamplingStallReason> reasons;
  size_t reasons_per_pc = 0;

  void Init(size_t num_pcs, size_t num_reasons) {
    reasons_per_pc = num_reasons ? num_reasons : 1;
    pcs.assign(num_pcs, CUpti_PCSamplingPCData{});
    reasons.assign(num_pcs * reasons_per_pc, CUpti_PCSamplingStallReason{});
    Reset();
  }
  // Before every use: CUPTI writes counts and names, the arrays stay ours.
  void Reset() {
    data = CUpti_PCSamplingData{};
    data.size = sizeof(CUpti_PCSamplingData);
    data.collectNumPcs = pcs.size();
    data.pPcData = pcs.data();
    for (size_t i = 0; i < pcs.size(); ++i) {
      pcs[i] = CUpti_PCSamplingPCData{};
      pcs[i].size = sizeof(CUpti_PCSamplingPCData);
      pcs[i].stallReason = &reasons[i * reasons_per_pc];
    }
  }
};

struct ContextState {
  CUcontext ctx = nullptr;
  bool enabled = false;
  std::string error;
  PcStallReasonTable reasons;
  std::vector<uint32_t> reason_index;
  std::vector<std::vector<char>> reason_name_storage;
  std::vector<char*> reason_names;
  SampleBuffer get;     // for cuptiPCSamplingGetData
  SampleBuffer parked;  // the configured buffer: CUPTI fills it on module reload and at Disable
};

struct State {
  // Contexts and the aggregator. Order: mu -> cubins -> inj.mu. CUPTI's callbacks run inside driver calls
  // that may hold driver locks a GetData on the flusher waits for, so they wait for `mu` at most 2 s.
  std::timed_mutex mu;
  bool parked_pending =
      false;  // a module was loaded: CUPTI may have parked records (taken at the next flush)
  uint32_t period_exp = kPcSamplingDefaultPeriodExp;
  bool verbose = false;
  bool getdata_on_launch = false;  // GTRACE_PCS_GETDATA=launch: GetData from the app's launch callbacks
  int64_t interval_ns = 1000000000;
  int64_t last_getdata_ns = 0;
  std::map<CUcontext, std::unique_ptr<ContextState>> contexts;
  PcSampleAggregator agg;
  CubinLines cubins{kMaxCubinBytes};  // MODULE_LOADED takes only its own lock
  std::unique_ptr<SourceLineCache> lines;
  std::unordered_set<std::string> kernels_seen;
  std::unordered_set<uint64_t> pcs_seen_without_line;
  uint64_t pcs_written = 0, rows_written = 0;
  uint64_t getdata_calls = 0, getdata_errors = 0;
  std::string last_error;
  uint64_t dropped_reported = 0;
  std::vector<std::string> context_errors;
  bool resolve_lines = true;  // GTRACE_PCS_NO_LINES: no SASS -> source correlation (diagnostics)
  // Contexts CUPTI destroyed. Never freed: their configured buffer was handed to CUPTI, which may still
  // write into it while it tears the context down.
  std::vector<std::unique_ptr<ContextState>> retired;
  Injection* inj = nullptr;  // for the before-exit hook, which CubinLines calls without arguments
  pid_t owner_pid = 0;       // the process that started sampling (the hook does nothing in forked children)
};
State* g_state = nullptr;

const char* Err(CUptiResult r) {
  return cupti::ResultText(r);
}

void NoteError(State& st, const std::string& what) {
  ++st.getdata_errors;
  if (st.getdata_errors <= 3) Warn("gtrace pc sampling: %s", what.c_str());
  st.last_error = what;
}

// ---- [SECTION] data
// ----------------------------------------------------------------------------------------------

std::string DemangleName(const char* name) {
  return Demangle(name);
}

bool ResolveLine(State& st, uint64_t crc, const std::string& function, uint64_t pc, SourceLine* out) {
  return st.resolve_lines && st.cubins.Resolve(crc, function, pc, out);
}

// Takes what CUPTI holds for one context (several calls when more PCs wait than one buffer holds).
void GetData(State& st, ContextState& c) {
  if (!c.enabled) return;
  for (int round = 0; round < kMaxGetDataRounds; ++round) {
    c.get.Reset();
    CUpti_PCSamplingGetDataParams p{};
    p.size = CUpti_PCSamplingGetDataParamsSize;
    p.ctx = c.ctx;
    p.pcSamplingData = &c.get.data;
    CUptiResult r = cuptiPCSamplingGetData(&p);
    ++st.getdata_calls;
    if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_OUT_OF_MEMORY) {
      NoteError(st, std::string("cuptiPCSamplingGetData: ") + Err(r) + " (" + std::to_string(int(r)) + ")");
      return;
    }
    st.agg.Add(c.get.data, c.reasons, DemangleName);
    if (st.verbose)
      fprintf(stderr,
              "gtrace pc sampling: GetData ctx %p: %zu PCs, %llu samples, %llu dropped, %zu remaining%s\n",
              static_cast<void*>(c.ctx), c.get.data.totalNumPcs,
              static_cast<unsigned long long>(c.get.data.totalSamples),
              static_cast<unsigned long long>(c.get.data.droppedSamples), c.get.data.remainingNumPcs,
              r == CUPTI_ERROR_OUT_OF_MEMORY ? " (hardware buffer full)" : "");
    if (r == CUPTI_ERROR_OUT_OF_MEMORY || c.get.data.remainingNumPcs == 0 || c.get.data.totalNumPcs == 0)
      return;
  }
}

// Records CUPTI copied into the configured buffer (at Disable, or when a module was reloaded).
void TakeParked(State& st, ContextState& c) {
  if (c.parked.data.totalNumPcs == 0 && c.parked.data.totalSamples == 0) return;
  st.agg.Add(c.parked.data, c.reasons, DemangleName);
  c.parked.Reset();
}

// Writes the bins gathered since the last write. Called with st.mu held; takes inj.mu for the writer.
void WriteRows(Injection& inj, State& st) {
  std::vector<PcSampleRow> rows = st.agg.TakeRows();
  if (st.verbose && !rows.empty()) fprintf(stderr, "gtrace pc sampling: writing %zu rows\n", rows.size());
  std::vector<const SourceLine*> lines(rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    lines[i] = &st.lines->Lookup(rows[i].cubin_crc, rows[i].function, rows[i].pc_offset);
  std::lock_guard<std::mutex> lock(inj.mu);
  if (!inj.writer || inj.finished) return;
  for (size_t i = 0; i < rows.size(); ++i) {
    const PcSampleRow& r = rows[i];
    StallSample s;
    s.pid = inj.pid;
    s.correlation_id = 0;
    s.kernel_name = inj.writer->Intern(r.kernel);
    s.launch_ordinal = kNone;
    s.reason = inj.writer->Intern(r.reason);
    s.pc_offset = r.pc_offset;
    if (lines[i]->known()) {
      s.source_file = inj.writer->Intern(lines[i]->file);
      s.source_line = lines[i]->line;
    } else {
      st.pcs_seen_without_line.insert(r.cubin_crc * 1000003u ^ r.pc_offset);
    }
    s.count = r.count;
    inj.writer->Add(s);
    st.kernels_seen.insert(r.kernel);
    ++st.rows_written;
  }
  uint64_t dropped = st.agg.totals().dropped_samples;
  if (dropped > st.dropped_reported) {
    AddLoss(inj, "pc_sampling_dropped_samples", static_cast<uint8_t>(Severity::kDataLoss),
            dropped - st.dropped_reported,
            "PC samples dropped by the GPU (hardware buffer back pressure); raise the period, e.g. "
            "--pc-sampling=" +
                std::to_string(st.period_exp + 2));
    st.dropped_reported = dropped;
  }
}

// ---- [SECTION] contexts
// ------------------------------------------------------------------------------------------

bool Configure(State& st, ContextState& c) {
  size_t n = 0;
  CUpti_PCSamplingGetNumStallReasonsParams np{};
  np.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
  np.ctx = c.ctx;
  np.numStallReasons = &n;
  CUptiResult r = cuptiPCSamplingGetNumStallReasons(&np);
  if (r != CUPTI_SUCCESS) {
    c.error =
        std::string("cuptiPCSamplingGetNumStallReasons: ") + Err(r) + " (" + std::to_string(int(r)) + ")";
    return false;
  }
  c.reason_index.assign(n, 0);
  c.reason_name_storage.assign(n, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE, 0));
  c.reason_names.resize(n);
  for (size_t i = 0; i < n; ++i) c.reason_names[i] = c.reason_name_storage[i].data();
  CUpti_PCSamplingGetStallReasonsParams rp{};
  rp.size = CUpti_PCSamplingGetStallReasonsParamsSize;
  rp.ctx = c.ctx;
  rp.numStallReasons = n;
  rp.stallReasonIndex = c.reason_index.data();
  rp.stallReasons = c.reason_names.data();
  r = cuptiPCSamplingGetStallReasons(&rp);
  if (r != CUPTI_SUCCESS) {
    c.error = std::string("cuptiPCSamplingGetStallReasons: ") + Err(r) + " (" + std::to_string(int(r)) + ")";
    return false;
  }
  c.reasons = PcStallReasonTable(c.reason_index.data(), c.reason_names.data(), n);
  if (st.verbose) {
    fprintf(stderr, "gtrace pc sampling: %zu stall reasons:", n);
    for (size_t i = 0; i < n; ++i) fprintf(stderr, " %u=%s", c.reason_index[i], c.reason_names[i]);
    fprintf(stderr, "\n");
  }
  c.get.Init(kGetDataPcs, n);
  c.parked.Init(kConfigPcs, n);

  CUpti_PCSamplingConfigurationInfo attrs[5] = {};
  attrs[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
  attrs[0].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
  attrs[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
  attrs[1].attributeData.samplingPeriodData.samplingPeriod = st.period_exp;
  attrs[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
  attrs[2].attributeData.stallReasonData.stallReasonCount = n;
  attrs[2].attributeData.stallReasonData.pStallReasonIndex = c.reason_index.data();
  attrs[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
  attrs[3].attributeData.samplingDataBufferData.samplingDataBuffer = &c.parked.data;
  attrs[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
  attrs[4].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
  CUpti_PCSamplingConfigurationInfoParams cp{};
  cp.size = CUpti_PCSamplingConfigurationInfoParamsSize;
  cp.ctx = c.ctx;
  cp.numAttributes = 5;
  cp.pPCSamplingConfigurationInfo = attrs;
  r = cuptiPCSamplingSetConfigurationAttribute(&cp);
  if (r != CUPTI_SUCCESS) {
    c.error = std::string("cuptiPCSamplingSetConfigurationAttribute: ") + Err(r) + " (" +
              std::to_string(int(r)) + ")";
    for (const auto& a : attrs)
      if (a.attributeStatus != CUPTI_SUCCESS)
        c.error += "; attribute " + std::to_string(int(a.attributeType)) + ": " + Err(a.attributeStatus);
    return false;
  }
  return true;
}

void EnableContext(State& st, CUcontext ctx) {
  auto& slot = st.contexts[ctx];
  if (slot) return;
  slot = std::make_unique<ContextState>();
  ContextState& c = *slot;
  c.ctx = ctx;
  // CUPTI's order: Enable first; the stall-reason queries and the configuration need an enabled context
  // (before it they fail with CUPTI_ERROR_INVALID_OPERATION, seen on the H200).
  CUpti_PCSamplingEnableParams ep{};
  ep.size = CUpti_PCSamplingEnableParamsSize;
  ep.ctx = ctx;
  CUptiResult r = cuptiPCSamplingEnable(&ep);
  if (r != CUPTI_SUCCESS) {
    c.error = std::string("cuptiPCSamplingEnable: ") + Err(r) + " (" + std::to_string(int(r)) + ")";
    st.context_errors.push_back(c.error);
    Warn("gtrace pc sampling: disabled for this context: %s", c.error.c_str());
    return;
  }
  if (!Configure(st, c)) {
    CUpti_PCSamplingDisableParams dp{};
    dp.size = CUpti_PCSamplingDisableParamsSize;
    dp.ctx = ctx;
    cuptiPCSamplingDisable(&dp);
    st.context_errors.push_back(c.error);
    Warn("gtrace pc sampling: disabled for this context: %s", c.error.c_str());
    return;
  }
  c.enabled = true;
}

// GetData, Disable (CUPTI parks the rest in the configured buffer), take the parked records.
void DisableContext(State& st, ContextState& c) {
  if (!c.enabled) return;
  if (st.verbose) fprintf(stderr, "gtrace pc sampling: disable ctx %p: GetData\n", static_cast<void*>(c.ctx));
  GetData(st, c);
  TakeParked(st, c);
  if (st.verbose)
    fprintf(stderr, "gtrace pc sampling: disable ctx %p: cuptiPCSamplingDisable\n",
            static_cast<void*>(c.ctx));
  CUpti_PCSamplingDisableParams dp{};
  dp.size = CUpti_PCSamplingDisableParamsSize;
  dp.ctx = c.ctx;
  CUptiResult r = cuptiPCSamplingDisable(&dp);
  if (r != CUPTI_SUCCESS) NoteError(st, std::string("cuptiPCSamplingDisable: ") + Err(r));
  c.enabled = false;
  TakeParked(st, c);
}

void KeepCubin(State& st, const CUpti_ModuleResourceData* m) {
  if (m) st.cubins.Keep(m->pCubin, m->cubinSize);
}

void OnCallback(Injection& inj, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  State* st = g_state;
  if (!st || !data) return;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (!st->getdata_on_launch || !decode::IsKernelLaunchCbid(cbid) || cb->callbackSite != CUPTI_API_EXIT)
      return;
    int64_t now = TraceClockNow();
    std::unique_lock<std::timed_mutex> lock(st->mu, std::try_to_lock);
    if (!lock.owns_lock() || now - st->last_getdata_ns < st->interval_ns) return;
    st->last_getdata_ns = now;
    auto it = st->contexts.find(cb->context);
    if (it != st->contexts.end()) GetData(*st, *it->second);
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RESOURCE) return;
  const auto* rd = static_cast<const CUpti_ResourceData*>(data);
  if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
    KeepCubin(*st, static_cast<const CUpti_ModuleResourceData*>(rd->resourceDescriptor));
    return;
  }
  std::unique_lock<std::timed_mutex> lock(st->mu, std::defer_lock);
  if (!lock.try_lock_for(std::chrono::seconds(2))) {
    Warn("gtrace pc sampling: callback %d skipped (the module was busy for 2 s)", int(cbid));
    return;
  }
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_CONTEXT_CREATED:
      EnableContext(*st, rd->context);
      break;
    case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING: {
      auto it = st->contexts.find(rd->context);
      if (it == st->contexts.end()) break;
      if (st->verbose)
        fprintf(stderr, "gtrace pc sampling: context %p destroyed\n", static_cast<void*>(rd->context));
      DisableContext(*st, *it->second);
      WriteRows(inj, *st);
      st->retired.push_back(std::move(it->second));
      st->contexts.erase(it);  // a new context may reuse the handle
      break;
    }
    case CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING: {
      // PCs are unique only while their module is loaded: take the samples of this one now.
      auto it = st->contexts.find(rd->context);
      if (it != st->contexts.end()) GetData(*st, *it->second);
      // After an unload + load, CUPTI parks the earlier records in the configured buffer.
      st->parked_pending = true;
      break;
    }
    default:
      break;
  }
}

std::string Describe(const State& st) {
  const PcSamplingTotals& t = st.agg.totals();
  char buf[512];
  snprintf(buf, sizeof buf,
           "%llu samples in %zu kernels (period 2^%u cycles); CUPTI total %llu, %llu in non-user kernels, "
           "%llu dropped; %llu PCs without a source line",
           static_cast<unsigned long long>(t.attributed_samples), st.kernels_seen.size(), st.period_exp,
           static_cast<unsigned long long>(t.total_samples),
           static_cast<unsigned long long>(t.non_user_samples),
           static_cast<unsigned long long>(t.dropped_samples),
           static_cast<unsigned long long>(st.pcs_seen_without_line.size()));
  return buf;
}

// GTRACE_PCS_VERBOSE: a crash prints the native stack (library + offset; addr2line on the unstripped build).
void CrashHandler(int sig) {
  void* frames[48];
  int n = backtrace(frames, 48);
  const char msg[] = "gtrace pc sampling: fatal signal, native stack:\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

void Step(const State& st, const char* what) {
  if (st.verbose) {
    fprintf(stderr, "gtrace pc sampling: %s\n", what);
    fflush(stderr);
  }
}

}  // namespace

// ---- [SECTION] module
// --------------------------------------------------------------------------------------------

namespace {
// The last samples: disable every context (CUPTI hands over what it still holds) and write the rows. The
// teardown calls into CUPTI while the app exits, so the timeline goes to disk first: whatever happens there
// can cost the samples at most. Runs from the exit fence (FinalDrainBeforeExit) and again from Stop, where it
// finds the contexts disabled unless the fence never ran (no lookup was made before exit).
void FinalDrain(Injection& inj, State& st) {
  if (inj.cupti_ok) {
    Step(st, "stop: flushing the timeline");
    FlushActivity(true);
    DrainApiCalls(inj, DrainMode::kAll);
    std::lock_guard<std::mutex> wlock(inj.mu);
    if (inj.writer && !inj.finished) {
      Status s = inj.writer->Flush();
      (void)s;  // sticky in the writer; reported at finish
    }
  }
  std::lock_guard<std::timed_mutex> lock(st.mu);
  Step(st, "stop: disabling contexts");
  for (auto& [ctx, c] : st.contexts) DisableContext(st, *c);
  Step(st, "stop: writing rows");
  WriteRows(inj, st);
  Step(st, "stop: rows written");
}

// exit() has begun and CUPTI's cubin parser is still alive (the exit fence runs this before it closes, see
// inject/cubin_lines.h): the final drain now, so its PCs get their lines. Run at the injection's own handler
// instead, PCs first seen there went without (937-16,727 of ~18,500 lookups per PyTorch run on the H200; a
// GetData alone here still left 341-866, CUPTI handing the rest over only at Disable).
// A child forked without exec (DataLoader workers) inherits the hook: it must not touch the parent's writer.
void FinalDrainBeforeExit() {
  State* st = g_state;
  if (st && getpid() == st->owner_pid) FinalDrain(*st->inj, *st);
}
}  // namespace

bool StartPcSamplingModule(Injection& inj) {
  if (inj.module_callback.load() != nullptr) {
    Warn("gtrace pc sampling: another module owns the callbacks (counters run?); PC sampling is off here");
    return false;
  }
  auto* st = new State();
  uint32_t e = inj.config.pc_sampling_period_exp;
  st->period_exp =
      e >= kPcSamplingMinPeriodExp && e <= kPcSamplingMaxPeriodExp ? e : kPcSamplingDefaultPeriodExp;
  st->verbose = env::IsSet(env::Var::kPcsVerbose);
  st->resolve_lines = !env::IsSet(env::Var::kPcsNoLines);
  if (st->verbose) {
    void* warm[2];
    backtrace(warm, 2);  // loads libgcc now, not inside the handler
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT}) signal(sig, CrashHandler);
  }
  const char* mode = env::Get(env::Var::kPcsGetData);
  st->getdata_on_launch = mode && std::strcmp(mode, "launch") == 0;
  st->interval_ns = int64_t(inj.config.flush_interval_ms) * 1000000;
  st->lines =
      std::make_unique<SourceLineCache>([st](uint64_t crc, const std::string& fn, uint64_t pc,
                                             SourceLine* out) { return ResolveLine(*st, crc, fn, pc, out); });
  for (CUpti_CallbackId id :
       {CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
        CUPTI_CBID_RESOURCE_MODULE_LOADED, CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING}) {
    CUptiResult r = cuptiEnableCallback(1, inj.subscriber, CUPTI_CB_DOMAIN_RESOURCE, id);
    if (r != CUPTI_SUCCESS) {
      Warn("gtrace pc sampling: cuptiEnableCallback(resource %d): %s", int(id), Err(r));
      std::lock_guard<std::mutex> lock(inj.mu);
      AddLoss(inj, "pc_sampling_unavailable", static_cast<uint8_t>(Severity::kError), 1,
              std::string("cuptiEnableCallback: ") + Err(r));
      delete st;
      return false;
    }
  }
  if (st->getdata_on_launch) {
    for (CUpti_CallbackId id : decode::kKernelLaunchCbids)
      cuptiEnableCallback(1, inj.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
  }
  st->inj = &inj;
  st->owner_pid = getpid();
  g_state = st;
  CubinLines::SetBeforeExitHook(FinalDrainBeforeExit);
  inj.module_callback.store(OnCallback);
  return true;
}

void FlushPcSamplingModule(Injection& inj) {
  State* st = g_state;
  if (!st) return;
  std::lock_guard<std::timed_mutex> lock(st->mu);
  if (st->parked_pending) {
    for (auto& [ctx, c] : st->contexts) TakeParked(*st, *c);
    st->parked_pending = false;
  }
  if (!st->getdata_on_launch) {
    Step(*st, "flush: GetData");
    for (auto& [ctx, c] : st->contexts) GetData(*st, *c);
    st->last_getdata_ns = TraceClockNow();
  }
  WriteRows(inj, *st);
}

void StopPcSamplingModule(Injection& inj) {
  State* st = g_state;
  if (!st) return;
  FinalDrain(inj, *st);  // a no-op when the exit fence ran it already
  std::lock_guard<std::timed_mutex> lock(st->mu);
  const PcSamplingTotals& t = st->agg.totals();
  std::string summary = Describe(*st);
  if (!env::IsSet(env::Var::kQuiet)) fprintf(stderr, "gtrace pc sampling: %s\n", summary.c_str());
  if (st->verbose)
    fprintf(stderr,
            "gtrace pc sampling: %llu GetData calls, %llu errors%s%s; %zu cubins kept (%zu bytes), %llu line "
            "lookups, %llu resolved, %llu refused at exit; %llu rows written\n",
            static_cast<unsigned long long>(st->getdata_calls),
            static_cast<unsigned long long>(st->getdata_errors),
            st->last_error.empty() ? "" : ", last: ", st->last_error.c_str(), st->cubins.count(),
            st->cubins.bytes(), static_cast<unsigned long long>(st->lines->lookups()),
            static_cast<unsigned long long>(st->lines->resolved()),
            static_cast<unsigned long long>(st->cubins.refused_at_exit()),
            static_cast<unsigned long long>(st->rows_written));
  std::lock_guard<std::mutex> wlock(inj.mu);
  if (!inj.writer || inj.finished) return;
  AddLoss(inj, "pc_sampling", static_cast<uint8_t>(Severity::kInfo), t.attributed_samples, summary);
  for (const auto& e : st->context_errors)
    AddLoss(inj, "pc_sampling_unavailable", static_cast<uint8_t>(Severity::kError), 1, e);
  if (t.hardware_buffer_full)
    AddLoss(
        inj, "pc_sampling_hardware_buffer_full", static_cast<uint8_t>(Severity::kDataLoss),
        t.hardware_buffer_full,
        "the GPU's PC-sampling buffer filled up and sampling paused: counts are too low (shares are from the "
        "samples kept). A GPU busy for seconds needs a longer period, e.g. --pc-sampling=" +
            std::to_string(std::min<uint32_t>(st->period_exp + 5, kPcSamplingMaxPeriodExp)));
  if (st->getdata_errors)
    AddLoss(inj, "pc_sampling_errors", static_cast<uint8_t>(Severity::kWarning), st->getdata_errors,
            "PC-sampling calls that failed; last: " + st->last_error);
  if (t.unknown_reason_samples)
    AddLoss(inj, "pc_sampling_unknown_reason", static_cast<uint8_t>(Severity::kWarning),
            t.unknown_reason_samples,
            "samples with a stall-reason index CUPTI did not announce (left out of the histograms)");
  if (st->lines->skipped() || st->cubins.skipped())
    AddLoss(inj, "pc_sampling_lines_skipped", static_cast<uint8_t>(Severity::kInfo),
            st->lines->skipped() + st->cubins.skipped(),
            "PCs or cubins left without source lines (lookup budget or cubin memory cap reached)");
  // PCs first seen after exit() began (this handler runs late in exit): CUPTI's parser may already be torn
  // down, so CubinLines answers no line for them (inject/cubin_lines.h).
  if (uint64_t refused = st->cubins.refused_at_exit())
    AddLoss(inj, "pc_sampling_lines_at_exit", static_cast<uint8_t>(Severity::kInfo), refused,
            "PCs first seen while the process exited are left without source lines (CUPTI's source "
            "correlation is not safe to call once exit() has begun)");
  // Contexts stay configured: CUPTI owns them until the driver tears them down. g_state stays allocated so
  // a late callback (context destroyed after exit handlers) finds it; writes are refused once finished.
}

}  // namespace gt::inject
