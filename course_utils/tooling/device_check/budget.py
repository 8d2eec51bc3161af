"""The time budget of ``course check-device``: what is left, what may start, how long it may run.

A step or a notebook gets a time limit no longer than what is left of the budget,
and nothing starts with less than :data:`MIN_START_S` left. A full-mode lesson is
estimated from its smoke run (:func:`estimate`) and skipped when it cannot
finish in time. A run cut short by the budget, rather than by its own limit,
is no failure (:func:`step_status`).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

SKIPPED_BUDGET = "skipped: budget"  # not started: it could not finish in time
STOPPED_BUDGET = "stopped: budget"  # started, then stopped when the budget ran out
NOT_FAILED = ("ok", SKIPPED_BUDGET, STOPPED_BUDGET)
# Before any lesson has run in both modes, a full run is guessed at this many smoke runs.
FULL_OVER_SMOKE = 4.0
MIN_START_S = 10.0  # never start anything with less time than this left


class Budget:
    """Seconds for the whole check (None: no limit), counted on ``clock`` from now."""

    def __init__(self, seconds: float | None, clock: Callable[[], float]) -> None:
        self.seconds, self.clock = seconds, clock
        self.start = clock()

    def elapsed(self) -> float:
        return self.clock() - self.start

    def remaining(self) -> float | None:
        if self.seconds is None:
            return None
        return self.seconds - (self.clock() - self.start)

    def can_start(self) -> bool:
        left = self.remaining()
        return left is None or left >= MIN_START_S

    def timeout(self, cap: float | None = None) -> float | None:
        """``cap``, shortened to what is left of the budget."""
        left = self.remaining()
        if left is None:
            return cap
        return max(1.0, left if cap is None else min(cap, left))


def cut_by_budget(limit: float | None, cap: float | None) -> bool:
    """Whether a time limit was shortened by the budget (so reaching it says little).

    Without a budget, :meth:`Budget.timeout` gives back ``cap`` itself.
    """
    return limit is not None and (cap is None or limit < cap)


def step_status(
    result: dict[str, Any], limit: float | None, cap: float | None = None
) -> tuple[str, dict[str, Any]]:
    """A step's status from its result; a run cut short by the budget is no failure."""
    detail = {k: v for k, v in result.items() if k != "ok"}
    if result.get("ok"):
        return "ok", detail
    if result.get("exit_code") is None and cut_by_budget(limit, cap):
        return STOPPED_BUDGET, detail
    return "failed", detail


def estimate(notebooks: list[dict[str, Any]], notebook: str) -> float | None:
    """Seconds a full run of ``notebook`` should take, from its smoke run.

    ``notebooks`` are the report's entries so far; the smoke time is scaled by the
    median full/smoke ratio of the lessons already run in both modes.
    """
    runs: dict[str, dict[str, dict[str, Any]]] = {}
    for n in notebooks:
        runs.setdefault(n["notebook"], {})[n["mode"]] = n
    smoke = runs.get(notebook, {}).get("smoke")
    if not smoke or smoke["status"] != "ok":
        return None
    ratios = [
        r["full"]["seconds"] / r["smoke"]["seconds"]
        for r in runs.values()
        if r.get("full", {}).get("status") == "ok"
        and r.get("smoke", {}).get("status") == "ok"
        and r["smoke"]["seconds"] > 0
    ]
    ratio = statistics.median(ratios) if ratios else FULL_OVER_SMOKE
    return smoke["seconds"] * ratio
