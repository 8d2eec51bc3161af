"""Which items of ``course check-device`` run when, and side by side: the scheduler.

An item (a notebook in one mode, one notebook's tests, ``course claims``, ``course
doctor``) has an estimate in seconds and holds some CPU cores and some GPU memory
while it runs. The rule, the same when planning (:func:`plan`) and when running
(:func:`run`):

- the waiting items are tried longest first, and each one starts when its cores and
  its GPU memory are free (a shorter one may start beside a longer one that waits);
- one at a time (``one_at_a_time``) where only one process may hold the accelerator:
  a TPU's chips belong to the first process that opens them, and a second one stops
  at once (libtpu's lock), so on a TPU machine each item runs alone;
- nothing starts with less than :data:`~course_utils.tooling.device_check.budget.MIN_START_S`
  of the budget left, and a full-mode lesson (``must_fit``) only when its estimate fits
  in the time left; one that cannot is ``skipped: budget``;
- each running child gets a time limit no longer than what is left of the budget and
  is stopped when it reaches it (``stopped: budget`` when the budget cut its limit,
  ``timeout`` when its own limit did).

Each running item holds concrete core ids, so its child can be pinned to them
(:mod:`~course_utils.tooling.device_check.children`) and the plan names them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from course_utils.tooling.device_check.budget import (
    MIN_START_S,
    SKIPPED_BUDGET,
    STOPPED_BUDGET,
    Budget,
    cut_by_budget,
)

POLL_S = 0.5  # how often running children are looked at


@dataclass
class Item:
    """One thing to run: its step, what it runs, its estimate and what it holds."""

    key: str  # unique: "<kind>:<notebook>" or the step's name
    step: str  # the report's step: doctor, smoke, full, tests or claims
    kind: str  # smoke, full, master, student, tests, claims, doctor
    seconds: float  # the estimate
    cores: int = 1
    gpu_gib: float = 0.0
    notebook: str | None = None  # the notebook, as the report names it
    lesson: str = ""  # the lesson number, for estimates
    must_fit: bool = False  # start only when the estimate fits in the time left
    timeout: float | None = None  # its own limit, before the budget shortens it


@dataclass
class Planned:
    """An item placed in the plan: when it starts and ends, and the cores it holds."""

    item: Item
    start: float
    end: float
    core_ids: tuple[int, ...]


@dataclass
class Plan:
    rows: list[Planned] = field(default_factory=list)
    skipped: list[Item] = field(default_factory=list)

    @property
    def wall(self) -> float:
        return max((r.end for r in self.rows), default=0.0)


class Pool:
    """Free cores (by id) and free GPU memory (GiB; None: not counted); with
    ``one_at_a_time`` an item fits only when nothing else runs."""

    def __init__(
        self, core_ids: list[int], gpu_gib: float | None, one_at_a_time: bool = False
    ) -> None:
        self.all = list(core_ids)
        self.free = list(core_ids)
        self.total_gib = gpu_gib
        self.free_gib = gpu_gib
        self.one_at_a_time = one_at_a_time

    def need(self, item: Item) -> tuple[int, float]:
        """What ``item`` holds here: never more than the whole machine, so it can run
        alone; every core when items run one at a time."""
        gib = item.gpu_gib
        if self.total_gib is not None:
            gib = min(gib, self.total_gib)
        if self.one_at_a_time:
            return max(1, len(self.all)), gib
        return max(1, min(item.cores, len(self.all))), gib

    def fits(self, item: Item) -> bool:
        if self.one_at_a_time and self.busy:
            return False
        cores, gib = self.need(item)
        memory_ok = self.free_gib is None or gib <= self.free_gib + 1e-9
        return cores <= len(self.free) and memory_ok

    def take(self, item: Item) -> tuple[int, ...]:
        cores, gib = self.need(item)
        ids, self.free = tuple(self.free[:cores]), self.free[cores:]
        if self.free_gib is not None:
            self.free_gib -= gib
        return ids

    def give(self, item: Item, ids: tuple[int, ...]) -> None:
        self.free = sorted([*self.free, *ids])
        if self.free_gib is not None:
            self.free_gib += self.need(item)[1]

    @property
    def busy(self) -> bool:
        return len(self.free) < len(self.all)


def core_list(ids: tuple[int, ...]) -> str:
    """``3``, ``3-4`` or ``0,4`` for the core ids an item holds."""
    if len(ids) > 1 and list(ids) == list(range(ids[0], ids[-1] + 1)):
        return f"{ids[0]}-{ids[-1]}"
    return ",".join(map(str, ids))


# One at a time, packing gains nothing: what matters most goes first.
SERIAL_ORDER = ("doctor", "smoke", "master", "student", "tests", "claims", "full")


def order(items: list[Item], one_at_a_time: bool = False) -> list[Item]:
    """Longest first; ties in the order given. One at a time: by kind
    (:data:`SERIAL_ORDER`: the doctor, the lessons in smoke mode, the masters, ...),
    then in the order given (the lessons' own)."""
    if one_at_a_time:
        rank = {kind: n for n, kind in enumerate(SERIAL_ORDER)}
        return sorted(items, key=lambda i: rank.get(i.kind, len(rank)))
    return sorted(items, key=lambda i: -i.seconds)


def startable(item: Item, left: float | None) -> bool:
    """Whether the budget lets ``item`` start now."""
    if left is None:
        return True
    if left < MIN_START_S:
        return False
    return not item.must_fit or item.seconds <= left


def plan(
    items: list[Item],
    core_ids: list[int],
    gpu_gib: float | None,
    budget: float | None,
    *,
    offset: float = 0.0,
    one_at_a_time: bool = False,
) -> Plan:
    """The schedule :func:`run` would follow if every item took its estimate.

    ``offset``: seconds of the budget already spent (an install step before).
    """
    pool = Pool(core_ids, gpu_gib, one_at_a_time)
    waiting = order(items, one_at_a_time)
    running: list[Planned] = []
    out = Plan()
    now = offset
    while waiting or running:
        left = None if budget is None else budget - now
        for item in list(waiting):
            if not startable(item, left):
                if left is not None and (left < MIN_START_S or item.must_fit):
                    waiting.remove(item)
                    out.skipped.append(item)
                continue
            if pool.fits(item):
                waiting.remove(item)
                row = Planned(item, now, now + item.seconds, pool.take(item))
                running.append(row)
                out.rows.append(row)
        if not running:
            out.skipped += waiting  # nothing runs, so nothing more can ever start
            break
        now = min(r.end for r in running)
        for row in [r for r in running if r.end <= now]:
            running.remove(row)
            pool.give(row.item, row.core_ids)
    return out


class Child(Protocol):
    """A running item's process, as :func:`run` sees it."""

    def poll(self) -> dict[str, Any] | None:
        """Its result once it has ended (with ``status`` and ``seconds``), else None."""

    def stop(self, why: str) -> dict[str, Any]:
        """Stop it and everything it started; its result, marked ``why``."""


Launch = Callable[[Item, float | None, tuple[int, ...]], Child]


@dataclass
class Hooks:
    """What :func:`run` tells the check: each start and end, and estimates to refresh."""

    started: Callable[[Item, float | None, tuple[int, ...]], None]
    ended: Callable[[Item, dict[str, Any]], None]
    skipped: Callable[[Item], None]
    refresh: Callable[[list[Item]], None] = lambda waiting: None


def run(
    items: list[Item],
    launch: Launch,
    *,
    core_ids: list[int],
    gpu_gib: float | None,
    budget: Budget,
    hooks: Hooks,
    sleep: Callable[[float], None],
    one_at_a_time: bool = False,
) -> bool:
    """Run ``items`` side by side under the rule above; False when Ctrl-C stopped it.

    ``hooks.ended`` is called once per item, as soon as it ends (the check rewrites its
    report there); ``hooks.refresh`` after each, so later estimates can change.
    """
    pool = Pool(core_ids, gpu_gib, one_at_a_time)
    waiting = order(items, one_at_a_time)
    running: dict[str, tuple[Item, Child, float, float | None, tuple[int, ...]]] = {}
    try:
        while waiting or running:
            _start(waiting, running, pool, launch, budget, hooks)
            if not running:
                for item in waiting:
                    hooks.skipped(item)
                waiting.clear()
                break
            if not _reap(running, pool, budget, hooks):
                sleep(POLL_S)
            hooks.refresh(waiting)
            waiting[:] = order(waiting, one_at_a_time)
    except KeyboardInterrupt:
        for item, child, *_ in running.values():
            hooks.ended(item, child.stop("interrupted"))
        for item in waiting:
            hooks.ended(item, {"status": "interrupted", "seconds": 0.0})
        return False
    return True


def _start(waiting, running, pool: Pool, launch: Launch, budget: Budget, hooks) -> None:
    left = budget.remaining()
    for item in list(waiting):
        if not startable(item, left):
            # Time only shrinks: an item that cannot start now never will, unless
            # its estimate may still drop (a full run whose smoke run has not ended).
            if left is not None and (
                left < MIN_START_S
                or (item.must_fit and not _may_drop(item, waiting, running))
            ):
                waiting.remove(item)
                hooks.skipped(item)
            continue
        if not pool.fits(item):
            continue
        waiting.remove(item)
        ids = pool.take(item)
        limit = budget.timeout(item.timeout)
        hooks.started(item, limit, ids)
        running[item.key] = (item, launch(item, limit, ids), budget.clock(), limit, ids)


def _may_drop(item: Item, waiting, running) -> bool:
    """Whether a smoke run of ``item``'s notebook is still to end (it refreshes the estimate)."""
    pending = [i.key for i in waiting] + list(running)
    return f"smoke:{item.notebook}" in pending


def _reap(running, pool: Pool, budget: Budget, hooks) -> bool:
    """End what ended or ran past its limit; whether anything ended."""
    ended = False
    for key, (item, child, began, limit, ids) in list(running.items()):
        result = child.poll()
        if result is None and limit is not None and budget.clock() - began >= limit:
            cut = cut_by_budget(limit, item.timeout)
            result = child.stop(STOPPED_BUDGET if cut else "timeout")
        if result is None:
            continue
        del running[key]
        pool.give(item, ids)
        hooks.ended(item, result)
        ended = True
    return ended


def skipped_result() -> dict[str, Any]:
    return {"status": SKIPPED_BUDGET, "seconds": 0.0}
