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

from course_utils.contention import REMEDY, Contention, Monitor, policy_text
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


def format_ratio(x: float) -> str:
    """A ratio with two decimals, or three significant digits below 0.1 (0.003 is not 0.00)."""
    return f"{x:.2f}" if abs(x) >= 0.1 or x == 0 else f"{x:.3g}"


@dataclass
class Comparison:
    """Result of :func:`compare`: one :class:`Measurement` per variant."""

    measurements: dict[str, Measurement]
    baseline: str
    devices: dict[str, str] = field(default_factory=dict)  # variant -> device kind(s)
    precision: str | None = None  # env.precision()'s name while the variants ran
    contention: Contention | None = None  # what the timed rounds ran beside
    # Whether the remedy for a contended run has been printed with these rounds
    # (under the table, or in the first verdict judged from them): it is said once.
    remedy_said: bool = field(default=False, repr=False, compare=False)
    # Whether compare was given rounds= (then target_s did not decide how many rounds
    # ran): a verdict's advice names the setting that acts.
    rounds_fixed: bool = False

    def ratio(self, name: str) -> float:
        """Median time of ``name`` divided by the baseline's (below 1 = faster)."""
        return self.measurements[name].median / self.measurements[self.baseline].median

    def speedup(self, name: str) -> float:
        """How many times faster ``name`` is than the baseline."""
        return 1.0 / self.ratio(name)

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
        return [
            {
                "variant": name,
                "median_s": m.median,
                "iqr_s": m.iqr,
                "ratio": self.ratio(name),
                "speedup": self.speedup(name),
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
        out += [
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
        head = (
            f"| variant | device | median | IQR | time / {self.baseline} | speed-up "
            "| first call |"
        )
        lines = [head, "|---|---|---:|---:|---:|---:|---:|"]
        for r in self.rows():
            lines.append(
                f"| {r['variant']} | {r['device']} | {format_seconds(r['median_s'])} | "
                f"{format_seconds(r['iqr_s'])} | {format_ratio(r['ratio'])} | "
                f"{format_ratio(r['speedup'])}x | {format_seconds(r['first_call_s'])} |"
            )
        text = "\n".join(lines)
        if self.warnings:
            text += "\n\n" + "\n".join(f"warning: {w}" for w in self.warnings)
        return text

    def conditions(self) -> str:
        """Precision, threads and how quiet the machine was, in one line."""
        parts = ["on this machine; medians of interleaved rounds"]
        if self.precision:
            parts.append(f"{self.precision} precision")
        threads = next(iter(self.measurements.values())).threads
        if "cores" in threads:
            parts.append(policy_text(threads))
        if self.contention is not None:
            parts.append(self.contention.text())
            if self.contention.contended:  # said here, then not in every verdict
                parts.append(
                    f"no verdict is drawn from these rounds: {REMEDY}"
                    if len(self.measurements) > 1
                    else f"the times above ran beside that work: {REMEDY}"
                )
                self.remedy_said = True
        return "; ".join(parts)

    def _repr_markdown_(self) -> str:
        return self.table() + f"\n\n({self.conditions()})"

    def __str__(self) -> str:
        return self.table()

    def plot(self, ax=None, title: str | None = None):
        from course_utils.plots import timing_bars

        return timing_bars(
            self.measurements, ax=ax, title=title, baseline=self.baseline
        )


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
