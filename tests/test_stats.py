"""course_utils.stats: the one quartile rule, and the three places that use it."""

from __future__ import annotations

import pytest

from course_utils import plots, stats, timing
from course_utils.claims import verdict_rule


def test_quartiles_are_the_inclusive_ones_everywhere():
    values = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6]
    # sorted 1, 1.5, 2.6, 3, 4, 9; positions 1.25 and 3.75 of 0..5
    q1, q3 = 1.5 + 0.25 * (2.6 - 1.5), 3.0 + 0.75 * (4.0 - 3.0)
    assert stats.quartiles(values) == pytest.approx((q1, q3))
    assert stats.iqr(values) == pytest.approx(q3 - q1)
    assert stats.quartiles([7.0]) == (7.0, 7.0) and stats.iqr([7.0]) == 0.0
    with pytest.raises(ValueError, match="no samples"):
        stats.quartiles([])
    # timing's IQR, the claims' spread and the plots' whiskers are this rule
    assert timing.Measurement("m", values, 1, 0.0).iqr == stats.iqr(values)
    assert verdict_rule.quartiles is stats.quartiles
    assert plots.quartiles is stats.quartiles


def test_speed_reads_a_pair_the_same_way_round_either_way():
    from course_utils.stats import format_factor, speed

    ratios = [0.5, 2.2, 3.0, 2.5, 0.4, 2.0]  # a / b per round: b faster in most
    side, k = speed(ratios)
    assert side == 1 and k == 2.1  # the median of the per-round ratios
    assert speed([1 / r for r in ratios]) == (-1, pytest.approx(k))  # b / a
    assert speed([1.0, 1.0]) == (0, 1.0)
    assert [format_factor(x) for x in (1.314, 15.64, 597.2, 999.7, 12_400.0)] == [
        "1.31×",
        "15.6×",
        "597×",
        "1,000×",
        "12,400×",
    ]
