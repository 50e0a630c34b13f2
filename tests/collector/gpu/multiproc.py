"""Child processes: two multiprocessing workers (spawn) and one subprocess, each doing CUDA work.
Expected: 4 processes with kernels (parent + 3 children)."""
import multiprocessing as mp
import subprocess
import sys

import torch


def work(n):
    x = torch.ones(256, device="cuda")
    for _ in range(n):
        x = x * 2.0
    torch.cuda.synchronize()
    return float(x[0].item())


if __name__ == "__main__":
    work(5)
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        print(pool.map(work, [3, 4]))
    subprocess.check_call([sys.executable, "-c", "import torch; x=torch.ones(8,device='cuda'); print((x*3).sum().item())"])
    print("multiproc done")
