"""Profiler traces read back as tables: the top ops of a JAX and a PyTorch trace (lesson 09).

Both frameworks write Chrome-trace JSON (``{"traceEvents": [...]}``): PyTorch's
``prof.export_chrome_trace(path)`` and JAX's ``jax.profiler.trace(folder,
create_perfetto_trace=True)``, which writes
``folder/plugins/profile/<run>/perfetto_trace.json.gz``. Perfetto
(https://ui.perfetto.dev) opens either file; TensorBoard's profile plugin opens
JAX's folder. Only the standard library is used here (PyTorch is imported inside
:func:`torch_profile`). Also: :func:`short_warning`, which cuts a warning that
carries a whole Python stack (anomaly mode's) down to its first line and the
notebook's own frames.
"""

from __future__ import annotations

import contextlib
import gzip
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Event = Mapping[str, Any]

# PyTorch event categories that are operators (``cpu_op``) or device kernels.
TORCH_KERNEL_CATEGORIES = ("kernel", "gpu_op")


@dataclass(frozen=True)
class OpRow:
    """One row of a top-ops table: an op's name, its calls and its self time."""

    name: str
    calls: int
    self_us: float
    share: float  # of the table's total self time, 0..1


def load_events(path: str | Path) -> list[dict[str, Any]]:
    """The events of a Chrome-trace file (``.json`` or ``.json.gz``, dict or bare list)."""
    path = Path(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        trace = json.load(f)
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        raise ValueError(f"{path}: no list of trace events in this file")
    return events


def jax_trace_file(folder: str | Path) -> Path:
    """The newest ``perfetto_trace.json.gz`` that ``jax.profiler.trace`` wrote under ``folder``."""
    found = sorted(
        Path(folder).rglob("perfetto_trace.json.gz"), key=lambda p: p.stat().st_mtime
    )
    if not found:
        raise FileNotFoundError(
            f"no perfetto_trace.json.gz under {folder}: trace with "
            "jax.profiler.trace(folder, create_perfetto_trace=True)"
        )
    return found[-1]


def self_times(events: Iterable[Event]) -> list[tuple[Event, float]]:
    """Each complete ("X") event with its self time: its duration less its direct children's.

    Events nest by time on one thread (pid, tid), as profilers write them.
    """
    by_thread: dict[tuple[Any, Any], list[Event]] = {}
    for e in events:
        if e.get("ph") == "X" and "dur" in e:
            by_thread.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    out: list[tuple[Event, float]] = []
    for evs in by_thread.values():
        evs.sort(key=lambda e: (float(e["ts"]), -float(e["dur"])))
        selfs = [float(e["dur"]) for e in evs]
        stack: list[int] = []  # indices of the open ancestors
        for i, e in enumerate(evs):
            start = float(e["ts"])
            while stack and start >= _end(evs[stack[-1]]):
                stack.pop()
            if stack:
                selfs[stack[-1]] -= float(e["dur"])
            stack.append(i)
        out.extend(zip(evs, selfs, strict=True))
    return out


def _end(e: Event) -> float:
    return float(e["ts"]) + float(e["dur"])


def is_xla_op(e: Event) -> bool:
    """A JAX trace's compiled-program op: XLA tags it with ``args.hlo_op``."""
    return "hlo_op" in (e.get("args") or {})


def is_torch_op(e: Event) -> bool:
    """A PyTorch trace's operator (``cpu_op``) or device kernel."""
    return e.get("cat") in ("cpu_op", *TORCH_KERNEL_CATEGORIES)


def top_ops(
    events: Iterable[Event], keep: Callable[[Event], bool], n: int = 10
) -> list[OpRow]:
    """The ``n`` ops with the most self time among the events ``keep`` selects.

    Self time counts each microsecond once: a parent op (``aten::linear``) keeps
    only the time its children (``aten::addmm``) do not account for.
    """
    events = list(events)
    if any(e.get("cat") in TORCH_KERNEL_CATEGORIES for e in events):
        kept = [e for e in events if e.get("cat") in TORCH_KERNEL_CATEGORIES]
    else:
        kept = list(events)
    calls: dict[str, int] = {}
    total: dict[str, float] = {}
    for e, s in self_times(kept):
        if keep(e):
            name = str(e.get("name"))
            calls[name] = calls.get(name, 0) + 1
            total[name] = total.get(name, 0.0) + max(s, 0.0)
    grand = sum(total.values()) or 1.0
    rows = [OpRow(k, calls[k], total[k], total[k] / grand) for k in total]
    rows.sort(key=lambda r: (-r.self_us, r.name))
    return rows[:n]


def op_calls(events: Iterable[Event], keep: Callable[[Event], bool]) -> int:
    """How many op events ``keep`` selects (every op call, not only the top ones)."""
    return sum(1 for e in events if e.get("ph") == "X" and keep(e))


def markdown(rows: Sequence[OpRow], title: str, steps: int = 1) -> str:
    """A Markdown table of top-ops rows, times per step."""
    lines = [
        f"| {title} | calls/step | self µs/step | share |",
        "|---|---:|---:|---:|",
    ]
    for r in rows:
        name = r.name if len(r.name) <= 48 else r.name[:45] + "..."
        lines.append(
            f"| `{name}` | {r.calls / steps:g} | {r.self_us / steps:.1f} "
            f"| {100 * r.share:.0f} % |"
        )
    return "\n".join(lines)


@contextlib.contextmanager
def torch_profile(**kwargs: Any) -> Iterator[Any]:
    """``torch.profiler.profile(**kwargs)`` without Kineto's stderr banner.

    Kineto (PyTorch's profiling library) writes ``USDT: ... profiler_start`` and
    ``profiler_stop`` lines from C++ to file descriptor 2 when a recording starts
    and stops: trace markers for system tools, nothing about the program. They
    are dropped; any other line written there is printed again.
    """
    import torch

    from course_utils.memory import quiet_profiler_banner

    with quiet_profiler_banner(), torch.profiler.profile(**kwargs) as prof:
        yield prof


# Frames of the machinery that runs a notebook cell, not of the code in it.
_RUNNER_FRAMES = ("site-packages", "/lib/python3", "<frozen ")


def short_warning(message: str, keep: int = 6) -> str:
    """A warning's first line and the last ``keep`` lines of its own (user) frames.

    ``torch.autograd.detect_anomaly`` warns with the whole stack of the forward
    call, through ipykernel, asyncio and tornado; only the first line (which
    backward op failed) and the cell's frames (``File "/tmp/ipykernel_...``)
    say anything about the program.
    """
    head, *rest = message.splitlines() or [""]
    frames: list[str] = []
    keep_next = False
    for line in rest:
        if line.lstrip().startswith("File "):
            keep_next = not any(m in line for m in _RUNNER_FRAMES)
            if keep_next:
                frames.append(line)
        elif keep_next:
            frames.append(line)
    return "\n".join([head, *frames[-keep:]])
