#!/usr/bin/env bash
# Builds the WebAssembly viewer (preset "wasm" -> build/wasm/web) and the viewer core's unit tests for it
# (tests/wasm), runs those under node, then the browser end-to-end tests in headless chromium (playwright-core).
# Screenshots and console logs land in test-output/web/.
#   scripts/web-test.sh [--only <test name substring>] [--no-build | --build-only]
# --build-only: the two wasm builds and nothing else (scripts/test.sh runs them beside the ASan+UBSan build).
# E2E_JOBS (default 2): browser tests run that many at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs  # emcc's JS optimizer needs Debian's node modules
JOBS=${JOBS:-2}
BUILD=1
BUILD_ONLY=0
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --build-only) BUILD_ONLY=1 ;;
    --only) ARGS+=(--only "$2"); shift ;;
    *) echo "web-test: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

if [ ! -d web/tests/node_modules/playwright-core ]; then
  (cd web/tests && npm install --no-audit --no-fund --silent)
fi
if [ "$BUILD" = 1 ]; then
  # The two builds at once: each ends in a link that runs on one core (binaryen's wasm-opt, most of a build
  # with a warm cache), so one build's link overlaps the other's compiling or link.
  echo "web-test: building the wasm viewer (build/wasm) and the threaded one (build/wasm-mt -> build/wasm/web/gtrace-mt.*)"
  cmake --preset wasm >/dev/null
  cmake --preset wasm-mt >/dev/null
  cmake --build build/wasm -j "$JOBS" --target gtrace_web test_wasm 2>&1 | sed -u 's/^/[wasm] /' &
  wasm_pid=$!
  cmake --build build/wasm-mt -j "$JOBS" --target gtrace_web 2>&1 | sed -u 's/^/[wasm-mt] /' &
  wasm_mt_pid=$!
  wasm_rc=0
  wait "$wasm_pid" || wasm_rc=$?
  wait "$wasm_mt_pid" || wasm_rc=$?
  [ "$wasm_rc" = 0 ] || { echo "web-test: a wasm build failed" >&2; exit 1; }
fi
[ "$BUILD_ONLY" = 0 ] || exit 0
# The deterministic sample .gtrace (tests/web/make_sample_trace.cc) comes from the native build: build/native in
# CI (scripts/test.sh builds it first), or the folder named by GT_NATIVE_BUILD.
NATIVE=${GT_NATIVE_BUILD:-build/native}
if [ ! -f "$NATIVE/build.ninja" ]; then
  [ "$NATIVE" = build/native ] || { echo "web-test: $NATIVE is not a configured build" >&2; exit 1; }
  cmake --preset native >/dev/null
fi
cmake --build "$NATIVE" -j "$JOBS" --target gt_sample_trace gt_job_traces gtrace
for f in index.html app.js style.css gtrace.js gtrace.wasm gtrace-mt.js gtrace-mt.wasm gtrace-mt.worker.js; do
  [ -f "build/wasm/web/$f" ] || { echo "web-test: build/wasm/web/$f missing" >&2; exit 1; }
done
rm -rf test-output/web
mkdir -p test-output/web/sample
"$NATIVE/tests/web/gt_sample_trace" test-output/web/sample/sample.gtrace
export GT_SAMPLE_GTRACE=$PWD/test-output/web/sample/sample.gtrace
mkdir -p test-output/web/job
"$NATIVE/tests/web/gt_job_traces" test-output/web/job  # rank0.gtrace, rank1.gtrace: the merged-open test
export GT_JOB_DIR=$PWD/test-output/web/job
export GT_GTRACE_BIN=$PWD/$NATIVE/viewer/cli/gtrace  # `gtrace serve` for the share-link test
# The browser tests (E2E_JOBS of them at a time) and the share links against `gtrace serve` side by side; each
# prints its output when it ends.
# The viewer core's unit tests as the page's engine runs them (tests/wasm): before the browser, whose tests only
# drop small files. Not with --only (one browser test).
if [ ${#ARGS[@]} -eq 0 ]; then
  echo "web-test: the viewer core's unit tests in wasm (build/wasm/tests/wasm/test_wasm.js, under node)"
  node --no-experimental-fetch build/wasm/tests/wasm/test_wasm.js --use-colour no
fi
echo "web-test: browser tests (screenshots and logs in test-output/web/), and share links against gtrace serve (test-output/share/)"
share_log=$(mktemp)
node tests/server/share_e2e.mjs "$GT_GTRACE_BIN" build/wasm/web tests/data/h200_torch_train.gtrace >"$share_log" 2>&1 &
share_pid=$!
e2e_rc=0
node web/tests/e2e.mjs --web-root build/wasm/web --out test-output/web --jobs "${E2E_JOBS:-2}" "${ARGS[@]}" || e2e_rc=$?
share_rc=0
wait "$share_pid" || share_rc=$?
echo "web-test: share links against gtrace serve (screenshots in test-output/share/)"
cat "$share_log"
rm -f "$share_log"
[ "$e2e_rc" = 0 ] && [ "$share_rc" = 0 ]
