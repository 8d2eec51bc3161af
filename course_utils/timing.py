"""Honest timing for JAX and PyTorch: synchronise, separate compile from steady state, repeat.

The timing rules (CONTRIBUTING.md, "Notebooks") live here so notebooks never hand-roll
a timer: every output is synchronised inside the timed region, the first call is
timed on its own, the garbage collector is off while timing, repetition adapts to
a target time, the median and IQR are reported, noisy runs and compilations in
the timed region are flagged, and compared variants are checked for equal results
and timed interleaved.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import math
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from course_utils._trees import is_jax_array, is_torch_tensor, leaves_with_paths
from course_utils.contention import REMEDY, Contention, Monitor, policy_text

NOISE_THRESHOLD = 0.10  # IQR / median above this earns a warning
MIN_ROUNDS = 8  # a verdict needs at least 6 paired ratios (claims.verdicts.MIN_RATIOS)
MIN_BLOCK_S = 1e-3  # compare times blocks at least this long: shorter ones are noise


# --------------------------------------------------------------------------- sync


def sync(x: Any) -> Any:
    """Wait until every jax array and torch tensor in ``x`` is computed; return ``x``.

    JAX dispatches asynchronously (on CPU too), so a function returning a jax
    array returns before the work is done. PyTorch on CUDA, XLA or MPS queues
    kernels the same way. Numpy arrays and Python values need nothing.
    """
    torch_devices: dict[tuple[str, int | None], Any] = {}
    for _, leaf in leaves_with_paths(x):
        if is_jax_array(leaf):
            leaf.block_until_ready()
        elif is_torch_tensor(leaf):
            torch_devices.setdefault((leaf.device.type, leaf.device.index), leaf.device)
    for (kind, _), device in torch_devices.items():
        _torch_synchronize(kind, device)
    return x


def _torch_synchronize(kind: str, device: Any = None) -> None:
    """Wait for the queue of one torch device (each GPU has its own)."""
    if kind == "cpu":
        return
    import torch

    if kind == "cuda":
        torch.cuda.synchronize(device)
    elif kind == "mps":
        torch.mps.synchronize()
    elif kind == "xla":  # pragma: no cover - needs torch_xla
        import torch_xla.core.xla_model as xm

        xm.wait_device_ops()
    elif hasattr(torch, "accelerator"):
        torch.accelerator.synchronize()


# ------------------------------------------------------------- compile counting


class _CompileCounter:
    """Counts JAX backend compilations and torch.compile frame compilations."""

    _jax_count = 0
    _jax_listening = False

    @classmethod
    def _on_jax_event(cls, event: str, duration: float, **_: Any) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            cls._jax_count += 1

    @classmethod
    def snapshot(cls) -> tuple[int, int]:
        jax_n = -1
        if "jax" in sys.modules:
            if not cls._jax_listening:
                import jax

                jax.monitoring.register_event_duration_secs_listener(cls._on_jax_event)
                cls._jax_listening = True
            jax_n = cls._jax_count
        torch_n = -1
        dynamo_utils = sys.modules.get("torch._dynamo.utils")
        if dynamo_utils is not None:
            torch_n = int(dynamo_utils.counters["frames"]["total"])
        return jax_n, torch_n

    @classmethod
    def delta(cls, before: tuple[int, int]) -> int:
        after = cls.snapshot()
        total = 0
        for b, a in zip(before, after, strict=True):
            if b >= 0 and a >= 0:
                total += a - b
        return total


# ----------------------------------------------------------------------- bench


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
        return _iqr(self.times)

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


def _iqr(values: list[float]) -> float:
    if len(values) < 2:
        return 0.0
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[2] - q[0]


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


def _calibrate(fn: Callable, args: tuple, kwargs: dict, min_block_s: float) -> int:
    """Calls per timed block so one block lasts at least ``min_block_s``."""
    number = 1
    while True:
        t = _time_calls(fn, args, kwargs, number) * number
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
        before = _CompileCounter.snapshot()
        times: list[float] = []
        deadline = time.perf_counter() + target_s
        with Monitor() as monitor:
            while len(times) < max_repeats and (
                len(times) < min_repeats or time.perf_counter() < deadline
            ):
                times.append(_time_calls(fn, args, kwargs, number))
        compiles = _CompileCounter.delta(before)

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
    """One line for every variant whose times vary: the IQR of each, then what a verdict uses."""
    spread = ", ".join(f"{m.label} {m.relative_iqr:.0%}" for m in noisy)
    if len(noisy) == 1:
        m = noisy[0]
        head = f"{m.label}: its times vary (IQR {m.relative_iqr:.0%} of the median"
    else:
        head = f"times vary (IQR as a share of the median: {spread}"
    return (
        f"{head}); a verdict judges the paired ratios instead, whose spread "
        "cancels shared load"
    )


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


# -------------------------------------------------------------------- compare


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
                f"{format_seconds(r['iqr_s'])} | {r['ratio']:.2f} | "
                f"{r['speedup']:.2f}x | {format_seconds(r['first_call_s'])} |"
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
                parts.append(f"no verdict is drawn from these rounds: {REMEDY}")
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


def device_kinds(x: Any) -> str:
    """The device kinds holding the arrays in ``x``: ``cpu``, ``gpu``, ``tpu``, ``mps``, ``host``.

    ``host`` means no jax array or torch tensor (NumPy, Python values).
    """
    kinds = set()
    for _, leaf in leaves_with_paths(x):
        if is_jax_array(leaf):
            kinds.update(d.platform for d in leaf.devices())
        elif is_torch_tensor(leaf):
            kinds.add(leaf.device.type)
    names = {"cuda": "gpu", "rocm": "gpu", "xla": "tpu"}
    return "+".join(sorted({names.get(k, k) for k in kinds})) or "host"


def mixed_devices(devices: Mapping[str, str]) -> str | None:
    """A warning when compared variants ran on different device kinds, else None."""
    kinds = {k for k in devices.values() if k != "host"}
    if len(kinds) <= 1:
        return None
    where = ", ".join(f"{n}: {k}" for n, k in devices.items())
    return (
        f"the variants ran on different device kinds ({where}): their ratio compares "
        "devices, not frameworks; put both on one kind (env.setup().pair())"
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
    return Comparison(result, baseline, devices, _precision_name(), contention)


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
        before = _CompileCounter.snapshot()
        times: dict[str, list[float]] = {n: [] for n in names}
        with Monitor() as monitor:
            for _ in range(rounds):
                order = names[:]
                rng.shuffle(order)
                for name in order:
                    times[name].append(
                        _time_calls(variants[name], args, kwargs, numbers[name])
                    )
        compiles = _CompileCounter.delta(before)
    return times, numbers, compiles, monitor.result


def _precision_name() -> str | None:
    """The course's name for the float32 precision in force, when both frameworks are loaded."""
    import sys

    if "jax" not in sys.modules or "torch" not in sys.modules:
        return None
    from course_utils import env

    return env.precision()["name"]


