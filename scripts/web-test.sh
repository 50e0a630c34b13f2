#!/usr/bin/env bash
# Builds the WebAssembly viewer (preset "wasm" -> build/wasm/web) and runs the browser end-to-end tests in
# headless chromium (playwright-core). Screenshots and console logs land in test-output/web/.
#   scripts/web-test.sh [--only <test name substring>] [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs  # emcc's JS optimizer needs Debian's node modules
JOBS=${JOBS:-2}
BUILD=1
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --only) ARGS+=(--only "$2"); shift ;;
    *) echo "web-test: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

if [ ! -d web/tests/node_modules/playwright-core ]; then
  (cd web/tests && npm install --no-audit --no-fund --silent)
fi
if [ "$BUILD" = 1 ]; then
  echo "web-test: building the wasm viewer (build/wasm)"
  cmake --preset wasm >/dev/null
  cmake --build build/wasm -j "$JOBS" --target gtrace_web
  echo "web-test: building the threaded wasm viewer (build/wasm-mt -> build/wasm/web/gtrace-mt.*)"
  cmake --preset wasm-mt >/dev/null
  cmake --build build/wasm-mt -j "$JOBS" --target gtrace_web
fi
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
echo "web-test: browser tests (screenshots and logs in test-output/web/)"
node web/tests/e2e.mjs --web-root build/wasm/web --out test-output/web "${ARGS[@]}"
echo "web-test: share links against gtrace serve (screenshots in test-output/share/)"
node tests/server/share_e2e.mjs "$GT_GTRACE_BIN" build/wasm/web tests/data/h200_torch_train.gtrace
