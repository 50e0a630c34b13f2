"""Fixtures for the gtrace Python package's tests (run by CTest as python_pytest, with PYTHONPATH at the build's
python/ folder and GT_PYTEST_CLI at the gtrace CLI of the same build)."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def _cli():
    path = os.environ.get("GT_PYTEST_CLI") or str(ROOT / "build" / "native" / "viewer" / "cli" / "gtrace")
    if not os.access(path, os.X_OK):
        pytest.fail(f"the gtrace CLI is needed to check the DataFrames against `gtrace stats --json`: {path} "
                    "(set GT_PYTEST_CLI, or build build/native's gtrace)")
    return path


@pytest.fixture(scope="session")
def gtrace_cli():
    return _cli()


@pytest.fixture(scope="session")
def stats_json():
    """`gtrace stats --json FILE` of the CLI, parsed (exit 0, or 2 for a trace loaded with losses)."""
    cli = _cli()
    cache = {}

    def run(path):
        if path not in cache:
            r = subprocess.run([cli, "stats", "--json", str(path)], capture_output=True, text=True)
            assert r.returncode in (0, 2), r.stderr  # 2: loaded with losses
            cache[path] = json.loads(r.stdout)
        return cache[path]

    return run


@pytest.fixture
def data():
    return DATA
