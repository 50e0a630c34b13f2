"""Bad input: clear Python exceptions, never a crash of the interpreter."""
import pytest

import gtrace


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        gtrace.load("/nonexistent/x.gtrace")


def test_empty_parts_folder(tmp_path):
    d = tmp_path / "x.gtrace.parts"
    d.mkdir()
    with pytest.raises((FileNotFoundError, gtrace.TraceError)):
        gtrace.load(d)


@pytest.mark.parametrize("content", [b"", b"garbage that is no trace at all", b"\x1f\x8b\x08\x00broken gzip",
                                     b'{"a": 1}', b"[1, 2", b"GTRC" + bytes(100)])
def test_not_a_trace(tmp_path, content):
    p = tmp_path / "bad.gtrace"
    p.write_bytes(content)
    with pytest.raises(gtrace.TraceError) as e:
        gtrace.load(p)
    assert isinstance(e.value, Exception) and str(e.value)
    assert e.value.code in ("corrupt", "truncated", "unsupported", "invalid_argument", "io_error")
    with pytest.raises(gtrace.TraceError):
        gtrace.loads(content)


def test_truncated_trace_loads_with_losses(data, tmp_path):
    raw = (data / "h200_torch_train.gtrace").read_bytes()
    p = tmp_path / "cut.gtrace"
    p.write_bytes(raw[: len(raw) * 2 // 3])
    try:
        t = gtrace.load(p)
    except gtrace.TraceError:
        return  # nothing readable is a clear error too
    assert t.has_data_loss
    assert any(l["severity"] == "data loss" and l["name"] == "file_truncated" for l in t.losses)
    assert t.event_count < 1896  # the whole file has 1896


def test_damaged_chunks_load_as_losses(data, tmp_path):
    raw = (data / "h200_torch_train.gtrace").read_bytes()
    p = tmp_path / "damaged.gtrace"
    p.write_bytes(raw[:200] + bytes(range(256)) * 4)  # a real header, then noise
    t = gtrace.load(p)
    assert t.has_data_loss and t.event_count == 0 and len(t.kernels) == 0
    assert {l["name"] for l in t.losses} >= {"chunk_lost"}


@pytest.mark.parametrize("bad", [123, None, 1.5, ["a"], object()])
def test_wrong_path_types(bad):
    with pytest.raises(TypeError):
        gtrace.load(bad)


def test_wrong_argument_types(data):
    t = gtrace.load(data / "h200_idle.gtrace")
    with pytest.raises(ValueError):
        t.summary("bogus")
    with pytest.raises(TypeError):
        t.summary(5)
    with pytest.raises(TypeError):
        t.idle_gaps(top="10")
    with pytest.raises(TypeError):
        gtrace.load(data / "h200_idle.gtrace", threads=-1)
    with pytest.raises(TypeError):
        gtrace.loads("not bytes")


@pytest.mark.parametrize("fixture", ["h200_idle.gtrace", "h200_torch_profiler.json.gz"])
def test_damaged_bytes_never_crash(data, fixture):
    """Bytes flipped at random places (fixed seed): each either loads, tables and all, or raises TraceError."""
    import gzip
    import random

    raw = (data / fixture).read_bytes()
    if fixture.endswith(".gz"):
        raw = gzip.decompress(raw)
    rng = random.Random(18)
    loaded = 0
    for _ in range(40):
        b = bytearray(raw)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        try:
            t = gtrace.loads(bytes(b))
        except gtrace.TraceError:
            continue
        loaded += 1
        for table in ("kernels", "api", "copies", "nvtx", "samples", "metrics", "counters", "gaps", "devices"):
            getattr(t, table)
        t.summary("api")
        t.stats()
    assert loaded > 0  # most damage is local: the rest of the trace still loads
