"""Batches: a grader killed mid-way resumes with nobody graded twice or lost; shards; a
kernel that cannot start; nbgrader masters; a real master; and the benchmark script."""

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

import pytest

from course_utils.errors import CourseError
from course_utils.grading.batch import grader
from course_utils.grading.records import store
from course_utils.grading.sandbox import environment
from tests import load, sigint
from tests.grading.helpers import (
    MASTER,
    ROOT,
    STUDENT,
    class_folder,
    graded,
    nbgrader_only,
    quiet,
    with_env,
)

LIMITS = grader.Limits(timeout=5, total_timeout=60, memory_mb=1000)
NAMES = {
    f"s{i}": fx
    for i, fx in enumerate(
        ["full", "stub", "syntax_error", "deleted_cell", "renamed_function", "full"]
    )
}
EXPECTED = {"full": 8, "stub": 0, "syntax_error": 5, "deleted_cell": 6}
EXPECTED |= {"renamed_function": 5}


def _start(subs: Path, out: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "course_utils.cli", "grade", str(subs)]
    cmd += ["--source", str(MASTER), "--out", str(out), "--jobs", "1", "--timeout", "5"]
    cmd += ["--total-timeout", "60", "--memory", "1000"]  # as LIMITS: resumable
    # Ctrl-C reaches the child even when the suite runs with SIGINT ignored (tests/sigint.py).
    return sigint.popen(
        cmd,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(out: Path, n: int, proc: subprocess.Popen, limit: float = 90) -> None:
    end = time.monotonic() + limit
    while len(graded(out)) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the grader made no progress"
        time.sleep(0.1)


def _interrupt_after_one(subs: Path, out: Path) -> dict:
    proc = _start(subs, out)  # Ctrl-C after the first student
    _wait_for(out, 1, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "course: interrupted" in err
    first = graded(out)
    assert 1 <= len(first) < len(NAMES)
    assert len(list(csv.DictReader((out / "grades.csv").open()))) == len(first)
    assert not (
        out / ".work"
    ).exists()  # its jobs (hidden tests) removed on the way out
    return first


def _kill_after_one_more(subs: Path, out: Path, first: dict) -> dict:
    proc = _start(subs, out)  # then SIGKILL, no chance to clean up
    _wait_for(out, len(first) + 1, proc)
    proc.kill()
    proc.wait(timeout=10)
    second = graded(out)
    assert len(second) < len(NAMES)
    run_ids = {r["run_id"] for r in second.values()} - {
        r["run_id"] for r in first.values()
    }
    end = time.monotonic() + 10  # the worker and kernel die with the grader
    while with_env(grader.RUN_ENV, run_ids) and time.monotonic() < end:
        time.sleep(0.2)
    assert not with_env(grader.RUN_ENV, run_ids)
    return second


@pytest.mark.slow
def test_interrupted_and_killed_grader_resumes_without_regrading(tmp_path):
    subs, out = class_folder(tmp_path / "subs", NAMES), tmp_path / "out"
    first = _interrupt_after_one(subs, out)
    second = _kill_after_one_more(subs, out, first)
    batch = grader.grade(
        subs, MASTER, out, limits=LIMITS, jobs=2, progress=False, echo=quiet
    )
    final = graded(out)
    assert sorted(batch.skipped) == sorted(second)
    assert sorted(batch.graded) == sorted(set(NAMES) - set(second))
    for student, rec in second.items():  # graded once: the earlier grade is untouched
        assert final[student] == rec
    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert {r["student"]: float(r["total"]) for r in rows} == {
        s: EXPECTED[f] for s, f in NAMES.items()
    }
    again = grader.grade(
        subs, MASTER, out, limits=LIMITS, jobs=2, progress=False, echo=quiet
    )
    assert again.graded == [] and len(again.skipped) == len(NAMES)
    forced = grader.grade(
        subs,
        MASTER,
        out,
        limits=LIMITS,
        jobs=2,
        force=True,
        shard="0/6",
        progress=False,
        echo=quiet,
    )
    assert forced.graded == ["s0"]
    assert graded(out)["s0"]["run_id"] != final["s0"]["run_id"]


def _endless_cell_running(out: Path, student: str) -> bool:
    """The student's worker runs the first test cell of ``greet`` (the endless loop)."""
    for job in out.glob(f"{store.WORK}/*/{student}/job.json"):
        try:
            cells = json.loads(job.read_text())["cells"]
            results = json.loads((job.parent / "result.json").read_text())["cells"]
        except (OSError, ValueError, KeyError):
            return False
        first = next(
            i
            for i, c in enumerate(cells)
            if c["role"] == "test" and c["exercise"] == "greet"
        )
        return results[first - 1]["status"] != "not run"
    return False


@pytest.mark.slow
def test_ctrl_c_during_an_endless_cell_exits_at_once(tmp_path):
    """``timeout -s INT`` signals the grader twice (the child, then its group), and an
    impatient instructor presses Ctrl-C again: a second KeyboardInterrupt raised while
    the run stopped its workers cut that short, and the exit then waited for the worker
    still running, until its cell's timeout."""
    names = {"a": "full", "b": "infinite_loop"}
    subs, out = class_folder(tmp_path / "subs", names), tmp_path / "out"
    cmd = [sys.executable, "-m", "course_utils.cli", "grade", str(subs)]
    cmd += ["--source", str(MASTER), "--out", str(out), "--jobs", "1"]
    cmd += ["--timeout", "300", "--memory", "1000"]
    proc = sigint.popen(
        cmd,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a group of its own, as timeout(1) and a shell give it
    )
    try:
        end = time.monotonic() + load.stretched(90)
        while not _endless_cell_running(out, "b"):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < end, "the grader never reached the endless cell"
            time.sleep(0.1)
        run_ids = {p.name for p in (out / store.WORK).iterdir()}
        time.sleep(0.5)
        # What timeout(1) does: the signal to the child, then to its process group; then
        # more, a few ms apart, so that one surely lands while the workers are stopped
        # (the instructor's second signal did, by chance, 3 times in 9).
        proc.send_signal(signal.SIGINT)
        os.killpg(proc.pid, signal.SIGINT)
        sent = time.monotonic()
        for _ in range(10):
            time.sleep(0.002)
            try:
                proc.send_signal(signal.SIGINT)
            except ProcessLookupError:
                break
        _, err = proc.communicate(timeout=load.stretched(15))
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130 and "course: interrupted" in err, err
    assert took < load.stretched(15)
    assert not with_env(grader.RUN_ENV, run_ids)  # the workers' trees were killed
    assert not (out / store.WORK).exists()  # its scratch folder, hidden tests and all
    assert set(graded(out)) == {"a"}  # the grade stored before Ctrl-C is kept
    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert [(r["student"], float(r["total"])) for r in rows] == [
        ("a", EXPECTED["full"])
    ]


def test_shard_spec_and_limits():
    assert grader.parse_shard("1/4") == (1, 4) and grader.parse_shard(None) is None
    for bad in ("4/4", "x", "1/0", "-1/2"):
        with pytest.raises(CourseError, match="--shard"):
            grader.parse_shard(bad)
    with pytest.raises(CourseError, match="--memory-mb must be positive"):
        grader.Limits(memory_mb=0).check()
    assert grader.Limits(total_timeout=10).cpu_seconds == 20
    assert grader.Limits(cpu_time=3).cpu_seconds == 3


@pytest.mark.slow
def test_a_kernel_that_cannot_start_is_a_grader_error_retried_later(
    tmp_path, monkeypatch
):
    subs = class_folder(tmp_path / "subs", {"ann": "full"})
    real_spec = environment.kernel_spec

    def broken(work):
        folder = real_spec(work)
        spec = folder / environment.KERNEL_NAME / "kernel.json"
        data = json.loads(spec.read_text())
        data["argv"][0] = str(tmp_path / "no-such-python")
        spec.write_text(json.dumps(data))
        return folder

    monkeypatch.setattr(environment, "kernel_spec", broken)
    out = tmp_path / "out"
    rec = grader.grade(
        subs, MASTER, out, limits=LIMITS, jobs=1, progress=False, echo=quiet
    ).records[0]
    assert rec["status"] == "error" and "the kernel could not start" in rec["reason"]
    monkeypatch.setattr(environment, "kernel_spec", real_spec)
    again = grader.grade(
        subs, MASTER, out, limits=LIMITS, jobs=1, progress=False, echo=quiet
    )
    assert again.graded == ["ann"] and again.records[0]["total"] == 8


def test_a_master_with_only_nbgrader_metadata_grades_the_same(tmp_path):
    source = nbgrader_only(tmp_path)
    subs = class_folder(tmp_path / "subs", {"ann": "full", "bob": "stub"})
    batch = grader.grade(
        subs,
        source,
        tmp_path / "out",
        limits=LIMITS,
        jobs=2,
        progress=False,
        echo=quiet,
    )
    assert {r["student"]: r["total"] for r in batch.records} == {"ann": 8, "bob": 0}


@pytest.mark.slow
def test_real_master_full_marks_and_exercise_notebook_zero(tmp_path):
    name = "00_welcome_exercises.ipynb"
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(ROOT / "solutions" / name, subs / "master.ipynb")
    shutil.copy(ROOT / "exercises" / name, subs / "student.ipynb")
    batch = grader.grade(
        subs,
        ROOT / "solutions" / name,
        tmp_path / "out",
        jobs=2,
        progress=False,
        echo=quiet,
    )
    recs = {r["student"]: r for r in batch.records}
    full, zero = recs["master"], recs["student"]
    assert (full["max_total"], full["total"], full["status"]) == (15, 15, "ok"), full[
        "reason"
    ]
    assert {e["status"] for e in full["exercises"].values()} == {"passed"}
    assert zero["total"] == 0 and zero["status"] == "ok"
    assert {e["status"] for e in zero["exercises"].values()} == {"not implemented"}
    assert (
        zero["reason"]
        == "0 of 3 exercises passed; not implemented: sync-timer, port-mlp, break-even"
    )


@pytest.mark.slow
def test_benchmark_script_small(tmp_path):
    cmd = [sys.executable, str(ROOT / "benchmarks" / "grade_bench.py"), "--n", "4"]
    cmd += ["--jobs", "2", "--source", str(MASTER), "--student", str(STUDENT)]
    cmd += ["--work", str(tmp_path)]
    res = subprocess.run(
        cmd, capture_output=True, text=True, timeout=240, cwd=ROOT, env=dict(os.environ)
    )
    assert res.returncode == 0, res.stderr
    assert "graded 4 submissions with --jobs 2 in" in res.stdout
    assert "per-submission overhead" in res.stdout
