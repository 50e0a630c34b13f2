#include "decode/cupti_decode.h"

#include <algorithm>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "decode/device_peaks.h"

namespace gt::decode {

// ---- [SECTION] field mappers
// -------------------------------------------------------------------------------------

uint8_t MapCopyKind(uint32_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return static_cast<uint8_t>(CopyKind::kHtoD);
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return static_cast<uint8_t>(CopyKind::kDtoH);
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return static_cast<uint8_t>(CopyKind::kHtoA);
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return static_cast<uint8_t>(CopyKind::kAtoH);
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return static_cast<uint8_t>(CopyKind::kAtoA);
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return static_cast<uint8_t>(CopyKind::kAtoD);
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return static_cast<uint8_t>(CopyKind::kDtoA);
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return static_cast<uint8_t>(CopyKind::kDtoD);
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return static_cast<uint8_t>(CopyKind::kHtoH);
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return static_cast<uint8_t>(CopyKind::kPtoP);
    default:
      return static_cast<uint8_t>(CopyKind::kUnknown);
  }
}

uint8_t MapMemoryKind(uint32_t k) {
  // CUPTI's values 0..7 and gt::MemoryKind share their order on purpose; anything newer is "unknown".
  return k <= CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC ? static_cast<uint8_t>(k) : 0;
}

uint8_t MapSyncKind(uint32_t t) {
  switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return static_cast<uint8_t>(SyncKind::kEventSync);
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return static_cast<uint8_t>(SyncKind::kStreamWaitEvent);
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return static_cast<uint8_t>(SyncKind::kStreamSync);
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return static_cast<uint8_t>(SyncKind::kContextSync);
    default:
      return static_cast<uint8_t>(SyncKind::kUnknown);
  }
}

uint8_t MapLaunchType(const CUpti_ActivityKernel10& k) {
  if (k.graphId != 0) return static_cast<uint8_t>(LaunchType::kGraph);
  switch (k.launchType) {
    case CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE:
      return static_cast<uint8_t>(LaunchType::kCooperativeSingle);
    case CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE:
      return static_cast<uint8_t>(LaunchType::kCooperativeMulti);
    default:
      break;
  }
  if (k.clusterX > 1 || k.clusterY > 1 || k.clusterZ > 1) return static_cast<uint8_t>(LaunchType::kCluster);
  return static_cast<uint8_t>(LaunchType::kRegular);
}

const char* OverheadKindName(uint32_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
      return "driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
      return "CUPTI buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
      return "CUPTI instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
      return "CUPTI resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return "module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
      return "lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
      return "command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
      return "activity buffer request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT:
      return "UVM activity init";
    default:
      return "CUPTI overhead";
  }
}

static uint32_t Dim(int32_t v) {
  return v > 0 ? static_cast<uint32_t>(v) : 0;
}

KernelRecord DecodeKernel(const CUpti_ActivityKernel10& a, const DecodeContext& c) {
  KernelRecord r;
  r.start = c.T(a.start);
  r.end = c.T(a.end);
  r.pid = c.pid;
  r.device_id = a.deviceId;
  r.context_id = a.contextId;
  r.stream_id = a.streamId;
  r.correlation_id = a.correlationId;
  r.grid = {Dim(a.gridX), Dim(a.gridY), Dim(a.gridZ)};
  r.block = {Dim(a.blockX), Dim(a.blockY), Dim(a.blockZ)};
  r.cluster = {a.clusterX, a.clusterY, a.clusterZ};
  r.registers_per_thread = a.registersPerThread;
  r.static_shared_bytes = Dim(a.staticSharedMemory);
  r.dynamic_shared_bytes = Dim(a.dynamicSharedMemory);
  r.local_bytes_per_thread = a.localMemoryPerThread;
  r.launch_type = MapLaunchType(a);
  r.graph_id = a.graphId;
  r.graph_node_id = a.graphNodeId;
  return r;
}

