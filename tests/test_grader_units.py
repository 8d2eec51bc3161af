"""The grader's parts that need no kernel: reading, matching, redaction, tables, merge, CLI errors."""

from __future__ import annotations

import copy
import csv
import json
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from course_utils.grading import batch as grader
from course_utils.grading import load as grader_load
from course_utils.grading import report as grader_report
from course_utils.grading import store as grader_store
from course_utils.tooling.cli import main as course_main
from course_utils.tooling.errors import CourseError

FIX = Path(__file__).parent / "fixtures" / "grader"
MASTER = FIX / "tiny_master.ipynb"
SUBS = FIX / "submissions"


def test_fixtures_are_up_to_date(tmp_path):
    sys.path.insert(0, str(FIX))
    try:
        import make_fixtures
    finally:
        sys.path.remove(str(FIX))
    assert make_fixtures.write_all(tmp_path)  # writes everything into an empty folder
    for path in tmp_path.rglob("*"):
        if path.is_file():
            rel = path.relative_to(tmp_path)
            assert (FIX / rel).read_bytes() == path.read_bytes(), (
                f"{rel} is stale: run make_fixtures.py"
            )


def test_master_cells_points_and_hidden():
    m = grader_load.load_master(MASTER)
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
    visible = grader_load.load_master(MASTER, visible_only=True)
    assert all(not t.hidden for t in visible.tests) and visible.max_points() == 3


def _nbgrader_only(tmp_path: Path) -> Path:
    """The tiny master with our header lines removed: only nbgrader's metadata is left."""
    nb = nbformat.read(MASTER, as_version=4)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and (meta.get("grade") or meta.get("solution")):
            cell.source = cell.source.split("\n", 1)[1]
    path = tmp_path / "nbgrader_master.ipynb"
    nbformat.write(nb, path)
    return path


def test_master_from_nbgrader_metadata_only(tmp_path):
    ours = grader_load.load_master(MASTER)
    theirs = grader_load.load_master(_nbgrader_only(tmp_path))
    assert theirs.exercises == ours.exercises
    assert [(t.exercise, t.points, t.hidden) for t in theirs.tests] == [
        (t.exercise, t.points, t.hidden) for t in ours.tests
    ]


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "no test cells"),
        ('{"cells": []}', "no test cells"),
        ("not json", "not valid JSON"),
    ],
)
def test_bad_source_is_a_one_line_error(tmp_path, content, message):
    path = tmp_path / "m.ipynb"
    path.write_text(content) if content else path.write_bytes(b"")
    with pytest.raises(CourseError) as err:
        grader_load.load_master(path)
    assert "--source" in str(err.value) and "\n" not in str(err.value)
    assert message in str(err.value) or "empty" in str(err.value)


@pytest.mark.parametrize(
    "name, reason",
    [
        ("empty", "the notebook file is empty"),
        ("truncated", "the notebook is truncated"),
        ("not_json", "not valid JSON: Expecting value at line 1 column 1"),
        ("wrong_shape", "JSON but not a notebook: it has no 'cells' list"),
    ],
)
def test_unreadable_submissions_get_a_reason(name, reason):
    with pytest.raises(grader_load.SubmissionError) as err:
        grader_load.read_cells(SUBS / f"{name}.ipynb")
    assert reason in str(err.value)


def test_wrong_shapes(tmp_path):
    for data, reason in (
        ([1, 2], "a list, not an object"),
        ({"cells": [{"source": "x"}]}, "cell 0 is not a notebook cell"),
        ({"cells": [{"cell_type": "code", "source": 3}]}, "'source' that is not text"),
        ({"worksheets": []}, "nbformat 3"),
    ):
        path = tmp_path / "x.ipynb"
        path.write_text(json.dumps(data))
        with pytest.raises(grader_load.SubmissionError, match=reason):
            grader_load.read_cells(path)


def _match(name: str) -> grader_load.Matched:
    return grader_load.match(
        grader_load.load_master(MASTER), grader_load.read_cells(SUBS / f"{name}.ipynb")
    )


def test_match_uses_metadata_then_marker_text():
    moved = _match(
        "moved_cells"
    )  # total's marker line removed, metadata kept, cell moved up
    assert not moved.missing and "sum(xs)" in moved.student_code["total"][0]
    assert any("added or edited" in n for n in moved.notes)
    dup = _match(
        "duplicated_cell"
    )  # a pasted copy without metadata, found by its marker
    assert dup.duplicated == {"square": 2}
    assert [s.splitlines()[-1].strip() for s in dup.student_code["square"]] == [
        "return x + x",
        "### END SOLUTION",
    ]
    assert _match("deleted_cell").missing == ["greet"]


def test_match_never_takes_tests_from_the_student():
    m = grader_load.load_master(MASTER)
    matched = _match("stale_outputs")  # edited tests claiming 100 points
    tests = [c for c in matched.cells if c.role == "test"]
    assert [c.source for c in tests] == [c.source for c in m.tests]
    assert sum(c.points for c in tests) == 8


