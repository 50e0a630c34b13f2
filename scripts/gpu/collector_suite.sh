#!/usr/bin/env bash
# The collector's GPU suite (traces and overhead), run on the H200 through the device tool:
#   bash scripts/gpu/collector_suite.sh [all|traces|bench|apimodes|kinds|final|spin|quick|serial]
# Expects the binaries in .device-carry/ (scripts/gpu/collector_carry.sh puts them there) and writes
# $OUT/suite.tar.gz (traces + logs) and $OUT/bench.txt. Each step is bounded by `timeout`.
set -u
PHASE=${1:-all}
C=${GTRACE_CARRY:-$PWD/.device-carry/collector}
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
if [ "$PHASE" = apimodes ]; then
  # Where PyTorch's per-launch cost goes: one configuration per hypothesis, each once per round, rounds
  # alternate; first a correctness pass over the callback-API design. Stops starting rounds after BUDGET_S.
  B=$OUT/apimodes.txt
  : >"$B"
  t_start=$(date +%s)
  for k in tiny_burst memcpy streams nvtx multithread; do
    step "cb_$k" "$G" -f -o "$T/cb_$k.gtrace" -- "$C/gt_k_$k"
    "$C/gtrace_check" "$T/cb_$k.gtrace" $k | grep -v '^note' | tee -a "$B"
  done
  step cb_torch_train "$G" -f -o "$T/cb_torch_train.gtrace" -- python3 bench/collector/torch_loop.py --train --iters 40
  "$C/gtrace_check" "$T/cb_torch_train.gtrace" torch_train | grep -v '^note' | tee -a "$B"
  step cb_capture_api "$G" -f -o "$T/cb_capture_api.gtrace" --capture-range=cudaProfilerApi -- "$C/gt_k_nvtx"
  step cb_delay "$G" -f -o "$T/cb_delay.gtrace" --delay 0.5 --duration 0.3 -- "$C/gt_k_tiny_burst" --count=400000
  GTRACE_DEBUG_MARKERS=1 step cb_nvtx_debug "$G" -f -o "$T/cb_nvtx_debug.gtrace" -- "$C/gt_k_nvtx"
  for r in teardown domain:work cross-thread compute; do
    GTRACE_DEBUG_MARKERS=1 step "cap_${r%%:*}" "$G" -f -o "$T/cap_${r%%:*}.gtrace" --capture-range=nvtx:$r -- "$C/gt_k_nvtx"
    echo "capture nvtx:$r: $(grep -c 'capture range .* opened' "$T/cap_${r%%:*}.log") opened, $(grep -c 'capture range .* closed' "$T/cap_${r%%:*}.log") closed" | tee -a "$B"
  done
  for t in cb_capture_api cb_delay; do "$C/gtrace_check" "$T/$t.gtrace" | tee -a "$B"; done
  "$C/gtrace_check" "$T/cb_nvtx_debug.gtrace" --dump | grep "cross-thread" | tee -a "$B"
  grep -E "marker id|nvtx end callback" "$T/cb_nvtx_debug.log" | head -40 >>"$B"
  for t in cb_torch_train cb_capture_api cb_delay; do
    "$C/gtrace_check" "$T/$t.gtrace" --dump | grep -v '^thread\|^nvtx' >"$T/dump_$t.txt"
  done
  # API histograms of the timed loop: every runtime call (callback, runtime-all) and the activity default.
  "$G" -f -o /tmp/gb/hist_all.gtrace --trace=cuda,nvtx,overhead,runtime-all -- python3 bench/collector/torch_loop.py --iters 100 >"$T/hist_all.log" 2>&1
  "$G" -f -o /tmp/gb/hist_act.gtrace -- env GTRACE_API=activity python3 bench/collector/torch_loop.py --iters 100 >"$T/hist_act.log" 2>&1
  for h in all act; do echo "--- histogram $h" >>"$B"; "$C/gtrace_check" /tmp/gb/hist_$h.gtrace --dump | grep '^api' >>"$B"; done
  echo "checks done after $(( $(date +%s) - t_start )) s" | tee -a "$B"
  cfgs="plain kernel kcopy act act_noruntime act_nodrv cb cb_nodrv cb_all profiler"
  for rep in 1 2 3 4 5; do
    if [ $(( $(date +%s) - t_start )) -gt "${BUDGET_S:-330}" ]; then echo "budget: stopped before round $rep" | tee -a "$B"; break; fi
    for cfg in $cfgs; do
      envs=(); pre=("$G" -f -o /tmp/gb/t_$cfg.gtrace --); mode=plain
      case $cfg in
        plain) pre=() ;;
        kernel) pre=("$G" -f -o /tmp/gb/t_$cfg.gtrace --trace=kernel --) ;;
        kcopy) pre=("$G" -f -o /tmp/gb/t_$cfg.gtrace --trace=kernel,memcpy --) ;;
        act) envs=(GTRACE_API=activity) ;;
        act_noruntime) pre=("$G" -f -o /tmp/gb/t_$cfg.gtrace --trace=kernel,memcpy,memset,sync,memory,nvtx,overhead --) ;;
        act_nodrv) envs=(GTRACE_API=activity GTRACE_NO_DRIVER_LAUNCH=1) ;;
        cb) envs=(GTRACE_API=callback) ;;
        cb_nodrv) envs=(GTRACE_API=callback GTRACE_NO_DRIVER_LAUNCH=1) ;;
        cb_all) envs=(GTRACE_API=callback); pre=("$G" -f -o /tmp/gb/t_$cfg.gtrace --trace=cuda,nvtx,overhead,runtime-all --) ;;
        profiler) pre=(); mode=profiler ;;
      esac
      echo "torch cfg=$cfg rep=$rep $(env "${envs[@]}" timeout 90 "${pre[@]}" python3 bench/collector/torch_loop.py --mode $mode 2>&1 | grep -E 'median_ms|finalized|complete' | tr '\n' ' ')" | tee -a "$B"
    done
    for cfg in plain act cb; do
      envs=(GTRACE_API=activity); pre=("$G" -q -f -o /tmp/gb/l_$cfg.gtrace --)
      case $cfg in plain) pre=() ;; cb) envs=(GTRACE_API=callback) ;; esac
      echo "launch cfg=$cfg rep=$rep $(env "${envs[@]}" timeout 60 "${pre[@]}" "$C/gt_bench_launch" --launches=50000 --reps=5 2>&1 | grep launch_bench)" | tee -a "$B"
    done
  done
  for cfg in act cb cb_all; do echo "--- trace $cfg: $(ls -la /tmp/gb/t_$cfg.gtrace)"; "$C/gtrace_check" /tmp/gb/t_$cfg.gtrace --dump | grep -c '^api' ; done >>"$B" 2>&1
  echo "total $(( $(date +%s) - t_start )) s" | tee -a "$B"
