#!/usr/bin/env bash
# The collector's GPU suite (issue 3), run on the H200 through the device tool:
#   bash scripts/gpu/collector_suite.sh [all|traces|bench]
# Expects the binaries in .device-carry/ (scripts/gpu/collector_carry.sh puts them there) and writes
# $OUT/suite.tar.gz (traces + logs) and $OUT/bench.txt. Each step is bounded by `timeout`.
set -u
PHASE=${1:-all}
C=$PWD/.device-carry/collector
OUT=${OUT:-/tmp/gtrace-out}
T=$OUT/t
mkdir -p "$T" /tmp/gb
G=$C/gcollect
export PYTHONUNBUFFERED=1
if ! ldconfig -p | grep -q libzstd.so.1; then export LD_LIBRARY_PATH=$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi

step() {  # step NAME CMD...: runs CMD with a time limit, log in $T/NAME.log, prints its tail
  local name=$1; shift
  echo "=== $name: $*"
  local t0=$(date +%s%N)
  timeout -s KILL 150 "$@" >"$T/$name.log" 2>&1
  local rc=$?
  local t1=$(date +%s%N)
  echo "rc=$rc wall_ms=$(( (t1 - t0) / 1000000 ))" >>"$T/$name.log"
  tail -n 18 "$T/$name.log"
}

if [ "$PHASE" = all ] || [ "$PHASE" = traces ]; then
  nvidia-smi -L
  for k in copy fma strided atomics syncdiv bank_conflicts tiny_burst memcpy streams nvtx multithread; do
    step "k_$k" "$G" -o "$T/$k.gtrace" -- "$C/gt_k_$k"
  done
  GTRACE_DEBUG_MARKERS=1 step nvtx_debug "$G" -o "$T/nvtx_debug.gtrace" -- "$C/gt_k_nvtx"
  step nvtx_capture_api "$G" -o "$T/nvtx_capture_api.gtrace" --capture-range=cudaProfilerApi -- "$C/gt_k_nvtx"
  step nvtx_capture_nvtx "$G" -o "$T/nvtx_capture_nvtx.gtrace" --capture-range=nvtx:compute -- "$C/gt_k_nvtx"
  step copy_metrics "$G" -o "$T/copy_metrics.gtrace" --gpu-metrics=20ms -- "$C/gt_k_copy" --iters=100
  step tiny_driver "$G" -o "$T/tiny_driver.gtrace" --trace=cuda,driver -- "$C/gt_k_tiny_burst" --count=200
  step delay "$G" -o "$T/delay.gtrace" --delay 1.0 --duration 0.5 -- "$C/gt_k_tiny_burst" --count=1000000
  step no_cuda "$G" -o "$T/no_cuda.gtrace" -- /bin/echo hello
  step torch_train "$G" -o "$T/torch_train.gtrace" -- python3 bench/collector/torch_loop.py --train --iters 40
  step multiproc "$G" -o "$T/multiproc.gtrace" -- python3 tests/collector/gpu/multiproc.py
  for how in segv abort exit3 kill; do
    step "crash_$how" "$G" -o "$T/crash_$how.gtrace" -- python3 tests/collector/gpu/crash.py $how
  done
  step second_client "$G" -o "$T/second_client.gtrace" -- python3 tests/collector/gpu/second_client.py
  # Ctrl-C sent to gcollect alone (not the terminal's process group): forwarded, trace finalized.
  echo "=== sigint"
  ( "$G" -o "$T/sigint.gtrace" -- "$C/gt_k_tiny_burst" --count=3000000 >"$T/sigint.log" 2>&1 & p=$!; sleep 4; kill -INT $p; wait $p; echo "rc=$?" >>"$T/sigint.log" )
  tail -n 12 "$T/sigint.log"
  # Checks (counts, ordering, nesting, correlation) on every workload trace, here on the machine.
  for w in copy fma strided atomics syncdiv bank_conflicts tiny_burst memcpy streams nvtx multithread torch_train multiproc; do
    "$C/gtrace_check" "$T/$w.gtrace" $w | grep -v '^note' | tee -a "$T/checks.log"
  done
  for t in nvtx_capture_api nvtx_capture_nvtx copy_metrics tiny_driver delay crash_segv crash_kill second_client sigint; do
    "$C/gtrace_check" "$T/$t.gtrace" --dump | grep -v '^api\|^thread' | head -30 >"$T/dump_$t.txt"
  done
  mkdir -p "$OUT/fix"
  for w in nvtx streams multithread torch_train; do cp "$T/$w.gtrace" "$OUT/fix/h200_$w.gtrace"; done
fi

if [ "$PHASE" = all ] || [ "$PHASE" = bench ]; then
  B=$OUT/bench.txt
  : >"$B"
  # Every configuration runs once per round, rounds alternate, all in this one session on this one machine.
  # Configurations: plain; --trace=kernel; the default trace; the default trace without the driver launch
  # records (GTRACE_NO_DRIVER_LAUNCH) or with CUPTI's timestamp callback (GTRACE_CLOCK=monotonic).
  cfgs="plain kernel default default_mono"
  for rep in 1 2 3 4 5; do
    for cfg in $cfgs; do
      envs=(); pre=("$G" -q -f -o /tmp/gb/$cfg.gtrace --)
      case $cfg in
        plain) pre=() ;;
        kernel) pre=("$G" -q -f -o /tmp/gb/$cfg.gtrace --trace=kernel --) ;;
        default_mono) envs=(GTRACE_CLOCK=monotonic) ;;
      esac
      echo "launch cfg=$cfg rep=$rep $(env "${envs[@]}" timeout 120 "${pre[@]}" "$C/gt_bench_launch" --launches=50000 --reps=5 2>&1 | grep launch_bench)" | tee -a "$B"
      echo "spin20 cfg=$cfg rep=$rep $(env "${envs[@]}" timeout 120 "${pre[@]}" "$C/gt_bench_launch" --launches=5000 --reps=3 --spin_us=20 2>&1 | grep launch_bench)" | tee -a "$B"
    done
  done
  for rep in 1 2 3 4 5; do
    echo "torch cfg=plain rep=$rep $(timeout 120 python3 bench/collector/torch_loop.py --mode plain 2>&1 | grep median_ms)" | tee -a "$B"
    echo "torch cfg=gcollect rep=$rep $(timeout 120 "$G" -f -o /tmp/gb/torch.gtrace -- python3 bench/collector/torch_loop.py --mode plain 2>&1 | grep -E 'median_ms|finalized' | tr '\n' ' ')" | tee -a "$B"
    echo "torch cfg=profiler rep=$rep $(timeout 120 python3 bench/collector/torch_loop.py --mode profiler 2>&1 | grep median_ms)" | tee -a "$B"
  done
  ls -la /tmp/gb >>"$B"
  "$C/gtrace_check" /tmp/gb/default.gtrace --dump | grep -v "^api\|^thread" | head -12 >>"$B"
fi
tar czf "$OUT/suite.tar.gz" -C "$OUT" t && ls -la "$OUT"
