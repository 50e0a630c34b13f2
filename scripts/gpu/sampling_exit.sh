#!/bin/bash
# CPU sampling on the GPU machine (issue 22): does a 2-rank DDP job exit under `gcollect --sample=cpu`, and what
# does sampling cost next to the default trace (device tool, kind nvidia-h200-x2, carried folder CARRY, default
# .device-carry/sample22b):
#   prepare here: [CARRY=DIR] bash scripts/gpu/sampling_exit.sh --carry [BUILD] [OLD_DIR]   (OLD_DIR: an earlier
#                 build's gcollect + libraries, run as "old" for comparison; optional)
#   run there:    bash .device-carry/<name>/sampling_exit.sh [hang|exit|overhead|bench|ab|all] [N]
# hang: the old build with --sample=cpu and --sample-hz=1 (a control), a watchdog that dumps every thread of a job
# still running 50 s after start (/proc state, wchan, Python stacks through faulthandler) then ends it;
# exit: the new build's job N times in a row (each must exit by itself within 90 s); overhead: N rounds, each
# interleaving the configurations CFGS (default "plain default sample sample250": plain / `gcollect
# --sample=none` / `--sample=cpu` / `--sample-hz=250`; `libgcc`: --sample=cpu unwinding with libgcc as the first
# version did; `fixed`: --sample=cpu at 1 kHz whatever it costs, --sample-overhead=0) on torch_loop.py --iters ITERS and cpu_gaps.py --mode train --steps ITERS (default 1000; median
# ms per iteration), with GTRACE_SAMPLE_VERBOSE's cost lines (FIRST_EXTRA: configurations added to round 1
# only); no round starts after SECONDS_MAX (default 330) s;
# bench: bench_cpu_sampler's handler cost per sample, libgcc against the cached unwinder (N rounds);
# ab: N rounds of one run per workload sampling in every other WINDOW_MS (100) window, compared inside each
# run by sampling_ab.py (ITERS default 4000), plus CONTROL_ROUNDS (2) default-trace runs split the same way;
# long: runs at once (LONG, default N sampled training runs), each ended by SIGTERM after SECS (default 270) s:
# each must end by that signal (rc 124 from timeout), not a fault; the apps' resident memory every 30 s, the
# traces' sizes and `gtrace info`'s records and losses (when the carry has the CLI: --carry copies build/native's
# gtrace and its libraries);
# term: N rounds, each stopping with SIGTERM a run of every build (old/ when carried, then this one) x sampling
# (none, default) x workload (train, loop), TERM_PAR (6) at a time, after TERM_MIN + 0..TERM_SPAN-1 s (4, 26;
# the first seconds fall before CUDA starts, or while the injection starts): each trace must say
# process_terminated_by_signal, not a truncated segment (the finisher thread; docs/collector.md).
set -u
if [ "${1:-}" = --carry ]; then
  B=${2:-build/native}; OLD=${3:-}; C=${CARRY:-/work/main/.device-carry/sample22b}; rm -rf $C; mkdir -p $C/lib
  cp $B/collector/gcollect $B/collector/libgtrace_inject.so $B/collector/libgtrace_osrt.so $C/
  [ -x $B/bench/sampler/bench_cpu_sampler ] && cp $B/bench/sampler/bench_cpu_sampler $C/
  strip --strip-debug $C/gcollect $C/lib*.so $C/bench_cpu_sampler 2>/dev/null
  if [ -n "$OLD" ]; then mkdir -p $C/old; cp $OLD/gcollect $OLD/libgtrace_inject.so $OLD/libgtrace_osrt.so $C/old/; fi
  cp -L /lib/x86_64-linux-gnu/libzstd.so.1 $C/lib/
  if [ -x $B/viewer/cli/gtrace ]; then  # the GPU image lacks bookworm's httplib (and maybe sqlite): carried
    cp $B/viewer/cli/gtrace $C/; strip --strip-debug $C/gtrace
    for l in libcpp-httplib.so.0.11 libsqlite3.so.0 libbrotlidec.so.1 libbrotlienc.so.1 libbrotlicommon.so.1; do
      cp -L /lib/x86_64-linux-gnu/$l $C/lib/; done
  fi
  cp scripts/gpu/sampling_exit.sh scripts/gpu/ddp_faulthandler.py scripts/gpu/sampling_ab.py $C/
  du -sh $C; exit 0
