"""What ``course check-device`` runs, as scheduler items, and how each ending is recorded.

For every chosen lesson: the lesson in smoke mode and in full mode, its master
(``solutions/``) and student notebook (``exercises/``) in smoke mode, and the notebook
tests (nbval) of the lesson and of the master, one child each; then ``course doctor``
and ``course claims``. Each item's estimate and what it holds come from
:mod:`~course_utils.tooling.device_check.estimates`. A finished notebook becomes one entry of
the report's ``notebooks``; a step's status is counted from its items.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from course_utils import lessons as manifest
from course_utils.tooling.device_check import estimates as est
from course_utils.tooling.device_check import steps as device_steps
from course_utils.tooling.device_check.budget import (
    NOT_FAILED,
    SKIPPED_BUDGET,
    STOPPED_BUDGET,
)
from course_utils.tooling.device_check.schedule import Item

NOTEBOOK_KINDS = ("smoke", "full", "master", "student")


def relative(nb: Path, root: Path) -> str:
    """``nb`` as the report names it: relative to the course root when inside it."""
    try:
        return str(nb.resolve().relative_to(root))
    except ValueError:
        return str(nb)


def exercise_notebooks(root: Path, lesson: Path) -> tuple[Path | None, Path | None]:
    """The master and the student notebook of ``lesson`` (by its number), where present."""
    return (
        manifest.numbered(root, manifest.MASTERS, lesson.stem),
        manifest.numbered(root, manifest.STUDENTS, lesson.stem),
    )


def items(
    root: Path, lessons: list[Path], steps: tuple[str, ...], timeout: float
) -> list[Item]:
    """Every item of ``steps`` for ``lessons``, in the report's order."""
    out: list[Item] = []
    for lesson in lessons:
        number = manifest.number(lesson.stem)
        master, student = exercise_notebooks(root, lesson)
        if "smoke" in steps:
            out.append(_notebook("smoke", "smoke", lesson, root, number, timeout))
            for kind, nb in (("master", master), ("student", student)):
                if nb is not None:
                    out.append(_notebook("smoke", kind, nb, root, number, timeout))
        if "full" in steps:
            full = _notebook("full", "full", lesson, root, number, timeout)
            full.must_fit = True
            out.append(full)
        if "tests" in steps:
            for kind, nb in (("smoke", lesson), ("master", master)):
                if nb is not None:
                    name = relative(nb, root)
                    out.append(
                        Item(
                            key=f"tests:{name}",
                            step="tests",
                            kind="tests",
                            seconds=est.tests_seconds(kind, number),
                            cores=est.cores("tests", number),
                            gpu_gib=est.gpu_gib("tests"),
                            notebook=name,
                            lesson=number,
                        )
                    )
    for step in ("doctor", "claims"):
        if step in steps:
            out.append(
                Item(
                    key=step,
                    step=step,
                    kind=step,
                    seconds=est.seconds(step),
                    cores=est.cores(step),
                    gpu_gib=est.gpu_gib(step),
                    timeout=300.0 if step == "doctor" else None,
                )
            )
    return out


def _notebook(step, kind, nb: Path, root: Path, number: str, timeout) -> Item:
    name = relative(nb, root)
    return Item(
        key=f"{step}:{name}",
        step=step,
        kind=kind,
        seconds=est.seconds(kind, number),
        cores=est.cores(kind, number),
        gpu_gib=est.gpu_gib(kind, number),
        notebook=name,
        lesson=number,
        timeout=timeout,
    )


def refresh(waiting: list[Item], notebooks: list[dict[str, Any]]) -> None:
    """Full-mode estimates from the smoke runs that have ended (the ratio rule)."""
    for item in waiting:
        if item.kind == "full" and item.notebook:
            item.seconds = est.full_estimate(notebooks, item.notebook, item.seconds)


def entry(item: Item, result: dict[str, Any]) -> dict[str, Any]:
    """A notebook's entry in the report, from its child's result."""
    mode = "full" if item.kind == "full" else "smoke"
    out: dict[str, Any] = {"notebook": item.notebook, "mode": mode}
    if item.kind in ("master", "student"):
        out["kind"] = item.kind
    if item.kind == "full":
        out["estimate_seconds"] = round(item.seconds, 1)
    out.update(status=result["status"], seconds=round(result.get("seconds", 0.0), 1))
    for key in ("timeout", "cell", "error", "cores", "started_at"):
        if key in result:
            out[key] = result[key]
    if result["status"] != "ok" and result.get("output"):
        out["output_tail"] = device_steps.tail(result["output"], 20)
    return out


def step_status(statuses: list[str], interrupted: bool = False) -> str:
    """A step's status from its items' statuses."""
    if interrupted or "interrupted" in statuses:
        return "interrupted"
    if statuses and all(s == SKIPPED_BUDGET for s in statuses):
        return SKIPPED_BUDGET
    if statuses and all(s in (SKIPPED_BUDGET, STOPPED_BUDGET) for s in statuses):
        return STOPPED_BUDGET
    if any(s not in NOT_FAILED for s in statuses):
        return "failed"
    return "ok"


def counts(statuses: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in statuses:
        out[s] = out.get(s, 0) + 1
    return out
