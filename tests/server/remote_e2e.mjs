// Remote traces end to end (issue 17): `gtrace serve` stores a generated trace and builds its index; the page
// opens it by link with remote forced on (&remote=1), so the trace is never downloaded: the timeline draws
// from tiles, a zoom asks for finer ones, selecting a kernel asks for its details (checked through the
// viewer's C API against the server's /event), the kernel table comes from /kernels, and the view-state link
// opens the same view remotely. The page's memory is recorded (wasm heap, JS heap) next to the same trace
// downloaded into the page (&remote=0). Screenshots go to test-output/remote/.
//
//   node tests/server/remote_e2e.mjs GTRACE_BINARY WEB_ROOT GT_SYNTH_TRACE [EVENTS]
// (GT_REMOTE_E2E_NO_LOCAL=1: the remote pages only, for sizes a page could not download.
//  GT_REMOTE_E2E_STORE=DIR GT_REMOTE_E2E_ID=ID: a store that already holds the trace and its index, e.g. the
//  one `bench/server/bench_remote_tiles.mjs ... --keep` left; nothing is generated or uploaded, and the store
//  is kept. For traces too big to generate and upload twice: 1 B events is 6.4 GB.)
// Needs the wasm page (cmake --preset wasm), the native gtrace and gt_synth_trace, web/tests/node_modules.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launchBrowser, repoRoot as root, startServe, stopServe } from '../../web/tests/harness.mjs';

