"""Batches: a grader killed mid-way resumes with nobody graded twice or lost; shards merge;
``course check``; and a small run of the benchmark script."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from course_utils.grading import batch as grader
from course_utils.tooling.cli import main as course_main

ROOT = Path(__file__).resolve().parent.parent
FIX = Path(__file__).parent / "fixtures" / "grader"
MASTER = FIX / "tiny_master.ipynb"
SUBS = FIX / "submissions"
LIMITS = grader.Limits(timeout=5, total_timeout=60, memory_mb=1000)


def _class(folder: Path, names: dict[str, str]) -> Path:
    folder.mkdir()
    for student, fixture in names.items():
        shutil.copy(SUBS / f"{fixture}.ipynb", folder / f"{student}.ipynb")
    return folder


def _graded(out: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/grade.json")}


def _start(subs: Path, out: Path) -> subprocess.Popen:
    cmd = [
        sys.executable,
        "-m",
        "course_utils.tooling.cli",
        "grade",
        str(subs),
        "--source",
        str(MASTER),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--timeout",
        "5",
    ]
    # A shell that starts the suite in the background (CI, nohup) leaves SIGINT ignored,
    # and Python then installs no KeyboardInterrupt handler: restore Ctrl-C for the child.
    return subprocess.Popen(
        cmd,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_for(out: Path, n: int, proc: subprocess.Popen, limit: float = 90) -> None:
    end = time.monotonic() + limit
    while len(_graded(out)) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the grader made no progress"
        time.sleep(0.1)


def _alive(run_id: str) -> list:
    found = []
    for p in psutil.process_iter():
        try:
            if p.environ().get(grader.RUN_ENV) == run_id:
                found.append(p)
        except psutil.Error:
            continue
    return found


def test_interrupted_and_killed_grader_resumes_without_regrading(tmp_path):
    names = {
        f"s{i}": fx
        for i, fx in enumerate(
            ["full", "stub", "syntax_error", "deleted_cell", "renamed_function", "full"]
        )
    }
    expected = {
        "full": 8,
        "stub": 0,
        "syntax_error": 5,
        "deleted_cell": 6,
        "renamed_function": 5,
    }
    subs, out = _class(tmp_path / "subs", names), tmp_path / "out"

    proc = _start(subs, out)  # Ctrl-C after the first student
    _wait_for(out, 1, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "course: interrupted" in err
    first = _graded(out)
    assert 1 <= len(first) < len(names)
    assert len(list(csv.DictReader((out / "grades.csv").open()))) == len(first)

    proc = _start(subs, out)  # then SIGKILL, no chance to clean up
    _wait_for(out, len(first) + 1, proc)
    proc.kill()
    proc.wait(timeout=10)
    second = _graded(out)
    assert len(second) < len(names)
    run_ids = {r["run_id"] for r in second.values()} - {
        r["run_id"] for r in first.values()
    }
    end = time.monotonic() + 10  # the worker and kernel die with the grader
    while any(_alive(r) for r in run_ids) and time.monotonic() < end:
        time.sleep(0.2)
    assert not any(_alive(r) for r in run_ids)

    batch = grader.grade(
        subs, MASTER, out, limits=LIMITS, jobs=2, progress=False, echo=lambda *a: None
    )
    final = _graded(out)
    assert sorted(batch.skipped) == sorted(second) and sorted(batch.graded) == sorted(
        set(names) - set(second)
    )
    for student, rec in second.items():  # graded once: the earlier grade is untouched
        assert final[student] == rec
    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert sorted(r["student"] for r in rows) == sorted(names)
    assert {r["student"]: float(r["total"]) for r in rows} == {
        s: expected[f] for s, f in names.items()
    }

    again = grader.grade(
        subs, MASTER, out, limits=LIMITS, jobs=2, progress=False, echo=lambda *a: None
    )
    assert again.graded == [] and len(again.skipped) == len(names)
    forced = grader.grade(
        subs,
        MASTER,
        out,
        limits=LIMITS,
        jobs=2,
        force=True,
        shard="0/6",
        progress=False,
        echo=lambda *a: None,
    )
    assert (
        forced.graded == ["s0"]
        and _graded(out)["s0"]["run_id"] != final["s0"]["run_id"]
    )


def test_shards_merge_into_one_report(tmp_path, capsys):
    names = {
        "ann": "full",
        "bob": "stub",
        "cy": "deleted_cell",
        "dee": "syntax_error",
        "eve": "empty",
    }
    subs = _class(tmp_path / "subs", names)
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
            echo=lambda *a: None,
        )
    assert sorted(_graded(shards[0])) == ["ann", "cy", "eve"] and sorted(
        _graded(shards[1])
    ) == ["bob", "dee"]
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
        assert (final / student / "feedback.ipynb").is_file() and (
            final / student / "results.json"
        ).is_file()


def test_check_runs_visible_tests_only(tmp_path, capsys):
    student = FIX / "tiny_student.ipynb"
    assert (
        course_main(["check", str(student), "--source", str(student), "--timeout", "5"])
        == 1
    )
    text = capsys.readouterr().out
    assert (
        "0/1" in text
        and "not implemented" in text
        and "visible tests: 0 / 3 points" in text
    )
    solved = tmp_path / "mine.ipynb"
    shutil.copy(SUBS / "full.ipynb", solved)
    assert (
        course_main(["check", str(solved), "--source", str(student), "--timeout", "5"])
        == 0
    )
    text = capsys.readouterr().out
    assert (
        "visible tests: 3 / 3 points" in text
        and "hidden" not in text.split("visible tests")[0]
    )


@pytest.mark.slow
def test_benchmark_script_small(tmp_path):
    cmd = [
        sys.executable,
        str(ROOT / "benchmarks" / "grade_bench.py"),
        "--n",
        "4",
        "--jobs",
        "2",
        "--source",
        str(MASTER),
        "--student",
        str(FIX / "tiny_student.ipynb"),
        "--work",
        str(tmp_path),
    ]
    res = subprocess.run(
        cmd, capture_output=True, text=True, timeout=240, cwd=ROOT, env=dict(os.environ)
    )
    assert res.returncode == 0, res.stderr
    assert "graded 4 submissions with --jobs 2 in" in res.stdout
    assert "per-submission overhead" in res.stdout


def test_a_kernel_that_cannot_start_is_a_grader_error_retried_later(
    tmp_path, monkeypatch
):
    subs = _class(tmp_path / "subs", {"ann": "full"})
    real_spec = grader._kernel_spec

    def broken(work):
        folder = real_spec(work)
        spec = folder / "course-grader" / "kernel.json"
        data = json.loads(spec.read_text())
        data["argv"][0] = str(tmp_path / "no-such-python")
        spec.write_text(json.dumps(data))
        return folder

    monkeypatch.setattr(grader, "_kernel_spec", broken)
    out = tmp_path / "out"
    rec = grader.grade(
        subs, MASTER, out, limits=LIMITS, jobs=1, progress=False, echo=lambda *a: None
    ).records[0]
    assert rec["status"] == "error" and "the kernel could not start" in rec["reason"]
    monkeypatch.setattr(grader, "_kernel_spec", real_spec)
    again = grader.grade(
        subs, MASTER, out, limits=LIMITS, jobs=1, progress=False, echo=lambda *a: None
    )
    assert again.graded == ["ann"] and again.records[0]["total"] == 8


def test_a_master_with_only_nbgrader_metadata_grades_the_same(tmp_path):
    import nbformat

    nb = nbformat.read(MASTER, as_version=4)
    for cell in nb.cells:  # drop our header lines: only nbgrader's metadata is left
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and (meta.get("grade") or meta.get("solution")):
            cell.source = cell.source.split("\n", 1)[1]
    source = tmp_path / "tiny_master.ipynb"
    nbformat.write(nb, source)
    subs = _class(tmp_path / "subs", {"ann": "full", "bob": "stub"})
    batch = grader.grade(
        subs,
        source,
        tmp_path / "out",
        limits=LIMITS,
        jobs=2,
        progress=False,
        echo=lambda *a: None,
    )
    assert {r["student"]: r["total"] for r in batch.records} == {"ann": 8, "bob": 0}
