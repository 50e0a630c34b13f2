// Page glue for the gtrace viewer: gets trace bytes into the wasm (drag-and-drop, file picker, ?url=, ?trace=;
// several dropped files or ?url= parameters open merged, as one job),
// shows download/parse progress and errors, and applies a shared view (&view=) once the trace is loaded. A second
// trace to compare with (File > Compare with..., a drop with Shift held, &compare=) opens under the first.
// Parsing, formats (gzip, Chrome JSON, Kineto, .gtrace) and everything drawn in the canvas live in the wasm.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const canvas = $('canvas');
  const params = new URLSearchParams(window.location.search);

  // ---- progress overlay and error banner --------------------------------------------------------------------
  function showProgress(label, fraction) {
    $('loading').hidden = false;
    $('loading-label').textContent = label;
    const pct = fraction == null ? '' : Math.max(0, Math.min(100, fraction * 100)).toFixed(0) + '%';
    $('loading-pct').textContent = pct;
    $('progress-fill').style.width = fraction == null ? '100%' : pct;
  }
  function hideProgress() { $('loading').hidden = true; }
  let warningTimer = 0;
  // Errors (nothing could be opened) sit at the top until dismissed. Warnings (a partly damaged trace is shown)
  // sit in the bottom-right corner, clear of the toolbar and ruler, and fade after a while: the menu bar's
  // "Data loss!" and the Data loss panel keep the details.
  function showError(message, warning = false) {
    clearTimeout(warningTimer);
    $('error-text').textContent = message;
    $('error-banner').classList.toggle('warning', warning);
    $('error-banner').hidden = false;
    if (warning) warningTimer = setTimeout(hideError, 20000);
    console.warn('gtrace ' + (warning ? 'warning: ' : 'error: ') + message);
  }
  function hideError() { clearTimeout(warningTimer); $('error-banner').hidden = true; }
  $('error-close').addEventListener('click', hideError);
  const count = (n) => n >= 1e6 ? (n / 1e6).toFixed(1) + ' M' : n >= 1e3 ? (n / 1e3).toFixed(0) + ' k' : String(n);
  const mb = (n) => (n / (1024 * 1024)).toFixed(n < 10 * 1024 * 1024 ? 1 : 0) + ' MB';

  // ---- the wasm module ----------------------------------------------------------------------------------------
  let ready = false;
  let pending = null;  // {name, bytes} or {files: [{name, bytes}]} handed over before the runtime was up
  let pendingView = params.get('view');

  window.Module = {
    canvas: canvas,
    print: (text) => console.log(text),
    printErr: (text) => console.warn(text),
    // postRun, not onRuntimeInitialized: main() (which creates the viewer) has run by then.
    postRun: [() => {
      ready = true;
      $('boot').hidden = true;
      fitCanvas();
      if (pending) {
        const p = pending;
        pending = null;
        if (p.files) openMany(p.files);
        else if (p.remote) openRemote(p.remote);
        else openBytes(p.name, p.bytes);
      }
    }],
    onAbort: (what) => showError('The viewer stopped: ' + what + '. Reload the page to continue.'),
  };

  // Threads need SharedArrayBuffer, which only a cross-origin isolated page has (`gtrace serve` sends the
  // COOP/COEP headers for it): there the threaded build loads traces on up to 16 threads, anywhere else (or
  // with ?threads=0, or when the page was built without it) the one-thread build runs. The worker count is
  // fixed before the runtime starts: the viewer never waits for a worker to spin up.
  const threaded = window.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function' &&
                   params.get('threads') !== '0';
  function loadViewer(name) {
    const script = document.createElement('script');
    script.src = name;
    script.async = true;
    script.onerror = () => {
      if (name === 'gtrace-mt.js') { delete Module.gtPoolSize; loadViewer('gtrace.js'); return; }
      showError('Cannot load the viewer (' + name + '). Reload the page to try again.');
    };
    document.body.appendChild(script);
  }
  if (threaded) Module.gtPoolSize = Math.max(2, Math.min(navigator.hardwareConcurrency || 4, 16));
  loadViewer(threaded ? 'gtrace-mt.js' : 'gtrace.js');
  window.gtThreads = () => (ready && Module.gtPoolSize) || 1;

  // The canvas backing store follows the window at the screen's pixel density (devicePixelRatio: 2 on a
  // Retina/hi-DPI screen, and it changes with browser zoom), so nothing is upscaled and blurred. The CSS size
  // stays the window (style.css); the wasm works in CSS pixels and renders at the ratio
  // (viewer/platform/platform_web.cc).
  function fitCanvas() {
    if (!ready || !Module.setCanvasSize) return;
    wake();  // a resized canvas is blank until drawn
    const dpr = window.devicePixelRatio || 1;
    Module.setCanvasSize(Math.max(1, Math.round(window.innerWidth * dpr)),
                         Math.max(1, Math.round(window.innerHeight * dpr)));
  }
  window.addEventListener('resize', fitCanvas);
  // Moving the window to a screen of another density changes devicePixelRatio without a resize event.
  (function watchDensity() {
    if (!window.matchMedia) return;
    const query = window.matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`);
    const onChange = () => { fitCanvas(); watchDensity(); };
    if (query.addEventListener) query.addEventListener('change', onChange, { once: true });
  })();

  // ---- frames -------------------------------------------------------------------------------------------------
  // The canvas is redrawn for a second after any input or C API call (ImGui takes a few frames to settle:
  // hover, tooltips, windows sizing themselves) and while the viewer has work of its own (a load, remote
  // answers, a held key: platform::Callbacks::wants_frames); otherwise it keeps its image and the animation
  // frame returns at once (viewer/platform/platform_web.cc). An idle page drawing every frame took a core
  // under a software renderer, and a laptop's GPU and battery elsewhere.
  const kAwakeMs = 1000;
  function wake() { Module.gtAwakeUntil = performance.now() + kAwakeMs; }
  // Pointer events come with every mouse, pen and touch event.
  for (const type of ['pointermove', 'pointerdown', 'pointerup', 'pointercancel', 'pointerout', 'wheel', 'keydown',
                      'keyup', 'resize', 'focus', 'blur', 'visibilitychange', 'dragenter', 'dragover', 'drop'])
    window.addEventListener(type, wake, { capture: true, passive: true });
  wake();

  // The exported C API (viewer/ui/capi.cc), typed once. JSON-returning functions are parsed here. A call may
  // change what the canvas shows: it wakes the frames.
  const api = {
    call(name, ret, args) {
      const types = args.map((a) => (typeof a === 'number' ? 'number' : 'string'));
      wake();
      return Module.ccall(name, ret, types, args);
    },
    num(name, ...args) { return api.call(name, 'number', args); },
    str(name, ...args) { return api.call(name, 'string', args); },
    json(name, ...args) { const s = api.str(name, ...args); return s ? JSON.parse(s) : null; },
  };
  window.gtApi = api;  // for the browser tests and the console
  window.gtReady = () => ready;

  // Where the open trace came from, for share links: {traceId} | {url} | {file}.
  let source = null;

  // ---- loading ------------------------------------------------------------------------------------------------
  let loadSerial = 0;  // a newer load supersedes an older one still downloading

  // Other threads may have grown the memory since this thread's views were made: view it afresh.
  const heapView = () => (Module.wasmMemory ? new Uint8Array(Module.wasmMemory.buffer) : Module.HEAPU8);

  // When the last single-file load started, its bytes were in the wasm heap, and it was on screen
  // (performance.now() ms), for bench/viewer/bench_page_load.mjs; gt_load_timings has the wasm's side.
  window.gtLastLoad = null;
  function markLoad(what) { if (window.gtLastLoad) window.gtLastLoad[what] = performance.now(); }

  function openBytes(name, bytes) {
    if (!ready) { pending = { name, bytes }; showProgress('Starting the viewer…', null); return; }
    // Copy straight into the wasm heap: the viewer takes ownership of the buffer (no MEMFS copy).
    const ptr = Module._malloc(Math.max(1, bytes.length));
    if (!ptr) { showError(`Cannot open ${name}: not enough memory for ${mb(bytes.length)}.`); hideProgress(); return; }
    heapView().set(bytes, ptr);
    openHeap(name, ptr, bytes.length);
  }

  // Opens `size` bytes at `ptr` (from Module._malloc; the viewer takes ownership).
  function openHeap(name, ptr, size) {
    remoteBase = null;  // a trace in memory replaces a remote one
    window.gtRemote = false;
    hideError();
    markLoad('copied');
    const rc = api.num('gt_open_buffer', name, ptr, size);
    if (rc !== 0) { hideProgress(); showError(api.str('gt_last_error') || `Cannot open ${name}.`); return; }
    pollParse(name, false, loadSerial);
  }

  // Several files of one job (one per rank or per node), opened as one trace: the wasm merges them onto one
  // clock (viewer/core merge.h) in one step, so the overlay says so before that step keeps the page busy.
  function openMany(files) {  // [{name, bytes}]
    if (!ready) { pending = { files }; showProgress('Starting the viewer…', null); return; }
    hideError();
    const heap = () => (Module.wasmMemory ? new Uint8Array(Module.wasmMemory.buffer) : Module.HEAPU8);
    for (const f of files) {
      const ptr = Module._malloc(Math.max(1, f.bytes.length));
      if (!ptr) {
        api.call('gt_clear_staged', null, []);  // the files staged so far are freed, not merged next time
        showError(`Cannot open ${f.name}: not enough memory for ${mb(f.bytes.length)}.`);
        hideProgress();
        return;
      }
      heap().set(f.bytes, ptr);  // the viewer takes ownership of the buffer
      api.num('gt_stage_buffer', f.name, ptr, f.bytes.length);
    }
    const label = `${files.length} files`;
    showProgress(`Merging ${label} onto one clock…`, null);
    const rc = api.num('gt_open_staged');
    if (rc !== 0) { hideProgress(); showError(api.str('gt_last_error') || `Cannot open ${label}.`); return; }
    pollParse(label, true, loadSerial);
  }

  // `serial`: the load this poll follows. A later drop cancels the load in the wasm (the new file wins) and
  // starts its own poll; this one then stops without a word, so the overlay names the new file only.
  function pollParse(name, merging, serial) {
    if (serial !== loadSerial) return;
    const state = api.num('gt_load_state');  // 0 idle, 1 loading, 2 loaded, 3 failed
    if (state === 1) {
      if (window.gtRemote) showProgress(`Opening ${name} on the server (the trace stays there)…`, null);
      else if (merging) showProgress(`Merging ${name} onto one clock…`, null);
      else if (api.num('gt_load_building')) showProgress(`Building the timeline of ${name} (${count(api.num('gt_load_records'))} records)…`, null);
      else showProgress(`Parsing ${name}… ${count(api.num('gt_load_records'))} records`, api.num('gt_load_progress'));
      requestAnimationFrame(() => pollParse(name, merging, serial));
      return;
    }
    hideProgress();
    markLoad('done');
    if (state === 3) { showError(api.str('gt_last_error') || `Cannot open ${name}.`); return; }
    const warning = api.str('gt_load_warning');  // partly damaged: shown, not fatal
    if (warning) showError(warning, true);
    if (pendingView) { api.num('gt_apply_view_state', pendingView); pendingView = null; }
    canvas.focus();
    if (pendingCompare) { const c = pendingCompare; pendingCompare = null; c(); }
  }

  async function readStream(stream, total, label, serial) {
    const reader = stream.getReader();
    const parts = [];
    let received = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (serial !== loadSerial) { reader.cancel(); return null; }
      if (done) break;
      parts.push(value);
      received += value.length;
      showProgress(`${label} ${mb(received)}${total ? ' of ' + mb(total) : ''}`, total ? received / total : null);
    }
    const bytes = new Uint8Array(received);
    let offset = 0;
    for (const p of parts) { bytes.set(p, offset); offset += p.length; }
    return bytes;
  }

  // Reads a stream of exactly `size` bytes into a buffer of the wasm heap: one copy of the file, where
  // collecting the pieces, joining them and copying the whole into the heap made three (and held the file
  // twice in JavaScript memory besides). Returns the heap pointer, or 0 when superseded (the buffer is freed).
  async function readStreamIntoHeap(stream, size, label, ptr, serial) {
    const reader = stream.getReader();
    let received = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (serial !== loadSerial) { reader.cancel(); Module._free(ptr); return 0; }
        if (done) break;
        if (received + value.length > size) throw new Error('the file grew while it was read');
        heapView().set(value, ptr + received);
        received += value.length;
        showProgress(`${label} ${mb(received)} of ${mb(size)}`, received / size);
      }
      if (received !== size) throw new Error('the file shrank while it was read');
    } catch (e) {
      Module._free(ptr);
      throw e;
    }
    return ptr;
  }

  // The canvas is not redrawn while a local file is read (a second or less; the progress overlay still moves):
  // under a software renderer each drawn frame cost as much CPU as the read, on the same cores, and reading
  // 62 MB took 0.8 s with frames against 0.17 s without (bench/viewer/bench_page_load.mjs). Downloads keep
  // their frames: they are as slow as the network, and the open trace stays usable meanwhile.
  let framesPaused = 0;
  async function withoutFrames(read) {
    if (framesPaused++ === 0) Module.pauseMainLoop();
    try {
      return await read();
    } finally {
      if (--framesPaused === 0) Module.resumeMainLoop();
    }
  }

  async function openFile(file) {
    const serial = ++loadSerial;
    window.gtLastLoad = { start: performance.now(), bytes: file.size };
    hideError();
    try {
      showProgress(`Reading ${file.name}`, 0);
      const label = `Reading ${file.name}`;
      if (ready && file.stream && file.size > 0) {
        const ptr = Module._malloc(file.size);
        if (!ptr) { showError(`Cannot open ${file.name}: not enough memory for ${mb(file.size)}.`); hideProgress(); return; }
        if (await withoutFrames(() => readStreamIntoHeap(file.stream(), file.size, label, ptr, serial))) {
          source = { file };
          openHeap(file.name, ptr, file.size);
        }
        return;
      }
      const bytes = file.stream ? await readStream(file.stream(), file.size, label, serial)
                                : new Uint8Array(await file.arrayBuffer());
      if (bytes) { source = { file }; openBytes(file.name, bytes); }
    } catch (e) {
      hideProgress();
      showError(`Cannot read ${file.name}: ${e.message || e}`);
    }
  }

  // Several files at once (a drop of 2+ files, several ?url=): read them all, then merge.
  async function openFiles(files) {
    const serial = ++loadSerial;
    hideError();
    const read = [];
    try {
      for (const file of files) {
        const label = `Reading ${file.name} (${read.length + 1} of ${files.length})`;
        showProgress(label, 0);
        const bytes = file.stream ? await readStream(file.stream(), file.size, label, serial)
                                  : new Uint8Array(await file.arrayBuffer());
        if (!bytes) return;  // superseded by a newer load
        read.push({ name: file.name, bytes });
      }
    } catch (e) {
      hideProgress();
      showError(`Cannot read ${files[read.length].name}: ${e.message || e}`);
      return;
    }
    source = null;  // several local files: no share link (one upload is one trace)
    openMany(read);
  }

  async function openUrls(urls) {
    const serial = ++loadSerial;
    hideError();
    const read = [];
    for (const url of urls) {
      const name = decodeURIComponent(url.split('?')[0].split('/').pop() || url);
      try {
        const response = await fetch(url);
        if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
        const label = `Downloading ${name} (${read.length + 1} of ${urls.length})`;
        const total = response.headers.get('Content-Encoding') ? 0 : Number(response.headers.get('Content-Length')) || 0;
        const bytes = response.body ? await readStream(response.body, total, label, serial)
                                    : new Uint8Array(await response.arrayBuffer());
        if (!bytes) return;
        read.push({ name, bytes });
      } catch (e) {
        if (serial !== loadSerial) return;
        hideProgress();
        showError(`Cannot download ${name} from ${url}: ${e.message || e}`);
        return;
      }
    }
    source = null;
    openMany(read);
  }
  window.gtOpenUrls = openUrls;

  async function openUrl(url, name, traceId) {
    const serial = ++loadSerial;
    hideError();
    name = name || decodeURIComponent(url.split('?')[0].split('/').pop() || url);
    try {
      showProgress(`Downloading ${name}`, null);
      const response = await fetch(url);
      if (!response.ok) {
        let detail = '';
        try { detail = (await response.text()).slice(0, 300); } catch (e) { /* body unreadable: status is enough */ }
        throw new Error(`HTTP ${response.status} ${response.statusText}${detail ? ': ' + detail : ''}`);
      }
      // A stored trace (?trace=<id>) keeps its file name in Content-Disposition when the server sends one.
      const disposition = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(response.headers.get('Content-Disposition') || '');
      if (disposition) name = decodeURIComponent(disposition[1]);
      const total = Number(response.headers.get('Content-Length')) || 0;
      // A Content-Encoding'd response reports the compressed length: show bytes without a fraction then.
      const encoded = response.headers.get('Content-Encoding');
      const bytes = response.body ? await readStream(response.body, encoded ? 0 : total, `Downloading ${name}`, serial)
                                  : new Uint8Array(await response.arrayBuffer());
      if (bytes) { source = traceId ? { traceId } : { url }; openBytes(name, bytes); }
    } catch (e) {
      if (serial !== loadSerial) return;
      hideProgress();
      showError(`Cannot download ${name} from ${url}: ${e.message || e}`);
    }
  }
  window.gtOpenUrl = openUrl;

  // ---- remote traces (issue 17): a large stored trace stays on the server ---------------------------------------
  // ?trace=<id> asks the server's /api/t/<id>/meta first: a trace over kRemoteEvents events (or over
  // kRemoteBytes) is not downloaded; the viewer asks for tiles of what it shows, an event's details on a
  // click, the kernel and summary tables (viewer/core remote.h). &remote=1 forces it, &remote=0 downloads.
  // The viewer hands out requests through Module.gtRemoteFetch; answers go back with gt_remote_answer. Panels
  // that scan events (the list of search matches, notes, collectives) offer gtDownloadRemote, which opens the
  // whole trace.
  const kRemoteEvents = 20e6;
  const kRemoteBytes = 256 * 1024 * 1024;
  let remoteBase = null;  // "/api/t/<id>/" while a remote trace is open
  async function openStored(traceId) {
    const force = params.get('remote');
    if (force === '0') return openUrl('/api/traces/' + encodeURIComponent(traceId), traceId, traceId);
    let remote = force === '1';
    if (!remote) {
      try {  // the size first: HEAD of the download (no body), then the event count when it is big
        const head = await fetch('/api/traces/' + encodeURIComponent(traceId), { method: 'HEAD' });
        remote = head.ok && Number(head.headers.get('Content-Length')) > kRemoteBytes;
        if (!remote && head.ok) {
          const meta = await fetch('/api/t/' + encodeURIComponent(traceId) + '/meta');
          if (meta.ok) remote = (await meta.json()).events > kRemoteEvents;
        }
      } catch (e) { /* not the gtrace server: download as before */ }
    }
    if (!remote) return openUrl('/api/traces/' + encodeURIComponent(traceId), traceId, traceId);
    openRemote(traceId);
  }
  function openRemote(traceId) {
    if (!ready) { pending = { remote: traceId }; showProgress('Starting the viewer…', null); return; }
    ++loadSerial;
    hideError();
    remoteBase = '/api/t/' + encodeURIComponent(traceId) + '/';
    source = { traceId };
    window.gtRemote = true;
    api.num('gt_open_remote', traceId);
    pollParse(traceId, false, loadSerial);
  }
  Module.gtRemoteFetch = (id, url) => {
    const base = remoteBase;
    fetch(base + url).then(async (r) => {
      const body = new Uint8Array(await r.arrayBuffer());
      answer(base, id, r.status, body, Number(r.headers.get('Retry-After')) || 0);
    }).catch(() => answer(base, id, 0, new Uint8Array(0), 0));
  };
  function answer(base, id, status, body, retryAfter) {
    if (base !== remoteBase) return;  // another trace opened since
    // Into the wasm heap, not through ccall's string (on the stack): a tile can be hundreds of KB.
    const ptr = Module._malloc(Math.max(1, body.length));
    if (!ptr) return;
    const heap = Module.wasmMemory ? new Uint8Array(Module.wasmMemory.buffer) : Module.HEAPU8;
    heap.set(body, ptr);
    wake();
    Module.ccall('gt_remote_answer', null, ['number', 'number', 'number', 'number', 'number'],
                 [id, status, ptr, body.length, retryAfter]);
  }
  window.gtDownloadRemote = () => {
    if (!remoteBase || !source || !source.traceId) return;
    const view = api.str('gt_view_state');  // the download opens at the same view
    if (view) pendingView = view;
    remoteBase = null;
    window.gtRemote = false;
    openUrl('/api/traces/' + encodeURIComponent(source.traceId), source.traceId, source.traceId);
  };

  // ---- comparing: a second trace (B) under the open one (A) -----------------------------------------------------
  // B loads in the viewer over a few frames while A stays on screen; a B that cannot be opened leaves A as it is
  // and says why. Opening another A ends the comparison (the viewer drops B).
  let compareSource = null;  // where B came from, for share links: {traceId} | {url} | {file}
  let pendingCompare = null;  // a compare waiting for A's load to finish
  function openCompareBytes(name, bytes, src) {
    if (!ready || api.num('gt_load_state') !== 2) {  // A first: the comparison is against it
      pendingCompare = () => openCompareBytes(name, bytes, src);
      return;
    }
    hideError();
    const ptr = Module._malloc(Math.max(1, bytes.length));
    if (!ptr) { showError(`Cannot compare with ${name}: not enough memory for ${mb(bytes.length)}.`); return; }
    const heap = Module.wasmMemory ? new Uint8Array(Module.wasmMemory.buffer) : Module.HEAPU8;
    heap.set(bytes, ptr);
    api.num('gt_compare_open_buffer', name, ptr, bytes.length);
    const poll = () => {
      const st = api.json('gt_compare_state');
      if (st && st.loading) {
        showProgress(`Parsing ${name} to compare…`, null);
        requestAnimationFrame(poll);
        return;
      }
      hideProgress();
      if (st && st.error) { showError(st.error); return; }
      compareSource = src;
      if (st && st.warning) showError(st.warning, true);
    };
    poll();
  }
  async function openCompareFile(file) {
    try {
      showProgress(`Reading ${file.name} to compare`, 0);
      const bytes = new Uint8Array(await file.arrayBuffer());
      openCompareBytes(file.name, bytes, { file });
    } catch (e) {
      hideProgress();
      showError(`Cannot read ${file.name}: ${e.message || e}`);
    }
  }
  async function openCompareUrl(url, name, traceId) {
    name = name || decodeURIComponent(url.split('?')[0].split('/').pop() || url);
    try {
      showProgress(`Downloading ${name} to compare`, null);
      const response = await fetch(url);
      if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
      const disposition = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(response.headers.get('Content-Disposition') || '');
      if (disposition) name = decodeURIComponent(disposition[1]);
      const bytes = new Uint8Array(await response.arrayBuffer());
      hideProgress();
      openCompareBytes(name, bytes, traceId ? { traceId } : { url });
    } catch (e) {
      hideProgress();
      showError(`Cannot download ${name} to compare from ${url}: ${e.message || e}`);
    }
  }
  window.gtOpenCompareUrl = openCompareUrl;
  const compareInput = document.createElement('input');
  compareInput.type = 'file';
  compareInput.hidden = true;
  document.body.appendChild(compareInput);
  compareInput.addEventListener('change', () => {
    if (compareInput.files && compareInput.files[0]) openCompareFile(compareInput.files[0]);
    compareInput.value = '';
  });
  window.gtOpenCompareDialog = () => compareInput.click();

  // ---- share links (the viewer's Share menu calls gtShare) ------------------------------------------------------
  // A link needs the trace on a server: traces opened by ?trace=<id> or ?url= already are; a dropped file is
  // uploaded to the `gtrace serve` that hosts this page (POST /api/traces) first.
  const kMaxInlineView = 2000;  // characters of view state that go into the link itself
  async function shareLink() {
    if (!source) return null;
    let query = await sourceQuery(source, 'trace', 'url', (id) => { source = { traceId: id }; });
    if (query === null) return shareLink();  // asked for an upload token: try again with it
    const comparing = api.json('gt_compare_state');
    if (compareSource && comparing && comparing.active) {
      // B by stored id or by URL, whichever it was opened by (a dropped B is uploaded).
      const q = await sourceQuery(compareSource, 'compare', 'compare', (id) => { compareSource = { traceId: id }; });
      if (q === null) return shareLink();
      query += '&' + q;
    }
    const view = api.str('gt_view_state');
    let viewPart = view ? '&view=' + encodeURIComponent(view) : '';
    // A long view (notes) would make a link some servers and proxies refuse (httplib's limit is 8 KiB):
    // `gtrace serve` stores it (POST /api/views) and the link names it, &viewid=<id>.
    if (view && view.length > kMaxInlineView) {
      const headers = { 'Content-Type': 'text/plain' };
      const token = sessionStorage.getItem('gtrace-upload-token');
      if (token) headers.Authorization = 'Bearer ' + token;
      const response = await fetch('/api/views', { method: 'POST', headers, body: view });
      let body = null;
      try { body = await response.json(); } catch (e) { /* not the gtrace server */ }
      if (!response.ok || !body || !body.id) {
        throw new Error(body && body.error ? body.error
            : `this view (its notes) is too long for a link; saving it needs the page served by \`gtrace serve\` (HTTP ${response.status})`);
      }
      viewPart = '&viewid=' + encodeURIComponent(body.id);
    }
    return `${location.origin}${location.pathname}?${query}${viewPart}`;
  }
  // "trace=<id>" / "url=<url>" for a trace opened by link; a dropped file is uploaded first (`onId` keeps its
  // id). null when the server asked for a token (the caller tries again).
  async function sourceQuery(src, idKey, urlKey, onId) {
    if (src.traceId) return idKey + '=' + encodeURIComponent(src.traceId);
    if (src.url) return urlKey + '=' + encodeURIComponent(src.url);
    showProgress(`Uploading ${src.file.name}`, null);
    const headers = { 'Content-Type': 'application/octet-stream' };
    const token = sessionStorage.getItem('gtrace-upload-token');
    if (token) headers.Authorization = 'Bearer ' + token;
    let response;
    try {
      // The server keeps the file name, so whoever opens the link sees the trace under it.
      response = await fetch('/api/traces?name=' + encodeURIComponent(src.file.name),
                             { method: 'POST', headers, body: src.file });
    } finally {
      hideProgress();
    }
    if (response.status === 401 || response.status === 403) {
      const t = window.prompt('This server needs an upload token:');
      if (t) { sessionStorage.setItem('gtrace-upload-token', t); return null; }
    }
    let body = null;
    try { body = await response.json(); } catch (e) { /* not the gtrace server */ }
    if (!response.ok || !body || !body.id) {
      throw new Error(body && body.error ? body.error
          : `uploads need the page to be served by \`gtrace serve\` (HTTP ${response.status})`);
    }
    onId(body.id);
    return idKey + '=' + encodeURIComponent(body.id);
  }

  window.gtShareLink = shareLink;
  window.gtShare = async () => {
    try {
      const link = await shareLink();
      if (!link) return;
      history.replaceState(null, '', link);
      let copied = false;
      try { await navigator.clipboard.writeText(link); copied = true; } catch (e) { /* insecure context */ }
      if (!copied) window.prompt('Link to this trace at this view:', link);
    } catch (e) {
      showError('Cannot share: ' + (e.message || e));
    }
  };

  // ---- CSV export: the viewer's table buttons (viewer/ui/teamui.cc) hand the text here to download --------------
  window.gtDownload = (name, text) => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = name;  // an attribute, never markup: the name comes from the trace's file name
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  };

  // ---- file picker (also opened from the viewer's File menu through gtOpenFileDialog) ------------------------
  const input = $('file-input');
  input.addEventListener('change', () => {
    if (input.files && input.files.length > 1) openFiles(Array.from(input.files));
    else if (input.files && input.files[0]) openFile(input.files[0]);
    input.value = '';
  });
  window.gtOpenFileDialog = () => input.click();
  window.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === 'o') { e.preventDefault(); input.click(); }
  }, true);

  // ---- drag and drop anywhere on the page ---------------------------------------------------------------------
  let dragDepth = 0;
  const hasFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types || []).some(
      (t) => t === 'Files' || t === 'text/uri-list');
  window.addEventListener('dragenter', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    dragDepth++;
    $('drop-hint').hidden = false;
  });
  window.addEventListener('dragover', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
  });
  window.addEventListener('dragleave', () => {
    if (--dragDepth <= 0) { dragDepth = 0; $('drop-hint').hidden = true; }
  });
  window.addEventListener('drop', (e) => {
    e.preventDefault();
    e.stopPropagation();
    dragDepth = 0;
    $('drop-hint').hidden = true;
    const files = e.dataTransfer && e.dataTransfer.files;
    // Shift held while dropping one file on an open trace: compare with it rather than replace it.
    if (e.shiftKey && files && files.length === 1 && ready && api.num('gt_load_state') === 2) {
      openCompareFile(files[0]);
      return;
    }
    if (files && files.length > 1) { openFiles(Array.from(files)); return; }  // one job's files: merged
    if (files && files.length > 0) { openFile(files[0]); return; }
    const uri = e.dataTransfer && e.dataTransfer.getData('text/uri-list');
    if (uri) openUrl(uri.split('\n')[0].trim());
  }, true);

  // ---- links: ?url=<trace URL>, ?trace=<stored id>, &view=<ViewState> or &viewid=<saved view> ----------------
  window.addEventListener('DOMContentLoaded', () => {
    // &viewid=: a view saved on the server (too long for the link: notes), fetched alongside the trace.
    const viewId = params.get('viewid');
    if (viewId && !pendingView) {
      fetch('/api/views/' + encodeURIComponent(viewId)).then(async (r) => {
        if (!r.ok) throw new Error(`HTTP ${r.status}`);
        const text = await r.text();
        if (ready && api.num('gt_load_state') === 2) {
          if (!api.num('gt_apply_view_state', text)) showError('Cannot apply the shared view: ' + api.str('gt_last_view_error'), true);
        } else {
          pendingView = text;
        }
      }).catch((e) => showError(`Cannot load the shared view ${viewId}: ${e.message || e}`, true));
    }
    const urls = params.getAll('url');  // ?url=a.gtrace&url=b.gtrace: the files of one job, merged
    const traceId = params.get('trace');
    // &compare=<stored id> or &compare=<URL> (a URL has a '/' or ':'; an id never does), next to either.
    const compare = params.get('compare');
    if (compare) {
      pendingCompare = /[/:]/.test(compare) ? () => openCompareUrl(compare)
                                           : () => openCompareUrl('/api/traces/' + encodeURIComponent(compare), compare, compare);
    }
    if (traceId) openStored(traceId);
    else if (urls.length > 1) openUrls(urls);
    else if (urls.length === 1) openUrl(urls[0]);
  });
})();
