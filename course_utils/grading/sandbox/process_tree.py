"""Processes of a submission: the subreaper, the process tree, its memory, and killing it.

Linux only for the strong guarantees (``prctl`` child subreaper and parent-death
signal, ``/proc`` children lists); elsewhere the tree is found with psutil and
orphans may escape.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable

import psutil

from course_utils._procs import kill_processes


def _prctl(option: int, value: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux
        pass


def become_subreaper() -> None:
    _prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: orphans below us are re-parented to us


def become_subreaper_and_follow_parent() -> None:
    become_subreaper()
    _prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the grader


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_PROC_CHILDREN = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def child_pids(pid: int) -> list[int]:
    """The children of ``pid`` (from /proc: cheap enough ten times a second)."""
    if not _PROC_CHILDREN:
        try:
            return [p.pid for p in psutil.Process(pid).children()]
        except psutil.Error:
            return []
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(x) for x in fh.read().split())
        except (OSError, ValueError):
            pass
    return out


def descendant_pids() -> list[int]:
    """Every process below this one. Reads /proc/PID/task/TID/children: a psutil scan of
    all processes costs ~25 ms, too much ten times a second on a busy machine."""
    if not _PROC_CHILDREN:
        try:
            return [p.pid for p in psutil.Process().children(recursive=True)]
        except psutil.Error:
            return []
    found: list[int] = []
    todo = [os.getpid()]
    while todo:
        kids = child_pids(todo.pop())
        found.extend(kids)
        todo.extend(kids)
    return found


def rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        try:
            return psutil.Process(pid).memory_info().rss
        except psutil.Error:
            return 0


def descendants() -> list[psutil.Process]:
    procs = []
    for pid in descendant_pids():
        try:
            procs.append(psutil.Process(pid))
        except psutil.Error:
            pass
    return procs


def kill_descendants(rounds: int = 5) -> int:
    """SIGKILL every process below this one, again until none is left (some may fork
    meanwhile); returns how many were found. The killing itself is :mod:`course_utils._procs`'s.
    """
    found = 0
    for _ in range(rounds):
        procs = descendants()
        if not procs:
            break
        found += len(procs)
        kill_processes(procs, grace_s=0)
    return found


def reap_zombies(keep: Callable[[], set[int]] = set) -> int:
    """Reap this process's children that have exited, but those in ``keep()`` (whose exit
    status someone waits for): orphans re-parented to a subreaper are never waited for,
    and a fork loop of them would use up the machine's process ids."""
    reaped = 0
    for pid in child_pids(os.getpid()):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state == "Z" and pid not in keep():
            try:
                reaped += os.waitpid(pid, os.WNOHANG)[0] == pid
            except ChildProcessError:
                pass
    return reaped


class Watchdog(threading.Thread):
    """Kills the whole tree when its memory passes the limit, or its process count ``max_procs``.

    Memory is the resident set of every process plus ``extra()`` (a sandbox's tmpfs);
    exited orphans are reaped on the way (but ``keep()``).
    """

    def __init__(
        self,
        limit_mb: float,
        interval: float = 0.1,
        *,
        extra: Callable[[], int] = int,
        max_procs: int | None = None,
        keep: Callable[[], set[int]] = set,
    ):
        super().__init__(daemon=True)
        self.limit = limit_mb * 2**20
        self.interval = interval
        self.extra, self.max_procs, self.keep = extra, max_procs, keep
        self.tripped: str | None = None
        self.peak = 0
        self.seen: set[int] = set()
        self._stop = threading.Event()

    def run(self) -> None:
        while not self._stop.wait(self.interval):
            reap_zombies(self.keep)
            pids = descendant_pids()
            total = sum(rss_bytes(pid) for pid in pids) + self.extra()
            self.seen.update(pids)
            self.peak = max(self.peak, total)
            over = None if self.tripped is not None else self._over(total, len(pids))
            if over:
                # Killed first, then told: whoever sees ``tripped`` finds the tree gone.
                kill_descendants()
                self.tripped = over

    def _over(self, total: int, count: int) -> str | None:
        if total > self.limit:
            return (
                f"resident memory reached {total / 2**20:.0f} MB "
                f"(limit {self.limit / 2**20:.0f} MB)"
            )
        if self.max_procs is not None and count > self.max_procs:
            return f"{count} processes were running (limit {self.max_procs})"
        return None

    def stop(self) -> None:
        self._stop.set()
