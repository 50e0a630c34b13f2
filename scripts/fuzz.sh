#!/usr/bin/env bash
# Builds the `fuzz` preset (clang + libFuzzer + ASan/UBSan) and runs every fuzz_* target found in build/fuzz for
# a share of the time budget. Fails when any target finds a crash (the reproducer is kept in build/fuzz/crashes/).
#
#   scripts/fuzz.sh [--seconds N]    total budget over all targets (default 20)
#
# Corpora: build/fuzz/corpus/<target>/ (kept between runs), seeded from tests/fuzz/corpus/<target>/ when that
# exists and, for the reader, from gen_fuzz_seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TOTAL=20
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_TOTAL="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown option $1" >&2; exit 64 ;;
  esac
done
JOBS=${JOBS:-2}
# GT_FUZZ_BUILD=build/asan: the targets of the asan preset's build (CI: that build has them already, at -O0);
# by default the fuzz preset's (-O2, for long runs).
BUILD=${GT_FUZZ_BUILD:-build/fuzz}

if [ "$BUILD" = build/fuzz ]; then cmake --preset fuzz >/dev/null; fi
# Build only the fuzz targets (and the seed generator), not the whole tree.
mapfile -t BUILD_TARGETS < <(ninja -C "$BUILD" -t targets all | grep -Eo '^(fuzz_[A-Za-z0-9_]+|gen_fuzz_seeds):' | tr -d ':' | sort -u)
cmake --build "$BUILD" -j "$JOBS" --target "${BUILD_TARGETS[@]}"

mapfile -t TARGETS < <(find "$BUILD" -type f -name 'fuzz_*' -perm -u+x ! -name '*.*' | sort)
if [ ${#TARGETS[@]} -eq 0 ]; then
  echo "fuzz.sh: no fuzz_* targets built" >&2
  exit 1
fi
PER=$(( SECONDS_TOTAL / ${#TARGETS[@]} ))
[ "$PER" -lt 1 ] && PER=1

mkdir -p "$BUILD/crashes"
rm -f "$BUILD/crashes"/*.status
# One target's run: its output goes to its log and its result to <name>.status (a line, then the execution count).
run_target() {
  local t=$1 name corpus log execs
  name=$(basename "$t")
  corpus="$BUILD/corpus/$name"
  mkdir -p "$corpus"
  [ -d "tests/fuzz/corpus/$name" ] && cp -n "tests/fuzz/corpus/$name"/* "$corpus"/ 2>/dev/null || true
  if { [ "$name" = fuzz_reader ] || [ "$name" = fuzz_merge ]; } && [ -x "$BUILD/tests/fuzz/gen_fuzz_seeds" ]; then
    "$BUILD/tests/fuzz/gen_fuzz_seeds" "$corpus"
  fi
  log="$BUILD/crashes/$name.log"
  # -entropic=0: the entropic scheduler spent ~60% of the time in its own bookkeeping on this target.
  if "$t" "$corpus" -max_total_time="$PER" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -entropic=0 \
       -artifact_prefix="$BUILD/crashes/$name-" -print_final_stats=1 >"$log" 2>&1; then
    execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo 0)
    printf '%s: ok, %s executions (%ss)\n%s\n' "$name" "$execs" "$PER" "$execs" >"$BUILD/crashes/$name.status"
  else
    printf '%s: FAILED (see %s)\n0\n' "$name" "$log" >"$BUILD/crashes/$name.status"
  fi
}
# Targets run $JOBS at a time: each is one process on one core, and most of a short pass is each target
# replaying its corpus (libFuzzer runs every input once before -max_total_time applies), not fuzzing.
for t in "${TARGETS[@]}"; do
  while [ "$(jobs -pr | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  run_target "$t" &
done
wait
status=0
total_execs=0
for t in "${TARGETS[@]}"; do
  name=$(basename "$t")
  result="$BUILD/crashes/$name.status"
  if [ -f "$result" ] && head -1 "$result" | grep -q ': ok,'; then
    head -1 "$result"
    total_execs=$(( total_execs + $(sed -n 2p "$result") ))
  else
    echo "$name: FAILED (see $BUILD/crashes/$name.log)" >&2
    tail -40 "$BUILD/crashes/$name.log" >&2
    status=1
  fi
done
echo "fuzz total: $total_execs executions in ${SECONDS_TOTAL}s budget, $JOBS targets at a time"
exit $status
