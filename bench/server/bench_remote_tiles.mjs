// Issue 17's serving numbers against the real `gtrace serve` (docs/benchmarks.md "Viewer index (issue 17)"):
// a synthetic trace uploaded with `gtrace upload` (streamed), the index built by the server, then the server
// restarted so that it only opens the index, and a scripted pan/zoom path asking for the tiles the page
// would ask for (kRemoteTilePx = 1024 px tiles at level floor(log2(ns per px)), a 1600 px screen, every track,
// each tile once as the page's cache does, 6 requests in flight as a browser's per-host limit). Prints
// per-request and per-step latencies and the server's memory (/proc/<pid>/status) at each stage as JSON.
//   node bench/server/bench_remote_tiles.mjs GTRACE GT_SYNTH_TRACE EVENTS [WORKDIR] [--keep] [--reuse]
// --reuse: WORKDIR's store from an earlier --keep run already holds the trace and its index: no upload, no
// build, only the restart and the walk (a second walk shows what the page cache does for it).
import { spawn, execFileSync } from 'node:child_process';
import { startServe as startServeWith, stopServe } from '../../web/tests/harness.mjs';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [gtrace, synth, eventsArg, workArg] = process.argv.slice(2);
if (!gtrace || !synth || !eventsArg) {
  console.error('usage: bench_remote_tiles.mjs GTRACE GT_SYNTH_TRACE EVENTS [WORKDIR] [--keep]');
  process.exit(64);
}
const keep = process.argv.includes('--keep') || process.argv.includes('--reuse');
const reuse = process.argv.includes('--reuse');
const events = Number(eventsArg);
const work = workArg && !workArg.startsWith('--') ? workArg : fs.mkdtempSync(path.join(os.tmpdir(), 'gt-tiles-'));
fs.mkdirSync(work, { recursive: true });
const traceFile = path.join(work, `synth-${events}.gtrace`);
const store = path.join(work, 'store');
const out = { events_asked: events, machine: `${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB` };
const now = () => performance.now();

function memOf(pid) {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number((s.match(new RegExp(`^${k}:\\s+(\\d+)`, 'm')) || [0, 0])[1]);
  return { rss_mb: kb('VmRSS') / 1024, hwm_mb: kb('VmHWM') / 1024, anon_mb: kb('RssAnon') / 1024,
           file_mb: kb('RssFile') / 1024 };
}

const startServe = () => startServeWith(gtrace, ['--store', store, '--max-upload', '16G'], { drainStderr: true });

