"""``make test-lesson N=03``: one lesson's notebooks and the checks that keep them in step."""

from __future__ import annotations

import subprocess
import sys

import pytest

from course_utils import lessons
from tests.notebooks import select_lesson

ROOT = select_lesson.ROOT


def test_a_lesson_brings_its_notebook_master_and_student_notebook():
    args = select_lesson.arguments(ROOT, "3")
    assert args[:3] == [
        "notebooks/03_jit_compilation.ipynb",
        "tests/notebooks/test_masters.py::test_master_runs_to_its_end_and_every_"
        "wrong_answer_fails_with_its_hint[w03]",
        "tests/notebooks/test_student_notebooks.py::test_student_notebook_runs_all_"
        "with_not_implemented[03_jit_compilation_exercises]",
    ]
    assert args[3:] == list(select_lesson.IN_STEP)
    assert select_lesson.arguments(ROOT, "03_jit_compilation") == args


def test_student_notebook_00_is_the_plain_papermill_run():
    args = select_lesson.arguments(ROOT, "00")
    assert args[0] == "notebooks/00_welcome_and_setup.ipynb"  # nbval runs it when named
    assert args[2] == select_lesson.STUDENT_00_TEST


@pytest.mark.parametrize("bad", ["99", "x", "", "1_2"])
def test_a_number_that_is_no_lesson_is_named(bad, capsys):
    with pytest.raises(
        ValueError, match=r"no lesson has that number \(lessons: 00, 01"
    ):
        select_lesson.arguments(ROOT, bad)
    assert select_lesson.main([bad]) == 2
    err = capsys.readouterr().err
    assert "make test-lesson" in err.splitlines()[0]


@pytest.mark.slow
def test_every_lessons_arguments_are_collected():
    """A renamed test or notebook would leave an argument that collects nothing."""
    wanted = sorted(
        {
            arg
            for one in lessons.lessons(ROOT)
            for arg in select_lesson.arguments(ROOT, one.name)
        }
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "--nbval-lax", *wanted],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    collected = done.stdout.splitlines()
    for arg in wanted:
        assert any(line.startswith(arg) for line in collected), arg
