"""One Jupyter kernel, spoken to over its protocol: start it, run a cell, interrupt it, kill it.

A :class:`Session` knows nothing about grading. It starts a kernel from a
kernelspec folder (with the environment and working folder it is given), waits
until the kernel answers, runs one cell at a time with a timeout and collects
its outputs as nbformat 4 dicts (capped in size), interrupts a running cell
and tells whether the kernel recovered, explains how a dead kernel died from
its exit status, and kills the kernel with every process below it. The
kernel's own stdout and stderr are kept as a short tail (``log``).
"""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from course_utils.grading.sandbox.outputs import (
    CELL_OUTPUT_CHARS,
    OUTPUT_TYPES,
    Outputs,
    finish,
)

PROBE_GRACE_S = 3.0
WARM_UP_S = 10.0  # how long a new kernel's IOPub may take to deliver
# Larger messages are dropped by ZeroMQ before they are read (the peer is disconnected
# and reconnects): a kernel that skips its own cap cannot make the worker hold them.
MAX_MESSAGE_BYTES = 8 * 2**20
SEND_TIMEOUT_MS = 5_000


def describe_exit(code: int | None) -> str:
    """Why a kernel process ended, from its exit status (``None``: it did not end)."""
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


def _drain(fd: int, tail: deque) -> None:
    try:
        while chunk := os.read(fd, 65536):
            tail.append(chunk.decode("utf-8", "replace")[-2000:])
    except OSError:
        pass
    finally:
        os.close(fd)


