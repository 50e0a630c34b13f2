#!/usr/bin/env bash
# Overhead next to Nsight Systems, on the H200 through the device tool (binaries from
#   GTRACE_CARRY=.device-carry/col bash scripts/gpu/collector_carry.sh build/native):
#   ROUNDS=7 bash scripts/gpu/nsys_compare.sh
# 20 us kernels and the launch loop: plain, gcollect (default trace), nsys (CUDA trace only), alternating rounds.
# The nsys there is the one ncu ships; its importer fails after the run, which does not affect the timing.
set -u
C=$PWD/.device-carry/col
N=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
if ! ldconfig -p | grep -q libzstd.so.1; then export LD_LIBRARY_PATH=$C/lib; fi
$N --version 2>&1 | head -3
mkdir -p /tmp/ns
for rep in $(seq 1 ${ROUNDS:-5}); do
  for cfg in plain gcollect nsys; do
    case $cfg in
      plain) pre=() ;;
      gcollect) pre=("$C/gcollect" -q -f -o /tmp/ns/g.gtrace --) ;;
      nsys) pre=("$N" profile --trace=cuda --sample=none --cpuctxsw=none --force-overwrite=true -o /tmp/ns/n) ;;
    esac
    echo "spin20 cfg=$cfg rep=$rep $(timeout 90 "${pre[@]}" "$C/gt_bench_launch" --launches=5000 --reps=3 --spin_us=20 2>&1 | grep -E 'launch_bench|rror' | head -3 | tr '\n' ' ')"
    echo "launch cfg=$cfg rep=$rep $(timeout 90 "${pre[@]}" "$C/gt_bench_launch" --launches=50000 --reps=5 2>&1 | grep -E 'launch_bench|rror' | head -3 | tr '\n' ' ')"
  done
done
ls -la /tmp/ns
