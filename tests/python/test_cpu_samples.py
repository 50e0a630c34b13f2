"""Sampled CPU stacks from Python (Trace.cpu_samples, cpu_stacks, cpu_stack) on the H200 slow-DataLoader
fixture (tests/data/README.md), checked against `gtrace stats --json`'s idle-gap attribution and the ground
truth of bench/collector/cpu_gaps.py (SlowDataset.__getitem__ sleeps 2 ms per item)."""
import pathlib

import pytest

import gtrace

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data"


@pytest.fixture(scope="module")
def loader():  # loaded once for the module (the `data` fixture is per test)
    return gtrace.load(DATA / "cpu_h200_loader.gtrace")


def test_columns_and_stacks(loader):
    s, st = loader.cpu_samples, loader.cpu_stacks
    assert list(s.columns) == ["time_ns", "pid", "tid", "rank", "host", "stack_id", "frame", "frame_kind", "flags",
                               "python", "idle_repeat"]
    assert list(st.columns) == ["stack_id", "parent_id", "frame", "frame_kind", "depth"]
    assert len(s) > 100_000 and s.time_ns.is_monotonic_increasing
    assert set(s.frame_kind.unique()) <= {"python", "native", "none"}
    # Every sample's stack is in the tree, and its innermost frame is that node's frame.
    nodes = st.set_index("stack_id")
    unwound = s[s.stack_id != 0]
    assert unwound.stack_id.isin(nodes.index).all()
    some = unwound.iloc[::997]
    assert (nodes.loc[some.stack_id, "frame"].astype(str).values == some.frame.astype(str).values).all()
    # Parents precede their children; depth counts the frames above.
    assert (st.parent_id < st.stack_id).all()
    row = st.iloc[-1]
    assert len(loader.cpu_stack(int(row.stack_id))) == row.depth + 1
    assert loader.cpu_stack(0) == []
    with pytest.raises(KeyError):
        loader.cpu_stack(10**9)
    with pytest.raises(TypeError):
        loader.cpu_stack("1")


def test_gap_samples_agree_with_stats(loader, data, stats_json):
    """An idle gap's sample count in stats --json is the samples of the threads that call CUDA in it."""
    gap = stats_json(data / "cpu_h200_loader.gtrace")["idle_gaps"][0]
    start, end = gap["start_ns"], gap["start_ns"] + gap["duration_ns"]
    api = loader.api
    feeders = set(zip(api.pid.tolist(), api.tid.tolist()))
    s = loader.cpu_samples
    inside = s[(s.time_ns >= start) & (s.time_ns < end)]
    mine = [(p, t) in feeders for p, t in zip(inside.pid.tolist(), inside.tid.tolist())]
    assert int(sum(mine)) == gap["cpu_samples"]["samples"]
    # python_samples: samples with a Python frame anywhere in their stack (the flag says the thread's Python
    # frames were read; an idle repeat may reuse a stack read before), from the frame tree.
    st = loader.cpu_stacks
    has_py = {0: False}
    for sid, parent, kind in zip(st.stack_id.tolist(), st.parent_id.tolist(), st.frame_kind.astype(str).tolist()):
        has_py[sid] = kind == "python" or has_py.get(parent, False)
    assert sum(has_py[i] for i in inside[mine].stack_id.tolist()) == gap["cpu_samples"]["python_samples"]


def test_steady_state_sleeps_in_the_dataset(loader, data, stats_json):
    gap = stats_json(data / "cpu_h200_loader.gtrace")["idle_gaps"][0]  # the start-up (imports)
    start = gap["start_ns"] + gap["duration_ns"] + 300_000_000
    s = loader.cpu_samples
    main = s[(s.time_ns >= start) & (s.time_ns < start + 500_000_000) & (s.pid == s.tid)]
    assert len(main) == 500  # 1 kHz
    top = main.stack_id.value_counts().index[0]
    frames = loader.cpu_stack(int(top))
    assert frames[-1] == "libc.so.6!clock_nanosleep"
    assert frames[-2].endswith("cpu_gaps.py:SlowDataset.__getitem__:24")  # the time.sleep line
    in_getitem = [any("SlowDataset.__getitem__" in f for f in loader.cpu_stack(int(i))) for i in main.stack_id]
    assert sum(in_getitem) / len(main) > 0.5


def test_no_samples(data):
    t = gtrace.load(data / "h200_nvtx.gtrace")
    assert len(t.cpu_samples) == 0 and "stack_id" in t.cpu_samples.columns
    assert len(t.cpu_stacks) == 0
