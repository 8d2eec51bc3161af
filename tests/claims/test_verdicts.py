"""course_utils.claims.verdicts: the verdict rule, evaluate, and what an outcome carries."""

import math

import pytest

from course_utils.claims import verdicts
from tests.claims.fakes import CLAIM


@pytest.mark.parametrize(
    "samples, threshold, expected",
    [
        ([2.0, 2.1, 2.2, 2.3, 2.4], 1.0, verdicts.HOLDS),
        ([0.5, 0.6, 0.7, 0.8], 1.0, verdicts.DOES_NOT_HOLD),
        ([0.8, 0.9, 1.1, 1.2], 1.0, verdicts.INCONCLUSIVE),
        ([1.6], 1.5, verdicts.HOLDS),
        ([1.4], 1.5, verdicts.DOES_NOT_HOLD),
        ([12.0, 15.0, 20.0], 10.0, verdicts.HOLDS),
        ([1.0, 1.0, 1.0], 1.0, verdicts.INCONCLUSIVE),  # a tie is not a win
    ],
)
def test_verdict_uses_the_quartiles(samples, threshold, expected):
    verdict, why = verdicts.verdict(samples, threshold)
    assert verdict == expected
    assert f"{threshold:g}x" in why


def test_one_outlier_does_not_flip_a_verdict():
    # The median alone would pass; the quartiles see that half the rounds fail.
    assert (
        verdicts.verdict([0.9, 0.95, 1.05, 1.1, 50.0], 1.0)[0] == verdicts.INCONCLUSIVE
    )
    assert verdicts.verdict([2.0, 2.1, 2.2, 2.3, 0.01], 1.0)[0] == verdicts.HOLDS


@pytest.mark.parametrize(
    "bad", [[], [1.0, float("nan")], [1.0, -2.0], [0.0], [math.inf]]
)
def test_verdict_rejects_unusable_samples(bad):
    with pytest.raises(ValueError):
        verdicts.verdict(bad, 1.0)


def test_quartiles_match_statistics_inclusive():
    import statistics

    values = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6]
    q = statistics.quantiles(values, n=4, method="inclusive")
    assert verdicts.quartiles(values) == (q[0], q[2])
    assert verdicts.quartiles([7.0]) == (7.0, 7.0)


def test_paired_ratios_pair_rounds_and_check_lengths():
    assert verdicts.paired_ratios([2.0, 6.0], [1.0, 2.0]) == [2.0, 3.0]
    with pytest.raises(ValueError, match="equally long"):
        verdicts.paired_ratios([1.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        verdicts.paired_ratios([], [])


def test_claim_needs_a_positive_threshold():
    with pytest.raises(ValueError, match="threshold"):
        verdicts.Claim("x", "x", "s", "1x", "a / b", 0.0)


def test_evaluate_turns_exceptions_into_verdicts():
    def not_testable():
        raise verdicts.NotTestable("needs a TPU")

    def skipped():
        raise verdicts.SkippedInSmoke("too slow")

    out = verdicts.evaluate(CLAIM, not_testable)
    assert (out.verdict, out.why, out.samples, out.measured_text()) == (
        verdicts.NOT_TESTABLE,
        "needs a TPU",
        [],
        "—",
    )
    assert verdicts.evaluate(CLAIM, skipped).verdict == verdicts.SKIPPED
    measured = verdicts.evaluate(
        CLAIM, lambda: verdicts.Measured([3.0, 3.5, 4.0], "fake", {"k": 1})
    )
    assert measured.verdict == verdicts.HOLDS
    assert measured.median == 3.5 and measured.details == {"k": 1}
    assert measured.measured_text().startswith("3.50x (IQR ")


def test_other_errors_from_a_benchmark_propagate():
    def broken():
        raise RuntimeError("a bug, not a verdict")

    with pytest.raises(RuntimeError, match="a bug"):
        verdicts.evaluate(CLAIM, broken)


def test_outcomes_carry_the_device_and_conditions_into_json(tmp_path):
    cond = {
        "device_name": "NVIDIA H200",
        "precision": {"jax_matmul": "highest"},
        "dtype": "float32",
        "threads": {"torch_threads": 4},
    }
    o = verdicts.evaluate(
        CLAIM, lambda: verdicts.Measured([2.0, 3.0], "x", conditions=cond), "gpu"
    )
    nt = verdicts.evaluate(
        CLAIM, lambda: (_ for _ in ()).throw(verdicts.NotTestable("no")), "tpu"
    )
    d = o.to_dict()
    assert (d["device"], d["device_name"], d["dtype"]) == (
        "gpu",
        "NVIDIA H200",
        "float32",
    )
    assert d["precision"] == {"jax_matmul": "highest"} and d["threads"] == {
        "torch_threads": 4
    }
    assert {
        "id",
        "verdict",
        "why",
        "median",
        "q1",
        "q3",
        "n",
        "samples",
        "details",
    } <= set(d)
    assert (nt.verdict, nt.device, nt.precision) == (verdicts.NOT_TESTABLE, "tpu", {})
    assert o.conditions_text() == (
        "gpu (NVIDIA H200); float32; matmul precision jax_matmul highest; torch threads 4"
    )
