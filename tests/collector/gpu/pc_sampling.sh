#!/usr/bin/env bash
# gcollect --pc-sampling on the H200 (device tool; binaries in .device-carry/pcs, see the copy step in
# docs/benchmarks.md "PC sampling"). For every kernels/ workload: a timeline run without sampling and one with
# --pc-sampling (kernel durations compared, samples, drops, dominant reasons), the period swept on copy, the
# GetData-from-launch-callbacks variant, a PyTorch loop, and the small multi-process trace committed as
# tests/data/pcsampling_h200.gtrace. Writes $OUT/pcs_summary.txt and $OUT/pcs.tar.gz (traces + logs).
#   bash tests/collector/gpu/pc_sampling.sh [all|long]   (long: a 4 s workload and PyTorch, GetData variants)
set -u
PHASE=${1:-all}
C=$PWD/.device-carry/pcs
OUT=${OUT:-/tmp/gtrace-out}
T=/tmp/pcs
rm -rf "$T"; mkdir -p "$T"
S=$OUT/pcs_summary.txt
G=$C/gcollect
if ! ldconfig -p | grep -q libzstd.so.1; then export LD_LIBRARY_PATH=$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
export PYTHONUNBUFFERED=1
K="timeout -s KILL 60"
: >"$S"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >>"$S" 2>&1

now() { date +%s.%N; }
run() {  # run NAME ARGS... : plain timeline + --pc-sampling, wall times, dump of both
  local name=$1 bin=$C/gt_k_$2; shift 2
  local t0 t1 t2
  t0=$(now); $K "$G" -q -f -o "$T/$name.plain.gtrace" -- "$bin" "$@" >"$T/$name.plain.log" 2>&1
  t1=$(now); GTRACE_PCS_VERBOSE=1 $K "$G" -f --pc-sampling -o "$T/$name.pcs.gtrace" -- "$bin" "$@" >"$T/$name.pcs.log" 2>&1
  local rc=$?; t2=$(now)
  echo "### $name ($*): rc=$rc wall plain $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s, pcs $(awk "BEGIN{printf \"%.2f\", $t2 - $t1}") s" >>"$S"
  grep -E "gtrace pc sampling: [0-9]+ (samples|GetData)|error|warning|CUPTI" "$T/$name.pcs.log" | head -8 >>"$S"
  grep -m1 "stall reasons:" "$T/$name.pcs.log" | cut -c1-1500 >>"$S"
  "$C/gt_pcs_dump" "$T/$name.plain.gtrace" | grep "^kernel" | sed 's/^/plain /' >>"$S"
  "$C/gt_pcs_dump" "$T/$name.pcs.gtrace" >>"$S" 2>&1
}

torch_run() {  # torch_run NAME ENV... : the PyTorch loop under --pc-sampling with extra environment
  local name=$1; shift
  local t0; t0=$(now)
  env "$@" timeout -s KILL 90 "$G" -f --pc-sampling -o "$T/torch.$name.gtrace" -- python3 bench/collector/torch_loop.py --iters 2000 >"$T/torch.$name.log" 2>&1
  echo "### torch $name ($*): rc=$? wall $(awk "BEGIN{printf \"%.2f\", $(now) - $t0}") s $(grep -m1 median "$T/torch.$name.log")" >>"$S"
  grep -vE "GetData ctx|^  " "$T/torch.$name.log" | tail -25 | cut -c1-300 >>"$S"
  "$C/gt_pcs_dump" "$T/torch.$name.gtrace" 2>&1 | grep -E "^==|^loss|samples at|of samples" | head -30 | cut -c1-300 >>"$S"
}
if [ "$PHASE" = long ]; then
  run fma_long fma --iters=3000
  grep -c "GetData ctx" "$T/fma_long.pcs.log" >>"$S"
  run copy copy --mib=1024 --iters=5
  t0=$(now); timeout -s KILL 90 "$G" -f -o "$T/torch.plain.gtrace" -- python3 bench/collector/torch_loop.py --iters 2000 >"$T/torch.plain.log" 2>&1
  echo "### torch plain: rc=$? wall $(awk "BEGIN{printf \"%.2f\", $(now) - $t0}") s $(grep -m1 median "$T/torch.plain.log")" >>"$S"
  torch_run verbose GTRACE_PCS_VERBOSE=1
  torch_run nolines GTRACE_PCS_VERBOSE=1 GTRACE_PCS_NO_LINES=1
  torch_run launch GTRACE_PCS_VERBOSE=1 GTRACE_PCS_GETDATA=launch
  tar -C "$T" -czf "$OUT/pcs.tar.gz" --exclude='torch.*.gtrace' . 2>/dev/null
  cat "$S"
  exit 0
