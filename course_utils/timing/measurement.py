"""One function timed honestly: :func:`bench` and its :class:`Measurement`.

The first call (trace and compile) is timed on its own, a warm-up follows, calls
are grouped in blocks long enough for the clock, blocks are repeated until a
target time with the garbage collector off, and the median and IQR are reported
with a warning on a noisy run or a compilation inside the timed region.
"""

from __future__ import annotations

import contextlib
import gc
import math
import os
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from course_utils.contention import Contention, Monitor
from course_utils.stats import iqr
from course_utils.timing.counters import CompileCounter
from course_utils.timing.synchronize import sync

NOISE_THRESHOLD = 0.10  # IQR / median above this earns a warning


@dataclass
class Measurement:
    """Result of :func:`bench`. Times are seconds per call."""

    label: str
    times: list[float]
    number: int
    first_call_s: float
    compiles: int = 0
    threads: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    contention: Contention | None = (
        None  # bench's own timed blocks; compare keeps one for all
    )

    @property
    def n(self) -> int:
        """Number of timed repeats (each the mean of ``number`` calls)."""
        return len(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def iqr(self) -> float:
        return iqr(self.times)

    @property
    def relative_iqr(self) -> float:
        return self.iqr / self.median if self.median > 0 else math.inf

    def __str__(self) -> str:
        line = (
            f"{self.label}: median {format_seconds(self.median)} "
            f"(IQR {format_seconds(self.iqr)}, {self.n} repeats x {self.number} calls); "
            f"first call {format_seconds(self.first_call_s)}"
        )
        if self.warnings:
            line += "\n  warning: " + "\n  warning: ".join(self.warnings)
        return line

    __repr__ = __str__


def format_seconds(s: float) -> str:
    """Human units: 3.2 µs, 14.1 ms, 2.05 s."""
    if not math.isfinite(s):
        return str(s)
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.3g} µs"
    return f"{s * 1e9:.3g} ns"


def thread_settings() -> dict[str, Any]:
    """Thread counts that affect CPU timings: each framework's and the cores, plus env vars.

    ``cores``, ``torch`` and ``jax`` come from :func:`contention.thread_policy`
    (``torch_threads`` repeats torch's under its older name).
    """
    from course_utils.contention import thread_policy

    info: dict[str, Any] = {
        k: os.environ[k]
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "XLA_FLAGS")
        if k in os.environ
    }
    info["cpu_count"] = os.cpu_count()
    info.update(thread_policy())
    if "torch" in info:
        info["torch_threads"] = info["torch"]
    return info


@contextlib.contextmanager
def _gc_off() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _time_calls(fn: Callable, args: tuple, kwargs: dict, number: int) -> float:
    """Seconds per call for ``number`` synchronised calls."""
    start = time.perf_counter()
    for _ in range(number):
        sync(fn(*args, **kwargs))
    return (time.perf_counter() - start) / number


# A block shorter than this is timed three times while calibrating, and the fastest
# counts: on a busy machine a call that waits for its result (a jitted call's sync)
# right after a busy stretch can wait milliseconds for a core; one such stall sized
# from a single timing gave a 30 µs call blocks of one call, whose median was then
# the stall (50x the call's own time, measured at load 15 in lesson 03).
RETIME_BELOW_S = 0.05


def _calibrate(fn: Callable, args: tuple, kwargs: dict, min_block_s: float) -> int:
    """Calls per timed block so one block lasts at least ``min_block_s``.

    A short block's length is the fastest of three timings (:data:`RETIME_BELOW_S`),
    so that one stall does not shrink the blocks to a single call.
    """
    number = 1
    while True:
        t = _time_calls(fn, args, kwargs, number) * number
        if t < RETIME_BELOW_S:
            t = min(
                t, *(_time_calls(fn, args, kwargs, number) * number for _ in range(2))
            )
        if t >= min_block_s or number >= 1_000_000:
            return number
        number = min(
            1_000_000, max(number * 2, int(number * min_block_s / max(t, 1e-9)))
        )


def bench(
    fn: Callable,
    *args: Any,
    label: str | None = None,
    target_s: float | None = None,
    min_repeats: int = 5,
    max_repeats: int = 200,
    warmup: int = 2,
    min_block_s: float = 2e-4,
    **kwargs: Any,
) -> Measurement:
    """Time ``fn(*args, **kwargs)`` honestly and return a :class:`Measurement`.

    1. The first call (trace + compile for jitted functions) is timed on its own.
    2. ``warmup`` more calls are run untimed.
    3. Calls are grouped in blocks of ``number`` calls (each call's output is
       synchronised) so a block lasts at least ``min_block_s``; blocks are
       repeated until ``target_s`` seconds have been spent (at least
       ``min_repeats`` and at most ``max_repeats`` blocks).
    4. The garbage collector is off while timing; compilations that happen in
       the timed region and a spread above 10 % are reported in ``warnings``.

    ``target_s`` defaults to 0.25 s in smoke mode and 1 s otherwise.
    """
    if not callable(fn):
        raise TypeError(f"bench: fn must be callable, got {type(fn).__name__}")
    if target_s is None:
        from course_utils.config import smoke

        target_s = 0.25 if smoke() else 1.0
    label = label or getattr(fn, "__name__", type(fn).__name__)

    with _gc_off():
        start = time.perf_counter()
        sync(fn(*args, **kwargs))
        first = time.perf_counter() - start
        for _ in range(warmup):
            sync(fn(*args, **kwargs))
        number = _calibrate(fn, args, kwargs, min_block_s)
        before = CompileCounter.snapshot()
        times: list[float] = []
        deadline = time.perf_counter() + target_s
        with Monitor() as monitor:
            while len(times) < max_repeats and (
                len(times) < min_repeats or time.perf_counter() < deadline
            ):
                times.append(_time_calls(fn, args, kwargs, number))
        compiles = CompileCounter.delta(before)

    m = Measurement(
        label=label,
        times=times,
        number=number,
        first_call_s=first,
        compiles=compiles,
        threads=thread_settings(),
        contention=monitor.result,
    )
    m.warnings.extend(_diagnose(m))
    return m


def _noisy(m: Measurement) -> bool:
    return m.relative_iqr > NOISE_THRESHOLD


def _noise_warning(noisy: list[Measurement]) -> str:
    """One line for every variant whose times vary: the IQR of each as a share of its median."""
    if len(noisy) == 1:
        m = noisy[0]
        return f"{m.label}: its times vary (IQR {m.relative_iqr:.0%} of the median)"
    spread = ", ".join(f"{m.label} {m.relative_iqr:.0%}" for m in noisy)
    return f"times vary (IQR as a share of the median: {spread})"


def _diagnose(m: Measurement) -> list[str]:
    out = []
    if _noisy(m):
        out.append(_noise_warning([m]))
    if m.compiles > 0:
        out.append(
            f"{m.label}: {m.compiles} compilation(s) inside the timed region; "
            "the steady state includes recompiles"
        )
    return out
