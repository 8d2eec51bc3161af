"""Feedback files: Gradescope's format, and feedback that never shows a hidden test's source."""

from __future__ import annotations

import json

import nbformat

from course_utils.grading.inputs.ipynb import read_cells
from course_utils.grading.inputs.master import load_master
from course_utils.grading.inputs.submissions import match
from course_utils.grading.policy import feedback, scoring
from tests.grading.helpers import MASTER, SUBS


def test_gradescope_format():
    rec = scoring.invalid_record(load_master(MASTER), "x", "the notebook file is empty")
    gs = feedback.gradescope(rec)
    assert gs["score"] == 0 and len(gs["tests"]) == 6
    assert {t["visibility"] for t in gs["tests"]} == {"visible", "after_published"}
    assert set(gs["tests"][0]) == {
        "name",
        "score",
        "max_score",
        "status",
        "output",
        "visibility",
    }


def _run(printed: str) -> tuple:
    """The full fixture, every cell ok, the student's square cell printing ``printed``."""
    m = load_master(MASTER)
    matched = match(m, read_cells(SUBS / "full.ipynb"))
    n = sum(c.role in ("context", "solution", "test") for c in matched.cells)
    cells = [{"status": "ok", "outputs": []} for _ in range(n)]
    stream = {"output_type": "stream", "name": "stdout", "text": printed}
    cells[1]["outputs"] = [stream]
    cells[3]["outputs"] = [dict(stream, text="hidden test output\n")]
    run = {"cells": cells, "events": []}
    return m, matched, run, scoring.score(m, matched, run, student="ann")


def test_feedback_shows_the_code_and_tests_but_no_hidden_source():
    hidden_line = next(
        ln.strip()
        for ln in load_master(MASTER).hidden_sources()[0].splitlines()
        if "SECRET" in ln
    )
    m, matched, run, rec = _run(f"I found: {hidden_line}\n")
    text = feedback.feedback_notebook(m, matched, run, rec)
    nb = nbformat.reads(text, as_version=4)
    nbformat.validate(nb)
    assert "**Score:** 8 / 8" in nb.cells[0].source
    assert "square: hidden tests" in text and "def square(x)" in text
    assert "SECRET_HIDDEN_ORACLE" not in text and "hidden test output" not in text
    assert scoring.HIDDEN_MARK in text
    assert "written answer, graded by hand" in text


def test_executed_notebook_is_every_cell_as_run():
    m, matched, run, _ = _run("hello\n")
    nb = nbformat.reads(feedback.executed_notebook(matched, run), as_version=4)
    nbformat.validate(nb)
    assert len(nb.cells) == len(run["cells"])
    assert "SECRET_HIDDEN_ORACLE" in "".join(c.source for c in nb.cells)
    assert nb.cells[3].outputs[0]["text"] == "hidden test output\n"
    assert nb.cells[0].metadata["grader"] == {"status": "ok"}


def test_notebook_text_is_nbformat_45():
    data = json.loads(feedback.notebook_text([feedback._markdown("hi")]))
    assert (data["nbformat"], data["nbformat_minor"]) == (4, 5)
    assert data["cells"][0]["id"] == "cell-0"