# ------------------------------------------------------------- compile_report

EAGER = "eager"  # the uncompiled variant's name in CompileReport.comparison


@dataclass
class CompileReport:
    """First call vs steady state for a ``jax.jit`` or ``torch.compile`` function.

    ``first_call_s`` is one real call. ``trace_s``, ``lower_s`` and ``compile_s``
    are the parts of that same call the framework timed itself (JAX's
    monitoring events; Dynamo's compilation metrics for ``compile_s``), so
    they never add up to more than the first call. ``cold`` says whether the
    call started from empty compilation caches, ``caches`` what they held and
    did (``cache_hits`` and ``cache_misses``: JAX's persistent cache, or
    Inductor's FX graph cache). ``comparison`` holds the steady state (named
    after the framework, e.g. ``"torch.compile"``) and, when measured, eager
    (``"eager"``), timed in the same interleaved rounds;
    ``claims.faster(report.comparison, *report.names)`` asks which is faster
    from the paired per-round ratios.
    """

    framework: str
    label: str
    first_call_s: float
    steady: Measurement
    eager: Measurement | None = None
    trace_s: float | None = None
    lower_s: float | None = None
    compile_s: float | None = None
    graphs: int | None = None
    recompiles: int | None = None
    comparison: Comparison | None = None
    cold: bool = True
    caches: str = ""
    cache_hits: int = 0
    cache_misses: int = 0

    def __post_init__(self) -> None:
        if self.stages_s > self.first_call_s:
            raise ValueError(
                f"compile_report: {self.label!r}'s stages ({self.stages_s:.6f} s) "
                f"exceed its first call ({self.first_call_s:.6f} s); the stages "
                "must be timed inside the call they belong to"
            )

    @property
    def stages_s(self) -> float:
        """Trace, lower and compile together: the first call's one-off part."""
        return sum(s for s in (self.trace_s, self.lower_s, self.compile_s) if s)

    @property
    def names(self) -> tuple[str, str]:
        """The variants of ``comparison``: (eager, compiled)."""
        return EAGER, self.framework

    @property
    def contended(self) -> bool:
        """Whether other programs competed with the steady-state rounds."""
        c = self.comparison.contention if self.comparison is not None else None
        return bool(c is not None and c.contended)

    @property
    def break_even_calls(self) -> float:
        """Calls after which compiling has paid for itself against eager (inf if never)."""
        if self.eager is None:
            return math.nan
        return break_even_calls(
            self.first_call_s, self.steady.median, self.eager.median
        )

    def rows(self) -> list[tuple[str, str]]:
        what = "cold caches" if self.cold else "caches as they were"
        parts = (
            "trace + lower + compile + run"
            if self.trace_s is not None
            else ("capture + compile + run")
        )
        rows = [(f"first call, {what} ({parts})", format_seconds(self.first_call_s))]
        for key, value in (
            ("trace", self.trace_s),
            ("lower", self.lower_s),
            ("compile", self.compile_s),
        ):
            if value is not None:
                rows.append((f"… of which {key}", format_seconds(value)))
        if self.caches:
            rows.append(("caches", self.caches))
        rows.append(("steady state (median)", format_seconds(self.steady.median)))
        if self.eager is not None:
            rows.append(("eager (median)", format_seconds(self.eager.median)))
            x = self.eager.median / self.steady.median
            rows.append(
                (
                    "compiled × faster than eager (medians; a verdict needs claims)",
                    f"{x:.2f}x",
                )
            )
            be = self.break_even_calls
            calls = "never" if math.isinf(be) else f"{be:.0f}"
            if self.contended:
                calls = f"not judged (contended rounds); medians alone: {calls}"
            rows.append(("break-even calls", calls))
        if self.graphs is not None:
            rows.append(("graphs compiled", str(self.graphs)))
        if self.recompiles is not None:
            rows.append(("recompilations", str(self.recompiles)))
        return rows

    def table(self) -> str:
        lines = [f"| {self.framework}: {self.label} | |", "|---|---:|"]
        lines += [f"| {k} | {v} |" for k, v in self.rows()]
        return "\n".join(lines)

    def conditions(self) -> str:
        """How the steady state was timed: rounds, threads, how quiet the machine was."""
        if self.comparison is None:
            return "on this machine"
        return self.comparison.conditions()

    def _repr_markdown_(self) -> str:
        return self.table() + f"\n\n({self.conditions()})"

    def __str__(self) -> str:
        return self.table()

    def plot(self, ax=None, max_calls: int | None = None):
        from course_utils.plots import break_even

        if self.eager is None:
            raise ValueError(
                "plot needs an eager measurement: pass eager= to compile_report"
            )
        return break_even(
            first_call_s=self.first_call_s,
            steady_s=self.steady.median,
            eager_s=self.eager.median,
            label=f"{self.framework}: {self.label}",
            ax=ax,
            max_calls=max_calls,
        )


