"""Regrading the generated class: ``--only`` after a test fix, ``--student`` for one."""

from __future__ import annotations

import argparse
import csv
import json

import pytest

from course_utils.cli import main as course_main
from course_utils.grading.batch import regrade
from course_utils.grading.policy import scoring
from course_utils.grading.records import store
from tests.grading.class_expect import copy_of, of_kind
from tests.grading.generated_class import OPTIONS, ROSTER
from tests.grading.helpers import MASTER


def _fixed_master(tmp_path):
    """The master with square's hidden test no longer asking for square(1.5)."""
    nb = json.loads(MASTER.read_text())
    for cell in nb["cells"]:
        text = "".join(cell["source"])
        if "(1.5, 2.25)" in text:
            cell["source"] = text.replace(", (1.5, 2.25)", "")
    path = tmp_path / "master" / MASTER.name
    path.parent.mkdir()
    path.write_text(json.dumps(nb))
    return path


def _grade(subs, master, out, *extra):
    argv = ["grade", str(subs), "--source", str(master), "--out", str(out), *OPTIONS]
    return course_main([*argv, "--jobs", "2", *extra])


@pytest.mark.slow
def test_only_one_exercise_is_regraded_and_the_changes_recorded(
    graded_class, tmp_path, capsys
):
    out, master = copy_of(graded_class, tmp_path), _fixed_master(tmp_path)
    before = {r["student"]: r for r in store.records(out)}
    assert _grade(graded_class.subs, master, out, "--only", "square") == 0
    printed = capsys.readouterr().out
    after = {r["student"]: r for r in store.records(out)}
    (bob,) = of_kind("wrong-square")  # int(x * x) passes once 1.5 is not asked
    assert f"{bob}: square: 1 -> 3" in printed
    assert after[bob]["total"] == before[bob]["total"] + 2
    for student in ROSTER:
        old, new = before[student], after[student]
        for ex in ("greet", "total"):  # untouched, tests and all
            assert new["exercises"][ex] == old["exercises"][ex]
            assert [t for t in new["tests"] if t["exercise"] == ex] == [
                t for t in old["tests"] if t["exercise"] == ex
            ]
        if student != bob:
            assert new["total"] == old["total"], student
            assert new.get("regrades") == old.get("regrades"), student  # no change
    assert after[bob]["regrades"][-1]["what"] == "square"
    rows = list(csv.DictReader((out / regrade.LOG).open()))  # the changes only
    assert [(r["student"], r["old"], r["new"]) for r in rows] == [(bob, "1", "3")]
    assert after[bob]["reason"] == "3 of 3 exercises passed"
    feedback = (store.student_dir(out, bob) / "feedback.ipynb").read_text()
    assert "def greet" in feedback and "def total" in feedback  # all of bob's code
    # the records now say which tests each score comes from: a plain run skips everyone
    assert _grade(graded_class.subs, master, out) == 0
    assert f"skipped {len(ROSTER)} already graded" in capsys.readouterr().out


def test_one_student_is_regraded_and_nobody_else(graded_class, tmp_path, capsys):
    out = copy_of(graded_class, tmp_path)
    before = {r["student"]: r for r in store.records(out)}
    (ada, *_) = of_kind("full")
    assert _grade(graded_class.subs, MASTER, out, "--student", ada) == 0
    printed = capsys.readouterr().out
    assert f"{ada}: all:" not in printed  # unchanged
    assert "regraded 1 student(s), 0 changed; every change is in " in printed
    after = {r["student"]: r for r in store.records(out)}
    assert after[ada]["graded_at"] >= before[ada]["graded_at"]
    assert after[ada]["run_id"] != before[ada]["run_id"]
    assert all(after[s] == before[s] for s in ROSTER if s != ada)
    assert "regrades" not in after[ada]  # the same score: no change to list
    assert list(csv.DictReader((out / regrade.LOG).open())) == []
    assert _grade(graded_class.subs, MASTER, out, "--student", "nobody") == 2


def test_the_ok_reason_counts_exercises_by_status():
    exercises = {"a": {"status": "passed"}, "b": {"status": "failed"}}
    assert scoring.ok_status(exercises) == ("ok", "1 of 2 exercises passed; failed: b")


def _record(status, reason, **exercises):
    tests = [{"exercise": ex, "points": pts} for ex, (_, pts) in exercises.items()]
    return {
        "status": status, "reason": reason, "tests": tests, "notes": [], "flags": [],
        "total": sum(t["points"] for t in tests),
        "exercises": {ex: {"status": st, "points": pts} for ex, (st, pts) in exercises.items()},
    }  # fmt: skip