fi
C=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$C/lib:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gtrace-out}; mkdir -p $OUT
R=$OUT/sampling_exit.txt; touch "$R"
D=/tmp/s22; mkdir -p $D
WHAT=${1:-all}; N=${2:-3}
log() { echo "$*" | tee -a "$R"; }
procs() { for d in /proc/[0-9]*; do grep -qa ddp_faulthandler $d/cmdline 2>/dev/null && echo ${d#/proc/}; done; }
workers() { for p in $(procs); do tr '\0' '\n' </proc/$p/environ 2>/dev/null | grep -q '^LOCAL_RANK=' && echo $p; done; }

# run_ddp LABEL LIMIT GCOLLECT ARGS...: the job under gcollect; still running after LIMIT s: dump and end it.
run_ddp() {
  local label=$1 limit=$2 g=$3; shift 3
  local t0=$(date +%s.%N) rc
  setsid $g -q -f "$@" -o $D/$label -- torchrun --standalone --nproc_per_node=2 $C/ddp_faulthandler.py \
    --steps 12 --warmup 2 >$D/$label.log 2>&1 &
  local pid=$!
  for i in $(seq 1 $limit); do sleep 1; kill -0 $pid 2>/dev/null || break; done
  if kill -0 $pid 2>/dev/null; then
    log "$label: STILL RUNNING after ${limit}s; $(grep -c 'steps, loss' $D/$label.log) ranks printed their steps"
    for p in $(procs); do
      log "-- pid $p: $(tr '\0' ' ' </proc/$p/cmdline | cut -c1-100)"
      for t in /proc/$p/task/*; do
        log "   tid ${t##*/} $(cat $t/comm 2>/dev/null) state=$(sed 's/.*) //' $t/stat 2>/dev/null | cut -d' ' -f1) wchan=$(cat $t/wchan 2>/dev/null) syscall=$(cut -d' ' -f1-3 $t/syscall 2>/dev/null)"
      done
    done
    for p in $(workers); do kill -USR1 $p; done  # faulthandler: every thread's Python stack to the log
    sleep 2
    for p in $(workers); do kill -TERM $p; done  # the injection finalizes the trace from its handler
    sleep 8; kill -TERM -- -$pid 2>/dev/null; sleep 3; kill -KILL -- -$pid 2>/dev/null
    wait $pid; rc="hung (ended by the watchdog)"
  else
    wait $pid; rc=$?
  fi
  log "$label: rc=$rc wall=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}")s $(grep -o 'step_ms=[0-9.]*' $D/$label.log | tr '\n' ' ')"
  grep -E "^gtrace: CPU sampling|Thread 0x|File \"|^Current thread" $D/$label.log | head -60 >>"$R"
}

log "== $(date +%T) $WHAT N=$N; $(nvidia-smi -L | tr '\n' ' '); $(python3 --version)"
if [ "$WHAT" = hang ] || [ "$WHAT" = all ]; then
  if [ -x $C/old/gcollect ]; then
    run_ddp old_sample 50 $C/old/gcollect --sample=cpu
    cp $D/old_sample.gtrace $OUT/hang_old.gtrace 2>/dev/null
    run_ddp old_hz1 70 $C/old/gcollect --sample-hz=1
  fi
fi
if [ "$WHAT" = exit ] || [ "$WHAT" = all ]; then
  for i in $(seq 1 $N); do GTRACE_SAMPLE_VERBOSE=1 run_ddp new_sample_$i 90 $C/gcollect --sample=cpu; done
  cp $D/new_sample_1.gtrace $OUT/exit_new.gtrace 2>/dev/null
fi
if [ "$WHAT" = bench ] || [ "$WHAT" = all ]; then
  [ -x $C/bench_cpu_sampler ] && $C/bench_cpu_sampler --rounds $N --ms 1000 --depth 30 2>&1 | tee -a "$R"
