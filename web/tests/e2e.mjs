// Browser end-to-end tests of the gtrace viewer: Debian's chromium (headless, WebGL2 on SwiftShader) driven by
// playwright-core. Serves the built page from a throwaway 127.0.0.1 server, asks the running page what it shows
// through the viewer's exported C API (window.gtApi), and saves a screenshot per test.
//
//   node e2e.mjs [--web-root build/wasm/web] [--out test-output/web] [--only substring] [--jobs N]
//
// --jobs N (default 2): tests run N at a time, each worker with its own chromium (so its own GPU process, where
// SwiftShader draws the pages' frames on the CPU). A test's output is printed in one piece when it ends.
// Prints "N passed, M failed" last; exits 1 when anything failed.
import { launchBrowser, serveLink } from './harness.mjs';
import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn } from 'node:child_process';
import os from 'node:os';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as fixtures from './fixtures.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const argv = process.argv.slice(2);
const opt = (name, dflt) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : dflt; };
const webRoot = path.resolve(opt('--web-root', path.join(repo, 'build/wasm/web')));
const outDir = path.resolve(opt('--out', path.join(repo, 'test-output/web')));
const only = opt('--only', '');
const jobs = Math.max(1, Number(opt('--jobs', '2')) || 1);
fs.mkdirSync(outDir, { recursive: true });

// ---- fixtures ------------------------------------------------------------------------------------------------
const served = new Map();  // name -> {bytes, expect}
function addFixture(f) { served.set(f.name, f); return f; }
const chrome = addFixture(fixtures.chromeTrace());
const chromeGz = addFixture(fixtures.gzipped(chrome));
const garbage = addFixture(fixtures.garbage());
const cutJson = addFixture(fixtures.truncatedJson());
const kineto = addFixture(fixtures.gzipped(fixtures.kinetoTrace()));
const prefixKernels = addFixture(fixtures.prefixKernelsTrace());
// Big enough that parsing it spans several frames (the loader parses about 8 MB of JSON a step).
const bigJson = addFixture({ name: 'big-slow.json', bytes: Buffer.from('{"traceEvents":[' +
  Array.from({ length: 500000 }, (_, i) => `{"name":"op${i % 97}","ph":"X","ts":${2 * i},"dur":1,"pid":9,"tid":${i % 4}}`)
    .join(',') + ']}') });

// .gtrace inputs: the bundled real trace recorded with gcollect on the GPU machine (tests/data/*.gtrace) and the
// deterministic sample written by gt_sample_trace (GT_SAMPLE_GTRACE, set by scripts/web-test.sh). Expected
// counts come from a sidecar <name>.expect.json written alongside by whoever produced the trace.
const gtraces = [];
function addGtrace(file) {
  const f = addFixture({ name: path.basename(file), bytes: fs.readFileSync(file) });
  const sidecar = file.replace(/\.gtrace$/, '.expect.json');
  if (fs.existsSync(sidecar)) f.expect = JSON.parse(fs.readFileSync(sidecar, 'utf8'));
  else if (recordedCounts[f.name]) f.expect = recordedCounts[f.name];
  // A truncated copy: everything before the cut must still show, and the loss must be reported.
  addFixture({ name: 'truncated-' + f.name, bytes: f.bytes.subarray(0, Math.floor(f.bytes.length * 0.6)) });
  gtraces.push(f);
}
// What tests/data/README.md says the recorded traces hold (the collector's own fixture tests check the same).
const recordedCounts = {
  'h200_streams.gtrace': { kernels: 16, memcpys: 32, streamTracks: 4 },
  'cpu_h200_python314.gtrace': { kernels: 4, streamTracks: 1 },
  'h200_torch_train.gtrace': { nvtxAtLeast: 40 },
  'h200_multithread.gtrace': { namedThreadsAtLeast: 4 },
};
const dataDir = path.join(repo, 'tests/data');
if (fs.existsSync(dataDir))
  for (const n of fs.readdirSync(dataDir).filter((n) => n.endsWith('.gtrace')).sort()) addGtrace(path.join(dataDir, n));
if (process.env.GT_SAMPLE_GTRACE) addGtrace(process.env.GT_SAMPLE_GTRACE);
// A real torch.profiler trace recorded on the H200 (tests/data/README.md): PyTorch marks each profiled step with an
// instant of scope "g", which belongs on one row for the whole trace.
const torchJsonPath = path.join(dataDir, 'h200_torch_profiler.json.gz');
const torchJson = addFixture({ name: path.basename(torchJsonPath), bytes: fs.readFileSync(torchJsonPath) });
// The files of a simulated two-rank job with a straggler (gt_job_traces, GT_JOB_DIR set by scripts/web-test.sh):
// opened together, they are merged. Not in `gtraces`: each alone is an ordinary one-rank trace.
const jobFiles = [];
if (process.env.GT_JOB_DIR)
  for (const n of ['rank0.gtrace', 'rank1.gtrace'])
    jobFiles.push(addFixture({ name: n, bytes: fs.readFileSync(path.join(process.env.GT_JOB_DIR, n)) }));

// ---- a tiny static server --------------------------------------------------------------------------------------
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm',
                '.json': 'application/json', '.png': 'image/png' };
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  let body = null, type = 'application/octet-stream', isolated = false;
  if (url.pathname.startsWith('/fixtures/')) {
    const f = served.get(decodeURIComponent(url.pathname.slice('/fixtures/'.length)));
    if (f) body = f.bytes;
  } else if (url.pathname.startsWith('/api/traces/')) {
    const f = served.get(decodeURIComponent(url.pathname.slice('/api/traces/'.length)));
    if (f) body = f.bytes;
  } else {
    // /iso/...: the page with the headers that make it cross-origin isolated (as `gtrace serve` sends them),
    // so it runs the threaded build.
    if (url.pathname.startsWith('/iso/') || url.pathname === '/iso') {
      isolated = true;
      url.pathname = url.pathname.slice(4) || '/';
    }
    const rel = url.pathname === '/' ? 'index.html' : decodeURIComponent(url.pathname).replace(/^\/+/, '');
    const file = path.join(webRoot, path.normalize(rel));
    if (file.startsWith(webRoot) && fs.existsSync(file) && fs.statSync(file).isFile()) {
      body = fs.readFileSync(file);
      type = types[path.extname(file)] || type;
    }
  }
  if (!body) { res.writeHead(404, { 'Content-Type': 'text/plain' }); res.end('not found'); return; }
  const headers = { 'Content-Type': type, 'Content-Length': body.length, 'Cache-Control': 'no-store' };
  if (isolated) {
    headers['Cross-Origin-Opener-Policy'] = 'same-origin';
    headers['Cross-Origin-Embedder-Policy'] = 'require-corp';
  }
  res.writeHead(200, headers);
  res.end(body);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

// ---- browser ---------------------------------------------------------------------------------------------------
// The running test's worker browser, the contexts it opened (closed when it ends) and its output lines, found
// through the async call chain so that tests running side by side never see each other's.
const running = new AsyncLocalStorage();
async function newContext(options) {
  const run = running.getStore();
  const context = await run.browser.newContext(options);
  run.contexts.push(context);
  return context;
}
// A line of the test's own output, printed after its ok/FAIL line.
const say = (line) => running.getStore().lines.push(line);

class Failure extends Error {}
function check(cond, message) { if (!cond) throw new Failure(message); }
function near(a, b, tol, message) { check(Math.abs(a - b) <= tol, `${message}: ${a} vs ${b} (tolerance ${tol})`); }