class Session:
    """One kernel from the kernelspec ``kernel_name`` found in ``kernel_dirs``.

    ``abort`` is polled twice a second while a cell runs; when it returns true
    (say, a memory watchdog killed the kernel's processes) the cell ends as
    ``died`` without waiting for its timeout. ``log`` (a bounded deque) receives
    the tail of the kernel's own stdout and stderr.
    """

    def __init__(
        self,
        kernel_name: str,
        kernel_dirs: list[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        abort: Callable[[], bool] | None = None,
        output_limit: int = CELL_OUTPUT_CHARS,
        log: deque | None = None,
        ipc: str | None = None,
        sandboxed: bool = False,
    ):
        self.kernel_name, self.kernel_dirs = kernel_name, list(kernel_dirs)
        self.env, self.cwd = dict(env or os.environ), cwd
        self.abort = abort or (lambda: False)
        self.output_limit = output_limit
        self.log: deque = log if log is not None else deque(maxlen=40)
        self.ipc, self.sandboxed = ipc, sandboxed
        self.km: Any = None
        self.kc: Any = None
        self.lost: Any = None  # a monitor: the shell connection was dropped

    # ------------------------------------------------------------ lifetime
    async def start(self, ready_timeout: float = 60.0) -> None:
        """Start the kernel and wait until it answers; on failure kill it and raise."""
        from jupyter_client import AsyncKernelManager
        from jupyter_client.kernelspec import KernelSpecManager

        ksm = KernelSpecManager(kernel_dirs=self.kernel_dirs)
        # ipc: Unix sockets in a folder shared with the sandbox (no TCP across its
        # network namespace); the connection file lies beside them.
        where = (
            {"transport": "ipc", "connection_file": f"{self.ipc}/kernel.json"}
            if self.ipc
            else {}
        )
        self.km = AsyncKernelManager(
            kernel_name=self.kernel_name, kernel_spec_manager=ksm, **where
        )
        # The kernel's own stdout/stderr (C-level prints, warnings) go to a pipe drained
        # into a bounded tail. Our own pipe, not Popen's: children that inherit it and
        # live on must not block the kernel's clean-up (Popen closes its pipes on wait).
        read_fd, write_fd = os.pipe()
        threading.Thread(target=_drain, args=(read_fd, self.log), daemon=True).start()
        try:
            try:
                await self.km.start_kernel(
                    env=self.env, cwd=self.cwd, stdout=write_fd, stderr=write_fd
                )
            finally:
                os.close(write_fd)
            self.kc = self.km.client()
            zmq = _zmq()
            self.kc.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
            # a connection dropped for such a message is not restored: never block on it
            self.kc.context.setsockopt(zmq.SNDTIMEO, SEND_TIMEOUT_MS)
            self.kc.start_channels()
            shell = self.kc.shell_channel.socket
            self.lost = shell.get_monitor_socket(zmq.EVENT_DISCONNECTED)
            await self._wait_for_ready(ready_timeout)
            await self._warm_up()
        except BaseException:
            await self.kill()
            raise

    async def _wait_for_ready(self, timeout: float) -> None:
        """Until the kernel answers ``kernel_info`` on the shell channel.

        jupyter_client's ``wait_for_ready`` does this and then waits for 0.2 s of
        silence on IOPub, on every start; :meth:`_warm_up` waits for IOPub instead,
        and :meth:`run_cell` reads only its own cell's messages, so nothing left over
        from the start can be taken for a cell's output.
        """
        deadline = time.monotonic() + timeout
        while True:
            self.kc.kernel_info()
            try:
                msg = await self.kc.get_shell_msg(
                    timeout=min(1.0, max(0.05, deadline - time.monotonic()))
                )
            except queue.Empty:
                msg = None
            if msg is not None and msg["msg_type"] == "kernel_info_reply":
                handle = getattr(self.kc, "_handle_kernel_info_reply", None)
                if handle is not None:
                    handle(msg)
                return
            if not await self.km.is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")

    async def _warm_up(self, patience: float = WARM_UP_S) -> None:
        """Wait until IOPub delivers (a new subscriber misses the first messages).

        An empty cell is sent, and sent again after a wait that doubles from 10 ms to
        0.2 s; a status message of any of them shows IOPub delivering. (One fixed wait
        of 0.2 s cost most kernels 0.2 s, since the first cell's messages are usually
        missed.)
        """
        sent: set[str] = set()
        wait, give_up = 0.01, time.monotonic() + patience
        while time.monotonic() < give_up:
            sent.add(self.kc.execute("", silent=True, store_history=False))
            end = time.monotonic() + wait
            while (left := end - time.monotonic()) > 0:
                try:
                    msg = await self.kc.get_iopub_msg(timeout=left)
                except queue.Empty:
                    break
                if (
                    msg["parent_header"].get("msg_id") in sent
                    and msg["msg_type"] == "status"
                ):
                    return
            wait = min(0.2, 2 * wait)

    @property
    def pid(self) -> int | None:
        """The process started for the kernel (``None`` before start and after kill):
        the kernel itself, or the sandbox that runs it."""
        return getattr(getattr(self.km, "provisioner", None), "pid", None)

    def own_pids(self) -> set[int]:
        """The kernel's process and, in a sandbox, the sandbox's (not the student's)."""
        from course_utils.grading.sandbox.isolation import inner_pids

        if self.pid is None:
            return set()
        inner = inner_pids(self.pid) if self.sandboxed else ()
        return {self.pid, *(p for p in inner if p is not None)}

    def kernel_pid(self) -> int | None:
        """The kernel's own process (in a sandbox, the first one bwrap's init started)."""
        from course_utils.grading.sandbox.isolation import inner_pids

        if not self.sandboxed or self.pid is None:
            return self.pid
        return inner_pids(self.pid)[1]

    def exit_code(self) -> int | None:
        """The kernel process's exit status, ``None`` while it runs (or is unknown)."""
        from course_utils.grading.sandbox.isolation import exit_status

        proc = getattr(getattr(self.km, "provisioner", None), "process", None)
        code = proc.poll() if proc is not None else None
        return exit_status(code) if self.sandboxed else code

    async def alive(self) -> bool:
        try:
            return bool(self.km is not None and await self.km.is_alive())
        except Exception:  # noqa: BLE001
            return False

    async def kill(self) -> None:
        """Kill the kernel and every process below it at once; safe to call twice."""
        from course_utils._procs import kill_processes

        below = _descendants(self.pid)
        if self.kc is not None:
            try:
                if self.lost is not None:
                    self.kc.shell_channel.socket.disable_monitor()
                    self.lost.close(linger=0)
                self.kc.stop_channels()
            except Exception:  # noqa: BLE001
                pass
            self.kc = None
        if self.km is not None:
            await self._kill_and_reap()
            try:
                await asyncio.wait_for(self.km.shutdown_kernel(now=True), 10)
            except Exception:  # noqa: BLE001
                pass
            self.km = None
        kill_processes(below, grace_s=0)

    async def _kill_and_reap(self, within: float = 2.0) -> None:
        """SIGKILL the kernel's process (group) and wait for it in 5 ms steps.

        ``shutdown_kernel(now=True)`` then finds it gone; on its own it polls every
        0.1 s, and a process killed a moment before is never gone at the first poll.
        """
        provisioner = getattr(self.km, "provisioner", None)
        proc = getattr(provisioner, "process", None)
        if proc is None:
            return
        try:
            await provisioner.kill()
        except Exception:  # noqa: BLE001 - shutdown_kernel below tries again
            return
        end = time.monotonic() + within
        while proc.poll() is None and time.monotonic() < end:
            await asyncio.sleep(0.005)

    # ----------------------------------------------------------- execution
    async def run_cell(
        self,
        source: str,
        timeout: float,
        *,
        store_history: bool = True,
        record: dict | None = None,
    ) -> dict:
        """Execute one cell; the record gets ``status`` ok, error, timeout or died.

        ``record`` (updated in place) also gets ``outputs``, ``seconds`` and, for an
        error, ``ename``, ``evalue`` and ``traceback``; ``exit_requested`` when the
        cell called ``exit()``. A cell that times out is still running: interrupt it.
        """
        record = record if record is not None else {}
        outputs = Outputs(record.setdefault("outputs", []), self.output_limit)
        started = time.monotonic()
        try:
            msg_id = self.kc.execute(
                source,
                store_history=store_history,
                allow_stdin=False,
                stop_on_error=False,
            )
        except _zmq().Again:  # the kernel's connection is lost
            record.update(status="died", seconds=time.monotonic() - started)
            return record
        end, last_check = started + timeout, started
        reply, reply_at, idle = None, started, False
        poller, iopub, shell = self._poller()
        while not (reply is not None and idle):
            now = time.monotonic()
            if reply is not None and now - reply_at > 2.0:
                break  # a reply without the idle status: do not wait for ever
            if now >= end:
                record.update(status="timeout", seconds=now - started)
                return record
            if now - last_check > 0.5:
                last_check = now
                if self.abort() or not await self.alive():
                    record.update(status="died", seconds=now - started)
                    return record
            # wait on both channels at once: no polling latency between messages
            wait_ms = int(1000 * max(0.0, min(0.5, end - now)))
            ready = dict(await poller.poll(timeout=wait_ms))
            if iopub in ready:
                msg = await _next(self.kc.get_iopub_msg)
                idle = self._on_iopub(msg, msg_id, outputs) or idle
            if self.lost in ready:  # a message over the size limit, or a dead kernel
                record.update(status="died", lost=True, seconds=now - started)
                return record
            if shell in ready:
                msg = await _next(self.kc.get_shell_msg)
                if msg is not None and msg["parent_header"].get("msg_id") == msg_id:
                    reply, reply_at = msg["content"], time.monotonic()
        return finish(record, reply, started)

    def _poller(self):
        """A poller on the IOPub and shell sockets: wait for either at once."""
        zmq = _zmq()

        poller = zmq.asyncio.Poller()
        iopub, shell = self.kc.iopub_channel.socket, self.kc.shell_channel.socket
        poller.register(iopub, zmq.POLLIN)
        poller.register(shell, zmq.POLLIN)
        poller.register(self.lost, zmq.POLLIN)
        return poller, iopub, shell

    @staticmethod
    def _on_iopub(msg: dict | None, msg_id: str, outputs: Outputs) -> bool:
        """Collect an output of our cell; true when the kernel went idle after it."""
        if msg is None or msg["parent_header"].get("msg_id") != msg_id:
            return False
        kind = msg["msg_type"]
        if kind == "status":
            return msg["content"].get("execution_state") == "idle"
        if kind == "clear_output" or kind in OUTPUT_TYPES:
            outputs.add(msg)
        return False

    async def interrupt(self, grace: float = PROBE_GRACE_S) -> bool:
        """Interrupt the running cell (SIGINT); true when a trivial cell then runs within ``grace``."""
        try:
            if (
                self.sandboxed
            ):  # bwrap would die of a SIGINT to its group: the kernel's group
                os.killpg(os.getpgid(self.kernel_pid() or -1), signal.SIGINT)
            else:
                await self.km.interrupt_kernel()
        except Exception:  # noqa: BLE001 - a dead kernel cannot be interrupted
            return False
        if not await self.alive():
            return False
        rec = await self.run_cell("pass", grace, store_history=False)
        return rec["status"] in ("ok", "error")


async def _next(get) -> dict | None:
    try:
        return await get(timeout=0)
    except queue.Empty:
        return None


def _zmq():
    import zmq
    import zmq.asyncio

    return zmq


def _descendants(pid: int | None) -> list:
    if pid is None:
        return []
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []
