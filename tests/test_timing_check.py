"""The three ratios of benchmarks/timing_check.py, asserted with tolerances that do not flake."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "timing_check.py"


def _run() -> dict:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.stdout.strip(), out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _inside(results: dict) -> bool:
    return (
        results["a_async"] >= 0.9
        and 0.9 <= results["b_vs_torch_timer"] <= 1.1
        and results["c_first_call"] >= 5
    )


@pytest.mark.slow
def test_timing_ratios():
    results = _run()
    if not _inside(results):  # one retry: a burst of load from elsewhere on the machine
        results = _run()
    # (a) bench synchronises: unsynchronised output costs what the synchronised one does
    assert results["a_async"] >= 0.9, results
    # timeit, which does not synchronise, reports a tiny fraction of the real time
    assert results["a_timeit_naive"] < 0.1, results
    # (b) bench agrees with torch.utils.benchmark at the same thread count
    assert 0.9 <= results["b_vs_torch_timer"] <= 1.1, results
    # (c) the first call of a fresh jit function (trace + compile) is kept out of the median
    assert results["c_first_call"] >= 5, results
