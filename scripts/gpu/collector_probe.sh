#!/usr/bin/env bash
# Short follow-up probe on the H200 (device tool, .device-carry/collector carried): Ctrl-C finalization under load,
# and which record kinds cost time in the PyTorch loop. Writes $OUT/probe.txt.
set -u
C=$PWD/.device-carry/collector
G=$C/gcollect
OUT=${OUT:-/tmp/gtrace-out}
P=$OUT/probe.txt
mkdir -p /tmp/gp
: >"$P"
( "$G" -o /tmp/gp/sigint.gtrace -- "$C/gt_k_tiny_burst" --count=3000000 >/tmp/gp/sigint.log 2>&1 & p=$!; sleep 4; kill -INT $p; wait $p; echo "sigint rc=$?" >>"$P" )
grep -E "signal|DROPPED|trace:" /tmp/gp/sigint.log >>"$P"
"$C/gtrace_check" /tmp/gp/sigint.gtrace --dump | grep "^loss\|^process" >>"$P"
for rep in 1 2 3; do
  for cfg in plain default kernel cuda_nvtx kernel_runtime; do
    case $cfg in
      plain) pre=() ;;
      default) pre=("$G" -q -f -o /tmp/gp/t.gtrace --) ;;
      kernel) pre=("$G" -q -f -o /tmp/gp/t.gtrace --trace=kernel --) ;;
      cuda_nvtx) pre=("$G" -q -f -o /tmp/gp/t.gtrace --trace=cuda,nvtx --) ;;
      kernel_runtime) pre=("$G" -q -f -o /tmp/gp/t.gtrace --trace=kernel,runtime --) ;;
    esac
    echo "torch cfg=$cfg rep=$rep $(timeout 120 "${pre[@]}" python3 bench/collector/torch_loop.py --mode plain 2>&1 | grep median_ms)" >>"$P"
  done
done
cat "$P"