fi
if [ "$WHAT" = ab ]; then
  # In-process A/B (scripts/gpu/sampling_ab.py): each run samples only in every other WINDOW_MS window; a
  # default-trace run split the same way is the control.
  export CUDA_VISIBLE_DEVICES=0
  ITERS=${ITERS:-4000}; T0=$(date +%s); W=${WINDOW_MS:-100}; PAIRS=""; CTRL=""
  for round in $(seq 1 $N); do
    if [ $(( $(date +%s) - T0 )) -gt ${SECONDS_MAX:-330} ]; then log "(time: no round $round)"; break; fi
    for wl in "loop:bench/collector/torch_loop.py --iters $ITERS" "train:bench/collector/cpu_gaps.py --mode train --steps $ITERS"; do
      name=${wl%%:*}; cmd=${wl#*:}
      GTRACE_SAMPLE_ALTERNATE_MS=$W GTRACE_SAMPLE_VERBOSE=1 timeout 150 $C/gcollect -q -f --sample=cpu \
        -o $D/ab_${name}_$round -- python3 $cmd --times $D/ab_${name}_$round.times >$D/ab_${name}_$round.log 2>&1
      grep "^gtrace: CPU sampling.*rate" $D/ab_${name}_$round.log | head -1 | sed "s/^/[$name ab $round] /" >>"$R"
      python3 $C/sampling_ab.py $D/ab_${name}_$round.log:$D/ab_${name}_$round.times | tee -a "$R"
      PAIRS="$PAIRS $D/ab_${name}_$round.log:$D/ab_${name}_$round.times"
      if [ $round -le ${CONTROL_ROUNDS:-2} ]; then
        timeout 150 $C/gcollect -q -f --sample=none -o $D/abc_${name}_$round -- python3 $cmd \
          --times $D/abc_${name}_$round.times >/dev/null 2>&1
        CTRL="$CTRL $D/abc_${name}_$round.times"
      fi
    done
  done
  for name in loop train; do
    log "== $name, all rounds"
    python3 $C/sampling_ab.py $(echo $PAIRS | tr ' ' '\n' | grep "ab_${name}_") | tail -1 | tee -a "$R"
    python3 $C/sampling_ab.py --control $W $(echo $CTRL | tr ' ' '\n' | grep "abc_${name}_") | tee -a "$R"
  done
fi
if [ "$WHAT" = long ]; then
  # LONG: the runs at once, each CFG:WORKLOAD (CFG default = gcollect's defaults, cpu = --sample=cpu, none =
  # --sample=none; WORKLOAD train = cpu_gaps.py's training step, loop = torch_loop.py's launch-bound loop).
  SECS=${SECS:-270}; LONG=${LONG:-$(for i in $(seq 1 $N); do printf 'cpu:train '; done)}
  i=0
  for run in $LONG; do
    i=$((i + 1)); cfg=${run%%:*}; wl=${run#*:}
    case $cfg in default) F="" ;; cpu) F="--sample=cpu" ;; none) F="--sample=none" ;; esac
    case $wl in train) W="bench/collector/cpu_gaps.py --mode train --steps 100000000" ;;
                loop) W="bench/collector/torch_loop.py --iters 100000000" ;; esac
    echo "$run" >$D/long_$i.what
    ( CUDA_VISIBLE_DEVICES=0 GTRACE_SAMPLE_VERBOSE=1 $C/gcollect -q -f $F -o $D/long_$i -- \
        timeout -s TERM $SECS python3 $W >$D/long_$i.log 2>&1
      echo "rc=$?" >>$D/long_$i.log ) &
  done
  T0=$(date +%s)
  while [ $(( $(date +%s) - T0 )) -lt $((SECS + 20)) ]; do
    sleep 30
    line="t=$(( $(date +%s) - T0 ))s rss_mib:"
    for p in $(pgrep -f "python3 bench/collector/" | sort -n); do
      grep -q '^python' /proc/$p/comm 2>/dev/null || continue
      line="$line $(tr '\0' ' ' </proc/$p/cmdline | grep -o 'cpu_gaps\|torch_loop')@$p=$(( $(awk '/^VmRSS/ {print $2}' /proc/$p/status 2>/dev/null || echo 0) / 1024 ))"
    done
    log "$line"
    [ -z "$(pgrep -f 'python3 bench/collector/')" ] && break
  done
  wait
  for j in $(seq 1 $i); do
    log "long_$j ($(cat $D/long_$j.what)): $(tail -1 $D/long_$j.log) trace=$(stat -c %s $D/long_$j.gtrace 2>/dev/null) bytes"
    grep -E "^gtrace: CPU sampling|terminated by signal|Segmentation|Fatal" $D/long_$j.log | head -6 >>"$R"
    [ -x $C/gtrace ] && $C/gtrace info $D/long_$j.gtrace 2>&1 | grep -v "clock sync" | sed -n '/^Records/,$p' | tee -a "$R"
  done
