// Issue 17's first frame: how long a link to a stored trace (whose index exists) takes to show its first view
// in headless chromium: from navigation until every tile of the first view is answered (the page draws each
// answer in the next frame). Fresh browser contexts, one after another; the server has opened the index. The
// first run then zooms and pans for 120 frames and reports the UI's CPU time per frame.
//   node bench/server/first_frame.mjs GTRACE WEB_ROOT STORE TRACE_ID [RUNS]
// STORE is a `gtrace serve --store` folder that holds TRACE_ID and its index (e.g. the one
// `bench_remote_tiles.mjs ... --keep` leaves). Prints one JSON line per run and the median.
import { launchBrowser, startServe, stopServe } from '../../web/tests/harness.mjs';

const [gtrace, webRoot, store, id, runsArg] = process.argv.slice(2);
if (!gtrace || !webRoot || !store || !id) {
  console.error('usage: node bench/server/first_frame.mjs GTRACE WEB_ROOT STORE TRACE_ID [RUNS]');
  process.exit(64);
}
const runs = Number(runsArg || 5);
const serve = await startServe(gtrace, ['--store', store, '--web-root', webRoot]);
const browser = await launchBrowser([]);
const times = [];
try {
  // The index opened (a link to a trace the server has not opened yet also waits for that: `open` below).
  const t0 = performance.now();
  while ((await fetch(`${serve.base}/api/t/${id}/meta`)).status !== 200) await new Promise((r) => setTimeout(r, 20));
  console.log(JSON.stringify({ open_s: (performance.now() - t0) / 1000 }));
  for (let i = 0; i < runs; ++i) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 800 } });
    const page = await context.newPage();
    const start = performance.now();
    const at = () => (performance.now() - start) / 1000;
    const mark = {};
    page.on('requestfinished', (r) => {
      if (new URL(r.url()).pathname.endsWith('/meta') && mark.meta === undefined) mark.meta = at();
    });
    await page.goto(`${serve.base}/?trace=${id}&remote=1`);
    await page.waitForFunction(() => window.gtReady && window.gtReady(), null, { timeout: 60000, polling: 10 });
    mark.page_ready = at();
    await page.waitForFunction(() => {
      const s = JSON.parse(gtApi.str('gt_remote_stats'));
      return s.remote && s.tiles > 0 && s.in_flight === 0;
    }, null, { timeout: 120000, polling: 10 });
    mark.first_frame = at();
    mark.tiles = JSON.parse(await page.evaluate(() => gtApi.str('gt_remote_stats'))).tiles;
    times.push(mark.first_frame);
    if (i === 0) {
      // Frames while zooming by halves towards a point and panning a quarter screen, the tiles arriving as
      // they come (the UI never waits for them): the CPU time of each UI frame (gt_last_frame_ms).
      const frame = await page.evaluate(async () => {
        const ms = [];
        const next = () => new Promise((r) => requestAnimationFrame(() => r()));
        const t0 = gtApi.num('gt_visible_range_start'), t1 = gtApi.num('gt_visible_range_end');
        let a = t0, b = t1;
        for (let step = 0; step < 40; ++step) {
          const w = (b - a) / (step % 4 === 3 ? 1 : 2), mid = a + (b - a) * 0.37;
          if (step % 4 === 3) a += w / 4, b += w / 4;
          else a = mid - w / 2, b = mid + w / 2;
          gtApi.num('gt_set_visible_range', a, b);
          for (let f = 0; f < 3; ++f) { await next(); ms.push(gtApi.num('gt_last_frame_ms')); }
        }
        return ms;
      });
      frame.sort((x, y) => x - y);
      mark.frame_ms = { frames: frame.length, p50: frame[Math.floor(frame.length / 2)],
                        p95: frame[Math.floor(frame.length * 0.95)], max: frame.at(-1) };
    }
    console.log(JSON.stringify(mark));
    await context.close();
  }
} finally {
  await browser.close();
  await stopServe(serve);
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ runs, first_frame_median_s: times[Math.floor(times.length / 2)], max_s: times.at(-1) }));
