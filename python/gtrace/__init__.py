"""gtrace from Python: read any trace the viewer reads as pandas DataFrames.

    import gtrace
    t = gtrace.load("train.gtrace")        # also Chrome/Kineto JSON (.json, .json.gz), merged ranks, NAME.gtrace.parts
    t.kernels.groupby("name", observed=True).dur_ns.sum()
    t.summary("kernels")                   # the `gtrace stats` table, same numbers
    t.gaps                                 # idle gaps with what the CPU did and a diagnosis

docs/python.md is the reference.
"""
from ._core import TraceError
from .trace import Trace, load, loads

# Reading (above). In-process recording (gtrace.profile / schedule / start / stop / range) is the lead's module and
# is imported here, next to reading, when it is merged.

__all__ = ["Trace", "TraceError", "load", "loads"]
__version__ = "0.1.0"