def break_even_calls(first_s: float, steady_s: float, eager_s: float) -> float:
    """Calls after which a compiled function's total time drops below eager's (inf if never).

    The compiled total after n calls is ``first_s + (n - 1) * steady_s``; eager's
    is ``n * eager_s``.
    """
    gain = eager_s - steady_s
    if gain <= 0:
        return math.inf
    return max(1.0, math.ceil((first_s - steady_s) / gain))


def format_calls(calls: float) -> str:
    """'37 calls', or 'never (the compiled steady state is not faster)' for inf."""
    if math.isinf(calls):
        return "never (the compiled steady state is not faster)"
    return f"{calls:.0f} calls"


def _is_jax_jit(fn: Any) -> bool:
    return "jax" in sys.modules and hasattr(fn, "lower") and hasattr(fn, "trace")


def _is_torch_compiled(fn: Any) -> bool:
    return "torch" in sys.modules and (
        hasattr(fn, "_torchdynamo_orig_callable") or hasattr(fn, "_orig_mod")
    )


def compile_report(
    fn: Callable,
    *args: Any,
    eager: Callable | None | bool = True,
    label: str | None = None,
    target_s: float | None = None,
    cold: bool = True,
    **kwargs: Any,
) -> CompileReport:
    """Measure what compiling ``fn`` costs and when it pays off.

    ``fn`` is a ``jax.jit`` function or a ``torch.compile`` function/module. Its
    first call is timed once, and the stages the framework times inside it are
    reported as parts of it: trace, lower and compile for JAX; the whole
    compilation (Dynamo, AOTAutograd, Inductor) for PyTorch.

    ``cold=True`` (the default) starts that call from empty compilation caches
    on both sides, as a new process without a disk cache would: JAX's
    in-memory caches are cleared (``jax.clear_caches()``, which drops every
    function's compiled programs) and its persistent cache is off for the call;
    PyTorch's Dynamo is reset (``torch._dynamo.reset()``, every compiled
    function) and Inductor works in an empty, throw-away cache directory (FX
    graph, AOTAutograd and kernel caches; remote caches off). What stays warm
    is the process: modules imported, Inductor's probe of the CPU's vector
    instructions, the C++ compiler's files in the OS's file cache. ``cold=False`` times the first call with the caches as they
    are; either way ``caches`` reports the hits and misses.

    ``eager=True`` times the uncompiled function too (``fn.__wrapped__`` / the
    original module or function) so the break-even number of calls can be
    given; pass a callable to choose it, or ``False`` to skip it. After the
    first call, the compiled and the eager function are timed in the same
    interleaved, shuffled rounds (:func:`compare`'s machinery): timed one after
    the other, a change of load between the two windows would land on one
    side only.
    """
    label = label or getattr(fn, "__name__", type(fn).__name__)
    if _is_jax_jit(fn):
        return _jax_compile_report(fn, args, kwargs, eager, label, target_s, cold)
    if _is_torch_compiled(fn):
        return _torch_compile_report(fn, args, kwargs, eager, label, target_s, cold)
    raise TypeError(
        f"compile_report: {label!r} is neither a jax.jit function nor a torch.compile "
        "function or module"
    )


