"""gtrace.load() of the real H200 fixtures, checked against `gtrace stats --json` of the same file: the event
tables are aggregated here with pandas (independently of the core's summaries) and must agree exactly."""
import gzip
import json
import subprocess

import numpy as np
import pandas as pd
import pytest

import gtrace

FIXTURES = ["h200_torch_train.gtrace", "h200_torchrun_ddp.gtrace", "h200_idle.gtrace", "h200_streams.gtrace",
            "h200_nvtx.gtrace", "h200_torch_profiler.json.gz", "counters_h200.gtrace", "h200_inproc_profile.gtrace"]


def by_name(df, bytes_col=False):
    """Per-name count/total/min/max from an event table, as dicts keyed by name."""
    g = df.groupby("name", observed=True)
    out = {}
    agg = g.dur_ns.agg(["count", "sum", "min", "max"])
    if bytes_col:
        agg["bytes"] = g.bytes.sum()
    for name, row in agg.iterrows():
        out[name] = {"count": int(row["count"]), "total_ns": int(row["sum"]), "min_ns": int(row["min"]),
                     "max_ns": int(row["max"])} | ({"bytes": int(row["bytes"])} if bytes_col else {})
    return out


def stats_rows(rows, bytes_col=False):
    keys = ["count", "total_ns", "min_ns", "max_ns"] + (["bytes"] if bytes_col else [])
    return {r["name"]: {k: r[k] for k in keys} for r in rows}


def union_ns(starts, ends):
    """Length of the union of [start, end) intervals."""
    if len(starts) == 0:
        return 0
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    # A new busy block starts where an interval begins after everything before it ended.
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]
    idx = np.flatnonzero(new)
    block_end = np.append(reach[idx[1:] - 1], reach[-1])
    return int((block_end - s[idx]).sum())


@pytest.mark.parametrize("fixture", FIXTURES)
def test_tables_match_gtrace_stats(fixture, data, stats_json):
    check_against_stats(data / fixture, stats_json)


def check_against_stats(path, stats_json):
    t = gtrace.load(path)
    s = stats_json(path)
    assert t.format == s["format"]
    assert t.span_ns == s["duration_ns"]
    assert t.event_count == s["events"]
    assert t.sample_count == s["counter_samples"]
    assert len(t.samples) == s["counter_samples"]
    assert t.losses == s["losses"]

    assert by_name(t.kernels) == stats_rows(s["kernels"])
    assert by_name(t.copies, bytes_col=True) == stats_rows(s["copies"], bytes_col=True)
    assert by_name(t.api[t.api.depth == 0]) == stats_rows(s["api"])
    assert by_name(t.nvtx) == stats_rows(s["nvtx"])

    # The core's own summaries: the very rows the CLI prints, in its order.
    for what in ("kernels", "copies", "api", "nvtx"):
        df = t.summary(what)
        rows = s[what]
        assert list(df.name) == [r["name"] for r in rows]
        for col in ("count", "total_ns", "min_ns", "max_ns"):
            assert df[col].tolist() == [r[col] for r in rows], (what, col)
        assert np.allclose(df.share, [r["share"] for r in rows], rtol=1e-12, atol=0)
        assert np.allclose(df.avg_ns, [r["avg_ns"] for r in rows], rtol=1e-12, atol=0)

    # Devices: busy time recomputed from the kernel and copy columns, idle share from it.
    assert len(t.devices) == len(s["devices"])
    gpu = pd.concat([t.kernels[["device", "start_ns", "end_ns"]], t.copies[["device", "start_ns", "end_ns"]]])
    for (_, d), sd in zip(t.devices.iterrows(), s["devices"]):
        assert (d.device, d["name"], d.span_ns, d.busy_ns, d.kernels) == (
            sd["id"], sd["name"], sd["span_ns"], sd["busy_ns"], sd["kernels"])
        assert d.idle_share == pytest.approx(sd["idle_share"], rel=1e-12)
        mine = gpu[gpu.device == d.device]
        assert union_ns(mine.start_ns.to_numpy(), mine.end_ns.to_numpy()) == sd["busy_ns"]
        assert (t.kernels.device == d.device).sum() == sd["kernels"]
        assert mine.start_ns.min() == d.first_ns and mine.end_ns.max() == d.last_ns
        idle_share = 1 - union_ns(mine.start_ns.to_numpy(), mine.end_ns.to_numpy()) / d.span_ns
        assert idle_share == pytest.approx(sd["idle_share"], rel=1e-9)

    # Idle gaps: the top 10 are the CLI's, with the same causes.
    gaps = t.idle_gaps(10)
    assert len(gaps) == len(s["idle_gaps"])
    for (_, g), sg in zip(gaps.iterrows(), s["idle_gaps"]):
        assert (g.device, g.start_ns, g.dur_ns, g.diagnosis) == (
            sg["device_id"], sg["start_ns"], sg["duration_ns"], sg["diagnosis"])
        assert [a["name"] for a in g.cpu_activity] == [a["name"] for a in sg["cpu_activity"]]
    assert t.gaps.head(len(gaps)).start_ns.tolist() == gaps.start_ns.tolist()
    assert (t.gaps.dur_ns >= 10_000).all() and t.gaps.dur_ns.is_monotonic_decreasing

    # Per-kernel counter verdicts.
    assert len(t.counters) == len(s["kernel_counters"])
    for (_, c), sc in zip(t.counters.iterrows(), s["kernel_counters"]):
        assert (c["name"], c.pid, c.profiled_launches, c.bottleneck, c.verdict, c.flagged_values) == (
            sc["name"], sc["pid"], sc["profiled_launches"], sc["bottleneck"], sc["verdict"], sc["flagged_values"])
        for k in ("compute_pct", "memory_pct", "time_per_launch_s"):
            assert (np.isnan(c[k]) and sc[k] is None) or c[k] == pytest.approx(sc[k], rel=1e-12)

    assert t.stats() == s


