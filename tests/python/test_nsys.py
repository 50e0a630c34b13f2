"""Nsight Systems SQLite exports through `gtrace.load` (the same import as the CLI and the viewer)."""
import sqlite3

import gtrace


def test_nsys_export_loads_like_a_trace(data, stats_json):
    path = data / "nsys_small.sqlite"
    t = gtrace.load(path)
    assert t.format == "Nsight Systems SQLite export"
    db = sqlite3.connect(path)
    assert len(t.kernels) == db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    assert int(t.kernels["dur_ns"].sum()) == db.execute(
        "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    assert t.event_count == stats_json(path)["events"]
