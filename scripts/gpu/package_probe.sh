#!/usr/bin/env bash
# The installed Debian package on a GPU machine (device tool; .device-carry/pkg carried): apt-get install, a PyTorch
# loop recorded by the installed gcollect, gtrace.profile finding the installed injection library, the 50 M-kernel
# storm's peak memory with the streaming end-of-run summary, a full disk, and removal. Writes $OUT/pkg.txt.
#   prepare here: bash scripts/gpu/package_probe.sh --carry   (after bash scripts/install.sh --deb-only)
set -u
if [ "${1:-}" = --carry ]; then
  C=.device-carry/pkg; rm -rf $C; mkdir -p $C/lib
  cp build/native/gtrace_*_amd64.deb build/native/bench_collector_cuda/gt_bench_launch $C/
  # gtrace's Debian libraries, for a GPU image that lacks them and has no network to fetch them
  for l in $(ldd build/native/viewer/cli/gtrace | awk '/=>/{print $3}' | grep -Ev 'libc\.so|libm\.so|libstdc|libgcc|ld-linux'); do cp -L $l $C/lib/; done
  du -sh $C; exit 0
fi
C=$PWD/.device-carry/pkg; R=$PWD; OUT=${OUT:-/tmp/gtrace-out}; F=$OUT/pkg.txt; D=/tmp/pk; rm -rf $D; mkdir -p $D; : >"$F"
peak() { python3 -c 'import resource,subprocess,sys,time
t=time.time(); rc=subprocess.call(sys.argv[1:]); r=resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"rc={rc} wall_s={time.time()-t:.1f} max_rss_mib={r.ru_maxrss/1024:.0f}")' "$@"; }
. /etc/os-release; echo "$PRETTY_NAME; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" >>"$F"
echo "== install" >>"$F"
apt-get install -y $C/gtrace_*_amd64.deb >>"$F" 2>&1 || { echo "apt-get failed (offline?): dpkg -i --force-depends" >>"$F"; dpkg -i --force-depends $C/gtrace_*_amd64.deb >>"$F" 2>&1; }
export LD_LIBRARY_PATH=$C/lib
echo "which: $(command -v gcollect) $(command -v gtrace)" >>"$F"; gcollect --version >>"$F" 2>&1
echo "== torch loop under the installed gcollect" >>"$F"
(cd $D && gcollect -o torch_pkg.gtrace -- python3 $R/bench/collector/torch_loop.py --train --iters 40) >>"$F" 2>&1; echo "rc=$?" >>"$F"
gtrace info $D/torch_pkg.gtrace 2>&1 | sed -n '1,12p;/^Devices/,/^Records/p' >>"$F"
echo "== gcollect -- /bin/true on the GPU machine (no warning expected)" >>"$F"; gcollect -o $D/true -- /bin/true >>"$F" 2>&1; echo "rc=$?" >>"$F"
echo "== gtrace.profile, injection library found from the installed gcollect (no GTRACE_INJECT_LIB)" >>"$F"
PYTHONPATH=$R/python python3 -c 'import gtrace.recording as r; print(r._library()._name)' >>"$F" 2>&1
PYTHONPATH=$R/python python3 bench/python/profile_loop.py gtrace --out $D/pkg_profile.gtrace >>"$F" 2>&1; echo "rc=$?" >>"$F"
gtrace info $D/pkg_profile.gtrace 2>&1 | sed -n '1,5p' >>"$F"
echo "== 50 M-kernel storm, installed gcollect, streaming summary" >>"$F"
peak gcollect -o $D/s50 -- $C/gt_bench_launch --launches=10000000 --reps=5 >>"$F" 2>&1; ls -l $D/s50.gtrace | awk '{print "  trace bytes " $5}' >>"$F"; rm -f $D/s50.gtrace
echo "== full disk: a 4 MiB tmpfs" >>"$F"
unshare -m sh -c "mount --make-rprivate / && mkdir -p /mnt/gtfull && mount -t tmpfs -o size=4m tmpfs /mnt/gtfull &&
  gcollect -o /mnt/gtfull/full -- $C/gt_bench_launch --launches=400000 --reps=2; echo \"gcollect rc=\$?\";
  ls -la /mnt/gtfull /mnt/gtfull/full.gtrace.parts 2>&1; gtrace info /mnt/gtfull/full.gtrace.parts 2>&1 | sed -n '1,8p;/^Records/,\$p' | head -24;
  mkdir -p /tmp/pk/rec && cp -r /mnt/gtfull/full.gtrace.parts /tmp/pk/rec/ && gtrace recover /tmp/pk/rec/full.gtrace.parts 2>&1 | tail -3" >>"$F" 2>&1
echo "== remove" >>"$F"; apt-get remove -y gtrace >>"$F" 2>&1 || dpkg -r gtrace >>"$F" 2>&1; echo "after remove: $(command -v gcollect || echo 'gcollect gone')" >>"$F"
cp $D/torch_pkg.gtrace $D/pkg_profile.gtrace $OUT/ 2>/dev/null
cat "$F"
