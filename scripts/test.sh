#!/usr/bin/env bash
# Installs, builds and runs every test: native (Catch2 under CTest), ASan+UBSan, a short fuzz pass, the wasm
# viewer and the browser end-to-end tests. Output of the browser tests lands in test-output/.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
bash scripts/setup.sh

# Each step says how long the one before it took, in wall time and in CPU time of its processes (what a busy
# or differently sized machine does not change much): CI's budget is a whole run well under 30 minutes.
START=0  # bash's SECONDS count from the script's start: the first step's "previous" is the setup
LAST=0
LAST_CPU=0
CPU=0
children_cpu() {  # CPU=user + system seconds of every finished child so far (the 2nd line of bash's `times`)
  local times_out
  times_out=$(mktemp)
  times >"$times_out"  # not in $(...): a subshell would report its own children
  CPU=$(tail -1 "$times_out" | awk '{ n = 0; for (i = 1; i <= 2; ++i) { split($i, p, /[ms]/); n += p[1] * 60 + p[2] }
                                     printf "%d", n }')
  rm -f "$times_out"
}
step() {
  children_cpu
  printf '\n=== %s === (previous step %d s, %d CPU s; %d s in all)\n' "$*" $((SECONDS - LAST)) \
    $((CPU - LAST_CPU)) $((SECONDS - START))
  LAST=$SECONDS
  LAST_CPU=$CPU
}

# Every test runs in one of the steps. The native step (preset native-ci, in build/native) builds what the
# later steps use (the CLI, collector, UI, Python package, the browser tests' helpers) and the tests only it runs
# or runs differently, and the benchmarks (compiled, not run: a break in them is caught); the test executables
# the ASan+UBSan step runs the same way and the CUDA workloads are not compiled there (tests/CMakeLists.txt,
# GT_ASAN_COVERED_TESTS). `cmake --preset native`
# configures the whole tree again, in the same folder. A test that hangs fails after 5 minutes (10 under ASan:
# CMakePresets.json's test presets) rather than taking CI's whole budget with it.
step "native build + tests"
cmake --preset native-ci >/dev/null
cmake --build --preset native-ci -j "$JOBS"
ctest --preset native-ci -j "$JOBS"

# The two wasm builds beside the ASan+UBSan build: they need nothing built before them, and each ends in a link
# on one core (binaryen's wasm-opt) that the other builds' compiling fills. The tests start once all three are
# done, on an otherwise idle machine; the browser tests' step below finds the page built.
step "ASan+UBSan build, wasm builds beside it; ASan+UBSan tests"
wasm_log=$(mktemp)
bash scripts/web-test.sh --build-only >"$wasm_log" 2>&1 &
wasm_pid=$!
asan_rc=0
cmake --preset asan >/dev/null && cmake --build --preset asan -j "$JOBS" || asan_rc=$?
wasm_rc=0
wait "$wasm_pid" || wasm_rc=$?
if [ "$wasm_rc" != 0 ]; then
  cat "$wasm_log"
  echo "test: the wasm builds failed" >&2
fi
rm -f "$wasm_log"
if [ "$asan_rc" != 0 ] || [ "$wasm_rc" != 0 ]; then exit 1; fi
ctest --preset asan -j "$JOBS"

if [ -x scripts/fuzz.sh ]; then
  step "fuzz (short pass)"
  # From the ASan build's own fuzz targets: it compiled the libraries with libFuzzer's coverage already.
  GT_FUZZ_BUILD=build/asan bash scripts/fuzz.sh --seconds "${GT_FUZZ_SECONDS:-20}"
fi

if [ -x scripts/web-test.sh ]; then
  step "browser end-to-end (wasm viewer built beside the ASan+UBSan build)"
  bash scripts/web-test.sh
fi
if [ -x scripts/package-test.sh ]; then
  # After the web tests: the package carries the page they built (build/wasm/web), from build/native as built.
  step "Debian package: install, run, remove"
  bash scripts/package-test.sh
fi
step "done"
echo "all tests passed"