fi

if [ "$PHASE" = kinds ]; then
  # What each record kind costs in the PyTorch loop: the default trace with one kind left out at a time, plus
  # injection-only (--trace=none) and kernels only; plain and torch.profiler alongside. Rounds alternate.
  B=$OUT/kinds.txt
  : >"$B"
  t_start=$(date +%s)
  step k_check "$G" -f -o "$T/k_delay.gtrace" --delay 0.5 --duration 0.3 -- "$C/gt_k_tiny_burst" --count=400000
  "$C/gtrace_check" "$T/k_delay.gtrace" | tee -a "$B"
  # --gpu-metrics maps NVML devices to CUDA numbers through CUDA_VISIBLE_DEVICES (here by UUID).
  uuid=$(nvidia-smi -L | sed -n 's/.*(UUID: \(GPU-[0-9a-f-]*\)).*/\1/p' | head -1)
  for cvd in "${uuid:0:12}" 0 ""; do
    CUDA_VISIBLE_DEVICES=$cvd "$G" -q -f -o "$T/k_metrics.gtrace" --gpu-metrics=20ms -- "$C/gt_k_copy" --iters=20 >"$T/k_metrics.log" 2>&1
    echo "gpu-metrics CUDA_VISIBLE_DEVICES='$cvd': $(grep -i 'gpu-metrics\|error' "$T/k_metrics.log" | head -2) $("$C/gtrace_check" "$T/k_metrics.gtrace" --dump | grep '^counters\|^loss')" | tee -a "$B"
  done
  cfgs="plain none kernel default no_memset no_sync no_memory no_nvtx no_overhead minimal profiler"
  for rep in 1 2 3 4 5; do
    if [ $(( $(date +%s) - t_start )) -gt "${BUDGET_S:-330}" ]; then echo "budget: stopped before round $rep" | tee -a "$B"; break; fi
    for cfg in $cfgs; do
      tr=; mode=plain
      case $cfg in
        none) tr=none ;;
        kernel) tr=kernel ;;
        default) tr=default ;;
        no_memset) tr=kernel,memcpy,runtime,sync,memory,nvtx,overhead ;;
        no_sync) tr=kernel,memcpy,memset,runtime,memory,nvtx,overhead ;;
        no_memory) tr=kernel,memcpy,memset,runtime,sync,nvtx,overhead ;;
        no_nvtx) tr=cuda,overhead ;;
        no_overhead) tr=cuda,nvtx ;;
        minimal) tr=kernel,memcpy,memset,runtime ;;
        profiler) mode=profiler ;;
      esac
      pre=(); [ -n "$tr" ] && pre=("$G" -f -o /tmp/gb/k_$cfg.gtrace --trace=$tr --)
      echo "torch cfg=$cfg rep=$rep $(timeout 90 "${pre[@]}" python3 bench/collector/torch_loop.py --mode $mode 2>&1 | grep -E 'median_ms|finalized' | tr '\n' ' ')" | tee -a "$B"
    done
  done
  "$G" -f -o /tmp/gb/k_summary.gtrace -- python3 bench/collector/torch_loop.py --iters 100 2>&1 | grep -v '^ ' | tee -a "$B"
  "$C/gtrace_check" /tmp/gb/k_summary.gtrace --dump | grep -v '^thread\|^api' | tee -a "$B"
  echo "total $(( $(date +%s) - t_start )) s" | tee -a "$B"
