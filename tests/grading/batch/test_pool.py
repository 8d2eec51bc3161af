"""Worker processes: the job file, the backstop, the result of a worker that failed, orphans."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import psutil
import pytest

from course_utils.grading.batch import pool
from course_utils.grading.batch.grader import Limits
from course_utils.grading.inputs.master import load_master
from course_utils.grading.sandbox import environment
from tests.grading.helpers import MASTER, gone, with_env


def _workers(tmp_path, run_id="run-test", sandboxed=False, **limits) -> pool.Workers:
    env = environment.submission_kernel_env(60, run_id, smoke=True)
    return pool.Workers(
        tmp_path, env, run_id, Limits(**limits), sandboxed=sandboxed, hide=(tmp_path,)
    )


def test_job_holds_the_cells_that_run_and_the_limits(tmp_path):
    workers = _workers(tmp_path, timeout=7, total_timeout=70, memory_mb=700)
    master = load_master(MASTER)
    job = workers.job(master.cells, {"cwd": "/tmp/cwd"}, tmp_path / "ann")
    assert [c["role"] for c in job["cells"]].count("answer") == 0
    assert len(job["cells"]) == sum(c.role != "answer" for c in master.cells)
    assert sum(c["hidden"] for c in job["cells"]) == 3
    assert (job["timeout"], job["total_timeout"], job["memory_mb"]) == (7, 70, 700)
    assert job["result_path"] == str(tmp_path / "ann" / "result.json")
    assert job["env"][environment.RUN_ENV] == "run-test"
    assert job["cwd"] == "/tmp/cwd"


def test_each_submission_gets_its_own_profile_and_sandboxed_kernelspec(tmp_path):
    workers = _workers(tmp_path, sandboxed=True, memory_mb=700)
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    a, b = workers.kernel(one), workers.kernel(two)
    assert a["env"]["IPYTHONDIR"] != b["env"]["IPYTHONDIR"]
    assert a["env"]["IPYTHONDIR"].startswith(str(one))
    assert a["sandbox"] and a["ipc"] == str(one / "ipc") and "cwd" not in a
    spec = json.loads(
        (one / "kernels" / environment.KERNEL_NAME / "kernel.json").read_text()
    )
    argv = spec["argv"]
    assert argv[0].endswith("bwrap") and "--unshare-pid" in argv
    assert argv[argv.index("--") + 1 :][:3] == [
        sys.executable,
        "-m",
        "course_utils.grading.sandbox.kernel_process",
    ]
    hidden = argv.index(str(tmp_path.resolve()))  # the report folder is hidden
    assert argv[hidden - 1] == "--tmpfs"
    three = tmp_path / "three"
    three.mkdir()
    unsafe = _workers(tmp_path).kernel(three)
    assert "sandbox" not in unsafe and unsafe["cwd"] == str(three / "work")


def test_a_worker_past_its_backstop_is_killed_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(pool, "BACKSTOP_S", 0.0)
    workers = _workers(tmp_path, "run-backstop", total_timeout=0.5)
    master = load_master(MASTER)
    hang = [c for c in master.cells if c.role == "context"]
    hang[0].source = "import time\ntime.sleep(60)"
    run = workers.run("ann", hang)
    assert run["events"][-1]["kind"] == "gave-up"
    assert "the worker was stopped after 0.5 s" in run["events"][-1]["detail"]
    assert with_env(environment.RUN_ENV, {"run-backstop"}) == []
    assert workers.procs == {}


def test_a_worker_that_failed_leaves_its_last_words(tmp_path):
    (tmp_path / "worker.log").write_text("Traceback ...\nImportError: no module x\n")
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    proc.wait()
    run = pool.Workers._result(tmp_path, proc, stopped=False, backstop=90)
    assert run["cells"] == [] and run["events"] == [
        {
            "kind": "kernel",
            "cell": None,
            "detail": "the grader's worker failed (exit 3): ImportError: no module x",
        }
    ]
    (tmp_path / "result.json").write_text(json.dumps({"cells": [1], "done": True}))
    assert pool.Workers._result(tmp_path, proc, False, 90) == {
        "cells": [1],
        "done": True,
    }


def test_sweep_kills_only_this_runs_orphans(tmp_path):
    workers = _workers(tmp_path, "run-mine")
    mine = subprocess.Popen(
        ["sleep", "60"], env={**os.environ, environment.RUN_ENV: "run-mine"}
    )
    other = subprocess.Popen(
        ["sleep", "60"], env={**os.environ, environment.RUN_ENV: "run-other"}
    )
    try:
        end = time.monotonic() + 10  # until exec: the environment is the new one
        while not with_env(environment.RUN_ENV, {"run-mine", "run-other"})[1:]:
            assert time.monotonic() < end
            time.sleep(0.05)
        workers.sweep()
        assert gone(mine.pid) and not gone(other.pid)
    finally:
        other.kill()
        other.wait()
        mine.wait()


def test_a_worker_started_during_a_sweep_is_not_taken_for_an_orphan(
    tmp_path, monkeypatch
):
    """Another thread starts a worker while a sweep lists the grader's children: the
    sweep must not see it as an orphan of the run (it killed it, and the student got
    'the grader's worker failed')."""
    workers = _workers(tmp_path, "run-race")
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    monkeypatch.setattr(workers, "command", lambda job: sleeper)
    real = psutil.Process.children
    listing = threading.Event()

    def slow_children(self, *args, **kwargs):  # the sweep's listing, made slow
        listing.set()
        time.sleep(0.5)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(psutil.Process, "children", slow_children)
    sweep = threading.Thread(target=workers.sweep)
    sweep.start()
    assert listing.wait(10)
    with open(tmp_path / "worker.log", "wb") as log:
        proc = workers._start("ann", tmp_path / "job.json", log)
    sweep.join()
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=0.5)  # still running: not swept
    finally:
        proc.kill()
        proc.wait()


def test_core_shares_split_the_cores_among_the_slots():
    assert pool.core_shares(2, [0, 1]) == [[0], [1]]
    assert pool.core_shares(3, [0, 1]) == [[0], [1], [0]]  # more slots: shared round
    assert pool.core_shares(2, [0, 1, 2, 3, 4]) == [[0, 1], [2, 3, 4]]
    assert pool.core_shares(1, [4, 6]) == [[4, 6]]


def test_a_kernel_runs_on_its_slots_cores_and_both_frameworks_count_them(tmp_path):
    """With as many slots as cores, each kernel sees one core: its affinity, and the
    course's ``cores()`` that both frameworks' thread policy follows."""
    cores = sorted(os.sched_getaffinity(0))
    workers = pool.Workers(
        tmp_path, environment.submission_kernel_env(60, "run-pin", smoke=True),
        "run-pin", Limits(), sandboxed=False, jobs=len(cores),
    )  # fmt: skip
    master = load_master(MASTER)
    cell = [c for c in master.cells if c.role == "context"][:1]
    cell[0].source = (
        "import os\nfrom course_utils.contention import cores\n"
        "print(sorted(os.sched_getaffinity(0)), cores())"
    )
    run = workers.run("ann", cell)
    printed = "".join(o.get("text", "") for o in run["cells"][0]["outputs"])
    assert printed.strip() == f"[{cores[0]}] 1", run
    assert workers.slots.qsize() == len(cores)  # the slot is free again
