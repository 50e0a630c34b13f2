"""Trace: a loaded trace model and its tables as pandas DataFrames.

Every event table is built from the viewer core's columns (gtrace._core): one numpy array per column, and string
columns as pandas Categoricals (codes + the distinct texts), so no Python object is made per event. Tables are
built on first use and cached; a DataFrame returned twice is the same object (copy it before changing it).
"""
import errno
import functools
import json
import os

import numpy as np
import pandas as pd

from . import _core

_SUMMARIES = ("kernels", "copies", "api", "nvtx")


def _frame(columns):
    """dict of numpy arrays and (codes, texts) pairs -> DataFrame with Categorical string columns."""
    data = {}
    for name, col in columns.items():
        if isinstance(col, tuple):
            codes, texts = col
            cats = pd.Index(texts, dtype=object)
            if not cats.is_unique:  # texts that were not UTF-8 may decode alike (U+FFFD): merge them
                inverse, cats = pd.factorize(cats)
                codes = inverse[codes]
            data[name] = pd.Categorical.from_codes(codes, categories=cats)
        else:
            data[name] = col
    return pd.DataFrame(data, copy=False)


def _threads(threads):
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise TypeError(f"threads must be a non-negative int (0 = one per CPU), not {threads!r}")
    return threads


def load(path, *, threads=0):
    """Loads a trace file: .gtrace, Chrome trace or PyTorch profiler (Kineto) JSON, plain or gzipped, a merged
    multi-rank trace, or a NAME.gtrace.parts folder of an unfinished gcollect run. The format is sniffed from the
    content. threads: loading threads (0 = one per CPU; the result is the same for any value).

    Raises FileNotFoundError for a missing path, TypeError for a path that is not str/bytes/os.PathLike, and
    gtrace.TraceError (with .code, e.g. "corrupt") for input that is no trace. A partly damaged trace loads what
    could be read; see Trace.losses and Trace.has_data_loss.
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"gtrace.load: path must be str, bytes or os.PathLike, not {type(path).__name__}")
    path = os.fsdecode(os.fspath(path))
    if not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, "no such trace file", path)
    return Trace(_core.load_file(path, _threads(threads)), path)


def loads(data, *, threads=0):
    """Loads a trace from bytes in memory (anything load() reads from a file, except a .parts folder)."""
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise TypeError(f"gtrace.loads: data must be bytes, not {type(data).__name__}")
    return Trace(_core.load_bytes(data, _threads(threads)), "<bytes>")


class Trace:
    """A loaded trace. Event tables (one row per event, times in ns since the trace's clock origin):

    kernels  start_ns end_ns dur_ns name device stream pid rank host correlation_id grid_x..z block_x..z
             registers_per_thread static_shared_bytes dynamic_shared_bytes graph_id
    copies   start_ns end_ns dur_ns name device stream pid rank host correlation_id kind (memcpy|memset)
             copy_kind bytes src_kind dst_kind is_async
    api      start_ns end_ns dur_ns name pid tid rank host depth correlation_id return_code
             (depth 0: calls the thread made; 1+: driver calls made inside them)
    nvtx     start_ns end_ns dur_ns name pid tid rank host depth kind (nvtx|host_op) domain
    samples  time_ns value counter unit pid device (counter time series: GPU utilization, ...)
    cpu_samples  time_ns pid tid rank host stack_id frame frame_kind (python|native|none) flags python
             idle_repeat (sampled CPU stacks, gcollect --sample=cpu: one row per sample, its innermost frame;
             stack_id 0: nothing unwound)
    cpu_stacks   stack_id parent_id frame frame_kind depth (the frame tree stack_id points into; parent 0:
             outermost); cpu_stack(stack_id) lists one stack's frames
    metrics  pid correlation_id kernel launch_ordinal metric value flags (raw hardware counters per launch)

    Results: counters (per-kernel counter verdicts), gaps (idle gaps with causes), devices, processes,
    summary(what), stats(); metadata and losses as plain Python values.
    rank is -1 and host "" where the trace names none; device/stream are -1 where unknown.
    """

    def __init__(self, core, path):
        self._core = core
        self.path = path
        self._stack_index = {}  # stack_id -> (parent_id, frame), built by the first cpu_stack()

    def __repr__(self):
        return (f"<gtrace.Trace {self.path!r}: {self.format}, {self.event_count} events, "
                f"{self.span_ns / 1e9:.3f} s{', with data loss' if self.has_data_loss else ''}>")

    # Facts
    format = property(lambda self: self._core.format, doc="what the file was: 'gtrace', 'Chrome trace JSON' or 'PyTorch profiler (Kineto) JSON' (as in stats --json)")
    event_count = property(lambda self: self._core.event_count, doc="timeline events (not counter samples)")
    sample_count = property(lambda self: self._core.sample_count, doc="counter samples")
    first_ns = property(lambda self: self._core.first_ns)
    last_ns = property(lambda self: self._core.last_ns)
    span_ns = property(lambda self: self._core.span_ns)
    has_data_loss = property(lambda self: self._core.has_data_loss,
                             doc="True when events were lost (the CLI then exits with status 2)")

    @functools.cached_property
    def metadata(self):
        """The trace's metadata entries (command_line, host, tool_version, ...) as a dict of strings."""
        return self._core.metadata()

    @functools.cached_property
    def losses(self):
        """What could not be read or was dropped, as `gtrace stats --json` lists it: dicts of name, severity,
        count, pid, detail."""
        return self._core.losses()

    @functools.cached_property
    def problems(self):
        """Importer/builder problems, human-readable (first 100)."""
        return self._core.problems()

    # Event tables
    @functools.cached_property
    def kernels(self):
        return _frame(self._core.kernels())

    @functools.cached_property
    def copies(self):
        return _frame(self._core.copies())

    @functools.cached_property
    def api(self):
        return _frame(self._core.api())

    @functools.cached_property
    def nvtx(self):
        return _frame(self._core.nvtx())

    @functools.cached_property
    def samples(self):
        return _frame(self._core.samples())

    @functools.cached_property
    def cpu_samples(self):
        return _frame(self._core.cpu_samples())

    @functools.cached_property
    def cpu_stacks(self):
        return _frame(self._core.cpu_stacks())

    def cpu_stack(self, stack_id):
        """The frames of one sampled stack (a cpu_samples row's stack_id), outermost first, as strings
        ("file.py:function:line" for Python frames, "module!symbol" for native ones)."""
        if isinstance(stack_id, bool) or not isinstance(stack_id, (int, np.integer)):
            raise TypeError(f"stack_id must be an int, not {type(stack_id).__name__}")
        if not self._stack_index:
            st = self.cpu_stacks
            self._stack_index.update(zip(st["stack_id"].tolist(),
                                         zip(st["parent_id"].tolist(), st["frame"].astype(str).tolist())))
        frames, node = [], int(stack_id)
        if node != 0 and node not in self._stack_index:
            raise KeyError(f"no stack {stack_id}")
        while node != 0:
            parent, frame = self._stack_index[node]
            frames.append(frame)
            node = parent if parent < node else 0  # parents precede children: a chain always ends
        return frames[::-1]

    @functools.cached_property
    def metrics(self):
        return _frame(self._core.metrics())

    # Results of the viewer core's analyses
    @functools.cached_property
    def counters(self):
        """One row per profiled kernel (pid, name), launches merged: the hardware counters' verdict, as
        `gtrace stats` prints it. Empty when the trace has no counters (gcollect --counters)."""
        cols = ["name", "pid", "rank", "profiled_launches", "time_per_launch_s", "total_gpu_time_s",
                "compute_pct", "memory_pct", "memory_level", "bottleneck", "verdict", "flagged_values",
                "flops_per_s", "issue_pct", "l1_hit_pct", "l2_hit_pct", "dram_read_bytes", "dram_write_bytes",
                "achieved_occupancy_pct", "top_stall"]
        return pd.DataFrame(self._core.counters(), columns=cols)

    @functools.cached_property
    def gaps(self):
        """Every idle gap of 10 us or more (up to 256 per device), longest first; see idle_gaps()."""
        return self.idle_gaps(top=None)

    def idle_gaps(self, top=10, min_gap_ns=10_000):
        """The `top` longest idle gaps over all devices (None = all kept), longest first, with the CPU activity
        during each (list of dicts: name, kind api|range, overlap_ns) and a diagnosis. top=10 is what
        `gtrace stats` shows."""
        if top is None:
            top = 2**62
        if isinstance(top, bool) or not isinstance(top, int) or top < 0:
            raise TypeError(f"top must be a non-negative int or None, not {top!r}")
        if isinstance(min_gap_ns, bool) or not isinstance(min_gap_ns, int):
            raise TypeError(f"min_gap_ns must be an int, not {min_gap_ns!r}")
        cols = ["device", "device_name", "start_ns", "end_ns", "dur_ns", "cpu_activity", "diagnosis"]
        return pd.DataFrame(self._core.gaps(top, min_gap_ns), columns=cols)

    @functools.cached_property
    def devices(self):
        """Per GPU: active span, busy (union of kernels and copies) and idle time, idle share, event counts."""
        cols = ["device", "name", "first_ns", "last_ns", "span_ns", "busy_ns", "idle_ns", "idle_share",
                "kernels", "memcpys", "memsets"]
        return pd.DataFrame(self._core.devices(), columns=cols)

    @functools.cached_property
    def processes(self):
        cols = ["pid", "name", "command_line", "host", "rank", "local_rank", "world_size", "start_ns", "end_ns",
                "exit_code"]
        return pd.DataFrame(self._core.processes(), columns=cols)

    def summary(self, what="kernels"):
        """Per-name totals, by total time (descending): the tables of `gtrace stats` (what: 'kernels',
        'copies', 'api' or 'nvtx'). Columns name count total_ns avg_ns min_ns max_ns share (+ bytes for
        copies)."""
        if not isinstance(what, str):
            raise TypeError(f"summary: what must be a str, one of {_SUMMARIES}, not {type(what).__name__}")
        return pd.DataFrame(self._core.summary(what))

    def stats(self):
        """`gtrace stats --json` of this trace, as a dict."""
        return json.loads(self._core.stats_json())
