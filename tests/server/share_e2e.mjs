// Share links end to end against the real server: `gtrace serve` hosts the built page, a trace is dropped into
// one browser context and shared (the page uploads it: POST /api/traces), and the printed link opens in a fresh
// context with the same trace, visible range and selection (checked through the viewer's C API). Screenshots of
// both land in test-output/share/.
//
//   node tests/server/share_e2e.mjs GTRACE_BINARY WEB_ROOT TRACE_FILE
// Needs the wasm page (cmake --preset wasm) and web/tests/node_modules (scripts/setup.sh).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launchBrowser, repoRoot as root, startServe, stopServe } from '../../web/tests/harness.mjs';

const [gtrace, webRoot, traceFile] = process.argv.slice(2);
if (!gtrace || !webRoot || !traceFile) {
  console.error('usage: node tests/server/share_e2e.mjs GTRACE_BINARY WEB_ROOT TRACE_FILE');
  process.exit(64);
}
const outDir = path.join(root, 'test-output/share');
fs.mkdirSync(outDir, { recursive: true });
const store = fs.mkdtempSync(path.join(os.tmpdir(), 'gtrace-share-e2e-'));

// ---- the server ------------------------------------------------------------------------------------------------
const serve = await startServe(gtrace, ['--store', store, '--web-root', webRoot]);
const base = serve.base;
const browser = await launchBrowser();

let failed = false;
function check(cond, message) {
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${message}`);
  if (!cond) failed = true;
}

async function openPage(url) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 800 } });  // fresh profile
  const page = await context.newPage();
  page.gtLog = [];
  page.on('console', (m) => page.gtLog.push(`[${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => page.gtLog.push(`[pageerror] ${e.message}`));
  await page.goto(url);
  try {
    await page.waitForFunction(() => window.gtReady && window.gtReady(), null, { timeout: 60000 });
  } catch (e) {
    console.log(page.gtLog.join('\n'));
    throw e;
  }
  return page;
}
const num = (page, fn, ...args) => page.evaluate(([f, a]) => gtApi.num(f, ...a), [fn, args]);
const str = (page, fn, ...args) => page.evaluate(([f, a]) => gtApi.str(f, ...a), [fn, args]);
async function settled(page) {
  await page.waitForFunction(() => {
    const s = gtApi.num('gt_load_state');
    return (s === 2 || s === 3) && document.getElementById('loading').hidden;
  }, null, { timeout: 60000 });
  return num(page, 'gt_load_state');
}
async function range(page) {
  return { start: await num(page, 'gt_visible_range_start'), end: await num(page, 'gt_visible_range_end') };
}
const cspViolations = (page) => page.gtLog.filter((l) => /Content Security Policy|Refused to/.test(l));

// Drops the file at `file` onto the page as a user would (a DataTransfer holding a File).
async function drop(page, file) {
  await page.evaluate(async ([name, data]) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(data)], name));
    const canvas = document.getElementById('canvas');
    for (const type of ['dragenter', 'dragover', 'drop'])
      canvas.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, [path.basename(file), [...fs.readFileSync(file)]]);
}