MemcpyRecord DecodeMemcpy(const CUpti_ActivityMemcpy6& a, const DecodeContext& c) {
  MemcpyRecord r;
  r.start = c.T(a.start);
  r.end = c.T(a.end);
  r.pid = c.pid;
  r.device_id = a.deviceId;
  r.context_id = a.contextId;
  r.stream_id = a.streamId;
  r.correlation_id = a.correlationId;
  r.bytes = a.bytes;
  r.copy_kind = MapCopyKind(a.copyKind);
  r.src_kind = MapMemoryKind(a.srcKind);
  r.dst_kind = MapMemoryKind(a.dstKind);
  r.is_async = (a.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0;
  r.graph_id = a.graphId;
  return r;
}

MemsetRecord DecodeMemset(const CUpti_ActivityMemset4& a, const DecodeContext& c) {
  MemsetRecord r;
  r.start = c.T(a.start);
  r.end = c.T(a.end);
  r.pid = c.pid;
  r.device_id = a.deviceId;
  r.context_id = a.contextId;
  r.stream_id = a.streamId;
  r.correlation_id = a.correlationId;
  r.bytes = a.bytes;
  r.value = a.value;
  r.memory_kind = MapMemoryKind(a.memoryKind);
  r.is_async = (a.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? 1 : 0;
  r.graph_id = a.graphId;
  return r;
}

ApiCallRecord DecodeApi(const CUpti_ActivityAPI& a, const DecodeContext& c) {
  ApiCallRecord r;
  r.start = c.T(a.start);
  r.end = c.T(a.end);
  r.pid = a.processId ? a.processId : c.pid;
  r.tid = a.threadId;
  r.correlation_id = a.correlationId;
  r.callback_id = a.cbid;
  r.return_code = static_cast<int32_t>(a.returnValue);
  r.domain =
      static_cast<uint8_t>(a.kind == CUPTI_ACTIVITY_KIND_DRIVER ? ApiDomain::kDriver : ApiDomain::kRuntime);
  return r;
}

bool IsKeyRuntimeApi(std::string_view name) {
  if (name.substr(0, 4) != "cuda") return false;
  // Substrings of the names that matter on a timeline; the rest are queries and setters.
  static constexpr std::string_view kKeep[] = {
      "Launch",           "Memcpy",
      "Memset",           "Synchronize",
      "Malloc",           "Free",
      "HostAlloc",        "HostRegister",
      "HostUnregister",   "EventRecord",
      "EventQuery",       "EventCreate",
      "EventDestroy",     "StreamCreate",
      "StreamDestroy",    "StreamWaitEvent",
      "StreamQuery",      "StreamBeginCapture",
      "StreamEndCapture", "StreamAddCallback",
      "GraphInstantiate", "GraphUpload",
      "GraphExecUpdate",  "MemPrefetch",
      "MemAdvise",        "SetDevice",
      "DeviceReset",      "ProfilerStart",
      "ProfilerStop",     "Ipc",
      "PeerAccess",       "SetValidDevices",
      "ThreadExit",
  };
  for (std::string_view k : kKeep)
    if (name.find(k) != std::string_view::npos) return true;
  return false;
}

uint8_t SyncKindOfApi(uint8_t domain, uint32_t cbid) {
  SyncKind k = SyncKind::kUnknown;
  if (domain == 0) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020:
      case CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020:
        k = SyncKind::kContextSync;
        break;
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000:
        k = SyncKind::kStreamSync;
        break;
      case CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020:
        k = SyncKind::kEventSync;
        break;
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020:
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000:
        k = SyncKind::kStreamWaitEvent;
        break;
      default:
        break;
    }
  } else {
    switch (cbid) {
      case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize:
      case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2:
        k = SyncKind::kContextSync;
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize:
      case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz:
        k = SyncKind::kStreamSync;
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize:
        k = SyncKind::kEventSync;
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent:
      case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz:
        k = SyncKind::kStreamWaitEvent;
        break;
      default:
        break;
    }
  }
  return static_cast<uint8_t>(k);
}