fi

if [ "$PHASE" = final ]; then
  # The overhead numbers of docs/benchmarks.md: the default trace as shipped, the previous design
  # (GTRACE_API=activity: CUPTI's RUNTIME and SYNCHRONIZATION kinds), torch.profiler, plain; rounds alternate
  # until BUDGET_S. Correctness of the shipped default first.
  B=$OUT/final.txt
  : >"$B"
  t_start=$(date +%s)
  for k in memcpy streams multithread nvtx; do
    step "f_$k" "$G" -f -o "$T/f_$k.gtrace" -- "$C/gt_k_$k"
    "$C/gtrace_check" "$T/f_$k.gtrace" $k | grep -v '^note' | tee -a "$B"
  done
  step f_torch_train "$G" -f -o "$T/f_torch_train.gtrace" -- python3 bench/collector/torch_loop.py --train --iters 40
  "$C/gtrace_check" "$T/f_torch_train.gtrace" torch_train | grep -v '^note' | tee -a "$B"
  for t in f_streams f_torch_train; do "$C/gtrace_check" "$T/$t.gtrace" --dump | grep '^counters\|Synchronize\|WaitEvent' | tee -a "$B"; done
  for rep in 1 2 3 4 5 6 7 8 9; do
    if [ $(( $(date +%s) - t_start )) -gt "${BUDGET_S:-330}" ]; then echo "budget: stopped before round $rep" | tee -a "$B"; break; fi
    for cfg in plain default previous profiler; do
      envs=(); pre=("$G" -f -o /tmp/gb/f_$cfg.gtrace --); mode=plain
      case $cfg in plain) pre=() ;; previous) envs=(GTRACE_API=activity) ;; profiler) pre=(); mode=profiler ;; esac
      echo "torch cfg=$cfg rep=$rep $(env "${envs[@]}" timeout 90 "${pre[@]}" python3 bench/collector/torch_loop.py --mode $mode 2>&1 | grep -E 'median_ms|finalized' | tr '\n' ' ')" | tee -a "$B"
    done
    for cfg in plain kernel default; do
      pre=("$G" -q -f -o /tmp/gb/l_$cfg.gtrace --)
      case $cfg in plain) pre=() ;; kernel) pre=("$G" -q -f -o /tmp/gb/l_$cfg.gtrace --trace=kernel --) ;; esac
      echo "launch cfg=$cfg rep=$rep $(timeout 60 "${pre[@]}" "$C/gt_bench_launch" --launches=50000 --reps=5 2>&1 | grep launch_bench)" | tee -a "$B"
    done
    for cfg in plain default; do
      pre=("$G" -q -f -o /tmp/gb/s_$cfg.gtrace --); [ $cfg = plain ] && pre=()
      echo "spin20 cfg=$cfg rep=$rep $(timeout 60 "${pre[@]}" "$C/gt_bench_launch" --launches=5000 --reps=3 --spin_us=20 2>&1 | grep launch_bench)" | tee -a "$B"
    done
  done
  "$C/gtrace_check" /tmp/gb/f_default.gtrace --dump | grep -v '^thread' | tee -a "$B"
  echo "total $(( $(date +%s) - t_start )) s" | tee -a "$B"
fi

