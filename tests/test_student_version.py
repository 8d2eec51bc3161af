"""The student notebooks: the exercise marker grammar, and ``exercises/`` in step with the masters.

``course_utils.student_version`` turns a master into its student notebook;
``course build-exercises`` (``course_utils/tooling/notebooks.py``) writes ``exercises/``.
The last tests here check the committed student notebooks: each is what its master makes
now, points at itself, is not paired and ends with how to check and hand it in.
"""

from pathlib import Path

import nbformat
import pytest

from course_utils import student_version
from course_utils.student_version import MarkerError
from course_utils.tooling import notebooks

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = sorted((ROOT / "exercises").glob("*.ipynb"))


def nb(*cells):
    out = nbformat.v4.new_notebook()
    for kind, src in cells:
        make = (
            nbformat.v4.new_code_cell
            if kind == "code"
            else nbformat.v4.new_markdown_cell
        )
        out.cells.append(make(src))
    return out


SOLUTION = "# EXERCISE: double\ndef double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n"
VISIBLE = "# TESTS: double points=2\ncheck('double', lambda: double(2), 4)"
HIDDEN = "# HIDDEN TESTS: double points=3\n### BEGIN HIDDEN TESTS\nassert double(5) == 10\n### END HIDDEN TESTS"
ANSWER = "<!-- EXERCISE: why -->\nWhy?\n\n<!-- BEGIN SOLUTION -->\nBecause.\n<!-- END SOLUTION -->"


def good():
    return nb(
        ("markdown", "# title"),
        ("code", SOLUTION),
        ("code", VISIBLE),
        ("code", HIDDEN),
        ("markdown", ANSWER),
    )


def test_parse_finds_exercises_tests_and_points():
    found = student_version.parse(good(), "m.ipynb")
    assert list(found) == ["double", "why"]
    ex = found["double"]
    assert ex.solution_cells == [1]
    assert [(t.hidden, t.points, t.index) for t in ex.tests] == [
        (False, 2.0, 2),
        (True, 3.0, 3),
    ]
    assert ex.points == 5


def test_student_version_stubs_and_drops_hidden_tests():
    student = student_version.student_version(good(), "m.ipynb")
    sources = [c.source for c in student.cells]
    assert len(sources) == 4
    assert sources[1] == (
        "# EXERCISE: double\ndef double(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    )
    assert sources[2] == VISIBLE
    assert "HIDDEN" not in "".join(sources) and "assert double(5)" not in "".join(
        sources
    )
    assert "Because." not in sources[3] and "YOUR ANSWER HERE" in sources[3]


def test_annotate_writes_nbgrader_metadata():
    master = student_version.annotate(good(), "m.ipynb")
    meta = [c.metadata.get("nbgrader") for c in master.cells]
    assert meta[0] is None
    assert meta[1] == {
        "schema_version": 3,
        "locked": False,
        "solution": True,
        "grade": False,
        "grade_id": "double",
    }
    assert meta[2]["grade_id"] == "double-tests" and meta[2]["points"] == 2
    assert meta[2]["grade"] and meta[2]["locked"] and not meta[2]["solution"]
    assert meta[3]["grade_id"] == "double-hidden-tests" and meta[3]["points"] == 3
    assert meta[4]["grade_id"] == "why" and meta[4]["solution"] is True


@pytest.mark.parametrize(
    "cells, message",
    [
        (
            [("code", "# EXERCISE: a\n### BEGIN SOLUTION\nx = 1\n")],
            "has no '### END SOLUTION'",
        ),
        (
            [("code", "# EXERCISE: a\nx = 1\n### END SOLUTION\n")],
            "without '### BEGIN SOLUTION'",
        ),
        (
            [
                (
                    "code",
                    "# EXERCISE: a\n### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n",
                )
            ],
            "nested",
        ),
        (
            [("code", "### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n")],
            "without a first line '# EXERCISE",
        ),
        ([("code", "# EXERCISE: a\nx = 1\n")], "has no '### BEGIN SOLUTION' region"),
        ([("code", SOLUTION), ("code", SOLUTION)], "used twice"),
        ([("code", VISIBLE)], "come before (or without)"),
        (
            [
                ("code", SOLUTION),
                ("code", "# HIDDEN TESTS: double points=1\nassert True"),
            ],
            "needs its body between",
        ),
        (
            [("code", SOLUTION), ("code", "# TESTS: double pts=1\nassert True")],
            "malformed test header",
        ),
        (
            [("code", SOLUTION), ("code", VISIBLE), ("code", VISIBLE)],
            "a second test cell",
        ),
        (
            [("markdown", "<!-- BEGIN SOLUTION -->\nx\n<!-- END SOLUTION -->")],
            "markdown answer without",
        ),
        (
            [("markdown", "<!-- EXERCISE: q -->\n<!-- BEGIN SOLUTION -->\nx")],
            "has no '<!-- END SOLUTION -->'",
        ),
        (
            [("code", "# EXERCISE: a\nx = 1  ### BEGIN SOLUTION\n")],
            "marker with other text",
        ),
    ],
)
def test_marker_errors_name_file_and_cell(cells, message):
    with pytest.raises(MarkerError) as err:
        student_version.student_version(nb(*cells), "solutions/x.ipynb")
    assert "solutions/x.ipynb: cell " in str(err.value)
    assert message in str(err.value)


def test_indentation_of_stub_follows_marker():
    src = "# EXERCISE: k\nclass A:\n    def f(self):\n        ### BEGIN SOLUTION\n        return 1\n        ### END SOLUTION\n"
    student = student_version.student_version(nb(("code", src)))
    assert (
        "        # YOUR CODE HERE\n        raise NotImplementedError()"
        in student.cells[0].source
    )


# The committed student notebooks


def test_exercises_are_generated_from_solutions():
    drift = notebooks.build_exercises(ROOT, check=True)
    assert drift == [], f"run `course build-exercises`: {drift}"


def test_student_notebooks_point_at_themselves():
    for nb_path in sorted((ROOT / "exercises").glob("*.ipynb")):
        nb = nbformat.read(nb_path, as_version=4)
        assert notebooks.badges(f"exercises/{nb_path.name}") in nb.cells[0].source


def test_student_notebooks_are_not_paired():
    # With jupytext in JupyterLab, a paired notebook would grow a stray .py on save.
    students = sorted((ROOT / "exercises").glob("*.ipynb"))
    assert students
    for nb_path in students:
        nb = nbformat.read(nb_path, as_version=4)
        assert "jupytext" not in nb.metadata, nb_path.name
        assert nb.metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("path", EXERCISES, ids=[p.stem for p in EXERCISES])
def test_student_notebooks_end_with_how_to_check_and_hand_in(path):
    from course_utils.grading.inputs.assignment import cell_ids

    last = nbformat.read(path, as_version=4).cells[-1]
    assert last.cell_type == "markdown"
    assert last.source == notebooks.submitting(path.name)
    # the line runs the kernel's own Python: no `course` on the kernel's PATH is needed
    assert (
        f'import sys\n!"{{sys.executable}}" -m course_utils.tooling.cli check {path.name}'
        in (last.source)
    )
    assert "File → Download → Download\n.ipynb" in last.source
    assert cell_ids([last]) == set()  # the grader reads no exercise in it
