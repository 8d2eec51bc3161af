"""course_utils.claims.latency: the batch-1 latency benchmark, run small."""

import math

import pytest

from course_utils.claims import harness, latency


@pytest.mark.slow
def test_batch1_latency_returns_positive_paired_ratios():
    m = latency.batch1_latency(harness.Ctx(True))
    assert len(m.samples) >= 3
    assert all(math.isfinite(s) and s > 0 for s in m.samples)
    assert set(m.details["median_s"]) == {"PyTorch eager", "JAX jit"}
    assert "per sequence of 16 tokens" in m.what