if [ "$PHASE" = spin ]; then
  # GPU-bound overhead (kernels of 20 and 50 us back to back, the CPU far ahead): plain, kernels only, the
  # default trace, and the default trace with CUPTI's device-buffer attributes changed (GTRACE_CUPTI_ATTRS).
  # Rounds alternate until BUDGET_S.
  B=$OUT/spin.txt
  : >"$B"
  t_start=$(date +%s)
  cfgs="plain kernel default dbuf32 pinned prealloc"
  for rep in $(seq 1 ${ROUNDS:-11}); do
    if [ $(( $(date +%s) - t_start )) -gt "${BUDGET_S:-200}" ]; then echo "budget: stopped before round $rep" | tee -a "$B"; break; fi
    for cfg in $cfgs; do
      envs=(); pre=("$G" -q -f -o /tmp/gb/s_$cfg.gtrace --)
      case $cfg in
        plain) pre=() ;;
        kernel) pre=("$G" -q -f -o /tmp/gb/s_$cfg.gtrace --trace=kernel --) ;;
        dbuf32) envs=(GTRACE_CUPTI_ATTRS=device_buffer_mb=32) ;;
        pinned) envs=(GTRACE_CUPTI_ATTRS=host_pinned=1) ;;
        prealloc) envs=(GTRACE_CUPTI_ATTRS=prealloc=16,pool_limit=512) ;;
      esac
      for us in 20 50; do
        echo "spin$us cfg=$cfg rep=$rep $(env "${envs[@]}" timeout 60 "${pre[@]}" "$C/gt_bench_launch" --launches=5000 --reps=3 --spin_us=$us 2>&1 | grep -E 'launch_bench|GTRACE' | tr '\n' ' ')" | tee -a "$B"
      done
    done
  done
  echo "total $(( $(date +%s) - t_start )) s" | tee -a "$B"
fi

if [ "$PHASE" = quick ]; then
  # The two C++ overhead figures alone: launch-bound loop and 20 us kernels, plain / kernels only / default,
  # ROUNDS alternating rounds (about 45 s for 7).
  B=$OUT/quick.txt
  : >"$B"
  for rep in $(seq 1 ${ROUNDS:-7}); do
    for cfg in plain kernel default; do
      pre=("$G" -q -f -o /tmp/gb/q_$cfg.gtrace --)
      case $cfg in plain) pre=() ;; kernel) pre=("$G" -q -f -o /tmp/gb/q_$cfg.gtrace --trace=kernel --) ;; esac
      echo "launch cfg=$cfg rep=$rep $(timeout 60 "${pre[@]}" "$C/gt_bench_launch" --launches=50000 --reps=5 2>&1 | grep launch_bench)" | tee -a "$B"
      echo "spin20 cfg=$cfg rep=$rep $(timeout 60 "${pre[@]}" "$C/gt_bench_launch" --launches=5000 --reps=3 --spin_us=20 2>&1 | grep launch_bench)" | tee -a "$B"
    done
  done
fi

if [ "$PHASE" = serial ]; then
  # 20 us kernels, narrow (1 thread) and wide (132 blocks x 256 threads): plain, kernels only, the default
  # trace, and the default trace with CUPTI's serialized KERNEL kind (GTRACE_KERNEL_ACTIVITY=serial), which
  # times kernels without instrumenting them. ROUNDS alternating rounds.
  B=$OUT/serial.txt
  : >"$B"
  for rep in $(seq 1 ${ROUNDS:-7}); do
    for cfg in plain kernel default serial; do
      envs=(); pre=("$G" -q -f -o /tmp/gb/k_$cfg.gtrace --)
      case $cfg in
        plain) pre=() ;;
        kernel) pre=("$G" -q -f -o /tmp/gb/k_$cfg.gtrace --trace=kernel --) ;;
        serial) envs=(GTRACE_KERNEL_ACTIVITY=serial) ;;
      esac
      for shape in "1 1" "132 256"; do
        set -- $shape
        echo "spin20 cfg=$cfg rep=$rep $(env "${envs[@]}" timeout 60 "${pre[@]}" "$C/gt_bench_launch" --launches=5000 --reps=3 --spin_us=20 --blocks=$1 --threads=$2 2>&1 | grep -E 'launch_bench|GTRACE' | tr '\n' ' ')" | tee -a "$B"
      done
    done
  done
  "$C/gtrace_check" /tmp/gb/k_serial.gtrace --dump 2>&1 | grep -v '^thread' | head -30 | tee -a "$B"
fi

tar czf "$OUT/suite.tar.gz" -C "$OUT" t && ls -la "$OUT"