def test_event_columns_are_numpy_and_categorical(data):
    t = gtrace.load(data / "h200_torch_train.gtrace")
    k = t.kernels
    assert len(k) == 802
    for col in ("name", "host"):
        assert isinstance(k[col].dtype, pd.CategoricalDtype)
    for col in ("start_ns", "end_ns", "dur_ns"):
        assert k[col].dtype == np.int64
    assert not any(dt == object for dt in k.dtypes)
    assert (k.end_ns - k.start_ns == k.dur_ns).all()
    assert (k.correlation_id > 0).all()
    assert (k.block_x * k.block_y * k.block_z >= 1).all()
    # Every kernel pairs with the API call that launched it (same process and correlation id).
    launches = t.api[["pid", "correlation_id", "start_ns"]].rename(columns={"start_ns": "launch_ns"})
    joined = k.merge(launches, on=["pid", "correlation_id"], how="left")
    assert joined.launch_ns.notna().all() and (joined.launch_ns <= joined.start_ns).all()
    # The 40 `step N` ranges of the training loop, each on the main thread.
    steps = t.nvtx[t.nvtx.name.str.startswith("step ")]
    assert len(steps) == 40 and steps.kind.eq("nvtx").all()
    assert t.copies.is_async.dtype == bool
    assert t.metadata["command_line"].endswith("torch_loop.py --train --iters 40")
    # Cached: the same object twice.
    assert t.kernels is k


def test_multi_rank_trace_has_ranks(data, stats_json):
    t = gtrace.load(data / "h200_torchrun_ddp.gtrace")
    procs = t.processes
    assert procs["rank"].tolist() == [-1, 0]  # torchrun itself, and its one worker (rank 0)
    assert t.kernels["rank"].unique().tolist() == [0]
    assert t.kernels.host.unique().tolist() == ["vm"]


def test_merged_trace(data, stats_json, tmp_path, gtrace_cli):
    """A `gtrace merge` of two runs loads as one trace; its tables agree with `gtrace stats --json` of it."""
    out = tmp_path / "merged.gtrace"
    inputs = [data / "h200_torchrun_ddp.gtrace", data / "h200_torch_train.gtrace"]
    r = subprocess.run([gtrace_cli, "merge", "-o", str(out)] + [str(p) for p in inputs], capture_output=True)
    assert r.returncode == 0, r.stderr
    check_against_stats(out, stats_json)
    merged = gtrace.load(out)
    parts = [gtrace.load(p) for p in inputs]
    assert len(merged.kernels) == sum(len(p.kernels) for p in parts)
    assert set(merged.kernels.pid) == set().union(*(set(p.kernels.pid) for p in parts))


