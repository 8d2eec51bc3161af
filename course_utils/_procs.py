"""One way to stop a process tree: the notebook runner, the grader, the device check, ``distributed.launch``."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterable
from typing import Any


def kill_processes(procs: Iterable[Any], grace_s: float = 3.0) -> None:
    """SIGTERM, wait up to ``grace_s``, then SIGKILL and reap what is left (psutil processes).

    ``grace_s=0`` sends SIGKILL at once (for a tree that must not run one more instruction).
    """
    import psutil

    procs = list(procs)
    if grace_s > 0:
        for p in procs:
            try:
                p.terminate()
            except psutil.Error:
                pass
        _, procs = psutil.wait_procs(procs, timeout=grace_s)
    for p in procs:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(procs, timeout=max(grace_s, 2.0))


def kill_process_group(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    """Stop ``proc``, its process group and every descendant; reap ``proc``.

    Descendants that left the group are found first and killed by pid: a Jupyter
    kernel runs in a session of its own, so killing the group alone left it alive
    until it noticed its parent was gone. Returns when all of them have exited
    (or were sent SIGKILL and waited for).
    """
    import psutil

    try:
        descendants = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        descendants = []
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)  # a session leader's group id is its pid
        except (ProcessLookupError, PermissionError):
            pass
        if proc.poll() is None:
            try:
                proc.send_signal(sig)
            except ProcessLookupError:
                pass
        try:
            proc.wait(timeout=grace_s)
            break
        except subprocess.TimeoutExpired:
            continue
    kill_processes(descendants, grace_s=grace_s)