def test_only_a_later_exercise_leaves_an_earlier_exercises_timeout_as_the_status():
    old = _record("timeout", "sync-timer: the cell ran past 30 s",
                  **{"sync-timer": ("timeout", 0), "break-even": ("crashed", 0)})  # fmt: skip
    crashed = _record(
        "crashed", "break-even: the kernel died", **{"break-even": ("crashed", 0)}
    )
    merged = regrade.merge_exercise(old, crashed, "break-even")
    assert (merged["status"], merged["reason"]) == ("timeout", old["reason"])
    # the regraded exercise first: its new problem is the first one
    memory = _record(
        "memory", "sync-timer: over the memory limit", **{"sync-timer": ("memory", 0)}
    )
    first = regrade.merge_exercise(old, memory, "sync-timer")
    assert (first["status"], first["reason"]) == ("memory", memory["reason"])


@pytest.mark.slow
def test_a_plain_rerun_records_every_score_change(tmp_path, capsys):
    """A resubmission graded by a plain run changes the score: regrades.csv, the record
    and the console say so, and a later run keeps the history."""
    from tests.grading.helpers import class_folder

    subs = class_folder(tmp_path / "subs", {"ann": "stub", "bob": "full"})
    out = tmp_path / "out"
    argv = ["grade", str(subs), "--source", str(MASTER), "--out", str(out)]
    argv += ["--unsafe-no-sandbox", "--jobs", "1"]
    assert course_main(argv) == 0
    capsys.readouterr()
    full = (subs / "bob.ipynb").read_bytes()
    (subs / "ann.ipynb").write_bytes(full)  # ann hands in again, solved
    assert course_main(argv) == 0
    assert "changed: ann: 0 -> 8 (resubmitted)" in capsys.readouterr().out
    rows = list(csv.DictReader((out / regrade.LOG).open()))
    assert [(r["student"], r["what"], r["old"], r["new"]) for r in rows] == [
        ("ann", "resubmitted", "0", "8")
    ]
    assert course_main([*argv, "--force"]) == 0  # graded again, same score
    (ann,) = [r for r in store.records(out) if r["student"] == "ann"]
    assert [c["what"] for c in ann["regrades"]] == ["resubmitted"]  # kept


def test_a_regrade_prints_only_the_scores_that_changed(tmp_path, capsys, monkeypatch):
    """``--only`` regrades the whole class: the lines under it are the changes, not
    every student whose score stayed."""
    rows = [["ann", "square", "5", "5"], ["bob", "square", "1", "3"]]
    monkeypatch.setattr(regrade, "regrade", lambda args, errors, adjust: rows)
    args = argparse.Namespace(out=str(tmp_path))
    assert regrade.run(args) == 0
    assert capsys.readouterr().out.splitlines() == [
        "bob: square: 1 -> 3",
        f"regraded 2 student(s), 1 changed; every change is in {tmp_path / regrade.LOG}",
    ]


def test_a_regrade_the_grader_failed_on_is_printed_and_counted(
    tmp_path, capsys, monkeypatch
):
    import sys

    from course_utils.grading.batch import pool
    from tests.grading.helpers import class_folder

    subs = class_folder(tmp_path / "subs", {"ann": "full"})
    out = tmp_path / "out"
    argv = ["grade", str(subs), "--source", str(MASTER), "--out", str(out)]
    argv += ["--unsafe-no-sandbox", "--jobs", "1"]
    assert course_main(argv) == 0
    monkeypatch.setattr(
        pool.Workers, "command", lambda self, job: [sys.executable, "-c", "pass"]
    )
    capsys.readouterr()
    assert course_main([*argv, "--student", "ann"]) == 1
    printed = capsys.readouterr().out
    assert "error: ann: the grader's worker failed" in printed, printed


@pytest.mark.slow
def test_a_changed_master_is_named_before_the_class_is_graded_again(tmp_path):
    """Before a plain run regrades the class because the master changed, one line says
    which master graded them, which grades them now, and how many; a file of the
    same name in another checkout is called that, an edited one that."""
    from course_utils.grading.batch import grader
    from tests.grading.helpers import class_folder

    subs = class_folder(tmp_path / "subs", {"ann": "full", "bob": "stub"})
    old = tmp_path / "upstream" / MASTER.name
    old.parent.mkdir()
    old.write_bytes(MASTER.read_bytes())
    new, out = _fixed_master(tmp_path), tmp_path / "out"
    said: list[str] = []
    run = dict(unsafe_no_sandbox=True, jobs=1, echo=said.append)
    grader.grade(subs, old, out, **run)
    assert not [x for x in said if "master changed" in x]
    said.clear()
    grader.grade(subs, new, out, **run)
    line = next(x for x in said if x.startswith("note: the master changed:"))
    assert said.index(line) < min(i for i, x in enumerate(said) if x.startswith("[1/"))
    assert f"2 student(s) graded with {MASTER.name} (sha256 " in line, line
    assert f"; {old.resolve()}) are graded again with {new.resolve()}" in line, line
    assert line.endswith(", another file of the same name (another checkout?)")
    said.clear()
    grader.grade(subs, new, out, **run)  # nothing changed: no line
    assert not [x for x in said if "master changed" in x]
    new.write_text(new.read_text().replace("(-2, 4)", "(-3, 9)"))  # edited in place
    assert "(-3, 9)" in new.read_text()
    grader.grade(subs, new, out, **run)
    line = next(x for x in said if x.startswith("note: the master changed:"))
    assert f"; {new.resolve()}) are graded again with {new.resolve()} " in line, line
    assert line.endswith(", the same file edited since"), line


