"""What ``course grade`` refuses before it grades anyone: a report folder graded with
another master, a master without hidden tests (the student version), and a class whose
every submission is another assignment's notebook."""

from __future__ import annotations

import shutil

import nbformat
import pytest

from course_utils.errors import CourseError
from course_utils.grading.batch import grader
from tests.grading.helpers import MASTER, ROOT, STUDENT, class_folder, graded, quiet

EX00 = ROOT / "exercises" / "00_welcome_exercises.ipynb"
LIMITS = grader.Limits(timeout=20, total_timeout=120, memory_mb=1000)


def _grade(subs, source, out, **kwargs):
    return grader.grade(subs, source, out, limits=LIMITS, jobs=1, progress=False,
                        echo=quiet, unsafe_no_sandbox=True, **kwargs)  # fmt: skip


@pytest.mark.slow
def test_a_folder_graded_with_another_master_is_refused_then_started_over(tmp_path):
    subs = class_folder(tmp_path / "subs", {"ann": "full"})
    out = tmp_path / "out"
    _grade(subs, MASTER, out)
    before = (out / "ann" / "grade.json").read_bytes()
    other = tmp_path / "masters" / "other_exercises.ipynb"
    other.parent.mkdir()
    shutil.copy(MASTER, other)
    with pytest.raises(CourseError) as err:
        _grade(subs, other, out)
    text = str(err.value)
    assert "tiny_master.ipynb" in text and "other_exercises.ipynb" in text, text
    assert "--start-over" in text and "\n" not in text
    assert (out / "ann" / "grade.json").read_bytes() == before  # nothing rewritten
    batch = _grade(subs, other, out, start_over=True)
    assert batch.graded == ["ann"]
    assert graded(out)["ann"]["master"].endswith("other_exercises.ipynb")
    # the same master edited (a fixed test) is the same assignment: no refusal
    nb = nbformat.read(other, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("A fixed typo."))
    nbformat.write(nb, other)
    _grade(subs, other, out)


def test_a_master_without_hidden_tests_is_refused(tmp_path):
    subs = class_folder(tmp_path / "subs", {"ann": "full"})
    with pytest.raises(CourseError) as err:
        _grade(subs, STUDENT, tmp_path / "out")
    text = str(err.value)
    assert "no hidden tests" in text and "--no-hidden-tests" in text, text
    assert not (tmp_path / "out" / "ann").exists()


def test_the_student_version_from_exercises_names_the_master(tmp_path):
    subs = class_folder(tmp_path / "subs", {"ann": "full"})
    with pytest.raises(CourseError) as err:
        _grade(subs, EX00, tmp_path / "out")
    assert "solutions/00_welcome_exercises.ipynb" in str(err.value), err.value


def test_a_class_of_another_assignment_stops_before_grading(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("ann", "bob"):
        shutil.copy(EX00, subs / f"{name}.ipynb")
    out = tmp_path / "out"
    with pytest.raises(CourseError) as err:
        _grade(subs, MASTER, out)
    text = str(err.value)
    assert "every submission (2)" in text and "lesson 00 exercise notebook" in text
    assert not list(out.glob("*/grade.json"))


def test_another_master_over_a_graded_folder_names_the_folders_master(tmp_path):
    """Master 00 over a folder graded with the tiny master, whose class is not lesson
    00's either: the refusal names the master the folder was graded with (what to
    fix), not only that the class is another assignment's."""
    from course_utils.grading.records import store
    from tests.grading.records.test_store import _record

    subs = class_folder(tmp_path / "subs", {"ann": "full", "bob": "full"})
    out = tmp_path / "out"
    for student in ("ann", "bob"):
        store.save_student(out, _record(student, 3.0, master=MASTER.name), {})
    with pytest.raises(CourseError) as err:
        _grade(subs, ROOT / "solutions" / EX00.name, out)
    text = str(err.value)
    assert "graded with the master tiny_master.ipynb" in text, text
    assert "00_welcome_exercises.ipynb" in text, text