def _first_call_s(fn: Callable, args: tuple, kwargs: dict) -> float:
    """Seconds for one synchronised call (the compiling one, when it is the first)."""
    with _gc_off():
        start = time.perf_counter()
        sync(fn(*args, **kwargs))
        return time.perf_counter() - start


def _steady_state(
    compiled: tuple[str, Callable],
    eager_fn: Callable | None,
    args: tuple,
    kwargs: dict,
    first_call_s: float,
    target_s: float | None,
) -> tuple[Measurement, Measurement | None, Comparison]:
    """Time the compiled function (after its first call) and eager in the same rounds."""
    name, fn = compiled
    variants = {name: fn} if eager_fn is None else {EAGER: eager_fn, name: fn}
    timed = compare(
        variants, *args, check=False, baseline=name, target_s=target_s, **kwargs
    )
    steady = timed.measurements[name]
    steady.first_call_s = first_call_s  # compare's "first" call came after it
    return steady, timed.measurements.get(EAGER), timed


def _without_jit(fn: Callable) -> Callable:
    """``fn`` run eagerly: jax.jit switched off inside it, nested jits included."""
    import jax

    def eager(*args: Any, **kwargs: Any) -> Any:
        with jax.disable_jit():
            return fn(*args, **kwargs)

    return eager


