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
