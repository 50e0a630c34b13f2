#!/usr/bin/env python3
"""Writes a small SQLite database shaped like `nsys export --type sqlite` output (tests/data/nsys_small.sqlite).

No nsys able to write reports was available (the one shipped with ncu on the GPU machine fails in its importer),
so this fixture is built from nsys's documented export schema; docs/nsys-import.md lists the sources. It holds
one process with two named threads, 2 GPUs (TARGET_INFO_GPU + TARGET_INFO_CUDA_DEVICE), 4 streams, kernels
launched by cudaLaunchKernel (correlation ids), memcpys of four kinds (HtoD, DtoH, DtoD, PtoP), memsets, driver
calls, and NVTX: a named domain (eventType 75) with nested push/pop ranges (59), a start/end range (60), marks
(34) and a range named through StringIds (textId). Deterministic: the same bytes on every run.

  python3 scripts/gen_nsys_fixture.py tests/data/nsys_small.sqlite
  python3 scripts/gen_nsys_fixture.py OUT --bad    # the same with hostile rows (tests of the importer's losses)
"""
import os
import sqlite3
import sys

PID = 4242
TID_MAIN, TID_LOADER = 4242, 4250
VM = 0  # nsys's "hardware id" in bits 56..63: 0 for a single-host report


def gtid(pid, tid):
    return (VM << 56) | (pid << 24) | (tid & 0xFFFFFF)


def gpid(pid):
    return (VM << 56) | (pid << 24)


SCHEMA = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
  isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
  smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER, ctxId INTEGER,
  computeMajor INTEGER, computeMinor INTEGER, maxWarpsPerSm INTEGER, threadsPerWarp INTEGER,
  maxShmemPerBlock INTEGER);
CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, pid INTEGER, uuid TEXT,
  numMultiprocessors INTEGER, computeCapabilityMajor INTEGER, computeCapabilityMinor INTEGER, name TEXT);
CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId INTEGER NOT NULL, hwId INTEGER NOT NULL, vmId INTEGER NOT NULL,
  processId INTEGER NOT NULL, contextId INTEGER NOT NULL, priority INTEGER NOT NULL, flag INTEGER NOT NULL);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
  sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER,
  srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER,
  dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
  callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
  callchainId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
