"""The generated class (``generated_class.py``) with written answers, for ``course grade
answers``: the tiny master plus a second written answer, and the class's notebooks with
known answers to both.

``write_master(folder)`` writes the master of two written answers (``why``, the tiny
master's, and ``unit``, added here); ``write_class(folder)`` writes the generated class
(its 13 students, the names the graded class has) with the answers of :data:`ANSWERS`
written in; every other student's answer is missing (the ``unit`` cell absent) or the
untouched placeholder.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_markdown_cell

from course_utils import student_version
from tests.grading.generated_class import write_class as write_generated
from tests.grading.helpers import MASTER

UNIT_PROMPT = "<!-- EXERCISE: unit -->\nIn which **unit** is an area measured?\n"
UNIT = (
    UNIT_PROMPT
    + "\n<!-- BEGIN SOLUTION -->\nSquare metres (`m**2`).\n<!-- END SOLUTION -->"
)
QUESTIONS = ["why", "unit"]
# student -> question -> what they wrote in place of YOUR ANSWER HERE (None: no answer)
ANSWERS = {
    "ada": {"why": "Squares give **areas**.", "unit": "m², e.g. `3 m * 3 m`"},
    "bob": {"why": "<script>alert('bob')</script> to get <b>areas</b>", "unit": None},
    "dee": {"why": None, "unit": "![plot](https://example.com/track.png) metres"},
    "fay": {"why": "Area\n\n- of a square\n- of a tile", "unit": "square metres"},
}
NO_UNIT_CELL = {"cy", "eve"}  # their notebooks have no 'unit' cell at all


def write_master(folder: Path) -> Path:
    """The tiny master with the ``unit`` question appended; returns its path."""
    nb = nbformat.read(MASTER, as_version=4)
    nb.cells.append(new_markdown_cell(UNIT))
    student_version.annotate(nb, "tiny_master.ipynb")
    folder.mkdir(parents=True)
    path = folder / MASTER.name
    nbformat.write(nb, path)
    return path


def _answer(nb, question: str, text: str | None) -> None:
    for cell in nb.cells:
        if student_version.exercise_id(cell) == question and text is not None:
            cell.source = cell.source.replace(student_version.TEXT_STUB, text)


def write_class(folder: Path) -> Path:
    """The generated class with the written answers of :data:`ANSWERS`; returns ``folder``."""
    write_generated(folder)
    for path in sorted(folder.glob("*.ipynb")):
        student = path.stem
        if student == "lea":  # not JSON: stays unreadable
            continue
        nb = nbformat.read(path, as_version=4)
        if student not in NO_UNIT_CELL:
            nb.cells.append(
                new_markdown_cell(UNIT_PROMPT + "\n" + student_version.TEXT_STUB)
            )
        for question, text in ANSWERS.get(student, {}).items():
            _answer(nb, question, text)
        nbformat.write(nb, path)
    return folder
