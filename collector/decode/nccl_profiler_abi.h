// NCCL's profiler plugin ABI, as gtrace reads it: our own minimal declarations with the layout of NCCL's
// structs (x86-64 / aarch64 Linux, LP64), never NCCL's headers. They mirror, in NCCL 2.30.7's tree
// (src/include/plugin/nccl_profiler.h and src/include/plugin/profiler/profiler_v{3,4,5,6}.h):
//   v6  ncclProfiler_v6 / ncclProfilerEventDescr_v6_t   NCCL 2.29+ looks for it first
//   v5  ncclProfiler_v5 / ncclProfilerEventDescr_v5_t   NCCL 2.28+ (2.29+ after v6)
//   v4  ncclProfiler_v4 / ncclProfilerEventDescr_v4_t   NCCL 2.27+ (2.28+ after v5)
//   v3  ncclProfiler_v3 / ncclProfilerEventDescr_v3_t   NCCL 2.26   (2.27+ after v4)
// NCCL dlsym's "ncclProfiler_v6", then _v5, _v4, _v3, _v2, _v1 (src/plugin/profiler.cc) in the library
// NCCL_PROFILER_PLUGIN names and uses the first it finds; a newer NCCL adapts its events to an older table
// (src/plugin/profiler/profiler_v5.cc copies its v6 descriptor field by field into a v5 one).
//
// The layouts checked against NCCL's headers by hand (2.26.5, 2.27.7, 2.28.9, 2.29.7, 2.30.7: the v3..v6
// structs did not change between those tags except pid_t -> ncclPid_t, an int on Linux); the static_asserts
// below pin the offsets we read, so a wrong declaration fails to build rather than reading garbage. Only the
// members gtrace reads are named; the rest are padding of the same size.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gt::decode::nccl_abi {

// ncclProfileGroup ... (nccl_profiler.h's event type bits; the same values in every version)
enum : uint64_t {
  kGroup = 1u << 0,
  kColl = 1u << 1,
  kP2p = 1u << 2,
  kProxyOp = 1u << 3,
  kProxyStep = 1u << 4,
  kProxyCtrl = 1u << 5,
  kKernelCh = 1u << 6,
  kNetPlugin = 1u << 7,
  kGroupApi = 1u << 8,       // v5+
  kCollApi = 1u << 9,        // v5+
  kP2pApi = 1u << 10,        // v5+
  kKernelLaunch = 1u << 11,  // v5+
  kCeColl = 1u << 12,        // v6
  kCeSync = 1u << 13,        // v6
  kCeBatch = 1u << 14,       // v6
};

// ncclProfilerEventState_t values gtrace acts on.
inline constexpr int kStateKernelChStop = 22;  // ncclProfilerKernelChStop (v4+): args->kernelCh.pTimer

// ncclResult_t: 0 = ncclSuccess; 1 = ncclUnhandledCudaError ... gtrace returns 0 or ncclInternalError (3).
using Result = int;
inline constexpr Result kSuccess = 0;
inline constexpr Result kInternalError = 3;
// ncclDebugLogger_t: void (*)(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...).
using DebugLogger = void (*)(int level, unsigned long flags, const char* file, int line, const char* fmt,
                             ...);

// ---- v5 (and v6, whose descriptor extends v5's union; all v5 members keep their offsets)
struct CollV5 {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  uint8_t nChannels;
  uint8_t nWarps;
  const char* algo;
  const char* proto;
  void* parentGroup;
};
struct P2pV5 {
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
  uint8_t nChannels;
  void* parentGroup;
};
struct KernelChV4 {  // v4, v5, v6
  uint8_t channelId;
  uint64_t pTimer;  // the GPU's %globaltimer when the channel's work started
};
struct CeCollV6 {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  const char* syncStrategy;  // "MC" or "UC"
  bool intraBatchSync;
  uint32_t batchSize;
  uint32_t numBatches;
  uint32_t ceSeqNum;
  void* stream;
};

struct DescrV5 {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    CollV5 coll;
    P2pV5 p2p;
    KernelChV4 kernelCh;
  };
};
struct DescrV6 {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    CollV5 coll;
    P2pV5 p2p;
    KernelChV4 kernelCh;
    CeCollV6 ceColl;
  };
};

// ---- v4: uint8_t type; coll and p2p without parentGroup
struct CollV4 {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  uint8_t nChannels;
  uint8_t nWarps;
  const char* algo;
  const char* proto;
};
struct P2pV4 {
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
  uint8_t nChannels;
};
struct DescrV4 {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    CollV4 coll;
    P2pV4 p2p;
    KernelChV4 kernelCh;
  };
};