def test_counters_fixture_has_raw_metrics(data):
    t = gtrace.load(data / "counters_h200.gtrace")
    assert len(t.counters) > 0 and (t.counters.profiled_launches >= 1).all()
    m = t.metrics
    assert len(m) > 0 and isinstance(m.metric.dtype, pd.CategoricalDtype)
    assert set(t.counters.name) <= set(m.kernel.astype(str))


def test_threads_do_not_change_the_tables(data):
    a = gtrace.load(data / "h200_torchrun_ddp.gtrace", threads=1)
    b = gtrace.load(data / "h200_torchrun_ddp.gtrace", threads=4)
    for table in ("kernels", "copies", "api", "nvtx", "samples"):
        pd.testing.assert_frame_equal(getattr(a, table), getattr(b, table))


def test_loads_bytes_and_gzip_equal_load(data, tmp_path):
    raw = (data / "h200_torch_train.gtrace").read_bytes()
    a = gtrace.load(data / "h200_torch_train.gtrace")
    pd.testing.assert_frame_equal(gtrace.loads(raw).kernels, a.kernels)
    gz = gzip.decompress((data / "h200_torch_profiler.json.gz").read_bytes())
    plain = tmp_path / "profile.json"
    plain.write_bytes(gz)
    j1, j2 = gtrace.load(plain), gtrace.load(data / "h200_torch_profiler.json.gz")
    assert j1.format == "PyTorch profiler (Kineto) JSON"
    assert len(j1.kernels) == 100
    pd.testing.assert_frame_equal(j1.kernels, j2.kernels)


def test_parts_folder_loads_like_the_trace(data, tmp_path):
    parts = tmp_path / "run.gtrace.parts"
    parts.mkdir()
    (parts / "gcollect.gtrace").write_bytes((data / "h200_torch_train.gtrace").read_bytes())
    pd.testing.assert_frame_equal(gtrace.load(parts).kernels, gtrace.load(data / "h200_torch_train.gtrace").kernels)


def test_chrome_json_golden(tmp_path):
    """A Chrome trace written here: every field of the tables is known."""
    doc = {"traceEvents": [
        {"ph": "X", "name": "matmul", "cat": "kernel", "pid": 1, "tid": 7, "ts": 10.0, "dur": 5.5,
         "args": {"device": 0, "stream": 7, "correlation": 42, "grid": [4, 2, 1], "block": [128, 1, 1]}},
        {"ph": "X", "name": "cudaLaunchKernel", "cat": "cuda_runtime", "pid": 1, "tid": 1, "ts": 8.0, "dur": 1.0,
         "args": {"correlation": 42}},
        {"ph": "X", "name": "forward", "cat": "user_annotation", "pid": 1, "tid": 1, "ts": 5.0, "dur": 20.0},
    ]}
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    t = gtrace.load(p)
    k = t.kernels
    assert k.name.tolist() == ["matmul"]
    assert (k.start_ns[0], k.dur_ns[0], k.end_ns[0]) == (10_000, 5_500, 15_500)
    assert (k.grid_x[0], k.grid_y[0], k.block_x[0], k.correlation_id[0]) == (4, 2, 128, 42)
    assert t.api.name.tolist() == ["cudaLaunchKernel"] and t.api.correlation_id[0] == 42
    assert t.nvtx.name.tolist() == ["forward"] and t.nvtx.dur_ns[0] == 20_000
    assert t.summary("kernels").total_ns.tolist() == [5_500]


def test_trace_with_losses_matches_gtrace_stats(data, stats_json, tmp_path):
    """A truncated trace: what loaded agrees with the CLI (which exits 2), losses included."""
    raw = (data / "h200_torch_train.gtrace").read_bytes()
    cut = tmp_path / "cut.gtrace"
    cut.write_bytes(raw[: len(raw) * 2 // 3])
    check_against_stats(cut, stats_json)
    assert gtrace.load(cut).has_data_loss and stats_json(cut)["losses"]


def test_string_columns_with_texts_that_decode_alike():
    """Two names that differ only in bytes that are not UTF-8 both decode to U+FFFD: one category, right rows."""
    from gtrace.trace import _frame

    df = _frame({"name": (np.array([0, 1, 2, 1], dtype=np.int32), ["a\ufffd", "b", "a\ufffd"])})
    assert df.name.tolist() == ["a\ufffd", "b", "a\ufffd", "b"]
    assert list(df.name.cat.categories) == ["a\ufffd", "b"]
