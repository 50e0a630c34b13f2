#!/usr/bin/env bash
# Copies what bench/counters/run_device.sh needs from a build dir into .device-carry/ctr/ (ignored by git,
# carried to the GPU machine by the run tool), stripped:  bash bench/counters/carry.sh [build/k1]
set -euo pipefail
B=${1:-build/k1}
C=.device-carry/ctr
rm -rf "$C"
mkdir -p "$C/lib"
cp "$B/collector/gcollect" "$B/collector/libgtrace_inject.so" "$B/collector/counters/gtrace-counters" "$C/"
for k in copy fma strided atomics syncdiv bank_conflicts tiny_burst graph; do cp "$B/kernels/gt_k_$k" "$C/"; done
cp -L /lib/x86_64-linux-gnu/libzstd.so.1 "$C/lib/"
strip --strip-debug "$C/gcollect" "$C/libgtrace_inject.so" "$C/gtrace-counters" "$C"/gt_k_*
du -sh "$C"