async function waitIndex(p, id) {
  const t0 = now();
  let peakAnon = 0;
  while (now() - t0 < 1800e3) {
    peakAnon = Math.max(peakAnon, memOf(p.pid).anon_mb);
    const r = await fetch(`${p.base}/api/t/${id}/meta`);
    const body = await r.text();
    if (r.status === 200) return { s: (now() - t0) / 1000, meta: JSON.parse(body), peak_anon_mb: peakAnon };
    if (r.status !== 202) throw new Error(`meta: ${r.status} ${body}`);
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error('index not ready in 30 min');
}

function pct(a, q) {
  const s = [...a].sort((x, y) => x - y);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : 0;
}

// ---- trace and upload -----------------------------------------------------------------------------------------
let t0 = now();
let serve;
try {
  let id;
  if (reuse) {
    const ids = fs.readdirSync(store, { recursive: true }).map(String).filter((f) => f.endsWith('.gtindex'));
    if (ids.length !== 1) throw new Error(`--reuse: ${store} holds ${ids.length} indexes, not one`);
    id = path.basename(ids[0], '.gtindex');
    out.reused = id;
  } else {
    if (!fs.existsSync(traceFile)) execFileSync(synth, [traceFile, String(events)]);
    out.generate_s = (now() - t0) / 1000;
    out.trace_bytes = fs.statSync(traceFile).size;
    fs.rmSync(store, { recursive: true, force: true });
    serve = await startServe();
    let peakUploadAnon = 0;
    const sampler = setInterval(() => { peakUploadAnon = Math.max(peakUploadAnon, memOf(serve.pid).anon_mb); }, 20);
    t0 = now();
    const up = await new Promise((resolve, reject) => {
      const c = spawn(gtrace, ['upload', traceFile, '--server', serve.base, '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      c.stdout.on('data', (d) => { text += d; });
      c.on('exit', (code) => (code === 0 ? resolve(JSON.parse(text)) : reject(new Error('upload exit ' + code))));
    });
    clearInterval(sampler);
    out.upload = { s: (now() - t0) / 1000, server_peak_anon_mb: peakUploadAnon, mem_after: memOf(serve.pid) };
    id = up.id;
    const built = await waitIndex(serve, id);
    out.index_build = { s: built.s, server_peak_anon_mb: built.peak_anon_mb, mem_after: memOf(serve.pid)};
    await stopServe(serve);
  }

  // ---- serving only: a fresh server opens the index ---------------------------------------------------------
  serve = await startServe();
  out.serve_start_mem = memOf(serve.pid);
  const opened = await waitIndex(serve, id);
  const meta = opened.meta;
  out.index_open = { s: opened.s, mem_after: memOf(serve.pid) };
  out.events = meta.events + meta.samples;
  const idx = fs.readdirSync(store, { recursive: true }).filter((f) => String(f).endsWith('.gtindex'));
  out.index_bytes = idx.length ? fs.statSync(path.join(store, String(idx[0]))).size : 0;

  const first = meta.first_ns, last = meta.last_ns, screen = 1600;
  const tracks = meta.tracks.map((t) => t.id);
  const asked = new Set();
  const lat = [], stepMs = [], bytes = [];
  async function view(v0, v1) {
    const nsPerPx = (v1 - v0) / screen;
    const level = nsPerPx >= 2 ? Math.min(51, Math.max(0, Math.floor(Math.log2(nsPerPx)))) : 0;
    const w = 1024 * 2 ** level;
    const lo = Math.max(v0, first), hi = Math.min(v1, last + 1);
    const urls = [];
    for (const tr of tracks)
      for (let i = Math.floor((lo - first) / w); i <= Math.floor((hi - 1 - first) / w); ++i) {
        const key = `${tr}/${level}/${i}`;
        if (asked.has(key)) continue;
        asked.add(key);
        const a = first + i * w;
        urls.push(`${serve.base}/api/t/${id}/tiles?track=${tr}&t0=${a}&t1=${a + w}&px=1024`);
      }
    const s0 = now();
    let next = 0;
    async function worker() {
      while (next < urls.length) {
        const u = urls[next++];
        const r0 = now();
        const r = await fetch(u);
        const body = await r.arrayBuffer();
        if (r.status !== 200) throw new Error(`${u}: ${r.status}`);
        lat.push(now() - r0);
        bytes.push(body.byteLength);
      }
    }
    await Promise.all(Array.from({ length: 6 }, worker));
    if (urls.length) stepMs.push(now() - s0);
  }
  // The path: the whole trace, then zoom by halves towards a point that drifts, panning a quarter screen
  // 8 times at every 4th zoom, down to a 20 us screen; then back out.
  t0 = now();
  let v0 = first, v1 = last + 1, steps = 0;
  await view(v0, v1), ++steps;
  let focus = first + (last - first) * 0.37;
  const spans = [];
  for (let span = (last - first) / 2; span >= 20e3; span /= 2) spans.push(span);
  for (const [k, span] of spans.entries()) {
    focus += span * 0.1;
    v0 = Math.round(focus - span / 2), v1 = Math.round(v0 + span);
    await view(v0, v1), ++steps;
    if (k % 4 === 3)
      for (let p = 0; p < 8; ++p) {
        v0 += Math.round(span / 4), v1 += Math.round(span / 4);
        await view(v0, v1), ++steps;
      }
  }
  for (const span of spans.reverse()) {
    v0 = Math.round(focus - span / 2 + span * 0.3), v1 = Math.round(v0 + span);
    await view(v0, v1), ++steps;
  }
  out.tiles = {
    steps, requests: lat.length, wall_s: (now() - t0) / 1000,
    request_ms: { p50: pct(lat, 0.5), p95: pct(lat, 0.95), p99: pct(lat, 0.99), max: Math.max(...lat) },
    step_ms: { p50: pct(stepMs, 0.5), p95: pct(stepMs, 0.95), max: Math.max(...stepMs) },
    avg_tile_kb: bytes.reduce((a, b) => a + b, 0) / Math.max(1, bytes.length) / 1024,
    mem_after: memOf(serve.pid),
  };
} finally {
  if (serve) await stopServe(serve).catch(() => {});
  if (!keep) fs.rmSync(work, { recursive: true, force: true });
}
console.log(JSON.stringify(out, null, 1));
