"""The one verdict rule: paired ratios, an interval, the stated magnitude, and the conditions.

A :class:`Claim` holds what an article said (its wording, source, the magnitude
it states and the workload it was about) and the pairings that can judge it. A
measurement gives **paired ratios**: round i of two variants timed back to back
(``timing.compare`` interleaves them), oriented so that a larger ratio favours
the claim. :func:`rule` turns them into one of the verdict words, in this order:

1. **inconclusive: too few rounds** under :data:`MIN_RATIOS` ratios;
2. **inconclusive: contended** when the timed section ran beside other work
   (:mod:`course_utils.contention`: other processes took the cores, or
   the threads oversubscribe the cores);
3. **inconclusive: noisy** when the ratios' spread (IQR / median) exceeds
   :data:`MAX_SPREAD`;
4. the **interval**: the distribution-free 95 % confidence interval of the
   median ratio (order statistics of the binomial, no assumption about the
   timing distribution, no random resampling, so the same ratios always give
   the same interval), widened by :data:`RUN_TO_RUN` on each side for what a
   second run on the same machine moves;
5. **holds** when the interval lies at or beyond the stated magnitude (its low
   end); **does not hold** when it lies entirely short of it, or entirely on
   the wrong side of 1 (the opposite happened); **inconclusive** when it
   straddles the low end.

**not testable here** (the benchmark raised :class:`NotTestable`: the stated
workload or hardware is absent, with the reason) and **skipped in smoke mode**
(:class:`SkippedInSmoke`) come from the benchmark itself. :class:`Verdict` is
what a lesson prints: the word, the reason, the interval, and a sentence
generated for the outcome that happened (:func:`explain`), never a fixed one.
This module imports only the standard library and :mod:`course_utils.stats` (the
quartiles, shared with timing and the plots).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from course_utils.stats import quartiles

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable here"
SKIPPED = "skipped in smoke mode"
VERDICTS = (HOLDS, DOES_NOT_HOLD, INCONCLUSIVE, NOT_TESTABLE, SKIPPED)

CONFIDENCE = 0.95  # of the interval for the median ratio
RUN_TO_RUN = 0.15  # each end of the interval moves out by this share (docs/VERDICTS.md)
# What the printouts call the interval they show: the one the verdict read, widened.
INTERVAL_LABEL = (
    f"{CONFIDENCE * 100:.0f} % interval widened by {RUN_TO_RUN * 100:.0f} %"
)
MAX_SPREAD = 0.50  # IQR / median of the ratios above this: noisy
MIN_RATIOS = 6  # the fewest ratios whose 95 % interval excludes the extremes
NOISY_REMEDY = "rerun on a quieter machine or with a larger timing target (target_s)"
# The same advice where the caller set the rounds (rounds=), which target_s then leaves alone.
NOISY_REMEDY_ROUNDS = (
    "rerun on a quieter machine or with more rounds (a larger rounds=)"
)


@dataclass(frozen=True)
class Pairing:
    """Which two variants a ratio divides: ``numerator`` time / ``denominator`` time.

    ``fair`` pairings change one thing (the framework, or compiling) and keep
    the rest equal: eager against eager, compiled against compiled, same
    threads, dtype, precision and device. The article's own pairing is kept when
    it can be reproduced, marked unfair when it changes two things at once.
    """

    id: str
    numerator: str
    denominator: str
    fair: bool = True
    note: str = ""


@dataclass(frozen=True)
class Claim:
    """A claim from a source article, and what would confirm it.

    ``threshold`` is the low end of the stated magnitude (the direction alone is
    1.0); ``high`` its high end for a range ("1.5–2x"). ``unit`` is ``"x"`` for
    a ratio or ``"s"`` for seconds (a stated cost, such as a first call).
    ``workload`` is what the article measured; ``here`` what this course
    measures for it (the workload itself, or a named proxy). ``notes`` adds a
    sentence per verdict word, where the outcome needs one explained.
    """

    id: str
    text: str
    source: str
    claimed: str
    ratio: str
    threshold: float
    high: float | None = None
    unit: str = "x"
    workload: str = ""
    here: str = ""
    pairings: tuple[Pairing, ...] = ()
    notes: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (isinstance(self.threshold, int | float) and self.threshold > 0):
            raise ValueError(f"Claim {self.id!r}: threshold must be a positive number")
        if self.high is not None and self.high < self.threshold:
            raise ValueError(f"Claim {self.id!r}: high {self.high} is below threshold")
        if self.unit not in ("x", "s", "fact"):
            raise ValueError(f"Claim {self.id!r}: unit must be x, s or fact")
        unknown = set(self.notes) - set(VERDICTS)
        if unknown:
            raise ValueError(f"Claim {self.id!r}: notes for unknown verdicts {unknown}")

    def pairing(self, pairing_id: str | None) -> Pairing | None:
        """The named pairing (the first one for None); KeyError names the choices."""
        if not self.pairings:
            return None
        if pairing_id is None:
            return self.pairings[0]
        for p in self.pairings:
            if p.id == pairing_id:
                return p
        raise KeyError(
            f"claim {self.id!r} has no pairing {pairing_id!r}; "
            f"pairings: {[p.id for p in self.pairings]}"
        )


class NotTestable(Exception):
    """Raised by a benchmark when this machine cannot test the claim; the message says why."""


class SkippedInSmoke(Exception):
    """Raised by a benchmark that only runs outside smoke mode; the message says why."""


def spread(samples: Sequence[float]) -> float:
    """IQR over median: 0.5 means the middle half of the ratios spans half the median."""
    q1, q3 = quartiles(samples)
    med = statistics.median(samples)
    return (q3 - q1) / med if med > 0 else math.inf


def median_interval(
    samples: Sequence[float], confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Distribution-free confidence interval of the median, from order statistics.

    For n sorted values the interval is ``[x(k), x(n-k+1)]`` with the largest
    k whose binomial tail P(Bin(n, 1/2) < k) stays within (1 - confidence) / 2;
    with too few values for that it is the whole range.
    """
    values = sorted(float(s) for s in samples)
    n = len(values)
    if not n:
        raise ValueError("median_interval: no samples")
    alpha = (1.0 - confidence) / 2
    k, tail = 0, 0.0
    while k < n // 2:
        tail += math.comb(n, k) / 2.0**n  # P(Bin = k)
        if tail > alpha:
            break
        k += 1
    k = max(k, 1)
    return values[k - 1], values[n - k]


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


