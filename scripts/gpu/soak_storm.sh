#!/usr/bin/env bash
# Long-run evidence on a GPU machine (device tool, .device-carry/storm carried): a launch storm of 50 M kernels
# under gcollect (collector memory over time, drops, the trace loads), against 5 M kernels and no collector in the
# same run; then gcollect writing onto a full disk (a 4 MiB tmpfs in a private mount namespace).
#   prepare here: bash scripts/gpu/soak_storm.sh --carry [BUILD]
set -u
if [ "${1:-}" = --carry ]; then
  B=${2:-build/native}; C=.device-carry/storm; rm -rf $C; mkdir -p $C/lib
  cp $B/collector/gcollect $B/collector/libgtrace_inject.so $B/viewer/cli/gtrace $B/bench_collector_cuda/gt_bench_launch $C/
  for l in $(ldd $B/viewer/cli/gtrace | awk '/=>/{print $3}' | grep -Ev 'libc\.so|libm\.so|libstdc|libgcc|ld-linux'); do cp -L $l $C/lib/; done
  strip --strip-debug $C/gcollect $C/libgtrace_inject.so $C/gtrace; du -sh $C; exit 0
fi
C=$PWD/.device-carry/storm
export LD_LIBRARY_PATH=$C/lib:${LD_LIBRARY_PATH:-} PATH=$C:$PATH
OUT=${OUT:-/tmp/gtrace-out}; R=$OUT/storm.txt; D=/tmp/st; rm -rf $D; mkdir -p $D; : >"$R"
# Peak RSS of every process of a command (ru_maxrss of the waited-for descendants) and its wall time.
peak() { python3 -c 'import resource,subprocess,sys,time
t=time.time(); rc=subprocess.call(sys.argv[1:]); r=resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"rc={rc} wall_s={time.time()-t:.1f} max_rss_mib={r.ru_maxrss/1024:.0f}")' "$@"; }
# The app's resident memory every 10 s while it runs (the injection lives in it).
watch_rss() { while sleep 10; do p=$(pgrep -n gt_bench_launch) || continue; echo "  t+${SECONDS}s app VmRSS $(awk '/VmRSS/{print $2/1024 " MiB"}' /proc/$p/status 2>/dev/null)"; done; }
nvidia-smi -L >>"$R"; echo "uid $(id -u)" >>"$R"
echo "== plain, 5 M kernels" >>"$R"; peak gt_bench_launch --launches=1000000 --reps=5 >>"$R" 2>&1
echo "== gcollect, 5 M kernels" >>"$R"; peak gcollect -q -o $D/s5 -- gt_bench_launch --launches=1000000 --reps=5 >>"$R" 2>&1
ls -l $D/s5.gtrace | awk '{print "  trace bytes " $5}' >>"$R"
echo "== gcollect, 50 M kernels" >>"$R"; SECONDS=0; watch_rss >>"$R" & W=$!
peak gcollect -o $D/s50 -- gt_bench_launch --launches=10000000 --reps=5 >>"$R" 2>&1; kill $W
ls -l $D/s50.gtrace | awk '{print "  trace bytes " $5}' >>"$R"
echo "== gtrace info / stats of the 50 M trace" >>"$R"
peak gtrace info $D/s50.gtrace >$D/info.txt 2>&1; tail -1 $D/info.txt >>"$R"; sed -n '/^Records/,$p' $D/info.txt | head -30 >>"$R"
peak gtrace stats --top 3 $D/s50.gtrace >$D/stats.txt 2>&1; tail -1 $D/stats.txt >>"$R"; head -12 $D/stats.txt >>"$R"
rm -f $D/s50.gtrace
echo "== full disk: gcollect -o onto a 4 MiB tmpfs" >>"$R"
unshare -m sh -c "mount --make-rprivate / && mkdir -p /mnt/gtfull && mount -t tmpfs -o size=4m tmpfs /mnt/gtfull &&
  gcollect -o /mnt/gtfull/full -- gt_bench_launch --launches=400000 --reps=2; echo \"gcollect rc=\$?\";
  df -k /mnt/gtfull | tail -1; ls -la /mnt/gtfull /mnt/gtfull/full.gtrace.parts 2>&1;
  for f in /mnt/gtfull/full.gtrace /mnt/gtfull/full.gtrace.parts; do [ -e \$f ] && gtrace info \$f 2>&1 | sed -n '1,6p;/^Records/,\$p' | head -30; done" >>"$R" 2>&1
cat "$R"
