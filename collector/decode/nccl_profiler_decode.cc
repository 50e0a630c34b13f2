#include "decode/nccl_profiler_decode.h"

#include <cstring>

namespace gt::decode {

void CopyNcclName(const char* s, char (&dst)[kNcclNameBytes]) {
  size_t n = 0;
  if (s)
    while (n < kNcclNameBytes - 1 && s[n]) ++n;
  if (n) std::memcpy(dst, s, n);
  dst[n] = '\0';
}

NcclEventType NcclTypeOf(uint64_t type_bits, int version) {
  using namespace nccl_abi;
  switch (type_bits) {
    case kGroup:
      return NcclEventType::kGroup;
    case kColl:
      return NcclEventType::kColl;
    case kP2p:
      return NcclEventType::kP2p;
    case kKernelCh:
      return NcclEventType::kChannel;
    case kProxyOp:
    case kProxyStep:
    case kProxyCtrl:
    case kNetPlugin:
      return NcclEventType::kIgnored;
    case kGroupApi:
    case kCollApi:
    case kP2pApi:
    case kKernelLaunch:
      return version >= 5 ? NcclEventType::kIgnored : NcclEventType::kUnknown;
    case kCeColl:
      return version >= 6 ? NcclEventType::kCeColl : NcclEventType::kUnknown;
    case kCeSync:
    case kCeBatch:
      return version >= 6 ? NcclEventType::kIgnored : NcclEventType::kUnknown;
    default:
      return NcclEventType::kUnknown;
  }
}

namespace {

NcclEvent Base(NcclEventType type, int rank, const NcclCommInfo& comm) {
  NcclEvent e;
  e.type = type;
  e.comm_hash = comm.comm_hash;
  e.nranks = comm.nranks;
  e.rank = rank >= 0 ? rank : comm.rank;
  return e;
}

template <class Coll>
void ReadColl(const Coll& c, uint8_t n_channels, NcclEvent* e) {
  e->seq = c.seqNumber;
  e->count = c.count;
  e->root = c.root;
  e->n_channels = n_channels;
  e->n_warps = c.nWarps;
  CopyNcclName(c.func, e->func);
  CopyNcclName(c.datatype, e->datatype);
  CopyNcclName(c.algo, e->algo);
  CopyNcclName(c.proto, e->proto);
}

template <class P2p>
void ReadP2p(const P2p& p, NcclEvent* e) {
  e->count = p.count;
  e->root = p.peer;
  CopyNcclName(p.func, e->func);
  CopyNcclName(p.datatype, e->datatype);
}

// v5 and v6 share every member but ceColl.
template <class D>
NcclEvent ReadV5Like(const D& d, const NcclCommInfo& comm, int version) {
  NcclEvent e = Base(NcclTypeOf(d.type, version), d.rank, comm);
  switch (e.type) {
    case NcclEventType::kColl:
      ReadColl(d.coll, d.coll.nChannels, &e);
      break;
    case NcclEventType::kP2p:
      ReadP2p(d.p2p, &e);
      e.n_channels = d.p2p.nChannels;
      break;
    case NcclEventType::kChannel:
      e.channel = d.kernelCh.channelId;
      e.gpu_start = d.kernelCh.pTimer;
      break;
    default:
      break;
  }
  return e;
}

}  // namespace

NcclEvent ReadNcclDescr(const nccl_abi::DescrV6& d, const NcclCommInfo& comm) {
  NcclEvent e = ReadV5Like(d, comm, 6);
  if (e.type == NcclEventType::kCeColl) {
    const nccl_abi::CeCollV6& c = d.ceColl;
    e.seq = c.seqNumber;
    e.count = c.count;
    e.root = c.root;
    CopyNcclName(c.func, e.func);
    CopyNcclName(c.datatype, e.datatype);
    CopyNcclName("CE", e.algo);
    CopyNcclName(c.syncStrategy, e.proto);
  }
  return e;
}

NcclEvent ReadNcclDescr(const nccl_abi::DescrV5& d, const NcclCommInfo& comm) {
  return ReadV5Like(d, comm, 5);
}

NcclEvent ReadNcclDescr(const nccl_abi::DescrV4& d, const NcclCommInfo& comm) {
  NcclEvent e = Base(NcclTypeOf(d.type, 4), d.rank, comm);
  switch (e.type) {
    case NcclEventType::kColl:
      ReadColl(d.coll, d.coll.nChannels, &e);
      break;
    case NcclEventType::kP2p:
      ReadP2p(d.p2p, &e);
      e.n_channels = d.p2p.nChannels;
      break;
    case NcclEventType::kChannel:
      e.channel = d.kernelCh.channelId;
      e.gpu_start = d.kernelCh.pTimer;
      break;
    default:
      break;
  }
  return e;
}

NcclEvent ReadNcclDescr(const nccl_abi::DescrV3& d, const NcclCommInfo& comm) {
  NcclEvent e = Base(NcclTypeOf(d.type, 3), d.rank, comm);
  switch (e.type) {
    case NcclEventType::kColl:
      ReadColl(d.coll, d.coll.nMaxChannels, &e);
      e.comm_hash = d.coll.commHash;
      break;
    case NcclEventType::kP2p:
      ReadP2p(d.p2p, &e);
      e.comm_hash = d.p2p.commHash;
      break;
    case NcclEventType::kChannel:  // v3 has no GPU timer: gtrace never asks for these under v3
      e.type = NcclEventType::kIgnored;
      break;
    default:
      break;
  }
  return e;
}

bool NcclGpuTimeToTrace(uint64_t gpu, int64_t realtime_to_trace_ns, int64_t observed, int64_t* trace) {
  constexpr int64_t kSlackNs = 2'000'000, kMaxAgeNs = 60'000'000'000;
  if (gpu == 0 || gpu > uint64_t(INT64_MAX)) return false;
  int64_t t = 0;
  if (__builtin_add_overflow(int64_t(gpu), realtime_to_trace_ns, &t)) return false;
  if (t > observed + kSlackNs || t < observed - kMaxAgeNs) return false;
  *trace = t;
  return true;
}

NcclCollRecord ToNcclCollRecord(const NcclEvent& e, uint32_t pid, const InternFn& intern) {
  NcclCollRecord r;
  r.start = e.start;
  r.end = e.end >= e.start ? e.end : e.start;
  r.comm_hash = e.comm_hash;
  r.seq = e.seq;
  r.count = e.count;
  r.pid = pid;
  r.tid = e.tid;
  r.func = intern(e.func);
  r.datatype = intern(e.datatype);
  r.algo = intern(e.algo);
  r.proto = intern(e.proto);
  r.root = e.root;
  r.rank = e.rank;
  r.nranks = e.nranks;
  r.n_channels = e.n_channels;
  r.n_warps = e.n_warps;
  r.kind = uint8_t(e.type == NcclEventType::kP2p      ? NcclOpKind::kP2p
                   : e.type == NcclEventType::kCeColl ? NcclOpKind::kCeColl
                                                      : NcclOpKind::kColl);
  return r;
}

NcclChannelRecord ToNcclChannelRecord(const NcclEvent& e, uint32_t pid, const InternFn& intern) {
  NcclChannelRecord r;
  r.start = e.start;
  r.end = e.end >= e.start ? e.end : e.start;
  r.comm_hash = e.comm_hash;
  r.seq = e.seq;
  r.pid = pid;
  r.func = intern(e.func);
  r.channel = e.channel;
  return r;
}

}  // namespace gt::decode