@dataclass
class Stats:
    """The numbers the rule judged from."""

    median: float
    low: float  # the interval, widened by RUN_TO_RUN
    high: float
    spread: float
    n: int


def _checked(samples: Sequence[float]) -> list[float]:
    values = [float(s) for s in samples]
    if not values:
        raise ValueError("verdict: no samples")
    bad = [s for s in values if not math.isfinite(s) or s <= 0]
    if bad:
        raise ValueError(f"verdict: ratios must be positive and finite, got {bad[:3]}")
    return values


def rule(
    samples: Sequence[float],
    threshold: float,
    *,
    unit: str = "x",
    contended: str | None = None,
) -> tuple[str, str, Stats]:
    """``(verdict, reason, stats)``: the one rule (module docstring), nothing else.

    ``contended`` is the contention monitor's reason, or None for a quiet run.
    The reason is short ("noisy (spread 62 %)", "short of 1.5x"); :func:`explain`
    turns it into a sentence.
    """
    values = _checked(samples)
    lo, hi = median_interval(values)
    stats = Stats(
        statistics.median(values),
        lo / (1 + RUN_TO_RUN),
        hi * (1 + RUN_TO_RUN),
        spread(values),
        len(values),
    )
    if stats.n < MIN_RATIOS:
        return INCONCLUSIVE, f"too few rounds ({stats.n}; {MIN_RATIOS} needed)", stats
    if contended:
        return INCONCLUSIVE, f"contended ({contended})", stats
    if stats.spread > MAX_SPREAD:
        return INCONCLUSIVE, f"noisy (spread {stats.spread:.0%})", stats
    if stats.low >= threshold:
        return HOLDS, f"at or beyond {_bar(threshold, unit)}", stats
    if unit == "x" and threshold >= 1 and stats.high < 1:
        return DOES_NOT_HOLD, "the opposite happened", stats
    if stats.high < threshold:
        return DOES_NOT_HOLD, f"short of {_bar(threshold, unit)}", stats
    return INCONCLUSIVE, f"the interval straddles {_bar(threshold, unit)}", stats