async function openPage(name, query = '', contextOptions = {}, prefix = '') {
  const context = await newContext({ viewport: { width: 1400, height: 800 }, ...contextOptions });
  const page = await context.newPage();
  const log = [];
  page.on('console', (m) => log.push(`[${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => { log.push(`[pageerror] ${e.message}`); page.gtPageErrors.push(e.message); });
  page.gtPageErrors = [];
  page.gtLog = log;
  page.gtName = name;
  await page.goto(`${base}${prefix}/${query}`);
  await page.waitForFunction(() => window.gtReady && window.gtReady(), null, { timeout: 30000 });
  await frames(page, 3);
  return page;
}

// Waits until the viewer has drawn `n` more frames (the C API counts them).
async function frames(page, n) {
  const start = await page.evaluate(() => gtApi.num('gt_frame_count'));
  await page.waitForFunction((s) => gtApi.num('gt_frame_count') >= s, start + n, { timeout: 20000 });
}

async function drop(page, fixtureName) {
  await page.evaluate(async (name) => {
    const blob = await (await fetch('/fixtures/' + encodeURIComponent(name))).blob();
    const dt = new DataTransfer();
    dt.items.add(new File([blob], name));
    const canvas = document.getElementById('canvas');
    for (const type of ['dragenter', 'dragover', 'drop'])
      canvas.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, fixtureName);
}

// Drops several fixtures in one DataTransfer, as a user selecting files in a file manager does.
async function dropMany(page, fixtureNames) {
  await page.evaluate(async (names) => {
    const dt = new DataTransfer();
    for (const name of names)
      dt.items.add(new File([await (await fetch('/fixtures/' + encodeURIComponent(name))).blob()], name));
    const canvas = document.getElementById('canvas');
    for (const type of ['dragenter', 'dragover', 'drop'])
      canvas.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, fixtureNames);
}

// Waits for a load to settle; returns 2 (loaded) or 3 (failed).
async function settled(page) {
  await page.waitForFunction(() => {
    const s = gtApi.num('gt_load_state');
    return (s === 2 || s === 3) && document.getElementById('loading').hidden;
  }, null, { timeout: 60000 });
  await frames(page, 2);
  return page.evaluate(() => gtApi.num('gt_load_state'));
}

const api = (page, fn, ...args) => page.evaluate(([f, a]) => gtApi.num(f, ...a), [fn, args]);
const apiStr = (page, fn, ...args) => page.evaluate(([f, a]) => gtApi.str(f, ...a), [fn, args]);
const apiJson = (page, fn, ...args) => page.evaluate(([f, a]) => gtApi.json(f, ...a), [fn, args]);
const range = async (page) => ({ start: await api(page, 'gt_visible_range_start'),
                                 end: await api(page, 'gt_visible_range_end') });
async function shot(page, file) { await page.screenshot({ path: path.join(outDir, file) }); }
// The timeline's plot area in page pixels (where events are drawn, right of the track labels).
const timelineRect = (page) => apiJson(page, 'gt_timeline_rect');

// ---- tests -----------------------------------------------------------------------------------------------------
const tests = [];
// cost: about how many seconds the test takes where it is much longer than most (the runner starts those first).
const test = (name, fn, { cost = 0 } = {}) => tests.push({ name, fn, cost });

test('page loads and shows the welcome screen', async () => {
  const page = await openPage('welcome');
  check(await api(page, 'gt_load_state') === 0, 'nothing loaded yet');
  check(await page.locator('#boot').isHidden(), 'boot message hidden once the wasm runs');
  const size = await page.evaluate(() => [document.getElementById('canvas').width,
                                          document.getElementById('canvas').height]);
  check(size[0] >= 1000 && size[1] >= 600, `canvas follows the window: ${size}`);
  check(await api(page, 'gt_track_count') === 0, 'no tracks without a trace');
  await shot(page, '01-welcome.png');
  return page;
});

test('an idle page draws nothing; input and C API calls draw again', async () => {
  const page = await openPage('idle');
  await drop(page, chrome.name);
  check(await settled(page) === 2, 'loads');
  // gtApi wakes the frames (a call may change the view): read the count without it, and count the page's
  // animation frames meanwhile, which keep running (the loop is not paused, it draws nothing). A window lasts
  // `ms`, and longer until `frames` animation frames ran, up to `most` ms: under load (CI runs two browser
  // tests at a time on two cores) a SwiftShader frame took 150 ms.
  const quiet = (ms, frames, most) => page.evaluate(([ms, frames, most]) => new Promise((done) => {
    const count = () => Module.ccall('gt_frame_count', 'number', [], []);
    const before = count(), t0 = performance.now();
    let animation = 0;
    const tick = () => {
      ++animation;
      const t = performance.now() - t0;
      if (t < most && (t < ms || animation < frames)) requestAnimationFrame(tick);
      else done({ drawn: count() - before, animation });
    };
    requestAnimationFrame(tick);
  }), [ms, frames, most]);
  // Awake: each animation frame draws (one at either end of the window may fall outside the count). Inside
  // the second of frames that a call or an input starts.
  const drawsEach = (w) => w.animation >= 2 && w.drawn >= 2 && w.drawn >= w.animation - 1;
  await page.waitForTimeout(1500);  // past the second of frames after the last call
  const idle = await quiet(800, 10, 4000);
  check(idle.animation >= 10, `the page's animation frames run: ${JSON.stringify(idle)}`);
  check(idle.drawn === 0, `idle: no frame drawn: ${JSON.stringify(idle)}`);
  const still = await page.screenshot();
  const rect = await timelineRect(page);  // a C API call: frames for a second
  const awake = await quiet(300, 4, 700);
  check(drawsEach(awake), `a C API call draws frames: ${JSON.stringify(awake)}`);
  check(Buffer.compare(await page.screenshot(), still) === 0, 'the idle canvas kept the image a drawn frame has');
  await page.waitForTimeout(1500);
  check((await quiet(500, 5, 3000)).drawn === 0, 'idle again');
  await page.mouse.move(rect.x + rect.w / 2, rect.y + 20);
  const moved = await quiet(300, 4, 700);
  check(drawsEach(moved), `a mouse move draws frames: ${JSON.stringify(moved)}`);
  await page.waitForTimeout(1500);
  check((await quiet(500, 5, 3000)).drawn === 0, 'idle after the move');
  return page;
});

test('dropped Chrome trace shows its tracks and counts', async () => {
  const page = await openPage('chrome-drop');
  await drop(page, chrome.name);
  check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
  const tracks = await apiJson(page, 'gt_tracks');
  const names = tracks.map((t) => t.name).join(' | ');
  check(tracks.length >= 2, `at least the two threads: ${names}`);
  check(names.includes('main'), `thread "main" present: ${names}`);
  check(/stream 7/i.test(names), `thread "stream 7" present: ${names}`);
  check(await api(page, 'gt_event_count', 'all') >= chrome.expect.xEvents, 'every complete event counted');
  // The initial view fits the whole trace (its work fills it: WorkRange keeps the whole).
  const r = await range(page);
  check(r.start <= chrome.expect.startNs && r.end >= chrome.expect.endNs, `fit-all covers the trace: ${JSON.stringify(r)}`);
  check(await api(page, 'gt_search', 'gemm') === chrome.expect.gemmCount, 'search "gemm" finds every gemm');
  await shot(page, '02-chrome-trace.png');
  return page;
});

test('gzipped Chrome trace opens from ?url= with the same counts', async () => {
  const page = await openPage('url-gz', `?url=/fixtures/${encodeURIComponent(chromeGz.name)}`);
  check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
  check(await api(page, 'gt_search', 'gemm') === chrome.expect.gemmCount, 'same gemm count as the plain file');
  check(String(await apiStr(page, 'gt_trace_name')).includes('step.json'), 'name shown from the URL');
  await shot(page, '03-url-gz.png');
  return page;
});

test('wheel zooms around the cursor, drag and keys pan, F fits', async () => {
  const page = await openPage('navigate');
  await drop(page, chrome.name);
  check(await settled(page) === 2, 'loads');
  const rect = await timelineRect(page);
  const r0 = await range(page);
  const x = rect.x + rect.w * 0.25, y = rect.y + Math.min(40, rect.h / 2);
  const tAt = (r, px) => r.start + (px - rect.x) / rect.w * (r.end - r.start);
  const anchor = tAt(r0, x);
  await page.mouse.move(x, y);
  for (let i = 0; i < 3; ++i) { await page.mouse.wheel(0, -120); await frames(page, 2); }
  const r1 = await range(page);
  check(r1.end - r1.start < 0.8 * (r0.end - r0.start), `wheel-up zooms in: ${JSON.stringify([r0, r1])}`);
  near(tAt(r1, x), anchor, (r0.end - r0.start) * 0.01, 'the time under the cursor stays under the cursor');
  await shot(page, '04a-zoomed.png');

  // Drag right by 200 px: the view moves 200 px worth of time earlier.
  const perPx = (r1.end - r1.start) / rect.w;
  await page.mouse.move(x, y);
  await page.mouse.down();
  for (let i = 1; i <= 4; ++i) { await page.mouse.move(x + 50 * i, y); await frames(page, 1); }
  await page.mouse.up();
  await frames(page, 2);
  const r2 = await range(page);
  near(r1.start - r2.start, 200 * perPx, 4 * perPx, 'drag pans by the dragged distance');
  near(r2.end - r2.start, r1.end - r1.start, perPx, 'drag keeps the zoom');

  // D pans right (later), S zooms out, F fits everything again.
  await page.mouse.move(x, y);
  await page.keyboard.down('d'); await frames(page, 6); await page.keyboard.up('d'); await frames(page, 2);
  const r3 = await range(page);
  check(r3.start > r2.start, `D pans towards later time: ${r2.start} -> ${r3.start}`);
  await page.keyboard.down('s'); await frames(page, 6); await page.keyboard.up('s'); await frames(page, 2);
  const r4 = await range(page);
  check(r4.end - r4.start > r3.end - r3.start, 'S zooms out');
  await page.keyboard.press('f'); await frames(page, 3);
  const r5 = await range(page);
  // F fits the whole trace (the first view may be narrower: it opens on the work, viewer::WorkRange).
  check(r5.start <= chrome.expect.startNs && r5.end >= chrome.expect.endNs, `F fits the whole trace: ${JSON.stringify(r5)}`);
  check(r5.end - r5.start <= 1.2 * (chrome.expect.endNs - chrome.expect.startNs), 'F fits closely');
  await shot(page, '04b-fit.png');
  return page;
});

test('shift-drag measures a range', async () => {
  const page = await openPage('measure');
  await drop(page, chrome.name);
  check(await settled(page) === 2, 'loads');
  const rect = await timelineRect(page);
  const r = await range(page);
  const x0 = rect.x + rect.w * 0.2, x1 = rect.x + rect.w * 0.6, y = rect.y + 30;
  await page.keyboard.down('Shift');
  await page.mouse.move(x0, y);
  await page.mouse.down();
  for (let i = 1; i <= 4; ++i) { await page.mouse.move(x0 + (x1 - x0) * i / 4, y); await frames(page, 1); }
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await frames(page, 2);
  const m = await apiJson(page, 'gt_measurement');
  check(m && m.end > m.start, 'a measurement exists: ' + JSON.stringify(m));
  near(m.end - m.start, (r.end - r.start) * 0.4, (r.end - r.start) * 0.01, 'measured span matches the drag');
  const after = await range(page);
  near(after.start, r.start, 1, 'measuring does not pan');
  await shot(page, '05-measure.png');
  return page;
});

test('click selects an event; details and search navigation', async () => {
  const page = await openPage('select');
  await drop(page, chrome.name);
  check(await settled(page) === 2, 'loads');
  check(await api(page, 'gt_search', 'softmax') === 10, 'ten softmax kernels');
  await api(page, 'gt_search_next');  // jumps to the first match and selects it
  await frames(page, 3);
  const sel = await apiJson(page, 'gt_selection');
  check(sel && String(sel.name).includes('softmax'), 'search next selects the match: ' + JSON.stringify(sel));
  // Clicking where the C API says the selected event is drawn selects it again after clearing.
  const pos = await apiJson(page, 'gt_selection_screen_pos');
  check(pos && pos.visible, 'the selected event is on screen after the jump: ' + JSON.stringify(pos));
  await page.keyboard.press('Escape'); await frames(page, 2);
  check(await apiJson(page, 'gt_selection') === null, 'Escape clears the selection');
  await page.mouse.move(pos.x, pos.y);
  await frames(page, 3);
  await shot(page, '06a-hover.png');
  await page.mouse.click(pos.x, pos.y);
  await frames(page, 3);
  const again = await apiJson(page, 'gt_selection');
  check(again && again.name === sel.name, 'click selects the event under the cursor: ' + JSON.stringify(again));
  await shot(page, '06b-selected.png');
  return page;
});

test('garbage file shows an error and the page keeps working', async () => {
  const page = await openPage('garbage');
  await drop(page, garbage.name);
  check(await settled(page) === 3, 'load fails');
  const banner = page.locator('#error-banner');
  check(await banner.isVisible(), 'error banner visible');
  const text = await page.locator('#error-text').textContent();
  check(/garbage\.gtrace/.test(text) && text.length > 30, 'the error names the file and a reason: ' + text);
  await shot(page, '07a-garbage.png');
  // A JSON document cut in half: what could be read is shown, and the page says what was lost.
  await drop(page, cutJson.name);
  check(await settled(page) === 2, 'truncated JSON shows what could be read');
  const text2 = await page.locator('#error-text').textContent();
  check(await banner.isVisible() && /cut\.json/.test(text2), 'the warning names the file: ' + text2);
  const losses = await apiJson(page, 'gt_losses');
  check(losses.length > 0, 'the loss is listed: ' + JSON.stringify(losses));
  check(await api(page, 'gt_event_count', 'all') > 0, 'events before the cut are shown');
  await shot(page, '07b-truncated-json.png');
  // Still usable: a good file opens afterwards.
  await drop(page, chrome.name);
  check(await settled(page) === 2, 'a good trace opens after errors');
  check(await banner.isHidden(), 'error banner cleared by the successful load');
  await shot(page, '07c-recovered.png');
  return page;
});

test('a drop during a load cancels it: the new file opens, nothing of the first comes back', async () => {
  const page = await openPage('cancel');
  // All in the page, so that the second drop lands while the first file is being parsed, whatever the speed.
  const seen = await page.evaluate(async ([big, small]) => {
    const file = async (name) => new File([await (await fetch('/fixtures/' + encodeURIComponent(name))).blob()], name);
    const bigFile = await file(big), smallFile = await file(small);
    const dropFile = (f) => {
      const dt = new DataTransfer();
      dt.items.add(f);
      for (const type of ['dragenter', 'dragover', 'drop'])
        document.getElementById('canvas').dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    };
    dropFile(bigFile);
    for (let i = 0; i < 3000; ++i) {
      await new Promise((r) => requestAnimationFrame(r));
      if (gtApi.num('gt_load_state') === 1 && gtApi.num('gt_load_records') > 0) break;
    }
    const at = { state: gtApi.num('gt_load_state'), records: gtApi.num('gt_load_records'),
                 label: document.getElementById('loading-label').textContent };
    dropFile(smallFile);
    return at;
  }, [bigJson.name, chrome.name]);
  check(seen.state === 1 && seen.records > 0 && seen.records < 500000,
        'the second drop came while the first file was parsed: ' + JSON.stringify(seen));
  check(/big-slow\.json/.test(seen.label), 'the overlay named the file being parsed: ' + seen.label);
  check(await settled(page) === 2, 'the second file opens: ' + await apiStr(page, 'gt_last_error'));
  const count = await api(page, 'gt_event_count', 'all');
  check(count >= chrome.expect.xEvents && count < 1000, 'the model is the second file\'s: ' + count + ' events');
  await frames(page, 10);  // the first load, had it gone on, would have finished by now
  check(await api(page, 'gt_event_count', 'all') === count && await api(page, 'gt_load_state') === 2,
        'still the second file');
  check(await page.locator('#loading').isHidden() && await page.locator('#error-banner').isHidden(),
        'no overlay, no error');
  const names = (await apiJson(page, 'gt_tracks')).map((t) => t.name).join(' | ');
  check(names.includes('main'), 'the second file\'s tracks: ' + names);
  return page;
});

test('share hooks: ?trace=<id>&view=<state> restores the view', async () => {
  const page = await openPage('view-a');
  await drop(page, chrome.name);
  check(await settled(page) === 2, 'loads');
  const r = await range(page);
  const mid = (r.start + r.end) / 2;
  await api(page, 'gt_set_visible_range', mid, mid + (r.end - r.start) / 10);
  await frames(page, 2);
  const state = await apiStr(page, 'gt_view_state');
  const want = await range(page);
  check(state && state.length > 0, 'a view state string');
  const page2 = await openPage('view-b', `?trace=${encodeURIComponent(chrome.name)}&view=${encodeURIComponent(state)}`);
  check(await settled(page2) === 2, 'loads via /api/traces/<id>');
  await frames(page2, 2);
  const got = await range(page2);
  near(got.start, want.start, (want.end - want.start) * 0.01, 'same start');
  near(got.end, want.end, (want.end - want.start) * 0.01, 'same end');
  await shot(page2, '08-view-state.png');
  await page.context().close();
  return page2;
});

test('Summary tab: the Kineto trace\'s API calls, copies and host ops by name', async () => {
  const page = await openPage('summary');
  await drop(page, kineto.name);
  check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
  check(await api(page, 'gt_show_panel', 'summary') === 1, 'the Summary tab opens');
  await frames(page, 3);
  check(await apiStr(page, 'gt_panel') === 'summary', 'and stays open');
  const calls = await apiJson(page, 'gt_summary', 'api');
  const launches = calls.find((r) => r.name === 'cudaLaunchKernel');
  check(launches && launches.count === kineto.expect.kernels, 'one cudaLaunchKernel row per kernel: ' +
        JSON.stringify(launches));
  check(calls.reduce((n, r) => n + r.count, 0) === kineto.expect.api, 'every API call counted once');
  check(calls.every((r) => ['total_ns', 'avg_ns', 'min_ns', 'max_ns', 'share', 'bytes'].every((k) => k in r)),
        'rows in the shape of gtrace stats --json: ' + JSON.stringify(calls[0]));
  const copies = await apiJson(page, 'gt_summary', 'copies');
  check(copies.reduce((n, r) => n + r.count, 0) === kineto.expect.memcpys && copies.every((r) => r.bytes > 0),
        'the copies with their bytes: ' + JSON.stringify(copies));
  const ops = await apiJson(page, 'gt_summary', 'nvtx');
  check(ops.some((r) => r.name === 'aten::linear'), 'host ops by name');
  check((await apiJson(page, 'gt_summary', 'nonsense')).length === 0, 'an unknown table is empty');
  const gaps = await apiJson(page, 'gt_summary', 'gaps');
  check(gaps.length > 0 && gaps.every((g) => g.duration_ns >= 10000 && g.diagnosis.length > 0) &&
        gaps.every((g, i) => i === 0 || gaps[i - 1].duration_ns >= g.duration_ns),
        'idle gaps, longest first, each with a likely cause: ' + JSON.stringify(gaps[0]));
  check(gaps.every((g) => g.activity.length === g.cpu_activity.length &&
                          g.cpu_activity.every((a, i) => a.name === g.activity[i])),
        'gaps name their CPU activity, with kind and overlap as the CLI gives them');
  await shot(page, '09d-summary.png');
  return page;
});

// The merged job: one group per rank, labelled with rank and host, and the straggler named in the Summary.
async function checkJob(page) {
  const groups = [...new Set((await apiJson(page, 'gt_tracks')).map((t) => t.group))];
  check(groups.some((g) => /rank 0 · node-a/.test(g)), 'a group for rank 0 on node-a: ' + groups.join(' | '));
  check(groups.some((g) => /rank 1 · node-b/.test(g)), 'a group for rank 1 on node-b: ' + groups.join(' | '));
  const c = await apiJson(page, 'gt_summary', 'collectives');
  check(c && c.matched === 40 && c.ranks.length === 2, 'the 40 all-reduces matched across 2 ranks: ' + JSON.stringify(c));
  check(c.diagnosis.length === 1 && c.diagnosis[0].startsWith('rank 1 arrives late at 3 of 40 AllReduce'),
        'the straggler named: ' + JSON.stringify(c.diagnosis));
  check(c.ranks[1].late_at === 3 && c.ranks[0].wait_ns > 60e6, 'rank 0 waits for rank 1: ' + JSON.stringify(c.ranks));
}

test('several files dropped at once open merged: ranks grouped, the straggler in the Summary', async () => {
  check(jobFiles.length === 2, 'GT_JOB_DIR names the job\'s rank files (scripts/web-test.sh writes them)');
  const page = await openPage('job-merge');
  await dropMany(page, jobFiles.map((f) => f.name));
  check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
  const name = await apiStr(page, 'gt_trace_name');
  check(name.includes('rank0.gtrace') && name.includes('rank1.gtrace'), 'named after both files: ' + name);
  check(await apiStr(page, 'gt_load_warning') === '', 'a clean merge warns of nothing');
  await checkJob(page);
  check(await api(page, 'gt_show_panel', 'summary') === 1, 'the Summary tab opens');
  await frames(page, 4);
  await shot(page, '10a-job-merged-summary.png');

  // A selected all-reduce: the same collective on the other rank is outlined, the flow arrow joins the two.
  check(await api(page, 'gt_show_panel', 'details') === 1, 'the Details tab opens');
  check(await api(page, 'gt_search', 'ncclDevKernel_AllReduce') === 80, 'the 40 all-reduces of each rank found');
  await api(page, 'gt_search_next');
  await api(page, 'gt_search', '');
  await frames(page, 2);
  const sel = await apiJson(page, 'gt_selection');
  check(sel && /AllReduce/.test(sel.name), 'an all-reduce selected: ' + JSON.stringify(sel));
  await api(page, 'gt_set_visible_range', sel.start - 3e6, sel.end + 3e6);
  await frames(page, 4);
  const peers = await apiJson(page, 'gt_collective_peers');
  check(peers.length === 2 && peers.filter((p) => p.selected).length === 1,
        'the collective on both ranks, one of them the selection: ' + JSON.stringify(peers));
  check(peers.every((p) => p.visible) && peers[0].y !== peers[1].y && new Set(peers.map((p) => p.rank)).size === 2,
        'both drawn, on different ranks\' tracks: ' + JSON.stringify(peers));
  check(sel.fields && Object.keys(sel.fields).some((k) => k === 'Collective'),
        'the details name the collective: ' + JSON.stringify(sel.fields));
  await shot(page, '10d-job-collective-peers.png');

  // A JSON trace among them cannot be merged: it is named, the rest opens.
  await dropMany(page, [...jobFiles.map((f) => f.name), chrome.name]);
  check(await settled(page) === 2, 'the good files still load: ' + await apiStr(page, 'gt_last_error'));
  const warning = await apiStr(page, 'gt_load_warning');
  check(warning.includes(chrome.name) && warning.includes('left out'), 'the warning names the bad input: ' + warning);
  check(await page.locator('#error-banner').isVisible(), 'and the page shows it');
  const losses = await apiJson(page, 'gt_losses');
  check(losses.some((l) => l.name === `merge: ${chrome.name} left out`), 'the Data loss panel lists it: ' +
        JSON.stringify(losses));
  check(await apiStr(page, 'gt_panel') === 'loss', 'the Data loss panel is shown');
  await checkJob(page);
  await frames(page, 3);
  await shot(page, '10b-job-merged-bad-input.png');
  return page;
});

test('several ?url= parameters open merged', async () => {
  check(jobFiles.length === 2, 'GT_JOB_DIR names the job\'s rank files');
  const query = '?' + jobFiles.map((f) => 'url=/fixtures/' + encodeURIComponent(f.name)).join('&');
  const page = await openPage('job-urls', query);
  check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
  await checkJob(page);
  await shot(page, '10c-job-urls.png');
  // The threaded build (cross-origin isolated page) merges the same way.
  const iso = await openPage('job-urls-iso', query, {}, '/iso');
  check(await iso.evaluate(() => window.gtThreads()) > 1, 'the isolated page runs the threaded build');
  check(await settled(iso) === 2, 'loads on the threaded build: ' + await apiStr(iso, 'gt_last_error'));
  await checkJob(iso);
  return iso;
});

test('torch.profiler trace: its global instants on one row above every process', async () => {
  const page = await openPage('torch-json');
  await drop(page, torchJson.name);
  check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
  const tracks = await apiJson(page, 'gt_tracks');
  const names = tracks.map((t) => t.name + ' [' + t.group + ']').join(' | ');
  check(tracks.length > 3, `the trace's rows: ${names}`);
  check(tracks[0].name === 'Global instants · Ranges' && tracks[0].group.startsWith('Global'),
        `the first row is the global instants': ${names}`);
  check(tracks[0].events >= 1, `it holds PyTorch's step marks: ${tracks[0].events}`);
  check(tracks.filter((t) => t.name.startsWith('Global instants')).length === 1, 'one such row');
  check(!/\(42949672\d\d\)/.test(names), `an importer's rows carry no made-up thread id: ${names}`);
  await shot(page, '09e-torch-profiler.png');
  return page;
});

test('Kineto trace: counts, launch -> kernel flow and jump', async () => {
  const page = await openPage('kineto');
  await drop(page, kineto.name);
  check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
  check(await api(page, 'gt_event_count', 'kernel') === kineto.expect.kernels, 'kernel count');
  check(await api(page, 'gt_event_count', 'memcpy') === kineto.expect.memcpys, 'memcpy count');
  check(await api(page, 'gt_event_count', 'api') === kineto.expect.api, 'CUDA API count');
  const names = (await apiJson(page, 'gt_tracks')).map((t) => t.name).join(' | ');
  check(/stream 7/i.test(names), 'the GPU stream track: ' + names);
  // Select the third launch, jump to its kernel, and back.
  check(await api(page, 'gt_search', 'cudaLaunchKernel') === kineto.expect.kernels, 'launches found');
  for (let i = 0; i < 3; ++i) await api(page, 'gt_search_next');
  const launch = await apiJson(page, 'gt_selection');
  check(launch && launch.name === 'cudaLaunchKernel', 'a launch selected: ' + JSON.stringify(launch));
  check(await api(page, 'gt_jump_to_partner') === 1, 'the launch has a partner');
  const kernel = await apiJson(page, 'gt_selection');
  check(kernel && kernel.name === 'ampere_sgemm_128x64_tn', 'jumped to the kernel: ' + JSON.stringify(kernel));
  const fields = JSON.stringify(kernel.fields);
  check(/120/.test(fields) && /256/.test(fields) && /126/.test(fields), 'grid, block, registers shown: ' + fields);
  check(kernel.start > launch.start, 'the kernel starts after its launch');
  await api(page, 'gt_set_visible_range', launch.start - 200e3, kernel.end + 200e3);
  await frames(page, 3);
  await shot(page, '09a-kineto-flow.png');
  check(await api(page, 'gt_jump_to_partner') === 1, 'and back');
  check((await apiJson(page, 'gt_selection')).key === launch.key, 'back on the same launch');
  return page;
});

test('kernel summary table', async () => {
  const page = await openPage('kernels');
  await drop(page, chrome.name);
  check(await settled(page) === 2, 'loads');
  const rows = await apiJson(page, 'gt_kernel_summary');
  check(Array.isArray(rows) && rows.length === 3, 'three kernel names: ' + JSON.stringify(rows));
  const gemm = rows.find((r) => r.name === 'gemm_128x128');
  check(gemm && gemm.count === chrome.expect.gemmCount, 'gemm count: ' + JSON.stringify(gemm));
  near(gemm.avg_ns, 120e3, 1, 'gemm average 120 us');
  near(rows.reduce((a, r) => a + r.share, 0), 1, 1e-9, 'shares add up to 1');
  check(rows[0].name === 'gemm_128x128', 'sorted by total time: gemm first');
  check(await api(page, 'gt_show_panel', 'kernels') === 1, 'kernels panel opens');
  await frames(page, 3);
  await shot(page, '09b-kernels.png');
  return page;
});

test('kernel table row highlights exactly its kernel, not names it is a prefix of', async () => {
  const page = await openPage('kernel-prefix');
  await drop(page, prefixKernels.name);
  check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
  const e = prefixKernels.expect;
  check(await api(page, 'gt_search', 'relu') === e.reluLike, 'the substring search finds all six');
  check(await api(page, 'gt_show_panel', 'kernels') === 1, 'kernels panel opens');
  check(await api(page, 'gt_kernel_row_click', 'relu') === e.relu, 'the relu row highlights its three');
  await frames(page, 3);
  const h = await apiJson(page, 'gt_highlight');
  check(h.exact === true && h.count === e.relu && h.text === 'relu', 'exact highlight: ' + JSON.stringify(h));
  const r = await range(page);
  check(r.start <= e.reluFirstNs && r.end >= e.reluLastEndNs, 'zoomed to the relu instances: ' + JSON.stringify(r));
  const seen = new Set();
  for (let i = 0; i < e.relu; ++i) {
    check(await api(page, 'gt_search_next') === i + 1, `match ${i + 1} of ${e.relu}`);
    const sel = await apiJson(page, 'gt_selection');
    check(sel.name === 'relu', 'only relu instances are visited: ' + sel.name);
    seen.add(sel.key);
  }
  check(seen.size === e.relu, 'every relu once');
  check((await apiJson(page, 'gt_highlight')).exact, 'stepping keeps the exact highlight');
  await shot(page, '09c-kernel-row-exact.png');
  check(await api(page, 'gt_kernel_row_click', 'relu_bwd') === 2, 'relu_bwd row: two');
  check(await api(page, 'gt_kernel_row_click', 'no_such_kernel') === -1, 'unknown row');
  // Typing in the search box afterwards is a substring search again.
  check(await api(page, 'gt_search', 'relu_') === 2 && !(await apiJson(page, 'gt_highlight')).exact, 'typed search');
  return page;
});

test('hi-DPI screen (devicePixelRatio 2): sharp backing store, fonts and right mouse coordinates', async () => {
  const page = await openPage('hidpi', '', { deviceScaleFactor: 2 });
  const css = await page.evaluate(() => [window.innerWidth, window.innerHeight, window.devicePixelRatio,
                                         document.getElementById('canvas').width,
                                         document.getElementById('canvas').height]);
  check(css[2] === 2, 'the page sees devicePixelRatio 2');
  check(css[3] === css[0] * 2 && css[4] === css[1] * 2, `canvas backing store at 2x: ${css}`);
  await frames(page, 2);
  const d = await apiJson(page, 'gt_display_info');
  check(d.framebuffer_scale === 2, 'ImGui framebuffer scale 2: ' + JSON.stringify(d));
  near(d.width, css[0], 0.5, 'ImGui display width in CSS pixels');
  near(d.height, css[1], 0.5, 'ImGui display height in CSS pixels');
  check(d.font_pixels === 26 && d.font_size === 13, 'font rasterized at 2x, laid out at 13 px: ' + JSON.stringify(d));
  await shot(page, '13a-hidpi-welcome.png');
  await drop(page, chrome.name);
  check(await settled(page) === 2, 'loads');
  const rect = await timelineRect(page);
  check(rect.x + rect.w <= css[0] + 1 && rect.y + rect.h <= css[1] + 1, 'timeline rect in CSS pixels: ' +
        JSON.stringify(rect));
  // Wheel zoom keeps the time under the cursor: the mouse position reaches ImGui in the same CSS pixels.
  const r0 = await range(page);
  const x = rect.x + rect.w * 0.7, y = rect.y + Math.min(40, rect.h / 2);
  const tAt = (r, px) => r.start + (px - rect.x) / rect.w * (r.end - r.start);
  await page.mouse.move(x, y);
  for (let i = 0; i < 3; ++i) { await page.mouse.wheel(0, -120); await frames(page, 2); }
  const r1 = await range(page);
  check(r1.end - r1.start < 0.8 * (r0.end - r0.start), 'wheel zooms in');
  near(tAt(r1, x), tAt(r0, x), (r0.end - r0.start) * 0.01, 'the time under the cursor stays under the cursor');
  // A click where the C API says an event is drawn selects that event.
  await api(page, 'gt_fit_all');
  check(await api(page, 'gt_search', 'softmax') === 10, 'softmax found');
  await api(page, 'gt_search_next');
  await frames(page, 3);
  const sel = await apiJson(page, 'gt_selection');
  const pos = await apiJson(page, 'gt_selection_screen_pos');
  check(pos && pos.visible, 'selected event on screen: ' + JSON.stringify(pos));
  await page.keyboard.press('Escape'); await frames(page, 2);
  await page.mouse.click(pos.x, pos.y);
  await frames(page, 3);
  const again = await apiJson(page, 'gt_selection');
  check(again && again.key === sel.key, 'click at CSS coordinates selects the event: ' + JSON.stringify(again));
  await shot(page, '13b-hidpi-trace.png');
  return page;
}, { cost: 12 });

// The slow-DataLoader trace (sampled CPU stacks, tests/data/README.md), on the page its per-trace test already
// opened: shift-drag the steady state (0.3-0.8 s after the start-up gap), the Flame graph tab names the
// sleeping SlowDataset.__getitem__ at its time.sleep line; hover shows the tooltip, a click zooms, a gap's
// graph follows its button.
async function checkFlameGraph(page) {
  const gaps = await apiJson(page, 'gt_summary', 'gaps');
  check(gaps.length > 0, 'idle gaps');
  const t0 = gaps[0].start_ns + gaps[0].duration_ns + 3e8, t1 = t0 + 5e8;
  await api(page, 'gt_set_visible_range', t0 - 5e7, t1 + 5e7);
  await frames(page, 2);
  const rect = await timelineRect(page);
  const r = await range(page);
  const xOf = (t) => rect.x + (t - r.start) / (r.end - r.start) * rect.w, y = rect.y + 30;
  await page.keyboard.down('Shift');
  await page.mouse.move(xOf(t0), y);
  await page.mouse.down();
  for (let i = 1; i <= 4; ++i) { await page.mouse.move(xOf(t0 + (t1 - t0) * i / 4), y); await frames(page, 1); }
  await page.mouse.up();
  await page.keyboard.up('Shift');
  // The fixture's loss warning (samples dropped by a full ring) would cover the graph's corner. A warning also
  // hides itself 20 s after it is shown, which on a loaded machine can fall between the check and the click.
  if (await page.locator('#error-banner').isVisible())
    await page.locator('#error-close').click({ timeout: 2000 }).catch(() => {});
  check(!(await page.locator('#error-banner').isVisible()), 'the loss warning is out of the way');
  check(await api(page, 'gt_show_panel', 'flame') === 1, 'the Flame graph tab opens');
  await frames(page, 3);
  let fg = await apiJson(page, 'gt_flame_graph');
  check(fg.source === 'measured range' && fg.drawn, 'the tab draws the measured range: ' + fg.source);
  near(fg.start, t0, (t1 - t0) * 0.01, 'the graph starts where the drag did');
  near(fg.end, t1, (t1 - t0) * 0.01, 'and ends where it did');
  const main = fg.sampled_threads.find((t) => t.cuda && t.pid === t.tid);
  check(main, 'the main thread is among the sampled threads: ' + JSON.stringify(fg.sampled_threads.slice(0, 3)));
  await api(page, 'gt_flame_filter', main.pid, main.tid);
  await frames(page, 3);
  fg = await apiJson(page, 'gt_flame_graph');
  const hot = fg.nodes.filter((n) => n.function === 'SlowDataset.__getitem__').sort((a, b) => b.samples - a.samples)[0];
  check(hot && hot.share > 0.5 && hot.kind === 'python',
        'most of the main thread\'s samples are in SlowDataset.__getitem__: ' + JSON.stringify(hot));
  const line = Number(hot.location.split(':').pop());
  const source = fs.readFileSync(path.join(repo, 'bench/collector/cpu_gaps.py'), 'utf8').split('\n')[line - 1];
  check(/cpu_gaps\.py:\d+$/.test(hot.location) && /time\.sleep/.test(source),
        `at the time.sleep line: ${hot.location}: ${source}`);
  check(fg.nodes.some((n) => n.parent === hot.node && n.function === 'clock_nanosleep'), 'sleeping in libc under it');
  const box = await apiJson(page, 'gt_flame_node_rect', hot.node);
  check(box && box.w > 100, 'drawn wide: ' + JSON.stringify(box));
  await page.mouse.move(box.x + box.w / 2, box.y + box.h / 2);
  await frames(page, 3);
  check((await apiJson(page, 'gt_flame_graph')).hovered === hot.node, 'hover finds the frame under the mouse');
  await shot(page, '10d-flame-hover.png');
  await page.mouse.click(box.x + box.w / 2, box.y + box.h / 2);
  await frames(page, 3);
  fg = await apiJson(page, 'gt_flame_graph');
  const zoomed = fg.nodes.find((n) => n.node === hot.node);
  check(fg.focus === hot.node && zoomed.x0 === 0 && zoomed.x1 === 1, 'a click zooms into it: ' + JSON.stringify(zoomed));
  await page.mouse.move(box.x + box.w / 2, box.y - 200);  // tooltip off the screenshot
  await frames(page, 2);
  await shot(page, '10e-flame-zoomed.png');
  check(await api(page, 'gt_flame_zoom', 0) === 1, 'reset');
  await api(page, 'gt_flame_filter', -1, 0);
  check(await api(page, 'gt_flame_select_gap', 0) === 1, 'a gap\'s graph');
  fg = await apiJson(page, 'gt_flame_graph');
  check(fg.source === 'idle gap 1' && fg.samples > 1000 && fg.focus === 0, 'the start-up gap: ' + fg.samples);
}

for (const trace of gtraces) {
  test(`.gtrace ${trace.name}: tracks, counts, and a truncated copy`, async () => {
    const page = await openPage('gtrace-' + trace.name);
    await drop(page, trace.name);
    check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
    const tracks = await apiJson(page, 'gt_tracks');
    const names = tracks.map((t) => t.name);
    check(names.some((n) => /stream/i.test(n)), 'a GPU stream track: ' + names.join(' | '));
    const e = trace.expect || {};
    const kernels = await api(page, 'gt_event_count', 'kernel');
    check(kernels > 0, 'kernels counted');
    if (e.kernels != null) check(kernels === e.kernels, `kernel count ${kernels} == ${e.kernels}`);
    for (const [kind, key] of [['memcpy', 'memcpys'], ['memset', 'memsets'], ['api', 'api'], ['nvtx', 'nvtx'],
                               ['counter_samples', 'counter_samples']]) {
      if (e[key] == null) continue;
      const got = await api(page, 'gt_event_count', kind);
      check(got === e[key], `${kind} count ${got} == ${e[key]}`);
    }
    if (e.streamTracks != null) {
      const streams = tracks.filter((t) => /^stream\b/i.test(t.name)).length;
      check(streams === e.streamTracks, `${streams} stream tracks == ${e.streamTracks}: ${names.join(' | ')}`);
    }
    if (e.nvtxAtLeast != null) {
      const nvtx = await api(page, 'gt_event_count', 'nvtx');
      check(nvtx >= e.nvtxAtLeast, `nvtx ${nvtx} >= ${e.nvtxAtLeast}`);
    }
    if (e.namedThreadsAtLeast != null) {
      const apiRows = tracks.filter((t) => /CUDA API/.test(t.name)).length;
      check(apiRows >= e.namedThreadsAtLeast, `${apiRows} threads with CUDA API rows: ${names.join(' | ')}`);
    }
    if (e.streams) for (const s of e.streams)
      check(names.some((n) => new RegExp(`stream ${s}\\b`, 'i').test(n)), `stream ${s} track: ${names.join(' | ')}`);
    // Select the longest kernel through the summary + search, and show its details and flow.
    const rows = await apiJson(page, 'gt_kernel_summary');
    check(rows.length > 0 && rows[0].count > 0, 'kernel summary rows');
    await api(page, 'gt_search', rows[0].name);
    await api(page, 'gt_search_next');
    await frames(page, 2);
    const sel = await apiJson(page, 'gt_selection');
    check(sel && sel.kind === 'Kernel', 'a kernel selected: ' + JSON.stringify(sel && sel.kind));
    await api(page, 'gt_jump_to_partner');
    await api(page, 'gt_jump_to_partner');
    await frames(page, 3);
    await shot(page, `10a-${trace.name}.png`);
    await api(page, 'gt_fit_all');
    await frames(page, 3);
    // Informational: the viewer's own CPU time per frame (inside the wasm), not SwiftShader's frame rate.
    let worst = 0;
    for (let i = 0; i < 5; ++i) { await frames(page, 1); worst = Math.max(worst, await api(page, 'gt_last_frame_ms')); }
    say(`     ${trace.name}: UI frame CPU time (fit-all view) max ${worst.toFixed(2)} ms over 5 frames`);
    await shot(page, `10b-${trace.name}-all.png`);
    if (trace.name === 'cpu_h200_loader.gtrace') await checkFlameGraph(page);

    await drop(page, 'truncated-' + trace.name);
    check(await settled(page) === 2, 'a truncated trace still opens: ' + await apiStr(page, 'gt_last_error'));
    check(await page.locator('#error-banner').isVisible(), 'and the page says what was lost');
    const losses = await apiJson(page, 'gt_losses');
    check(losses.some((l) => /trunc|lost/i.test(l.name)), 'the loss is listed: ' + JSON.stringify(losses));
    const k2 = await api(page, 'gt_event_count', 'kernel');
    check(k2 <= kernels, `no more kernels than the whole file (${k2} <= ${kernels})`);
    await shot(page, `10c-truncated-${trace.name}.png`);
    return page;
  }, { cost: trace.name === 'cpu_h200_loader.gtrace' ? 15 : 0 });
}

// Threads: a cross-origin isolated page runs the threaded build (gtrace-mt.js) and loads on several
// threads; every trace shows the same tracks and counts as on the one-thread page, also when truncated. The
// traces are split over two tests (76 loads in all) so that two workers share them.
const threadParts = 2;
for (let part = 0; part < threadParts; ++part) {
  const title = `isolated page loads on threads: same tracks and counts as one thread (part ${part + 1} of ${threadParts})`;
  test(title, async () => {
    // A small screen: the loads wait for frames drawn by SwiftShader on the CPU, and the counts are what is checked.
    const small = { viewport: { width: 700, height: 420 } };
    const iso = await openPage(`threads-iso-${part + 1}`, '', small, '/iso');
    check(await iso.evaluate(() => window.crossOriginIsolated), 'the /iso/ page is cross-origin isolated');
    const threads = await iso.evaluate(() => window.gtThreads());
    check(threads >= 2, `the threaded build runs with workers: gtThreads() = ${threads}`);
    check(await iso.evaluate(() => !!document.querySelector('script[src="gtrace-mt.js"]')), 'gtrace-mt.js loaded');
    const one = await openPage(`threads-one-${part + 1}`, '?threads=0', small, '/iso');
    check(await one.evaluate(() => window.gtThreads()) === 1, '?threads=0 runs the one-thread build');
    const kinds = ['all', 'kernel', 'memcpy', 'memset', 'api', 'nvtx', 'counter_samples'];
    const summary = async (page) => {
      const out = { tracks: (await apiJson(page, 'gt_tracks')).map((t) => t.name), losses: await apiJson(page, 'gt_losses') };
      for (const k of kinds) out[k] = await api(page, 'gt_event_count', k);
      return JSON.stringify(out);
    };
    const names = gtraces.map((t) => t.name).filter((_, i) => i % threadParts === part);
    for (const name of [...names, ...names.map((n) => 'truncated-' + n)]) {
      // Both pages load at once: each waits for its own frames, and those of the two pages overlap.
      await Promise.all([drop(iso, name), drop(one, name)]);
      const [onThreads, onOne] = await Promise.all([settled(iso), settled(one)]);
      check(onThreads === 2, `${name} loads on threads: ` + await apiStr(iso, 'gt_last_error'));
      check(onOne === 2, `${name} loads on one thread`);
      const a = await summary(iso), b = await summary(one);
      check(a === b, `${name}: threads ${a} vs one thread ${b}`);
    }
    check(iso.gtPageErrors.length === 0, 'no page errors: ' + iso.gtPageErrors.join('; '));
    await shot(iso, `14-threads-${part + 1}.png`);
    return iso;
  }, { cost: 25 });
}

// The counters section sits below the event's fields in the details panel: scroll it down by `wheels` steps,
// then park the mouse where no tooltip covers the panel.
async function scrollDetailsToCounters(page, wheels) {
  await frames(page, 3);
  const vp = page.viewportSize();
  await page.mouse.move(vp.width / 2, vp.height - 60);
  for (let i = 0; i < wheels; ++i) { await page.mouse.wheel(0, 240); await frames(page, 1); }
  await page.mouse.move(vp.width - 20, 70);
  await frames(page, 3);
}

// Kernel counters on the real H200 counters trace: select a profiled kernel, its counters section
// (speed of light, stalls, verdict) and the roofline appear, through the C API and in screenshots.
const countersTrace = gtraces.find((t) => t.name === 'counters_h200.gtrace');
if (countersTrace) {
  test('counters trace: selected kernel shows verdict, SOL and stalls; the roofline plots every kernel', async () => {
    const page = await openPage('counters');
    await drop(page, countersTrace.name);
    check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
    const all = await apiJson(page, 'gt_counters');
    check(all && all.profiled_launches > 0, 'profiled launches: ' + JSON.stringify(all && all.profiled_launches));
    const byName = (re) => all.kernels.find((k) => re.test(k.name));
    const fma = byName(/^fma_chains/), saxpy = byName(/^saxpy/);
    check(fma && saxpy, 'fma_chains and saxpy are profiled: ' + all.kernels.map((k) => k.name).join(' | '));
    check(/compute/i.test(fma.verdict), 'fma verdict says compute-bound: ' + fma.verdict);
    check(/memory/i.test(saxpy.verdict), 'saxpy verdict says memory-bound: ' + saxpy.verdict);
    check(saxpy.memory_side === true && fma.memory_side === false, 'roofline sides: saxpy memory, fma compute');
    check(all.selected === null, 'nothing selected yet');

    await api(page, 'gt_search', 'saxpy');
    await api(page, 'gt_search_next');
    await frames(page, 2);
    const sel = await apiJson(page, 'gt_selection');
    check(sel && sel.kind === 'Kernel' && /saxpy/.test(sel.name), 'saxpy kernel selected: ' + JSON.stringify(sel));
    const c = await apiJson(page, 'gt_counters');
    check(c.selected && /saxpy/.test(c.selected.name), 'counters follow the selection: ' + JSON.stringify(c.selected));
    check(c.selected.memory_pct > 50 && c.selected.memory_pct <= 100, 'saxpy memory SOL % in (50,100]: ' +
          c.selected.memory_pct);
    check(c.selected.memory_pct > c.selected.compute_pct, 'memory SOL above compute SOL');
    check(/long_scoreboard/.test(c.selected.top_stall), 'top stall long_scoreboard: ' + c.selected.top_stall);
    check(await api(page, 'gt_show_panel', 'details') === 1, 'details panel opens');
    await scrollDetailsToCounters(page, 8);
    await shot(page, '12a-counters-details.png');
    check(await api(page, 'gt_show_panel', 'roofline') === 1, 'roofline panel opens');
    await frames(page, 3);
    check(await apiStr(page, 'gt_panel') === 'roofline', 'roofline is the open panel');
    await shot(page, '12b-counters-roofline.png');
    return page;
  });
}

// CUDA graphs: a PyTorch MLP captured with torch.cuda.graph, whose graph launches the counters run
// replayed node by node. Selecting a graph-launched kernel shows that launch's own counters ("graph launch N").
const graphTrace = gtraces.find((t) => t.name === 'counters_torch_graph_h200.gtrace');
if (graphTrace) {
  test('CUDA graph counters: a graph-launched kernel shows its own profiled launch', async () => {
    const page = await openPage('graph');
    await drop(page, graphTrace.name);
    check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
    const all = await apiJson(page, 'gt_counters');
    check(all && all.profiled_launches >= 60, 'profiled launches: ' + JSON.stringify(all && all.profiled_launches));
    await api(page, 'gt_search', 'sgemm_largek');
    const seen = new Set();
    let graph = null;
    for (let i = 0; i < 30 && !graph; ++i) {
      await api(page, 'gt_search_next');
      await frames(page, 1);
      const c = await apiJson(page, 'gt_counters');
      if (!c.selected) continue;
      seen.add(c.selected.launch);
      if (/^graph launch \d+$/.test(c.selected.launch || '')) graph = c.selected;
    }
    check(graph, 'a graph-launched sgemm_largek has its own counters; launches seen: ' + [...seen].join(', '));
    check([...seen].some((l) => /^launch \d+$/.test(l || '')), 'direct launches of it are told apart: ' +
          [...seen].join(', '));
    check(graph && /compute|memory|latency|issue/i.test(graph.verdict), 'verdict: ' + (graph && graph.verdict));
    check(await api(page, 'gt_show_panel', 'details') === 1, 'details panel opens');
    await scrollDetailsToCounters(page, 3);
    await shot(page, '12c-graph-kernel-counters.png');
    return page;
  });
}

// Against the real share server (`gtrace serve`, built natively; GT_GTRACE_BIN): a link opens the stored trace,
// and Share on a dropped file uploads it and yields a link that reopens the same view.
if (process.env.GT_GTRACE_BIN && gtraces.length) {
  test('gtrace serve: ?trace=<id> link, and Share uploads a dropped file', async () => {
    const store = fs.mkdtempSync(path.join(os.tmpdir(), 'gtrace-store-'));
    const trace = gtraces[0];
    const traceFile = path.join(store, trace.name);
    fs.writeFileSync(traceFile, trace.bytes);
    const proc = spawn(process.env.GT_GTRACE_BIN, ['serve', '--bind', '127.0.0.1', '--port', '0', '--web-root',
                                                   webRoot, '--store', path.join(store, 's'), '--open', traceFile]);
    try {
      const link = await serveLink(proc);
      const context = await newContext({ viewport: { width: 1400, height: 800 } });
      const page = await context.newPage();
      page.gtPageErrors = [];
      page.gtLog = [];
      page.gtName = 'serve';
      page.on('console', (m) => page.gtLog.push(`[${m.type()}] ${m.text()}`));
      page.on('pageerror', (e) => page.gtPageErrors.push(e.message));
      await page.goto(link);
      await page.waitForFunction(() => window.gtReady && window.gtReady(), null, { timeout: 30000 });
      check(await settled(page) === 2, 'the link opens the stored trace: ' + await apiStr(page, 'gt_last_error'));
      check(await api(page, 'gt_event_count', 'kernel') > 0, 'kernels shown');
      await shot(page, '11a-serve-link.png');
      // Drop another trace (not on this server), zoom, and share: the page uploads it and builds a link.
      const other = gtraces[gtraces.length - 1];
      await page.evaluate(async (b64) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const dt = new DataTransfer();
        dt.items.add(new File([bytes], 'shared.gtrace'));
        document.getElementById('canvas').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true,
                                                                                cancelable: true }));
      }, Buffer.from(other.bytes).toString('base64'));
      check(await settled(page) === 2, 'dropped trace loads');
      const r = await range(page);
      await api(page, 'gt_set_visible_range', r.start + (r.end - r.start) / 4, r.start + (r.end - r.start) / 2);
      await frames(page, 2);
      const want = await range(page);
      const shared = await page.evaluate(() => window.gtShareLink());
      check(/\?trace=[a-z0-9]+&view=/.test(shared), 'a share link with trace id and view: ' + shared);
      const page2 = await context.newPage();
      page2.gtPageErrors = [];
      await page2.goto(shared);
      await page2.waitForFunction(() => window.gtReady && window.gtReady(), null, { timeout: 30000 });
      check(await settled(page2) === 2, 'the shared link opens');
      await frames(page2, 2);
      const got = await range(page2);
      near(got.start, want.start, (want.end - want.start) * 0.01, 'shared view start');
      near(got.end, want.end, (want.end - want.start) * 0.01, 'shared view end');
      await shot(page2, '11b-serve-shared.png');
      return page;
    } finally {
      proc.kill('SIGTERM');
      fs.rmSync(store, { recursive: true, force: true });
    }
  });
}