def test_discover_files_and_folders():
    subs, notes = grader_load.discover(FIX / "folders", "tiny_master.ipynb")
    by = {s.student: s for s in subs}
    assert by["folder_one"].path.name == "anything.ipynb"
    assert by["folder_named"].path.name == "tiny_master.ipynb"  # checkpoints ignored
    assert "2 notebooks" in by["folder_ambiguous"].problem
    assert "no .ipynb" in by["folder_empty"].problem
    assert notes == ["ignored README.txt: not a notebook or a folder"]
    with pytest.raises(CourseError, match="not a folder"):
        grader_load.discover(FIX / "nope", "x.ipynb")


def test_redactor_removes_hidden_lines_in_any_quoting():
    src = "### BEGIN HIDDEN TESTS\nassert f(2) == 'it''s', \"the secret check\"\n### END HIDDEN TESTS"
    red = grader_report.Redactor([src])
    line = src.splitlines()[1]
    for text in (line, repr([line]), json.dumps({"x": line})):
        assert "secret check" not in red(text)
    assert red("nothing hidden here") == "nothing hidden here"


def test_flags_spot_kernel_tampering_tools():
    flags = grader_report.flags_for(
        {"a": ["import inspect\nget_ipython().run_cell = f"]}
    )
    assert "get_ipython" in flags and "frame inspection" in flags
    assert grader_report.flags_for({"a": ["return x * x"]}) == []


def _record(student, points, when="2025-01-01T00:00:00+00:00"):
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
    }


def test_tables_and_merge(tmp_path):
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    grader_store.save_student(a, _record("ann", 3.0), {"results.json": "{}"})
    grader_store.save_student(b, _record("bob", 1.0), {"results.json": "{}"})
    grader_store.save_student(b, _record("ann", 2.0, "2025-01-02T00:00:00+00:00"), {})
    recs, notes = grader_store.merge([a, b], out)
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
    with pytest.raises(CourseError, match="not a folder"):
        grader_store.merge([tmp_path / "missing"], out)


def test_gradescope_format():
    rec = grader_report.invalid_record(
        grader_load.load_master(MASTER), "x", "the notebook file is empty"
    )
    gs = grader_report.gradescope(rec)
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


def test_shard_spec():
    assert grader.parse_shard("1/4") == (1, 4)
    for bad in ("4/4", "x", "1/0", "-1/2"):
        with pytest.raises(CourseError, match="--shard"):
            grader.parse_shard(bad)


def test_cli_errors_are_one_line_and_exit_2(tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cases = [
        (
            [
                "grade",
                str(subs),
                "--source",
                str(tmp_path / "nope.ipynb"),
                "--out",
                str(tmp_path / "o"),
            ],
            "--source",
        ),
        (
            [
                "grade",
                str(subs),
                "--source",
                str(MASTER),
                "--out",
                str(blocker / "out"),
            ],
            "--out",
        ),
        (["grade", str(subs), "--out", str(tmp_path / "o")], "--source is required"),
        (
            [
                "grade",
                str(tmp_path / "nope"),
                "--source",
                str(MASTER),
                "--out",
                str(tmp_path / "o"),
            ],
            "not a folder",
        ),
        (["grade", "merge", "--out", str(tmp_path / "o")], "name the shard"),
        (
            [
                "grade",
                str(subs),
                "--source",
                str(MASTER),
                "--out",
                str(tmp_path / "o"),
                "--shard",
                "3/2",
            ],
            "--shard",
        ),
        (
            [
                "grade",
                str(subs),
                "--source",
                str(MASTER),
                "--out",
                str(tmp_path / "o"),
                "--jobs",
                "0",
            ],
            "--jobs",
        ),
        (["check", str(tmp_path / "nope.ipynb")], "no such file"),
    ]
    for argv, message in cases:
        assert course_main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert (
            err.startswith("course: error:") and message in err and "\n" not in err
        ), (argv, err)


def test_invalid_record_scores_zero_for_every_exercise():
    m = grader_load.load_master(MASTER)
    rec = grader_report.invalid_record(m, "x", "why")
    assert rec["total"] == 0 and set(rec["exercises"]) == set(m.exercises)
    assert {e["status"] for e in rec["exercises"].values()} == {"invalid"}
    copy.deepcopy(rec)


def _synthetic(first_cell: dict) -> dict:
    m = grader_load.load_master(MASTER)
    matched = _match("full")
    n = sum(c.role in ("context", "solution", "test") for c in matched.cells)
    run = {
        "cells": [first_cell] + [{"status": "ok", "outputs": []}] * (n - 1),
        "events": [],
    }
    return grader_report.score(m, matched, run, student="x")


def test_score_counts_only_ok_replies_and_flags_a_broken_setup():
    assert _synthetic({"status": "ok"})["total"] == 8
    rec = _synthetic(
        {
            "status": "error",
            "ename": "ModuleNotFoundError",
            "evalue": "No module named 'torch'",
        }
    )
    assert (
        rec["status"] == "error"
        and "setup cell of the master raised ModuleNotFoundError" in rec["reason"]
    )
    assert not grader_store.already_graded(Path("/nonexistent"), "x", None, "")


def test_reserved_student_names(tmp_path):
    shutil.copy(SUBS / "full.ipynb", tmp_path / "grades.csv.ipynb")
    subs, _ = grader_load.discover(tmp_path, "tiny_master.ipynb")
    assert [s.student for s in subs] == ["student-grades.csv"]
