"""The grading policy for one submission: ``python -m course_utils.grading.batch.worker JOB``.

The worker is a process of its own (its own session, started by the grader),
marked as the *child subreaper* of everything below it, so processes that the
student's code starts, even in a new session, stay its descendants and are
killed at the end. It runs the job's cells in order in a kernel
(:class:`~course_utils.grading.sandbox.session.Session`), each under the per-cell
timeout and the total deadline, with a watchdog on the resident memory of the
whole process tree. A cell that times out is interrupted; a kernel that dies
or ignores the interrupt is replaced by a fresh one in which the master's
setup cells and the student's cells that completed run again (tests are not
re-run), so one runaway exercise does not cost the others. After the last
cell a canary that must fail checks that the kernel was not tampered with.
Progress is written to the result file after every cell. The worker first pins itself
to the cores of its slot in the run (``job["cpus"]``), which its kernel inherits.

Every kernel first runs the grader's guard (:data:`GUARD`): output beyond twice
the worker's cap in one cell is dropped inside the kernel as it is written (a
thread printing for ever, a 37 MB image: never held in memory, so never a memory
limit), and a SIGINT interrupts a cell only when the worker announced it (a file
in the kernel's private folder): a submission that signals its own process group
interrupts nothing, and the grader's flags say so.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from course_utils._files import write_atomic
from course_utils.grading.policy.scoring import SELF_INTERRUPT_MARK
from course_utils.grading.sandbox import isolation
from course_utils.grading.sandbox.environment import KERNEL_NAME
from course_utils.grading.sandbox.outputs import CELL_OUTPUT_CHARS
from course_utils.grading.sandbox.process_tree import (
    Watchdog,
    become_subreaper_and_follow_parent,
    descendant_pids,
    kill_descendants,
)
from course_utils.grading.sandbox.session import (
    MAX_MESSAGE_BYTES,
    Session,
    describe_exit,
)

MAX_RESTARTS = 3
MAX_PROCS = 512  # processes below the worker at once (zombies included)
CANARY_TIMEOUT_S = 10.0
DEATH_GRACE_S = 0.2  # for the dead kernel's exit status to arrive
# A lost connection with no exit status yet: a kernel that died and is not reaped yet
# (slow on a busy machine), or a live one that sent an oversized message. Wait this
# long for an exit status before calling it the message.
DEATH_WAIT_S = 5.0
OUTPUT_BUDGET = 2 * CELL_OUTPUT_CHARS  # characters of output a cell may send at all
INTERRUPT_MARK = "course-grader-interrupt"  # the worker's announcement of its SIGINT

GUARD = """def _course_grader_guard(marker, budget):
    import os, signal, sys
    shell = get_ipython()
    # Tracebacks as Python prints them, a line a frame: IPython's default reads and
    # highlights the source around every frame, 30-80 ms an error on one core.
    shell.InteractiveTB.set_mode(mode="Plain")
    used, told = {}, set()
    out, err = sys.stdout, sys.stderr
    write_err = type(err).write.__get__(err)

    def note(text):
        try:
            write_err(text)
        except Exception:  # a stream the code broke: the grader's note is not needed
            pass

    def cell(source):
        return (getattr(source, "parent_header", None) or {}).get("msg_id")

    def over(key, n):
        while len(used) > 64:
            used.pop(next(iter(used)))
        used[key] = used.get(key, 0) + n
        return used[key] > budget

    def once(tag, key, text):
        if (tag, key) not in told:
            told.add((tag, key))
            note(text)

    def limit(stream):
        write = type(stream).write.__get__(stream)  # the stream's own, under any wrapper

        def limited(text):
            key = cell(stream)
            if isinstance(text, str) and over(key, len(text)):
                once("out", key, "\\n[course grader: output dropped after %d characters "
                     "in this cell]\\n" % budget)
                return len(text)
            return write(text)

        # IPython wraps write for each cell to keep every output in memory (its output
        # history, unbounded): a property makes the stream keep this write, under no
        # wrapper. Closing it does nothing: the tests print through it after the code.
        guarded = type("Guarded", (type(stream),), {
            "write": property(lambda self: limited, lambda self, value: None),
            "close": lambda self: None})
        stream.__class__ = guarded

    limit(out)
    limit(err)

    def restore(*args):  # before every cell: streams the code replaced come back
        sys.stdout, sys.stderr = out, err

    shell.events.register("pre_run_cell", restore)
    pub = shell.display_pub
    publish = pub.publish

    def limited_publish(data, *args, **kwargs):
        key = cell(pub)
        n = sum(len(v) if isinstance(v, str) else len(repr(v)) for v in (data or {}).values())
        if over(key, n):
            once("display", key, "\\n[course grader: output dropped: a display of %d "
                 "characters, over %d in this cell]\\n" % (n, budget))
            return None
        return publish(data, *args, **kwargs)

    pub.publish = limited_publish
    kernel = getattr(shell, "kernel", None)
    if not marker or kernel is None:
        return

    def on_sigint(signum, frame):
        try:
            os.unlink(marker)
        except OSError:
            once("sigint", cell(err), "\\n%s\\n" % SELF_MARK)
            return
        raise KeyboardInterrupt

    def pre_handler_hook():
        kernel.saved_sigint_handler = signal.signal(signal.SIGINT, on_sigint)

    kernel.pre_handler_hook = pre_handler_hook
