"""gtrace.profile / start / stop / range without a GPU: every misuse is a clear Python error, a machine without
a working CUDA gets CUPTI's reason (not a crash, not litter on disk), and schedules pick the steps torch.profiler's
would. The recording itself is exercised on the H200 (bench/python/profile_loop.py; fixtures
tests/data/h200_inproc_*.gtrace, checked by tests/collector/fixtures_test.cc)."""

import os

import pytest

import gtrace
from gtrace.recording import ProfileError, ProfilerAction

needs_lib = pytest.mark.skipif(not os.environ.get("GTRACE_INJECT_LIB"), reason="GTRACE_INJECT_LIB not set")


def test_schedule_matches_torch_profiler_semantics():
    s = gtrace.schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=2)
    got = [s(i) for i in range(10)]
    N, W, R = ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD
    assert got == [N, N, W, R, R, N, W, R, R, N]
    forever = gtrace.schedule(wait=0, warmup=0, active=1, repeat=0)
    assert all(forever(i) == R for i in range(50))


@pytest.mark.parametrize("bad", [dict(active=0), dict(wait=-1), dict(warmup=1.5), dict(repeat=True)])
def test_schedule_rejects_bad_arguments(bad):
    with pytest.raises(ValueError):
        gtrace.schedule(**bad)


def test_bad_types_are_type_errors(tmp_path):
    with pytest.raises(TypeError):
        gtrace.profile(3)
    with pytest.raises(TypeError):
        gtrace.profile(tmp_path / "x.gtrace", schedule=5)
    with pytest.raises(TypeError):
        gtrace.profile(tmp_path / "x.gtrace", flush_ms="often")
    with pytest.raises(TypeError):
        gtrace.range(7)
    with pytest.raises(FileNotFoundError):
        gtrace.profile(tmp_path / "no" / "such" / "x.gtrace")


def test_missing_library_names_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setenv("GTRACE_INJECT_LIB", str(tmp_path / "libgtrace_inject.so"))
    monkeypatch.setattr(gtrace.recording, "_lib", None)
    with pytest.raises(ProfileError, match="GTRACE_INJECT_LIB"):
        gtrace.start(tmp_path / "x.gtrace")


@needs_lib
def test_without_a_gpu_start_fails_with_cuptis_reason_and_leaves_nothing(tmp_path):
    out = tmp_path / "x.gtrace"
    assert gtrace.recording_state() == "idle"
    with pytest.raises(ProfileError, match="CUPTI"):
        gtrace.start(out)
    assert os.listdir(tmp_path) == []
    with pytest.raises(ProfileError, match="CUPTI"):
        with gtrace.profile(out):
            pass
    assert os.listdir(tmp_path) == []
    # A failed profile leaves no half-started state: the next one gets the same clear answer.
    with pytest.raises(ProfileError, match="CUPTI"):
        with gtrace.profile(out, schedule=gtrace.schedule(wait=1, active=1)):
            pass


@needs_lib
def test_stop_and_set_recording_without_a_recording(tmp_path):
    with pytest.raises(ProfileError, match="no recording"):
        gtrace.stop()
    with pytest.raises(ProfileError, match="no recording"):
        gtrace.set_recording(True)


@needs_lib
def test_unknown_options_are_refused_before_cupti(tmp_path):
    with pytest.raises(ProfileError, match="unknown trace kind 'bogus'"):
        gtrace.start(tmp_path / "x.gtrace", trace="bogus")
    with pytest.raises(ProfileError, match="flush_ms"):
        gtrace.start(tmp_path / "x.gtrace", flush_ms=1)


@needs_lib
def test_ranges_work_when_nothing_records():
    @gtrace.range("decorated")
    def f(x):
        return x + 1

    with gtrace.range("outer"):
        assert f(1) == 2
