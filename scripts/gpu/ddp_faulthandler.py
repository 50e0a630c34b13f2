"""bench/collector/torch_ddp.py with faulthandler on SIGUSR1 (every thread's Python stack to stderr): a job that
does not exit can show where its threads are (scripts/gpu/sampling_exit.sh)."""
import faulthandler
import os
import runpy
import signal
import sys

faulthandler.register(signal.SIGUSR1, all_threads=True)
script = os.path.join(os.getcwd(), "bench/collector/torch_ddp.py")
sys.argv[0] = script
runpy.run_path(script, run_name="__main__")