SyncRecord DecodeSync(const CUpti_ActivitySynchronization2& a, const DecodeContext& c) {
  SyncRecord r;
  r.start = c.T(a.start);
  r.end = c.T(a.end);
  r.pid = c.pid;
  r.context_id = a.contextId;
  // CUPTI uses UINT32_MAX for "not applicable" stream/event ids, the same convention as gt::kNone.
  r.stream_id = a.streamId;
  r.correlation_id = a.correlationId;
  r.event_id = a.cudaEventId;
  r.sync_kind = MapSyncKind(a.type);
  return r;
}

MemoryRecord DecodeMemory(const CUpti_ActivityMemory4& a, const DecodeContext& c) {
  MemoryRecord r;
  r.timestamp = c.T(a.timestamp);
  r.pid = a.processId ? a.processId : c.pid;
  r.device_id = a.deviceId;
  r.context_id = a.contextId;
  r.stream_id = a.streamId;
  r.correlation_id = a.correlationId;
  r.address = a.address;
  r.bytes = a.bytes;
  r.op = static_cast<uint8_t>(a.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
                                  ? MemoryOp::kFree
                                  : MemoryOp::kAlloc);
  r.memory_kind = MapMemoryKind(a.memoryKind);
  r.is_async = a.isAsync ? 1 : 0;
  return r;
}

OverheadRecord DecodeOverhead(const CUpti_ActivityOverhead3& a, const DecodeContext& c) {
  OverheadRecord r;
  r.start = c.T(a.start);
  r.end = c.T(a.end);
  r.pid = c.pid;
  if (a.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || a.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
    if (a.objectId.pt.processId) r.pid = a.objectId.pt.processId;
    r.tid = a.objectId.pt.threadId;
  }
  return r;
}

ContextRecord DecodeContextRecord(const CUpti_ActivityContext3& a, const DecodeContext& c) {
  ContextRecord r;
  r.pid = c.pid;
  r.device_id = a.deviceId;
  r.context_id = a.contextId;
  return r;
}

DeviceRecord DecodeDevice(const CUpti_ActivityDevice5& a, const DecodeContext& c) {
  DeviceRecord d;
  d.device_id = a.id;
  d.pid = c.pid;
  d.cc_major = static_cast<uint8_t>(a.computeCapabilityMajor);
  d.cc_minor = static_cast<uint8_t>(a.computeCapabilityMinor);
  d.sm_count = a.numMultiprocessors;
  d.sm_clock_khz = a.coreClockRate;
  d.memory_bytes = a.globalMemorySize;
  d.l2_bytes = a.l2CacheSize;
  d.shared_mem_per_sm = a.maxSharedMemoryPerMultiprocessor;
  d.shared_mem_per_block_max = a.maxSharedMemoryPerBlock;
  d.regs_per_sm = a.maxRegistersPerMultiprocessor;
  d.max_warps_per_sm = a.maxWarpsPerMultiprocessor;
  d.max_blocks_per_sm = a.maxBlocksPerMultiprocessor;
  d.max_threads_per_block = a.maxThreadsPerBlock;
  d.warp_size = a.numThreadsPerWarp ? a.numThreadsPerWarp : 32;
  // globalMemoryBandwidth is in KB/s (H200: 4.8e9 KB/s = 4.8 TB/s, the datasheet's figure).
  DerivePeaks(d, static_cast<double>(a.globalMemoryBandwidth) * 1000.0);
  return d;
}

std::string ApiDisplayName(std::string_view cupti_name) {
  // "cudaLaunchKernel_v7000" -> "cudaLaunchKernel", "cudaMemcpy_ptds_v7000" -> "cudaMemcpy_ptds"
  size_t v = cupti_name.rfind("_v");
  if (v != std::string_view::npos && v + 2 < cupti_name.size()) {
    bool digits = true;
    for (size_t i = v + 2; i < cupti_name.size(); ++i)
      digits = digits && cupti_name[i] >= '0' && cupti_name[i] <= '9';
    if (digits) cupti_name = cupti_name.substr(0, v);
  }
  return std::string(cupti_name);
}

