# A Python process that starts CUDA without PyTorch (cuInit through ctypes: the injection starts with it), launches
# an empty kernel 3 times, spins in spin() called from Worker.run_for(), launches it once more: its sampled frames
# are known (tests/data/cpu_h200_python314.gtrace ran this file; spin:8/9, Worker.run_for:13, <module>:32).
import ctypes, sys, time

def spin(sec):
    t = time.time()
    while time.time() - t < sec:
        pass

class Worker:
    def run_for(self, sec):
        spin(sec)

spin(0.2)
cuda = ctypes.CDLL("libcuda.so.1")
print("cuInit", cuda.cuInit(0), sys.version.split()[0])
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
cuda.cuDeviceGet(ctypes.byref(dev), 0)
print("context", cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), cuda.cuCtxSetCurrent(ctx))
# An empty kernel from PTX (the driver compiles it), launched around the spin: a GPU stream with kernels.
ptx = b""".version 8.0
.target sm_90
.address_size 64
.visible .entry idle_kernel() { ret; }
"""
mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
print("module", cuda.cuModuleLoadData(ctypes.byref(mod), ptx), cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b"idle_kernel"))
def launch():
    return cuda.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, None, None)
print("launch", [launch() for _ in range(3)], cuda.cuCtxSynchronize())
Worker().run_for(1.5)
print("launch", launch(), cuda.cuCtxSynchronize())
print("done")
