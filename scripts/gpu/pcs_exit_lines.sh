#!/usr/bin/env bash
# PC-sampling source lines at exit (device tool, .device-carry/pcs carried): the fence's before-exit hook must
# leave (almost) no lookup refused. PyTorch loop runs (cubins without line info: the refused count is what
# changes) and a -lineinfo probe (lines resolved), each with GTRACE_PCS_VERBOSE's totals line.
#   OUT=$OUT bash scripts/gpu/pcs_exit_lines.sh [RUNS]
set -u
C=$PWD/.device-carry/pcs
export LD_LIBRARY_PATH=$C/lib PYTHONUNBUFFERED=1 GTRACE_PCS_VERBOSE=1
for i in $(seq 1 "${1:-4}"); do
  timeout -s KILL 120 "$C/gcollect" -f -o /tmp/pt.$i.gtrace --pc-sampling -- python3 "$C/torch_transformer.py" \
    > /tmp/pt.$i.log 2>&1
  echo "torch $i rc=$? $(grep -c 'steps' /tmp/pt.$i.log) $(grep -m1 'line lookups' /tmp/pt.$i.log | sed 's/.*cubins kept/cubins kept/')"
  grep -E -m2 "SIGSEGV|SIGBUS|Segmentation|fatal" /tmp/pt.$i.log
done
for k in strided copy; do
  timeout -s KILL 60 "$C/gcollect" -f -o /tmp/$k.gtrace --pc-sampling -- "$C/gt_k_$k" > /tmp/$k.log 2>&1
  echo "$k rc=$? $(grep -m1 'line lookups' /tmp/$k.log | sed 's/.*cubins kept/cubins kept/')"
done
cp /tmp/strided.gtrace "${OUT:-/tmp}/" 2>/dev/null
# A child forked after sampling began exits through exit(): the inherited hook must leave the parent's trace alone.
if [ -f "$C/fork_child.py" ]; then
  timeout -s KILL 90 "$C/gcollect" -f -o /tmp/fork.gtrace --pc-sampling -- python3 "$C/fork_child.py" > /tmp/fork.log 2>&1
  echo "fork rc=$? $(grep -m1 'fork_child' /tmp/fork.log) $(grep -m1 'line lookups' /tmp/fork.log | sed 's/.*cubins kept/cubins kept/')"
  grep -E -m3 "SIGSEGV|SIGBUS|Segmentation|fatal|rror" /tmp/fork.log
fi
