#!/usr/bin/env bash
# Distributed recording on a GPU machine (device tool, .device-carry/dist carried): torchrun workers recorded
# under one gcollect and under one gcollect per rank (-o %q{RANK}), their ranks and exit status, NCCL's NVTX
# ranges, and gtrace merge of the per-rank files. Writes $OUT/dist.txt. Ranks = GPUs on the machine.
set -u
C=$PWD/.device-carry/dist
export LD_LIBRARY_PATH=$C/lib:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gtrace-out}
R=$OUT/dist.txt
N=$(nvidia-smi -L | wc -l)
D=/tmp/gd; rm -rf $D; mkdir -p $D
: >"$R"
echo "== $N GPU(s); one gcollect around torchrun; rank 0 exits 3" >>"$R"
"$C/gcollect" -q -o $D/job -- torchrun --standalone --nproc_per_node=$N bench/collector/torch_ddp.py --exit-code 3 >>"$R" 2>&1
echo "gcollect rc=$?" >>"$R"
"$C/gtrace" info $D/job.gtrace | grep -E "Format|^  pid|rank|host|boot_id" >>"$R"
echo "NCCL NVTX ranges left open (flags=8): $("$C/gtrace_check" $D/job.gtrace --dump | grep "dom='NCCL'" | grep -c 'flags=8')" >>"$R"
"$C/gtrace_check" $D/job.gtrace --dump | grep "dom='NCCL'" | grep -E "ncclComm" >>"$R"
"$C/gtrace" stats --top 12 $D/job.gtrace | sed -n '/idle/,/Kernels/p' | head -30 >>"$R"
echo "== one gcollect per rank: torchrun --no-python gcollect -o rank_%q{RANK}" >>"$R"
torchrun --standalone --nproc_per_node=$N --no-python "$C/gcollect" -q -o "$D/rank_%q{RANK}" -- python3 bench/collector/torch_ddp.py --exit-code 0 >>"$R" 2>&1
echo "torchrun rc=$?" >>"$R"
ls $D >>"$R"
for f in $D/rank_*.gtrace; do "$C/gtrace" info $f | grep -E "^  pid|rank " >>"$R"; done
"$C/gtrace" merge -o $D/merged.gtrace $D/rank_*.gtrace >>"$R" 2>&1
"$C/gtrace" merge --align collectives -f -o $D/merged_c.gtrace $D/rank_*.gtrace >>"$R" 2>&1
"$C/gtrace" stats $D/merged.gtrace | sed -n '/NCCL collectives/,$p' >>"$R"
echo "== bad pattern" >>"$R"
"$C/gcollect" -o "$D/x_%q{NO_SUCH_VAR}" -- /bin/true >>"$R" 2>&1; echo "rc=$?" >>"$R"
cp $D/job.gtrace $D/rank_0.gtrace $OUT/ 2>/dev/null
cat "$R"
