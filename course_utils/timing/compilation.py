"""What compiling costs and when it pays off: :func:`compile_report`.

The first call of a ``jax.jit`` or ``torch.compile`` function is timed once, from
cold caches by default, with the stages the framework timed inside it; the
compiled steady state and eager are then timed in the same interleaved rounds
(:func:`course_utils.timing.compare`), and :func:`break_even_calls` says after
how many calls compiling has paid for itself.
"""

from __future__ import annotations

import contextlib
import functools
import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from course_utils.timing.caches import (
    cold_inductor_cache,
    jax_persistent_cache_off,
    jax_persistent_cache_on,
)
from course_utils.timing.comparison import Comparison, compare
from course_utils.timing.counters import (
    _fx_graph_cache_counts,
    _JaxEvents,
    _torch_compile_events,
    _torch_compiles_since,
    _torch_recompiles_since,
)
from course_utils.timing.measurement import Measurement, _gc_off, format_seconds
from course_utils.timing.synchronize import sync

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

    @functools.cached_property
    def per_call(self):
        """``claims.faster`` on (eager, compiled): the verdict the speed and break-even rows follow.

        None without an eager measurement, or before ``course_utils.claims`` is
        imported (``Comparison.verdict``).
        """
        if self.eager is None or self.comparison is None:
            return None
        return self.comparison.verdict(*self.names)

    @property
    def break_even_calls(self) -> float:
        """Calls after which compiling has paid for itself against eager (inf if never).

        From the compiled median and the per-call verdict's factor (the median of
        the paired per-round ratios), the statistic the speed row prints.
        """
        if self.eager is None:
            return math.nan
        return break_even_from(
            self.per_call, self.first_call_s, self.steady.median, self.eager.median
        )

    @property
    def judged(self) -> bool:
        """Whether the per-call verdict named a winner (so the break-even is judged)."""
        verdict = self.per_call
        return verdict is not None and verdict.verdict in ("holds", "does not hold")

    def speed_text(self) -> str:
        """The compiled steady state against eager, as its verdict reads it: '5.92× faster'.

        Marked ', not judged' or ', no clear winner' where the per-call verdict
        named no winner (``Comparison.reading``); '' without an eager measurement.
        """
        if self.eager is None or self.comparison is None:
            return ""
        return self.comparison.reading(self.framework, EAGER)

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
            verdict = self.per_call
            per_call = (
                verdict.line()
                if verdict is not None
                else f"{self.comparison.speed_text(EAGER)} than eager, not judged"
            )
            rows.append(("per call", per_call))
            be = self.break_even_calls
            calls = "never" if math.isinf(be) else f"{be:,.0f} calls"
            rows.append(
                ("break-even", calls if self.judged else f"{calls}, not judged")
            )
        if self.graphs is not None:
            rows.append(("graphs compiled", str(self.graphs)))
        if self.recompiles is not None:
            rows.append(("recompilations", str(self.recompiles)))
        return rows

    def table(self) -> str:
        lines = [f"| {self.framework}: {self.label} | |", "|---|---:|"]
        lines += [f"| {k} | {v} |" for k, v in self.rows()]
        return "\n".join(lines)

    def conditions(self, full: bool = False) -> str:
        """How the steady state was timed, each part once per cell (``Comparison.conditions``)."""
        if self.comparison is None:
            return ""
        return self.comparison.conditions(full)

    def _repr_markdown_(self) -> str:
        footer = self.conditions()
        return self.table() + (f"\n\n({footer})" if footer else "")

    def __str__(self) -> str:
        return self.table()

    def plot(self, ax=None, max_calls: int | None = None):
        from course_utils.plots import break_even

        if self.eager is None:
            raise ValueError(
                "plot needs an eager measurement: pass eager= to compile_report"
            )
        steady = self.steady.median
        return break_even(
            first_call_s=self.first_call_s,
            steady_s=steady,
            eager_s=_eager_per_call(self.per_call, steady, self.eager.median),
            label=f"{self.framework}: {self.label}",
            ax=ax,
            max_calls=max_calls,
            judged=self.judged,
        )


