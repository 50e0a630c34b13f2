// What the browser tests and the serving benches share: headless chromium as they all run it (Debian's
// chromium, software GL through SwiftShader), and `gtrace serve` started on a free port with its printed
// address or link awaited. Used by web/tests/e2e.mjs, tests/server/*_e2e.mjs and bench/server/*.mjs.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createRequire } from 'node:module';

const here = path.dirname(new URL(import.meta.url).pathname);
export const repoRoot = path.resolve(here, '../..');
// playwright-core lives in web/tests/node_modules (scripts/setup.sh), wherever the importing script is.
const require = createRequire(path.join(here, 'package.json'));
export const { chromium } = require('playwright-core');

// playwright adds --headless and a fresh temporary --user-data-dir.
const kChromiumArgs = ['--no-sandbox', '--disable-gpu', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
                       '--disable-quic', '--no-first-run', '--disable-background-networking',
                       '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

export function launchBrowser(extraArgs = []) {
  return chromium.launch({
    executablePath: process.env.GT_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [...kChromiumArgs, ...extraArgs],
  });
}

// The first capture of `pattern` in the server's stdout; rejects when the server exits first or prints no
// match within `timeoutMs` (with what it did print).
export function awaitServeOutput(proc, pattern, timeoutMs = 15000) {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`gtrace serve printed no ${pattern} in ${timeoutMs} ms: ${out}`)),
                             timeoutMs);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = pattern.exec(out);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`gtrace serve exited with ${code}: ${out}`)); });
  });
}

// The link `gtrace serve --open ...` prints.
export const serveLink = (proc) => awaitServeOutput(proc, /open: (\S+)/, 20000);

// `gtrace serve ARGS...` on a free port; the child process, with its address in `.base`. drainStderr: the
// server's log is read and dropped (a chatty server never blocks on a full pipe) instead of shown.
export async function startServe(gtrace, args, { drainStderr = false } = {}) {
  const p = spawn(gtrace, ['serve', '--port', '0', ...args],
                  { stdio: ['ignore', 'pipe', drainStderr ? 'pipe' : 'inherit'] });
  if (drainStderr) p.stderr.on('data', () => {});
  p.base = await awaitServeOutput(p, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
  return p;
}

export async function stopServe(p) {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const done = new Promise((r) => p.on('exit', r));
  p.kill('SIGTERM');
  await done;
}
