"""The three ratios of benchmarks/timing_check.py, and the contention check beside them.

A ratio of two timings means something only on a quiet machine. The script runs its
measurements inside the course's contention monitor (course_utils.contention). When
the ratios are in bounds, they pass. When they are not, the monitor must have seen
the contention that explains it ("contended"), and the test is skipped as
inconclusive with the monitor's reason; ratios out of bounds on a machine the
monitor called quiet fail. In the parallel suite the machine is rarely quiet;
``make timing-check``, a serial step of ``.ci/run``, is where the ratios get asserted.
"""

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
    # timeit, which does not synchronise, reports a tiny fraction of the real time:
    # dispatch alone, which load slows no more than the work it skips
    assert results["a_timeit_naive"] < 0.1, results
    if not _inside(results):  # one retry: a burst of load from elsewhere on the machine
        results = _run()
    if not _inside(results):
        # Out of bounds is acceptable only when the monitor saw why.
        assert results["contended"], (
            f"ratios out of bounds on a machine the contention monitor called quiet: {results}"
        )
        pytest.skip(f"inconclusive: contended ({results['contended']}): {results}")
    # (a) bench synchronises: unsynchronised output costs what the synchronised one does
    assert results["a_async"] >= 0.9, results
    # (b) bench agrees with torch.utils.benchmark at the same thread count
    assert 0.9 <= results["b_vs_torch_timer"] <= 1.1, results
    # (c) the first call of a fresh jit function (trace + compile) is kept out of the median
    assert results["c_first_call"] >= 5, results