// ---- ncu import ----
// Nsight Compute CSV (ncu --csv --page raw): alone, its profiled launches with their counters and roofline; dropped
// with the timeline of the same app, ncu's counters on the timeline's kernels. tests/viewer/data/ncu_handwritten.csv
// is hand-written in ncu's shape; tests/data/ncu/ holds real ncu CSVs from the H200 and the gcollect timeline of
// the same app (tests/data/ncu/README.md).
const ncuHand = addFixture({ name: 'ncu_handwritten.csv',
                             bytes: fs.readFileSync(path.join(repo, 'tests/viewer/data/ncu_handwritten.csv')) });
const ncuNoUnits = addFixture({ name: 'ncu_no_units.csv', bytes: Buffer.from(
  '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",' +
  '"Device","CC","gpu__time_duration.sum"\n"0","1","a","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","5"\n') });
const notNcu = addFixture({ name: 'table.csv', bytes: Buffer.from('name,value\nfoo,1\n') });
const ncuDir = path.join(repo, 'tests/data/ncu');
// The copy workload: copy_float4 and saxpy, two launches each (memory-bound).
const ncuCsv = fs.existsSync(path.join(ncuDir, 'copy.ncu.csv')) ? 'copy.ncu.csv' : null;
const ncuTimeline = fs.existsSync(path.join(ncuDir, 'copy.gtrace')) ? 'copy.gtrace' : null;
if (ncuCsv) addFixture({ name: ncuCsv, bytes: fs.readFileSync(path.join(ncuDir, ncuCsv)) });
if (ncuTimeline) addFixture({ name: ncuTimeline, bytes: fs.readFileSync(path.join(ncuDir, ncuTimeline)) });