def verdict(
    samples: Sequence[float], threshold: float, contended: str | None = None
) -> tuple[str, str]:
    """``(verdict, reason)`` for ratio samples against a threshold (see :func:`rule`)."""
    v, why, _ = rule(samples, threshold, contended=contended)
    return v, why


def _fmt(value: float, unit: str) -> str:
    """'1.5x' for a ratio, '800 ms' for seconds."""
    if unit != "s":
        return (
            f"{value:.2f}x"
            if value < 10
            else f"{value:.1f}x"
            if value < 100
            else f"{value:.0f}x"
        )
    for scale, name in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if value >= scale:
            return f"{value / scale:.3g} {name}"
    return f"{value * 1e9:.3g} ns"


fmt = _fmt


def _bar(value: float, unit: str) -> str:
    """A claim's threshold as stated: '1.5x', '8x', '800 ms'."""
    return _fmt(value, unit) if unit == "s" else f"{value:g}x"


@dataclass
class Measured:
    """What a benchmark returns: ratio samples (claim's orientation) and how they were taken.

    ``conditions`` holds what both frameworks ran with: ``precision`` (a dict),
    ``dtype``, ``threads`` (a dict) and ``device_name``. ``contention`` is the
    contention monitor's record of the timed section (a dict, or an object with
    ``to_dict()``), ``pairing`` the id of the claim's pairing that was timed,
    ``names`` the two variants' names (numerator, denominator) and
    ``rounds_fixed`` whether the rounds were set with ``rounds=`` (so the advice
    for an unjudged run names that setting, not ``target_s``).
    """

    samples: list[float]
    what: str
    details: dict[str, Any] = field(default_factory=dict)
    conditions: dict[str, Any] = field(default_factory=dict)
    contention: Any = None
    pairing: str | None = None
    names: tuple[str, str] | None = None
    rounds_fixed: bool = False

    def contention_dict(self) -> dict[str, Any] | None:
        c = self.contention
        return c.to_dict() if hasattr(c, "to_dict") else (dict(c) if c else None)


@dataclass
class Outcome:
    """A claim, what was measured, and the verdict (what ``course claims`` reports)."""

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
    interval: tuple[float, float] | None = None
    spread: float | None = None
    contention: dict[str, Any] | None = None
    pairing: str | None = None
    explanation: str = ""

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    @property
    def quartiles(self) -> tuple[float, float] | None:
        return quartiles(self.samples) if self.samples else None

    def measured_text(self) -> str:
        """'4.98x (95 % interval widened by 15 %: 3.9–6.6x, n=20)', or a dash."""
        if not self.samples:
            return "—"
        u = self.claim.unit
        lo, hi = self.interval or quartiles(self.samples)
        label = INTERVAL_LABEL if self.interval else "quartiles"
        return (
            f"{_fmt(self.median, u)} ({label}: {_fmt(lo, u)}–{_fmt(hi, u)}, "
            f"n={len(self.samples)})"
        )

    def to_dict(self) -> dict[str, Any]:
        q = self.quartiles
        claim = asdict(self.claim)
        claim["notes"] = dict(self.claim.notes)
        return {
            **claim,
            "verdict": self.verdict,
            "why": self.why,
            "explanation": self.explanation,
            "what": self.what,
            "median": self.median,
            "q1": q[0] if q else None,
            "q3": q[1] if q else None,
            "interval": list(self.interval) if self.interval else None,
            "spread": self.spread,
            "n": len(self.samples),
            "samples": self.samples,
            "details": self.details,
            "seconds": round(self.seconds, 2),
            "device": self.device,
            "device_name": self.device_name,
            "precision": self.precision,
            "dtype": self.dtype,
            "threads": self.threads,
            "contention": self.contention,
            "pairing": self.pairing,
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