try {
  // ---- A: drop the trace from disk, zoom, select, share ----------------------------------------------------
  const a = await openPage(base + '/');
  await drop(a, traceFile);
  check(await settled(a) === 2, 'A: the dropped trace loads (no server involved yet)');
  const full = await range(a);
  const span = full.end - full.start;
  await num(a, 'gt_set_visible_range', full.start + span * 0.25, full.start + span * 0.6);
  const found = await num(a, 'gt_search', 'cuda');
  check(found > 0, 'A: the trace has CUDA API calls to select');
  await num(a, 'gt_search_next');  // selects the next match
  const selA = JSON.parse((await str(a, 'gt_selection')) || 'null');
  check(selA && selA.key, 'A: an event is selected');
  check(await num(a, 'gt_show_panel', 'kernels') === 1, 'A: the kernels panel opens');
  // Collapse the first track that has events, so the link must carry the expanded/collapsed set too.
  const tracksA = JSON.parse(await str(a, 'gt_tracks'));
  const toCollapse = tracksA.find((t) => t.events > 0 && !t.collapsed);
  check(toCollapse && await num(a, 'gt_set_collapsed', toCollapse.key, 1) === 1, 'A: a track collapses');
  console.log(`A: ${found} matches for "cuda", selected ${JSON.stringify(selA)}`);
  const wantRange = await range(a);
  const link = await a.evaluate(() => window.gtShareLink());
  check(typeof link === 'string' && link.startsWith(base + '/?trace='), 'A: Share uploaded and made a link: ' + link);
  const id = new URL(link).searchParams.get('trace');
  const stored = await fetch(`${base}/api/traces/${id}`);
  const storedBytes = Buffer.from(await stored.arrayBuffer());
  check(stored.status === 200 && storedBytes.equals(fs.readFileSync(traceFile)), 'the server holds the exact bytes');
  await a.screenshot({ path: path.join(outDir, 'share-a-sender.png') });

  // ---- B: a fresh browser context opens the link -----------------------------------------------------------
  const b = await openPage(link);
  check(await settled(b) === 2, 'B: the link loads the trace from the server');
  const gotRange = await range(b);
  const tol = (wantRange.end - wantRange.start) * 0.01;
  check(Math.abs(gotRange.start - wantRange.start) <= tol && Math.abs(gotRange.end - wantRange.end) <= tol,
        `B: same visible range (${gotRange.start}..${gotRange.end} vs ${wantRange.start}..${wantRange.end})`);
  const selB = JSON.parse((await str(b, 'gt_selection')) || 'null');
  check(selB && selA.key === selB.key, `B: same selection (${JSON.stringify(selB)})`);
  check(await str(b, 'gt_panel') === 'kernels', 'B: the same panel is open');
  const collapsedOf = (tracks) => JSON.stringify(tracks.map((t) => [t.key, t.collapsed]));
  check(collapsedOf(JSON.parse(await str(b, 'gt_tracks'))) === collapsedOf(JSON.parse(await str(a, 'gt_tracks'))),
        'B: the same tracks expanded and collapsed');
  const eventsA = await num(a, 'gt_event_count', 'all');
  check(eventsA > 0 && await num(b, 'gt_event_count', 'all') === eventsA, `B: same event count (${eventsA})`);
  check(await str(b, 'gt_trace_name') === path.basename(traceFile),
        `B: the trace keeps the sender's file name (${await str(b, 'gt_trace_name')})`);
  await b.screenshot({ path: path.join(outDir, 'share-b-receiver.png') });

  // ---- C: a PyTorch profiler (Kineto) JSON is shared the same way ---------------------------------------------
  const kineto = path.join(root, 'tests/viewer/data/kineto_small.json');
  const c = await openPage(base + '/');
  await drop(c, kineto);
  check(await settled(c) === 2, 'C: the dropped Kineto JSON loads');
  const kLink = await c.evaluate(() => window.gtShareLink());
  check(typeof kLink === 'string' && kLink.startsWith(base + '/?trace='), 'C: Share uploaded the JSON: ' + kLink);
  const d = await openPage(kLink);
  check(await settled(d) === 2, 'D: the link opens the JSON trace');
  const eventsC = await num(c, 'gt_event_count', 'all');
  check(eventsC > 0 && await num(d, 'gt_event_count', 'all') === eventsC, `D: same event count (${eventsC})`);
  check(await str(d, 'gt_trace_name') === 'kineto_small.json', 'D: under its file name');

  // ---- E: a counters trace stored on the server, opened by link as a remote trace (&remote=1): the counters
  // of each profiled kernel and the roofline come from the server's /profiled and equal the downloaded page's.
  const countersFile = path.join(root, 'tests/data/counters_torch_graph_h200.gtrace');
  const up = await fetch(`${base}/api/traces?name=graph.gtrace`, {
    method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: fs.readFileSync(countersFile) });
  const cid = (await up.json()).id;
  check(up.status === 201 && cid, `E: stored the counters trace as ${cid}`);
  for (let i = 0; i < 600 && (await fetch(`${base}/api/t/${cid}/meta`)).status !== 200; ++i)
    await new Promise((r) => setTimeout(r, 100));
  const profiled = await (await fetch(`${base}/api/t/${cid}/profiled`)).json();
  check(profiled.launch_of && profiled.launch_of.length >= 15, `E: /profiled maps ${profiled.launch_of.length} launches`);
  const keys = [];
  for (const [lane, index] of profiled.launch_of.filter((_, i) => i % 5 === 0).slice(0, 6))
    keys.push((await (await fetch(`${base}/api/t/${cid}/event?lane=${lane}&index=${index}`)).json()).key);
  const e = await openPage(`${base}/?trace=${cid}&remote=1`);
  const f = await openPage(`${base}/?trace=${cid}&remote=0`);
  check(await settled(e) === 2 && await settled(f) === 2, 'E: the link opens remotely and downloaded');
  check(await e.evaluate(() => window.gtRemote === true), 'E: the first page is remote');
  for (const key of keys) {
    await num(e, 'gt_select', key);
    await num(f, 'gt_select', key);
    const want = await str(f, 'gt_counters');
    await e.waitForFunction((w) => gtApi.str('gt_counters') === w, want, { timeout: 30000 }).catch(() => {});
    const got = await str(e, 'gt_counters');
    check(got === want && JSON.parse(want).selected && JSON.parse(want).selected.launch,
          `E: ${key}: the remote counters section is the downloaded one's (${JSON.parse(got).selected &&
           JSON.parse(got).selected.launch})`);
  }
  await num(e, 'gt_show_panel', 'roofline');
  await e.waitForTimeout(300);
  check(await str(e, 'gt_panel') === 'roofline', 'E: the roofline tab is open on the remote trace');
  await e.screenshot({ path: path.join(outDir, 'share-e-remote-roofline.png') });
  await num(e, 'gt_show_panel', 'details');
  await e.waitForTimeout(200);
  await e.screenshot({ path: path.join(outDir, 'share-e-remote-counters.png') });
  for (const p of [a, b, c, d, e, f]) check(cspViolations(p).length === 0, 'no CSP violations: ' + cspViolations(p).join(' | '));
} catch (e) {
  console.log('FAIL ' + (e && e.stack || e));
  failed = true;
} finally {
  await browser.close();
  await stopServe(serve);
  fs.rmSync(store, { recursive: true, force: true });
}
console.log(failed ? 'share e2e: FAILED' : 'share e2e: passed');
process.exit(failed ? 1 : 0);
