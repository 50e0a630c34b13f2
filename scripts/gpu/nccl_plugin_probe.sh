#!/usr/bin/env bash
# NCCL's profiler plugin on a GPU machine with 2 GPUs (device tool; .device-carry/dist carried with gcollect,
# gtrace, gtrace_check, libgtrace_inject.so and lib/, as for dist_probe.sh). Answers, in $OUT/nccl_plugin.txt:
#   - which NCCL PyTorch runs (torch.cuda.nccl.version(), pip's nvidia-nccl package) and which plugin tables
#     the injection library exports;
#   - whether NCCL loaded the plugin, and which version of the interface it chose (NCCL_DEBUG=INFO,
#     NCCL_DEBUG_SUBSYS=INIT,ENV: "PROFILER/Plugin: Loaded gtrace (vN)", "Profiler event mask");
#   - nccl_coll / nccl_channel records per rank, the plugin's losses, a few records, and whether every rank
#     has the same (communicator, function, sequence) keys;
#   - the `gtrace stats` NCCL section (matched by the plugin? algorithms) for one gcollect around torchrun
#     and for one gcollect per rank (--nccl-plugin=channels) merged;
#   - where the per-channel GPU times land relative to the host records (GPU timer -> trace clock);
#   - the plugin's cost: a 4 KB all_reduce loop (latency bound) under --nccl-plugin=off, ops and channels.
# Small traces are copied to $OUT. About 2-3 minutes.
set -u
C=$PWD/.device-carry/dist
export LD_LIBRARY_PATH=$C/lib:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gtrace-out}
mkdir -p "$OUT"
R=$OUT/nccl_plugin.txt
N=$(nvidia-smi -L | wc -l)
[ "$N" -gt 2 ] && N=2
D=/tmp/gnp
rm -rf $D
mkdir -p $D
: >"$R"
say() { echo "$@" >>"$R"; }
# Records of a trace, from gtrace_check --dump: counts per pid and kind.
records() {
  "$C/gtrace_check" "$1" --dump >$D/dump.txt 2>&1
  awk '/^nccl_(coll|channel) /{split($2, p, "="); n[$1 " pid=" p[2]]++} END {for (k in n) print "  " k ": " n[k]}' \
    $D/dump.txt | sort >>"$R"
  "$C/gtrace" info "$1" | grep -iE "^Format|nccl" >>"$R"
}
# Do all ranks have the same (comm, func, seq) keys of collectives?
keys() {
  python3 - "$D/dump.txt" >>"$R" 2>&1 <<'EOF'
import collections, re, sys, statistics
keys = collections.defaultdict(set); colls = {}; chans = []
for line in open(sys.argv[1]):
    f = dict(re.findall(r"(\w+)=(\S+)", line))
    if line.startswith("nccl_coll ") and f.get("kind") == "coll":
        func = line.split()[6]
        keys[f["pid"]].add((f["comm"], func, f["seq"]))
        colls[(f["pid"], f["comm"], func, f["seq"])] = int(line.rsplit(" ", 1)[1].split("..")[0])
    elif line.startswith("nccl_channel "):
        func = line.split()[4]
        s, e = line.rsplit(" ", 1)[1].split("..")
        chans.append(((f["pid"], f["comm"], func, f["seq"]), int(s), int(e)))
sets = list(keys.values())
if len(sets) >= 2:
    common = set.intersection(*sets)
    print("  collective keys per pid:", {p: len(k) for p, k in keys.items()}, "on every pid:", len(common))
d = [s - colls[k] for k, s, e in chans if k in colls]
if d:
    q = statistics.quantiles(d, n=10) if len(d) > 10 else d
    print(f"  channel GPU start - its record's host start (us): min {min(d)/1e3:.1f} p10 {q[0]/1e3:.1f} "
          f"median {statistics.median(d)/1e3:.1f} max {max(d)/1e3:.1f} over {len(d)} channels")
    print(f"  channel GPU durations (us): median {statistics.median([e - s for _, s, e in chans])/1e3:.1f}")
EOF
}

say "== versions"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version())" >>"$R" 2>&1
pip list 2>/dev/null | grep -i nccl >>"$R"
say "exported: $(nm -D --defined-only "$C/libgtrace_inject.so" | grep -o 'ncclProfiler_v[0-9]' | tr '\n' ' ')"