"""

MEMCPY_OPER = [(0, "CUDA_MEMCPY_OPER_UNKNOWN", "Unknown"), (1, "CUDA_MEMCPY_OPER_HTOD", "Host-to-Device"),
               (2, "CUDA_MEMCPY_OPER_DTOH", "Device-to-Host"), (3, "CUDA_MEMCPY_OPER_HTOA", "Host-to-Array"),
               (4, "CUDA_MEMCPY_OPER_ATOH", "Array-to-Host"), (5, "CUDA_MEMCPY_OPER_ATOA", "Array-to-Array"),
               (6, "CUDA_MEMCPY_OPER_ATOD", "Array-to-Device"), (7, "CUDA_MEMCPY_OPER_DTOA", "Device-to-Array"),
               (8, "CUDA_MEMCPY_OPER_DTOD", "Device-to-Device"), (9, "CUDA_MEMCPY_OPER_HTOH", "Host-to-Host"),
               (10, "CUDA_MEMCPY_OPER_PTOP", "Peer-to-Peer")]
MEM_KIND = [(0, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown"), (1, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"),
            (2, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"), (3, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device")]


class Db:
    def __init__(self, path):
        if os.path.exists(path):
            os.remove(path)
        self.c = sqlite3.connect(path)
        self.c.executescript(SCHEMA)
        self.strings = {}
        self.corr = 100

    def s(self, text):
        if text not in self.strings:
            self.strings[text] = len(self.strings) + 1
            self.c.execute("INSERT INTO StringIds VALUES (?, ?)", (self.strings[text], text))
        return self.strings[text]

    def api(self, table, start, dur, name, tid=TID_MAIN, corr=None):
        if corr is None:
            self.corr += 1
            corr = self.corr
        self.c.execute(f"INSERT INTO {table} (start, end, eventClass, globalTid, correlationId, nameId, returnValue)"
                       " VALUES (?,?,?,?,?,?,0)", (start, start + dur, 1, gtid(PID, tid), corr, self.s(name)))
        return corr

    def kernel(self, start, dur, dev, stream, corr, demangled, short, grid, block, regs=32):
        self.c.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,"
            " globalPid, demangledName, shortName, mangledName, launchType, registersPerThread, gridX, gridY, gridZ,"
            " blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread,"
            " localMemoryTotal, gridId) VALUES (?,?,?,?,?,?,?,?,?,NULL,0,?,?,1,1,?,1,1,0,4096,0,0,?)",
            (start, start + dur, dev, 1 + dev, stream, corr, gpid(PID), self.s(demangled), self.s(short), regs,
             grid, block, corr))

    def memcpy(self, start, dur, dev, stream, corr, nbytes, kind, src, dst, dst_dev=None):
        self.c.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId,"
            " globalPid, bytes, copyKind, srcKind, dstKind, srcDeviceId, dstDeviceId) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (start, start + dur, dev, 1 + dev, stream, corr, gpid(PID), nbytes, kind, src, dst, dev,
             dev if dst_dev is None else dst_dev))

    def memset(self, start, dur, dev, stream, corr, nbytes, value):
        self.c.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId,"
            " globalPid, value, bytes, memKind) VALUES (?,?,?,?,?,?,?,?,?,3)",
            (start, start + dur, dev, 1 + dev, stream, corr, gpid(PID), value, nbytes))

    def nvtx(self, start, end, etype, text=None, text_id=None, domain=0, tid=TID_MAIN, color=None, category=0,
             u64=None, dbl=None):
        self.c.execute(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, category, color, text, globalTid, endGlobalTid, textId,"
            " domainId, uint64Value, doubleValue) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (start, end, etype, category, color, text, gtid(PID, tid), gtid(PID, tid) if etype == 60 else None,
             text_id, domain, u64, dbl))


def build(path, bad=False):
    d = Db(path)
    c = d.c
    c.executemany("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?,?,?)", MEMCPY_OPER)
    c.executemany("INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?,?,?)", MEM_KIND)
    c.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1795000000000000000, '', '')")
    c.execute("INSERT INTO PROCESSES VALUES (?, ?, 'python3')", (gpid(PID), PID))
    c.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (d.s("python3"), gtid(PID, TID_MAIN)))
    c.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (d.s("data_loader"), gtid(PID, TID_LOADER)))
    for dev in (0, 1):
        c.execute("INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, isDiscrete, l2CacheSize, totalMemory,"
                  " memoryBandwidth, clockRate, smCount, uuid, chipName, cuDevice, computeMajor, computeMinor,"
                  " maxWarpsPerSm, threadsPerWarp, maxShmemPerBlock) VALUES"
                  " (0,?,'NVIDIA H200',?,1,52428800,150754820096,4800000000000,1980000000,132,?, 'GH100',?,9,0,64,32,"
                  "49152)", (dev, f"0000:{0x18 + dev:02x}:00.0", f"GPU-0000000{dev}-aaaa-bbbb-cccc-dddddddddddd", dev))
        c.execute("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (?, ?, ?, ?, 132, 9, 0, 'NVIDIA H200')",
                  (dev, dev, PID, f"GPU-0000000{dev}-aaaa-bbbb-cccc-dddddddddddd"))
    for stream, dev, prio in ((7, 0, 0), (13, 0, 0), (14, 0, -1), (21, 1, 0)):
        c.execute("INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (?, 0, 0, ?, ?, ?, 0)", (stream, PID, 1 + dev, prio))

    # Setup: driver allocations, an HtoD copy, a memset per GPU.
    t = 1_000_000
    d.api("CUPTI_ACTIVITY_KIND_DRIVER", t, 40_000, "cuMemAlloc_v2")
    d.api("CUPTI_ACTIVITY_KIND_DRIVER", t + 50_000, 35_000, "cuMemAlloc_v2")
    corr = d.api("CUPTI_ACTIVITY_KIND_RUNTIME", t + 100_000, 30_000, "cudaMemcpyAsync")
    d.memcpy(t + 110_000, 84_000, 0, 7, corr, 16 << 20, 1, 2, 3)
    for dev, stream in ((0, 7), (1, 21)):
        corr = d.api("CUPTI_ACTIVITY_KIND_RUNTIME", t + 140_000 + dev * 10_000, 6_000, "cudaMemsetAsync")
        d.memset(t + 200_000 + dev * 5_000, 3_000, dev, stream, corr, 1 << 20, 0)
    # NVTX: a domain "train" (75) whose "step N" ranges hold nested forward/backward ranges of the default domain.
    d.nvtx(t, None, 75, text="train", domain=1)
    d.nvtx(t + 50, None, 34, text="init done", color=0xFF00FF00)
    d.nvtx(t + 300_000, t + 3_600_000, 60, text="epoch 0", category=2)
    # A registered string (textId) in the data loader thread, and a push/pop with a payload.
    d.nvtx(t + 310_000, t + 900_000, 59, text_id=d.s("load batch"), tid=TID_LOADER, u64=64)
    step_len = 1_000_000
    for step in range(3):
        s0 = t + 400_000 + step * step_len
        d.nvtx(s0, s0 + 900_000, 59, text=f"step {step}", domain=1, color=0xFF76B900, dbl=0.5 * step)
        d.nvtx(s0 + 10_000, s0 + 400_000, 59, text="forward")
        d.nvtx(s0 + 420_000, s0 + 880_000, 59, text="backward")
        d.nvtx(s0 + 890_000, None, 34, text=f"step {step} done")
        # forward: gemm on stream 7 + relu on stream 13 (device 0), then an all-gather-like kernel on GPU 1.
        for i, (name, short, dev, stream, dur, grid, block) in enumerate([
                ("void gemm_kernel<float, 128>(float const*, float const*, float*, int)", "gemm_kernel", 0, 7,
                 150_000 + 10_000 * step, 264, 256),
                ("relu_kernel(float*, int)", "relu_kernel", 0, 13, 20_000, 1024, 128),
                ("void gemm_kernel<float, 128>(float const*, float const*, float*, int)", "gemm_kernel", 0, 14,
                 120_000, 264, 256),
                ("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                 "ncclDevKernel_AllGather_RING_LL", 1, 21, 90_000, 4, 512)]):
            launch = s0 + 20_000 + i * 60_000
            corr = d.api("CUPTI_ACTIVITY_KIND_RUNTIME", launch, 8_000, "cudaLaunchKernel")
            d.kernel(launch + 15_000 + i * 1_000, dur, dev, stream, corr, name, short, grid, block)
        # backward: a DtoD copy and a PtoP copy (GPU 0 -> GPU 1), then a sync.
        corr = d.api("CUPTI_ACTIVITY_KIND_RUNTIME", s0 + 430_000, 9_000, "cudaMemcpyAsync")
        d.memcpy(s0 + 445_000, 30_000, 0, 13, corr, 8 << 20, 8, 3, 3)
        corr = d.api("CUPTI_ACTIVITY_KIND_RUNTIME", s0 + 500_000, 9_000, "cudaMemcpyPeerAsync")
        d.memcpy(s0 + 520_000, 60_000, 0, 14, corr, 32 << 20, 10, 3, 3, dst_dev=1)
        d.api("CUPTI_ACTIVITY_KIND_RUNTIME", s0 + 600_000, 250_000, "cudaStreamSynchronize")
        d.api("CUPTI_ACTIVITY_KIND_DRIVER", s0 + 601_000, 248_000, "cuStreamSynchronize")
    corr = d.api("CUPTI_ACTIVITY_KIND_RUNTIME", t + 3_500_000, 10_000, "cudaMemcpy")
    d.memcpy(t + 3_505_000, 70_000, 0, 7, corr, 4 << 20, 2, 3, 2)
    if bad:
        # Hostile rows the importer must count, never trust: end before start, an unknown copy kind, a string id
        # StringIds lacks, a negative globalTid, a device id over 32 bits, an unknown NVTX event type.
        d.kernel(5_000_000, -10, 0, 7, 9001, "relu_kernel(float*, int)", "relu_kernel", 1, 1)
        d.memcpy(5_000_000, 100, 0, 7, 9002, 64, 77, 9, 3)
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,"
                  " globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY,"
                  " blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)"
                  " VALUES (5000000, 5000100, 0, 1, 7, 9003, ?, 99999, 99999, 0, 1,1,1,1,1,1,0,0,0,0,0)", (gpid(PID),))
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (5000000, 5000100, 1, -5, 9004, 1, 0, NULL)")
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,"
                  " globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY,"
                  " blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)"
                  " VALUES (5000000, 5000100, 99999999999, 1, 7, 9005, ?, 1, 1, 0, 1,1,1,1,1,1,0,0,0,0,0)",
                  (gpid(PID),))
        d.nvtx(5_000_000, 5_000_100, 33, text="a category name")
    c.commit()
    c.execute("VACUUM")
    c.close()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build(sys.argv[1], bad="--bad" in sys.argv[2:])
    print(f"wrote {sys.argv[1]} ({os.path.getsize(sys.argv[1])} bytes)")
