// Trace loading in the browser page against the native load of the same files, in one run (issue 16: "the page
// within 2x of native"). Headless chromium (Debian's, WebGL2 on SwiftShader, as web/tests/e2e.mjs) opens the
// built page twice: the one-thread build (gtrace.js) and, on a cross-origin isolated /iso/ page, the threaded
// build (gtrace-mt.js, as many loading threads as app.js gives it: hardware threads, 2 to 16). Each file is
// dropped on the page as a user drops it (the File is in the page's memory first: a drop, not a download) and
// timed from the drop to the first frame that sees the model installed (gt_load_state 2), polled every animation
// frame in the page. The page's breakdown (reading the File into the wasm heap; the loader's Steps and Finish;
// frames between Steps) comes from window.gtLastLoad and gt_load_timings where the page has them.
// Native: bench_viewer (--no-build --threads T) on the same files: one thread (thread CPU time and wall) and T
// threads (wall), T the page's thread count. JSON (--json FILE): the same drop, against `bench_json --one fast`.
//
//   node bench/viewer/bench_page_load.mjs --native-build build/native [--web-root build/wasm/web]
//        [--gtrace-dir /tmp/gtr] [--sizes 1,10] [--repeat 3] [--modes one,threads] [--json FILE]
//        [--web-root-b DIR]   (a second page, e.g. an older build: timed interleaved with the first)
//        [--idle-seconds S]   (then chromium's CPU with the trace open and the page left alone; 0: skip)
//
// Files: <gtrace-dir>/bench_viewer_<N>M.gtrace, written by `bench_viewer --save-gtrace` when missing.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { launchBrowser, repoRoot as root } from '../../web/tests/harness.mjs';

const argv = process.argv.slice(2);
const opt = (name, dflt) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : dflt; };
const nativeBuild = path.resolve(opt('--native-build', path.join(root, 'build/native')));
const webRoots = [path.resolve(opt('--web-root', path.join(root, 'build/wasm/web')))];
if (opt('--web-root-b', '')) webRoots.push(path.resolve(opt('--web-root-b', '')));
const gtraceDir = path.resolve(opt('--gtrace-dir', '/tmp/gtr'));
const sizes = opt('--sizes', '1,10').split(',').filter(Boolean).map(Number);
const repeat = Math.max(1, Number(opt('--repeat', '3')));
const modes = opt('--modes', 'one,threads').split(',');
const jsonFile = opt('--json', '');
const benchViewer = path.join(nativeBuild, 'bench/viewer/bench_viewer');
const benchJson = path.join(nativeBuild, 'bench/viewer/bench_json');

const cpus = os.cpus();
console.log(`bench_page_load: ${cpus.length} CPUs (${cpus[0] ? cpus[0].model : '?'}), load average ` +
            `${os.loadavg().map((x) => x.toFixed(1)).join(' ')}; chromium ${process.env.GT_CHROMIUM || '/usr/bin/chromium'}`);

// ---- the files ---------------------------------------------------------------------------------------------------
fs.mkdirSync(gtraceDir, { recursive: true });
const gtracePath = (n) => path.join(gtraceDir, `bench_viewer_${n}M.gtrace`);
for (const n of sizes) {
  if (fs.existsSync(gtracePath(n))) continue;
  console.log(`writing ${gtracePath(n)}`);
  execFileSync(benchViewer, ['--sizes', String(n), '--frames', '1', '--save-gtrace', gtraceDir], { stdio: 'ignore' });
}
const files = sizes.map((n) => ({ name: path.basename(gtracePath(n)), file: gtracePath(n), events: n * 1e6, millions: n }));
if (jsonFile) files.push({ name: path.basename(jsonFile), file: path.resolve(jsonFile), json: true });
const byName = new Map(files.map((f) => [f.name, f]));

