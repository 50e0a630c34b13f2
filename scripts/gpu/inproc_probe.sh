#!/usr/bin/env bash
# In-process recording (gtrace.profile) on a GPU machine (device tool, .device-carry/inproc carried): overhead
# against no recorder and torch.profiler on the same loop (alternating runs), restart, nesting, a second CUPTI
# client, and gtrace.profile under gcollect. Writes $OUT/inproc.txt and the traces.
#   prepare here: bash scripts/gpu/inproc_probe.sh --carry [BUILD]
set -u
if [ "${1:-}" = --carry ]; then
  B=${2:-build/native}; C=.device-carry/inproc; mkdir -p $C/lib
  cp $B/collector/gcollect $B/collector/libgtrace_inject.so $B/collector/gtrace_check $C/
  cp -L /lib/x86_64-linux-gnu/libzstd.so.1 $C/lib/
  strip --strip-debug $C/gcollect $C/libgtrace_inject.so $C/gtrace_check; du -sh $C; exit 0
fi
C=$PWD/.device-carry/inproc
export LD_LIBRARY_PATH=$C/lib:${LD_LIBRARY_PATH:-} PATH=$C:$PATH PYTHONUNBUFFERED=1
export GTRACE_INJECT_LIB=$C/libgtrace_inject.so
OUT=${OUT:-/tmp/gtrace-out}; R=$OUT/inproc.txt; D=/tmp/ip; rm -rf $D; mkdir -p $D; : >"$R"
# python/gtrace needs its compiled reader only for gtrace.load; the GPU image's Python may differ from the
# build machine's, so profile.py runs from a shim package here.
mkdir -p $D/shim/gtrace; cp python/gtrace/recording.py $D/shim/gtrace/
echo "from .recording import *" >$D/shim/gtrace/__init__.py
export PYTHONPATH=$D/shim
L=bench/python/profile_loop.py
nvidia-smi -L >>"$R"; python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)" >>"$R"
for round in 1 2 3; do
  for m in plain gtrace torch; do python3 $L $m --out $D/$m$round.gtrace 2>&1 | grep -E "RESULT|Error|error|wrote" >>"$R"; done
done
python3 $L gtrace-all --out $D/all.gtrace 2>&1 | tail -3 >>"$R"
for m in restart nested second-client; do echo "== $m" >>"$R"; python3 $L $m --out $D/$m.gtrace >>"$R" 2>&1; echo "rc=$?" >>"$R"; done
echo "== under gcollect" >>"$R"
gcollect -q -o $D/under -- python3 $L gtrace --out $D/inner.gtrace >>"$R" 2>&1; echo "rc=$? inner exists: $(ls $D/inner.gtrace 2>&1)" >>"$R"
# The traces come back and are read with the build machine's gtrace (the GPU image lacks its libraries).
for f in gtrace1.gtrace all.gtrace restart.gtrace.1 restart.gtrace.2 under.gtrace; do
  echo "$f: NVTX step ranges $(gtrace_check $D/$f --dump | grep -c "'step'")" >>"$R"; cp $D/$f $OUT/ 2>/dev/null
done
cat "$R"
