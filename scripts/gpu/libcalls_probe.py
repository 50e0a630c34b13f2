"""Library calls and OS waits under gcollect (issue 22): cuBLAS (fp32 and bf16 matmuls, a Linear), cuDNN (a conv
forward + backward), then a sleep, a threading.Event wait and a child process (waitpid; the child never starts
CUDA, so its own waits are only counted). Prints which cuBLAS/cuDNN/NCCL libraries the process loaded.

  gcollect --trace=default,cublas,cudnn,osrt -- python3 scripts/gpu/libcalls_probe.py
"""
import torch, sys, time, threading
dev = torch.device("cuda")
a = torch.randn(1024, 1024, device=dev); b = torch.randn(1024, 1024, device=dev)
for _ in range(20): c = a @ b
ab = a.bfloat16(); bb = b.bfloat16()
for _ in range(20): c = ab @ bb
lin = torch.nn.Linear(1024, 512).to(dev)
for _ in range(10): y = lin(a)
conv = torch.nn.Conv2d(16, 32, 3, padding=1).to(dev)
x = torch.randn(8, 16, 64, 64, device=dev, requires_grad=True)
for _ in range(10):
    y = conv(x); y.sum().backward()
torch.cuda.synchronize()
time.sleep(0.02)
ev = threading.Event(); t = threading.Timer(0.02, ev.set); t.start(); ev.wait(); t.join()
import subprocess; subprocess.run(['sleep', '0.01'])
torch.cuda.synchronize()
maps = open("/proc/self/maps").read().split("\n")
libs = sorted(set(l.split()[-1] for l in maps if ".so" in l and ("cublas" in l or "cudnn" in l or "nccl" in l or "nvToolsExt" in l or "nvtx" in l.lower())))
print("LIBS", *libs, sep="\n  ")
