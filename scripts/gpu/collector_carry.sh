#!/usr/bin/env bash
# Copies the collector's GPU-suite binaries from a build dir into .device-carry/ (ignored by git, carried to the
# device machine by the run tool):  bash scripts/gpu/collector_carry.sh [BUILD [KERNELS_BUILD]]
# KERNELS_BUILD (default BUILD) provides the CUDA workloads and the launch benchmark, which rarely change.
set -euo pipefail
B=${1:-build/h2}
KB=${2:-$B}
C=${GTRACE_CARRY:-.device-carry/collector}
mkdir -p "$C/lib"
cp "$B/collector/gcollect" "$B/collector/libgtrace_inject.so" "$B/collector/libgtrace_osrt.so" "$B/collector/gtrace_check" "$C/"
cp "$KB"/kernels/gt_k_* "$C/"
cp "$KB/bench_collector_cuda/gt_bench_launch" "$C/" 2>/dev/null || cp "$KB/bench/collector/gt_bench_launch" "$C/"
cp -L /lib/x86_64-linux-gnu/libzstd.so.1 "$C/lib/"
strip --strip-debug "$C/gtrace_check" "$C/gcollect" "$C/libgtrace_inject.so" "$C/libgtrace_osrt.so" "$C"/gt_k_* "$C/gt_bench_launch"
du -sh "$C"
