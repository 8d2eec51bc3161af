"""The grader never mixes up or zeroes a student: ids apart from the report's own names,
every dropped submission an error, post-processing failures that cost no point, and
noisy output that costs none either.

The post-processing tests score a scripted run of the solved fixture (no kernel); the
class test grades one small batch through ``course grade``.
"""

from __future__ import annotations

import csv
import errno
import json
import shutil
from pathlib import Path

import pytest

from course_utils.cli import main as course_main
from course_utils.grading.batch import grader
from course_utils.grading.inputs import names
from course_utils.grading.inputs.ipynb import read_cells
from course_utils.grading.inputs.master import load_master
from course_utils.grading.inputs.submissions import match
from course_utils.grading.policy import feedback, scoring
from course_utils.grading.records import keyed, store
from tests.grading.generated_class import OPTIONS
from tests.grading.helpers import MASTER, SUBS, quiet, require_sandbox

HIDDEN = next(
    ln.strip()
    for ln in load_master(MASTER).hidden_sources()[0].splitlines()
    if "SECRET" in ln
)


def _scripted_run(master) -> dict:
    """Every cell of the solved fixture ``ok``; the student's cell prints a hidden line."""
    matched = match(master, read_cells(SUBS / "full.ipynb"))
    n = sum(c.role in ("context", "solution", "test") for c in matched.cells)
    cells = [{"status": "ok", "outputs": []} for _ in range(n)]
    cells[1]["outputs"] = [
        {"output_type": "stream", "name": "stdout", "text": f"I found: {HIDDEN}\n"}
    ]
    return {"cells": cells, "events": [], "canary": "ok", "seconds": 1.0, "done": True}


def _boom(*_args, **_kwargs):
    raise RuntimeError("injected failure")


def _no_space_for(name: str):
    real = store.write_atomic

    def write(path, data):
        if Path(path).name == name:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, data)

    return write


# step -> (what to break, the summary's words, the file replaced by a stand-in or absent)
STEPS = {
    "flags": ("flags_for", "ann: flag analysis failed", None),
    "variant": ("claimed", "ann: reading the notebook's VARIANT line failed", None),
    "redaction": ("Redactor.__call__", "ann: redaction failed", None),
    "feedback": ("feedback_notebook", "ann: the feedback notebook failed", "feedback.ipynb"),
    "export": ("gradescope", "ann: results.json (the Gradescope export) failed", "results.json"),
    "executed": ("executed_notebook", "ann: the executed notebook failed", "executed.ipynb"),
    "writing": ("write feedback.ipynb", "ann: writing feedback.ipynb failed", "feedback.ipynb"),
    "sealing": ("keyed.seal", "ann: sealing and storing the record failed", None),
    "tables": ("write_tables", "the class tables (grades.csv, grades.json) failed", None),
}  # fmt: skip


def _inject(monkeypatch, step: str) -> None:
    if step == "flags":
        monkeypatch.setattr(scoring, "flags_for", _boom)
    elif step == "variant":  # graded with a variant secret: the notebook's line is read
        monkeypatch.setattr(grader, "claimed", _boom)
    elif step == "redaction":
        monkeypatch.setattr(scoring.Redactor, "__call__", _boom)
    elif step in ("feedback", "export", "executed"):
        monkeypatch.setattr(feedback, STEPS[step][0], _boom)
    elif step == "writing":
        monkeypatch.setattr(store, "write_atomic", _no_space_for("feedback.ipynb"))
    elif step == "sealing":
        monkeypatch.setattr(keyed, "seal", _boom)
    else:
        monkeypatch.setattr(store, "write_tables", _boom)


def _handback_text(out: Path, student: str) -> str:
    folder = store.student_dir(out, student)
    return "".join(p.read_text() for p in folder.iterdir() if p.is_file())