def compile_table(reports: Mapping[str, CompileReport]) -> str:
    """Several reports as one Markdown table, a row each, then one footer.

    *In steady calls* is the first call over the steady median: what compiling
    has to earn back. *Compiled vs eager* is the per-call verdict's reading
    (:meth:`CompileReport.speed_text`), and the break-even follows it:
    (first call - steady) / (steady x (speed - 1)), rounded up; "never" when
    the compiled call is not faster. The footer is the conditions of the first
    contended report, or of the first report; where other rows were not
    contended it starts with that row's name. Then why each other row not judged
    was not ('noisy (spread 62 %)', or 'contended').
    """
    lines = [
        "| function, compiler | first call | in steady calls | steady "
        "| compiled vs eager | break-even |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, r in reports.items():
        be = r.break_even_calls
        calls = (
            "–" if math.isnan(be) else "never" if math.isinf(be) else f"{be:,.0f} calls"
        )
        lines.append(
            f"| {name} | {format_seconds(r.first_call_s)} "
            f"| {r.first_call_s / r.steady.median:,.0f} "
            f"| {format_seconds(r.steady.median)} | {r.speed_text() or '–'} | {calls} |"
        )
    busy = [name for name, r in reports.items() if r.contended]
    first = reports[busy[0]] if busy else next(iter(reports.values()), None)
    footer = first.conditions() if first is not None else ""
    named = []  # contended rows when others were judged: the footer names its own
    if busy and len(busy) < len(reports):
        if footer:
            footer, busy = f"{busy[0]}: {footer}", busy[1:]
        named = busy
    why = [  # rows not judged for a reason of their own; the footer says a contended run's
        f"{name}: {'contended' if name in named else r.per_call.reason}"
        for name, r in reports.items()
        if name in named
        or r.per_call is not None
        and not r.judged
        and not r.per_call.reason.startswith(("the interval", "contended"))
    ]
    notes = f"\n\nNot judged: {'; '.join(why)}." if why else ""
    return "\n".join(lines) + (f"\n\n({footer})" if footer else "") + notes


def break_even_calls(first_s: float, steady_s: float, eager_s: float) -> float:
    """Calls after which a compiled function's total time drops below eager's (inf if never).

    The compiled total after n calls is ``first_s + (n - 1) * steady_s``; eager's
    is ``n * eager_s``.
    """
    gain = eager_s - steady_s
    if gain <= 0:
        return math.inf
    return max(1.0, math.ceil((first_s - steady_s) / gain))


def _eager_per_call(per_call: Any, compiled_s: float, eager_s: float) -> float:
    """Eager's time per call as the per-call verdict reads it: the compiled median times
    its factor (the median of the paired ratios); ``eager_s`` where there is no verdict."""
    factor = getattr(per_call, "factor", None)
    if factor is None:
        return eager_s
    side = per_call.side  # 1: the compiled variant (the second name) was faster
    return compiled_s * (factor if side > 0 else 1 / factor if side < 0 else 1.0)


def break_even_from(
    per_call: Any, first_call_s: float, compiled_s: float, eager_s: float
) -> float:
    """:func:`break_even_calls` with eager's time per call read from the per-call verdict.

    ``per_call`` is ``claims.faster`` on (eager, compiled), or None (then the
    medians decide): the count then rests on the statistic the verdict line prints.
    """
    return break_even_calls(
        first_call_s, compiled_s, _eager_per_call(per_call, compiled_s, eager_s)
    )


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
    given; for JAX it runs under ``jax.disable_jit()``, which also switches off
    the jits inside ``jax.numpy`` functions. Pass a callable to choose eager
    (it runs as given), or ``False`` to skip it. After the
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


def _jax_compile_report(
    fn, args, kwargs, eager, label, target_s, cold
) -> CompileReport:
    import jax

    persistent = jax_persistent_cache_on()
    off = contextlib.nullcontext()
    if cold:
        jax.clear_caches()  # trace, lowering and executable caches, every function
        if persistent:
            off = jax_persistent_cache_off()
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
    if eager is True:  # the original, run op by op: its inner jits switched off too
        original = getattr(fn, "__wrapped__", None)
        eager_fn = _without_jit(original) if original is not None else None
    else:  # a callable passed in runs as given
        eager_fn = eager or None
    steady, eager_m, timed = _steady_state(
        ("jax.jit", fn),
        eager_fn,
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
