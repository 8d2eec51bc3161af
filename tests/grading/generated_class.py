"""A generated class of the tiny master: correct, wrong and broken answers in a known mix.

``write_class(folder)`` writes one notebook per student and returns what each should
score; ``grade_class`` grades it once with the options every test of the class shares
(the session fixture ``graded_class`` in ``conftest.py``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course_utils import student_version
from tests.grading.helpers import MASTER, SUBS

# Options of the one-machine run; a shard of the same class is graded with the same.
OPTIONS = ["--timeout", "10", "--total-timeout", "90", "--memory", "1000"]

# Answers that pass the visible test and fail the hidden one (or both), per exercise.
WRONG = {
    "square": "# EXERCISE: square\ndef square(x):\n    return int(x * x)",
    "greet": "# EXERCISE: greet\ndef greet(name):\n    return ('hello ' + name).strip()",
    "total": "# EXERCISE: total\ndef total(xs):\n    return xs[0] + sum(xs[1:])",
    "square-both": "# EXERCISE: square\ndef square(x):\n    return x + x",
}
# fixture or generated answer -> (points of 8, status)
KINDS = {
    "full": (8, "ok"),
    "stub": (0, "ok"),
    "syntax_error": (5, "ok"),
    "deleted_cell": (6, "ok"),
    "renamed_function": (5, "ok"),
    "not_json": (0, "invalid"),
    "wrong-square": (6, "ok"),
    "wrong-greet": (7, "ok"),
    "wrong-total": (6, "ok"),
    "wrong-square-both": (5, "ok"),
}
# student -> kind: 13 students, four of them correct
ROSTER = {
    "ada": "full",
    "bob": "wrong-square",
    "cy": "stub",
    "dee": "wrong-greet",
    "eve": "syntax_error",
    "fay": "full",
    "gus": "wrong-total",
    "hal": "deleted_cell",
    "ivy": "wrong-square-both",
    "jon": "full",
    "kim": "renamed_function",
    "lea": "not_json",
    "max": "full",
}


@dataclass
class GradedClass:
    subs: Path  # one notebook per student
    out: Path  # the one-machine run's report folder
    expected: dict[str, tuple[float, str]]  # student -> (total, status)


def _wrong(kind: str) -> str:
    solved = nbformat.read(SUBS / "full.ipynb", as_version=4)
    answer = WRONG[kind]
    exercise = answer.split("\n", 1)[0].split(": ")[1]
    for cell in solved.cells:
        if student_version.exercise_id(cell) == exercise:
            cell.source = answer
    return nbformat.writes(copy.deepcopy(solved))


def write_class(folder: Path) -> dict[str, tuple[float, str]]:
    """Write the class into ``folder``; returns student -> (expected total, status)."""
    folder.mkdir(parents=True)
    for student, kind in ROSTER.items():
        target = folder / f"{student}.ipynb"
        if kind.startswith("wrong-"):
            target.write_text(_wrong(kind.removeprefix("wrong-")))
        else:
            target.write_bytes((SUBS / f"{kind}.ipynb").read_bytes())
    return {s: KINDS[k] for s, k in ROSTER.items()}


def grade_command(subs: Path, out: Path, *extra: str) -> list[str]:
    """``course grade`` of the class with the shared options (a list for subprocess)."""
    return [
        "grade",
        str(subs),
        "--source",
        str(MASTER),
        "--out",
        str(out),
        *OPTIONS,
        *extra,
    ]