say "== 1. gcollect -o job -- torchrun --nproc_per_node=$N torch_ddp.py --steps 20 (NCCL_DEBUG=INFO, INIT,ENV)"
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV timeout 150 "$C/gcollect" -o $D/job -- \
  torchrun --standalone --nproc_per_node=$N bench/collector/torch_ddp.py --steps 20 >$D/job.log 2>&1
say "rc=$?"
grep -E "NCCL version|PROFILER|[Pp]rofiler|NCCL_PROFILER|gcollect: warning" $D/job.log |
  sed 's/.*NCCL INFO/NCCL INFO/' | sort | uniq -c | head -30 >>"$R"
records $D/job.gtrace
grep -m 6 '^nccl_coll' $D/dump.txt >>"$R"
keys
"$C/gtrace" stats $D/job.gtrace | sed -n '/NCCL collectives/,$p' | head -40 >>"$R"
"$C/gtrace" stats --json $D/job.gtrace | python3 -c "
import json, sys; c = json.load(sys.stdin).get('collectives', {})
print('  json: matched', c.get('matched'), 'by_plugin', c.get('matched_by_plugin'), 'algorithms', c.get('algorithms'))" \
  >>"$R" 2>&1

say "== 2. one gcollect per rank, --nccl-plugin=channels, merged"
timeout 150 torchrun --standalone --nproc_per_node=$N --no-python "$C/gcollect" -q --nccl-plugin=channels \
  -o "$D/rank_%q{RANK}" -- python3 bench/collector/torch_ddp.py --steps 20 >$D/ranks.log 2>&1
say "rc=$?"
tail -3 $D/ranks.log >>"$R"
for f in $D/rank_*.gtrace; do
  say "-- $f"
  records "$f"
  keys
done
"$C/gtrace" merge -o $D/merged.gtrace $D/rank_*.gtrace >>"$R" 2>&1
"$C/gtrace_check" $D/merged.gtrace --dump >$D/dump.txt 2>&1
keys
grep -m 4 '^nccl_channel' $D/dump.txt >>"$R"
"$C/gtrace" stats $D/merged.gtrace | sed -n '/NCCL collectives/,$p' | head -40 >>"$R"

say "== 3. cost: 4 KB all_reduce, 3 x 2000 iterations after 200 warm-up (rank 0 prints us/iter)"
cat >$D/ar.py <<'EOF'
import os, time, torch, torch.distributed as dist
dist.init_process_group("nccl")
r = dist.get_rank()
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
x = torch.ones(1024, device="cuda")
for _ in range(200):
    dist.all_reduce(x)
torch.cuda.synchronize()
out = []
for rep in range(3):
    t = time.perf_counter()
    for _ in range(2000):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    out.append((time.perf_counter() - t) / 2000 * 1e6)
if r == 0:
    print("us/iter " + " ".join(f"{v:.2f}" for v in out), flush=True)
dist.destroy_process_group()
EOF
say "plain:    $(timeout 90 torchrun --standalone --nproc_per_node=$N $D/ar.py 2>&1 | grep 'us/iter')"
for m in off ops channels; do
  say "$m: $(timeout 90 "$C/gcollect" -q -f --nccl-plugin=$m -o $D/ar_$m -- torchrun --standalone --nproc_per_node=$N $D/ar.py 2>&1 | grep 'us/iter')"
done
"$C/gtrace_check" $D/ar_ops.gtrace --dump 2>/dev/null | awk '/^nccl_coll/{n++} END {print "  ar_ops nccl_coll records:", n+0}' >>"$R"
"$C/gtrace" info $D/ar_ops.gtrace | grep -i nccl >>"$R"
"$C/gtrace" info $D/ar_channels.gtrace | grep -i nccl >>"$R"

say "== done in $SECONDS s"
for f in $D/job.gtrace $D/rank_0.gtrace $D/rank_1.gtrace; do
  [ -f "$f" ] && [ "$(stat -c %s "$f")" -lt 8000000 ] && cp "$f" "$OUT/"
done
cp $D/job.log "$OUT/nccl_plugin_job.log" 2>/dev/null
cat "$R"
