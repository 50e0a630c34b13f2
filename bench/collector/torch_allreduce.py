"""A plain torch.distributed all-reduce loop over message sizes, timed by CUDA events per size, printing
nccl-tests' algorithm and bus bandwidth (busbw = algbw * 2 (n-1) / n) so a trace's own figures can be checked
against them. NVTX range per size. Runs under torchrun with one GPU per rank."""
import argparse
import os

import torch
import torch.distributed as dist

p = argparse.ArgumentParser()
p.add_argument("--sizes-mb", default="1,8,64")
p.add_argument("--iters", type=int, default=10)
a = p.parse_args()

dist.init_process_group("nccl")
rank, n = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
for mb in [float(s) for s in a.sizes_mb.split(",")]:
    buf = torch.ones(int(mb * 2**20) // 4, dtype=torch.float32, device="cuda")
    for _ in range(3):
        dist.all_reduce(buf)
    torch.cuda.synchronize()
    dist.barrier()
    torch.cuda.nvtx.range_push(f"all_reduce {mb:g} MB")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(a.iters):
        dist.all_reduce(buf)
    end.record()
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / a.iters
    algbw = buf.numel() * 4 / (ms * 1e-3) / 1e9
    if rank == 0:
        print(f"allreduce bytes={buf.numel() * 4} time_us={ms * 1e3:.1f} algbw_GBps={algbw:.2f} "
              f"busbw_GBps={algbw * 2 * (n - 1) / n:.2f}", flush=True)
dist.destroy_process_group()
