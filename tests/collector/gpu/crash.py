"""Does CUDA work, waits past one periodic flush, then crashes the way the argument says:
segv (SIGSEGV via a null read), abort, exit3 (os._exit(3): no atexit), kill (SIGKILL itself)."""
import ctypes
import os
import signal
import sys
import time

import torch

how = sys.argv[1] if len(sys.argv) > 1 else "segv"
x = torch.ones(1024, device="cuda")
for _ in range(100):
    x = x * 1.0001 + 1.0
torch.cuda.synchronize()
time.sleep(1.6)  # past one flush interval: these kernels must be in the trace
for _ in range(10):
    x = x + 1.0  # maybe in the trace: after the last flush
torch.cuda.synchronize()
if how == "segv":
    ctypes.string_at(0)
elif how == "abort":
    os.abort()
elif how == "exit3":
    os._exit(3)
elif how == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