fi
if [ "$WHAT" = term ]; then
  builds="new"; [ -x $C/old/gcollect ] && builds="old new"
  jobs=(); k=0
  for round in $(seq 1 $N); do for b in $builds; do for cfg in none default; do for wl in train loop; do
    k=$((k + 1)); jobs+=("$b:$cfg:$wl:$(( ${TERM_MIN:-4} + RANDOM % ${TERM_SPAN:-26} )):$k")
  done; done; done; done
  run_term() {  # b:cfg:wl:secs:k
    IFS=: read -r b cfg wl secs k <<<"$1"
    G=$C/gcollect; [ $b = old ] && G=$C/old/gcollect
    F=""; [ $cfg = none ] && F="--sample=none"
    case $wl in train) W="bench/collector/cpu_gaps.py --mode train --steps 100000000" ;;
                loop) W="bench/collector/torch_loop.py --iters 100000000" ;; esac
    CUDA_VISIBLE_DEVICES=0 GTRACE_DEBUG_BACKTRACE=1 timeout 60 $G -q -f $F -o $D/term_$k -- \
      timeout -s TERM $secs python3 $W >$D/term_$k.log 2>&1
    local info; info=$($C/gtrace info $D/term_$k.gtrace 2>&1)
    local v="other"
    grep -q "process_terminated_by_signal" <<<"$info" && v="finished"
    grep -q "file_truncated" <<<"$info" && v="truncated"
    echo "$b $cfg $wl secs=$secs k=$k $v $(grep -c 'could not be finished' $D/term_$k.log)" >>$D/term.txt
  }
  rm -f $D/term.txt
  for j in "${jobs[@]}"; do
    while [ $(jobs -rp | wc -l) -ge ${TERM_PAR:-6} ]; do sleep 0.5; done
    run_term "$j" &
  done
  wait
  sort $D/term.txt | tee -a "$R"
  log "== term: $(awk '{n[$1" "$2" "$3" "$6]++} END {for (x in n) printf "%s=%d; ", x, n[x]}' $D/term.txt)"
  grep -h "could not be finished" $D/term_*.log | head -5 | tee -a "$R"
  for k in $(awk '$6 != "finished" {print $5}' $D/term.txt | cut -d= -f2 | head -6); do
    log "-- term_$k ($(grep "k=$k " $D/term.txt))"; grep -v "^\[" $D/term_$k.log | tail -8 | tee -a "$R"
    $C/gtrace info $D/term_$k.gtrace 2>&1 | grep -v "clock sync" | sed -n '/^Processes/,/^Devices/p;/^Losses/,$p' | head -30 | tee -a "$R"
  done
fi
if [ "$WHAT" = overhead ] || [ "$WHAT" = all ]; then
  export CUDA_VISIBLE_DEVICES=0
  CFGS=${CFGS:-plain default sample sample250}; ITERS=${ITERS:-1000}; T0=$(date +%s)
  for round in $(seq 1 $N); do
    if [ $(( $(date +%s) - T0 )) -gt ${SECONDS_MAX:-330} ]; then log "(time: no round $round)"; break; fi
    for wl in "loop:bench/collector/torch_loop.py --iters $ITERS" "train:bench/collector/cpu_gaps.py --mode train --steps $ITERS"; do
      name=${wl%%:*}; cmd=${wl#*:}
      line="$name round=$round"
      cfgs=$CFGS; [ $round = 1 ] && cfgs="$CFGS ${FIRST_EXTRA:-}"
      for cfg in $cfgs; do
        U=""
        case $cfg in
          plain) P="" ;;
          default) P="$C/gcollect -q -f --sample=none -o $D/o_${name}_$cfg --" ;;
          sample) P="$C/gcollect -q -f --sample=cpu -o $D/o_${name}_$cfg --" ;;
          libgcc) P="$C/gcollect -q -f --sample=cpu -o $D/o_${name}_$cfg --"; U=libgcc ;;
          sample250) P="$C/gcollect -q -f --sample-hz=250 -o $D/o_${name}_$cfg --" ;;
          fixed) P="$C/gcollect -q -f --sample=cpu --sample-overhead=0 -o $D/o_${name}_$cfg --" ;;
        esac
        GTRACE_SAMPLE_UNWIND=$U GTRACE_SAMPLE_VERBOSE=1 timeout 120 $P python3 $cmd >$D/o.log 2>&1
        line="$line $cfg=$(grep -o 'median_ms=[0-9.]*' $D/o.log | cut -d= -f2)"
        case $cfg in sample|libgcc|fixed) grep "^gtrace: CPU sampling" $D/o.log | head -3 | sed "s/^/[$name $cfg] /" >>"$R" ;; esac
      done
      log "$line"
    done
  done
  for name in loop train; do for cfg in sample libgcc fixed; do
    cp $D/o_${name}_$cfg.gtrace $OUT/${name}_$cfg.gtrace 2>/dev/null; done; done
fi
log "== $(date +%T) done"
