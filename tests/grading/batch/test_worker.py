"""The grading policy with a scripted kernel: order, restarts, replay, canary, the result file.

A cell's source names what the fake kernel does with it: ``ok:<name>`` replies ok,
``err:<name>`` raises, ``die:<name>`` kills the kernel, ``exit:<name>`` calls exit(),
``hang:<name>`` times out, ``flaky:<name>`` works in the first kernel only and
``mem:<name>`` trips the memory watchdog. The canary is answered honestly unless the
script says the kernel was tampered with.
"""

from __future__ import annotations

import asyncio
import json
import os
import re

import pytest

from course_utils.grading.batch import worker as worker_module
from course_utils.grading.batch.worker import INTERRUPT_MARK, MAX_RESTARTS, Worker


class FakeWatchdog:
    def __init__(self):
        self.tripped, self.peak, self.seen = None, 3 * 2**20, {101, 102}
        self.running = None

    def start(self):
        self.running = True

    def stop(self):
        self.running = False


class FakeSession:
    def __init__(self, script: Script, number: int):
        self.script, self.number = script, number
        self.ran: list[tuple[str, bool]] = []
        self.up = False
        self.code = None
        self.pid = 4000 + number

    async def start(self, ready_timeout: float) -> None:
        if self.script.start_fails:
            raise RuntimeError("no kernel today")
        self.up = True

    async def run_cell(self, source, timeout, *, store_history=True, record=None):
        self.ran.append((source, store_history))
        self.script.saved_before.append(self.script.result()["cells"])
        record = record if record is not None else {}
        record.setdefault("outputs", [])
        kind = source.split(":")[0]
        if kind == "flaky":
            kind = "ok" if self.number == 0 else "die"
        if kind == "mem":
            self.script.watchdog.tripped = "resident memory reached 900 MB"
            kind = "die"
        if source.startswith("raise AssertionError("):
            token = re.search(r"'(.*)'", source).group(1)
            if self.script.tampered:
                record["status"] = "ok"
                return record
            kind, source = "err", token
        if kind == "die":
            self.up, self.code = False, 3
            record["status"] = "died"
            return record
        if kind == "hang":
            record["status"] = "timeout"
            return record
        if kind == "err":
            record.update(status="error", ename="AssertionError", evalue=source)
            return record
        record["status"] = "ok"
        record["exit_requested"] = kind == "exit"
        return record

    async def interrupt(self) -> bool:
        marker = self.script.job.get("ipc")
        self.script.announced.append(
            bool(marker) and os.path.exists(os.path.join(marker, INTERRUPT_MARK))
        )
        return self.script.interrupt_works

    def own_pids(self) -> set[int]:
        return {self.pid}

    def kernel_pid(self) -> int:
        return self.pid

    async def alive(self) -> bool:
        return self.up

    def exit_code(self):
        return self.code

    async def kill(self) -> None:
        self.up = False
        self.script.killed.append(self.number)


class Script:
    def __init__(self, tmp_path, cells, **job):
        self.path = tmp_path / "result.json"
        self.job = {
            "cells": [
                {
                    "role": role,
                    "source": src,
                    "hidden": role == "hidden",
                    "exercise": exercise[0] if exercise else "e",
                }
                for role, src, *exercise in cells
            ],
            "timeout": 5,
            "total_timeout": 600,
            "memory_mb": 100,
            "result_path": str(self.path),
        } | job
        for cell in self.job["cells"]:
            cell["role"] = "test" if cell["role"] == "hidden" else cell["role"]
        self.sessions: list[FakeSession] = []
        self.killed: list[int] = []
        self.saved_before: list = []
        self.watchdog = FakeWatchdog()
        self.start_fails = self.tampered = False
        self.interrupt_works = True
        self.pids: list[int] = []
        self.tree_kills = 0
        self.announced: list[bool] = []  # the interrupt's marker was there

    def new_session(self) -> FakeSession:
        self.sessions.append(FakeSession(self, len(self.sessions)))
        return self.sessions[-1]

    def kill_tree(self):
        self.tree_kills += 1

    def run(self) -> dict:
        w = Worker(
            self.job,
            new_session=self.new_session,
            watchdog=self.watchdog,
            list_pids=lambda: self.pids,
            kill_pids=self.kill_tree,
        )
        asyncio.run(w.run())
        return self.result()

    def result(self) -> dict:
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def sources(self, n: int) -> list[str]:
        return [
            src
            for src, _ in self.sessions[n].ran
            if not src.startswith(
                ("raise", "def _course_grader_forget", "def _course_grader_guard")
            )
        ]