test('ncu CSV alone: profiled launches, counters of a selected launch, roofline', async () => {
  const page = await openPage('ncu-alone');
  await drop(page, ncuHand.name);
  check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
  check(await api(page, 'gt_event_count', 'kernel') === 3, 'one kernel event per profiled launch');
  const all = await apiJson(page, 'gt_counters');
  check(all && all.profiled_launches === 3, 'profiled launches: ' + JSON.stringify(all && all.profiled_launches));
  const fma = all.kernels.find((k) => /^fma_kernel/.test(k.name));
  check(fma && /compute/i.test(fma.verdict), 'fma_kernel compute-bound: ' + JSON.stringify(fma));
  near(fma.intensity, 256, 0.01, 'fma_kernel roofline intensity (2 FLOP x 1,048,576 FFMA / 8,192 DRAM bytes)');
  const losses = await apiJson(page, 'gt_losses');
  check(JSON.stringify(losses).includes('ncu_standalone'), 'says the launches are placed back to back');
  await api(page, 'gt_search', 'fma_kernel');
  await api(page, 'gt_search_next');
  await frames(page, 2);
  const c = await apiJson(page, 'gt_counters');
  check(c.selected && /^fma_kernel/.test(c.selected.name), 'counters of the selected launch: ' +
        JSON.stringify(c.selected));
  near(c.selected.compute_pct, 90.25, 0.01, "compute SOL is ncu's sm__throughput");
  check(await api(page, 'gt_show_panel', 'details') === 1, 'details panel opens');
  await scrollDetailsToCounters(page, 4);
  await shot(page, '30a-ncu-alone-counters.png');
  check(await api(page, 'gt_show_panel', 'roofline') === 1, 'roofline panel opens');
  await frames(page, 3);
  await shot(page, '30b-ncu-alone-roofline.png');
  // Bad files: a clear error in the page, not a crash or an empty view.
  await drop(page, ncuNoUnits.name);
  check(await settled(page) === 3, 'an ncu CSV without its units row fails');
  check(/units row/.test(await apiStr(page, 'gt_last_error')), 'says why: ' + await apiStr(page, 'gt_last_error'));
  await drop(page, notNcu.name);
  check(await settled(page) === 3, 'a CSV that is not ncu\'s fails');
  check(/Nsight Compute CSV/.test(await apiStr(page, 'gt_last_error')), 'says what it accepts: ' +
        await apiStr(page, 'gt_last_error'));
  await shot(page, '30e-ncu-bad-csv.png');
  return page;
});