@pytest.mark.parametrize("step", sorted(STEPS))
def test_a_failed_post_processing_step_costs_no_point(tmp_path, monkeypatch, step):
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    shutil.copy(SUBS / "full.ipynb", subs / "ann.ipynb")
    master = load_master(MASTER)
    run = _scripted_run(master)
    monkeypatch.setattr(grader.Grader, "run_job", lambda self, student, matched: run)
    secret = None
    if step == "variant":
        secret = tmp_path / "variant-secret"
        secret.write_bytes(b"a test secret of 32 bytes, no more\n")
    _inject(monkeypatch, step)
    batch = grader.grade(
        subs, MASTER, out, jobs=1, progress=False, echo=quiet, unsafe_no_sandbox=True,
        variant_secret=secret,
    )  # fmt: skip
    monkeypatch.undo()  # read the results with the real functions
    what, words, replaced = STEPS[step]
    assert any(words in e and "injected failure" in e or words in e and "ENOSPC" in e
               or words in e and "No space" in e for e in batch.errors), batch.errors  # fmt: skip
    (rec,) = batch.records  # the grade, with its points, in this run's tables
    assert (rec["student"], rec["total"], rec["max_total"]) == ("ann", 8, 8)
    if step == "tables":  # the record is stored and sealed; only the tables failed
        assert store.records(out)[0]["total"] == 8 and not (out / "grades.csv").exists()
        return
    assert grader.GRADER_ERROR in rec["flags"] and rec["errors"], rec
    assert all(e.startswith("the grader failed at") for e in rec["errors"])
    row = next(csv.DictReader((out / "grades.csv").open()))
    assert (row["total"], row["status"]) == ("8", "ok")
    assert set(row["flags"].split()) == {"grader_error", "unsafe-no-sandbox"}
    summary = json.loads((out / "grades.json").read_text())["students"][0]
    assert summary["total"] == 8 and summary["errors"] == rec["errors"]
    # graded again on the next run (the bug may be fixed by then)
    sealed = store.records(out)
    if step == "sealing":
        assert sealed == []  # nothing unsealed is believed; the instructor has a copy
        unsealed = out / store.INSTRUCTOR / "ann" / store.UNSEALED
        assert json.loads(unsealed.read_text())["total"] == 8
    else:
        assert sealed[0]["total"] == 8 and sealed[0]["errors"] == rec["errors"]
        assert not store.already_graded(
            out, "ann", sealed[0]["submission_sha256"], master.sha256,
            sealed[0]["options"], sealed[0]["exercise_keys"],
        )  # fmt: skip
    # nothing produced is lost: every file but the failed one, which has a stand-in
    folder, private = out / "ann", out / store.INSTRUCTOR / "ann"
    for name in ("results.json", "feedback.ipynb"):
        assert (folder / name).is_file() or (name == replaced and step == "writing")
    assert (private / "executed.ipynb").is_file() == (step != "executed")
    if replaced == "results.json":
        gs = json.loads((folder / "results.json").read_text())
        assert gs["score"] == 8
        assert [t["score"] for t in gs["tests"]] == [1, 2, 1, 1, 1, 2]
    if replaced == "feedback.ipynb" and step == "feedback":
        assert "**Score:** 8 / 8" in (folder / "feedback.ipynb").read_text()
    # the hidden line the student printed never reaches the handback...
    text = _handback_text(out, "ann")
    assert HIDDEN not in text and json.dumps(HIDDEN)[1:-1] not in text
    assert "SECRET_HIDDEN_ORACLE" not in text
    if step == "redaction":  # ...only the instructor's copy of the feedback has it
        assert scoring.WITHHELD in (folder / "feedback.ipynb").read_text()
        assert HIDDEN in (private / "feedback-unredacted.ipynb").read_text()
        assert "injected failure" in (private / "grader-errors.txt").read_text()
        assert "feedback-unredacted.ipynb" in sealed[0]["files"]


def test_code_beyond_the_flag_analysis_and_an_unreadable_variant_line_cost_no_point(
    tmp_path, monkeypatch, python_recursion_limit
):
    """Not injected: the solved fixture with a line nested 501 deep (flags_for raises
    RecursionError) and ``VARIANT = {[1]: 2}`` (literal_eval raises TypeError), graded
    with a variant secret: full points, the variant of the roster id, one grader error."""
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    nb = json.loads((SUBS / "full.ipynb").read_text())
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if source.startswith("# EXERCISE: square"):
            cell["source"] = source + "\nx = " + "-" * 501 + "1\n"
    nb["cells"].insert(0, {"cell_type": "code", "execution_count": None,
                           "metadata": {}, "outputs": [],
                           "source": "VARIANT = {[1]: 2}"})  # fmt: skip
    (subs / "ann.ipynb").write_text(json.dumps(nb))
    secret = tmp_path / "variant-secret"
    secret.write_bytes(b"a test secret of 32 bytes, no more\n")
    master = load_master(MASTER)
    monkeypatch.setattr(
        grader.Grader, "run_job", lambda self, student, matched: _scripted_run(master)
    )
    batch = grader.grade(
        subs, MASTER, out, jobs=1, progress=False, echo=quiet, unsafe_no_sandbox=True,
        variant_secret=secret,
    )  # fmt: skip
    (rec,) = batch.records
    assert (rec["total"], rec["max_total"], rec["status"]) == (8, 8, "ok")
    assert rec["errors"] == [
        "the grader failed at flag analysis (RecursionError); graded again on the next run"
    ]
    # no "other variant": the unreadable line is no claim
    assert rec["flags"] == [grader.GRADER_ERROR, "unsafe-no-sandbox"]
    assert rec["variant"]["student"] == "ann"
    assert not any("VARIANT" in note for note in rec["notes"]), rec["notes"]
    (error,) = batch.errors
    assert error.startswith("ann: flag analysis failed: RecursionError"), error
    assert store.records(out)[0]["total"] == 8


