#!/usr/bin/env bash
# CPU-only fuzzing on the GPU machine's cores (16 on one GPU, 64 on the 4-GPU kinds) (device tool, .device-carry/fuzz carried; no GPU use):
# every target at once, N workers each, starting from the committed corpora; prints each target's executions
# (the workers' stat::number_of_executed_units summed) and keeps crash reproducers in $OUT/art/.
#   prepare here: bash scripts/gpu/fuzz_host.sh --carry [TARGET...]   (needs build/fuzz: bash scripts/fuzz.sh
#                 --seconds 1; TARGETs like server import_ncu: only those, to stay under the carry limit)
# With KEEP_CORPORA=1 each target's corpus is minimized (-merge=1) afterwards and returned as
# $OUT/fuzz_corpora.tar.gz (tests/fuzz/corpus/fuzz_<target>/ layout), to be committed; MERGE_SECONDS (120)
# bounds each target's merge, which is one process (slow targets with many workers need more).
#   run there:    SECONDS_BUDGET=470 bash scripts/gpu/fuzz_host.sh reader:6 merge:6 import_json:2 import_load:2
set -u
if [ "${1:-}" = --carry ]; then
  C=.device-carry/fuzz; rm -rf $C; mkdir -p $C
  # gzipped: the instrumented binaries are ~15 MB each, over the carry limit together
  shift
  if [ $# -gt 0 ]; then files=(); for t in "$@"; do files+=(build/fuzz/tests/fuzz/fuzz_$t); done
  else files=(build/fuzz/tests/fuzz/fuzz_*); fi
  for f in "${files[@]}"; do [ -x "$f" ] && cp "$f" $C/ && strip --strip-unneeded $C/$(basename $f) && gzip -9 $C/$(basename $f); done
  # fuzz_server links Debian's cpp-httplib (and its brotli), which the GPU machine's image does not have.
  mkdir -p $C/lib
  for l in libcpp-httplib.so.0.11 libbrotlidec.so.1 libbrotlienc.so.1 libbrotlicommon.so.1; do
    cp -L /lib/x86_64-linux-gnu/$l $C/lib/ 2>/dev/null
  done
  du -sh $C; exit 0
fi
OUT=${OUT:-/tmp/gtrace-out}; T=${SECONDS_BUDGET:-470}
W=/tmp/fz; rm -rf $W; mkdir -p $W/bin $OUT/art; C=$W/bin
[ -d .device-carry/fuzz/lib ] && export LD_LIBRARY_PATH=$PWD/.device-carry/fuzz/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for f in .device-carry/fuzz/fuzz_*.gz; do gunzip -c $f >$C/$(basename $f .gz); chmod +x $C/$(basename $f .gz); done
for spec in "$@"; do
  t=${spec%%:*}; n=${spec##*:}
  mkdir -p $W/$t/corpus $W/$t/logs; cp -r tests/fuzz/corpus/fuzz_$t/. $W/$t/corpus/ 2>/dev/null
  (cd $W/$t/logs && timeout $((T + 60)) $C/fuzz_$t $W/$t/corpus -jobs=$n -workers=$n -max_total_time=$T \
     -rss_limit_mb=2048 -max_len=65536 -timeout=10 -entropic=0 -print_final_stats=1 -artifact_prefix=$OUT/art/$t- \
     >/dev/null 2>&1) &
done
wait
for spec in "$@"; do
  t=${spec%%:*}; n=${spec##*:}
  execs=$(cat $W/$t/logs/fuzz-*.log 2>/dev/null | awk '/stat::number_of_executed_units/{s+=$2} END{print s+0}')
  crashes=$(ls $OUT/art/$t-* 2>/dev/null | wc -l)
  echo "fuzz_$t workers=$n seconds=$T executions=$execs crashes=$crashes"
  grep -h -m3 "ERROR\|SUMMARY" $W/$t/logs/fuzz-*.log 2>/dev/null | head -6
done
if [ "${KEEP_CORPORA:-0}" = 1 ]; then
  # Minimized side by side: one after the other, the merges of slow targets took minutes of device time.
  for spec in "$@"; do
    t=${spec%%:*}; m=$W/keep/tests/fuzz/corpus/fuzz_$t; mkdir -p $m
    timeout ${MERGE_SECONDS:-120} $C/fuzz_$t -merge=1 -rss_limit_mb=2048 -max_len=65536 -timeout=10 $m $W/$t/corpus >/dev/null 2>&1 &
  done
  wait
  for spec in "$@"; do
    t=${spec%%:*}; m=$W/keep/tests/fuzz/corpus/fuzz_$t
    echo "fuzz_$t corpus: $(ls $W/$t/corpus | wc -l) inputs, minimized to $(ls $m | wc -l) ($(du -sh $m | cut -f1))"
  done
  tar czf $OUT/fuzz_corpora.tar.gz -C $W/keep tests
fi
