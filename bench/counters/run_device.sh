#!/usr/bin/env bash
# Runs on the GPU machine: for every ground-truth workload in kernels/, collects counters with
# `gcollect --counters` (timeline run + counters run + join) in both cache modes (`--cache-control all`: gtrace's
# own replay, L2 flushed before each pass; `--cache-control none`: CUPTI's kernel replay), and with ncu for the
# same metrics under both cache modes (`ncu --clock-control none`, whose default is --cache-control all, run
# twice so that ncu's own run-to-run agreement is the baseline, and `--cache-control none`); times gcollect's
# default set against `ncu --set full`; records --counters-only traces.
# Everything lands in OUT_DIR for compare.py.
#
#   bench/counters/run_device.sh BIN_DIR OUT_DIR
# BIN_DIR holds gcollect, libgtrace_inject.so, gtrace-counters and the gt_k_* workloads (built on any x86-64
# machine with CUDA 13: sm_90 code runs on the H200 unchanged). FULL=0 skips the `ncu --set full` timings;
# SUITE=1 also records the multi-process CI fixtures (suite.gtrace: --cache-control none; suite_cache_all.gtrace:
# the default). BUDGET_S (default 360) stops starting
# slow optional steps once that many seconds have passed.
set -u
B=$(cd "$1" && pwd)
O=$2
mkdir -p "$O"
cd "$O"
export PATH="$B:$PATH"
# gcollect and gtrace-counters need libzstd.so.1; the carry folder brings one when the machine lacks it.
if ! ldconfig -p | grep -q libzstd.so.1; then export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
T="timeout -s KILL 150"  # no single step may eat the device budget
BEGIN=$(date +%s)
BUDGET_S=${BUDGET_S:-360}
left() { [ $(( $(date +%s) - BEGIN )) -lt "$BUDGET_S" ]; }

# name|args: small problem sizes, so `ncu --set full` (~40 passes a launch) finishes in seconds.
WORKLOADS=(
  "copy|--mib=256 --iters=2"
  "fma|--iters=2"
  "strided|--iters=2"
  "atomics|--iters=2"
  "syncdiv|--iters=2"
  "bank_conflicts|--iters=2"
  "tiny_burst|--count=20"
  "graph|--iters=3"
)

# The hardware metrics of the default set (launch__/profiler__ values are gtrace's own, not counters).
METRICS=$(gtrace-counters plan --counters default --list | awk '/^  [a-z]/{print $1}' | paste -sd, -)
{
  echo "metrics: $(echo "$METRICS" | tr ',' '\n' | wc -l)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
  ncu --version
} > "$O/env.txt" 2>&1

now() { date +%s.%N; }
# ncu also reports the launch attributes gtrace records (registers and static shared memory come from the driver).
LAUNCH=launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_static
LAUNCH+=,launch__shared_mem_per_block_dynamic
NCU="ncu --clock-control none --metrics $METRICS,$LAUNCH --csv --page raw --print-units base --print-kernel-base function"
echo "workload,plain_s,gcollect_counters_none_s,ncu_same_metrics_s,gcollect_counters_all_s,ncu_full_s" \
  > "$O/walltime.csv"