# The class: ids equal to the report's own names and to their rewritten forms (new and
# old), each with another answer (a mix-up shows in the points); two entries of one id;
# three correct solutions beside noisy output.
NOISE = {
    "thread": (  # prints 12 kB lines for ever, from a thread: today 0 of 8 (memory)
        "import threading\n\ndef _noise():\n    while True:\n"
        "        print('noise ' * 2000)\n\n"
        "threading.Thread(target=_noise, daemon=True).start()\n"
    ),
    "image": (  # a 37 MB image output
        "from IPython.display import display\n"
        "display({'image/png': 'iVBORw0KGgo' * 3_400_000}, raw=True)\n"
    ),
    "sigint": (  # SIGINT to its own process group, every millisecond, from a thread
        "import os, signal, threading, time\n\ndef _interrupt():\n    while True:\n"
        "        time.sleep(0.001)\n        os.killpg(0, signal.SIGINT)\n\n"
        "threading.Thread(target=_interrupt, daemon=True).start()\n"
    ),
    "closed": (  # closes its own stdout and stderr: the visible tests printed into
        # them and failed (5 of 8)
        "import sys\nsys.stdout.close()\nsys.stderr.close()\n"
    ),
}
# All of it at once, the image at 50 MB: the grader's note of an ignored interrupt went
# to the closed stderr, its error broke cells at random (0 of 8, 'review')
NOISE["all"] = NOISE["closed"] + NOISE["sigint"] + NOISE["thread"]
NOISE["all"] += NOISE["image"].replace("3_400_000", "4_600_000")


def _noisy(kind: str, dest: Path) -> None:
    nb = json.loads((SUBS / "full.ipynb").read_text())
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if source.startswith("# EXERCISE: square"):
            cell["source"] = source + "\n\n" + NOISE[kind]
    dest.write_text(json.dumps(nb))


@pytest.mark.slow
def test_a_class_whose_ids_imitate_the_report_and_whose_output_is_noisy(
    tmp_path, capsys
):
    require_sandbox()
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    rewritten = names.folder_name("grades.csv")  # grades.csv+<hash>
    ids = {  # student -> (fixture, points)
        "grades.csv": ("full", 8),
        "_instructor": ("deleted_cell", 6),
        rewritten: ("syntax_error", 5),
        "student-grades.csv": ("stub", 0),  # the rewritten form of the grader before
        rewritten.replace("+", "-"): ("renamed_function", 5),  # and its hashed folder
    }
    for student, (fixture, _) in ids.items():
        shutil.copy(SUBS / f"{fixture}.ipynb", subs / f"{student}.ipynb")
    shutil.copy(SUBS / "full.ipynb", subs / "ann.ipynb")
    (subs / "ann").mkdir()  # a second submission of ann: neither is chosen silently
    shutil.copy(SUBS / "stub.ipynb", subs / "ann" / "tiny_master.ipynb")
    for kind in NOISE:
        _noisy(kind, subs / f"noisy_{kind}.ipynb")
    argv = ["grade", str(subs), "--source", str(MASTER), "--out", str(out), *OPTIONS]
    assert course_main([*argv, "--jobs", "2"]) == 1  # the duplicate's error line
    printed = capsys.readouterr().out
    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").open())}
    assert set(rows) == {*ids, "ann", *(f"noisy_{k}" for k in NOISE)}
    for student, (_, points) in ids.items():  # each in its own folder, its own grade
        rec = json.loads((store.student_dir(out, student) / "grade.json").read_text())
        assert (rec["student"], rec["total"]) == (student, points)
        row = rows[student]
        assert (float(row["total"]), row["status"]) == (points, "ok")
    assert (out / "grades.csv").is_file() and (out / "_instructor").is_dir()
    assert json.loads((out / "grades.json").read_text())["students"]
    # the duplicate: invalid with both entries named, in the summary and the tables
    why = ("2 submissions have the student id 'ann' (ann/, ann.ipynb): none was graded; "
           "keep one and grade again")  # fmt: skip
    assert [ln for ln in printed.splitlines() if ln.startswith("error:")] == [
        f"error: ann: {why}"  # the one error of the run
    ]
    assert (rows["ann"]["status"], rows["ann"]["reason"]) == ("invalid", why)
    students = json.loads((out / "grades.json").read_text())["students"]
    assert next(s for s in students if s["student"] == "ann")["errors"] == [why]
    # noisy output: full points, the output cut, a flag for the instructor
    for kind, flag in [("thread", "output_truncated"), ("image", "output_truncated"),
                       ("sigint", "interrupted_itself"), ("closed", None),
                       ("all", "interrupted_itself")]:  # fmt: skip
        row = rows[f"noisy_{kind}"]
        assert (row["total"], row["status"]) == ("8", "ok"), (kind, row["reason"])
        assert flag is None or flag in row["flags"].split(), (kind, row["flags"])
        folder = out / f"noisy_{kind}"
        assert all(p.stat().st_size < 1_000_000 for p in folder.iterdir())
    executed = out / "_instructor" / "noisy_image" / "executed.ipynb"
    dropped = "[course grader: output dropped: a display of 37400000 characters"
    assert dropped in executed.read_text()
