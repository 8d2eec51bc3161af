"""The points page: each assignment's exercises and their points, ``docs/POINTS.md``.

An exercise's points are on the first line of its test cells in the master
(``# TESTS: <id> points=<n>``, ``# HIDDEN TESTS: <id> points=<n>``). This module adds
them up per exercise and per assignment, for an instructor who weighs the assignments.
``course build-exercises`` writes the page with the student notebooks, and
``course build-exercises --check`` reports it when it is out of step with a master.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from course_utils import lessons, student_version

PAGE = "docs/POINTS.md"
HEADER = """\
# Points per assignment

Each assignment is an exercise master in `solutions/`. An exercise's points are on the first
line of its test cells: `# TESTS: <id> points=<n>` for a visible test, which students run,
and `# HIDDEN TESTS: <id> points=<n>` for a hidden one, which only the grader runs.
A test cell scores its points when it passes ([GRADING.md](GRADING.md)).
A written answer scores what you give it by hand (`course grade manual`).

`course build-exercises` writes this page from the masters.
To change a weight, edit the master's test-cell header, then run `course build-exercises`.
"""


def _number(points: float) -> str:
    return f"{points:g}"


def row(nb: Any, where: str, title: str) -> tuple[str, list[float]]:
    """The table row of master ``nb`` (read from ``where``), and its visible and hidden
    points: each exercise with its points, then the sums."""
    names, sums = [], [0.0, 0.0]
    for ex in student_version.parse(nb, where).values():
        if not ex.tests:
            names.append(f"`{ex.id}` written")
            continue
        parts = [
            sum(t.points for t in ex.tests if t.hidden is h) for h in (False, True)
        ]
        sums = [a + b for a, b in zip(sums, parts, strict=True)]
        names.append(f"`{ex.id}` {' + '.join(_number(p) for p in parts)}")
    cells = [f"{title} (`{where}`)", ", ".join(names)]
    cells += [_number(p) for p in (*sums, sum(sums))]
    return "| " + " | ".join(cells) + " |", sums


def _title(master: Path) -> str:
    """``03 · JIT compilation`` for the master headed ``03 · Exercises: JIT compilation``."""
    for line in master.read_text(encoding="utf-8").splitlines():
        if line.startswith(lessons.TITLE_MARK):
            return line[len(lessons.TITLE_MARK) :].strip().replace("Exercises: ", "", 1)
    return master.stem


def render(root: Path, read: Callable[[Path], Any]) -> str:
    """The page for the checkout at ``root``: a row per master, each read by ``read``
    (a master's ``.py`` to its notebook)."""
    rows = [
        "| assignment | exercises: visible + hidden points | visible | hidden | total |",
        "|---|---|---:|---:|---:|",
    ]
    total = [0.0, 0.0]
    for master in lessons.files(root, lessons.MASTERS, ".py"):
        line, sums = row(
            read(master), f"{lessons.MASTERS}/{master.name}", _title(master)
        )
        rows.append(line)
        total = [a + b for a, b in zip(total, sums, strict=True)]
    cells = " | ".join(_number(p) for p in (*total, sum(total)))
    rows.append(f"| the course | | {cells} |")
    return HEADER + "\n" + "\n".join(rows) + "\n"
