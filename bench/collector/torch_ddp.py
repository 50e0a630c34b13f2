"""A small DDP training loop for distributed-recording checks: NCCL process group, an MLP wrapped in
DistributedDataParallel, NVTX per step, a deliberate straggler (--straggler RANK --straggle-ms MS on every
--every-th step) and a plain all_reduce per step. Runs under torchrun with any number of ranks (one GPU each;
a single rank also works on a one-GPU machine)."""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=20)
p.add_argument("--straggler", type=int, default=-1)
p.add_argument("--straggle-ms", type=float, default=20.0)
p.add_argument("--every", type=int, default=5)
p.add_argument("--exit-code", type=int, default=0)
p.add_argument("--warmup", type=int, default=5, help="steps left out of the printed step time")
a = p.parse_args()

dist.init_process_group("nccl")
rank, local = dist.get_rank(), int(os.environ.get("LOCAL_RANK", "0"))
torch.cuda.set_device(local)
model = DDP(nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).cuda(), device_ids=[local])
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(64, 1024, device="cuda")
flag = torch.ones(1, device="cuda")
t0 = None
for step in range(a.steps):
    if step == min(a.warmup, a.steps - 1):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
    torch.cuda.nvtx.range_push(f"step {step}")
    if rank == a.straggler and step % a.every == a.every - 1:
        time.sleep(a.straggle_ms / 1e3)
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    dist.all_reduce(flag)
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
timed = a.steps - min(a.warmup, a.steps - 1)
step_ms = (time.perf_counter() - t0) * 1e3 / timed
print(f"rank {rank}: {a.steps} steps, loss {loss.item():.4f}, step_ms={step_ms:.3f} over {timed}", flush=True)
dist.destroy_process_group()
raise SystemExit(a.exit_code)
