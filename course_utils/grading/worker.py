"""Runs one submission's cells in a fresh kernel: ``python -m course_utils.grading.worker JOB``.

The worker is a process of its own (its own session, started by the grader),
marked as the *child subreaper* of everything below it, so processes that the
student's code starts, even in a new session, stay its descendants and are
killed at the end. For each cell it enforces a per-cell timeout (interrupt,
then kill), the total deadline, and a watchdog on the resident memory of the
whole process tree. A kernel that dies or hangs is replaced by a fresh one in
which the master's setup cells and the student's cells run again (tests are
not re-run), so one runaway exercise does not cost the others. Progress is
written to the result file after every cell.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import signal
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from course_utils._files import write_atomic
from course_utils.grading.procs import (
    Watchdog,
    become_subreaper_and_follow_parent,
    descendant_pids,
    kill_descendants,
)

MAX_RESTARTS = 3
PROBE_GRACE_S = 3.0
CELL_OUTPUT_CHARS = 100_000
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def clean_text(text: str) -> str:
    return _ANSI.sub("", text)


def output_from_msg(msg: dict) -> dict:
    """A notebook output from an IOPub message (nbformat 4)."""
    kind, content = msg["msg_type"], msg["content"]
    if kind == "stream":
        return {
            "output_type": "stream",
            "name": content.get("name", "stdout"),
            "text": content.get("text", ""),
        }
    if kind == "error":
        return {
            "output_type": "error",
            "ename": content.get("ename", ""),
            "evalue": content.get("evalue", ""),
            "traceback": content.get("traceback", []),
        }
    out = {
        "output_type": kind,
        "data": content.get("data", {}),
        "metadata": content.get("metadata", {}),
    }
    if kind == "execute_result":
        out["execution_count"] = content.get("execution_count")
    return out


def _drain(fd: int, tail: deque) -> None:
    try:
        while chunk := os.read(fd, 65536):
            tail.append(chunk.decode("utf-8", "replace")[-2000:])
    except OSError:
        pass
    finally:
        os.close(fd)


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _death_cause(km, watchdog: Watchdog) -> str:
    if watchdog.tripped:
        return "memory limit: " + watchdog.tripped
    proc = getattr(getattr(km, "provisioner", None), "process", None)
    code = proc.poll() if proc is not None else None
    if code is None:
        return "the kernel stopped answering"
    if code < 0:
        sig = -code
        if sig == signal.SIGXCPU:
            return "CPU-time limit reached (SIGXCPU)"
        if sig == signal.SIGSEGV:
            return "the kernel crashed with a segmentation fault (SIGSEGV)"
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"the kernel was killed by signal {name}"
    return f"the kernel process exited with status {code} (os._exit, exit() or a crash)"


class Worker:
    def __init__(self, job: dict[str, Any]):
        self.job = job
        self.cells: list[dict] = job["cells"]
        self.results: list[dict] = [
            {"status": "not run", "outputs": []} for _ in self.cells
        ]
        self.events: list[dict] = []
        self.kernel_log: deque = deque(maxlen=40)
        self.km = None
        self.kc = None
        self.canary = "not run"
        self.start = time.monotonic()
        self.deadline = self.start + float(job["total_timeout"])
        self.watchdog = Watchdog(float(job["memory_mb"]))

    # -------------------------------------------------------------- bookkeeping
    def save(self, done: bool = False) -> None:
        data = {
            "cells": self.results,
            "events": self.events,
            "canary": self.canary,
            "seconds": time.monotonic() - self.start,
            "peak_rss_mb": self.watchdog.peak / 2**20,
            "processes_seen": len(self.watchdog.seen.copy() | set(descendant_pids())),
            "kernel_log": "".join(self.kernel_log)[-4000:],
            "done": done,
        }
        path = Path(self.job["result_path"])
        write_atomic(path, json.dumps(data))

    def event(self, kind: str, cell: int | None, detail: str) -> None:
        self.events.append({"kind": kind, "cell": cell, "detail": detail})

    # ------------------------------------------------------------------- kernel
    async def start_kernel(self) -> bool:
        from jupyter_client import AsyncKernelManager
        from jupyter_client.kernelspec import KernelSpecManager

        ksm = KernelSpecManager(kernel_dirs=[self.job["kernel_dir"]])
        self.km = AsyncKernelManager(
            kernel_name="course-grader", kernel_spec_manager=ksm
        )
        env = dict(self.job["env"])
        # The kernel's own stdout/stderr (C-level prints, warnings) go to a pipe we drain
        # into a bounded tail. Our own pipe, not Popen's: children that inherit it and
        # live on must not block the kernel's clean-up (Popen closes its pipes on wait).
        read_fd, write_fd = os.pipe()
        threading.Thread(
            target=_drain, args=(read_fd, self.kernel_log), daemon=True
        ).start()
        try:
            try:
                await self.km.start_kernel(
                    env=env, cwd=self.job["cwd"], stdout=write_fd, stderr=write_fd
                )
            finally:
                os.close(write_fd)
            self.kc = self.km.client()
            self.kc.start_channels()
            wait = max(5.0, min(60.0, self.deadline - time.monotonic()))
            await self.kc.wait_for_ready(timeout=wait)
            await self.warm_up()
        except Exception as err:  # noqa: BLE001 - any start failure is reported, not raised
            self.event(
                "kernel",
                None,
                f"the kernel could not start: {type(err).__name__}: {err}"[:300],
            )
            await self.kill_kernel()
            return False
        return True

    async def warm_up(self) -> None:
        """Wait until IOPub delivers (a new subscriber misses the first messages)."""
        assert self.kc is not None
        for _ in range(50):
            msg_id = self.kc.execute("", silent=True, store_history=False)
            end = time.monotonic() + 0.2
            while time.monotonic() < end:
                try:
                    msg = await self.kc.get_iopub_msg(timeout=0.05)
                except queue.Empty:
                    continue
                if (
                    msg["parent_header"].get("msg_id") == msg_id
                    and msg["msg_type"] == "status"
                ):
                    return

    async def kill_kernel(self) -> None:
        if self.kc is not None:
            try:
                self.kc.stop_channels()
            except Exception:  # noqa: BLE001
                pass
            self.kc = None
        if self.km is not None:
            try:
                await asyncio.wait_for(self.km.shutdown_kernel(now=True), 10)
            except Exception:  # noqa: BLE001
                pass
            self.km = None
        kill_descendants()

    async def alive(self) -> bool:
        try:
            return bool(self.km is not None and await self.km.is_alive())
        except Exception:  # noqa: BLE001
            return False

    # ---------------------------------------------------------------- execution
    async def run_cell(
        self,
        source: str,
        timeout: float,
        store_history: bool = True,
        record: dict | None = None,
    ) -> dict:
        """Execute one cell; returns a record with status ok/error/timeout/died."""
        record = record if record is not None else {"outputs": []}
        outputs: list = record.setdefault("outputs", [])
        size = 0
        truncated = False
        assert self.kc is not None
        msg_id = self.kc.execute(
            source, store_history=store_history, allow_stdin=False, stop_on_error=False
        )
        started = time.monotonic()
        end = started + timeout
        reply = None
        reply_at = started
        idle = False
        last_check = started
        import zmq
        import zmq.asyncio

        poller = zmq.asyncio.Poller()
        iopub, shell = self.kc.iopub_channel.socket, self.kc.shell_channel.socket
        poller.register(iopub, zmq.POLLIN)
        poller.register(shell, zmq.POLLIN)
        while not (reply is not None and idle):
            now = time.monotonic()
            if reply is not None and now - reply_at > 2.0:
                break  # reply without the idle status: do not wait for ever
            if now >= end:
                record.update(status="timeout", seconds=now - started)
                return record
            if now - last_check > 0.5:
                last_check = now
                if not await self.alive() or self.watchdog.tripped:
                    record.update(status="died", seconds=now - started)
                    return record
            # wait on both channels at once: no polling latency between messages
            ready = dict(
                await poller.poll(timeout=int(1000 * max(0.0, min(0.5, end - now))))
            )
            if iopub in ready:
                try:
                    msg = await self.kc.get_iopub_msg(timeout=0)
                except queue.Empty:
                    msg = None
                if msg is not None and msg["parent_header"].get("msg_id") == msg_id:
                    kind = msg["msg_type"]
                    if (
                        kind == "status"
                        and msg["content"].get("execution_state") == "idle"
                    ):
                        idle = True
                    elif kind == "clear_output":
                        outputs.clear()
                    elif kind in ("stream", "display_data", "execute_result", "error"):
                        out = output_from_msg(
                            msg
                        )  # nbformat's, without its slow import
                        n = len(json.dumps(out.get("text", out.get("data", ""))))
                        if kind == "error" or size + n <= CELL_OUTPUT_CHARS:
                            outputs.append(out)
                            size += n
                        elif not truncated:
                            truncated = True
                            outputs.append(
                                {
                                    "output_type": "stream",
                                    "name": "stderr",
                                    "text": f"\n[output truncated by the grader after {CELL_OUTPUT_CHARS} characters]\n",
                                }
                            )
            if shell in ready:
                try:
                    msg = await self.kc.get_shell_msg(timeout=0)
                except queue.Empty:
                    msg = None
                if msg is not None and msg["parent_header"].get("msg_id") == msg_id:
                    reply, reply_at = msg["content"], time.monotonic()
        content = reply or {}
        record["seconds"] = time.monotonic() - started
        record["status"] = "ok" if content.get("status") == "ok" else "error"
        if record["status"] == "error":
            record["ename"] = str(content.get("ename", "Error"))
            record["evalue"] = clean_text(str(content.get("evalue", "")))[:2000]
            record["traceback"] = clean_text(
                "\n".join(content.get("traceback", []) or [])
            )[-6000:]
        if any(p.get("source") == "ask_exit" for p in content.get("payload", []) or []):
            record["exit_requested"] = True
        return record

    async def probe(self) -> bool:
        """After an interrupt: does the kernel answer a trivial cell?"""
        if not await self.alive():
            return False
        rec = await self.run_cell("pass", PROBE_GRACE_S, store_history=False)
        return rec["status"] in ("ok", "error")

    def cell_timeout(self) -> float:
        return min(float(self.job["timeout"]), self.deadline - time.monotonic())

    async def replay(self, upto: int) -> bool:
        for j in range(upto):
            cell, res = self.cells[j], self.results[j]
            if cell["role"] not in ("context", "solution") or res.get("status") not in (
                "ok",
                "error",
            ):
                continue
            budget = self.cell_timeout()
            if budget <= 0:
                return False
            rec = await self.run_cell(cell["source"], budget)
            if rec["status"] not in ("ok", "error") or rec.get("exit_requested"):
                self.event(
                    "restore", j, f"cell {j} failed again while the kernel was restored"
                )
                return False
        return True

    async def run(self) -> None:
        self.watchdog.start()
        self.save()
        ok = await self.start_kernel()
        restarts = 0
        i = 0
        while ok and i < len(self.cells):
            cell, res = self.cells[i], self.results[i]
            budget = self.cell_timeout()
            if budget <= 0:
                self.event(
                    "total-timeout",
                    i,
                    f"total time limit of {self.job['total_timeout']:g} s reached",
                )
                break
            per_cell = budget >= float(self.job["timeout"])
            rec = await self.run_cell(
                cell["source"], budget, store_history=not cell.get("hidden"), record=res
            )
            broken = None
            if rec["status"] == "timeout":
                kind = "timeout" if per_cell else "total-timeout"
                limit = (
                    f"{self.job['timeout']:g} s per cell"
                    if per_cell
                    else f"{self.job['total_timeout']:g} s in all"
                )
                await self.km.interrupt_kernel()  # type: ignore[union-attr]
                if await self.probe():
                    rec["detail"] = f"timed out ({limit}); interrupted"
                    self.event(kind, i, rec["detail"])
                else:
                    rec["detail"] = (
                        f"timed out ({limit}) and ignored the interrupt; kernel killed"
                    )
                    self.event(kind, i, rec["detail"])
                    broken = "timeout"
                if kind == "total-timeout":
                    self.save()
                    i += 1
                    break
            elif rec["status"] == "died" or rec.get("exit_requested"):
                await asyncio.sleep(0.2)
                rec["status"] = "died"
                rec["detail"] = (
                    "the code called exit()/quit(), which stops the kernel"
                    if rec.get("exit_requested")
                    else _death_cause(self.km, self.watchdog)
                )
                self.event(
                    "memory" if self.watchdog.tripped else "died", i, rec["detail"]
                )
                broken = "died"
            self.save()
            i += 1
            if broken:
                await self.kill_kernel()
                self.watchdog.tripped = None
                restarts += 1
                if restarts > MAX_RESTARTS:
                    self.event(
                        "gave-up",
                        i,
                        f"the kernel was lost {restarts} times; the rest was not run",
                    )
                    ok = False
                    break
                ok = await self.start_kernel() and await self.replay(i)
                if ok:
                    self.event(
                        "restart",
                        i,
                        "a fresh kernel re-ran the setup and your code, then went on",
                    )
                else:
                    self.event(
                        "gave-up",
                        i,
                        "the kernel could not be restored; the rest was not run",
                    )
        for j in range(i, len(self.cells)):
            self.results[j].setdefault("status", "not run")
        if ok and i >= len(self.cells) and await self.alive():
            token = f"course-grader-canary-{os.urandom(8).hex()}"
            rec = await self.run_cell(
                f"raise AssertionError({token!r})", 10.0, store_history=False
            )
            self.canary = (
                "ok"
                if rec["status"] == "error"
                and rec.get("ename") == "AssertionError"
                and token in rec.get("evalue", "")
                else "tampered"
            )
        kernel_pid = getattr(getattr(self.km, "provisioner", None), "pid", None)
        leftovers = [
            pid for pid in descendant_pids() if pid != kernel_pid and _running(pid)
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
        kill_descendants()
        self.save(done=True)


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[0]).read_text())
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
