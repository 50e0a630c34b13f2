#!/usr/bin/env bash
# Installs, builds and runs every test: native (Catch2 under CTest), ASan+UBSan, a short fuzz pass, the wasm
# viewer and the browser end-to-end tests. Output of the browser tests lands in test-output/.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
bash scripts/setup.sh

# Each step says how long the one before it took: CI's budget is a whole run well under 30 minutes.
START=0  # bash's SECONDS count from the script's start: the first step's "previous" is the setup
LAST=0
step() {
  printf '\n=== %s === (previous step %d s, %d s in all)\n' "$*" $((SECONDS - LAST)) $((SECONDS - START))
  LAST=$SECONDS
}

step "native build + tests"
cmake --preset native >/dev/null
cmake --build --preset native -j "$JOBS"
ctest --preset native -j "$JOBS"

step "ASan+UBSan build + tests"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$JOBS"
ctest --preset asan -j "$JOBS"

if [ -x scripts/fuzz.sh ]; then
  step "fuzz (short pass)"
  bash scripts/fuzz.sh --seconds "${GT_FUZZ_SECONDS:-20}"
fi

if [ -x scripts/web-test.sh ]; then
  step "wasm viewer + browser end-to-end"
  bash scripts/web-test.sh
fi
if [ -x scripts/package-test.sh ]; then
  # After the web tests: the package carries the page they built (build/wasm/web), from build/native as built.
  step "Debian package: install, run, remove"
  bash scripts/package-test.sh
fi
step "done"
echo "all tests passed"
