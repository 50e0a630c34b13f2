"""Recording from inside a script, as torch.profiler users do.

    with gtrace.profile("step.gtrace", schedule=gtrace.schedule(wait=1, warmup=1, active=3)) as p:
        for batch in loader:
            train_step(batch)
            p.step()

The collector is gcollect's own injection library (libgtrace_inject.so), loaded into this process and started
by it: CUPTI attaches to a CUDA that may already be running, records only the active steps and writes the same
.gtrace at the end. Under gcollect every call here is a no-op (gcollect records the whole run already) and says
so once.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import threading
import warnings
from typing import Callable, Optional

__all__ = ["ProfileError", "ProfilerAction", "schedule", "profile", "start", "stop", "set_recording", "range",
           "recording_state"]

_OK, _ERROR, _UNDER_LAUNCHER = 0, 1, 2
_STATES = {0: "idle", 1: "paused", 2: "recording", 3: "gcollect", 4: "stopped"}
_ABI_VERSION = 1


class ProfileError(RuntimeError):
    """In-process recording could not do what was asked (no injection library, CUPTI refused, bad option)."""


# ---- the injection library ----------------------------------------------------------------------------------


def _candidates():
    env = os.environ.get("GTRACE_INJECT_LIB")
    if env:
        yield env
        return  # an explicit choice is the only one tried
    injected = os.environ.get("CUDA_INJECTION64_PATH", "")
    if os.path.basename(injected).startswith("libgtrace_inject"):
        yield injected  # gcollect's, when this process runs under it
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libgtrace_inject.so")
    gcollect = shutil.which("gcollect")
    if gcollect:
        bindir = os.path.dirname(os.path.realpath(gcollect))
        prefix = os.path.dirname(bindir)
        yield os.path.join(bindir, "libgtrace_inject.so")  # a build tree: beside gcollect
        for libdir in ("lib/gtrace", "lib", "lib/x86_64-linux-gnu/gtrace", "lib64/gtrace"):
            yield os.path.join(prefix, libdir, "libgtrace_inject.so")
    for prefix in ("/usr/local", "/usr"):
        yield os.path.join(prefix, "lib/gtrace/libgtrace_inject.so")


_lib = None
_lib_lock = threading.Lock()


def _library():
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if not os.path.isfile(path):
                tried.append(path)
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                raise ProfileError(f"cannot load {path}: {e}") from None
            if not hasattr(lib, "gtrace_inproc_abi_version"):
                raise ProfileError(f"{path} has no in-process API: it is from an older gtrace; rebuild or reinstall")
            version = lib.gtrace_inproc_abi_version()
            if version != _ABI_VERSION:
                raise ProfileError(f"{path} speaks in-process API {version}, this package {_ABI_VERSION}")
            lib.gtrace_inproc_start.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
            lib.gtrace_inproc_record.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
            lib.gtrace_inproc_stop.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
            lib.gtrace_inproc_range_push.argtypes = [ctypes.c_char_p]
            _lib = lib
            return lib
        raise ProfileError(
            "libgtrace_inject.so not found; install gtrace (README: 'On your GPU machine') or set "
            "GTRACE_INJECT_LIB to its path. Looked in: " + ", ".join(tried)
        )


def _call(fn, *args):
    buf = ctypes.create_string_buffer(1024)
    rc = fn(*args, buf, len(buf))
    if rc == _ERROR:
        raise ProfileError(buf.value.decode("utf-8", "replace"))
    if rc == _UNDER_LAUNCHER:
        _say_under_gcollect()
    return rc


_told_under_gcollect = False


def _say_under_gcollect():
    global _told_under_gcollect
    if not _told_under_gcollect:
        _told_under_gcollect = True
        warnings.warn(
            "gtrace: this process runs under gcollect, which records the whole run; gtrace.profile/start/stop "
            "do nothing here (gtrace.range still marks ranges)",
            stacklevel=3,
        )


def recording_state() -> str:
    """'idle', 'paused', 'recording', 'stopped', or 'gcollect' (traced by gcollect)."""
    return _STATES.get(_library().gtrace_inproc_state(), "unknown")


def _options(trace: Optional[str], flush_ms: Optional[int]) -> bytes:
    parts = []
    if trace is not None:
        if not isinstance(trace, str):
            raise TypeError("trace must be a comma list of kinds such as 'kernel,memcpy,nvtx'")
        parts.append("trace=" + trace)
    if flush_ms is not None:
        if not isinstance(flush_ms, int) or isinstance(flush_ms, bool):
            raise TypeError("flush_ms must be an int")
        parts.append(f"flush_ms={flush_ms}")
    return ";".join(parts).encode()


def _path(output) -> bytes:
    if not isinstance(output, (str, os.PathLike)):
        raise TypeError(f"the output path must be a str or os.PathLike, not {type(output).__name__}")
    path = os.path.abspath(os.fspath(output))
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"the folder of {path} does not exist")
    return path.encode()


# ---- start / stop -------------------------------------------------------------------------------------------


def start(output, *, trace: Optional[str] = None, flush_ms: Optional[int] = None, record: bool = True) -> None:
    """Starts recording this process into `output` (written, replacing any file, at stop()). `trace` takes
    gcollect's --trace kinds ("default", "cuda,nvtx", "kernel,memcpy", ...). With record=False it attaches paused
    (see set_recording)."""
    if not _start(_path(output), _options(trace, flush_ms)) and record:
        set_recording(True)


def _start(path: bytes, options: bytes) -> bool:
    """Attaches paused; True when gcollect traces this process (nothing was started)."""
    return _call(_library().gtrace_inproc_start, path, options) == _UNDER_LAUNCHER


def set_recording(on: bool) -> None:
    """Switches recording on or off without ending the trace (between steps)."""
    _call(_library().gtrace_inproc_record, 1 if on else 0)


def stop() -> None:
    """Ends the recording and writes its trace."""
    _call(_library().gtrace_inproc_stop)


# ---- NVTX ranges --------------------------------------------------------------------------------------------


class range:  # noqa: A001 - named as torch.cuda.nvtx users expect
    """An NVTX range: `with gtrace.range("forward"): ...` or `@gtrace.range("load")`. Recorded by gcollect and
    by in-process recording alike; costs a function call when nothing records."""

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise TypeError("a range name must be a str")
        self._name = name.encode("utf-8", "replace")

    def __enter__(self):
        _library().gtrace_inproc_range_push(self._name)
        return self

    def __exit__(self, *exc):
        _library().gtrace_inproc_range_pop()
        return False

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapped


# ---- schedules, as torch.profiler.schedule ------------------------------------------------------------------


class ProfilerAction:
    NONE = "none"  # not recording
    WARMUP = "warmup"  # attached, not recording: CUPTI's start-up cost lands here, not in the active steps
    RECORD = "record"


def schedule(*, wait: int = 0, warmup: int = 0, active: int = 1, repeat: int = 1, skip_first: int = 0):
    """The step -> action function of torch.profiler.schedule: skip_first steps, then cycles of `wait` idle,
    `warmup` attached and `active` recorded steps, `repeat` times (0: until the profile ends). Every active
    step of every cycle goes into the one trace."""
    for key, value in (("wait", wait), ("warmup", warmup), ("active", active), ("repeat", repeat),
                       ("skip_first", skip_first)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"schedule: {key} must be a non-negative int, not {value!r}")
    if active < 1:
        raise ValueError("schedule: active must be at least 1")

    def action(step: int) -> str:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat and step >= cycle * repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        return ProfilerAction.WARMUP if pos < wait + warmup else ProfilerAction.RECORD

    action.__gtrace_schedule__ = (skip_first, wait, warmup, active, repeat)
    return action


class profile:
    """Records the steps a schedule picks (every step without one) into one .gtrace, written when the block
    ends. Call p.step() at the end of each step. Profiles do not nest: a second one while one runs raises."""

    _active = None

    def __init__(self, output, *, schedule: Optional[Callable[[int], str]] = None, trace: Optional[str] = None,
                 flush_ms: Optional[int] = None):
        self._output = _path(output)
        self._options = (trace, flush_ms)
        _options(trace, flush_ms)  # type errors now, not at __enter__
        if schedule is not None and not callable(schedule):
            raise TypeError("schedule must be a function of the step number, e.g. gtrace.schedule(...)")
        self._schedule = schedule
        self.step_num = 0
        self._under_gcollect = False
        self._recording = False

    def _apply(self):
        want = self._schedule(self.step_num) == ProfilerAction.RECORD if self._schedule else True
        if want != self._recording:
            set_recording(want)
            self._recording = want

    def __enter__(self):
        if profile._active is not None:
            raise ProfileError("a gtrace.profile is already running; profiles do not nest")
        self._under_gcollect = _start(self._output, _options(*self._options))
        profile._active = self
        if not self._under_gcollect:
            self._apply()
        return self

    def step(self):
        """Marks the end of a step: the schedule decides whether the next one is recorded."""
        self.step_num += 1
        if not self._under_gcollect and profile._active is self:
            self._apply()

    def __exit__(self, *exc):
        profile._active = None
        if not self._under_gcollect:
            stop()
        return False

    @property
    def output(self) -> str:
        return self._output.decode()