class _JaxEvents:
    """JAX's own timings of the stages of a call, and its persistent-cache events.

    JAX reports each top-level trace, lowering and backend compilation as a
    monitoring event with its duration; listeners cannot be removed in every
    supported JAX version, so one pair is installed once and forwards to
    the recorder in use.
    """

    STAGES = {
        "/jax/core/compile/jaxpr_trace_duration": "trace",
        "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
        "/jax/core/compile/backend_compile_duration": "compile",
    }
    _installed = False
    _active: _JaxEvents | None = None

    def __init__(self) -> None:
        self.seconds = {stage: 0.0 for stage in self.STAGES.values()}
        self.hits = 0
        self.misses = 0

    @classmethod
    def _on_duration(cls, event: str, duration: float, **_: Any) -> None:
        rec = cls._active
        if rec is not None and event in cls.STAGES:
            rec.seconds[cls.STAGES[event]] += duration

    @classmethod
    def _on_event(cls, event: str, **_: Any) -> None:
        rec = cls._active
        if rec is not None and event == "/jax/compilation_cache/cache_hits":
            rec.hits += 1
        elif rec is not None and event == "/jax/compilation_cache/cache_misses":
            rec.misses += 1

    def __enter__(self) -> _JaxEvents:
        cls = type(self)
        if not cls._installed:
            import jax

            jax.monitoring.register_event_duration_secs_listener(cls._on_duration)
            jax.monitoring.register_event_listener(cls._on_event)
            cls._installed = True
        cls._active = self
        return self

    def __exit__(self, *exc: Any) -> None:
        type(self)._active = None


def _jax_persistent_cache_on() -> bool:
    """Whether JAX's persistent compilation cache is configured (a directory, enabled)."""
    import jax

    return bool(
        jax.config.jax_compilation_cache_dir and jax.config.jax_enable_compilation_cache
    )


@contextlib.contextmanager
def _jax_persistent_cache_off() -> Iterator[None]:
    """Switch JAX's persistent compilation cache off inside the block, then restore it."""
    import jax
    from jax.experimental.compilation_cache import compilation_cache

    saved = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", False)
    compilation_cache.reset_cache()  # JAX decides once whether the cache is used
    try:
        yield
    finally:
        jax.config.update("jax_enable_compilation_cache", saved)
        compilation_cache.reset_cache()


def _jax_compile_report(
    fn, args, kwargs, eager, label, target_s, cold
) -> CompileReport:
    import jax

    persistent = _jax_persistent_cache_on()
    off = contextlib.nullcontext()
    if cold:
        jax.clear_caches()  # trace, lowering and executable caches, every function
        if persistent:
            off = _jax_persistent_cache_off()
    with off, _JaxEvents() as events:
        first = _first_call_s(fn, args, kwargs)
    if cold:
        caches = "in-memory cleared (jax.clear_caches()); persistent cache off"
        caches += " for this call" if persistent else " (not configured)"
    elif persistent:
        caches = (
            f"as they were; persistent cache {events.hits} hit(s), "
            f"{events.misses} miss(es)"
        )
    else:
        caches = "as they were; persistent cache not configured"
    eager_fn = getattr(fn, "__wrapped__", None) if eager is True else eager or None
    steady, eager_m, timed = _steady_state(
        ("jax.jit", fn),
        _without_jit(eager_fn) if eager_fn is not None else None,
        args,
        kwargs,
        first,
        target_s,
    )
    cached = getattr(fn, "_cache_size", None)  # programs compiled for fn since clear
    return CompileReport(
        framework="jax.jit",
        label=label,
        first_call_s=first,
        steady=steady,
        eager=eager_m,
        trace_s=events.seconds["trace"],
        lower_s=events.seconds["lower"],
        compile_s=events.seconds["compile"],
        recompiles=cached() - 1 if cached is not None else None,
        comparison=timed,
        cold=cold,
        caches=caches,
        cache_hits=events.hits,
        cache_misses=events.misses,
    )


def _torch_eager(fn: Any) -> Callable | None:
    """The uncompiled callable behind a torch.compile result.

    For a module, the original module (``_orig_mod``), so its hooks run; its
    ``_torchdynamo_orig_callable`` is the bare ``forward`` method.
    """
    orig = getattr(fn, "_orig_mod", None)
    return orig if orig is not None else getattr(fn, "_torchdynamo_orig_callable", None)


