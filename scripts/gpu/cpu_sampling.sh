#!/bin/bash
# Sampled CPU stacks on the GPU machine (issue 22; device tool, .device-carry/cpusample22 carried):
#   prepare here: bash scripts/gpu/cpu_sampling.sh --carry [BUILD]
#   run there:    bash .device-carry/cpusample22/cpu_sampling.sh
# Ground truth: bench/collector/cpu_gaps.py --mode loader / item under gcollect (default sampling), kept as
# fixtures; a fork-without-exec check (DataLoader workers); overhead: torch_loop.py (launch-bound) and
# cpu_gaps.py --mode train, plain / gcollect --sample=none / gcollect (sampling at 1 kHz), interleaved.
set -u
if [ "${1:-}" = --carry ]; then
  B=${2:-build/native}; C=/work/main/.device-carry/cpusample22; rm -rf $C; mkdir -p $C/lib
  cp $B/collector/gcollect $B/collector/libgtrace_inject.so $C/
  strip --strip-debug $C/gcollect $C/libgtrace_inject.so
  cp -L /lib/x86_64-linux-gnu/libzstd.so.1 $C/lib/
  cp bench/collector/cpu_gaps.py bench/collector/torch_loop.py scripts/gpu/cpu_sampling.sh $C/
  du -sh $C; exit 0
fi
C=$PWD/.device-carry/cpusample22
export LD_LIBRARY_PATH=$C/lib:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export CUDA_VISIBLE_DEVICES=0
OUT=${OUT:-/tmp/gtrace-out}; mkdir -p $OUT
R=$OUT/cpu_sampling.txt; : >"$R"
D=/tmp/cs; rm -rf $D; mkdir -p $D
G=$C/gcollect
log() { echo "$*" | tee -a "$R"; }
log "== $(date +%T) machine: $(nvidia-smi -L | head -1); $(python3 --version); torch $(python3 -c 'import torch; print(torch.__version__)')"
if [ "${1:-}" != --overhead-only ]; then
log "== fixtures"
$G -q -o $OUT/cpu_h200_loader.gtrace -- python3 $C/cpu_gaps.py --mode loader --steps 30 2>&1 | tail -3 | tee -a "$R"
$G -q -o $OUT/cpu_h200_item.gtrace -- python3 $C/cpu_gaps.py --mode item --steps 30 2>&1 | tail -3 | tee -a "$R"
ls -l $OUT/*.gtrace | tee -a "$R"
log "== fork without exec (DataLoader workers 2)"
$G -q -o $D/fork.gtrace -- python3 $C/cpu_gaps.py --mode loader --steps 10 --workers 2 2>&1 | tail -3 | tee -a "$R"
log "exit $? size $(stat -c %s $D/fork.gtrace 2>/dev/null)"
fi
log "== overhead (interleaved; median ms per iteration / step)"
for round in 1 2 3; do
  for cfg in plain nosample sample; do
    case $cfg in
      plain) P="" ;;
      nosample) P="$G -q --sample=none -o $D/l_${cfg}_$round.gtrace --" ;;
      sample) P="$G -q -o $D/l_${cfg}_$round.gtrace --" ;;
    esac
    $P python3 $C/torch_loop.py --iters 300 >$D/run.log 2>&1; rc=$?
    line=$(grep median_ms $D/run.log)
    log "loop round=$round cfg=$cfg rc=$rc $line size=$(stat -c %s $D/l_${cfg}_$round.gtrace 2>/dev/null)"
    [ -n "$line" ] || tail -5 $D/run.log | tee -a "$R"
  done
done
for round in 1 2 3; do
  for cfg in plain nosample sample; do
    case $cfg in
      plain) P="" ;;
      nosample) P="$G -q --sample=none -o $D/t_${cfg}_$round.gtrace --" ;;
      sample) P="$G -q -o $D/t_${cfg}_$round.gtrace --" ;;
    esac
    $P python3 $C/cpu_gaps.py --mode train --steps 300 >$D/run.log 2>&1; rc=$?
    line=$(grep median_ms $D/run.log)
    log "train round=$round cfg=$cfg rc=$rc $line size=$(stat -c %s $D/t_${cfg}_$round.gtrace 2>/dev/null)"
    [ -n "$line" ] || tail -5 $D/run.log | tee -a "$R"
  done
done
cp $D/l_sample_1.gtrace $OUT/loop_sample.gtrace 2>/dev/null
cp $D/t_sample_1.gtrace $OUT/train_sample.gtrace 2>/dev/null
log "== $(date +%T) done"
