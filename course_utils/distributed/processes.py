"""Run a launch's commands side by side, watch them, and leave no process behind.

Each top-level process runs in its own session with its output in a log file;
all are stopped after a timeout, and the others soon after one fails. Every
process a launch starts carries its tag in the environment (``TAG_ENV``), so
anything still holding it afterwards, even re-parented to init, is found and
killed, also on Ctrl-C. Only the standard library and psutil are imported.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from course_utils._procs import kill_process_group, kill_processes

TAG_ENV = "COURSE_DIST_TAG"  # carried by every launched process; finds orphans
# after one process fails, how long the others get to exit by themselves
FAIL_GRACE_S = 5.0


def tagged_processes(tag: str | None = None) -> list[Any]:
    """Live processes started by a launch (the one with ``tag``, or any launch)."""
    import psutil

    found = []
    me = os.getpid()
    for proc in psutil.process_iter(["pid"]):
        if proc.pid == me:
            continue
        try:
            value = proc.environ().get(TAG_ENV)
            if (
                value
                and (tag is None or value == tag)
                and proc.status() != psutil.STATUS_ZOMBIE
            ):
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


def cleanup(tag: str) -> int:
    """Kill every process still carrying ``tag``; return how many there were."""
    left = tagged_processes(tag)
    if left:
        kill_processes(left)
    return len(left)


def execute(
    commands: list[list[str]],
    env: dict[str, str],
    workdir: Path,
    timeout: float,
    tag: str,
) -> tuple[list[int | None], str, bool]:
    """Run the commands side by side; always leaves no process behind."""
    procs: list[subprocess.Popen] = []
    logs = []
    timed_out = False
    try:
        for i, cmd in enumerate(commands):
            log = open(workdir / f"launch{i}.log", "w+b")  # noqa: SIM115 - closed below
            logs.append(log)
            procs.append(
                subprocess.Popen(
                    cmd,
                    env=env,
                    cwd=workdir,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        deadline = time.monotonic() + timeout
        failed_at: float | None = None
        while True:
            codes = [p.poll() for p in procs]
            if all(c is not None for c in codes):
                break
            now = time.monotonic()
            if failed_at is None and any(c not in (None, 0) for c in codes):
                failed_at = now
            if failed_at is not None and now - failed_at > FAIL_GRACE_S:
                break
            if now > deadline:
                timed_out = True
                break
            _pause()
    finally:
        # Every step runs even if one is interrupted (a second Ctrl-C); the first
        # interruption is raised again once nothing is left running.
        steps = [lambda p=p: p.poll() is None and kill_process_group(p) for p in procs]
        interrupted = _run_all([*steps, lambda: cleanup(tag)])
        outputs = []
        for i, log in enumerate(logs):
            log.seek(0)
            text = log.read().decode(errors="replace")
            log.close()
            prefix = f"[process {i}] " if len(logs) > 1 else ""
            outputs.append("\n".join(prefix + line for line in text.splitlines()))
    if interrupted is not None:
        raise interrupted
    return [p.returncode for p in procs], "\n".join(outputs), timed_out


def _pause() -> None:
    """The monitoring loop's poll interval (a function, so tests can interrupt it)."""
    time.sleep(0.05)


def _run_all(steps: Sequence[Any]) -> BaseException | None:
    """Call every step; return the first exception instead of stopping at it."""
    first: BaseException | None = None
    for step in steps:
        try:
            step()
        except BaseException as exc:  # noqa: BLE001 - cleanup must go on through Ctrl-C
            first = first or exc
    return first
