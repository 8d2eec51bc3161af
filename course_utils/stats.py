"""The quartiles of a sample, the one definition timing, claims and plots share.

Timings are summarised by their median and interquartile range (IQR), and the
claims' spread rule and the timing plots' whiskers use the same quartiles, so
the number a table prints, the whisker a plot draws and the spread a verdict
judges agree. The inclusive method (``statistics.quantiles(..., method="inclusive")``)
treats the sample as the whole population of rounds. Standard library only.
"""

from __future__ import annotations

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