@pytest.fixture(autouse=True)
def _no_death_grace(monkeypatch):
    monkeypatch.setattr(worker_module, "DEATH_GRACE_S", 0.0)


def statuses(result: dict) -> list[str]:
    return [c["status"] for c in result["cells"]]


def test_cells_run_in_order_then_the_canary_and_everything_is_saved(tmp_path):
    script = Script(
        tmp_path, [("context", "ok:setup"), ("solution", "ok:a"), ("hidden", "ok:t")]
    )
    result = script.run()
    assert len(script.sessions) == 1
    guard, history = script.sessions[0].ran[0]  # the grader's guard, first
    assert guard.startswith("def _course_grader_guard") and not history
    assert script.sessions[0].ran[1:4] == [
        ("ok:setup", True),
        ("ok:a", True),
        ("ok:t", False),  # hidden tests stay out of the history
    ]
    forget, history = script.sessions[0].ran[4]  # and out of linecache, once run
    assert forget.startswith("def _course_grader_forget") and not history
    canary, history = script.sessions[0].ran[5]
    assert canary.startswith("raise AssertionError('course-grader-canary-")
    assert not history
    assert result["canary"] == "ok" and result["done"] and result["events"] == []
    assert statuses(result) == ["ok", "ok", "ok"]
    assert result["peak_rss_mb"] == 3.0 and result["processes_seen"] == 2
    # progress is on disk before each next cell runs
    assert [
        len([c for c in cells if c["status"] == "ok"]) for cells in script.saved_before
    ] == [0, 0, 1, 2, 2, 3]  # the guard; the hidden test's forget cell, the canary
    assert script.killed == [0] and script.watchdog.running is False
    assert script.tree_kills >= 1


def test_a_crash_restarts_the_kernel_and_replays_setup_and_code_not_tests(tmp_path):
    cells = [
        ("context", "ok:setup"),
        ("solution", "err:a"),
        ("test", "ok:t1"),
        ("solution", "die:b"),
        ("test", "ok:t2"),
    ]
    script = Script(tmp_path, cells)
    result = script.run()
    assert len(script.sessions) == 2
    assert script.sources(1) == ["ok:setup", "err:a", "ok:t2"]
    assert statuses(result) == ["ok", "error", "ok", "died", "ok"]
    kinds = [(e["kind"], e["cell"]) for e in result["events"]]
    assert kinds == [("died", 3), ("restart", 4)]
    assert result["cells"][3]["detail"].startswith(
        "the kernel process exited with status 3"
    )
    assert result["canary"] == "ok" and script.killed == [0, 1]


def test_a_cell_that_fails_again_on_replay_ends_the_run(tmp_path):
    cells = [("solution", "flaky:a"), ("solution", "die:b"), ("test", "ok:t")]
    script = Script(tmp_path, cells)
    result = script.run()
    assert statuses(result) == ["ok", "died", "not run"]
    kinds = [e["kind"] for e in result["events"]]
    assert kinds == ["died", "restore", "gave-up"]
    assert "could not be restored" in result["events"][-1]["detail"]
    assert result["canary"] == "not run" and result["done"]


def test_the_worker_gives_up_after_too_many_lost_kernels(tmp_path):
    cells = [("solution", f"die:{k}") for k in range(MAX_RESTARTS + 2)]
    script = Script(tmp_path, cells)
    result = script.run()
    assert len(script.sessions) == MAX_RESTARTS + 1
    assert statuses(result) == ["died"] * (MAX_RESTARTS + 1) + ["not run"]
    last = result["events"][-1]
    assert last["kind"] == "gave-up"
    assert (
        last["detail"]
        == f"the kernel was lost {MAX_RESTARTS + 1} times; the rest was not run"
    )