def _clear_inductor_memory() -> None:
    """Drop Inductor's in-memory code caches (compiled modules keyed by their source)."""
    import torch._inductor.utils as inductor_utils

    clear = getattr(inductor_utils, "clear_caches", None) or getattr(
        inductor_utils, "clear_inductor_caches", None
    )
    if clear is not None:
        clear()


def _probe_vector_isa() -> None:
    """Let Inductor find which vector instructions this CPU has, where it keeps the answer.

    Inductor probes the CPU by compiling and loading a small C++ program per
    instruction set (seconds each), caching the programs in its cache
    directory and the answer in memory. It is a fact about the machine, not
    part of compiling a graph: asked here, before the empty directory, it is
    answered once per process from the usual directory.
    """
    try:
        from torch._inductor import cpu_vec_isa
    except ImportError:  # pragma: no cover - another torch layout
        return
    probe = getattr(cpu_vec_isa, "valid_vec_isa_list", None)
    if probe is not None:
        probe()


@contextlib.contextmanager
def cold_inductor_cache() -> Iterator[str]:
    """An empty, throw-away Inductor cache directory for the block (yields its path).

    Inside it torch.compile finds no FX graph, AOTAutograd or kernel cache
    entry and no in-memory compiled code, and remote caches are off, so it
    compiles from scratch. Which vector instructions the CPU supports (a
    probe of the machine, not of the graph) is settled before, outside it.
    Call ``torch._dynamo.reset()`` first for a cold start of Dynamo too.
    Outside the block the previous directory is back.
    """
    import tempfile

    import torch._inductor.config as inductor_config

    _probe_vector_isa()
    saved = {
        k: os.environ.get(k) for k in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")
    }
    with tempfile.TemporaryDirectory(prefix="course-inductor-") as path:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = path
        os.environ["TRITON_CACHE_DIR"] = os.path.join(path, "triton")
        _clear_inductor_memory()
        try:
            remote = ("fx_graph_remote_cache", "autotune_remote_cache")
            remote += ("bundled_autotune_remote_cache",)
            off = {k: False for k in remote if hasattr(inductor_config, k)}
            with inductor_config.patch(off):
                yield path
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            _clear_inductor_memory()


def _fx_graph_cache_counts() -> tuple[int, int]:
    """Inductor's FX graph cache hits and misses so far in this process."""
    from torch._dynamo.utils import counters

    c = counters["inductor"]
    return int(c["fxgraph_cache_hit"]), int(c["fxgraph_cache_miss"])


def _torch_compile_report(
    fn, args, kwargs, eager, label, target_s, cold
) -> CompileReport:
    import torch._dynamo
    from torch._dynamo.utils import counters

    if cold:
        torch._dynamo.reset()  # every function's compiled code, as in a new process
    place = cold_inductor_cache() if cold else contextlib.nullcontext()
    with place:
        graphs_before = int(counters["stats"]["unique_graphs"])
        hits0, misses0 = _fx_graph_cache_counts()
        seen = _torch_compile_events()
        first = _first_call_s(fn, args, kwargs)
        graphs = int(counters["stats"]["unique_graphs"]) - graphs_before
        hits1, misses1 = _fx_graph_cache_counts()
        new = _torch_compiles_since(seen)
    hits, misses = hits1 - hits0, misses1 - misses0
    where = (
        "Dynamo reset; Inductor in an empty cache directory" if cold else "as they were"
    )
    caches = f"{where}; FX graph cache {hits} hit(s), {misses} miss(es)"
    compile_s = sum(getattr(m, "entire_frame_compile_time_s", None) or 0.0 for m in new)
    eager_fn = _torch_eager(fn) if eager is True else eager or None
    steady, eager_m, timed = _steady_state(
        ("torch.compile", fn), eager_fn, args, kwargs, first, target_s
    )
    return CompileReport(
        framework="torch.compile",
        label=label,
        first_call_s=first,
        steady=steady,
        eager=eager_m,
        compile_s=compile_s,
        graphs=graphs,
        recompiles=_torch_recompiles_since(seen),  # first call and steady state
        comparison=timed,
        cold=cold,
        caches=caches,
        cache_hits=hits,
        cache_misses=misses,
    )