const [gtrace, webRoot, synth, eventsArg] = process.argv.slice(2);
if (!gtrace || !webRoot || !synth) {
  console.error('usage: node tests/server/remote_e2e.mjs GTRACE_BINARY WEB_ROOT GT_SYNTH_TRACE [EVENTS]');
  process.exit(64);
}
const events = Number(eventsArg || 3e6);
const outDir = path.join(root, 'test-output/remote');
fs.mkdirSync(outDir, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gtrace-remote-e2e-'));
const givenStore = process.env.GT_REMOTE_E2E_STORE, givenId = process.env.GT_REMOTE_E2E_ID;
if (!givenStore !== !givenId) {
  console.error('remote_e2e: GT_REMOTE_E2E_STORE and GT_REMOTE_E2E_ID go together');
  process.exit(64);
}
const store = givenStore || path.join(tmp, 'store');
const traceFile = path.join(tmp, 'synth.gtrace');
const numbers = {};
const t = () => performance.now();

let t0 = t();
if (!givenStore) {
  execFileSync(synth, [traceFile, String(events)]);
  numbers.trace_bytes = fs.statSync(traceFile).size;
  numbers.generate_s = (t() - t0) / 1000;
}

// ---- the server ------------------------------------------------------------------------------------------------
const serve = await startServe(gtrace, ['--store', store, '--web-root', webRoot]);
const base = serve.base;
const browser = await launchBrowser(['--enable-precise-memory-info']);

let failed = false;
function check(cond, message) {
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${message}`);
  if (!cond) failed = true;
}

async function openPage(url) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 800 } });
  const page = await context.newPage();
  page.gtLog = [];
  page.gtBytes = { trace: 0, api: 0 };
  page.on('console', (m) => page.gtLog.push(`[${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => page.gtLog.push(`[pageerror] ${e.message}`));
  page.on('response', async (r) => {
    const u = new URL(r.url());
    if (!u.pathname.startsWith('/api/')) return;
    const len = Number(r.headers()['content-length'] || 0);
    if (u.pathname.startsWith('/api/traces/')) page.gtBytes.trace += len;
    else page.gtBytes.api += len;
  });
  await page.goto(url);
  await page.waitForFunction(() => window.gtReady && window.gtReady(), null, { timeout: 60000 });
  return page;
}
const num = (page, fn, ...args) => page.evaluate(([f, a]) => gtApi.num(f, ...a), [fn, args]);
const str = (page, fn, ...args) => page.evaluate(([f, a]) => gtApi.str(f, ...a), [fn, args]);
const json = async (page, fn, ...args) => JSON.parse((await str(page, fn, ...args)) || 'null');
async function settled(page, timeout = 120000) {
  await page.waitForFunction(() => {
    const s = gtApi.num('gt_load_state');
    return (s === 2 || s === 3) && document.getElementById('loading').hidden;
  }, null, { timeout });
  return num(page, 'gt_load_state');
}
// Until every request the viewer sent is answered (and a few frames drew the answers).
async function quiet(page) {
  await page.waitForFunction(() => {
    const s = JSON.parse(gtApi.str('gt_remote_stats'));
    return s.remote && s.in_flight === 0 && s.requests > 0;
  }, null, { timeout: 60000, polling: 50 });
  await page.waitForTimeout(100);
  return json(page, 'gt_remote_stats');
}
async function memory(page) {
  return page.evaluate(() => ({
    wasm_heap: (Module.wasmMemory ? Module.wasmMemory.buffer : Module.HEAPU8.buffer).byteLength,
    js_heap: performance.memory ? performance.memory.usedJSHeapSize : null,
  }));
}
async function range(page) {
  return { start: await num(page, 'gt_visible_range_start'), end: await num(page, 'gt_visible_range_end') };
}

try {
  // ---- upload (as `gtrace upload` or the Share button would) --------------------------------------------------
  let id = givenId;
  if (!givenStore) {
    const up = await fetch(`${base}/api/traces?name=synth.gtrace`,
                           { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' },
                             body: fs.readFileSync(traceFile) });
    const stored = await up.json();
    check(up.status === 201 && stored.id, `uploaded ${numbers.trace_bytes} bytes as ${stored.id}`);
    id = stored.id;
  }
  t0 = t();
  let metaStatus = 0;
  while (metaStatus !== 200 && t() - t0 < 120000) {  // the index builds (or opens) on the server's own thread
    metaStatus = (await fetch(`${base}/api/t/${id}/meta`)).status;
    if (metaStatus !== 200) await new Promise((r) => setTimeout(r, 100));
  }
  numbers.index_ready_s = (t() - t0) / 1000;
  const meta = await (await fetch(`${base}/api/t/${id}/meta`)).json();
  check(meta.events > 0, `the server's index: ${meta.events} events, ${meta.tracks.length} tracks`);
  numbers.events = meta.events;

  // ---- A: open by link, remote forced on -------------------------------------------------------------------
  t0 = t();
  const a = await openPage(`${base}/?trace=${id}&remote=1`);
  check(await settled(a) === 2, 'A: the remote trace opens');
  let st = await quiet(a);
  numbers.first_frame_s = (t() - t0) / 1000;
  check(st.remote && st.events === meta.events + meta.samples, `A: remote, ${st.events} events (${JSON.stringify(st)})`);
  check(a.gtBytes.trace === 0, 'A: the trace itself was never downloaded');
  check(st.tiles > 0 && st.failures === 0, `A: the timeline drew from ${st.tiles} tiles`);
  check(await str(a, 'gt_trace_name') === id, 'A: named by its id');
  const full = await range(a);
  await a.screenshot({ path: path.join(outDir, 'remote-overview.png') });

  // Zoom to 1% of the trace: finer tiles; then pan a quarter screen: at most a tile more per track.
  const span = full.end - full.start;
  const z0 = full.start + span * 0.4, z1 = z0 + span * 0.01;
  await num(a, 'gt_set_visible_range', z0, z1);
  st = await quiet(a);
  const tilesZoomed = st.requests;
  await num(a, 'gt_set_visible_range', z0 + (z1 - z0) * 0.25, z1 + (z1 - z0) * 0.25);
  const panned = await quiet(a);
  const visibleTracks = meta.tracks.length;  // every track is expanded and on screen here (counters too)
  check(panned.requests - tilesZoomed <= visibleTracks,
        `A: a quarter-screen pan asked ${panned.requests - tilesZoomed} tiles for ${visibleTracks} tracks`);
  numbers.pan_new_requests = panned.requests - tilesZoomed;

  // Closer (0.05% of a 3 M-event trace, as narrow a share as it takes to see as many events in a longer one),
  // where kernels are wide enough to click. A kernel in view: the server's tile of a GPU stream names one;
  // select it by key, then by a click.
  await num(a, 'gt_set_visible_range', z0, z0 + span * 0.0005 * Math.min(1, 3e6 / meta.events));
  await quiet(a);
  const stream = meta.tracks.find((tr) => tr.kind === 'Stream' && tr.events > 0);
  const r0 = await range(a);
  const tile = await (await fetch(`${base}/api/t/${id}/tiles?track=${stream.id}&t0=${Math.floor(r0.start)}` +
                                  `&t1=${Math.ceil(r0.end)}&px=1024`)).json();
  const item = tile.lanes[0].items.find((it) => it[3] === 1 && it[0] >= r0.start && it[1] <= r0.end);
  check(item, 'A: a single kernel is in view');
  const key = `${stream.key}/0/${item[2]}`;
  check(await num(a, 'gt_select', key) === 1, `A: select ${key}`);
  await a.waitForFunction(() => gtApi.str('gt_selection') !== 'null', null, { timeout: 30000 });
  const sel = await json(a, 'gt_selection');
  const want = await (await fetch(`${base}/api/t/${id}/event?key=${encodeURIComponent(key)}`)).json();
  check(sel && sel.key === key && sel.kind === 'Kernel', `A: the details of ${sel && sel.name} arrived`);
  check(JSON.stringify(sel) === JSON.stringify(want), 'A: the details are the server\'s /event answer');
  check(Object.keys(sel.fields).length > 3, `A: with its fields (${Object.keys(sel.fields).join(', ')})`);
  await num(a, 'gt_show_panel', 'details');
  await quiet(a);
  // Clicking where it is drawn selects it again (the hovered tile item is the hit).
  await num(a, 'gt_select', '');
  const pos = await a.evaluate((k) => { gtApi.num('gt_select', k); return null; }, key);
  void pos;
  await a.waitForTimeout(200);
  const at = await json(a, 'gt_selection_screen_pos');
  check(at && at.visible, `A: the selection is drawn at ${JSON.stringify(at)}`);
  await num(a, 'gt_select', '');
  await a.mouse.move(at.x, at.y);
  await a.waitForTimeout(100);
  await a.mouse.click(at.x, at.y);
  await a.waitForTimeout(200);
  const clicked = await json(a, 'gt_selection');
  check(clicked && clicked.key === key, `A: a click on it selects it (${clicked && clicked.key})`);
  await a.screenshot({ path: path.join(outDir, 'remote-selected.png') });
  // Flows (the server's what=flows): "Go to the launch" of the kernel selects its cudaLaunchKernel, the
  // server's partner; then back to the kernel.
  const flows = await (await fetch(`${base}/api/t/${id}/flows?key=${encodeURIComponent(key)}`)).json();
  await a.waitForFunction(() => gtApi.num('gt_jump_to_partner') !== 0, null, { timeout: 30000 });
  await a.waitForFunction(() => gtApi.str('gt_selection') !== 'null', null, { timeout: 30000 });
  const launch = await json(a, 'gt_selection');
  check(flows.partner && launch && launch.key === flows.partner.key && flows.partner.launch,
        `A: "Go to the launch" selects ${launch && launch.name} (${launch && launch.key})`);
  await quiet(a);
  await a.waitForTimeout(200);
  await a.screenshot({ path: path.join(outDir, 'remote-flow.png') });
  await num(a, 'gt_select', key);
  await a.waitForFunction((k) => { const s = JSON.parse(gtApi.str('gt_selection')); return s && s.key === k; },
                          key, { timeout: 30000 });

  // The kernel table from /kernels.
  await num(a, 'gt_show_panel', 'kernels');
  await a.waitForFunction(() => JSON.parse(gtApi.str('gt_kernel_summary')).length > 0, null, { timeout: 30000 });
  const kernels = await json(a, 'gt_kernel_summary');
  const wantKernels = await (await fetch(`${base}/api/t/${id}/kernels?limit=100000`)).json();
  check(kernels.length === wantKernels.length && kernels[0].name === wantKernels[0].name,
        `A: the kernel table (${kernels.length} rows, top ${kernels[0].name})`);
  // A row click zooms to the kernel's instances and highlights them (the server's search for its name).
  await num(a, 'gt_kernel_row_click', wantKernels[1].name);
  await a.waitForFunction(() => { const h = JSON.parse(gtApi.str('gt_highlight')); return !h.pending && h.count > 0; },
                          null, { timeout: 30000 });
  check((await json(a, 'gt_highlight')).count === wantKernels[1].count,
        `A: a kernel row click highlights its ${wantKernels[1].count} instances`);
  await a.waitForTimeout(200);
  await a.screenshot({ path: path.join(outDir, 'remote-kernels.png') });
  // The Summary tab's idle gaps (the server's what=gaps, computed at its index build).
  await num(a, 'gt_show_panel', 'summary');
  const wantGaps = await (await fetch(`${base}/api/t/${id}/gaps`)).json();
  await quiet(a);
  const gaps = await json(a, 'gt_summary', 'gaps');
  check(JSON.stringify(gaps) === JSON.stringify(wantGaps.gaps),
        `A: the Summary tab's ${gaps.length} idle gaps are the server's`);
  await a.waitForTimeout(200);
  await a.screenshot({ path: path.join(outDir, 'remote-summary.png') });
  // Search (the server's what=search): a kernel's name, counted by the server as the kernel table counts it;
  // it goes into the view state, so B's link carries it.
  const needle = wantKernels[Math.min(3, wantKernels.length - 1)].name;
  await num(a, 'gt_search', needle);
  await a.waitForFunction(() => { const h = JSON.parse(gtApi.str('gt_highlight')); return !h.pending && h.count > 0; },
                          null, { timeout: 30000 });
  const found = await (await fetch(`${base}/api/t/${id}/search?q=${encodeURIComponent(needle)}`)).json();
  const hl = await json(a, 'gt_highlight');
  check(hl.count === found.count && found.count === wantKernels[Math.min(3, wantKernels.length - 1)].count,
        `A: search '${needle.slice(0, 30)}…' counts ${hl.count} matches (the server's, the kernel row's)`);
  await num(a, 'gt_show_panel', 'details');
  await a.waitForTimeout(200);
  const memRemote = await memory(a);
  numbers.remote = { ...memRemote, api_bytes: a.gtBytes.api, requests: (await quiet(a)).requests };
  await a.screenshot({ path: path.join(outDir, 'remote.png') });

  // ---- B: the view-state link opens the same view remotely ------------------------------------------------
  const view = await str(a, 'gt_view_state');
  const wantRange = await range(a);
  const b = await openPage(`${base}/?trace=${id}&remote=1&view=${encodeURIComponent(view)}`);
  check(await settled(b) === 2, 'B: the link opens remotely');
  await quiet(b);
  await b.waitForFunction(() => gtApi.str('gt_selection') !== 'null', null, { timeout: 30000 });
  const gotRange = await range(b);
  const tol = (wantRange.end - wantRange.start) * 0.01;
  check(Math.abs(gotRange.start - wantRange.start) <= tol && Math.abs(gotRange.end - wantRange.end) <= tol,
        'B: the same visible range');
  check((await json(b, 'gt_selection')).key === key, 'B: the same selection');
  check(b.gtBytes.trace === 0, 'B: nothing downloaded');
  // The link's search is asked of the server; Enter / N steps to the next match after the selection, as the
  // server's own step answers, and selects it.
  await b.waitForFunction(() => { const h = JSON.parse(gtApi.str('gt_highlight')); return !h.pending && h.count > 0; },
                          null, { timeout: 30000 });
  check((await json(b, 'gt_highlight')).count === found.count, 'B: the link\'s search, counted by the server');
  const selB = await json(b, 'gt_selection');
  const lane = meta.tracks[stream.id].first_lane;
  const step = await (await fetch(`${base}/api/t/${id}/search?q=${encodeURIComponent(needle)}&dir=next` +
                                  `&t=${selB.start}&lane=${lane}&index=${item[2]}`)).json();
  await num(b, 'gt_search_next');
  await b.waitForFunction((k) => { const s = JSON.parse(gtApi.str('gt_selection')); return s && s.key === k; },
                          step.hit && step.hit.key, { timeout: 30000 }).catch(() => {});
  const stepped = await json(b, 'gt_selection');
  check(step.hit && stepped && stepped.key === step.hit.key && stepped.name === needle,
        `B: next match selected (${stepped && stepped.key}; the server's step: ${step.hit && step.hit.key})`);
  await num(b, 'gt_search_prev');
  await b.waitForFunction((k) => { const s = JSON.parse(gtApi.str('gt_selection')); return s && s.key !== k; },
                          stepped && stepped.key, { timeout: 30000 }).catch(() => {});
  const back = await json(b, 'gt_selection');
  check(back && back.name === needle && back.start <= stepped.start && back.key !== stepped.key, `B: previous match (${back && back.key})`);
  await quiet(b);
  await b.waitForTimeout(300);
  await b.screenshot({ path: path.join(outDir, 'remote-search.png') });

  // ---- C: the same trace downloaded into the page (today's path), for the memory it takes ------------------
  // GT_REMOTE_E2E_NO_LOCAL=1 skips it: at 100 M events the downloaded model alone is about 2.3 GB of wasm heap.
  const pages = [a, b];
  if (!process.env.GT_REMOTE_E2E_NO_LOCAL) {
    t0 = t();
    const c = await openPage(`${base}/?trace=${id}&remote=0&view=${encodeURIComponent(view)}`);
    check(await settled(c, 300000) === 2, 'C: &remote=0 downloads and loads the trace');
    numbers.local_open_s = (t() - t0) / 1000;
    check((await json(c, 'gt_selection')).key === key, 'C: the link selects the same event in memory');
    const memLocal = await memory(c);
    numbers.local = { ...memLocal, trace_download_bytes: c.gtBytes.trace };
    pages.push(c);
    check(memRemote.wasm_heap <= memLocal.wasm_heap && memRemote.wasm_heap <= 300 * 2 ** 20,
          `page memory: remote ${(memRemote.wasm_heap / 2 ** 20).toFixed(0)} MiB wasm heap vs ` +
          `${(memLocal.wasm_heap / 2 ** 20).toFixed(0)} MiB downloaded`);
  } else {
    check(memRemote.wasm_heap <= 300 * 2 ** 20,
          `page memory: remote ${(memRemote.wasm_heap / 2 ** 20).toFixed(0)} MiB wasm heap`);
  }
  for (const p of pages) {
    // A build without the threaded page (gtrace-mt.js) falls back to gtrace.js by design: not an error here.
    const errors = p.gtLog.filter((l) => /pageerror|Content Security Policy|Refused to|Aborted/.test(l) &&
                                         !/gtrace-mt\.js/.test(l));
    check(errors.length === 0, 'no page errors: ' + errors.join(' | '));
  }
} catch (e) {
  console.log('FAIL ' + (e && e.stack || e));
  failed = true;
} finally {
  await browser.close();
  await stopServe(serve);
  fs.rmSync(tmp, { recursive: true, force: true });
}
fs.writeFileSync(path.join(outDir, 'numbers.json'), JSON.stringify(numbers, null, 2));
console.log('numbers: ' + JSON.stringify(numbers));
console.log(failed ? 'remote e2e: FAILED' : 'remote e2e: passed');
process.exit(failed ? 1 : 0);
