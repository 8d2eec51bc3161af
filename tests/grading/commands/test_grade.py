"""The ``course grade`` and ``course check`` commands: usage errors, merge, check's table."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from course_utils.cli import main as course_main
from course_utils.grading.batch import grader
from tests.grading.helpers import (
    MASTER,
    ROOT,
    STUDENT,
    SUBS,
    class_folder,
    graded,
    quiet,
    stale_master,
)

LIMITS = grader.Limits(timeout=5, total_timeout=60, memory_mb=1000)
MISSING = object()  # stands for a path that does not exist
BLOCKED = object()  # stands for a path below a file


def _argv(tmp_path, words: list) -> list[str]:
    subs, blocker = tmp_path / "subs", tmp_path / "file"
    subs.mkdir(exist_ok=True)
    blocker.write_text("x")
    names = {"SUBS": subs, "MASTER": MASTER, "OUT": tmp_path / "o"}
    names |= {"NOPE": tmp_path / "nope", "BLOCKED": blocker / "out"}
    return [str(names.get(w, w)) for w in words]


@pytest.mark.parametrize(
    "words, message",
    [
        (["grade", "SUBS", "--source", "NOPE", "--out", "OUT"], "--source"),
        (["grade", "SUBS", "--source", "MASTER", "--out", "BLOCKED"], "--out"),
        (["grade", "SUBS", "--out", "OUT"], "--source is required"),
        (["grade", "SUBS", "--source", "MASTER"], "--out DIR is required"),
        (["grade", "NOPE", "--source", "MASTER", "--out", "OUT"], "not a folder"),
        (["grade", "merge", "--out", "OUT"], "name the shard"),
        (["grade", "merge", "SUBS"], "--out DIR is required"),
        (["grade", "SUBS", "x", "--source", "MASTER", "--out", "OUT"], "unexpected"),
        (
            ["grade", "SUBS", "--source", "MASTER", "--out", "OUT"]
            + ["--shard", "3/2"],
            "--shard",
        ),
        (
            ["grade", "SUBS", "--source", "MASTER", "--out", "OUT", "--jobs", "0"],
            "--jobs",
        ),
        (
            ["grade", "SUBS", "--source", "MASTER", "--out", "OUT", "--timeout", "x"],
            "expected a number",
        ),
        (["check", "NOPE"], "no such file"),
    ],
)
def test_cli_errors_are_one_line_and_exit_2(tmp_path, capsys, words, message):
    argv = _argv(tmp_path, words)
    assert course_main(argv) == 2, argv
    err = capsys.readouterr().err.strip()
    assert err.startswith("course: error:") and message in err, (argv, err)
    assert "\n" not in err, err


@pytest.mark.slow
def test_shards_merge_into_one_report(tmp_path, capsys):
    names = {"ann": "full", "bob": "stub", "cy": "deleted_cell"}
    names |= {"dee": "syntax_error", "eve": "empty"}
    subs = class_folder(tmp_path / "subs", names)
    shards = [tmp_path / f"shard{k}" for k in range(2)]
    for k, out in enumerate(shards):
        grader.grade(
            subs,
            MASTER,
            out,
            limits=LIMITS,
            jobs=2,
            shard=f"{k}/2",
            progress=False,
            echo=quiet,
        )
    assert sorted(graded(shards[0])) == ["ann", "cy", "eve"]
    assert sorted(graded(shards[1])) == ["bob", "dee"]
    final = tmp_path / "final"
    assert course_main(["grade", "merge", *map(str, shards), "--out", str(final)]) == 0
    assert "merged 5 student(s) from 2 folder(s)" in capsys.readouterr().out
    rows = {r["student"]: r for r in csv.DictReader((final / "grades.csv").open())}
    assert {s: float(r["total"]) for s, r in rows.items()} == {
        "ann": 8,
        "bob": 0,
        "cy": 6,
        "dee": 5,
        "eve": 0,
    }
    assert rows["eve"]["status"] == "invalid"
    for student in names:
        assert (final / student / "feedback.ipynb").is_file()
        assert (final / student / "results.json").is_file()


def test_check_runs_visible_tests_only(tmp_path, capsys):
    argv = ["check", str(STUDENT), "--source", str(STUDENT), "--timeout", "5"]
    assert course_main(argv) == 1
    text = capsys.readouterr().out
    assert "0/1" in text and "not implemented" in text
    assert "visible tests: 0 / 3 points" in text
    solved = tmp_path / "mine.ipynb"
    shutil.copy(SUBS / "full.ipynb", solved)
    argv = ["check", str(solved), "--source", str(STUDENT), "--timeout", "5"]
    assert course_main(argv) == 0
    text = capsys.readouterr().out
    assert "visible tests: 3 / 3 points" in text
    assert "hidden" not in text.split("visible tests")[0]


@pytest.mark.slow
def test_check_finds_the_course_copy_of_the_tests(tmp_path, capsys):
    name = "00_welcome_exercises.ipynb"
    mine = tmp_path / name  # a student's copy, outside the course folder
    shutil.copy(ROOT / "exercises" / name, mine)
    assert course_main(["check", str(mine)]) == 1
    out = capsys.readouterr().out
    assert out.count("not implemented") >= 3 and "visible tests: 0 / 6 points" in out


def test_a_grader_error_is_printed_counted_and_not_handed_back(
    tmp_path, capsys, monkeypatch
):
    """A worker that dies without a result (the grader's failure, not the student's):
    an ``error:`` line on the console, exit status 1, and no feedback in the student's
    folder, which is handed back as it is."""
    import sys

    from course_utils.grading.batch import pool

    monkeypatch.setattr(
        pool.Workers, "command", lambda self, job: [sys.executable, "-c", "pass"]
    )
    subs = class_folder(tmp_path / "subs", {"ann": "full"})
    out = tmp_path / "out"
    argv = ["grade", str(subs), "--source", str(MASTER), "--out", str(out)]
    assert course_main([*argv, "--unsafe-no-sandbox", "--jobs", "1"]) == 1
    printed = capsys.readouterr().out
    line = next(x for x in printed.splitlines() if x.startswith("error: ann:"))
    assert "the grader's worker failed" in line, printed
    assert not (out / "ann" / "feedback.ipynb").exists()
    assert not (out / "ann" / "results.json").exists()
    assert graded(out)["ann"]["status"] == "error"


def test_a_run_prints_a_line_per_student_with_the_time_left_and_the_totals(
    tmp_path, capsys
):
    subs = class_folder(tmp_path / "subs", {"ann": "full", "bob": "stub"})
    out = tmp_path / "out"
    argv = ["grade", str(subs), "--source", str(MASTER), "--out", str(out)]
    assert course_main([*argv, "--unsafe-no-sandbox", "--jobs", "1"]) == 0
    printed = capsys.readouterr().out.splitlines()
    first = next(x for x in printed if x.startswith("[1/2] "))
    last = next(x for x in printed if x.startswith("[2/2] "))
    assert "left" in first and "8/8" in " ".join([first, last]), printed
    assert printed.index(first) < printed.index(last)
    totals = next(x for x in printed if x.startswith("class: "))
    assert "2 student(s)" in totals and "mean 4/8" in totals and "ok 2" in totals


def test_a_canvas_download_is_graded_under_the_students_logins(tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(SUBS / "full.ipynb", subs / "smithann_12345_67890_tiny_master.ipynb")
    out = tmp_path / "out"
    argv = ["grade", str(subs), "--source", str(MASTER), "--out", str(out)]
    assert course_main([*argv, "--lms", "canvas", "--unsafe-no-sandbox"]) == 0
    assert graded(out)["smithann"]["total"] == 8


def test_a_rerun_with_another_lms_is_refused(tmp_path, capsys):
    """A rerun that forgets ``--lms canvas`` would grade every Canvas file again as a
    student of its whole name, beside the class: the folder remembers its ``--lms``."""
    subs = class_folder(tmp_path / "subs", {"smithann_12345_67890_tiny_master": "full"})
    out = tmp_path / "out"
    argv = ["grade", str(subs), "--source", str(MASTER), "--out", str(out)]
    argv += ["--unsafe-no-sandbox", "--jobs", "1"]
    assert course_main([*argv, "--lms", "canvas"]) == 0
    before = _tree(out)
    for again, message in [
        ([], "graded with --lms canvas; give --lms canvas as before"),
        (["--lms", "moodle"], "give --lms canvas as before"),
        (["--only", "square"], "give --lms canvas as before"),
    ]:
        capsys.readouterr()
        assert course_main([*argv, *again]) == 2, again
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"course: error: --out {out}: ") and "\n" not in err
        assert message in err and "--start-over" in err, err
        assert _tree(out) == before
    assert course_main([*argv, "--start-over"]) == 0  # now graded without --lms
    capsys.readouterr()
    assert course_main([*argv, "--lms", "canvas"]) == 2
    err = capsys.readouterr().err
    assert "graded without --lms; give no --lms as before" in err, err


def _tree(folder) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("regrade", [[], ["--only", "port-mlp"]])
def test_a_master_edited_but_not_synced_is_refused(tmp_path, capsys, regrade):
    """A hidden test fixed in solutions/NN.py without ``course sync``: grading the
    stale .ipynb would keep every student's grade from the old test."""
    nb, py = stale_master(tmp_path)
    subs = class_folder(tmp_path / "subs", {"ann": "full"})
    out = tmp_path / "out"
    (out / "ann").mkdir(parents=True)
    (out / "ann" / "grade.json").write_text("{}")  # stands for what was graded
    before = _tree(out)
    argv = ["grade", str(subs), "--source", str(nb), "--out", str(out)]
    assert course_main([*argv, "--unsafe-no-sandbox", *regrade]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("course: error: --source") and "\n" not in err, err
    assert str(nb) in err and str(py) in err and "`course sync`" in err, err
    assert _tree(out) == before


@pytest.mark.slow
def test_a_second_submission_keeps_the_last_grade_and_says_so(tmp_path, capsys):
    """An old and a new download of one student in one folder: the error stays loud
    (its line, exit 1), but the grade and feedback graded before are not replaced by
    an invalid 0, and the summary says what their folder holds."""
    subs = class_folder(tmp_path / "subs", {"ann": "full", "bob": "stub"})
    out = tmp_path / "out"
    argv = ["grade", str(subs), "--source", str(MASTER), "--out", str(out)]
    argv += ["--unsafe-no-sandbox", "--jobs", "1"]
    assert course_main(argv) == 0
    before = _tree(out / "ann")
    (subs / "ann").mkdir()  # her new download, beside the old file
    shutil.copy(SUBS / "stub.ipynb", subs / "ann" / "tiny_master.ipynb")
    for regrade in ([], ["--only", "square"], ["--student", "ann"]):
        assert course_main([*argv, *regrade]) == 1, regrade
        printed = capsys.readouterr().out.splitlines()
        errors = [x for x in printed if x.startswith("error:")]
        assert len(errors) == 1, printed
        assert "2 submissions have the student id 'ann' (ann/, ann.ipynb)" in errors[0]
        assert "their last grade (8/8, graded " in errors[0], errors[0]
        assert _tree(out / "ann") == before, regrade
        if not regrade:
            summary = printed[-1]
            assert summary.startswith("1 error(s): ann handed in several"), summary
            assert "no feedback" not in summary
    assert graded(out)["ann"]["total"] == 8
    regrades = out / "regrades.csv"
    assert not regrades.exists() or "ann" not in regrades.read_text()
    (subs / "ann.ipynb").unlink()  # one kept: graded again, the change recorded
    assert course_main(argv) == 0
    assert graded(out)["ann"]["total"] == 0
    assert "changed: ann: 8 -> 0 (resubmitted)" in capsys.readouterr().out


def test_canvas_names_without_lms_get_one_warning_line(tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(SUBS / "not_json.ipynb", subs / "smithann_12345_67890_tiny.ipynb")
    argv = ["grade", str(subs), "--source", str(MASTER), "--out", str(tmp_path / "o")]
    assert course_main([*argv, "--unsafe-no-sandbox"]) == 0
    printed = capsys.readouterr().out.splitlines()
    warned = [x for x in printed if "--lms canvas" in x]
    assert warned == [
        "warning: 1 of 1 submission(s) are named as Canvas's download names them "
        "(smithann_12345_67890_tiny.ipynb): without --lms canvas each is graded as "
        "a student of that whole name; give --lms canvas if they are Canvas's"
    ], printed
    again = [*argv, "--unsafe-no-sandbox", "--lms", "canvas", "--start-over"]
    assert course_main(again) == 0
    assert "warning:" not in capsys.readouterr().out


@pytest.mark.slow
def test_a_student_removed_from_the_report_folder_leaves_the_tables(tmp_path, capsys):
    """TEACHING's recipe: delete the student's folder and their _instructor folder,
    then run the grading command again: nobody is graded, the tables lose them."""
    subs = class_folder(tmp_path / "subs", {"ann": "full"})
    shutil.copy(SUBS / "stub.ipynb", subs / "smithann_12345_67890_tiny.ipynb")
    out = tmp_path / "out"
    argv = ["grade", str(subs), "--source", str(MASTER), "--out", str(out)]
    argv += ["--unsafe-no-sandbox", "--jobs", "1"]
    assert course_main(argv) == 0
    wrong = "smithann_12345_67890_tiny"  # graded without --lms: its whole name
    assert {r["student"] for r in csv.DictReader((out / "grades.csv").open())} == {
        "ann",
        wrong,
    }
    shutil.rmtree(out / wrong)
    shutil.rmtree(out / "_instructor" / wrong)
    (subs / f"{wrong}.ipynb").unlink()
    capsys.readouterr()
    assert course_main(argv) == 0
    assert "graded 0, skipped 1 already graded" in capsys.readouterr().out
    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert [r["student"] for r in rows] == ["ann"]
    students = json.loads((out / "grades.json").read_text())["students"]
    assert [s["student"] for s in students] == ["ann"]
