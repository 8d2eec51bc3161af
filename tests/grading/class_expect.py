"""What the generated class (tests/grading/generated_class.py) must show in class-level
reports: which test cells each kind of answer fails, and a writable copy of its reports."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.grading.generated_class import ROSTER, GradedClass

SQ, SQH = "square: tests", "square: hidden tests"
GR, GRH = "greet: tests", "greet: hidden tests"
TO, TOH = "total: tests", "total: hidden tests"
ALL = (SQ, SQH, GR, GRH, TO, TOH)
FAILS = {  # kind of answer -> the test cells it fails
    "full": set(),
    "stub": set(ALL),
    "not_json": set(ALL),
    "syntax_error": {SQ, SQH},
    "renamed_function": {SQ, SQH},
    "deleted_cell": {GR, GRH},
    "wrong-square": {SQH},
    "wrong-greet": {GRH},
    "wrong-total": {TOH},
    "wrong-square-both": {SQ, SQH},
}


def passing(test: str) -> set[str]:
    """The students of the generated class who pass ``test``."""
    return {s for s, kind in ROSTER.items() if test not in FAILS[kind]}


def of_kind(*kinds: str) -> list[str]:
    return sorted(s for s, kind in ROSTER.items() if kind in kinds)


def copy_of(graded: GradedClass, tmp_path: Path) -> Path:
    """A copy of the class's report folder that a test may change."""
    out = tmp_path / "graded"
    shutil.copytree(graded.out, out, symlinks=True)
    return out
