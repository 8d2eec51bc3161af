"""The quartiles of a sample, the one definition timing, claims and plots share.

Timings are summarised by their median and interquartile range (IQR), and the
claims' spread rule and the timing plots' whiskers use the same quartiles, so
the number a table prints, the whisker a plot draws and the spread a verdict
judges agree. :func:`speed` reads paired time ratios the one way a timing
table, its plot and a verdict line all print them: which side was faster, and
by how many times. The inclusive method (``statistics.quantiles(..., method="inclusive")``)
treats the sample as the whole population of rounds. Standard library only.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def quartiles(samples: Sequence[float]) -> tuple[float, float]:
    """Lower and upper quartile (inclusive method); both equal the value for one sample."""
    values = [float(s) for s in samples]
    if not values:
        raise ValueError("quartiles: no samples")
    if len(values) == 1:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def iqr(samples: Sequence[float]) -> float:
    """Upper minus lower quartile: 0 for one sample."""
    q1, q3 = quartiles(samples)
    return q3 - q1


def speed(ratios: Sequence[float]) -> tuple[int, float]:
    """Which side of paired time ratios ``a / b`` was faster, and the factor (at least 1).

    Returns ``(1, k)`` when ``b`` was faster, ``(-1, k)`` when ``a`` was, ``(0, 1.0)``
    for a tie. ``k`` is the median of the per-round ratios turned slower / faster,
    so the same pair read either way round gives the same side and factor (the
    side is decided by the median of the logarithms, which a turn only negates).
    """
    values = [float(r) for r in ratios]
    if not values:
        raise ValueError("speed: no ratios")
    middle = statistics.median(math.log(r) for r in values)
    if middle > 0:
        return 1, statistics.median(values)
    if middle < 0:
        return -1, statistics.median(1.0 / r for r in values)
    return 0, 1.0


def format_factor(k: float) -> str:
    """'1.31×', '15.6×', '597×', '12,400×': the digits a reader needs, no more."""
    if not math.isfinite(k):
        return f"{k}×"
    if k < 10:
        return f"{k:.2f}×"
    if k < 999.5:  # .3g would write 1e+03
        return f"{k:.3g}×"
    return f"{k:,.0f}×"
