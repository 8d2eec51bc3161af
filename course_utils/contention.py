"""Is this machine quiet enough to time on? One thread policy, and contention measured.

A ratio timed while other programs compete for the cores says more about them
than about the code. This module checks what it can, before and during a timed
section, and :mod:`course_utils.timing` attaches the result to every
comparison; the claims' verdict rule turns a contended run into
"inconclusive", never into a verdict.

- **Thread policy** (:func:`set_threads`, called once by ``env.setup()``): both
  frameworks use the same number of intra-op threads, the cores this process
  may run on. JAX sizes its CPU thread pool from them when it starts and offers
  no way to change it afterwards, so PyTorch is set to match.
  :func:`thread_policy` says what is in force, for the record.
- **Contention** (:class:`Monitor`): around a timed section it reads, on Linux,
  how much CPU time other processes took on this process's cores
  (``/proc/stat``'s busy time minus this process's own CPU time). More than
  :data:`MAX_OTHERS_SHARE` of the cores' time means other work competed with
  the timing. Where those counters are missing (macOS, Windows) the 1-minute
  load average above the core count stands in. Intra-op threads above the core
  count (oversubscription) count as contended. How long this process's own
  threads waited for a CPU (``/proc/self/task/*/schedstat``) is recorded too.

Imports only the standard library; torch is consulted only if already imported.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

MAX_OTHERS_SHARE = (
    0.25  # other processes' CPU time / (cores x wall) above this: contended
)
REMEDY = (  # printed once under each contended table, not in every verdict
    "rerun the cell when no other program keeps the cores busy "
    "(`uptime` shows the load)"
)


def cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def load_average() -> float | None:
    """The 1-minute load average, or None where the OS keeps none."""
    if hasattr(os, "getloadavg"):
        try:
            return round(os.getloadavg()[0], 2)
        except OSError:
            return None
    return None


def set_threads(n: int | None = None) -> dict[str, Any]:
    """Apply the course's thread policy (``n`` defaults to :func:`cores`) and return it.

    PyTorch's intra-op threads are set to ``n``; JAX's CPU pool is whatever it
    was sized to at start (the cores), so pass ``n`` only to study threads.
    """
    n = cores() if n is None else int(n)
    if n < 1:
        raise ValueError(f"set_threads: n must be at least 1, got {n}")
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return thread_policy()


def thread_policy() -> dict[str, Any]:
    """Intra-op threads of each loaded framework and the cores, as now in force."""
    policy: dict[str, Any] = {"cores": cores()}
    torch = sys.modules.get("torch")
    if torch is not None:
        policy["torch"] = torch.get_num_threads()
    if "jax" in sys.modules:
        policy["jax"] = _jax_pool_size()
    return policy


def _jax_pool_size() -> int:
    """JAX's CPU pool: the cores at start (what XLA's CPU client sizes it from)."""
    return cores()


def policy_text(policy: dict[str, Any]) -> str:
    """'threads: torch 2, JAX 2, on 2 cores' for printing next to a result."""
    parts = [
        f"{name} {policy[key]}"
        for key, name in (("torch", "torch"), ("jax", "JAX"))
        if key in policy
    ]
    return f"threads: {', '.join(parts) or 'no framework loaded'}, on {policy['cores']} cores"


def oversubscribed(policy: dict[str, Any]) -> str | None:
    """Why the thread settings alone oversubscribe the cores, or None."""
    over = [
        f"{name} uses {policy[key]} threads"
        for key, name in (("torch", "torch"), ("jax", "JAX"))
        if policy.get(key, 0) > policy["cores"]
    ]
    if not over:
        return None
    return f"oversubscribed: {' and '.join(over)} on {policy['cores']} cores"


def _busy_cpu_seconds() -> float | None:
    """Busy seconds of this process's cores, every process together (Linux /proc/stat).

    Counts user, nice, system, irq, softirq and steal time (a hypervisor's
    other guests) of the CPUs in the affinity mask; None where /proc/stat is
    missing.
    """
    try:
        lines = Path("/proc/stat").read_text().splitlines()
    except OSError:
        return None
    mine = (
        {f"cpu{i}" for i in os.sched_getaffinity(0)}
        if hasattr(os, "sched_getaffinity")
        else None
    )
    ticks = 0
    for line in lines:
        name, *fields = line.split()
        if name.startswith("cpu") and name != "cpu" and (mine is None or name in mine):
            values = [int(v) for v in fields[:8]] + [0] * 8
            ticks += sum(values[i] for i in (0, 1, 2, 5, 6, 7))
    return ticks / os.sysconf("SC_CLK_TCK") if ticks else None


def _run_queue_seconds() -> float | None:
    """Seconds this process's threads have spent runnable but waiting for a CPU."""
    tasks = Path("/proc/self/task")
    if not tasks.is_dir():
        return None
    total = 0
    found = False
    for task in tasks.iterdir():
        try:
            fields = (task / "schedstat").read_text().split()
        except OSError:
            continue  # the thread ended meanwhile
        if len(fields) >= 2:
            total += int(fields[1])
            found = True
    return total / 1e9 if found else None


