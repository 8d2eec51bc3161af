"""The bar on a real master: its solution gets full marks, its exercise notebook zero."""

from __future__ import annotations

import shutil
from pathlib import Path

from course_utils.grading import batch as grader
from course_utils.tooling.cli import main as course_main

ROOT = Path(__file__).resolve().parent.parent
NAME = "00_welcome_exercises.ipynb"


def test_master_full_marks_and_exercise_notebook_zero(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(ROOT / "solutions" / NAME, subs / "master.ipynb")
    shutil.copy(ROOT / "exercises" / NAME, subs / "student.ipynb")
    batch = grader.grade(
        subs,
        ROOT / "solutions" / NAME,
        tmp_path / "out",
        jobs=2,
        progress=False,
        echo=lambda *a: None,
    )
    recs = {r["student"]: r for r in batch.records}
    full, zero = recs["master"], recs["student"]
    assert full["max_total"] == 15 and full["total"] == 15 and full["status"] == "ok", (
        full["reason"]
    )
    assert {e["status"] for e in full["exercises"].values()} == {"passed"}
    assert zero["total"] == 0 and zero["status"] == "ok"
    assert {e["status"] for e in zero["exercises"].values()} == {"not implemented"}
    assert (
        zero["reason"]
        == "0 of 3 exercises passed; not implemented: sync-timer, port-mlp, break-even"
    )


def test_check_finds_the_course_copy_of_the_tests(tmp_path, capsys):
    mine = tmp_path / NAME  # a student's copy, outside the course folder
    shutil.copy(ROOT / "exercises" / NAME, mine)
    assert course_main(["check", str(mine)]) == 1
    out = capsys.readouterr().out
    assert out.count("not implemented") >= 3 and "visible tests: 0 / 6 points" in out
