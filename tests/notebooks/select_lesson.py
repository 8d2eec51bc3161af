"""The tests of one lesson: ``make test-lesson N=03`` runs what a change to lesson 03 needs.

That is the lesson under nbval (with its lowering check), its master with every wrong
answer replayed, its student notebook, and the quick checks that keep the sources, the
generated student notebooks and the Chinese edition in step (those cover every lesson and
take seconds). Everything else, and the other lessons, waits for ``make test``.

Lesson 00's student notebook runs in JupyterLab and, in Chinese, under plain papermill in
``make test``; here it is the papermill run, which needs no browser.

    python -m tests.notebooks.select_lesson 03 [PYTEST ARGS...]
"""

from __future__ import annotations

import sys
from pathlib import Path

from course_utils import lessons

ROOT = Path(__file__).resolve().parents[2]
# Quick checks of every lesson's files: sources and notebooks paired, student notebooks
# generated from their masters, the Chinese edition in step, prose and verdict rules.
IN_STEP = (
    "tests/tooling/test_notebooks.py",
    "tests/test_student_version.py",
    "tests/tooling/translation/test_editions.py",
    "tests/test_lesson_prose.py",
    "tests/test_lesson_verdicts.py",
    "tests/test_lesson_errors.py",
)
MASTER_TEST = (
    "tests/notebooks/test_masters.py::"
    "test_master_runs_to_its_end_and_every_wrong_answer_fails_with_its_hint[w{number}]"
)
STUDENT_TEST = (
    "tests/notebooks/test_student_notebooks.py::"
    "test_student_notebook_runs_all_with_not_implemented[{stem}]"
)
# Student notebook 00, in Chinese, under plain papermill (test_student_notebooks.ELSEWHERE).
STUDENT_00_TEST = (
    "tests/notebooks/test_plain_papermill.py::"
    "test_plain_papermill_runs_a_course_notebook_to_its_end"
)


def find(root: Path, lesson: str) -> lessons.Lesson:
    """The lesson ``lesson``: its number (``"03"``, ``"3"``) or its name (``"03_jit_compilation"``)."""
    every, lesson = lessons.lessons(root), lesson.strip()
    for one in every:
        if lesson == one.name or (lesson.isdigit() and lesson.zfill(2) == one.number):
            return one
    numbers = ", ".join(one.number for one in every)
    raise ValueError(f"N={lesson!r}: no lesson has that number (lessons: {numbers})")


def arguments(root: Path, lesson: str) -> list[str]:
    """pytest's arguments for one lesson, relative to ``root``."""
    one = find(root, lesson)
    args = [str(one.notebook.relative_to(root))]
    if one.master is not None:
        args.append(MASTER_TEST.format(number=one.number))
    student = one.student
    if student is not None:
        from tests.notebooks.test_student_notebooks import ELSEWHERE

        if student.name == ELSEWHERE:
            args.append(STUDENT_00_TEST)
        else:
            args.append(STUDENT_TEST.format(stem=student.stem))
    return [*args, *IN_STEP]


def main(argv: list[str]) -> int:
    if not argv or not argv[0].strip() or argv[0].startswith("-"):
        print(
            "usage: make test-lesson N=03 (or python -m tests.notebooks.select_lesson "
            "03 [PYTEST ARGS...])",
            file=sys.stderr,
        )
        return 2
    try:
        args = arguments(ROOT, argv[0])
    except ValueError as err:
        print(f"make test-lesson: {err}", file=sys.stderr)
        return 2
    import pytest

    return int(pytest.main([*argv[1:], *args]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
