"""Scoring: points only for ``ok`` replies, exercise and student statuses, redaction, flags."""

from __future__ import annotations

import copy
import json

import pytest

from course_utils.grading.inputs.ipynb import read_cells
from course_utils.grading.inputs.master import load_master
from course_utils.grading.inputs.submissions import match
from course_utils.grading.policy import scoring
from tests.grading.helpers import MASTER, SUBS

OK = {"status": "ok", "outputs": []}


def _score(name: str = "full", cells: dict | None = None, **run) -> dict:
    """Score the fixture ``name`` with every cell ``ok`` except those in ``cells``."""
    m = load_master(MASTER)
    matched = match(m, read_cells(SUBS / f"{name}.ipynb"))
    executed = [c for c in matched.cells if c.role in ("context", "solution", "test")]
    results = [dict((cells or {}).get(i, OK)) for i in range(len(executed))]
    return scoring.score(
        m, matched, {"cells": results, "events": [], **run}, student="x"
    )


def test_all_ok_scores_full_marks():
    rec = _score()
    assert rec["total"] == 8 and rec["max_total"] == 8 and rec["status"] == "ok"
    assert rec["reason"] == "3 of 3 exercises passed"


def test_a_failed_hidden_test_scores_nothing_and_leaks_nothing():
    # cells: 0 setup, 1 square, 2 square tests, 3 square hidden tests
    secret = "assert square(x) == want, f'square({x}) should be {want}'"
    failed = {"status": "error", "ename": "AssertionError", "evalue": secret}
    rec = _score(cells={3: failed})
    assert rec["total"] == 6 and rec["exercises"]["square"]["status"] == "partial"
    hidden = next(t for t in rec["tests"] if t["name"] == "square: hidden tests")
    assert hidden["points"] == 0 and scoring.HIDDEN_MARK in hidden["message"]
    assert "should be" not in json.dumps(rec)


def test_exercise_statuses_from_the_replies():
    stub = {"status": "error", "ename": "NotImplementedError", "evalue": ""}
    timeout = {"status": "timeout", "detail": "timed out (4 s per cell); interrupted"}
    died = {"status": "died", "detail": "the kernel process exited with status 3"}
    raised = {"status": "error", "ename": "SyntaxError", "evalue": "bad"}
    name = {"status": "error", "ename": "NameError", "evalue": "greet"}
    cells = {1: stub, 2: stub, 3: stub, 4: timeout, 5: name, 6: name, 7: died, 8: died}
    rec = _score(cells=cells)
    statuses = {ex: i["status"] for ex, i in rec["exercises"].items()}
    assert statuses == {
        "square": "not implemented",
        "greet": "timeout",
        "total": "crashed",
    }
    rec = _score(cells={1: raised, 2: raised, 3: raised})
    assert rec["exercises"]["square"]["status"] == "error"
    assert rec["exercises"]["square"]["message"] == "your code raised SyntaxError: bad"
    assert _score("deleted_cell")["exercises"]["greet"]["status"] == "missing"


def test_student_status_follows_the_first_problem_and_the_canary():
    events = [{"kind": "died", "cell": 1, "detail": "the kernel crashed"}]
    rec = _score(events=events)
    assert rec["status"] == "crashed"
    assert rec["reason"] == (
        "exercise 'square' (your code): the kernel crashed; the other exercises were graded"
    )
    assert _score(canary="tampered")["status"] == "review"
    notes = [{"kind": "restart", "cell": 2, "detail": "a fresh kernel"}]
    assert _score(events=notes)["notes"] == ["a fresh kernel"]


def test_score_flags_a_broken_setup():
    rec = _score(
        cells={
            0: {
                "status": "error",
                "ename": "ModuleNotFoundError",
                "evalue": "No module named 'torch'",
            }
        }
    )
    assert rec["status"] == "error"
    assert "setup cell of the master raised ModuleNotFoundError" in rec["reason"]