std::string Demangle(const char* name) {
  if (!name) return {};
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || !out) return name;
  std::string s(out);
  std::free(out);
  return s;
}

// ---- [SECTION] ActivityDecoder
// -----------------------------------------------------------------------------------

ActivityDecoder::ActivityDecoder(TraceWriter* writer, DecoderOptions options)
    : writer_(writer), options_(options) {
  kernel_names_.reserve(256);
  threads_.reserve(64);
  streams_.reserve(64);
}

StringId ActivityDecoder::KernelName(const char* mangled) {
  if (!mangled) return 0;
  auto it = kernel_names_.find(mangled);
  if (it != kernel_names_.end() && it->second.mangled == mangled) return it->second.id;
  StringId id = writer_->Intern(Demangle(mangled));
  kernel_names_[mangled] = NameEntry{mangled, id};
  return id;
}

StringId ActivityDecoder::ApiName(uint8_t domain, uint32_t cbid) {
  auto& table = api_names_[domain & 1];
  if (cbid < table.size() && table[cbid] != 0) return table[cbid];
  if (cbid >= 65536) return writer_->Intern("cbid " + std::to_string(cbid));
  if (cbid >= table.size()) table.resize(cbid + 1, 0);
  const char* name = options_.api_name ? options_.api_name(domain, cbid) : nullptr;
  table[cbid] =
      name && *name
          ? writer_->Intern(ApiDisplayName(name))
          : writer_->Intern(std::string(domain ? "driver cbid " : "runtime cbid ") + std::to_string(cbid));
  return table[cbid];
}

void ActivityDecoder::AddApiCall(ApiCallRecord r) {
  if (!InWindow(r.start, r.end)) {
    ++stats_.outside_window;
    return;
  }
  if (!r.pid) r.pid = options_.context.pid;
  r.name = ApiName(r.domain, r.callback_id);
  NoteThread(r.tid);
  writer_->Add(r);
  ++stats_.api_calls;
}

void ActivityDecoder::AddHostRange(NvtxRecord r) {
  if (!InWindow(r.start, r.end)) {
    ++stats_.outside_window;
    return;
  }
  if (!r.pid) r.pid = options_.context.pid;
  NoteThread(r.tid);
  writer_->Add(r);
  ++stats_.host_ranges;
}

void ActivityDecoder::WriteNvtx(const NvtxRecord& r) {
  if (!options_.nvtx_domains_only.empty()) {
    if (nvtx_domain_ids_.empty())
      for (const std::string& d : options_.nvtx_domains_only) nvtx_domain_ids_.push_back(writer_->Intern(d));
    if (std::find(nvtx_domain_ids_.begin(), nvtx_domain_ids_.end(), r.domain) == nvtx_domain_ids_.end()) {
      ++stats_.nvtx_filtered;
      return;
    }
  }
  writer_->Add(r);
  ++stats_.nvtx;
  // Payload pushes are stamped in CUPTI's clock (the callback cannot know the shift applied later).
  NvtxRecord key = r;
  key.start -= options_.context.clock_offset_ns;
  if (r.domain == 0 || !nvtx_payloads_.Take(key, &payload_fields_)) return;
  payload_args_.clear();
  AppendArgRecords(
      r, payload_fields_, [this](const std::string& s) { return writer_->Intern(s); }, &payload_args_);
  for (const NvtxArgRecord& a : payload_args_) writer_->Add(a);
  nvtx_args_written_ += payload_args_.size();
}

void ActivityDecoder::EmitNvtx() {
  auto& out = nvtx_.output();
  for (const auto& r : out) {
    // A range counts when it overlaps the window.
    if ((options_.window_start_ns && r.end < options_.window_start_ns) ||
        (options_.window_end_ns && r.start > options_.window_end_ns)) {
      ++stats_.outside_window;
      continue;
    }
    WriteNvtx(r);
  }
  out.clear();
}

void ActivityDecoder::AddSync(SyncRecord r) {
  if (!InWindow(r.start, r.end)) {
    ++stats_.outside_window;
    return;
  }
  if (!r.pid) r.pid = options_.context.pid;
  writer_->Add(r);
  ++stats_.syncs;
}