""".replace("SELF_MARK", repr(SELF_INTERRUPT_MARK))


FORGET = """def _course_grader_forget(digest):
    import hashlib, linecache, sys
    for key, entry in list(linecache.cache.items()):
        text = "".join("".join(entry[2]).split()) if len(entry) > 2 else ""
        if hashlib.sha256(text.encode()).hexdigest() == digest:
            del linecache.cache[key]
    sys.last_type = sys.last_value = sys.last_traceback = sys.last_exc = None
_course_grader_forget({digest!r})
del _course_grader_forget
"""


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


class Worker:
    """Runs a job's cells: order, restarts, replay, canary, and the result file.

    ``new_session`` makes a kernel session (default: a :class:`Session` of the job's
    kernelspec); ``watchdog``, ``list_pids`` and ``kill_pids`` watch and clean the
    process tree below this process. Tests replace them with fakes.
    """

    def __init__(
        self,
        job: dict[str, Any],
        *,
        new_session: Callable[[], Any] | None = None,
        watchdog: Any = None,
        list_pids: Callable[[], list[int]] = descendant_pids,
        kill_pids: Callable[[], object] = kill_descendants,
    ):
        self.job = job
        self.cells: list[dict] = job["cells"]
        self.results: list[dict] = [
            {"status": "not run", "outputs": []} for _ in self.cells
        ]
        self.events: list[dict] = []
        self.kernel_log: deque = deque(maxlen=40)
        self.canary = "not run"
        self.start = time.monotonic()
        self.deadline = self.start + float(job["total_timeout"])
        self.watchdog = watchdog or Watchdog(
            float(job["memory_mb"]),
            extra=self._tmpfs_bytes,
            max_procs=MAX_PROCS,
            keep=self._own_pids,
        )
        self.new_session = new_session or self._grading_session
        self.list_pids, self.kill_pids = list_pids, kill_pids
        self.session: Any = None

    def _grading_session(self) -> Session:
        return Session(
            KERNEL_NAME,
            [self.job["kernel_dir"]],
            env=self.job["env"],
            cwd=self.job.get("cwd"),
            abort=lambda: self.watchdog.tripped is not None,
            log=self.kernel_log,
            ipc=self.job.get("ipc"),
            sandboxed=bool(self.job.get("sandbox")),
        )

    def _own_pids(self) -> set[int]:
        session = self.session
        return session.own_pids() if session is not None else set()

    def _tmpfs_bytes(self) -> int:
        """What the sandbox holds in its ``/tmp`` and ``/dev/shm`` and in the ipc folder
        (the one folder of the host it can write): counted as memory."""
        session = self.session
        if session is None or not self.job.get("sandbox"):
            return 0
        pid = session.kernel_pid()
        used = isolation.tmpfs_bytes(pid) if pid is not None else 0
        return used + isolation.folder_bytes(self.job["ipc"])

    # ---------------------------------------------------------- bookkeeping
    def save(self, done: bool = False) -> None:
        """Write the result file (atomically): read by the grader, ``done`` at the end."""
        data = {
            "cells": self.results,
            "events": self.events,
            "canary": self.canary,
            "seconds": time.monotonic() - self.start,
            "peak_rss_mb": self.watchdog.peak / 2**20,
            "processes_seen": len(self.watchdog.seen.copy() | set(self.list_pids())),
            "kernel_log": "".join(self.kernel_log)[-4000:],
            "done": done,
        }
        write_atomic(Path(self.job["result_path"]), json.dumps(data))

    def event(self, kind: str, cell: int | None, detail: str) -> None:
        self.events.append({"kind": kind, "cell": cell, "detail": detail})

    def cell_timeout(self) -> float:
        return min(float(self.job["timeout"]), self.deadline - time.monotonic())

    # --------------------------------------------------------------- kernel
    async def start_kernel(self) -> bool:
        self.session = self.new_session()
        wait = max(5.0, min(60.0, self.deadline - time.monotonic()))
        try:
            await self.session.start(ready_timeout=wait)
        except Exception as err:  # noqa: BLE001 - any start failure is reported, not raised
            detail = f"the kernel could not start: {type(err).__name__}: {err}"
            self.event("kernel", None, detail[:300])
            await self.kill_kernel()
            return False
        await self.guard()
        return True

    def marker(self) -> str | None:
        """The file by which the worker announces its interrupts, in a folder only this
        submission's kernel and the worker share (None: the guard leaves SIGINT alone)."""
        folder = self.job.get("ipc") or self.job.get("cwd")
        return os.path.join(folder, INTERRUPT_MARK) if folder else None

    async def guard(self) -> None:
        """Run the grader's guard in the new kernel, before any other cell."""
        source = f"{GUARD}\n_course_grader_guard({self.marker()!r}, {OUTPUT_BUDGET})\n"
        rec = await self.session.run_cell(
            source + "del _course_grader_guard\n", CANARY_TIMEOUT_S, store_history=False
        )
        if rec.get("status") != "ok":
            detail = f"the grader's guard failed: {rec.get('ename', rec.get('status'))}"
            self.event("guard", None, detail)

    async def interrupt(self) -> bool:
        """Interrupt the running cell, announced (see :meth:`marker`); true when it recovered."""
        marker = self.marker()
        try:
            if marker:
                with open(marker, "w"):
                    pass
            return await self.session.interrupt()
        finally:
            if marker:
                try:
                    os.unlink(marker)
                except OSError:
                    pass

    async def kill_kernel(self) -> None:
        if self.session is not None:
            await self.session.kill()
        self.kill_pids()

    # --------------------------------------------------------------- policy
    async def run(self) -> None:
        self.watchdog.start()
        self.save()
        ok, i = await self.start_kernel(), 0
        if ok:
            ok, i = await self.run_cells()
        for j in range(i, len(self.cells)):
            self.results[j].setdefault("status", "not run")
        if ok and i >= len(self.cells) and await self.session.alive():
            await self.run_canary()
        await self.finish()

    async def run_cells(self) -> tuple[bool, int]:
        """Run every cell in order; (the kernel is still usable, index of the first not run).

        After a cell of an exercise times out, that exercise's later test cells are
        skipped: an endless loop would cost the timeout once per test cell."""
        restarts, i = 0, 0
        timed_out: set[str] = set()
        while i < len(self.cells):
            budget = self.cell_timeout()
            if budget <= 0:
                limit = f"{self.job['total_timeout']:g} s"
                self.event("total-timeout", i, f"total time limit of {limit} reached")
                return True, i
            cell = self.cells[i]
            if cell["role"] == "test" and cell.get("exercise") in timed_out:
                self.results[i].update(
                    status="not run",
                    detail=f"skipped: an earlier cell of exercise "
                    f"{cell['exercise']!r} timed out",
                )
                i += 1
                continue
            broken, stop = await self.run_one(i, budget)
            if self.results[i].get("status") == "timeout" and cell.get("exercise"):
                timed_out.add(cell["exercise"])
            self.save()
            i += 1
            if stop:
                return True, i
            if broken:
                restarts += 1
                if not await self.restart(i, restarts):
                    return False, i
        return True, i

    async def run_one(self, i: int, budget: float) -> tuple[bool, bool]:
        """Run cell ``i``; (the kernel was lost, the total time is up)."""
        cell = self.cells[i]
        per_cell = budget >= float(self.job["timeout"])
        rec = await self.session.run_cell(
            cell["source"],
            budget,
            store_history=not cell.get("hidden"),
            record=self.results[i],
        )
        if rec["status"] == "timeout":
            broken, stop = await self.on_timeout(i, rec, per_cell)
        elif rec["status"] == "died" or rec.get("exit_requested"):
            await self.on_death(i, rec)
            return True, False
        else:
            broken, stop = False, False
        if cell.get("hidden") and not broken:
            await self.forget(cell["source"])
        return broken, stop

    async def forget(self, source: str) -> None:
        """Remove a hidden test from the kernel's ``linecache`` (IPython caches every cell
        there; it is not in ``In``: hidden tests run with ``store_history=False``), and
        the last traceback, whose frames hold it."""
        digest = hashlib.sha256("".join(source.split()).encode()).hexdigest()
        await self.session.run_cell(
            FORGET.format(digest=digest), CANARY_TIMEOUT_S, store_history=False
        )

    async def on_timeout(self, i: int, rec: dict, per_cell: bool) -> tuple[bool, bool]:
        kind = "timeout" if per_cell else "total-timeout"
        limit = (
            f"{self.job['timeout']:g} s per cell"
            if per_cell
            else f"{self.job['total_timeout']:g} s in all"
        )
        recovered = await self.interrupt()
        rec["detail"] = (
            f"timed out ({limit}); interrupted"
            if recovered
            else f"timed out ({limit}) and ignored the interrupt; kernel killed"
        )
        self.event(kind, i, rec["detail"])
        return not recovered, kind == "total-timeout"

    async def on_death(self, i: int, rec: dict) -> None:
        await asyncio.sleep(DEATH_GRACE_S)
        if rec.get("lost"):
            waited = 0.0
            while self.session.exit_code() is None and waited < DEATH_WAIT_S:
                await asyncio.sleep(0.05)
                waited += 0.05
        rec["status"] = "died"
        if rec.get("exit_requested"):
            rec["detail"] = "the code called exit()/quit(), which stops the kernel"
        elif self.watchdog.tripped:
            kind = "memory" if "memory" in self.watchdog.tripped else "process"
            rec["detail"] = f"{kind} limit: " + self.watchdog.tripped
        elif rec.get("lost") and self.session.exit_code() is None:
            rec["detail"] = (
                f"the kernel sent a message over {MAX_MESSAGE_BYTES >> 20} MB "
                "(a huge output or error); its connection was dropped"
            )
        else:
            rec["detail"] = describe_exit(self.session.exit_code())
        self.event("memory" if self.watchdog.tripped else "died", i, rec["detail"])

    async def restart(self, i: int, restarts: int) -> bool:
        """A fresh kernel in the state before cell ``i``; false when the rest must not run."""
        await self.kill_kernel()
        self.watchdog.tripped = None
        if restarts > MAX_RESTARTS:
            detail = f"the kernel was lost {restarts} times; the rest was not run"
            self.event("gave-up", i, detail)
            return False
        if await self.start_kernel() and await self.replay(i):
            detail = "a fresh kernel re-ran the setup and your code, then went on"
            self.event("restart", i, detail)
            return True
        self.event(
            "gave-up", i, "the kernel could not be restored; the rest was not run"
        )
        return False

    async def replay(self, upto: int) -> bool:
        """Re-run the setup and solution cells before ``upto`` that completed (not tests)."""
        for j in range(upto):
            cell, res = self.cells[j], self.results[j]
            if cell["role"] not in ("context", "solution"):
                continue
            if res.get("status") not in ("ok", "error"):
                continue
            budget = self.cell_timeout()
            if budget <= 0:
                return False
            rec = await self.session.run_cell(cell["source"], budget)
            if rec["status"] not in ("ok", "error") or rec.get("exit_requested"):
                detail = f"cell {j} failed again while the kernel was restored"
                self.event("restore", j, detail)
                return False
        return True

    async def run_canary(self) -> None:
        """A cell that must fail; a kernel that reports success was tampered with."""
        token = f"course-grader-canary-{os.urandom(8).hex()}"
        rec = await self.session.run_cell(
            f"raise AssertionError({token!r})", CANARY_TIMEOUT_S, store_history=False
        )
        failed_as_it_must = (
            rec["status"] == "error"
            and rec.get("ename") == "AssertionError"
            and token in rec.get("evalue", "")
        )
        self.canary = "ok" if failed_as_it_must else "tampered"

    async def finish(self) -> None:
        """Kill the kernel and whatever the code left running; the last save."""
        own = self._own_pids()
        leftovers = [
            pid for pid in self.list_pids() if pid not in own and _running(pid)
        ]
        if leftovers:
            self.event(
                "cleanup",
                None,
                f"{len(leftovers)} process(es) started by the code were "
                "still running at the end and were killed",
            )
        await self.kill_kernel()
        self.watchdog.stop()
        self.kill_pids()
        self.save(done=True)


def pin(cpus: list[int] | None) -> None:
    """Run on the cores of this worker's slot (the grader's ``job["cpus"]``): the
    kernel inherits them, and both frameworks size their thread pools from them."""
    if cpus and hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, cpus)
        except (OSError, ValueError):  # a core gone meanwhile: run unpinned
            pass


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[0]).read_text())
    pin(job.get("cpus"))
    become_subreaper_and_follow_parent()
    worker = Worker(job)

    def on_term(signum, frame):  # noqa: ARG001
        kill_descendants()
        os._exit(143)

    signal.signal(signal.SIGTERM, on_term)
    try:
        asyncio.run(worker.run())
    finally:
        kill_descendants()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