// ---- a static server: the page(s), /iso/ with the isolation headers, /files/ the traces ----------------------------
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  let p = url.pathname, isolated = false;
  const root = webRoots[p.startsWith('/b/') ? 1 : 0];
  if (p.startsWith('/b/')) p = p.slice(2);
  if (p.startsWith('/iso/') || p === '/iso') { isolated = true; p = p.slice(4) || '/'; }
  const headers = { 'Cache-Control': 'no-store' };
  if (isolated) Object.assign(headers, { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' });
  let file = null, type = 'application/octet-stream';
  if (p.startsWith('/files/')) {
    const f = byName.get(decodeURIComponent(p.slice(7)));
    if (f) file = f.file;
  } else {
    const rel = p === '/' ? 'index.html' : decodeURIComponent(p).replace(/^\/+/, '');
    const f = path.join(root, path.normalize(rel));
    if (f.startsWith(root) && fs.existsSync(f) && fs.statSync(f).isFile()) { file = f; type = types[path.extname(f)] || type; }
  }
  if (!file) { res.writeHead(404); res.end(); return; }
  res.writeHead(200, { ...headers, 'Content-Type': type, 'Content-Length': fs.statSync(file).size });
  fs.createReadStream(file).pipe(res);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

const browser = await launchBrowser();

// CPU seconds of chromium's processes (browser, renderer, GPU: the page's reading, loading, drawing),
// from /proc: on a shared machine wall clocks say more about the neighbours than about the load. By process
// type too (chromium's --type=renderer, gpu-process, utility; none is the browser process), so that a load's
// own process can be told from the compositor's and the browser's.
function chromiumCpu() {
  const root = process.pid;  // playwright starts chromium as a child of this process
  const procs = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(d), { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / 100 });
    } catch (e) { /* gone */ }
  }
  const total = { sum: 0, byType: {} };
  for (const [pid, p] of procs) {
    for (let q = procs.get(pid).ppid, hops = 0; q && hops < 8; q = (procs.get(q) || {}).ppid, ++hops) {
      if (q !== root) continue;
      let type = 'browser';
      try {
        const m = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').match(/--type=([a-z-]+)/);
        if (m) type = m[1];
      } catch (e) { /* gone */ }
      total.sum += p.cpu;
      total.byType[type] = (total.byType[type] || 0) + p.cpu;
      break;
    }
  }
  return total;
}
function cpuSince(c0) {
  const c1 = chromiumCpu();
  const byType = {};
  for (const [k, v] of Object.entries(c1.byType)) byType[k] = v - (c0.byType[k] || 0);
  return { sum: c1.sum - c0.sum, byType };
}
// "browser 0.08, gpu-process 0.12, renderer 1.17": CPU s by process type (per second with `per`).
const cpuTypes = (byType, per = 1) => Object.entries(byType).filter(([, v]) => v >= 0.005)
  .map(([k, v]) => `${k} ${(v / per).toFixed(per === 1 ? 2 : 3)}`).join(', ');
// Only the measured page runs its frames: an idle page of an older build still draws every animation frame,
// and under SwiftShader the other pages' frames kept the GPU process on a whole core (the threads' core).
async function runOnly(p) {
  for (const q of pages) await q.page.evaluate((on) => (on ? Module.resumeMainLoop() : Module.pauseMainLoop()), q === p);
}

async function openPage(prefix) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 800 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log(`[pageerror ${prefix}] ${e.message}`));
  await page.goto(`${base}${prefix}/`);
  await page.waitForFunction(() => window.gtReady && window.gtReady(), null, { timeout: 60000 });
  return page;
}

// One drop of `name` (fetched into a Blob once per page, outside the timing): the page's times in ms.
async function dropOnce(page, name, fetchOnly = false) {
  return page.evaluate(async ([name, fetchOnly]) => {
    if (!window.benchBlobs) window.benchBlobs = {};
    if (!window.benchBlobs[name]) window.benchBlobs[name] = await (await fetch('/files/' + encodeURIComponent(name))).blob();
    if (fetchOnly) return null;
    const file = new File([window.benchBlobs[name]], name);
    const frame = () => new Promise((r) => requestAnimationFrame(r));
    await frame();
    const dt = new DataTransfer();
    dt.items.add(file);
    const canvas = document.getElementById('canvas');
    const t0 = performance.now();
    for (const type of ['dragenter', 'dragover', 'drop'])
      canvas.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    // The previous drop's model stays (state 2) until the new bytes are read and handed over: wait for the
    // load to be seen running (it spans at least two frames: Steps, then Finish), then for its model.
    for (let loading = false; ;) {
      await frame();
      const s = gtApi.num('gt_load_state');
      if (s === 3) return { error: gtApi.str('gt_last_error') };
      if (s === 1) loading = true;
      else if (s === 2 && loading) break;
    }
    const t1 = performance.now();
    const last = window.gtLastLoad || null;
    let wasm = null;
    try { wasm = JSON.parse(gtApi.str('gt_load_timings')); } catch (e) { /* an older page: no gt_load_timings */ }
    return {
      ms: t1 - t0, events: gtApi.num('gt_event_count', 'all'), threads: window.gtThreads(),
      read_ms: last && last.copied ? last.copied - last.start : null, wasm,
      heap_mb: (Module.wasmMemory ? Module.wasmMemory.buffer.byteLength : Module.HEAPU8.length) / 2 ** 20,
    };
  }, [name, fetchOnly]);
}

