"""The lessons of ``course check-device`` in one mode: each run, timed and recorded in turn.

Each lesson runs through the same runner as ``course run``, with a time limit no
longer than what is left of the budget. A full-mode lesson whose estimate does
not fit in the time left is not started (``skipped: budget``); one stopped by the
budget rather than by its own limit is ``stopped: budget``. Ctrl-C in a lesson
stops the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_utils.tooling import device_steps
from course_utils.tooling.device_budget import (
    NOT_FAILED,
    SKIPPED_BUDGET,
    STOPPED_BUDGET,
    Budget,
    cut_by_budget,
    estimate,
)


@dataclass
class Lessons:
    """What running the lessons needs from the check."""

    root: Path
    paths: list[Path]
    timeout: float  # the limit per notebook, before the budget shortens it
    work: Path  # executed notebooks go to work/executed/<mode>/
    budget: Budget
    run: Callable[..., list[Any]]  # runner.run_notebooks
    notebooks: list[dict[str, Any]]  # the report's entries: each one added as it ends
    save: Callable[[], None]  # writes the report


def run_lessons(lessons: Lessons, mode: str) -> tuple[str, dict[str, Any], bool]:
    """Every lesson in ``mode``: the step's status, its counts, and whether Ctrl-C stopped it."""
    entries: list[dict[str, Any]] = []
    interrupted = False
    for nb in lessons.paths:
        if interrupted:
            break
        entry = _lesson(lessons, nb, mode)
        interrupted = entry["status"] == "interrupted"
        print(
            f"check-device: {mode} {Path(entry['notebook']).stem} {entry['status']} "
            f"({entry['seconds']:.1f} s)",
            flush=True,
        )
        lessons.notebooks.append(entry)
        entries.append(entry)
        lessons.save()
    counts: dict[str, int] = {}
    for e in entries:
        counts[e["status"]] = counts.get(e["status"], 0) + 1
    return _status(entries, interrupted), {"counts": counts}, interrupted


def _status(entries: list[dict[str, Any]], interrupted: bool) -> str:
    if interrupted:
        return "interrupted"
    if entries and all(e["status"] == SKIPPED_BUDGET for e in entries):
        return SKIPPED_BUDGET
    if any(e["status"] not in NOT_FAILED for e in entries):
        return "failed"
    return "ok"


def relative(nb: Path, root: Path) -> str:
    """``nb`` as the report names it: relative to the course root when inside it."""
    try:
        return str(nb.resolve().relative_to(root))
    except ValueError:
        return str(nb)


def _lesson(lessons: Lessons, nb: Path, mode: str) -> dict[str, Any]:
    """One lesson's entry: run, or skipped when it cannot start or finish in time."""
    rel = relative(nb, lessons.root)
    entry: dict[str, Any] = {"notebook": rel, "mode": mode}
    left = lessons.budget.remaining()
    guess = estimate(lessons.notebooks, rel) if mode == "full" else None
    if guess is not None:
        entry["estimate_seconds"] = round(guess, 1)
    if not lessons.budget.can_start() or (
        guess is not None and left is not None and guess > left
    ):
        entry.update(status=SKIPPED_BUDGET, seconds=0.0)
    else:
        entry.update(_execute(lessons, nb, mode))
    return entry


def _execute(lessons: Lessons, nb: Path, mode: str) -> dict[str, Any]:
    """Run one lesson through the runner; its status, time, failing cell and error."""
    limit = lessons.budget.timeout(lessons.timeout) or lessons.timeout
    res = lessons.run(
        [nb],
        root=lessons.root,
        smoke=mode == "smoke",
        timeout=limit,
        out_dir=lessons.work / "executed" / mode,
        progress=False,
    )[0]
    stopped = res.status == "timeout" and cut_by_budget(limit, lessons.timeout)
    done: dict[str, Any] = {
        "status": STOPPED_BUDGET if stopped else res.status,
        "seconds": round(res.seconds, 1),
        "timeout": round(limit, 1),
        "cell": res.cell,
        "error": res.error,
    }
    if res.status != "ok" and res.output:
        done["output_tail"] = device_steps.tail(res.output, 20)
    return done
