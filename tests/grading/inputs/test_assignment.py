"""Another assignment's notebook is named as such: the course's real exercise notebooks of
lessons 04 and 05, a lesson notebook and unrelated notebooks against a master; the
reason reaches ``course grade``'s summary and ``grades.csv``, and ``course check``."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from course_utils.cli import main
from course_utils.errors import CourseError
from course_utils.grading.inputs import assignment
from course_utils.grading.inputs.assignment import WrongAssignment, check_assignment
from course_utils.grading.inputs.ipynb import SubmissionError, read_cells
from course_utils.grading.inputs.master import load_master
from course_utils.grading.inputs.submissions import match
from tests.grading.helpers import ROOT, STUDENT

EX04 = ROOT / "exercises" / "04_training_loop_exercises.ipynb"
EX05 = ROOT / "exercises" / "05_distributed_training_exercises.ipynb"
M04 = ROOT / "solutions" / "04_training_loop_exercises.ipynb"
M05 = ROOT / "solutions" / "05_distributed_training_exercises.ipynb"
LESSON05 = ROOT / "notebooks" / "05_distributed_training.ipynb"
THIS05 = "this assignment is the lesson 05 exercise notebook (05_distributed_training_exercises.ipynb)"
IS04 = "this is the lesson 04 exercise notebook (04_training_loop_exercises.ipynb)"


def _reason(master: Path, notebook: Path | list[dict]) -> str | None:
    cells = read_cells(notebook) if isinstance(notebook, Path) else notebook
    try:
        check_assignment(load_master(master), cells)
    except WrongAssignment as err:
        return str(err)
    return None


def test_another_lessons_exercise_notebook_is_named_with_this_assignment():
    assert _reason(M05, EX04) == f"wrong assignment: {IS04}; {THIS05}"
    assert _reason(M04, EX05) == (
        "wrong assignment: this is the lesson 05 exercise notebook "
        "(05_distributed_training_exercises.ipynb); this assignment is the lesson 04 "
        "exercise notebook (04_training_loop_exercises.ipynb)"
    )
    # The right notebooks, the student's and the master itself, are matched as before.
    assert _reason(M05, EX05) is None and _reason(M05, M05) is None
    assert not match(load_master(M05), read_cells(EX05)).missing


def test_a_lesson_notebook_and_unrelated_notebooks_are_named():
    assert _reason(M05, LESSON05) == (
        "wrong assignment: this is the lesson 05 notebook (05_distributed_training.ipynb), "
        f"not an exercise notebook; {THIS05}"
    )
    # Exercises the course does not know (the grader's tiny fixture notebook).
    assert _reason(M05, STUDENT) == (
        "wrong assignment: this notebook's exercises (greet, square, total, why) are "
        f"not this assignment's; {THIS05}, with exercises allreduce-grads, "
        "column-parallel, fsdp-specs, row-parallel, shard-batch"
    )
    other = [
        {"cell_type": "code", "source": "import pandas as pd\n" * 3, "metadata": {}}
    ]
    for cells in (other, []):
        reason = _reason(M05, cells)
        assert reason and reason.startswith(
            "wrong assignment: this notebook holds none of this assignment's exercise "
            "cells (# EXERCISE: allreduce-grads, column-parallel, fsdp-specs"
        )


def test_the_right_notebook_with_its_exercise_cells_deleted_is_graded_as_usual():
    cells = [c for c in read_cells(EX05) if not assignment.cell_ids([c])]
    assert len(cells) < len(read_cells(EX05))
    result = match(
        load_master(M05), cells
    )  # no WrongAssignment: every exercise missing
    assert set(result.missing) == set(load_master(M05).exercises)


def test_outside_the_checkout_the_index_beside_the_master_or_its_siblings_decide(
    tmp_path,
):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(M05, alone)
    reason = _reason(alone / M05.name, EX04)  # nothing to compare with: not named
    assert reason and "this notebook's exercises (" in reason and IS04 not in reason
    bundle = tmp_path / "bundle"  # as in the Gradescope bundle: the index beside it
    bundle.mkdir()
    shutil.copy(M05, bundle)
    assignment.write_index(ROOT, bundle / assignment.INDEX_FILE)
    assert _reason(bundle / M05.name, EX04) == f"wrong assignment: {IS04}; {THIS05}"
    assert _reason(bundle / M05.name, LESSON05).startswith(
        "wrong assignment: this is the lesson 05 notebook"
    )
    siblings = tmp_path / "masters"  # an instructor's folder of masters
    siblings.mkdir()
    for m in (M04, M05):
        shutil.copy(m, siblings)
    assert _reason(siblings / M05.name, EX04) == f"wrong assignment: {IS04}; {THIS05}"
    (bundle / assignment.INDEX_FILE).write_text("{}")
    assignment._index_for.cache_clear()
    with pytest.raises(CourseError, match="not an index"):
        _reason(bundle / M05.name, EX04)


def test_the_error_is_a_submission_error_and_a_course_error():
    assert issubclass(WrongAssignment, SubmissionError)
    assert issubclass(WrongAssignment, CourseError)


def test_course_grade_shows_it_in_the_summary_and_grades_csv(tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(EX04, subs / "ann.ipynb")
    out = tmp_path / "out"
    argv = ["grade", str(subs), "--source", str(M05), "--out", str(out)]
    assert main([*argv, "--unsafe-no-sandbox"]) == 0
    summary = capsys.readouterr().out
    row = next(line for line in summary.splitlines() if line.startswith("ann"))
    assert "invalid" in row and "wrong assignment: this is the lesson 04" in row
    with open(out / "grades.csv", newline="") as f:
        (rec,) = list(csv.DictReader(f))
    assert rec["status"] == "invalid" and rec["total"] == "0"
    assert rec["reason"] == f"wrong assignment: {IS04}; {THIS05}"
    results = json.loads((out / "ann" / "results.json").read_text())
    assert results["output"].startswith(f"Status: invalid — wrong assignment: {IS04}")


def test_course_check_says_it_in_one_line(capsys):
    assert main(["check", str(EX04), "--source", str(EX05)]) == 2
    err = capsys.readouterr().err
    assert f"wrong assignment: {IS04}" in err and len(err.strip().splitlines()) == 1
