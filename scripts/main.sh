#!/usr/bin/env bash
# The main job: install, build the WebAssembly viewer and the native `gtrace` CLI, and serve the viewer on
# 127.0.0.1 with a bundled real trace opened. Prints the URL to open; Ctrl-C stops the server.
#   scripts/main.sh [--port N] [--trace FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export NODE_PATH=/usr/share/nodejs
JOBS=${JOBS:-$(nproc)}
PORT=${GT_PORT:-8080}
TRACE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --port) PORT=$2; shift ;;
    --trace) TRACE=$2; shift ;;
    *) echo "main: unknown argument $1 (use --port N, --trace FILE)" >&2; exit 2 ;;
  esac
  shift
done

bash scripts/setup.sh

echo "main: building the wasm viewer (build/wasm)"
cmake --preset wasm >/dev/null
cmake --build build/wasm -j "$JOBS" --target gtrace_web
# The threaded build (gtrace-mt.*, same folder): gtrace serve's pages are cross-origin isolated, so they load
# traces on several threads; the page falls back to the one-thread build where it is not.
echo "main: building the threaded wasm viewer (build/wasm-mt)"
cmake --preset wasm-mt >/dev/null
cmake --build build/wasm-mt -j "$JOBS" --target gtrace_web

NATIVE=${GT_NATIVE_BUILD:-build/native}
echo "main: building the gtrace CLI ($NATIVE)"
if [ "$NATIVE" = build/native ]; then cmake --preset native >/dev/null; fi
cmake --build "$NATIVE" -j "$JOBS" --target gtrace gt_sample_trace

# The bundled trace: one recorded with gcollect on the GPU machine (tests/data), else the deterministic sample.
if [ -z "$TRACE" ]; then
  # A PyTorch training loop recorded with --counters first: NVTX steps, API, kernels, flows, GPU metrics, and
  # per-kernel counters with their roofline points and verdicts. (ls sorts its operands, so the preferred file
  # is tested on its own.)
  if [ -f tests/data/h200_torch_counters.gtrace ]; then
    TRACE=tests/data/h200_torch_counters.gtrace
  elif [ -f tests/data/h200_torch_train.gtrace ]; then
    TRACE=tests/data/h200_torch_train.gtrace
  else
    TRACE=$(ls tests/data/*.gtrace 2>/dev/null | head -1 || true)
  fi
fi
if [ -z "$TRACE" ]; then
  mkdir -p out/main
  "$NATIVE/tests/web/gt_sample_trace" out/main/sample.gtrace >/dev/null
  TRACE=out/main/sample.gtrace
  echo "main: no recorded trace in tests/data; serving the generated sample $TRACE"
fi

STORE=${GTRACE_STORE:-$ROOT/out/main/store}
mkdir -p "$STORE"
echo "main: serving build/wasm/web with $TRACE on 127.0.0.1:$PORT; open the link printed after 'open:'"
# gtrace serve prints "open: <link>" once the trace is stored; that link is the one to open.
exec "$NATIVE/viewer/cli/gtrace" serve --bind 127.0.0.1 --port "$PORT" --web-root "$ROOT/build/wasm/web" \
  --store "$STORE" --open "$TRACE"
