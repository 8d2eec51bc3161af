"""The three ratios of benchmarks/timing_check.py.

A ratio of two timings means something only on a quiet machine. In the parallel suite
(two workers, kernels, compilers) the ratios are asserted when the load average leaves
room, and otherwise reported as inconclusive (skipped). ``make timing-check``, a serial
step of ``.ci/run``, sets ``COURSE_TIMING_STRICT=1``: there they are always asserted.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "timing_check.py"
STRICT = os.environ.get("COURSE_TIMING_STRICT") == "1"


def _load() -> float:
    """The one-minute load average per core."""
    return os.getloadavg()[0] / (os.cpu_count() or 1)


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
    # timeit, which does not synchronise, reports a tiny fraction of the real time:
    # dispatch alone, which load slows no more than the work it skips
    assert results["a_timeit_naive"] < 0.1, results
    if not _inside(results):  # one retry: a burst of load from elsewhere on the machine
        results = _run()
    if not _inside(results) and not STRICT and _load() > 0.75:
        pytest.skip(
            f"inconclusive on a busy machine (load {_load():.1f} per core): {results}; "
            "make timing-check asserts these serially"
        )
    # (a) bench synchronises: unsynchronised output costs what the synchronised one does
    assert results["a_async"] >= 0.9, results
    # (b) bench agrees with torch.utils.benchmark at the same thread count
    assert 0.9 <= results["b_vs_torch_timer"] <= 1.1, results
    # (c) the first call of a fresh jit function (trace + compile) is kept out of the median
    assert results["c_first_call"] >= 5, results