if (ncuCsv && ncuTimeline) {
  test("ncu CSV dropped with its timeline: ncu's counters on the timeline's kernels", async () => {
    const page = await openPage('ncu-joined');
    await drop(page, ncuCsv);  // alone first: its four launches, standalone
    check(await settled(page) === 2, 'the real CSV alone loads: ' + await apiStr(page, 'gt_last_error'));
    check(await api(page, 'gt_event_count', 'kernel') === 4, 'four profiled launches');
    check((await apiJson(page, 'gt_counters')).profiled_launches === 4, 'four with counters');
    await dropMany(page, [ncuTimeline, ncuCsv]);
    check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
    const losses = JSON.stringify(await apiJson(page, 'gt_losses'));
    const paired = /(\d+) of (\d+) profiled launches paired/.exec(losses);
    check(paired && Number(paired[1]) > 0, 'launches paired: ' + losses.slice(0, 600));
    const all = await apiJson(page, 'gt_counters');
    check(all.profiled_launches === Number(paired[1]), `every paired launch profiled: ${all.profiled_launches}`);
    // saxpy: one FFMA per 12 bytes, a roofline point far left of the ridge (copy_float4 has no FLOPs, no point).
    const copy = all.kernels.find((k) => /^saxpy/.test(k.name));
    check(copy && copy.memory_side === true && /memory/i.test(copy.verdict), 'saxpy memory-bound on the roofline: ' +
          JSON.stringify(copy));
    // 2 FLOP per element over 8 bytes read and at most 4 written (part of the writes stays in L2).
    check(copy.intensity > 2 / 12 * 0.99 && copy.intensity < 2 / 8, 'saxpy intensity in (2/12, 2/8): ' + copy.intensity);
    await api(page, 'gt_search', 'saxpy');
    await api(page, 'gt_search_next');
    await frames(page, 2);
    const c = await apiJson(page, 'gt_counters');
    check(c.selected && c.selected.name === copy.name && /launch \d+/.test(c.selected.launch || ''),
          "the selected timeline kernel shows its ncu launch's counters: " + JSON.stringify(c.selected));
    check(c.selected.memory_pct > 30, 'saxpy memory SOL: ' + c.selected.memory_pct);
    check(await api(page, 'gt_show_panel', 'details') === 1, 'details panel opens');
    await scrollDetailsToCounters(page, 6);
    await shot(page, '30c-ncu-joined-counters.png');
    check(await api(page, 'gt_show_panel', 'roofline') === 1, 'roofline panel opens');
    await frames(page, 3);
    await shot(page, '30d-ncu-joined-roofline.png');
    return page;
  });
}

