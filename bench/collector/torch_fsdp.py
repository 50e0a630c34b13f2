"""A small FSDP training loop for distributed-recording checks: a transformer stack sharded with
FullyShardedDataParallel (all-gathers in forward/backward, reduce-scatters of gradients), bf16 autocast, NVTX per
step, optional straggler. Runs under torchrun with one GPU per rank."""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=20)
p.add_argument("--layers", type=int, default=4)
p.add_argument("--straggler", type=int, default=-1)
p.add_argument("--straggle-ms", type=float, default=20.0)
p.add_argument("--every", type=int, default=5)
a = p.parse_args()

dist.init_process_group("nccl")
rank, local = dist.get_rank(), int(os.environ.get("LOCAL_RANK", "0"))
torch.cuda.set_device(local)
torch.manual_seed(0)
layers = [nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True) for _ in range(a.layers)]
model = FSDP(nn.Sequential(*layers).cuda(), device_id=local, use_orig_params=True)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(16, 128, 512, device="cuda")
t0 = None
for step in range(a.steps):
    if step == min(3, a.steps - 1):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
    torch.cuda.nvtx.range_push(f"fsdp step {step}")
    if rank == a.straggler and step % a.every == a.every - 1:
        time.sleep(a.straggle_ms / 1e3)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).float().square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
timed = a.steps - min(3, a.steps - 1)
print(f"rank {rank}: fsdp {a.steps} steps, loss {loss.item():.4f}, "
      f"step_ms={(time.perf_counter() - t0) * 1e3 / timed:.3f}", flush=True)
dist.destroy_process_group()
