#!/usr/bin/env bash
# Records the Nsight Compute import fixtures on the GPU machine (device tool): for each probe workload, the
# gcollect timeline of one run and `ncu --set full --csv --page raw` of the same command, in ncu's default
# units and with --print-units base, so the importer is tested on what users paste and the join on a real pair.
#   prepare here: bash scripts/gpu/collector_carry.sh build/native   (GTRACE_CARRY=.device-carry/col)
#   run there:    OUT=$OUT bash scripts/gpu/ncu_fixtures.sh
set -u
C=$PWD/${GTRACE_CARRY:-.device-carry/col}
O=/tmp/gt_ncu/ncu; rm -rf "$O"; mkdir -p "$O" "${OUT:=/tmp/gtrace-out}"
if ! ldconfig -p | grep -q libzstd.so.1; then export LD_LIBRARY_PATH=$C/lib; fi
T="timeout -s KILL 120"
W=("fma|--iters=1 --loops=256" "copy|--mib=64 --iters=2" "strided|--mib=64 --iters=1" "syncdiv|--iters=1"
   "bank_conflicts|--iters=1")
{ ncu --version; nvidia-smi --query-gpu=name,driver_version --format=csv; } > "$O/env.txt" 2>&1
for w in "${W[@]}"; do
  n=${w%%|*}; a=${w#*|}
  $T "$C/gcollect" -q -f -o "$O/$n.gtrace" -- "$C/gt_k_$n" $a > /dev/null 2> "$O/$n.gcollect.log"
  $T ncu --clock-control none --set full --csv --page raw "$C/gt_k_$n" $a > "$O/$n.ncu.csv" 2> "$O/$n.ncu.log"
  $T ncu --clock-control none --set full --csv --page raw --print-units base "$C/gt_k_$n" $a \
    > "$O/$n.ncu_base.csv" 2>> "$O/$n.ncu.log"
  echo "$n: $(wc -l < "$O/$n.ncu.csv") csv lines, $(stat -c %s "$O/$n.ncu.csv") bytes; $(tail -1 "$O/$n.gcollect.log")"
done
# Nsight Systems: the copy that ships with ncu (no standalone nsys in the image). Does it write a report and an
# SQLite export?
N=$(ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1)
if [ -n "$N" ]; then
  $N --version > "$O/nsys.log" 2>&1
  $T $N profile --trace=cuda,nvtx --sample=none --cpuctxsw=none --force-overwrite=true -o /tmp/nsys_nvtx \
    "$C/gt_k_nvtx" >> "$O/nsys.log" 2>&1; echo "profile rc=$?" >> "$O/nsys.log"
  ls -la /tmp/nsys_nvtx* >> "$O/nsys.log" 2>&1
  $T $N export --type sqlite --force-overwrite=true -o /tmp/nsys_nvtx.sqlite /tmp/nsys_nvtx.nsys-rep \
    >> "$O/nsys.log" 2>&1; echo "export rc=$?" >> "$O/nsys.log"
  [ -f /tmp/nsys_nvtx.sqlite ] && cp /tmp/nsys_nvtx.sqlite "$O/"
  ls "$(dirname "$N")" > "$O/nsys_dir.txt" 2>&1
fi
tail -5 "$O/nsys.log"
# One archive: the device tool brings back a limited number of files.
tar czf "$OUT/ncu.tgz" -C "$(dirname "$O")" ncu && ls -la "$OUT/ncu.tgz"
