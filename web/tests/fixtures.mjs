// Test inputs built in code, with their expected contents, so every count the tests check has an independent
// source. A real .gtrace recorded on the GPU machine (tests/data/*.gtrace) is used as well when present.
import zlib from 'node:zlib';

// A Chrome trace (the format chrome://tracing and Perfetto read) of a small training step: one process with a
// CPU thread (NVTX-like ranges) and one GPU "stream" thread, kernels with args, and a counter track.
export function chromeTrace() {
  const events = [];
  const us = (x) => x;  // Chrome JSON timestamps are microseconds
  events.push({ ph: 'M', name: 'process_name', pid: 100, tid: 0, args: { name: 'train.py' } });
  events.push({ ph: 'M', name: 'thread_name', pid: 100, tid: 1, args: { name: 'main' } });
  events.push({ ph: 'M', name: 'thread_name', pid: 100, tid: 7, args: { name: 'stream 7' } });
  const kernels = ['gemm_128x128', 'softmax_fwd', 'layernorm_fwd', 'gemm_128x128'];
  let t = 1000;
  for (let step = 0; step < 10; ++step) {
    events.push({ ph: 'X', name: `step ${step}`, cat: 'user', pid: 100, tid: 1, ts: us(t), dur: 900 });
    events.push({ ph: 'X', name: 'forward', cat: 'user', pid: 100, tid: 1, ts: us(t + 10), dur: 400 });
    let k = t + 50;
    for (const name of kernels) {
      events.push({ ph: 'X', name, cat: 'kernel', pid: 100, tid: 7, ts: us(k), dur: 120,
                    args: { grid: [64, 1, 1], block: [256, 1, 1], 'registers per thread': 64 } });
      k += 150;
    }
    events.push({ ph: 'C', name: 'gpu_util', pid: 100, ts: us(t), args: { value: 50 + step } });
    t += 1000;
  }
  return {
    name: 'step.json',
    bytes: Buffer.from(JSON.stringify({ traceEvents: events, displayTimeUnit: 'ns' })),
    expect: { kernelNames: ['gemm_128x128', 'softmax_fwd', 'layernorm_fwd'], gemmCount: 20, xEvents: 60,
              startNs: 1000 * 1000, endNs: (9 * 1000 + 1000 + 900) * 1000 },
  };
}

export function gzipped(fixture) {
  return { ...fixture, name: fixture.name + '.gz', bytes: zlib.gzipSync(fixture.bytes) };
}

// Bytes that are nothing a viewer can read: must give a clear error, not a crash or a blank page.
export function garbage() {
  const bytes = Buffer.alloc(4096);
  for (let i = 0; i < bytes.length; ++i) bytes[i] = (i * 2654435761) >>> 24;
  return { name: 'garbage.gtrace', bytes };
}

// A JSON document cut in the middle: the importer must say where it stopped.
export function truncatedJson() {
  const full = chromeTrace().bytes;
  return { name: 'cut.json', bytes: full.subarray(0, Math.floor(full.length / 2)) };
}

// A PyTorch profiler (Kineto) trace: aten ops on the Python thread issuing cudaLaunchKernel / cudaMemcpyAsync
// (args.correlation), the GPU work on device 0 stream 7 with the same correlation ids, and Kineto's "ac2g"
// flow events. Launch -> kernel arrows and jumps come from the correlation ids.
export function kinetoTrace() {
  const ev = [];
  const pid = 4242, tid = 4242;
  ev.push({ ph: 'M', name: 'process_name', pid, tid: 0, args: { name: 'python3' } });
  ev.push({ ph: 'M', name: 'thread_name', pid, tid, args: { name: 'python3' } });
  let corr = 100, t = 10000;
  let kernels = 0, memcpys = 0, api = 0;
  for (let i = 0; i < 8; ++i) {
    ev.push({ ph: 'X', cat: 'cpu_op', name: 'aten::linear', pid, tid, ts: t, dur: 60, args: { 'External id': i } });
    // Host-to-device copy, then a GEMM launch.
    ev.push({ ph: 'X', cat: 'cuda_runtime', name: 'cudaMemcpyAsync', pid, tid, ts: t + 5, dur: 10,
              args: { correlation: corr } });
    ev.push({ ph: 'X', cat: 'gpu_memcpy', name: 'Memcpy HtoD (Pageable -> Device)', pid: 0, tid: 7, ts: t + 20,
              dur: 8, args: { device: 0, stream: 7, correlation: corr, bytes: 1 << 20 } });
    corr++, api++, memcpys++;
    ev.push({ ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid, tid, ts: t + 20, dur: 6,
              args: { correlation: corr } });
    ev.push({ ph: 's', cat: 'ac2g', name: 'ac2g', id: corr, pid, tid, ts: t + 20 });
    ev.push({ ph: 'X', cat: 'kernel', name: 'ampere_sgemm_128x64_tn', pid: 0, tid: 7, ts: t + 30, dur: 45,
              args: { device: 0, stream: 7, correlation: corr, grid: [120, 1, 1], block: [256, 1, 1],
                      'registers per thread': 126, 'shared memory': 32768 } });
    ev.push({ ph: 'f', bp: 'e', cat: 'ac2g', name: 'ac2g', id: corr, pid: 0, tid: 7, ts: t + 30 });
    corr++, api++, kernels++;
    t += 100;
  }
  return {
    name: 'resnet.pt.trace.json',
    bytes: Buffer.from(JSON.stringify({ schemaVersion: 1, deviceProperties: [{ id: 0, name: 'NVIDIA H200' }],
                                        traceEvents: ev })),
    expect: { kernels, memcpys, api },
  };
}

// Kernel names where one is a prefix of others ("relu" < "relu_bwd", and inside "fused_relu"): the kernel table's
// row highlight must light up the row's own kernel only. Three relu, two relu_bwd, one fused_relu on stream 7,
// 100 us each, in the order below.
export function prefixKernelsTrace() {
  const events = [];
  events.push({ ph: 'M', name: 'process_name', pid: 100, tid: 0, args: { name: 'train.py' } });
  events.push({ ph: 'M', name: 'thread_name', pid: 100, tid: 7, args: { name: 'stream 7' } });
  const order = ['relu_bwd', 'relu', 'fused_relu', 'relu', 'relu_bwd', 'relu'];
  const starts = {};
  order.forEach((name, i) => {
    const ts = 1000 + i * 250;
    events.push({ ph: 'X', name, cat: 'kernel', pid: 100, tid: 7, ts, dur: 100 });
    (starts[name] = starts[name] || []).push(ts * 1000);
  });
  return {
    name: 'prefix-kernels.json',
    bytes: Buffer.from(JSON.stringify({ traceEvents: events })),
    expect: { relu: 3, reluLike: 6, reluFirstNs: starts.relu[0], reluLastEndNs: starts.relu[2] + 100e3 },
  };
}