def test_a_timeout_is_interrupted_and_the_same_kernel_goes_on(tmp_path):
    cells = [("solution", "hang:a"), ("test", "ok:t", "f")]
    script = Script(tmp_path, cells, ipc=str(tmp_path))
    result = script.run()
    # the guard lets only an announced SIGINT through, and the announcement is gone after
    assert script.announced == [True]
    assert not (tmp_path / INTERRUPT_MARK).exists()
    assert len(script.sessions) == 1 and statuses(result) == ["timeout", "ok"]
    assert result["events"] == [
        {
            "kind": "timeout",
            "cell": 0,
            "detail": "timed out (5 s per cell); interrupted",
        }
    ]


def test_a_kernel_that_ignores_the_interrupt_is_replaced(tmp_path):
    script = Script(
        tmp_path, [("context", "ok:s"), ("solution", "hang:a"), ("test", "ok:t", "f")]
    )
    script.interrupt_works = False
    result = script.run()
    assert len(script.sessions) == 2 and script.sources(1) == ["ok:s", "ok:t"]
    assert [e["kind"] for e in result["events"]] == ["timeout", "restart"]
    assert "ignored the interrupt; kernel killed" in result["events"][0]["detail"]


def test_after_a_timeout_the_exercises_other_tests_are_skipped(tmp_path):
    """An endless loop costs the timeout once, not once per test cell of its exercise;
    the next exercise runs as usual."""
    cells = [("solution", "ok:a"), ("test", "hang:t1"), ("hidden", "hang:t2"),
             ("solution", "ok:b", "f"), ("test", "ok:t3", "f")]  # fmt: skip
    script = Script(tmp_path, cells)
    result = script.run()
    assert script.sources(0) == ["ok:a", "hang:t1", "ok:b", "ok:t3"]
    assert statuses(result) == ["ok", "timeout", "not run", "ok", "ok"]
    assert result["cells"][2]["detail"] == (
        "skipped: an earlier cell of exercise 'e' timed out"
    )
    assert [e["kind"] for e in result["events"]] == ["timeout"]


def test_the_total_time_limit_stops_the_run_without_a_restart(tmp_path):
    script = Script(
        tmp_path, [("solution", "hang:a"), ("test", "ok:t")], total_timeout=3
    )
    script.interrupt_works = False
    result = script.run()
    assert len(script.sessions) == 1 and statuses(result) == ["timeout", "not run"]
    assert result["events"][0]["kind"] == "total-timeout"
    assert "(3 s in all) and ignored the interrupt" in result["events"][0]["detail"]
    assert result["canary"] == "not run"


def test_memory_and_exit_are_named_and_the_watchdog_rearmed(tmp_path):
    cells = [("solution", "mem:a"), ("solution", "exit:b"), ("test", "ok:t")]
    script = Script(tmp_path, cells)
    result = script.run()
    assert [e["kind"] for e in result["events"]] == [
        "memory",
        "restart",
        "died",
        "restart",
    ]
    assert (
        result["cells"][0]["detail"] == "memory limit: resident memory reached 900 MB"
    )
    assert "called exit()/quit()" in result["cells"][1]["detail"]
    assert statuses(result) == ["died", "died", "ok"]
    assert script.watchdog.tripped is None


def test_a_tampered_kernel_fails_the_canary(tmp_path):
    script = Script(tmp_path, [("solution", "ok:a")])
    script.tampered = True
    assert script.run()["canary"] == "tampered"


def test_a_kernel_that_cannot_start_is_an_event_and_nothing_runs(tmp_path):
    script = Script(tmp_path, [("solution", "ok:a"), ("test", "ok:t")])
    script.start_fails = True
    result = script.run()
    assert result["events"] == [
        {
            "kind": "kernel",
            "cell": None,
            "detail": "the kernel could not start: RuntimeError: no kernel today",
        }
    ]
    assert statuses(result) == ["not run", "not run"] and result["done"]
    assert script.sessions[0].ran == []


def test_processes_left_running_are_reported_and_killed(tmp_path):
    script = Script(tmp_path, [("solution", "ok:a")])
    script.pids = [os.getpid(), 4000]  # a running process, and the kernel itself
    result = script.run()
    assert result["events"] == [
        {
            "kind": "cleanup",
            "cell": None,
            "detail": "1 process(es) started by the code were still running "
            "at the end and were killed",
        }
    ]
    assert script.tree_kills >= 2  # after the kernel, and once more at the very end