// ---- nsys import ----
// An Nsight Systems SQLite export (tests/data/nsys_small.sqlite, written by scripts/gen_nsys_fixture.py from nsys's
// documented schema) opens like any trace: the expected counts are counted here from the database itself with
// Python's sqlite3, not by gtrace. Bad files (cut short, an SQLite file that is no nsys export) give a clear error.
{
  const { spawnSync } = await import('node:child_process');
  const nsysPath = path.join(repo, 'tests/data/nsys_small.sqlite');
  const count = (file, sql) => {
    const py = 'import sqlite3,sys,json; c=sqlite3.connect(sys.argv[1]); print(json.dumps([c.execute(q).fetchone()[0] for q in sys.argv[2:]]))';
    const r = spawnSync('python3', ['-c', py, file, ...sql], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error('python3 sqlite3: ' + r.stderr);
    return JSON.parse(r.stdout);
  };
  const nsysTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gt-nsys-'));
  const notNsysPath = path.join(nsysTmp, 'notes.sqlite');
  spawnSync('python3', ['-c', 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("CREATE TABLE notes (id INTEGER, text TEXT)"); c.commit()', notNsysPath]);
  if (fs.existsSync(nsysPath)) {
    const nsys = addFixture({ name: 'nsys_small.sqlite', bytes: fs.readFileSync(nsysPath) });
    addFixture({ name: 'nsys-export.bin', bytes: nsys.bytes });  // the format is sniffed, never the name
    addFixture({ name: 'cut-nsys.sqlite', bytes: nsys.bytes.subarray(0, 6000) });
    addFixture({ name: 'notes.sqlite', bytes: fs.readFileSync(notNsysPath) });
    const [kernels, memcpys, memsets, runtime, driver, nvtx, gemms] = count(nsysPath, [
      'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL', 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY',
      'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET', 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME',
      'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_DRIVER', 'SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (34, 59, 60)',
      "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName WHERE s.value = 'gemm_kernel'"]);
    const streams = count(nsysPath, ['SELECT group_concat(s, \',\') FROM (SELECT DISTINCT streamId s FROM ' +
      '(SELECT streamId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY ' +
      'UNION SELECT streamId FROM CUPTI_ACTIVITY_KIND_MEMSET) ORDER BY s)'])[0].split(',');

    test('nsys SQLite export: tracks, counts, launch -> kernel flow', async () => {
      const page = await openPage('nsys');
      await drop(page, 'nsys_small.sqlite');
      check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
      for (const [kind, want] of [['kernel', kernels], ['memcpy', memcpys], ['memset', memsets],
                                  ['api', runtime + driver], ['nvtx', nvtx]]) {
        const got = await api(page, 'gt_event_count', kind);
        check(got === want, `${kind} count ${got} == ${want} (from the database)`);
      }
      const tracks = await apiJson(page, 'gt_tracks');
      const names = tracks.map((t) => t.name);
      for (const s of streams)
        check(names.some((n) => new RegExp(`^stream ${s}$`, 'i').test(n)), `stream ${s} track: ${names.join(' | ')}`);
      check(names.some((n) => /^python3 \(4242\) · CUDA API$/.test(n)), 'named main thread API row: ' + names.join(' | '));
      check(names.some((n) => /^data_loader \(4250\) · Ranges$/.test(n)), 'named loader thread ranges: ' + names.join(' | '));
      const groups = [...new Set(tracks.map((t) => t.group))];
      check(groups.filter((g) => /GPU \d: NVIDIA H200/.test(g)).length === 2, 'two GPUs named from TARGET_INFO_GPU: ' + groups.join(' | '));
      check(groups.some((g) => /python3 \(pid 4242\)/.test(g)), 'process named from PROCESSES: ' + groups.join(' | '));
      const rows = await apiJson(page, 'gt_kernel_summary');
      check(/gemm_kernel/.test(rows[0].name) && rows[0].count === gemms, 'kernel table: ' + JSON.stringify(rows[0]));
      // The longest kernel's launch, by correlation id.
      await api(page, 'gt_search', rows[0].name);
      await api(page, 'gt_search_next');
      await frames(page, 2);
      const sel = await apiJson(page, 'gt_selection');
      check(sel && sel.kind === 'Kernel', 'a kernel selected: ' + JSON.stringify(sel && sel.kind));
      check(await api(page, 'gt_jump_to_partner') === 1, 'the kernel has a launch');
      await frames(page, 3);
      const launch = await apiJson(page, 'gt_selection');
      check(launch && launch.name === 'cudaLaunchKernel', 'its launch is cudaLaunchKernel: ' + JSON.stringify(launch && launch.name));
      await shot(page, '20a-nsys-launch.png');
      await api(page, 'gt_fit_all');
      await frames(page, 3);
      await shot(page, '20b-nsys-all.png');
      // Sniffed from the content: the same export under another name.
      await drop(page, 'nsys-export.bin');
      check(await settled(page) === 2, 'a renamed export opens: ' + await apiStr(page, 'gt_last_error'));
      check(await api(page, 'gt_event_count', 'kernel') === kernels, 'same kernels');
      return page;
    });

    test('nsys SQLite export on the threaded page (cross-origin isolated): the same counts', async () => {
      const page = await openPage('nsys-iso', '', {}, '/iso');
      check(await page.evaluate(() => window.crossOriginIsolated), 'the page is cross-origin isolated');
      await drop(page, 'nsys_small.sqlite');
      check(await settled(page) === 2, 'loads: ' + await apiStr(page, 'gt_last_error'));
      for (const [kind, want] of [['kernel', kernels], ['memcpy', memcpys], ['memset', memsets],
                                  ['api', runtime + driver], ['nvtx', nvtx]])
        check(await api(page, 'gt_event_count', kind) === want, `${kind} count == ${want}`);
      return page;
    });

    test('nsys SQLite: a cut-short file and a non-nsys database give clear errors', async () => {
      const page = await openPage('nsys-bad');
      await drop(page, 'cut-nsys.sqlite');
      check(await settled(page) === 3, 'a cut-short SQLite file fails');
      const text = await page.locator('#error-text').textContent();
      check(/cut-nsys\.sqlite/.test(text) && /SQLite/.test(text), 'the error names the file and SQLite: ' + text);
      await shot(page, '20c-nsys-cut.png');
      await drop(page, 'notes.sqlite');
      check(await settled(page) === 3, 'an SQLite file that is no nsys export fails');
      const text2 = await page.locator('#error-text').textContent();
      check(/not an Nsight Systems export/.test(text2) && /CUPTI_ACTIVITY_KIND_KERNEL/.test(text2),
            'the error names what is missing: ' + text2);
      await shot(page, '20d-nsys-not-nsys.png');
      await drop(page, 'nsys_small.sqlite');
      check(await settled(page) === 2, 'a good export opens afterwards');
      return page;
    });
  }
}

// ---- compare ----
// Two traces on one screen: ?url=A&compare=B, a Shift-drop, gtrace serve --open A --compare B. The rows, the
// alignment and the per-step deltas must be exactly `gtrace diff --json --align` (the same core code); a kernel
// selected in one trace outlines its counterpart in the other.
const gtraceBin = process.env.GT_GTRACE_BIN || path.join(repo, 'build/native/viewer/cli/gtrace');
const cmpA = gtraces.find((t) => t.name === 'h200_inproc_profile.gtrace');
const cmpB = gtraces.find((t) => t.name === 'h200_inproc_restart.gtrace');
// Waits until the comparison is computed (or failed); returns gt_compare_state.
async function compared(page) {
  await page.waitForFunction(() => {
    const s = gtApi.json('gt_compare_state');
    return s && !s.loading && (s.active || s.error) && document.getElementById('loading').hidden;
  }, null, { timeout: 60000 });
  await frames(page, 3);
  return apiJson(page, 'gt_compare_state');
}
// JSON with sorted keys: the viewer's and the CLI's encoders may order keys differently.
const canon = (v) => JSON.stringify(v, (k, x) => (x && typeof x === 'object' && !Array.isArray(x)
  ? Object.fromEntries(Object.keys(x).sort().map((key) => [key, x[key]])) : x));
async function gtraceDiff(a, b, align) {
  const { execFileSync } = await import('node:child_process');
  return JSON.parse(execFileSync(gtraceBin, ['diff', '--json', '--align', align, path.join(dataDir, a.name),
                                             path.join(dataDir, b.name)], { maxBuffer: 64 << 20 }).toString());
}

if (cmpA && cmpB && fs.existsSync(gtraceBin)) {
  test('compare: ?url=A&compare=B rows, alignment and steps are gtrace diff\'s; counterpart outlined both ways', async () => {
    const page = await openPage('compare', `?url=/fixtures/${cmpA.name}&compare=/fixtures/${cmpB.name}`);
    check(await settled(page) === 2, 'A loads');
    let st = await compared(page);
    check(st.active, 'comparing: ' + JSON.stringify(st));
    check(st.a === cmpA.name && st.b === cmpB.name, `labels: ${st.a} vs ${st.b}`);
    const diff = await gtraceDiff(cmpA, cmpB, 'auto');
    check(canon(st.align) === canon(diff.alignment), `alignment ${canon(st.align)} vs diff ${canon(diff.alignment)}`);
    check(st.align.name === 'step' && st.align.ordinal === 2, 'aligned on the 2nd step: ' + st.align.reason);
    check(st.steps.length === 20 && canon(st.steps) === canon(diff.steps), 'per-step rows are the diff\'s');
    const rows = await apiJson(page, 'gt_compare_rows');
    check(rows.length > 10 && canon(rows) === canon(diff.kernels), `kernel rows are the diff's (${rows.length})`);
    check(st.b_tracks_laid_out > 0, 'B\'s tracks are drawn under A\'s');
    check(await api(page, 'gt_show_panel', 'kernels') === 1, 'kernels tab');
    await frames(page, 3);
    await shot(page, '20-compare-kernels.png');

    // A kernel of A's 3rd step -> B's kernel of that name at the same ordinal in B's 3rd step, and back.
    const row = rows.find((r) => r.before && r.after && r.before.count >= 40 && r.after.count >= 8);
    check(row, 'a kernel in both traces');
    const perStepA = row.before.count / 20;
    check(await api(page, 'gt_compare_select_kernel', 'a', row.name, Math.round(2 * perStepA)) === 1, 'select in A');
    await frames(page, 3);
    st = await apiJson(page, 'gt_compare_state');
    check(st.selected && st.selected.side === 'a', 'A\'s kernel selected');
    check(st.counterpart && st.counterpart.side === 'b' && st.counterpart.name === row.name,
          'its counterpart in B: ' + JSON.stringify(st.counterpart));
    const aKey = st.selected.key, bKey = st.counterpart.key;
    let found = -1;
    for (let i = 0; i < row.after.count && found < 0; ++i) {
      await api(page, 'gt_compare_select_kernel', 'b', row.name, i);
      const s2 = await apiJson(page, 'gt_compare_state');
      if (s2.selected && s2.selected.key === bKey) {
        found = i;
        check(s2.counterpart && s2.counterpart.side === 'a' && s2.counterpart.key === aKey,
              'selecting B\'s counterpart outlines the A kernel it came from');
      }
    }
    check(found >= 0, 'B\'s counterpart can be selected');
    // Both on screen: A's groups but the kernel's GPU collapsed, the range spanning both; then a mouse click on
    // B's kernel selects it (B's side of the timeline is live) and outlines A's.
    await api(page, 'gt_compare_select_kernel', 'a', row.name, Math.round(2 * perStepA));
    const tracks = await apiJson(page, 'gt_tracks');
    for (const g of new Set(tracks.map((t) => t.key.split('/')[0])))
      if (g !== aKey.split('/')[0]) await api(page, 'gt_set_collapsed', g, 1);
    st = await apiJson(page, 'gt_compare_state');
    const off = st.align.offset_ns;
    const lo = Math.min(st.selected.start, st.counterpart.start + off), hi = Math.max(st.selected.end, st.counterpart.end + off);
    await api(page, 'gt_set_visible_range', lo - (hi - lo) * 0.6, hi + (hi - lo) * 0.6);
    await frames(page, 4);
    st = await apiJson(page, 'gt_compare_state');
    check(st.selected.visible, 'A\'s kernel on screen: ' + JSON.stringify(st.selected));
    await shot(page, '21-compare-counterpart.png');
    if (st.counterpart.visible) {
      await page.mouse.click(st.counterpart.x, st.counterpart.y);
      await frames(page, 3);
      const s3 = await apiJson(page, 'gt_compare_state');
      check(s3.selected && s3.selected.side === 'b' && s3.selected.key === bKey, 'a click on B\'s kernel selects it');
      check(s3.counterpart && s3.counterpart.key === aKey, 'and outlines A\'s');
      await shot(page, '22-compare-click-b.png');
    } else {
      say('     (B\'s counterpart below the visible rows: ' + JSON.stringify(st.counterpart) + ')');
    }

    // Another alignment, then the share link keeps the pair, the alignment and B's selection.
    check(await api(page, 'gt_compare_align', 'step:3') === 1, 'align on the 3rd step');
    await frames(page, 2);
    st = await apiJson(page, 'gt_compare_state');
    check(st.align.ordinal === 3 && st.align_spec === 'step:3', 'aligned on step 3');
    const d3 = await gtraceDiff(cmpA, cmpB, 'step:3');
    check(st.align.offset_ns === d3.alignment.offset_ns, 'the diff\'s offset for step:3');
    await api(page, 'gt_compare_select_kernel', 'b', row.name, found);
    await api(page, 'gt_show_panel', 'compare');
    await frames(page, 3);
    await shot(page, '23-compare-panel.png');
    const link = await page.evaluate(() => window.gtShareLink());
    check(/[?&]compare=/.test(link) && /view=v2/.test(link), 'the link keeps the pair and a v2 view: ' + link);
    const page2 = await openPage('compare-link', link.slice(link.indexOf('?')));
    check(await settled(page2) === 2, 'the link opens A');
    const st2 = await compared(page2);
    check(st2.active && st2.align_spec === 'step:3' && st2.align.offset_ns === st.align.offset_ns,
          'the link restores the alignment: ' + JSON.stringify(st2.align));
    check(st2.selected && st2.selected.side === 'b' && st2.selected.key === bKey, 'and B\'s selection');
    check(await apiStr(page2, 'gt_panel') === 'compare', 'and the Compare tab');
    await shot(page2, '24-compare-link.png');
    // An old link (v1, one trace) still opens.
    check(await api(page2, 'gt_apply_view_state', 'v1!0!1000!!!!kernels!') === 1, 'v1 view state applies');
    return page;
  }, { cost: 15 });

  test('compare: a trace with itself has zero deltas', async () => {
    const t = gtraces.find((x) => x.name === 'h200_torch_train.gtrace');
    const page = await openPage('compare-self', `?url=/fixtures/${t.name}&compare=/fixtures/${t.name}`);
    check(await settled(page) === 2, 'loads');
    const st = await compared(page);
    check(st.active && st.align.offset_ns === 0, 'aligned with itself: ' + JSON.stringify(st.align));
    check(st.align.name === 'step', 'numbered "step N" ranges are instances of "step"');
    const rows = await apiJson(page, 'gt_compare_rows');
    check(rows.length > 0 && rows.every((r) => r.delta_ns === 0), 'every kernel delta is 0');
    check(st.steps.length >= 40 && st.steps.every((s) => s.delta_ns === 0 && s.kernel_delta_ns === 0), 'every step delta is 0');
    await api(page, 'gt_compare_select_kernel', 'a', rows[0].name, 3);
    await frames(page, 2);
    const s2 = await apiJson(page, 'gt_compare_state');
    check(s2.counterpart && s2.counterpart.key === s2.selected.key, 'each kernel\'s counterpart is itself');
    await shot(page, '25-compare-self.png');
    return page;
  });

  test('compare: a bad second file says why and the first stays; a truncated one opens with a warning', async () => {
    const page = await openPage('compare-bad', `?url=/fixtures/h200_nvtx.gtrace&compare=/fixtures/${garbage.name}`);
    check(await settled(page) === 2, 'A loads');
    const st = await compared(page);
    check(!st.active && /Cannot compare with/.test(st.error), 'an error: ' + st.error);
    check(await api(page, 'gt_load_state') === 2 && await api(page, 'gt_track_count') > 0, 'A stays open');
    check(!(await page.locator('#error-banner').isHidden()), 'the page shows the error');
    check(/Cannot compare with/.test(await page.locator('#error-text').textContent()), 'the banner says so');
    await shot(page, '26-compare-bad.png');
    const page2 = await openPage('compare-cut', `?url=/fixtures/h200_nvtx.gtrace&compare=/fixtures/truncated-h200_torch_train.gtrace`);
    check(await settled(page2) === 2, 'A loads');
    const st2 = await compared(page2);
    check(st2.active && /incomplete/.test(st2.warning), 'truncated B compares, with a warning: ' + st2.warning);
    return page2;
  });

  const counters2 = gtraces.find((t) => t.name === 'counters_h200_cache_all.gtrace');
  if (countersTrace && counters2) {
    test('compare: Shift-drop a second counters trace: speed of light, stalls and roofline side by side', async () => {
      const page = await openPage('compare-counters', `?url=/fixtures/${countersTrace.name}`);
      check(await settled(page) === 2, 'A loads');
      await page.evaluate(async (name) => {
        const blob = await (await fetch('/fixtures/' + encodeURIComponent(name))).blob();
        const dt = new DataTransfer();
        dt.items.add(new File([blob], name));
        document.getElementById('canvas').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true,
                                                                               cancelable: true, shiftKey: true }));
      }, counters2.name);
      const st = await compared(page);
      check(st.active && st.b === counters2.name, 'Shift-drop compares rather than replaces: ' + JSON.stringify(st));
      check(await apiStr(page, 'gt_trace_name') === countersTrace.name, 'A is still the open trace');
      check(st.align.name === null && /start/.test(st.align.reason), 'no common range: on the start, said: ' + st.align.reason);
      const pairs = await apiJson(page, 'gt_compare_counters');
      check(pairs.length > 0 && pairs.every((p) => p.a && p.b), 'kernels profiled in both: ' + pairs.length);
      check(pairs.some((p) => p.a.compute_pct !== null && p.b.memory_pct !== null), 'SOL on both sides');
      await api(page, 'gt_compare_select_kernel', 'a', pairs[0].name, 0);
      await api(page, 'gt_show_panel', 'compare');
      await frames(page, 4);
      await shot(page, '27-compare-counters.png');
      await scrollDetailsToCounters(page, 3);  // down to the two columns of counters
      await shot(page, '27b-compare-counters-side-by-side.png');
      return page;
    });
  }

  test('compare: gtrace serve --open A --compare B prints a link that opens the pair', async () => {
    const store = fs.mkdtempSync(path.join(os.tmpdir(), 'gtrace-store-'));
    const proc = spawn(gtraceBin, ['serve', '--bind', '127.0.0.1', '--port', '0', '--web-root', webRoot, '--store',
                                   path.join(store, 's'), '--open', path.join(dataDir, cmpA.name), '--compare',
                                   path.join(dataDir, cmpB.name)]);
    try {
      const link = await serveLink(proc);
      check(/\?trace=[a-z0-9]+&compare=[a-z0-9]+$/.test(link), 'a link with both ids: ' + link);
      const context = await newContext({ viewport: { width: 1400, height: 800 } });
      const page = await context.newPage();
      page.gtPageErrors = [];
      page.on('pageerror', (e) => page.gtPageErrors.push(e.message));
      await page.goto(link);
      await page.waitForFunction(() => window.gtReady && window.gtReady(), null, { timeout: 30000 });
      check(await settled(page) === 2, 'A opens');
      const st = await compared(page);
      check(st.active && st.align.name === 'step', 'compared, aligned on step: ' + JSON.stringify(st.align));
      await shot(page, '28-compare-serve.png');
      return page;
    } finally {
      proc.kill('SIGTERM');
      fs.rmSync(store, { recursive: true, force: true });
    }
  });
}

