#!/usr/bin/env bash
# PC sampling once killed PyTorch apps at exit: repeated `gcollect --pc-sampling` runs of an 8-layer bf16
# transformer training loop on the H200 (device tool). Binaries in $C (default .device-carry/pcs): gcollect,
# libgtrace_inject.so, gtrace_check, torch_transformer.py, lib/libzstd.so.1, optionally asan/ (an ASan+UBSan
# libgtrace_inject.so and the sanitizer runtimes).
#   bash pcs_crash.sh VARIANT COUNT [gcollect options...]
# LABEL (environment) names the logs instead of VARIANT. VARIANT: plain (release library), nolines (GTRACE_PCS_NO_LINES), launch (GTRACE_PCS_GETDATA=launch),
# asan (sanitized library), gdb (the app under gdb: every thread's stack at the first fault).
# Appends one line per run to $OUT/summary.txt ("VARIANT i rc=.. wall=.. signal/sanitizer lines"); the logs of
# failed runs go to $OUT/fail_logs/.
set -u
VARIANT=$1
COUNT=$2
shift 2
C=${PCS_CARRY:-$PWD/.device-carry/pcs}
OUT=${OUT:-/tmp/pcs-out}
T=/tmp/pcs
mkdir -p "$T" "$OUT/fail_logs"
S=$OUT/summary.txt
export PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GTRACE_DEBUG_BACKTRACE=1
TRAIN=(python3 "$C/torch_transformer.py")
clean=0
for i in $(seq 1 "$COUNT"); do
  envs=()
  app=("${TRAIN[@]}")
  case $VARIANT in
    plain) ;;
    nolines) envs=(GTRACE_PCS_NO_LINES=1) ;;
    launch) envs=(GTRACE_PCS_GETDATA=launch) ;;
    asan)
      envs=(GTRACE_NO_PRELOAD=1 "LD_PRELOAD=$C/asan/libasan.so:$C/asan/libubsan.so:$C/asan/libgtrace_inject.so"
            "GTRACE_INJECT_LIB=$C/asan/libgtrace_inject.so"
            "ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0:verify_asan_link_order=0:alloc_dealloc_mismatch=0:halt_on_error=1:detect_odr_violation=0"
            "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1") ;;
    gdb) app=(gdb -q -batch -ex "handle SIGPIPE nostop noprint" -ex run -ex "thread apply all bt 25" --args "${TRAIN[@]}") ;;
  esac
  name=${LABEL:-$VARIANT}
  log=$T/$name.$i.log
  t0=$(date +%s.%N)
  env "${envs[@]}" timeout -s KILL 120 "$C/gcollect" -f -o "$T/$name.$i.gtrace" "$@" -- "${app[@]}" >"$log" 2>&1
  rc=$?
  wall=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}")
  bad=$(grep -E -m3 "fatal signal|Segmentation|Bus error|SIGSEGV|SIGBUS|SIGABRT|AddressSanitizer|runtime error|terminated by signal|received signal" "$log" | cut -c1-200 | tr '\n' '|')
  done_line=$(grep -c "torch_transformer: [0-9]* steps" "$log")
  echo "$name $i rc=$rc wall=$wall steps_done=$done_line $bad $(grep -m1 'gtrace pc sampling: [0-9]* samples' "$log" | cut -c1-120)" | tee -a "$S"
  if [ "$rc" != 0 ] || [ -n "$bad" ] || [ "$done_line" = 0 ]; then
    cp "$log" "$OUT/fail_logs/"
  else
    clean=$((clean + 1))
  fi
  rm -rf "$T/$name.$i.gtrace" "$T/$name.$i.gtrace.parts"
done
echo "$name: $clean of $COUNT clean ($*)" | tee -a "$S"
