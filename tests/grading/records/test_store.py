"""The report folder: students' files, the class tables, resume marks and shard merging."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from course_utils.errors import CourseError
from course_utils.grading.records import keyed, store


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
        "late_penalty": "",
        "manual_points": "",
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


def test_forged_edited_and_malformed_records_are_not_believed(tmp_path):
    out = tmp_path / "out"
    rec = _record("ann", 1.0, submission_sha256="s", master_sha256="m", options={})
    saved = store.save_student(out, rec, {"feedback.ipynb": "{}"})
    assert store.already_graded(out, "ann", "s", "m", {})
    forged = dict(saved, total=3.0)  # edited by someone without the key
    (out / "ann" / store.RECORD).write_text(json.dumps(forged))
    (out / "eve").mkdir()  # a record of a student not in the class
    (out / "eve" / store.RECORD).write_text(json.dumps(_record("eve", 3.0)))
    (out / "mal").mkdir()  # malformed: used to crash every table after it
    (out / "mal" / store.RECORD).write_text('{"student": "mal"}')
    (out / "deep").mkdir()
    (out / "deep" / store.RECORD).write_text("[" * 100_000)
    (out / "bob").mkdir()  # ann's sealed record copied to another folder
    (out / "bob" / store.RECORD).write_text(json.dumps(saved))
    notes: list[str] = []
    assert store.write_tables(out, notes) == []
    assert not store.already_graded(out, "ann", "s", "m", {})
    assert len(notes) == 5 and "not sealed by this grader" in " ".join(notes)
    assert "does not belong in folder 'bob'" in " ".join(notes)
    assert list(csv.reader((out / "grades.csv").open())) == [
        [
            "student",
            "total",
            "max_total",
            "status",
            "reason",
            "flags",
            "seconds",
            "late_penalty",
            "manual_points",
        ]  # fmt: skip
    ]


def test_resume_needs_the_same_options_and_untouched_files(tmp_path):
    rec = _record("ann", 3.0, submission_sha256="s", master_sha256="m")
    store.save_student(tmp_path, dict(rec, options={"timeout": 4.0}), {"a.txt": "x"})
    assert store.already_graded(tmp_path, "ann", "s", "m", {"timeout": 4.0})
    assert not store.already_graded(tmp_path, "ann", "s", "m", {"timeout": 5.0})
    (tmp_path / "ann" / "a.txt").write_text("changed")
    assert not store.already_graded(tmp_path, "ann", "s", "m", {"timeout": 4.0})
    store.save_student(tmp_path, rec, {"a.txt": "x"})
    (
        tmp_path / keyed.PRIVATE / keyed.KEY
    ).unlink()  # the key is gone: nothing is believed
    assert not store.already_graded(tmp_path, "ann", "s", "m", None)


def test_merge_writes_and_deletes_only_under_out(tmp_path):
    shard, out, victim = tmp_path / "shard", tmp_path / "out", tmp_path / "victim"
    victim.mkdir()
    (victim / "precious").write_text("keep")
    secret = tmp_path / "secret.txt"
    secret.write_text("instructor only")
    store.save_student(shard, _record("ann", 3.0), {"results.json": "{}"})
    key = keyed.key(shard)
    (shard / "x").mkdir()  # traversal through a forged (even a sealed) 'student'
    evil = keyed.seal(_record("../victim", 3.0), key)
    (shard / "x" / store.RECORD).write_text(json.dumps(evil))
    (shard / "ann" / "results.json").unlink()  # a link in place of a report file
    (shard / "ann" / "results.json").symlink_to(secret)
    (shard / "link").symlink_to(victim)  # a student folder that is a link
    long = "x" * 250  # a name too long for a file name once prefixed
    store.save_student(shard, _record(long, 1.0), {"results.json": "{}"})
    recs, notes = store.merge([shard], out)
    assert [r["student"] for r in recs] == ["ann", long]
    assert (victim / "precious").read_text() == "keep"
    assert not (out / "ann" / "results.json").exists()
    assert "changed report files were not copied" in " ".join(notes)
    assert "does not belong in folder 'x'" in " ".join(notes)
    assert {p.name for p in out.iterdir()} == {
        ".grader", "ann", "grades.csv", "grades.json", store.student_dir(out, long).name
    }  # fmt: skip
    assert store.already_graded(out, "ann", None, "", None) is False
    assert store.records(out) == recs  # re-sealed with out's own key


def test_tables_neutralise_formulas_and_show_names_escaped(tmp_path):
    store.save_student(tmp_path, _record("=HYPERLINK(1)", 3.0, reason="@x"), {})
    store.save_student(tmp_path, _record("caf\\xe9", 2.0), {})
    store.write_tables(tmp_path)
    rows = list(csv.reader((tmp_path / "grades.csv").open()))
    assert [r[0] for r in rows[1:]] == ["'=HYPERLINK(1)", "caf\\xe9"]
    assert rows[1][5] == "'@x"
    assert store.student_dir(tmp_path, "=HYPERLINK(1)").name.startswith(
        "_HYPERLINK_1_+"
    )


def test_the_masters_noted_are_kept_and_merged(tmp_path):
    """``_instructor/.masters.json``: each master's path by its sha256, for the line a
    later run says when the master changed; a merge carries its shards' notes."""
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    assert store.masters_used(a) == {}
    store.save_student(a, _record("ann", 3.0), {})
    store.save_student(b, _record("bob", 1.0), {})
    store.remember_master(a, Path("/course/solutions/m.ipynb"), "s1")
    store.remember_master(a, Path("/course/solutions/m.ipynb"), "s1")  # once
    store.remember_master(b, Path("/upstream/solutions/m.ipynb"), "s2")
    assert store.masters_used(a) == {"s1": "/course/solutions/m.ipynb"}
    store.merge([a, b], out)
    assert store.masters_used(out) == {
        "s1": "/course/solutions/m.ipynb",
        "s2": "/upstream/solutions/m.ipynb",
    }
    (out / store.INSTRUCTOR / store.MASTERS).write_text("[not a note]")
    assert store.masters_used(out) == {}  # a broken note is no note
