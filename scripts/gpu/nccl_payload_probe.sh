#!/usr/bin/env bash
# NCCL's NVTX payloads on a real job (device tool, 2 GPUs, .device-carry/dist carried): which payloads the
# injection decodes and which it refuses, with the first refusal of each kind as the trace's losses say.
# Writes $OUT/payloads.txt and $OUT/payload_traces.tar.gz.
set -u
C=$PWD/.device-carry/dist
export LD_LIBRARY_PATH=$C/lib:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gtrace-out}; mkdir -p $OUT; R=$OUT/payloads.txt; : >$R
N=$(nvidia-smi -L | wc -l); D=/tmp/gp; rm -rf $D; mkdir -p $D
for wl in "ddp:bench/collector/torch_ddp.py --steps 6 --warmup 1" "allreduce:bench/collector/torch_allreduce.py --sizes-mb 1 --iters 4"; do
  name=${wl%%:*}; cmd=${wl#*:}
  echo "== $name: gcollect -- torchrun --nproc_per_node=$N $cmd" >>$R
  timeout 200 $C/gcollect -q -o $D/$name -- torchrun --standalone --nproc_per_node=$N $cmd >>$R 2>&1
  $C/gtrace info $D/$name.gtrace | sed -n '/^Losses/,/^Load/p' >>$R
  $C/gtrace_check $D/$name.gtrace --dump | grep "dom='NCCL'" | sed "s/.*dom='NCCL' //" | sort | uniq -c >>$R
  echo "nvtx_arg records: $($C/gtrace_check $D/$name.gtrace --dump | grep -c '^nvtx_arg')" >>$R
  $C/gtrace stats $D/$name.gtrace | sed -n '/^NCCL collectives/,/^$/p' >>$R
done
(cd $D && tar czf $OUT/payload_traces.tar.gz *.gtrace)
cat $R