// ---- native ------------------------------------------------------------------------------------------------------
function nativeGtrace(n, threads) {
  const out = execFileSync(benchViewer, ['--sizes', String(n), '--frames', '1', '--gtrace-dir', gtraceDir, '--no-build',
                                         '--threads', String(threads), '--repeat', String(repeat)], { encoding: 'utf8' });
  const rate = (re) => { const m = out.match(re); return m ? Number(m[1]) : null; };
  return {
    cpu1: rate(/load \.gtrace \(end to end\)\s+([\d.]+)/),  // M ev/s, thread CPU time
    wall1: rate(/load, 1 thread \(wall\)\s+([\d.]+)/),
    wallT: rate(new RegExp(`load, ${threads} threads \\(wall\\)\\s+([\\d.]+)`)),
  };
}
function nativeJson(file) {
  const best = { wall: Infinity, cpu: Infinity };
  for (let i = 0; i < repeat; ++i) {
    const [cpu, , bytes, fp, wall] = execFileSync(benchJson, ['--one', 'fast', file], { encoding: 'utf8' }).trim().split(/\s+/);
    best.wall = Math.min(best.wall, Number(wall)); best.cpu = Math.min(best.cpu, Number(cpu));
    best.bytes = Number(bytes); best.fp = fp;
  }
  return best;
}

// ---- the run -----------------------------------------------------------------------------------------------------
const pages = [];
for (let r = 0; r < webRoots.length; ++r)
  for (const mode of modes) {
    const prefix = (r ? '/b' : '') + (mode === 'threads' ? '/iso' : '');
    const page = await openPage(prefix);
    pages.push({ label: `${r ? 'B ' : ''}${mode === 'threads' ? 'page, threads' : 'page, 1 thread'}`, mode, page,
                 threads: await page.evaluate(() => window.gtThreads()) });
  }
