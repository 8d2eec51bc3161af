"""The report folder: students' files, the class tables, resume marks and shard merging."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from course_utils.grading import store
from course_utils.tooling.errors import CourseError


def _record(student, points, when="2025-01-01T00:00:00+00:00", **extra):
    return {
        "student": student,
        "status": "ok",
        "reason": "r",
        "total": points,
        "max_total": 3.0,
        "exercises": {
            "total": {
                "points": points,
                "max_points": 3.0,
                "status": "passed",
                "message": "",
            }
        },
        "tests": [],
        "notes": [],
        "flags": [],
        "seconds": 1.0,
        "graded_at": when,
        **extra,
    }


def test_tables_and_merge(tmp_path):
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    store.save_student(a, _record("ann", 3.0), {"results.json": "{}"})
    store.save_student(b, _record("bob", 1.0), {"results.json": "{}"})
    store.save_student(b, _record("ann", 2.0, "2025-01-02T00:00:00+00:00"), {})
    recs, notes = store.merge([a, b], out)
    assert [(r["student"], r["total"]) for r in recs] == [("ann", 2.0), ("bob", 1.0)]
    assert "kept the newer grade" in notes[0]
    rows = list(csv.DictReader((out / "grades.csv").open()))
    # an exercise called "total" does not clash with the summary columns
    assert rows[1] == {
        "student": "bob",
        "exercise:total": "1",
        "total": "1",
        "max_total": "3",
        "status": "ok",
        "reason": "r",
        "flags": "",
        "seconds": "1.0",
    }
    assert (
        json.loads((out / "grades.json").read_text())["students"][0]["student"] == "ann"
    )
    assert (out / "bob" / "results.json").exists()
    assert not (out / store.WORK).exists()
    with pytest.raises(CourseError, match="not a folder"):
        store.merge([tmp_path / "missing"], out)


def test_already_graded_needs_the_same_files_and_no_error(tmp_path):
    rec = _record("ann", 3.0, submission_sha256="s", master_sha256="m")
    store.save_student(tmp_path, rec, {})
    assert store.already_graded(tmp_path, "ann", "s", "m")
    assert not store.already_graded(tmp_path, "ann", "changed", "m")
    assert not store.already_graded(tmp_path, "ann", "s", "other master")
    store.save_student(tmp_path, dict(rec, status="error"), {})
    assert not store.already_graded(tmp_path, "ann", "s", "m")
    assert not store.already_graded(Path("/nonexistent"), "x", None, "")


def test_grade_json_is_written_last_and_broken_ones_are_skipped(tmp_path):
    store.save_student(tmp_path, _record("ann", 3.0), {"feedback.ipynb": "{}"})
    (tmp_path / "bob").mkdir()
    (tmp_path / "bob" / store.RECORD).write_text("{not json")
    assert [r["student"] for r in store.records(tmp_path)] == ["ann"]
    assert sorted(p.name for p in (tmp_path / "ann").iterdir()) == [
        "feedback.ipynb",
        "grade.json",
    ]


def test_table_cuts_long_reasons(tmp_path):
    assert store.table([]) == "no students graded"
    text = store.table([_record("ann", 3.0, reason="x" * 500)], width=60)
    head, row = text.splitlines()
    assert head.split() == ["student", "score", "status", "reason"]
    assert row.startswith("ann") and row.endswith("…") and len(row) <= 60


def test_remove_work_keeps_other_runs(tmp_path):
    mine, other = tmp_path / store.WORK / "a", tmp_path / store.WORK / "b"
    mine.mkdir(parents=True)
    other.mkdir()
    store.remove_work(tmp_path, mine)
    assert not mine.exists() and other.exists()
    store.remove_work(tmp_path, other)
    assert not (tmp_path / store.WORK).exists()