// ---- v3: the communicator is in the descriptor (init knows none of it); no GPU timer
struct CollV3 {
  const char* name;
  uint64_t commHash;
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  uint8_t nMaxChannels;
  uint8_t nWarps;
  const char* algo;
  const char* proto;
};
struct P2pV3 {
  const char* name;
  uint64_t commHash;
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
};
struct DescrV3 {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    CollV3 coll;
    P2pV3 p2p;
    uint8_t kernelChChannelId;
  };
};

// recordEventState's argument: a union; v4..v6 = 8 bytes (kernelCh.pTimer is the one gtrace reads), v3 = 16.
union StateArgsV4 {
  size_t proxyStepTransSize;
  int proxyCtrlAppendedProxyOps;
  void* netPluginData;
  uint64_t kernelChPTimer;
};
union StateArgsV3 {
  struct {
    size_t transSize;
    int steps;
  } proxyOp;
  int proxyCtrlAppendedProxyOps;
};

// ---- the function tables NCCL dlsym's
struct ProfilerV6 {
  const char* name;
  Result (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                 int nranks, int rank, DebugLogger logfn);
  Result (*startEvent)(void* context, void** eHandle, DescrV6* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, int eState, StateArgsV4* eStateArgs);
  Result (*finalize)(void* context);
};
struct ProfilerV5 {
  const char* name;
  Result (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                 int nranks, int rank, DebugLogger logfn);
  Result (*startEvent)(void* context, void** eHandle, DescrV5* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, int eState, StateArgsV4* eStateArgs);
  Result (*finalize)(void* context);
};
struct ProfilerV4 {
  const char* name;
  Result (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash, int nNodes,
                 int nranks, int rank, DebugLogger logfn);
  Result (*startEvent)(void* context, void** eHandle, DescrV4* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, int eState, StateArgsV4* eStateArgs);
  Result (*finalize)(void* context);
};
struct ProfilerV3 {
  const char* name;
  Result (*init)(void** context, int* eActivationMask);
  Result (*startEvent)(void* context, void** eHandle, DescrV3* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, int eState, StateArgsV3* eStateArgs);
  Result (*finalize)(void* context);
};

// ---- layout checks (LP64). Offsets derived by hand from NCCL's declarations (natural alignment).
static_assert(sizeof(void*) == 8 && sizeof(size_t) == 8 && sizeof(int) == 4, "LP64 only");
static_assert(offsetof(DescrV5, rank) == 16 && offsetof(DescrV5, coll) == 24);
static_assert(offsetof(CollV5, func) == 8 && offsetof(CollV5, count) == 32 && offsetof(CollV5, root) == 40 &&
              offsetof(CollV5, datatype) == 48 && offsetof(CollV5, nChannels) == 56 &&
              offsetof(CollV5, nWarps) == 57 && offsetof(CollV5, algo) == 64 &&
              offsetof(CollV5, proto) == 72 && offsetof(CollV5, parentGroup) == 80 && sizeof(CollV5) == 88);
static_assert(offsetof(P2pV5, count) == 24 && offsetof(P2pV5, peer) == 32 &&
              offsetof(P2pV5, nChannels) == 36 && offsetof(P2pV5, parentGroup) == 40 && sizeof(P2pV5) == 48);
static_assert(offsetof(KernelChV4, pTimer) == 8 && sizeof(KernelChV4) == 16);
static_assert(offsetof(CeCollV6, syncStrategy) == 56 && offsetof(CeCollV6, ceSeqNum) == 76 &&
              offsetof(CeCollV6, stream) == 80 && sizeof(CeCollV6) == 88);
// The union's largest member is coll (v5) / coll = ceColl (v6): both descriptors are 112 bytes.
static_assert(sizeof(DescrV5) == 112 && sizeof(DescrV6) == 112);
static_assert(offsetof(DescrV4, rank) == 16 && offsetof(DescrV4, coll) == 24 && sizeof(CollV4) == 80 &&
              sizeof(DescrV4) == 104);
static_assert(offsetof(CollV3, seqNumber) == 16 && offsetof(CollV3, func) == 24 &&
              offsetof(CollV3, count) == 48 && offsetof(CollV3, root) == 56 &&
              offsetof(CollV3, datatype) == 64 && offsetof(CollV3, nMaxChannels) == 72 &&
              offsetof(CollV3, algo) == 80 && offsetof(CollV3, proto) == 88 && sizeof(CollV3) == 96 &&
              sizeof(DescrV3) == 120);
static_assert(offsetof(P2pV3, count) == 40 && offsetof(P2pV3, peer) == 48);
static_assert(sizeof(StateArgsV4) == 8 && sizeof(StateArgsV3) == 16);
static_assert(offsetof(ProfilerV5, finalize) == 40 && sizeof(ProfilerV5) == 48 && sizeof(ProfilerV3) == 48);

}  // namespace gt::decode::nccl_abi