const pageThreads = Math.max(2, ...pages.map((p) => p.threads));
const results = [];
const fmt = (x, d = 1) => (x == null || !isFinite(x) ? '-' : x.toFixed(d));
for (const f of files) {
  // Rounds interleave the pages (and the native runs) so that the machine's load hits them alike.
  const page = new Map(pages.map((p) => [p.label, []]));
  const native = [];
  for (let round = 0; round < repeat; ++round) {
    for (const p of pages) {
      await runOnly(p);
      await dropOnce(p.page, f.name, true);  // the Blob fetched, outside the CPU time
      const c0 = chromiumCpu();
      const r = await dropOnce(p.page, f.name);
      if (r.error) { console.log(`${p.label}: ${f.name} failed: ${r.error}`); continue; }
      const c = cpuSince(c0);
      r.cpu = c.sum, r.cpuByType = c.byType;
      page.get(p.label).push(r);
    }
  }
  if (f.json) native.push(nativeJson(f.file));
  else native.push(nativeGtrace(f.millions, pageThreads));
  const n = native[0];
  console.log(`\n${f.name} (${(fs.statSync(f.file).size / 1e6).toFixed(1)} MB${f.events ? `, ${f.events / 1e6} M events` : ''})`);
  if (f.json) {
    const mbs = n.bytes / 1e6;
    console.log(`  native bench_json --one fast: ${fmt(n.wall, 3)} s wall (${fmt(mbs / n.wall)} MB/s), ${fmt(n.cpu, 3)} CPU s (${fmt(mbs / n.cpu)} MB/s)`);
    for (const [label, runs] of page) {
      if (!runs.length) continue;
      const best = runs.reduce((a, b) => (a.ms < b.ms ? a : b));
      console.log(`  ${label.padEnd(16)} chromium CPU ${runs.map((r) => fmt(r.cpu, 2)).join(' / ')} s: least ` +
                  `${fmt(Math.min(...runs.map((r) => r.cpu)), 2)} s (${fmt(mbs / Math.min(...runs.map((r) => r.cpu)))} MB per CPU s; ` +
                  `${cpuTypes(runs.reduce((a, b) => (a.cpu < b.cpu ? a : b)).cpuByType)})`);
      console.log(`  ${label.padEnd(16)} ${runs.map((r) => fmt(r.ms / 1e3, 3)).join(' / ')} s: best ${fmt(mbs / (best.ms / 1e3))} MB/s, ` +
                  `${fmt(best.ms / 1e3 / n.wall, 2)}x native wall; read ${fmt(best.read_ms, 0)} ms` +
                  (best.wasm ? `, loader ${fmt((best.wasm.steps + best.wasm.finish) * 1e3, 0)} ms in ${best.wasm.frames} frames` : '') +
                  `, heap ${fmt(best.heap_mb, 0)} MB`);
      results.push({ file: f.name, label, runs, native: n });
    }
    continue;
  }
  const nativeWall = { 1: f.events / (n.wall1 * 1e6), T: f.events / (n.wallT * 1e6) };
  const nativeCpu = f.events / (n.cpu1 * 1e6);  // one-thread load, thread CPU s
  console.log(`  native bench_viewer: 1 thread ${fmt(n.cpu1)} M ev/s CPU, ${fmt(n.wall1)} M ev/s wall (${fmt(nativeWall[1], 3)} s); ` +
              `${pageThreads} threads ${fmt(n.wallT)} M ev/s wall (${fmt(nativeWall.T, 3)} s)`);
  for (const [label, runs] of page) {
    if (!runs.length) continue;
    const best = runs.reduce((a, b) => (a.ms < b.ms ? a : b));
    const ref = label.includes('threads') ? nativeWall.T : nativeWall[1];
    const w = best.wasm;
    const cpu = Math.min(...runs.map((r) => r.cpu));
    console.log(`  ${label.padEnd(16)} ${runs.map((r) => fmt(r.ms / 1e3, 3)).join(' / ')} s: best ${fmt(f.events / best.ms / 1e3)} M ev/s, ` +
                `**${fmt(best.ms / 1e3 / ref, 2)}x native** (${label.includes('threads') ? pageThreads + ' threads' : '1 thread'}, wall)` +
                (best.events !== f.events ? ` [events ${best.events}]` : ''));
    console.log(`  ${''.padEnd(16)} chromium CPU ${runs.map((r) => fmt(r.cpu, 2)).join(' / ')} s: least ${fmt(cpu, 2)} s = ` +
                `**${fmt(cpu / nativeCpu, 2)}x native CPU**; the loader's own time (Steps + Finish) ` +
                `${fmt(w ? (w.steps + w.finish) / nativeCpu : null, 2)}x it (${cpuTypes(runs.reduce((a, b) => (a.cpu < b.cpu ? a : b)).cpuByType)})`);
    if (w) console.log(`  ${''.padEnd(16)} read into the heap ${fmt(best.read_ms, 0)} ms; loader Steps ${fmt(w.steps * 1e3, 0)} ms + Finish ` +
                       `${fmt(w.finish * 1e3, 0)} ms over ${w.frames} frames of ${fmt(w.wall * 1e3, 0)} ms (walk ${fmt(w.walk * 1e3, 0)}, ` +
                       `route ${fmt(w.route * 1e3, 0)}, merge ${fmt(w.merge * 1e3, 0)}, lanes ${fmt(w.lanes * 1e3, 0)}, lod ${fmt(w.lod * 1e3, 0)}, ` +
                       `devices ${fmt(w.devices * 1e3, 0)}, other ${fmt(w.other * 1e3, 0)}); heap ${fmt(best.heap_mb, 0)} MB`);
    results.push({ file: f.name, label, runs, native: n });
  }
}
// An open trace left alone: chromium's CPU per second while nobody touches the page (the last file dropped is
// open on each page; only the measured page runs its animation frames).
const idleSeconds = Number(opt('--idle-seconds', '3'));
if (idleSeconds > 0) {
  console.log(`\nidle, a trace open (${files[files.length - 1] ? files[files.length - 1].name : 'none'}), ${idleSeconds} s each:`);
  for (const p of pages) {
    await runOnly(p);
    await new Promise((r) => setTimeout(r, 1500));  // past the page's second of frames after the last call
    const c0 = chromiumCpu();
    const drawn0 = await p.page.evaluate(() => Module.ccall('gt_frame_count', 'number', [], []));
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    const drawn = await p.page.evaluate(() => Module.ccall('gt_frame_count', 'number', [], [])) - drawn0;
    const c = cpuSince(c0);
    console.log(`  ${p.label.padEnd(16)} chromium CPU ${fmt(c.sum / idleSeconds, 3)} s per s (${cpuTypes(c.byType, idleSeconds)}); ` +
                `${fmt(drawn / idleSeconds, 1)} frames drawn per s`);
  }
}
if (opt('--out', '')) fs.writeFileSync(opt('--out', ''), JSON.stringify(results, null, 1));
await browser.close();
server.close();
