#!/usr/bin/env bash
# Two-GPU suite for issue 15 (device tool, kind nvidia-h200-x2, .device-carry/dist carried):
#   prepare here: bash scripts/gpu/dist_suite.sh --carry [BUILD]
#   run there:    bash scripts/gpu/dist_suite.sh
# DDP (with a straggler), FSDP and a plain all-reduce loop, each under one gcollect around torchrun and under one
# gcollect per rank (as if on two nodes); merges with the collective-based alignment forced (the truth is 0 on
# one host); NCCL payload records; gtrace stats' cross-rank section; the overhead of gcollect on a 2-GPU DDP
# step against plain runs interleaved in the same call. Writes $OUT/dist_suite.txt and $OUT/dist_traces.tar.gz.
set -u
if [ "${1:-}" = --carry ]; then
  B=${2:-build/native}; C=.device-carry/dist; rm -rf $C; mkdir -p $C/lib
  cp $B/collector/gcollect $B/collector/libgtrace_inject.so $B/collector/gtrace_check $B/viewer/cli/gtrace $C/
  strip --strip-debug $C/g* $C/lib*.so
  for l in libzstd.so.1 libsqlite3.so.0 libcpp-httplib.so.0.11 libbrotlidec.so.1 libbrotlienc.so.1 libbrotlicommon.so.1; do
    cp -L /lib/x86_64-linux-gnu/$l $C/lib/
  done
  du -sh $C; exit 0
fi
C=$PWD/.device-carry/dist
export LD_LIBRARY_PATH=$C/lib:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gtrace-out}; mkdir -p $OUT
R=$OUT/dist_suite.txt; : >"$R"
N=$(nvidia-smi -L | wc -l)
D=/tmp/gd; rm -rf $D; mkdir -p $D
TR="torchrun --standalone --nproc_per_node=$N"
W=bench/collector
log() { echo "$*" | tee -a "$R"; }
step() { log; log "== $(date +%T) $*"; }
ranks_info() { for f in "$@"; do log "-- $(basename $f): $(stat -c %s $f) bytes"; "$C/gtrace" info $f | grep -E "^Format|^Status|Time span|^  pid|rank [0-9]|nvtx_arg|nvtx  |kernel  |Losses" -A0 >>"$R" 2>&1; done; }
nccl_stats() { "$C/gtrace" stats "$1" | sed -n '/^NCCL collectives/,/^$/p' >>"$R" 2>&1; "$C/gtrace" stats --json "$1" >$D/$(basename $1 .gtrace).stats.json 2>>"$R"; }

step "machine"
nvidia-smi -L | tee -a "$R"
python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())" 2>&1 | tee -a "$R"

step "overhead: DDP 2 ranks, 300 steps (20 warm-up), plain and under gcollect, interleaved x3"
for i in 1 2 3; do
  log "plain $i: $(timeout 120 $TR $W/torch_ddp.py --steps 300 --warmup 20 2>&1 | grep -o 'rank [0-9].*step_ms=[0-9.]*' | sed 's/: .*step_ms=/ /' | tr '\n' ' ')"
  log "gcollect $i: $(timeout 150 $C/gcollect -q -o $D/ov_$i -- $TR $W/torch_ddp.py --steps 300 --warmup 20 2>&1 | grep -o 'rank [0-9].*step_ms=[0-9.]*' | sed 's/: .*step_ms=/ /' | tr '\n' ' ')"
done
ls -la $D/ov_1.gtrace >>"$R" 2>&1

for wl in "ddp:$W/torch_ddp.py --steps 30 --warmup 3 --straggler 1 --straggle-ms 20 --every 10" \
          "fsdp:$W/torch_fsdp.py --steps 12 --straggler 1 --straggle-ms 15 --every 4" \
          "allreduce:$W/torch_allreduce.py --sizes-mb 1,8,64 --iters 10"; do
  name=${wl%%:*}; cmd=${wl#*:}
  step "$name under one gcollect: gcollect -o ${name}_job -- $TR $cmd"
  timeout 200 $C/gcollect -q -o $D/${name}_job -- $TR $cmd 2>&1 | grep -v "^W1\|OMP_NUM\|\*\*\*\*" | tail -5 | tee -a "$R"
  ranks_info $D/${name}_job.gtrace
  nccl_stats $D/${name}_job.gtrace
  step "$name under one gcollect per rank: $TR --no-python gcollect -o ${name}_rank_%q{RANK} -- python3 $cmd"
  timeout 200 $TR --no-python $C/gcollect -q -o "$D/${name}_rank_%q{RANK}" -- python3 $cmd 2>&1 | grep -v "^W1\|OMP_NUM\|\*\*\*\*" | tail -5 | tee -a "$R"
  ranks_info $D/${name}_rank_*.gtrace
  log "-- merge (same boot id: placed as recorded)"
  "$C/gtrace" merge -f -o $D/${name}_merged.gtrace $D/${name}_rank_*.gtrace >>"$R" 2>&1
  log "-- merge --align collectives (forced; the truth is 0 on one host)"
  /usr/bin/time -f "merge wall %e s, peak %M KB" "$C/gtrace" merge --align collectives -f -o $D/${name}_merged_c.gtrace $D/${name}_rank_*.gtrace >>"$R" 2>&1
  nccl_stats $D/${name}_merged.gtrace
done

step "NCCL payload records in the DDP job (first few decoded)"
"$C/gtrace_check" $D/ddp_job.gtrace --dump 2>/dev/null | grep -m12 "^nvtx_arg" >>"$R"
log "nvtx_arg records: $("$C/gtrace_check" $D/ddp_job.gtrace --dump 2>/dev/null | grep -c '^nvtx_arg')"
"$C/gtrace_check" $D/ddp_job.gtrace --dump 2>/dev/null | grep "dom='NCCL'" | sed "s/.*flags=\([0-9]*\).*dom='NCCL' /flags=\1 /" | sort | uniq -c | sort -rn | head -12 >>"$R"
step "files"
ls -la $D >>"$R"
(cd $D && tar czf $OUT/dist_traces.tar.gz --exclude='ov_*' *.gtrace *.stats.json)
ls -la $OUT >>"$R"