// ---- teamui: notes in links, duration histogram, regex filter, CSV export ----
// A trace with several streams and kernel names (tests/data/h200_streams.gtrace, recorded on an H200).
const streams = gtraces.find((f) => f.name === 'h200_streams.gtrace');
if (streams) {
  test('teamui: histogram of a kernel marks the selected instance; a bin click selects in it', async () => {
    const page = await openPage('teamui-histogram', `?url=${encodeURIComponent('/fixtures/' + streams.name)}`);
    check(await settled(page) === 2, 'loads');
    const kernels = await apiJson(page, 'gt_kernel_summary');
    const k = kernels[0];
    const nbins = await api(page, 'gt_open_histogram', k.name);
    check(nbins > 0, 'histogram opens with bins: ' + nbins);
    check(await api(page, 'gt_open_histogram', 'no such kernel') === -1, 'an unknown kernel has none');
    let h = await apiJson(page, 'gt_histogram');
    check(h.open && h.total === k.count, `all ${k.count} instances binned: ${h.total}`);
    check(h.bins.reduce((a, b) => a + b.count, 0) === k.count, 'bin counts add up');
    const last = h.bins.map((b, i) => [b.count, i]).filter(([c]) => c > 0).pop()[1];
    check(await api(page, 'gt_histogram_click_bin', last) === 1, 'bin click');
    await frames(page, 3);
    h = await apiJson(page, 'gt_histogram');
    const sel = await apiJson(page, 'gt_selection');
    check(sel && sel.name === k.name, 'an instance of the kernel is selected: ' + (sel && sel.name));
    check(h.clicked_bin === last && h.selected_bin === last, `the selection is marked in bin ${last}: ` +
          JSON.stringify([h.clicked_bin, h.selected_bin]));
    const dur = sel.end - sel.start;
    check(dur >= h.bins[last].lo && dur < h.bins[last].hi, `its duration ${dur} is in the bin`);
    const csv = await apiStr(page, 'gt_table_csv', 'histogram');
    check(csv.startsWith('bin,lo_ns,hi_ns,count,share\r\n'), 'histogram CSV: ' + csv.slice(0, 40));
    await shot(page, 'teamui-histogram.png');
    return page;
  });

  test('teamui: regex filter hides tracks without a match; a bad regex is a message', async () => {
    const page = await openPage('teamui-filter', `?url=${encodeURIComponent('/fixtures/' + streams.name)}`);
    check(await settled(page) === 2, 'loads');
    const all = await apiJson(page, 'gt_tracks');
    await api(page, 'gt_set_search_mode', 1, 1);
    await api(page, 'gt_search', '^Memcpy (HtoD|DtoH)');
    await frames(page, 3);
    let st = await apiJson(page, 'gt_search_state');
    check(st.regex && st.filter && st.error === '', 'regex + filter on: ' + JSON.stringify(st));
    check(st.matches > 0, 'matches: ' + st.matches);
    check(st.shown_tracks.length > 0 && st.shown_tracks.length < all.length,
          `some tracks kept (${st.shown_tracks.length} of ${all.length})`);
    const tracks = await apiJson(page, 'gt_tracks');
    const hiddenButLaidOut = tracks.filter((t) => !st.shown_tracks.includes(t.name) && t.visible);
    check(hiddenButLaidOut.length === 0, 'no filtered-out track is on screen: ' +
          hiddenButLaidOut.map((t) => t.name).join(', '));
    await shot(page, 'teamui-filter.png');
    await api(page, 'gt_search', 'Memcpy (');
    await frames(page, 2);
    st = await apiJson(page, 'gt_search_state');
    check(/^regex: missing '\)'/.test(st.error), 'bad regex: a message: ' + st.error);
    await shot(page, 'teamui-filter-bad-regex.png');
    await api(page, 'gt_search', '');
    await frames(page, 2);
    st = await apiJson(page, 'gt_search_state');
    check(st.shown_tracks === null, 'cleared: the filter is off');
    return page;
  });

  test('teamui: a table\'s CSV button downloads the file', async () => {
    const page = await openPage('teamui-csv', `?url=${encodeURIComponent('/fixtures/' + streams.name)}`, { acceptDownloads: true });
    check(await settled(page) === 2, 'loads');
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 10000 }),
                                          api(page, 'gt_export_csv', 'kernels')]);
    check(download.suggestedFilename() === 'h200_streams.gtrace.kernels.csv', 'file name: ' + download.suggestedFilename());
    const text = fs.readFileSync(await download.path(), 'utf8');
    const kernels = await apiJson(page, 'gt_kernel_summary');
    const lines = text.split('\r\n').filter((l) => l);
    check(lines[0] === 'name,count,total_ns,avg_ns,min_ns,max_ns,share,first_ns,last_ns', 'header: ' + lines[0]);
    check(lines.length === kernels.length + 1, `one row per kernel name (${lines.length - 1} vs ${kernels.length})`);
    check(await api(page, 'gt_export_csv', 'histogram') === 0, 'no histogram open: refused');
    check(/no histogram/.test(await apiStr(page, 'gt_teamui_error')), 'with a message');
    return page;
  });
}