void ActivityDecoder::NoteThread(uint32_t tid) {
  for (uint32_t t : threads_)
    if (t == tid) return;
  threads_.push_back(tid);
  if (options_.on_new_thread) options_.on_new_thread(options_.on_new_thread_ctx, tid);
}

void ActivityDecoder::NoteStream(uint32_t device, uint32_t context, uint32_t stream) {
  uint64_t key = (static_cast<uint64_t>(context) << 32) | stream;
  for (uint64_t k : streams_)
    if (k == key) return;
  streams_.push_back(key);
  StreamRecord s;
  s.pid = options_.context.pid;
  s.device_id = device;
  s.context_id = context;
  s.stream_id = stream;
  auto it = null_stream_of_context_.find(context);
  s.is_default = it != null_stream_of_context_.end() && it->second == stream;
  writer_->Add(s);
}

void ActivityDecoder::Decode(const CUpti_Activity* rec) {
  const DecodeContext& c = options_.context;
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& a = *reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      KernelRecord r = DecodeKernel(a, c);
      if (!InWindow(r.start, r.end)) {
        ++stats_.outside_window;
        return;
      }
      r.name = KernelName(a.name);
      NoteStream(r.device_id, r.context_id, r.stream_id);
      writer_->Add(r);
      ++stats_.kernels;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      MemcpyRecord r = DecodeMemcpy(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec), c);
      if (!InWindow(r.start, r.end)) {
        ++stats_.outside_window;
        return;
      }
      NoteStream(r.device_id, r.context_id, r.stream_id);
      writer_->Add(r);
      ++stats_.memcpys;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      MemsetRecord r = DecodeMemset(*reinterpret_cast<const CUpti_ActivityMemset4*>(rec), c);
      if (!InWindow(r.start, r.end)) {
        ++stats_.outside_window;
        return;
      }
      NoteStream(r.device_id, r.context_id, r.stream_id);
      writer_->Add(r);
      ++stats_.memsets;
      return;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      ApiCallRecord r = DecodeApi(*reinterpret_cast<const CUpti_ActivityAPI*>(rec), c);
      if (!InWindow(r.start, r.end)) {
        ++stats_.outside_window;
        return;
      }
      r.name = ApiName(r.domain, r.callback_id);
      NoteThread(r.tid);
      writer_->Add(r);
      ++stats_.api_calls;
      return;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      SyncRecord r = DecodeSync(*reinterpret_cast<const CUpti_ActivitySynchronization2*>(rec), c);
      if (!InWindow(r.start, r.end)) {
        ++stats_.outside_window;
        return;
      }
      writer_->Add(r);
      ++stats_.syncs;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const auto& a = *reinterpret_cast<const CUpti_ActivityMemory4*>(rec);
      MemoryRecord r = DecodeMemory(a, c);
      if (!InWindow(r.timestamp, r.timestamp)) {
        ++stats_.outside_window;
        return;
      }
      writer_->Add(r);
      ++stats_.memory;
      return;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto& a = *reinterpret_cast<const CUpti_ActivityOverhead3*>(rec);
      OverheadRecord r = DecodeOverhead(a, c);
      if (!InWindow(r.start, r.end)) {
        ++stats_.outside_window;
        return;
      }
      r.kind = writer_->Intern(OverheadKindName(a.overheadKind));
      writer_->Add(r);
      ++stats_.overheads;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto& a = *reinterpret_cast<const CUpti_ActivityMarker2*>(rec);
      MarkerEvent e;
      e.id = a.id;
      e.timestamp = c.T(a.timestamp);
      e.pid = c.pid;
      if (a.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || a.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
        if (a.objectId.pt.processId) e.pid = a.objectId.pt.processId;
        e.tid = a.objectId.pt.threadId;
      }
      if (a.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        e.type = MarkerEvent::kStart;
      } else if (a.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        e.type = MarkerEvent::kEnd;
      } else if (a.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
        e.type = MarkerEvent::kMark;
      } else {
        return;  // sync-object markers (acquire/release) are not NVTX ranges
      }
      if (e.type != MarkerEvent::kEnd) {
        if (!InWindow(e.timestamp, e.timestamp) && e.type == MarkerEvent::kMark) {
          ++stats_.outside_window;
          return;
        }
        e.message = a.name ? writer_->Intern(a.name) : 0;
        e.domain = a.domain ? writer_->Intern(a.domain) : 0;
      } else if (e.timestamp > last_ts_) {
        last_ts_ = e.timestamp;
      }
      if (e.tid) NoteThread(e.tid);
      nvtx_.OnMarker(e);
      EmitNvtx();
      return;
    }
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: {
      const auto& a = *reinterpret_cast<const CUpti_ActivityMarkerData2*>(rec);
      MarkerPayload p;
      p.id = a.id;
      p.has_color = (a.flags & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB) != 0;
      p.color = a.color;
      p.category = a.category;
      uint64_t bits = a.payload.metricValueUint64;
      if (bits != 0) {
        p.payload = bits;
        switch (a.payloadKind) {
          case CUPTI_METRIC_VALUE_KIND_DOUBLE:
            p.payload_kind = static_cast<uint8_t>(NvtxPayloadKind::kF64);
            break;
          case CUPTI_METRIC_VALUE_KIND_INT64:
            p.payload_kind = static_cast<uint8_t>(NvtxPayloadKind::kI64);
            break;
          default:
            p.payload_kind = static_cast<uint8_t>(NvtxPayloadKind::kU64);
            break;
        }
      }
      nvtx_.OnPayload(p);
      return;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto& a = *reinterpret_cast<const CUpti_ActivityDevice5*>(rec);
      DeviceRecord d = DecodeDevice(a, c);
      d.name = a.name ? writer_->Intern(a.name) : 0;
      char uuid[48];
      const unsigned char* u = reinterpret_cast<const unsigned char*>(a.uuid.bytes);
      std::snprintf(uuid, sizeof uuid,
                    "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                    u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
      d.uuid = writer_->Intern(uuid);
      d.chip = writer_->Intern(ChipForComputeCapability(d.cc_major, d.cc_minor));
      writer_->Add(d);
      ++stats_.devices;
      return;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      const auto& a = *reinterpret_cast<const CUpti_ActivityContext3*>(rec);
      null_stream_of_context_[a.contextId] = a.nullStreamId;
      writer_->Add(DecodeContextRecord(a, c));
      ++stats_.contexts;
      return;
    }
    case CUPTI_ACTIVITY_KIND_NAME: {
      const auto& a = *reinterpret_cast<const CUpti_ActivityName*>(rec);
      if (!a.name) return;
      if (a.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) {
        ThreadRecord t;
        t.pid = a.objectId.pt.processId ? a.objectId.pt.processId : c.pid;
        t.tid = a.objectId.pt.threadId;
        t.name = writer_->Intern(a.name);
        writer_->Add(t);
      } else if (a.objectKind == CUPTI_ACTIVITY_OBJECT_STREAM) {
        StreamRecord s;
        s.pid = c.pid;
        s.device_id = a.objectId.dcs.deviceId;
        s.context_id = a.objectId.dcs.contextId;
        s.stream_id = a.objectId.dcs.streamId;
        s.name = writer_->Intern(a.name);
        writer_->Add(s);
      }
      ++stats_.names;
      return;
    }
    default:
      ++stats_.unknown_kinds;
      return;
  }
}

void ActivityDecoder::EndBuffer() {
  nvtx_.EndBuffer();
  auto& out = nvtx_.output();
  for (const auto& r : out) {
    if ((options_.window_start_ns && r.end < options_.window_start_ns) ||
        (options_.window_end_ns && r.start > options_.window_end_ns)) {
      ++stats_.outside_window;
      continue;
    }
    WriteNvtx(r);
  }
  out.clear();
}

void ActivityDecoder::Finish() {
  nvtx_.CloseAll(last_ts_);
  EndBuffer();
}

}  // namespace gt::decode
