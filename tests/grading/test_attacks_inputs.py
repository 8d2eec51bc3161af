"""A hostile class, graded in one batch: links, special files, odd names, crafted JSON, forged records.

Each attack is a submission (or, after the first run, a report file someone
rewrote); an honest full solution and an untouched stub in the same batch
still score full marks and 0. Nothing outside the report folder changes.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from course_utils.grading.batch import grader
from course_utils.grading.commands import grade
from course_utils.grading.inputs.master import load_master
from course_utils.grading.records import store
from tests.grading.helpers import MASTER, SUBS, graded

pytestmark = pytest.mark.timeout(400)  # a FIFO that blocks must fail, not hang

LIMITS = grader.Limits(timeout=20, total_timeout=60, memory_mb=1000)
LATIN = os.fsdecode(b"caf\xe9")  # a student's file name that is not UTF-8
LONG = "x" * 244  # with .ipynb, 250 characters
FORMULA = "=HYPERLINK(1)"


def _snapshot(folder: Path) -> dict:
    """Every name under ``folder`` with its kind and (for files) content hash, links not followed."""
    found = {}
    for root, dirs, files in os.walk(os.fsencode(folder)):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            digest = None
            if os.path.isfile(path) and not os.path.islink(path):
                digest = hashlib.sha256(Path(os.fsdecode(path)).read_bytes()).digest()
            found[path] = (st.st_mode, st.st_size, digest)
    return found


def _hostile_class(tmp: Path) -> Path:
    subs = tmp / "subs"
    subs.mkdir()
    full, stub = SUBS / "full.ipynb", SUBS / "stub.ipynb"
    shutil.copy(full, subs / "full.ipynb")
    shutil.copy(stub, subs / "stub.ipynb")
    shutil.copy(full, os.path.join(os.fsencode(subs), b"caf\xe9.ipynb"))
    shutil.copy(stub, subs / f"{LONG}.ipynb")
    shutil.copy(stub, subs / f"{FORMULA}.ipynb")
    (subs / "master_link.ipynb").symlink_to(MASTER)  # would show the solutions
    (subs / "copycat.ipynb").symlink_to(subs / "full.ipynb")
    (subs / "zero.ipynb").symlink_to("/dev/zero")  # would fill memory
    os.mkfifo(subs / "fifo.ipynb")  # would block the batch on open
    (subs / "folder_link").mkdir()
    (subs / "folder_link" / "tiny_master.ipynb").symlink_to(MASTER)
    (subs / "linked_folder").symlink_to(MASTER.parent, target_is_directory=True)
    with open(subs / "huge.ipynb", "wb") as f:  # sparse, over the size limit
        f.truncate(60 * 2**20)
    nested = "[" * 5000 + "]" * 5000  # the JSON parser's recursion, or later code's
    text = full.read_text().replace(
        '"metadata": {', f'"metadata": {{"x": {nested}, ', 1
    )
    (subs / "deep.ipynb").write_text(text)
    crafted = json.loads(full.read_text())  # a print of a lone surrogate
    crafted["cells"][2]["source"] = "# EXERCISE: square\nprint('\ud800')"
    (subs / "surrogate.ipynb").write_text(json.dumps(crafted))
    return subs


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    subs, out = _hostile_class(tmp), tmp / "out"
    outside = tmp / "victim"
    outside.mkdir()
    (outside / "precious").write_text("keep")
    before = _snapshot(tmp)
    said: list[str] = []
    first = grader.grade(
        subs, MASTER, out, limits=LIMITS, jobs=2, progress=False, echo=said.append
    )
    first.notes.extend(said)
    records = {r["student"]: r for r in first.records}
    return tmp, subs, out, first, records, before


EXPECTED = {  # student: (score, status, words in the reason)
    "full": (8, "ok", "3 of 3 exercises passed"),
    "stub": (0, "ok", "not implemented"),
    "caf\\xe9": (8, "ok", "3 of 3 exercises passed"),
    LONG: (0, "ok", "not implemented"),
    FORMULA: (0, "ok", "not implemented"),
    "master_link": (0, "invalid", "master_link.ipynb is a symbolic link"),
    "copycat": (0, "invalid", "copycat.ipynb is a symbolic link"),
    "zero": (0, "invalid", "zero.ipynb is a symbolic link"),
    "fifo": (0, "invalid", "fifo.ipynb is a FIFO"),
    "folder_link": (0, "invalid", "tiny_master.ipynb is a symbolic link"),
    "linked_folder": (0, "invalid", "linked_folder is a symbolic link"),
    "huge": (0, "invalid", "over the 50 MiB limit"),
    "deep": (0, "invalid", "nested more than 100 levels deep"),
    "surrogate": (0, "invalid", "not valid Unicode"),
}


def test_every_attack_gets_a_status_and_a_reason(hostile):
    _tmp, _subs, out, first, records, _ = hostile
    assert sorted(records) == sorted(EXPECTED)
    for student, (score, status, words) in EXPECTED.items():
        rec = records[student]
        assert (rec["total"], rec["status"]) == (score, status), (
            student,
            rec["reason"],
        )
        assert words in rec["reason"], (student, rec["reason"])
    feedback = (out / store.folder_name("master_link") / "feedback.ipynb").read_text()
    assert "### BEGIN SOLUTION" not in feedback and "return x * x" not in feedback


def test_names_are_shown_escaped_and_cells_are_not_formulas(hostile):
    _tmp, _subs, out, first, _records, _ = hostile
    console = "\n".join([*first.notes, store.table(first.records)])
    console.encode("utf-8")  # strict: a UTF-8 console shows it (it used to crash)
    text = (out / "grades.csv").read_bytes().decode("utf-8")  # strict: valid UTF-8
    rows = {r["student"]: r for r in csv.DictReader(text.splitlines())}
    assert {"caf\\xe9", LONG, "'" + FORMULA} <= set(rows)
    for folder in out.iterdir():
        assert len(folder.name) <= 80 and folder.name.isprintable()
    for student in EXPECTED:
        assert (out / store.folder_name(student) / store.RECORD).is_file()
    assert not list(out.rglob(".*.tmp")) and not (out / store.WORK).exists()


def test_forged_and_malformed_records_are_regraded_never_fatal(hostile):
    tmp, subs, out, _first, records, _ = hostile
    stub = out / "stub" / store.RECORD
    stub.write_text(json.dumps(json.loads(stub.read_text()) | {"total": 8.0}))
    (out / "eve").mkdir()  # an invented student with full marks
    (out / "eve" / store.RECORD).write_text(
        json.dumps(records["full"] | {"student": "eve"})
    )
    (out / "zzz").mkdir()  # malformed: crashed every table and every later student
    (out / "zzz" / store.RECORD).write_text('{"student": "zzz", "total": "lots"}')
    notes: list[str] = []
    again = grader.grade(
        subs, MASTER, out, limits=LIMITS, jobs=2, progress=False, echo=notes.append
    )
    ran = {s for s in again.graded if EXPECTED[s][1] != "invalid"}  # those are cheap
    assert ran == {"stub"}  # the forged one, graded again
    assert set(again.skipped) == {
        "full",
        "caf\\xe9",
        LONG,
        FORMULA,
        "deep",
        "surrogate",
    }
    final = {r["student"]: r["total"] for r in again.records}
    assert final["stub"] == 0 and "eve" not in final and "zzz" not in final
    said = " ".join(notes)
    assert "eve/grade.json ignored" in said and "zzz/grade.json ignored" in said
    assert "stub/grade.json ignored: not sealed" in said


def test_other_options_grade_again(hostile):
    _tmp, subs, out, *_ = hostile
    master = load_master(MASTER)
    subs_found = [s for s in grader.discover(subs, MASTER.name)[0] if s.path]
    other = grader.Limits(timeout=30, total_timeout=60, memory_mb=1000)
    # another --timeout, --full, or --unsafe-no-sandbox: everyone is graded again
    for limits, smoke, sandboxed in (
        (LIMITS, False, True),
        (other, True, True),
        (LIMITS, True, False),
    ):
        batch = grader.Batch()
        options = grader._options(limits, smoke, sandboxed)
        todo = grader._to_grade(subs_found, out, master, False, batch, options)
        assert batch.skipped == [] and len(todo) == len(subs_found)
    same = grader.Batch()
    grader._to_grade(
        subs_found, out, master, False, same, grader._options(LIMITS, True, True)
    )
    assert "full" in same.skipped


def test_merge_keeps_odd_names_and_never_leaves_out(hostile, capsys):
    tmp, _subs, out, *_ = hostile
    (out / "evil").mkdir()
    evil = dict(graded(out)["full"], student="../victim")
    (out / "evil" / store.RECORD).write_text(json.dumps(evil))
    args = argparse.Namespace(
        submissions="merge", more=[str(out)], out=str(tmp / "all")
    )
    assert grade.cmd_grade(args) == 0
    shown = capsys.readouterr().out
    shown.encode("utf-8")  # strict
    merged = store.records(tmp / "all")
    assert {r["student"] for r in merged} >= {"caf\\xe9", LONG, FORMULA, "full"}
    assert (tmp / "victim" / "precious").read_text() == "keep"
    assert "evil/grade.json ignored" in shown and "caf\\xe9" in shown


def test_nothing_outside_the_report_folders_changed(hostile):
    tmp, _subs, _out, _first, _records, before = hostile
    after = _snapshot(tmp)
    for path in set(before) | set(after):
        rel = os.fsdecode(path)[len(str(tmp)) + 1 :]
        if rel.split("/")[0] in ("out", "all"):
            continue
        assert before.get(path) == after.get(path), rel
