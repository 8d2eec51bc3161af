"""Variants compared: checked to compute the same result, then timed interleaved.

:func:`compare` calls every variant once (its first call, timed apart), checks
that their outputs agree with the baseline's, then times them in shuffled rounds
so that drifting load hits all of them; the :class:`Comparison` holds the
per-round times (whose ratios claims judge), the device kinds, the precision and
the contention the rounds ran beside, and prints as a table.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from course_utils import cell_notes, stats
from course_utils.contention import REMEDY, Contention, Monitor, policy_text
from course_utils.stats import format_factor
from course_utils.timing.counters import CompileCounter
from course_utils.timing.measurement import (
    Measurement,
    _calibrate,
    _diagnose,
    _gc_off,
    _noise_warning,
    _noisy,
    _time_calls,
    format_seconds,
    thread_settings,
)
from course_utils.timing.synchronize import device_kinds, mixed_devices, sync

MIN_ROUNDS = 8  # a verdict needs at least 6 paired ratios (verdict_rule.MIN_RATIOS)


MIN_BLOCK_S = 1e-3  # compare times blocks at least this long: shorter ones are noise


# claims.faster, registered by course_utils.claims when it is imported: claims sits
# above timing, which must not import it. A table's plot and a compile report read a
# pair as its verdict does; before claims is imported no verdict is drawn at all.
_faster: Callable[[Any, str, str], Any] | None = None


def read_verdicts_with(faster: Callable[[Any, str, str], Any]) -> None:
    """Register ``claims.faster`` (``course_utils.claims`` does, on import)."""
    global _faster
    _faster = faster


def format_ratio(x: float) -> str:
    """A ratio with two decimals, or three significant digits below 0.1 (0.003 is not 0.00)."""
    return f"{x:.2f}" if abs(x) >= 0.1 or x == 0 else f"{x:.3g}"


@dataclass
class Comparison:
    """Result of :func:`compare`: one :class:`Measurement` per variant.

    A variant's speed against the baseline is the median of their per-round time
    ratios (round i of both ran back to back), the statistic the claims' verdicts
    judge: the table, its plot and a verdict line on the same pair print the same
    number (:func:`course_utils.stats.speed`).
    """

    measurements: dict[str, Measurement]
    baseline: str
    devices: dict[str, str] = field(default_factory=dict)  # variant -> device kind(s)
    precision: str | None = None  # env.precision()'s name while the variants ran
    contention: Contention | None = None  # what the timed rounds ran beside
    # Whether compare was given rounds= (then target_s did not decide how many rounds
    # ran): a verdict's advice names the setting that acts.
    rounds_fixed: bool = False

    def _paired(self, name: str) -> bool:
        a, b = self.measurements[name].times, self.measurements[self.baseline].times
        return len(a) == len(b) > 0

    def speed(self, name: str, base: str | None = None) -> tuple[int, float]:
        """``(side, k)`` of ``name`` against ``base`` (the baseline): side 1 faster, -1 slower, 0 a tie.

        ``k`` (at least 1) is the median of the per-round ratios slower / faster;
        variants not timed in the same rounds fall back to the ratio of medians.
        """
        base = self.baseline if base is None else base
        if name == base:
            return 0, 1.0
        a, b = self.measurements[name].times, self.measurements[base].times
        if len(a) == len(b) > 0:
            return stats.speed(self.ratios(base, name))
        r = self.measurements[base].median / self.measurements[name].median
        return (1, r) if r > 1 else (-1, 1 / r) if r < 1 else (0, 1.0)

    def ratio(self, name: str) -> float:
        """Time of ``name`` over the baseline's, round by round, as one median (below 1: faster).

        The reciprocal of :meth:`speedup`; see :meth:`speed` for the median taken.
        """
        return 1.0 / self.speedup(name)

    def speedup(self, name: str) -> float:
        """How many times faster ``name`` is than the baseline (below 1: slower).

        The median of the per-round ratios baseline / ``name``, turned as
        :meth:`speed` reads them: the number the table and a verdict print.
        """
        side, k = self.speed(name)
        return k if side >= 0 else 1.0 / k

    def speed_text(self, name: str, base: str | None = None) -> str:
        """'15.6× faster', '2.76× slower', 'same speed' or 'baseline', as the table prints it."""
        if name == (self.baseline if base is None else base):
            return "baseline"
        side, k = self.speed(name, base)
        word = {1: "faster", -1: "slower"}.get(side)
        return f"{format_factor(k)} {word}" if word else "same speed"

    def reading(self, name: str, base: str | None = None) -> str:
        """:meth:`speed_text` marked as its verdict reads it: ', not judged' or ', no clear winner'.

        The verdict is ``claims.faster(self, base, name)`` (:meth:`verdict`);
        without one (claims not imported) the speed is marked not judged.
        """
        base = self.baseline if base is None else base
        text = self.speed_text(name, base)
        if name == base:
            return text
        v = self.verdict(base, name)
        if v is not None and v.verdict in ("holds", "does not hold"):
            return text
        if v is not None and v.reason.startswith("the interval"):
            return text + ", no clear winner"
        return text + ", not judged"

    def verdict(self, a: str, b: str) -> Any:
        """``claims.faster(self, a, b)``, or None before ``course_utils.claims`` is imported."""
        return _faster(self, a, b) if _faster is not None else None

    def ratios(self, numerator: str, denominator: str) -> list[float]:
        """Per-round time ratios ``numerator / denominator`` (above 1: denominator faster).

        Round i of both variants ran back to back, so drifting load cancels in
        each ratio; these are what a claim's verdict is judged from.
        """
        for name in (numerator, denominator):
            if name not in self.measurements:
                raise KeyError(
                    f"ratios: no variant {name!r}; variants: {list(self.measurements)}"
                )
        a = self.measurements[numerator].times
        b = self.measurements[denominator].times
        return [x / y for x, y in zip(a, b, strict=True)]

    def rows(self) -> list[dict[str, Any]]:
        """One dict per variant; ``ratio`` and ``speedup`` are the paired medians (:meth:`speed`)."""
        return [
            {
                "variant": name,
                "median_s": m.median,
                "iqr_s": m.iqr,
                "ratio": self.ratio(name),
                "speedup": self.speedup(name),
                "speed": self.speed_text(name),
                "first_call_s": m.first_call_s,
                "repeats": m.n,
                "device": self.devices.get(name, "?"),
            }
            for name, m in self.measurements.items()
        ]

    @property
    def warnings(self) -> list[str]:
        """The variants' warnings, the spread of all noisy variants in one line."""
        noisy = [m for m in self.measurements.values() if _noisy(m)]
        out = [_noise_warning(noisy)] if noisy else []
        return out + self._other_warnings()

    def _other_warnings(self) -> list[str]:
        """Every warning but the spread, which the table's IQR column already shows."""
        out = [
            w
            for m in self.measurements.values()
            for w in m.warnings
            if not (_noisy(m) and w == _noise_warning([m]))
        ]
        mixed = mixed_devices(self.devices)
        return out + ([mixed] if mixed else [])

    @property
    def same_device_kind(self) -> bool:
        """Whether every variant computed on one device kind (the host aside)."""
        return mixed_devices(self.devices) is None

    def table(self) -> str:
        """The Markdown table: a row per variant, its median, IQR, speed and first call."""
        several = len(self.measurements) > 1
        # The column's header names its statistic: under contention it need not
        # equal the ratio of two medians, and a reader compares the two.
        speed = f" vs {self.baseline}, median round ratio |" if several else ""
        lines = [
            f"| variant | device | median | IQR |{speed} first call |",
            "|---|---|---:|---:|" + ("---:|" if several else "") + "---:|",
        ]
        for r in self.rows():
            cells = [
                r["variant"],
                r["device"],
                format_seconds(r["median_s"]),
                format_seconds(r["iqr_s"]),
                *([r["speed"]] if several else []),
                format_seconds(r["first_call_s"]),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        text = "\n".join(lines)
        warnings = self._other_warnings()
        if warnings:
            text += "\n\n" + "\n".join(f"warning: {w}" for w in warnings)
        return text

    def conditions(self, full: bool = False) -> str:
        """How the rounds ran, in one line, each part said once per notebook cell.

        The rounds, the precision and threads, and
        whether the machine was quiet (:mod:`course_utils.cell_notes`): a part
        this cell already said is left out, a setup the cell before said too, and
        a contended run the cell before reported shrinks to a few words. Outside
        a notebook, or with ``full``, every part is said. '' when nothing is left.
        """

        def seen(key: str) -> str:
            return cell_notes.NEW if full else cell_notes.seen(key)

        several = len(self.measurements) > 1
        n = min(m.n for m in self.measurements.values())
        parts = []
        said = seen("timing: rounds")
        if said == cell_notes.NEW:
            parts.append(f"medians of {n} interleaved rounds")
        elif said == cell_notes.PREVIOUS:
            parts.append(f"{n} rounds")
        setup = [f"{self.precision} precision"] if self.precision else []
        threads = next(iter(self.measurements.values())).threads
        if "cores" in threads:
            setup.append(policy_text(threads))
        if setup and seen("timing: " + "; ".join(setup)) == cell_notes.NEW:
            parts += setup
        parts += self._state(seen, several)
        return "; ".join(parts)

    def _state(self, seen: Callable[[str], str], several: bool) -> list[str]:
        """Whether the machine was quiet, or the contended note and its remedy."""
        c = self.contention
        if c is None:
            return []
        if not c.contended:
            said = seen("timing: quiet")
            if said == cell_notes.IN_CELL:
                return []
            if said == cell_notes.PREVIOUS or c.others_share is None:
                return ["quiet"]
            return [f"quiet: other processes used {c.others_share:.0%} of the cores"]
        said = seen("contended")
        if said == cell_notes.IN_CELL:
            return []
        if said == cell_notes.PREVIOUS:
            return [f"contended again ({c.reason}): no verdict"]
        what = "no verdict is drawn" if several else "the times ran beside that work"
        return [f"contended ({c.reason}): {what}; {REMEDY}"]

    def _repr_markdown_(self) -> str:
        footer = self.conditions()
        return self.table() + (f"\n\n({footer})" if footer else "")

    def __str__(self) -> str:
        return self.table()

    def plot(self, ax=None, title: str | None = None):
        from course_utils.plots import timing_bars

        return timing_bars(self, ax=ax, title=title, baseline=self.baseline)


def compare(
    variants: Mapping[str, Callable],
    *args: Any,
    check: bool = True,
    baseline: str | None = None,
    rounds: int | None = None,
    target_s: float | None = None,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    seed: int = 0,
    **kwargs: Any,
) -> Comparison:
    """Check that the variants agree, then time them interleaved in shuffled rounds.

    Every variant is called with the same ``*args, **kwargs``. With ``check``
    (the default) their outputs must agree with the baseline's within
    ``rtol``/``atol`` (via :func:`course_utils.parity.assert_close`) before any
    timing. Each round runs every variant once in a freshly shuffled order
    (``seed`` fixes the shuffles), so drifting machine load hits all of them.
    """
    if not variants:
        raise ValueError("compare: give at least one variant")
    names = list(variants)
    baseline = names[0] if baseline is None else baseline
    if baseline not in variants:
        raise ValueError(f"compare: baseline {baseline!r} is not one of {names}")
    if target_s is None:
        from course_utils.config import smoke

        target_s = 0.25 if smoke() else 1.0

    outputs, firsts = _first_calls(variants, args, kwargs)
    if check:
        _check_agreement(outputs, baseline, rtol, atol)
    devices = {name: device_kinds(out) for name, out in outputs.items()}
    del outputs
    times, numbers, compiles, contention = _interleaved(
        variants, args, kwargs, rounds, target_s, seed
    )

    threads = thread_settings()
    result: dict[str, Measurement] = {}
    for name in names:
        m = Measurement(name, times[name], numbers[name], firsts[name], threads=threads)
        m.warnings.extend(_diagnose(m))
        result[name] = m
    if compiles:
        result[baseline].warnings.append(
            f"{compiles} compilation(s) happened while the variants were timed"
        )
    return Comparison(
        result,
        baseline,
        devices,
        _precision_name(),
        contention,
        rounds_fixed=rounds is not None,
    )


def _first_calls(
    variants: Mapping[str, Callable], args: tuple, kwargs: dict
) -> tuple[dict[str, Any], dict[str, float]]:
    """Each variant's first call (compilation included): its output and its seconds."""
    firsts: dict[str, float] = {}
    outputs: dict[str, Any] = {}
    with _gc_off():
        for name, fn in variants.items():
            start = time.perf_counter()
            outputs[name] = sync(fn(*args, **kwargs))
            firsts[name] = time.perf_counter() - start
    return outputs, firsts


def _check_agreement(
    outputs: dict[str, Any], baseline: str, rtol: float, atol: float
) -> None:
    """Raise unless every output agrees with the baseline's: timing needs the same work."""
    from course_utils.parity import assert_close

    for name, out in outputs.items():
        if name == baseline:
            continue
        try:
            assert_close(out, outputs[baseline], rtol=rtol, atol=atol, name=name)
        except AssertionError as err:
            raise AssertionError(
                f"compare: {name!r} does not compute the same result as "
                f"{baseline!r}, so timing them would compare different work.\n{err}"
            ) from None


def _interleaved(
    variants: Mapping[str, Callable],
    args: tuple,
    kwargs: dict,
    rounds: int | None,
    target_s: float,
    seed: int,
) -> tuple[dict[str, list[float]], dict[str, int], int, Contention]:
    """Time every variant in shuffled rounds: times, calls per block, compilations, contention."""
    names = list(variants)
    numbers: dict[str, int] = {}
    with _gc_off():
        for name in names:
            fn = variants[name]
            sync(fn(*args, **kwargs))  # warm-up
            numbers[name] = _calibrate(fn, args, kwargs, MIN_BLOCK_S)
        # One round costs about one block of each variant.
        per_round = sum(
            _time_calls(variants[n], args, kwargs, numbers[n]) * numbers[n]
            for n in names
        )
        if rounds is None:
            rounds = int(
                min(200, max(MIN_ROUNDS, target_s * len(names) / max(per_round, 1e-9)))
            )
        rng = random.Random(seed)
        before = CompileCounter.snapshot()
        times: dict[str, list[float]] = {n: [] for n in names}
        with Monitor() as monitor:
            for _ in range(rounds):
                order = names[:]
                rng.shuffle(order)
                for name in order:
                    times[name].append(
                        _time_calls(variants[name], args, kwargs, numbers[name])
                    )
        compiles = CompileCounter.delta(before)
    return times, numbers, compiles, monitor.result


def _precision_name() -> str | None:
    """The course's name for the float32 precision in force, when both frameworks are loaded."""
    import sys

    if "jax" not in sys.modules or "torch" not in sys.modules:
        return None
    from course_utils import env

    return env.precision()["name"]
