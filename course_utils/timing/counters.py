"""What the frameworks record about their own compilations, read around a timed region.

:class:`CompileCounter` counts JAX backend compilations and Dynamo frame
compilations (a compilation inside a timed region is flagged); ``_JaxEvents``
collects JAX's own durations of the trace, lowering and compile stages of a call
and its persistent-cache hits; the ``_torch_*`` readers give Dynamo's
compilation records and Inductor's FX graph cache counts; :class:`DynamoGraphs` is a
``torch.compile`` backend that keeps each graph Dynamo hands it (a count of graph breaks).
"""

from __future__ import annotations

import sys
import time
from typing import Any


class CompileCounter:
    """Counts JAX backend compilations and torch.compile frame compilations.

    ``before = CompileCounter.snapshot()``, then the code, then
    ``CompileCounter.delta(before)``: the compilations in between, of the
    frameworks already imported (a framework not imported yet counts none).
    """

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


class _JaxEvents:
    """JAX's own timings of the stages of a call, and its persistent-cache events.

    JAX reports each trace, lowering and backend compilation as a monitoring
    event with its duration, when it ends; listeners cannot be removed in every
    supported JAX version, so one pair is installed once and forwards to
    the recorder in use. jax 0.7 also reports the trace of each jitted function
    called inside the traced one (``jnp.matmul``, ``jax.nn.relu``), within the
    outer trace's time: each event counts only the time no longer event already
    covers (:func:`_outermost_seconds`), so nested work is not counted twice and
    the stages never add up to more than the call they belong to.
    """

    STAGES = {
        "/jax/core/compile/jaxpr_trace_duration": "trace",
        "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
        "/jax/core/compile/backend_compile_duration": "compile",
    }
    _installed = False
    _active: _JaxEvents | None = None

    def __init__(self) -> None:
        self.intervals: list[tuple[str, float, float]] = []  # (stage, start, end)
        self.hits = 0
        self.misses = 0

    @property
    def seconds(self) -> dict[str, float]:
        """Seconds per stage, each moment counted once (in its outermost event)."""
        return _outermost_seconds(self.intervals, self.STAGES.values())

    @classmethod
    def _on_duration(cls, event: str, duration: float, **_: Any) -> None:
        rec = cls._active
        if rec is not None and event in cls.STAGES:
            end = time.perf_counter()  # the event is reported as it ends
            rec.intervals.append((cls.STAGES[event], end - duration, end))

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


def _outermost_seconds(
    intervals: list[tuple[str, float, float]], stages: Any
) -> dict[str, float]:
    """Seconds per stage of ``(stage, start, end)`` intervals, longest first: each adds
    only its time outside the longer ones, so an event nested in another adds nothing."""
    seconds = dict.fromkeys(stages, 0.0)
    counted: list[tuple[float, float]] = []  # disjoint
    for stage, start, end in sorted(intervals, key=lambda i: i[1] - i[2]):
        covered = sum(max(0.0, min(b, end) - max(a, start)) for a, b in counted)
        seconds[stage] += max(0.0, end - start - covered)
        counted = _merged([*counted, (start, end)])
    return seconds


def _merged(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The union of ``(start, end)`` spans, as disjoint spans in order."""
    out: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _fx_graph_cache_counts() -> tuple[int, int]:
    """Inductor's FX graph cache hits and misses so far in this process."""
    from torch._dynamo.utils import counters

    c = counters["inductor"]
    return int(c["fxgraph_cache_hit"]), int(c["fxgraph_cache_miss"])


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


class DynamoGraphs:
    """A ``torch.compile`` backend that keeps every graph Dynamo hands it and runs it as is.

    ``torch.compile(fn, backend=graphs)``: after the calls, ``len(graphs)`` is the number
    of graphs recorded (one graph: no break); nothing is compiled by Inductor.
    """

    def __init__(self) -> None:
        self.graphs: list[Any] = []

    def __call__(self, gm: Any, example_inputs: Any) -> Any:
        self.graphs.append(gm)
        return gm.forward

    def __len__(self) -> int:
        return len(self.graphs)
