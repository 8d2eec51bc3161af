"""course_utils.claims.verdict_rule: the one rule at its edges, the interval, what an outcome carries."""

import math
import statistics

import pytest

from course_utils.claims import verdict_rule

QUIET = None


def rounds(center: float, n: int = 20, wobble: float = 0.05) -> list[float]:
    """n paired ratios spread evenly ±wobble around center (deterministic)."""
    return [center * (1 + wobble * (2 * i / (n - 1) - 1)) for i in range(n)]


@pytest.mark.parametrize(
    "samples, threshold, expected, reason",
    [
        (rounds(3.0), 2.0, verdict_rule.HOLDS, "at or beyond"),  # inside, well past
        (rounds(2.5), 2.0, verdict_rule.HOLDS, "at or beyond"),  # within a stated range
        # straddling the bar
        (rounds(2.0), 2.0, verdict_rule.INCONCLUSIVE, "straddles"),
        # below, right side of 1
        (rounds(1.5), 2.0, verdict_rule.DOES_NOT_HOLD, "short of"),
        (rounds(0.5), 2.0, verdict_rule.DOES_NOT_HOLD, "opposite"),  # wrong side of 1
        # a tie is not a win
        (rounds(1.0), 1.0, verdict_rule.INCONCLUSIVE, "straddles"),
        (rounds(3.0, wobble=0.9), 1.0, verdict_rule.INCONCLUSIVE, "noisy"),
        (rounds(3.0, n=5), 1.0, verdict_rule.INCONCLUSIVE, "too few"),
    ],
)
def test_rule_at_its_edges(samples, threshold, expected, reason):
    verdict, why, stats = verdict_rule.rule(samples, threshold)
    assert verdict == expected
    assert reason in why
    assert stats.n == len(samples)


def test_a_contended_run_is_never_judged():
    verdict, why, _ = verdict_rule.rule(
        rounds(5.0), 1.0, contended="load 4.0 on 2 cores"
    )
    assert verdict == verdict_rule.INCONCLUSIVE
    assert why == "contended (load 4.0 on 2 cores)"


def test_noise_is_reported_with_its_spread():
    samples = rounds(3.0, wobble=0.9)
    _, why, stats = verdict_rule.rule(samples, 1.0)
    assert why == f"noisy (spread {stats.spread:.0%})"
    assert stats.spread > verdict_rule.MAX_SPREAD


def test_the_interval_is_widened_by_the_run_to_run_allowance():
    samples = rounds(2.0, n=30)
    lo, hi = verdict_rule.median_interval(samples)
    _, _, stats = verdict_rule.rule(samples, 1.0)
    assert stats.low == pytest.approx(lo / (1 + verdict_rule.RUN_TO_RUN))
    assert stats.high == pytest.approx(hi * (1 + verdict_rule.RUN_TO_RUN))
    assert stats.median == statistics.median(samples)


def test_median_interval_uses_order_statistics():
    values = list(range(1, 21))  # n=20: the 95 % interval is [x(6), x(15)]
    assert verdict_rule.median_interval(values) == (6, 15)
    # too few: the range
    assert verdict_rule.median_interval([5.0, 1.0, 3.0]) == (1.0, 5.0)
    # narrower with more rounds of the same spread
    wide = verdict_rule.median_interval(rounds(2.0, n=10))
    narrow = verdict_rule.median_interval(rounds(2.0, n=200))
    assert narrow[1] - narrow[0] < wide[1] - wide[0]


def test_one_outlier_does_not_flip_a_verdict():
    samples = rounds(2.0) + [0.01]
    assert verdict_rule.rule(samples, 1.0)[0] == verdict_rule.HOLDS


def test_seconds_claims_have_no_wrong_side_of_one():
    verdict, why, _ = verdict_rule.rule(rounds(0.2), 0.8, unit="s")
    assert (verdict, why) == (verdict_rule.DOES_NOT_HOLD, "short of 800 ms")


@pytest.mark.parametrize(
    "bad", [[], [1.0, float("nan")], [1.0, -2.0], [0.0], [math.inf]]
)
def test_rule_rejects_unusable_samples(bad):
    with pytest.raises(ValueError):
        verdict_rule.rule(bad, 1.0)


def test_quartiles_and_spread():
    values = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6]
    q = statistics.quantiles(values, n=4, method="inclusive")
    assert verdict_rule.quartiles(values) == (q[0], q[2])
    assert verdict_rule.quartiles([7.0]) == (7.0, 7.0)
    assert verdict_rule.spread(values) == pytest.approx(
        (q[2] - q[0]) / statistics.median(values)
    )


def test_paired_ratios_pair_rounds_and_check_lengths():
    assert verdict_rule.paired_ratios([2.0, 6.0], [1.0, 2.0]) == [2.0, 3.0]
    with pytest.raises(ValueError, match="equally long"):
        verdict_rule.paired_ratios([1.0], [1.0, 2.0])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"threshold": 0.0}, "threshold"),
        ({"threshold": 2.0, "high": 1.0}, "below threshold"),
        ({"threshold": 1.0, "unit": "ms"}, "unit"),
        ({"threshold": 1.0, "notes": {"maybe": "x"}}, "unknown verdicts"),
    ],
)
def test_claims_are_checked_when_made(kwargs, match):
    with pytest.raises(ValueError, match=match):
        verdict_rule.Claim("x", "x", "s", "1x", "a / b", **kwargs)


def test_pairings_are_looked_up_by_id():
    p = verdict_rule.Pairing("compiled", "a", "b")
    c = verdict_rule.Claim("x", "x", "s", "1x", "a / b", 1.0, pairings=(p,))
    assert c.pairing(None) is p and c.pairing("compiled") is p
    with pytest.raises(KeyError, match="pairings: \\['compiled'\\]"):
        c.pairing("eager")


def test_fmt_units():
    assert (
        verdict_rule.fmt(1.5, "x") == "1.50x" and verdict_rule.fmt(206.9, "x") == "207x"
    )
    assert verdict_rule.fmt(0.8, "s") == "800 ms"
    assert verdict_rule.fmt(7e-6, "s") == "7 µs"