def test_missing_results_are_not_run():
    m = load_master(MASTER)
    matched = match(m, read_cells(SUBS / "full.ipynb"))
    events = [{"kind": "gave-up", "cell": 3, "detail": "the rest was not run"}]
    rec = scoring.score(m, matched, {"cells": [OK] * 3, "events": events}, student="x")
    assert rec["total"] == 1 and rec["status"] == "crashed"
    assert rec["exercises"]["total"] == {
        "points": 0.0,
        "max_points": 3.0,
        "status": "not run",
        "message": "the rest was not run",
    }


def test_redactor_removes_hidden_lines_in_any_quoting():
    src = "### BEGIN HIDDEN TESTS\nassert f(2) == 'it''s', \"the secret check\"\n### END HIDDEN TESTS"
    red = scoring.Redactor([src])
    line = src.splitlines()[1]
    for text in (line, repr([line]), json.dumps({"x": line})):
        assert "secret check" not in red(text)
    assert red("nothing hidden here") == "nothing hidden here"


def test_flags_spot_kernel_tampering_tools():
    flags = scoring.flags_for({"a": ["import inspect\nget_ipython().run_cell = f"]})
    assert "get_ipython" in flags and "frame inspection" in flags
    assert scoring.flags_for({"a": ["return x * x"]}) == []
    # found in the parsed code, not by a regex: an alias or exec does not hide them
    evasions = ["import os as _o\n_o._exit(0)", "exec(payload)"]
    assert scoring.flags_for({"a": evasions}) == [
        "dynamic code (exec/eval/compile)",
        "process control",
    ]


DEEP = {  # lines the kernel runs, nested deeper than the flag analysis recurses
    "minus": "x = " + "-" * 501 + "1",
    "sum": "x = " + " + ".join(["1"] * 600),
}


def test_a_flag_analysis_beyond_the_code_costs_no_point(python_recursion_limit):
    """The solved fixture with both lines: flags_for raises RecursionError (the ast
    visitor recurses once per level); score() keeps the points and tells on_error."""
    m = load_master(MASTER)
    cells = read_cells(SUBS / "full.ipynb")
    solution = next(c for c in cells if c["source"].startswith("# EXERCISE: square"))
    for line in DEEP.values():
        solution["source"] += "\n" + line
    matched = match(m, cells)
    with pytest.raises(RecursionError):  # a real failure, not an injected one
        scoring.flags_for(matched.student_code)
    executed = [c for c in matched.cells if c.role in ("context", "solution", "test")]
    run = {"cells": [OK] * len(executed), "events": []}
    heard: list[tuple[str, BaseException]] = []
    rec = scoring.score(
        m, matched, run, student="x", on_error=lambda *err: heard.append(err)
    )
    assert (rec["total"], rec["status"], rec["flags"]) == (8, "ok", [])
    assert [(step, type(err)) for step, err in heard] == [
        (scoring.FLAG_ANALYSIS, RecursionError)
    ]
    with pytest.raises(RecursionError):  # the caller that does not listen hears it
        scoring.score(m, matched, run, student="x")
    for line in DEEP.values():  # each line alone is beyond it
        with pytest.raises(RecursionError):
            scoring.flags_for({"a": [line]})


def test_invalid_record_scores_zero_for_every_exercise():
    m = load_master(MASTER)
    rec = scoring.invalid_record(m, "x", "why")
    assert rec["total"] == 0 and set(rec["exercises"]) == set(m.exercises)
    assert {e["status"] for e in rec["exercises"].values()} == {"invalid"}
    assert len(rec["tests"]) == 6 and rec["max_total"] == 8
    copy.deepcopy(rec)


def test_the_course_checkouts_path_is_taken_out_of_every_message():
    """A warning printed from the library names its file: the student gets the path
    inside the course, not where the instructor keeps it."""
    from pathlib import Path

    import course_utils

    where = Path(course_utils.__file__).resolve().parent
    text = f"{where}/parity.py:127: RuntimeWarning: invalid value"
    assert (
        scoring.Redactor([])(text)
        == "course_utils/parity.py:127: RuntimeWarning: invalid value"
    )
