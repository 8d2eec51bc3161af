"""Masters: exercises, tests, points and hidden cells, from our markers or nbgrader's metadata;
and our masters are valid nbgrader source notebooks (nbgrader's own preprocessors agree)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from course_utils.errors import CourseError
from course_utils.grading.inputs.master import in_sync, load_master
from course_utils.tooling import notebooks
from tests.grading.helpers import MASTER, ROOT, nbgrader_only, stale_master

MASTERS = sorted((ROOT / "solutions").glob("*.ipynb"))


def test_master_cells_points_and_hidden():
    m = load_master(MASTER)
    assert m.exercises == ["square", "greet", "total"]
    assert m.answers == ["why"]
    assert [(t.name, t.points) for t in m.tests] == [
        ("square: tests", 1),
        ("square: hidden tests", 2),
        ("greet: tests", 1),
        ("greet: hidden tests", 1),
        ("total: tests", 1),
        ("total: hidden tests", 2),
    ]
    assert m.max_points() == 8 and m.max_points("square") == 3
    assert [c.role for c in m.cells][:2] == ["context", "solution"]
    visible = load_master(MASTER, visible_only=True)
    assert all(not t.hidden for t in visible.tests) and visible.max_points() == 3
    assert "SECRET_HIDDEN_ORACLE" not in "".join(c.source for c in visible.cells)


def test_master_from_nbgrader_metadata_only(tmp_path):
    ours = load_master(MASTER)
    theirs = load_master(nbgrader_only(tmp_path))
    assert theirs.exercises == ours.exercises
    assert [(t.exercise, t.points, t.hidden) for t in theirs.tests] == [
        (t.exercise, t.points, t.hidden) for t in ours.tests
    ]


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "the notebook file is empty"),
        ('{"cells": []}', "no test cells"),
        ("not json", "not valid JSON"),
    ],
)
def test_bad_source_is_a_one_line_error(tmp_path, content, message):
    path = tmp_path / "m.ipynb"
    path.write_text(content)
    with pytest.raises(CourseError) as err:
        load_master(path)
    assert str(err.value).startswith("--source") and "\n" not in str(err.value)
    assert message in str(err.value)


def _master_with(tmp_path: Path, cells: list) -> Path:
    nb = nbformat.v4.new_notebook(cells=cells)
    path = tmp_path / "m.ipynb"
    nbformat.write(nb, path)
    return path


def test_bad_points_and_reused_ids_are_errors(tmp_path):
    code = nbformat.v4.new_code_cell
    test = code("assert True")
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "points": "many"}
    with pytest.raises(CourseError, match="points 'many', not a number"):
        load_master(_master_with(tmp_path, [test]))
    twice = [code("# EXERCISE: a\nx = 1"), code("# EXERCISE: a\nx = 2")]
    with pytest.raises(CourseError, match="exercise id 'a' is used twice"):
        load_master(_master_with(tmp_path, [*twice, code("# TESTS: a points=1\n")]))
    with pytest.raises(CourseError, match="no such notebook"):
        load_master(tmp_path / "nope.ipynb")


def test_repeated_test_names_are_numbered(tmp_path):
    code = nbformat.v4.new_code_cell
    cells = [code("# EXERCISE: a\nx = 1")] + [
        code("# TESTS: a points=1\nassert x") for _ in range(3)
    ]
    m = load_master(_master_with(tmp_path, cells))
    assert [t.name for t in m.tests] == ["a: tests", "a: tests (2)", "a: tests (3)"]


@pytest.mark.parametrize("path", MASTERS, ids=[p.stem for p in MASTERS])
def test_nbgrader_leaves_the_same_student_code(path):
    pre = pytest.importorskip(
        "nbgrader.preprocessors",
        reason="nbgrader is a test-only dependency (pip install -e '.[dev]')",
    )
    master = nbformat.read(path, as_version=4)
    pre.CheckCellMetadata().preprocess(master, {})  # validates ids, points, types
    cleared, _ = pre.ClearSolutions().preprocess(master, {})
    cleared, _ = pre.ClearHiddenTests().preprocess(cleared, {})
    theirs = [
        c
        for c in cleared.cells
        if not c.metadata.get("nbgrader", {})
        .get("grade_id", "")
        .endswith("-hidden-tests")
    ]
    ours = nbformat.reads(
        notebooks.render_student(path.with_suffix(".py"), ROOT), as_version=4
    ).cells
    # The student notebook ends with how to check and hand it in, which nbgrader has not.
    closing = ours.pop()
    assert closing.source == notebooks.submitting(path.name)
    assert len(theirs) == len(ours)
    badge_path = f"solutions/{path.name}"
    for i, (a, b) in enumerate(zip(theirs, ours, strict=True)):
        text_a = a.source.replace(badge_path, f"exercises/{path.name}")
        assert (a.cell_type, text_a.strip()) == (b.cell_type, b.source.strip()), (
            f"{path.name}: cell {i}"
        )
    grade_ids = [
        c.metadata["nbgrader"]["grade_id"]
        for c in master.cells
        if "nbgrader" in c.metadata
    ]
    assert len(grade_ids) == len(set(grade_ids))


def test_a_master_in_sync_with_its_py_or_without_one_passes(tmp_path):
    in_sync(load_master(ROOT / "solutions" / "00_welcome_exercises.ipynb"))
    in_sync(load_master(MASTER))  # nbgrader's and the fixtures': no .py beside


def test_a_master_whose_py_was_edited_is_refused_naming_both_and_the_fix(tmp_path):
    nb, py = stale_master(tmp_path)
    with pytest.raises(CourseError) as err:
        in_sync(load_master(nb))
    words = str(err.value)
    assert f"--source {nb}" in words and str(py) in words and "`course sync`" in words
