"""The one rule: ratio samples against a claim's threshold give a verdict.

A :class:`Claim` names what an article said, where, and what ratio would
confirm it (``threshold``: the direction of the claim, or the low end of a
claimed range). A benchmark returns :class:`Measured` ratio samples, oriented
so that a larger ratio favours the claim, and :func:`verdict` turns them into
one of:

- **holds**: the lower quartile of the ratio is above the threshold;
- **does not hold**: the upper quartile is below it;
- **inconclusive**: the interquartile range straddles it (noise or a tie);
- **not testable here**: the claim needs hardware or scale this machine lacks
  (the benchmark raised :class:`NotTestable`);
- **skipped in smoke mode**: too slow for smoke mode (:class:`SkippedInSmoke`).

:func:`evaluate` runs one benchmark and returns the :class:`Outcome`. This
module imports only the standard library.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable here"
SKIPPED = "skipped in smoke mode"
VERDICTS = (HOLDS, DOES_NOT_HOLD, INCONCLUSIVE, NOT_TESTABLE, SKIPPED)


@dataclass(frozen=True)
class Claim:
    """A popular claim and the ratio that would confirm it.

    ``ratio`` says what is divided by what, oriented so that a larger number
    favours the claim; ``threshold`` is the ratio above which it holds.
    """

    id: str
    text: str
    source: str
    claimed: str
    ratio: str
    threshold: float

    def __post_init__(self) -> None:
        if not (isinstance(self.threshold, int | float) and self.threshold > 0):
            raise ValueError(f"Claim {self.id!r}: threshold must be a positive number")


class NotTestable(Exception):
    """Raised by a benchmark when this machine cannot test the claim; the message says why."""


class SkippedInSmoke(Exception):
    """Raised by a benchmark that only runs outside smoke mode; the message says why."""


@dataclass
class Measured:
    """What a benchmark returns: ratio samples (claim's orientation) and how they were taken.

    ``conditions`` holds what both frameworks ran with: ``precision`` (a dict),
    ``dtype``, ``threads`` (a dict) and ``device_name``.
    """

    samples: list[float]
    what: str
    details: dict[str, Any] = field(default_factory=dict)
    conditions: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    """A claim, what was measured, and the verdict."""

    claim: Claim
    verdict: str
    why: str
    samples: list[float] = field(default_factory=list)
    what: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    device: str = "cpu"
    device_name: str = ""
    precision: dict[str, Any] = field(default_factory=dict)
    dtype: str = ""
    threads: dict[str, Any] = field(default_factory=dict)

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    @property
    def quartiles(self) -> tuple[float, float] | None:
        return quartiles(self.samples) if self.samples else None

    def measured_text(self) -> str:
        if not self.samples:
            return "—"
        q1, q3 = self.quartiles
        return f"{self.median:.2f}x (IQR {q1:.2f}–{q3:.2f}, n={len(self.samples)})"

    def to_dict(self) -> dict[str, Any]:
        q = self.quartiles
        return {
            **asdict(self.claim),
            "verdict": self.verdict,
            "why": self.why,
            "what": self.what,
            "median": self.median,
            "q1": q[0] if q else None,
            "q3": q[1] if q else None,
            "n": len(self.samples),
            "samples": self.samples,
            "details": self.details,
            "seconds": round(self.seconds, 2),
            "device": self.device,
            "device_name": self.device_name,
            "precision": self.precision,
            "dtype": self.dtype,
            "threads": self.threads,
        }

    def conditions_text(self) -> str:
        """Device, dtype, matmul precision and threads in one line ('' when nothing ran)."""
        parts = [
            f"{self.device}" + (f" ({self.device_name})" if self.device_name else "")
        ]
        if self.dtype:
            parts.append(self.dtype)
        if self.precision:
            parts.append(
                "matmul precision "
                + ", ".join(f"{k} {v}" for k, v in self.precision.items())
            )
        if "torch_threads" in self.threads:
            parts.append(f"torch threads {self.threads['torch_threads']}")
        return "; ".join(parts)


def quartiles(samples: Sequence[float]) -> tuple[float, float]:
    """Lower and upper quartile (inclusive method); both equal the value for one sample."""
    values = [float(s) for s in samples]
    if not values:
        raise ValueError("quartiles: no samples")
    if len(values) == 1:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def verdict(samples: Sequence[float], threshold: float) -> tuple[str, str]:
    """``(verdict, why)`` for ratio samples against a claim's threshold."""
    values = [float(s) for s in samples]
    if not values:
        raise ValueError("verdict: no samples")
    bad = [s for s in values if not math.isfinite(s) or s <= 0]
    if bad:
        raise ValueError(f"verdict: ratios must be positive and finite, got {bad[:3]}")
    q1, q3 = quartiles(values)
    med = statistics.median(values)
    if q1 > threshold:
        return HOLDS, f"even the lower quartile {q1:.2f}x is above {threshold:g}x"
    if q3 < threshold:
        return (
            DOES_NOT_HOLD,
            f"even the upper quartile {q3:.2f}x is below {threshold:g}x",
        )
    return INCONCLUSIVE, (
        f"median {med:.2f}x, but the IQR {q1:.2f}–{q3:.2f}x straddles {threshold:g}x"
    )


def paired_ratios(
    numerator: Sequence[float], denominator: Sequence[float]
) -> list[float]:
    """Per-round ratios of two interleaved timing series (round i of each)."""
    if len(numerator) != len(denominator) or not numerator:
        raise ValueError(
            f"paired_ratios: need two equally long, non-empty series, got "
            f"{len(numerator)} and {len(denominator)}"
        )
    return [a / b for a, b in zip(numerator, denominator, strict=True)]


def evaluate(
    claim: Claim, measure: Callable[[], Measured], device: str = "cpu"
) -> Outcome:
    """Run one benchmark and judge the claim (a benchmark may raise NotTestable/SkippedInSmoke).

    ``device`` is the device kind the benchmark ran on; the outcome carries it,
    and the precision, dtype and threads from the measurement's ``conditions``.
    """
    start = time.perf_counter()
    try:
        m = measure()
    except NotTestable as why:
        return Outcome(
            claim,
            NOT_TESTABLE,
            str(why),
            seconds=time.perf_counter() - start,
            device=device,
        )
    except SkippedInSmoke as why:
        return Outcome(
            claim, SKIPPED, str(why), seconds=time.perf_counter() - start, device=device
        )
    v, why = verdict(m.samples, claim.threshold)
    c = m.conditions
    return Outcome(
        claim,
        v,
        why,
        list(m.samples),
        m.what,
        dict(m.details),
        time.perf_counter() - start,
        device=device,
        device_name=str(c.get("device_name", "")),
        precision=dict(c.get("precision", {})),
        dtype=str(c.get("dtype", "")),
        threads=dict(c.get("threads", {})),
    )