@pytest.mark.slow
def test_every_run_that_grades_notes_its_master_for_the_changed_master_line(tmp_path):
    """``--only`` and ``--student`` note their master's path as a plain run does, so the
    next run's "master changed" line names it (and another checkout's file as such);
    a run that grades nobody with an identical file elsewhere leaves the path noted."""
    from course_utils.grading.batch import grader
    from tests.grading.helpers import class_folder

    subs = class_folder(tmp_path / "subs", {"ann": "full"})
    upstream = tmp_path / "upstream" / MASTER.name
    upstream.parent.mkdir()
    upstream.write_bytes(MASTER.read_bytes())
    mine, out = _fixed_master(tmp_path), tmp_path / "out"
    mine.write_bytes(MASTER.read_bytes())  # a clone: the same file, for now
    said: list[str] = []
    run = dict(unsafe_no_sandbox=True, jobs=1, echo=said.append)
    grader.grade(subs, mine, out, **run)
    sha = grader.load_master(mine).sha256
    grader.grade(subs, upstream, out, **run)  # the same master: grades nobody
    assert store.masters_used(out) == {sha: str(mine.resolve())}
    (tmp_path / "again").mkdir()
    fixed = _fixed_master(tmp_path / "again")
    mine.write_bytes(fixed.read_bytes())  # a hidden test edited in the clone
    assert _grade(subs, mine, out, "--only", "square", "--unsafe-no-sandbox") == 0
    edited = grader.load_master(mine).sha256
    assert store.masters_used(out)[edited] == str(mine.resolve())
    said.clear()
    grader.grade(subs, upstream, out, **run)
    line = next(x for x in said if x.startswith("note: the master changed:"))
    assert f"; {mine.resolve()}) are graded again with {upstream.resolve()}" in line
    assert line.endswith(", another file of the same name (another checkout?)"), line
    mine.write_bytes(MASTER.read_bytes().replace(b"(-2, 4)", b"(-3, 9)"))
    assert _grade(subs, mine, out, "--student", "ann", "--unsafe-no-sandbox") == 0
    assert store.masters_used(out)[grader.load_master(mine).sha256] == str(
        mine.resolve()
    )


@pytest.mark.slow
def test_a_rerun_with_other_options_says_which_before_grading_again(tmp_path):
    """A rerun that forgets an option (``--timeout``, say) grades the class again: one
    line before the first student says which option changed, from what to what, and how
    many are graded again, so that it can be stopped."""
    from course_utils.grading.batch import grader
    from tests.grading.helpers import class_folder

    subs = class_folder(tmp_path / "subs", {"ann": "stub", "bob": "stub"})
    out = tmp_path / "out"
    said: list[str] = []
    run = dict(unsafe_no_sandbox=True, jobs=1, echo=said.append)
    grader.grade(subs, MASTER, out, limits=grader.Limits(timeout=30), **run)
    grader.grade(subs, MASTER, out, limits=grader.Limits(timeout=30), **run)
    assert not [x for x in said if "options changed" in x]
    said.clear()
    grader.grade(subs, MASTER, out, **run)  # --timeout forgotten: 60
    line = next(x for x in said if "options changed" in x)
    assert said.index(line) < min(i for i, x in enumerate(said) if x.startswith("[1/"))
    assert line.startswith("note: the options changed: 2 student(s) graded"), line
    assert "--timeout 60 now, 30 before" in line and "--memory" not in line, line


def test_a_student_regrade_with_other_options_says_which(tmp_path):
    """``--student`` without the --timeout the class was graded with regrades at the
    default: the same line as a plain run's says so before the student is graded."""
    import types

    from course_utils.grading.batch import grader
    from tests.grading.helpers import class_folder

    subs = class_folder(tmp_path / "subs", {"ann": "stub", "bob": "stub"})
    out = tmp_path / "out"
    grader.grade(subs, MASTER, out, limits=grader.Limits(timeout=30),
                 unsafe_no_sandbox=True, jobs=1, echo=lambda *a: None)  # fmt: skip
    limits = grader.Limits()
    args = types.SimpleNamespace(
        only=None, student="ann", source=str(MASTER), out=str(out), submissions=subs,
        unsafe_no_sandbox=True, full=False, jobs=1, lms=None, variant_secret=None,
        timeout=limits.timeout, total_timeout=limits.total_timeout,
        memory=limits.memory_mb, cpu_time=None,
    )  # fmt: skip
    said: list[str] = []
    regrade.regrade(args, echo=said.append)
    line = next(x for x in said if "options changed" in x)
    assert line.startswith("note: the options changed: 1 student(s) graded"), line
    assert "--timeout 60 now, 30 before" in line, line