if (process.env.GT_GTRACE_BIN && streams) {
  test('teamui: a note survives a share round trip through gtrace serve and jumps', async () => {
    const store = fs.mkdtempSync(path.join(os.tmpdir(), 'gtrace-store-'));
    const traceFile = path.join(store, streams.name);
    fs.writeFileSync(traceFile, streams.bytes);
    const proc = spawn(process.env.GT_GTRACE_BIN, ['serve', '--bind', '127.0.0.1', '--port', '0', '--web-root',
                                                   webRoot, '--store', path.join(store, 's'), '--open', traceFile]);
    try {
      const link = await serveLink(proc);
      const newPage = async (name, url) => {
        const context = await newContext({ viewport: { width: 1400, height: 800 } });
        const page = await context.newPage();
        page.gtPageErrors = [];
        page.gtLog = [];
        page.gtName = name;
        page.on('console', (m) => page.gtLog.push(`[${m.type()}] ${m.text()}`));
        page.on('pageerror', (e) => page.gtPageErrors.push(e.message));
        await page.goto(url);
        await page.waitForFunction(() => window.gtReady && window.gtReady(), null, { timeout: 30000 });
        check(await settled(page) === 2, name + ' opens: ' + await apiStr(page, 'gt_last_error'));
        return page;
      };
      const page = await newPage('teamui-note-a', link);
      // Select the kernel table's first kernel's first instance, then add a note through the editor: typed,
      // Enter adds it (what right-click → "Add note to …" opens).
      const k = (await apiJson(page, 'gt_kernel_summary'))[0];
      await api(page, 'gt_kernel_row_click', k.name);
      await api(page, 'gt_search_next');
      await frames(page, 2);
      const sel = await apiJson(page, 'gt_selection');
      check(sel && sel.name === k.name, 'an instance selected');
      check(await api(page, 'gt_begin_note', 1) === 1, 'the note editor opens on the selection');
      await frames(page, 3);
      const text = 'this kernel waits for the copy <b>not bold</b> & "quoted"';
      await page.keyboard.type(text);
      await frames(page, 2 * text.length);  // ImGui takes queued key events a few per frame
      await shot(page, 'teamui-note-editor.png');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => JSON.parse(gtApi.str('gt_notes')).length > 0, null, { timeout: 10000 });
      let notes = await apiJson(page, 'gt_notes');
      check(notes.length === 1 && notes[0].text === text, 'the typed note is listed: ' + JSON.stringify(notes));
      check(notes[0].event === sel.key && notes[0].target === k.name, 'anchored to the selected event');
      // Over the limit: refused with a message, nothing added.
      check(await api(page, 'gt_add_note', 0, 1, '', 'x'.repeat(1001)) === 0, 'a 1001-byte note is refused');
      check(/1001 bytes.*limit is 1000/.test(await apiStr(page, 'gt_teamui_error')), 'with the limit named');
      check(await api(page, 'gt_select', '') === 1, 'selection cleared before sharing');
      const shared = await page.evaluate(() => window.gtShareLink());
      check(/&view=v1.*n1/.test(shared), 'the link carries the note: ' + shared);
      const page2 = await newPage('teamui-note-b', shared);
      await frames(page2, 2);
      notes = await apiJson(page2, 'gt_notes');
      check(notes.length === 1 && notes[0].text === text && !notes[0].orphaned && notes[0].target === k.name,
            'the fresh page lists the note: ' + JSON.stringify(notes));
      check(await api(page2, 'gt_jump_to_note', 0) === 1, 'jump');
      await frames(page2, 3);
      const sel2 = await apiJson(page2, 'gt_selection');
      check(sel2 && sel2.key === sel.key, 'the jump selects the noted event');
      const r = await range(page2);
      near((r.start + r.end) / 2, (sel.start + sel.end) / 2, (r.end - r.start) * 0.02, 'and centres it');
      check(await apiStr(page2, 'gt_panel') === 'notes', 'the Notes tab is shown');
      await shot(page2, 'teamui-note-shared.png');
      // The note is text, not markup: nothing of it became DOM.
      check(await page2.evaluate(() => document.querySelectorAll('b').length) === 0, 'no <b> element in the page');
      // Long notes: the view is saved on the server and the link names it (&viewid=).
      const long = 'rank 1 waits on the all-reduce; '.repeat(30);
      for (let i = 0; i < 4; ++i)
        check(await api(page, 'gt_add_note', -1, -1, sel.key, long + i) === 1, 'a long note: ' + await apiStr(page, 'gt_teamui_error'));
      const sharedLong = await page.evaluate(() => window.gtShareLink());
      check(/&viewid=[a-z2-7]{32}$/.test(sharedLong) && !/&view=/.test(sharedLong), 'a saved-view link: ' + sharedLong);
      const page3 = await newPage('teamui-note-c', sharedLong);
      await page3.waitForFunction(() => JSON.parse(gtApi.str('gt_notes')).length === 5, null, { timeout: 10000 });
      notes = await apiJson(page3, 'gt_notes');
      check(notes[4].text === long + 3 && notes[0].text === text, 'all five notes arrive in order');
      await api(page3, 'gt_jump_to_note', 4);
      await frames(page3, 3);
      await shot(page3, 'teamui-note-saved-view.png');
      await page3.context().close();
      await page.context().close();
      return page2;
    } finally {
      proc.kill('SIGTERM');
      fs.rmSync(store, { recursive: true, force: true });
    }
  }, { cost: 20 });
}

// ---- runner ----------------------------------------------------------------------------------------------------
let passed = 0, failed = 0;
async function runTest(t, browser) {
  const run = { browser, contexts: [], lines: [] };
  const started = Date.now();
  const out = [];
  try {
    const page = await running.run(run, t.fn);
    if (page && page.gtPageErrors.length) throw new Failure('page errors: ' + page.gtPageErrors.join('; '));
    passed++;
    out.push(`ok   ${t.name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (e) {
    failed++;
    out.push(`FAIL ${t.name}: ${e instanceof Failure ? e.message : e.stack}`);
    for (const ctx of run.contexts) for (const p of ctx.pages()) {
      try { await p.screenshot({ path: path.join(outDir, `FAILED-${t.name.replace(/\W+/g, '_')}.png`) }); }
      catch (_) { /* page already gone */ }
      if (p.gtLog) out.push('  console:\n    ' + p.gtLog.slice(-20).join('\n    '));
    }
  } finally {
    for (const ctx of run.contexts) {
      for (const p of ctx.pages())
        if (p.gtLog) fs.writeFileSync(path.join(outDir, `${p.gtName}.console.log`), p.gtLog.join('\n') + '\n');
      await ctx.close().catch(() => {});
    }
  }
  console.log([...out, ...run.lines].join('\n'));
}
// The longest tests start first, so that no worker is left with one at the end while the other idles.
const queue = tests.filter((t) => !only || t.name.includes(only)).sort((a, b) => (b.cost || 0) - (a.cost || 0));
const workers = Math.min(jobs, queue.length);
const started = Date.now();
await Promise.all(Array.from({ length: workers }, async () => {
  const browser = await launchBrowser();
  try {
    for (let t; (t = queue.shift());) await runTest(t, browser);
  } finally {
    await browser.close();
  }
}));
server.close();
console.log(`${passed} passed, ${failed} failed (${((Date.now() - started) / 1000).toFixed(1)} s, ${workers} at a time)`);
process.exit(failed ? 1 : 0);
