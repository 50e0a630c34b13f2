#!/usr/bin/env bash
# Issue 22 on the GPU machine (run through the device tool from the repository root, with the folder below carried):
# the fixture tests/data/h200_libcalls_osrt.gtrace, a library-only run, and the overhead of --trace=cublas,cudnn and
# --trace=osrt against a plain run and the default trace, interleaved (bench/collector/torch_loop.py).
# C holds gcollect, libgtrace_inject.so, libgtrace_osrt.so, gtrace and lib/libzstd.so.1 from a native build.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
C=${C:-.device-carry/libcalls22}
export LD_LIBRARY_PATH=$PWD/$C/lib:${LD_LIBRARY_PATH:-}
P=$PWD/scripts/gpu/libcalls_probe.py L=$PWD/bench/collector/torch_loop.py
cd "$C"
./gcollect -f -o "$OUT/libcalls_osrt_h200.gtrace" --trace=default,cublas,cudnn,osrt -- python3 "$P" 2>&1 | head -40
./gcollect -q -f -o /tmp/only.gtrace --trace=cublas,cudnn -- python3 "$P" >/dev/null 2>&1
./gtrace info /tmp/only.gtrace | grep -E "nvtx|kernel|api_call|loss|osrt"
for r in 1 2 3; do
  echo "round $r"
  python3 "$L" --iters 400 | sed 's/^/plain   /'
  ./gcollect -q -f -o /tmp/d.gtrace -- python3 "$L" --iters 400 | sed 's/^/default /'
  ./gcollect -q -f -o /tmp/l.gtrace --trace=default,cublas,cudnn,osrt -- python3 "$L" --iters 400 | sed 's/^/libosrt /'
  ./gcollect -q -f -o /tmp/c.gtrace --trace=default,cublas,cudnn -- python3 "$L" --iters 400 | sed 's/^/libonly /'
done
cp /tmp/l.gtrace "$OUT/torch_loop_libosrt.gtrace"
