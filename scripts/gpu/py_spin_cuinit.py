# A Python process that starts CUDA without PyTorch (cuInit through ctypes: the injection starts with it), then
# spins in spin() called from Worker.run_for(): its sampled frames are known (tests/data/cpu_h200_python314.gtrace,
# which ran this file as py314_spin.py, 3 lines shorter: the frames there say spin:5/6, run_for:10, <module>:18).
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
cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev)
Worker().run_for(1.5)
print("done")
