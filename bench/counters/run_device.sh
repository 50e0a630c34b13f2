#!/usr/bin/env bash
# Runs on the GPU machine: for every ground-truth workload in kernels/, collects counters with
# `gcollect --counters` (timeline run + counters run + join) and with `ncu --clock-control none
# --cache-control none` for the same metrics, times gcollect's default set against `ncu --set full`, records a
# multi-process suite trace (the CI fixture) and leaves everything in OUT_DIR for compare.py.
#
#   bench/counters/run_device.sh BIN_DIR OUT_DIR
# BIN_DIR holds gcollect, libgtrace_inject.so, gtrace-counters and the gt_k_* workloads (built on any x86-64
# machine with CUDA 13: sm_90 code runs on the H200 unchanged).
set -u
B=$(cd "$1" && pwd)
O=$2
mkdir -p "$O"
cd "$O"
export PATH="$B:$PATH"
# gcollect and gtrace-counters need libzstd.so.1; the carry folder brings one when the machine lacks it.
if ! ldconfig -p | grep -q libzstd.so.1; then export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
T="timeout -s KILL 150"  # no single step may eat the device budget

# name|args: small problem sizes, so `ncu --set full` (~40 passes a launch) finishes in seconds.
WORKLOADS=(
  "copy|--mib=256 --iters=2"
  "fma|--iters=2"
  "strided|--iters=2"
  "atomics|--iters=2"
  "syncdiv|--iters=2"
  "bank_conflicts|--iters=2"
  "tiny_burst|--count=20"
)

# The hardware metrics of the default set (launch__/profiler__ values are gtrace's own, not counters).
METRICS=$(gtrace-counters plan --counters default --list | awk '/^  [a-z]/{print $1}' | paste -sd, -)
{
  echo "metrics: $(echo "$METRICS" | tr ',' '\n' | wc -l)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
  ncu --version
} > "$O/env.txt" 2>&1

now() { date +%s.%N; }
echo "workload,plain_s,gcollect_counters_s,ncu_same_metrics_s,ncu_full_s" > "$O/walltime.csv"
for w in "${WORKLOADS[@]}"; do
  name=${w%%|*}
  args=${w#*|}
  bin="$B/gt_k_$name"
  echo "=== $name $args"
  t0=$(now); "$bin" $args > /dev/null 2>&1; t1=$(now)
  $T gcollect --counters -f -o "$O/$name.gtrace" -- "$bin" $args > /dev/null 2> "$O/$name.gcollect.log"; t2=$(now)
  cat "$O/$name.gcollect.log"
  gtrace-counters dump "$O/$name.gtrace" > "$O/$name.gtrace.csv" 2>> "$O/$name.gcollect.log"
  $T ncu --clock-control none --cache-control none --metrics "$METRICS" --csv --page raw --print-units base \
    --print-kernel-base function "$bin" $args > "$O/$name.ncu.csv" 2> "$O/$name.ncu.log"; t3=$(now)
  $T ncu --clock-control none --set full -f -o "$O/$name.full" "$bin" $args > /dev/null 2>> "$O/$name.ncu.log"
  t4=$(now)
  rm -f "$O/$name.full.ncu-rep"
  echo "$name $t0 $t1 $t2 $t3 $t4" | awk '{printf "%s,%.2f,%.2f,%.2f,%.2f\n",$1,$3-$2,$4-$3,$5-$4,$6-$5}' \
    >> "$O/walltime.csv"
done

# The CI fixture: several workloads as child processes of one shell (exercises the multi-process join).
SUITE="$B/gt_k_copy --mib=64 --iters=2; $B/gt_k_fma --iters=1 --loops=512; $B/gt_k_strided --mib=64 --iters=1;"
SUITE+=" $B/gt_k_atomics --iters=1; $B/gt_k_syncdiv --iters=1; $B/gt_k_bank_conflicts --iters=1;"
SUITE+=" $B/gt_k_tiny_burst --count=50"
$T gcollect --counters -f -o "$O/suite.gtrace" -- bash -c "$SUITE" > /dev/null 2> "$O/suite.gcollect.log"
cat "$O/suite.gcollect.log"
cat "$O/walltime.csv"
ls -la "$O"
