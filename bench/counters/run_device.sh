#!/usr/bin/env bash
# Runs on the GPU machine: for every ground-truth workload in kernels/, collects counters with gtrace (timeline
# run + counters run + join) and with `ncu --clock-control none --cache-control none` for the same metrics,
# times the default counter set against `ncu --set full`, and leaves everything in $OUT_DIR for compare.py.
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
echo "metrics: $(echo "$METRICS" | tr ',' '\n' | wc -l)" | tee "$O/env.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv >> "$O/env.txt" 2>&1
ncu --version >> "$O/env.txt" 2>&1

now() { date +%s.%N; }
counters_env() {
  env CUDA_INJECTION64_PATH="$B/libgtrace_inject.so" GTRACE_PARTS_DIR="$1" GTRACE_TRACE=kernel \
    GTRACE_MODULES=counters GTRACE_COUNTERS=default GTRACE_COUNTERS_PER_NAME=3 "${@:2}"
}

: > "$O/walltime.csv"
echo "workload,plain_s,gtrace_timeline_s,gtrace_counters_s,gtrace_total_s,ncu_full_s" >> "$O/walltime.csv"
for w in "${WORKLOADS[@]}"; do
  name=${w%%|*}
  args=${w#*|}
  bin="$B/gt_k_$name"
  echo "=== $name $args"
  t0=$(now); "$bin" $args > /dev/null 2>&1; t1=$(now)
  # 1) timeline run (gcollect), 2) counters run (the injection's counters module), 3) join.
  rm -rf "$O/$name.parts" "$O/$name.timeline.gtrace" "$O/$name.gtrace"
  mkdir -p "$O/$name.parts"
  gcollect -q -f -o "$O/$name.timeline.gtrace" -- "$bin" $args > /dev/null 2> "$O/$name.gcollect.log"; t2=$(now)
  counters_env "$O/$name.parts" "$bin" $args > /dev/null 2> "$O/$name.counters.log"; t3=$(now)
  gtrace-counters join "$O/$name.timeline.gtrace" "$O/$name.parts"/*.gtrace -o "$O/$name.gtrace" -f \
    2>> "$O/$name.counters.log"
  gtrace-counters dump "$O/$name.gtrace" > "$O/$name.gtrace.csv" 2>> "$O/$name.counters.log"
  cat "$O/$name.counters.log"
  # 4) ncu with the same metrics on every launch (the workloads launch each kernel a few times only).
  ncu --clock-control none --cache-control none --metrics "$METRICS" --csv --page raw \
    --print-units base --print-kernel-base function "$bin" $args > "$O/$name.ncu.csv" 2> "$O/$name.ncu.log"
  # 5) wall time of ncu's full set on the same app.
  t4=$(now)
  ncu --clock-control none --set full -f -o "$O/$name.full" "$bin" $args > /dev/null 2>> "$O/$name.ncu.log"
  t5=$(now)
  python3 - "$name" "$t0" "$t1" "$t2" "$t3" "$t4" "$t5" >> "$O/walltime.csv" <<'PY'
import sys
n, t0, t1, t2, t3, t4, t5 = sys.argv[1], *map(float, sys.argv[2:])
print(f"{n},{t1-t0:.2f},{t2-t1:.2f},{t3-t2:.2f},{t3-t1:.2f},{t5-t4:.2f}")
PY
  rm -f "$O/$name.full.ncu-rep"
done
cat "$O/walltime.csv"