[ "${SUITE_ONLY:-0}" = 1 ] && WORKLOADS=()
for w in "${WORKLOADS[@]}"; do
  name=${w%%|*}
  args=${w#*|}
  # ONLY=graph,copy: just those workloads.
  if [ -n "${ONLY:-}" ] && [[ ",$ONLY," != *",$name,"* ]]; then continue; fi
  bin="$B/gt_k_$name"
  echo "=== $name $args ($(( $(date +%s) - BEGIN )) s)"
  t0=$(now); "$bin" $args > /dev/null 2>&1; t1=$(now)
  $T gcollect --counters --cache-control none -f -o "$O/$name.gtrace" -- "$bin" $args > /dev/null \
    2> "$O/$name.gcollect.log"
  # The app's exit status under gcollect: the workloads check their results (graph: replayed launches ran
  # once each, memory restored).
  echo "gcollect exit status $?" >> "$O/$name.gcollect.log"; t2=$(now)
  cat "$O/$name.gcollect.log"
  gtrace-counters dump "$O/$name.gtrace" > "$O/$name.gtrace.csv" 2>> "$O/$name.gcollect.log"
  $T $NCU "$bin" $args > "$O/$name.ncu.csv" 2> "$O/$name.ncu.log"; t3=$(now)
  $T $NCU "$bin" $args > "$O/$name.ncu2.csv" 2>> "$O/$name.ncu.log"
  $T $NCU --cache-control none "$bin" $args > "$O/$name.ncu_nocache.csv" 2>> "$O/$name.ncu.log"
  t3b=$(now)
  $T gcollect --counters --cache-control all -f -o "$O/$name.flush.gtrace" -- "$bin" $args > /dev/null \
    2> "$O/$name.flush.gcollect.log"
  echo "gcollect exit status $?" >> "$O/$name.flush.gcollect.log"
  t4=$(now); t5=$t4
  cat "$O/$name.flush.gcollect.log"
  gtrace-counters dump "$O/$name.flush.gtrace" > "$O/$name.flush.gtrace.csv" 2>> "$O/$name.flush.gcollect.log"
  if [ "${FULL:-1}" = 1 ] && left; then
    $T ncu --clock-control none --set full -f -o "$O/$name.full" "$bin" $args > /dev/null 2>> "$O/$name.ncu.log"
    t5=$(now)
    rm -f "$O/$name.full.ncu-rep"
  fi
  echo "$name $t0 $t1 $t2 $t3 $t3b $t4 $t5" |
    awk '{full = $8 > $7 ? sprintf("%.2f", $8-$7) : "-";
          printf "%s,%.2f,%.2f,%.2f,%.2f,%s\n",$1,$3-$2,$4-$3,$5-$4,$7-$6,full}' \
    >> "$O/walltime.csv"
done

# Counters only: one run, no timeline (the viewer must open it).
$T gcollect --counters-only -f -o "$O/copy.conly.gtrace" -- "$B/gt_k_copy" --mib=256 --iters=2 > /dev/null \
  2> "$O/copy.conly.log"
cat "$O/copy.conly.log"
gtrace-counters dump "$O/copy.conly.gtrace" > "$O/copy.conly.csv" 2>> "$O/copy.conly.log"
$T gcollect --counters-only -f -o "$O/graph.conly.gtrace" -- "$B/gt_k_graph" --iters=3 > /dev/null \
  2> "$O/graph.conly.log"
echo "gcollect exit status $?" >> "$O/graph.conly.log"
cat "$O/graph.conly.log"
gtrace-counters dump "$O/graph.conly.gtrace" > "$O/graph.conly.csv" 2>> "$O/graph.conly.log"

if [ "${SUITE:-0}" = 1 ]; then
  # The CI fixture: several workloads as child processes of one shell (exercises the multi-process join).
  SUITE="$B/gt_k_copy --mib=64 --iters=2; $B/gt_k_fma --iters=1 --loops=512; $B/gt_k_strided --mib=64 --iters=1;"
  SUITE+=" $B/gt_k_atomics --iters=1; $B/gt_k_syncdiv --iters=1; $B/gt_k_bank_conflicts --iters=1;"
  SUITE+=" $B/gt_k_tiny_burst --count=50"
  $T gcollect --counters --cache-control none -f -o "$O/suite.gtrace" -- bash -c "$SUITE" > /dev/null \
    2> "$O/suite.gcollect.log"
  $T gcollect --counters -f -o "$O/suite_cache_all.gtrace" -- bash -c "$SUITE" > /dev/null \
    2> "$O/suite_cache_all.gcollect.log"
  cat "$O/suite_cache_all.gcollect.log"
  cat "$O/suite.gcollect.log"
fi
cat "$O/walltime.csv"
echo "total $(( $(date +%s) - BEGIN )) s"