@dataclass
class Contention:
    """What :class:`Monitor` saw; ``reason`` is None when the section ran undisturbed."""

    cores: int
    load_before: float | None = None
    load_after: float | None = None
    wait_share: float | None = None  # None: the OS keeps no run-queue counter
    wall_s: float = 0.0
    threads: dict[str, Any] | None = None
    reason: str | None = None
    others_share: float | None = None  # None: the OS keeps no per-CPU busy counter

    @property
    def contended(self) -> bool:
        return self.reason is not None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        """One line: the verdict on the conditions, the measure that decided it first.

        Where other processes' share of the cores was measured, it decides, and
        the load average follows as context: it counts this process's own
        threads too, so a quiet run can show a load above the core count.
        """
        if self.reason:
            return f"contended ({self.reason})"
        load = self.load_after if self.load_after is not None else self.load_before
        if self.others_share is None:  # the load average decides
            return "quiet: " + (
                f"load {load:.1f} on {self.cores} cores"
                if load is not None
                else f"{self.cores} cores"
            )
        parts = [
            f"other processes used {self.others_share:.0%} of the {self.cores} cores "
            f"(contended above {MAX_OTHERS_SHARE:.0%})"
        ]
        if load is not None:
            parts.append(f"load {load:.1f}, this process's own threads included")
        return "quiet: " + "; ".join(parts)


class Monitor:
    """Context manager around a timed section: ``with Monitor() as m: ...; m.result``."""

    def __init__(self, max_others_share: float = MAX_OTHERS_SHARE) -> None:
        self.max_others_share = max_others_share
        self.result: Contention | None = None

    def __enter__(self) -> Monitor:
        self._load = load_average()
        self._queue = _run_queue_seconds()
        self._busy = _busy_cpu_seconds()
        self._own = time.process_time()
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        wall = time.perf_counter() - self._start
        own = time.process_time() - self._own
        queue, busy = _run_queue_seconds(), _busy_cpu_seconds()
        share = others = None
        if wall > 0 and self._queue is not None and queue is not None:
            share = max(0.0, queue - self._queue) / wall
        if wall > 0 and self._busy is not None and busy is not None:
            others = max(0.0, busy - self._busy - own) / (cores() * wall)
        c = Contention(
            cores(), self._load, load_average(), share, wall, thread_policy()
        )
        c.others_share = others
        self.result = judge(c, self.max_others_share)


def judge(c: Contention, max_others_share: float = MAX_OTHERS_SHARE) -> Contention:
    """Fill in ``c.reason`` from what was measured (the one contention rule).

    Oversubscribed threads are contended; otherwise other processes' share of
    the cores decides (above ``max_others_share``), and where the OS keeps no
    per-CPU counters, a load average above the core count. How long this
    process's own threads waited (``wait_share``) is reported, not judged: it
    includes the frameworks' own threads queueing behind each other, which is
    part of what is being measured.
    """
    over = oversubscribed(c.threads or {"cores": c.cores})
    loads = [x for x in (c.load_before, c.load_after) if x is not None]
    load = f", load {max(loads):.1f}" if loads else ""
    if over:
        c.reason = over
    elif c.others_share is not None:
        if c.others_share > max_others_share:
            c.reason = f"other processes used {c.others_share:.0%} of the {c.cores} cores{load}"
    elif loads and max(loads) > c.cores:
        c.reason = f"load {max(loads):.1f} on {c.cores} cores"
    return c