def _torch_compile_events() -> list:
    """Dynamo's record of recent frame compilations (one entry per compiled frame)."""
    from torch._dynamo.utils import get_compilation_metrics

    return get_compilation_metrics()


def _torch_compiles_since(seen: list) -> list:
    """The frame compilations Dynamo recorded after ``seen``."""
    old = {id(m) for m in seen}
    return [m for m in _torch_compile_events() if id(m) not in old]


def _torch_recompiles_since(seen: list) -> int:
    """Recompilations among the frame compilations recorded after ``seen``.

    A graph break makes Dynamo compile a resume function as a new frame; that
    is not a recompilation. Dynamo records a ``recompile_reason`` only when a
    frame it already compiled is compiled again (a guard failed).
    """
    return sum(
        1 for m in _torch_compiles_since(seen) if getattr(m, "recompile_reason", None)
    )


# --------------------------------------------------------------- no_recompile


class RecompilationError(RuntimeError):
    """A jitted or compiled function compiled again where it should not have."""


class _CompileLogHandler(logging.Handler):
    _pattern = re.compile(r"Compiling (\S+)")

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.names: list[str] = []
        self.reasons: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if "TRACING CACHE MISS" in msg:
            self.reasons.append(msg.strip())
            return
        match = self._pattern.match(msg)
        if match:
            self.names.append(match.group(1))


# dispatch logs "Finished tracing/compilation ..." at WARNING under jax_log_compiles.
_JAX_LOGGERS = (
    "jax._src.interpreters.pxla",
    "jax._src.interpreters.partial_eval",
    "jax._src.dispatch",
)


@contextlib.contextmanager
def no_recompile(what: str = "this block") -> Iterator[None]:
    """Raise :class:`RecompilationError` if anything compiles inside the block.

    Enter it after a warm-up call. For ``jax.jit`` every compilation inside
    the block is collected (with JAX's explanation of the cache miss) and
    reported on exit, naming the function. For ``torch.compile`` Dynamo's
    ``error_on_recompile`` is switched on, so a recompile raises at once with
    Dynamo's reason; it is re-raised as :class:`RecompilationError`.
    """
    handler = None
    jax = sys.modules.get("jax")
    saved_jax: dict[str, Any] = {}
    loggers: list[tuple[logging.Logger, int, bool]] = []
    if jax is not None:
        handler = _CompileLogHandler()
        for flag in ("jax_log_compiles", "jax_explain_cache_misses"):
            saved_jax[flag] = getattr(jax.config, flag)
            jax.config.update(flag, True)
        for name in _JAX_LOGGERS:
            lg = logging.getLogger(name)
            loggers.append((lg, lg.level, lg.propagate))
            lg.addHandler(handler)
            lg.setLevel(logging.DEBUG)
            lg.propagate = False  # keep the compile logs out of the reader's output
    dynamo_config = None
    saved_torch = None
    if "torch" in sys.modules:
        import torch._dynamo

        dynamo_config = torch._dynamo.config
        saved_torch = dynamo_config.error_on_recompile
        dynamo_config.error_on_recompile = True
    try:
        try:
            yield
        except Exception as err:
            if type(err).__name__ == "RecompileError":
                raise RecompilationError(
                    f"torch.compile recompiled inside {what}: {err}"
                ) from err
            raise
    finally:
        if dynamo_config is not None:
            dynamo_config.error_on_recompile = saved_torch
        for lg, level, propagate in loggers:
            lg.removeHandler(handler)
            lg.setLevel(level)
            lg.propagate = propagate
        for flag, value in saved_jax.items():
            jax.config.update(flag, value)
    if handler is not None and handler.names:
        names = ", ".join(dict.fromkeys(handler.names))
        why = ("\n" + "\n".join(handler.reasons[:3])) if handler.reasons else ""
        raise RecompilationError(
            f"jax compiled {len(handler.names)} time(s) inside {what}: {names}{why}"
        )
