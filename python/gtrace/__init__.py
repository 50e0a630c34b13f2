"""gtrace from Python: read any trace the viewer reads as pandas DataFrames.

    import gtrace
    t = gtrace.load("train.gtrace")        # also Chrome/Kineto JSON (.json, .json.gz), merged ranks, NAME.gtrace.parts
    t.kernels.groupby("name", observed=True).dur_ns.sum()
    t.summary("kernels")                   # the `gtrace stats` table, same numbers
    t.gaps                                 # idle gaps with what the CPU did and a diagnosis

    with gtrace.profile("step.gtrace", schedule=gtrace.schedule(wait=1, warmup=1, active=3)) as p:
        ...; p.step()                      # record from inside the script (CUPTI attaches in-process)

docs/python.md is the reference.
"""
from .recording import (ProfileError, ProfilerAction, profile, range, recording_state, schedule, set_recording,
                        start, stop)

try:
    from ._core import TraceError
    from .trace import Trace, load, loads
except ImportError as _missing:  # recording is pure Python (ctypes); reading needs gtrace._core for this Python
    _why = str(_missing)

    class TraceError(Exception):
        """A trace that could not be read (gtrace._core is not available here: see load())."""

    def _no_reader(*args, **kwargs):
        raise ImportError("gtrace's reader (the compiled gtrace._core) is not built for this Python "
                          f"(install it: docs/python.md): {_why}")

    Trace = None
    load = loads = _no_reader

__all__ = ["Trace", "TraceError", "load", "loads", "ProfileError", "ProfilerAction", "profile", "range",
           "recording_state", "schedule", "set_recording", "start", "stop"]
__version__ = "0.1.0"