fi

run copy copy --mib=1024 --iters=5
run fma fma --iters=3
run strided strided --iters=3
run atomics atomics --iters=2
run syncdiv syncdiv --iters=3
run bank_conflicts bank_conflicts --iters=3
run tiny_burst tiny_burst --count=2000

# Period sweep and the GetData-on-launch variant (copy).
for e in 7 8 12 14; do
  t0=$(now); $K "$G" -f --pc-sampling=$e -o "$T/copy.p$e.gtrace" -- "$C/gt_k_copy" --mib=1024 --iters=5 >"$T/copy.p$e.log" 2>&1
  echo "### copy period 2^$e: wall $(awk "BEGIN{printf \"%.2f\", $(now) - $t0}") s" >>"$S"
  grep -E "gtrace pc sampling: [0-9]+ samples" "$T/copy.p$e.log" >>"$S"
  "$C/gt_pcs_dump" "$T/copy.p$e.gtrace" | grep -E "^kernel|^loss pc_sampling" >>"$S"
done
GTRACE_PCS_GETDATA=launch $K "$G" -f --pc-sampling -o "$T/copy.launch.gtrace" -- "$C/gt_k_copy" --mib=1024 --iters=5 >"$T/copy.launch.log" 2>&1
echo "### copy, GetData from launch callbacks" >>"$S"
grep -E "gtrace pc sampling: [0-9]+ samples" "$T/copy.launch.log" >>"$S"

# Bad flag: a clear error, exit 2.
"$G" --pc-sampling=3 -- /bin/true >"$T/badflag.log" 2>&1; echo "### bad flag rc=$? $(head -1 "$T/badflag.log")" >>"$S"

# The CI fixture: four workloads as children of one shell, small sizes.
B=$C/gt_k_
SUITE="${B}copy --mib=64 --iters=2; ${B}fma --iters=1 --loops=512; ${B}atomics --iters=1; ${B}syncdiv --iters=1"
$K "$G" -f --pc-sampling -o "$T/pcsampling_h200.gtrace" -- bash -c "$SUITE" >"$T/fixture.log" 2>&1
echo "### fixture rc=$? size $(stat -c %s "$T/pcsampling_h200.gtrace")" >>"$S"
"$C/gt_pcs_dump" "$T/pcsampling_h200.gtrace" >>"$S" 2>&1
cp "$T/pcsampling_h200.gtrace" "$OUT/"

# PyTorch (many modules, large cubins): timeline with and without sampling.
if timeout 60 python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  for mode in plain pcs; do
    flag=(); [ $mode = pcs ] && flag=(--pc-sampling)
    t0=$(now)
    timeout -s KILL 90 "$G" -f "${flag[@]}" -o "$T/torch.$mode.gtrace" -- python3 bench/collector/torch_loop.py --iters 50 >"$T/torch.$mode.log" 2>&1
    echo "### torch $mode: rc=$? wall $(awk "BEGIN{printf \"%.2f\", $(now) - $t0}") s $(grep -m1 median "$T/torch.$mode.log")" >>"$S"
    grep -E "gtrace pc sampling: [0-9]+ samples|error" "$T/torch.$mode.log" | head -5 >>"$S"
  done
  "$C/gt_pcs_dump" "$T/torch.pcs.gtrace" | head -80 >>"$S" 2>&1
fi
tar -C "$T" -czf "$OUT/pcs.tar.gz" --exclude='torch.*.gtrace' . 2>/dev/null
ls -la "$OUT"
cat "$S"
