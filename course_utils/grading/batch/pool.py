"""The worker processes of one grading run: one per student, with a backstop, and their orphans.

:class:`Workers` writes a student's job file (the cells to run, the limits,
the kernel's environment, a fresh IPython folder and kernelspec of its own,
which starts the kernel in the :mod:`.isolation` sandbox unless the run is unsafe), starts
``python -m course_utils.grading.batch.worker JOB``
in a session of its own, waits for it with a backstop of the total timeout
plus 90 s, and reads back the worker's result file (with an event saying why
when the worker did not finish). Processes of the run that outlive their
worker are re-parented to the grader (a subreaper) and killed by ``sweep``,
found by the run's id in their environment; ``stop`` kills every worker.

With ``jobs``, each of the run's ``jobs`` slots has its own share of the cores the
grader may use (:func:`core_shares`): a worker sets its CPU affinity to its slot's
share before it starts the kernel, which inherits it, and JAX and PyTorch size their
thread pools from it (``course_utils.contention.cores``), so two kernels on two cores
run one thread each instead of two threads each competing for both.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from course_utils._procs import kill_process_group
from course_utils.grading.sandbox import environment, isolation
from course_utils.grading.sandbox.environment import RUN_ENV, worker_env
from course_utils.grading.sandbox.kernel_process import IPYTHON_ENV, NPROC_ENV

BACKSTOP_S = 90.0  # beyond the total timeout, before a worker is killed
NPROC = 2048  # processes and threads in one sandbox (RLIMIT_NPROC)


def core_shares(jobs: int, cores: list[int] | None = None) -> list[list[int]]:
    """The cores of each of ``jobs`` slots: the usable cores split evenly (the last
    slot takes what is left over), or one core each, shared round, when there are more
    slots than cores."""
    if cores is None:
        cores = sorted(os.sched_getaffinity(0))
    if jobs >= len(cores):
        return [[cores[k % len(cores)]] for k in range(jobs)]
    size = len(cores) // jobs
    shares = [cores[k * size : (k + 1) * size] for k in range(jobs)]
    shares[-1] = cores[(jobs - 1) * size :]
    return shares


class Workers:
    """Starts and watches the worker processes of the run ``run_id``."""

    def __init__(
        self,
        work: Path,
        env: dict[str, str],
        run_id: str,
        limits,
        *,
        sandboxed: bool = True,
        hide: tuple[Path, ...] = (),
        jobs: int | None = None,
    ):
        self.work, self.env, self.run_id, self.limits = work, env, run_id, limits
        self.sandboxed, self.hide = sandboxed, hide
        self.slots: queue.Queue | None = None  # each slot's cores (None: not pinned)
        if jobs and hasattr(os, "sched_setaffinity"):
            self.slots = queue.Queue()
            for share in core_shares(jobs):
                self.slots.put(share)
        self.procs: dict[str, subprocess.Popen] = {}
        self.lock = threading.Lock()
        self.stopping = False

    def kernel(self, private: Path, extra_env: dict[str, str] | None = None) -> dict:
        """A fresh IPython folder and kernelspec under ``private`` (the sandbox cannot write
        there), the ipc folder, and the kernel's environment (with ``extra_env``, the
        student's own variables: their variant): the job's kernel part."""
        ipython = Path(environment.submission_ipython_dir(private))
        kernels = environment.kernel_spec(private)
        env = dict(self.env, **(extra_env or {}), IPYTHONDIR=str(ipython))
        if not self.sandboxed:
            (private / "work").mkdir()
            return {
                "kernel_dir": str(kernels),
                "env": env,
                "cwd": str(private / "work"),
            }
        ipc = private / "ipc"
        ipc.mkdir()
        env[NPROC_ENV] = str(NPROC)
        env[IPYTHON_ENV] = str(ipython)  # copied into the sandbox's /tmp at each start
        mb = self.limits.memory_mb
        environment.wrap_kernel(
            kernels,
            lambda argv: isolation.command(
                argv, ipc=ipc, ipython=ipython, tmp_mb=mb, hide=self.hide
            ),
        )
        return {
            "kernel_dir": str(kernels),
            "env": env,
            "ipc": str(ipc),
            "sandbox": True,
        }

    def job(self, cells: list, kernel: dict, folder: Path) -> dict:
        """The worker's job: the cells to run (context, solution, test), limits, kernel."""
        return {
            "cells": [
                {
                    "role": c.role,
                    "exercise": c.exercise,
                    "source": c.source,
                    "hidden": c.hidden,
                }
                for c in cells
                if c.role in ("context", "solution", "test")
            ],
            "timeout": self.limits.timeout,
            "total_timeout": self.limits.total_timeout,
            "memory_mb": self.limits.memory_mb,
            "env": self.env,
            "cwd": None,
            **kernel,
            "result_path": str(folder / "result.json"),
        }

    def run(
        self, student: str, cells: list, extra_env: dict[str, str] | None = None
    ) -> dict | None:
        """Run the cells in a worker (its kernel's environment with ``extra_env``); the
        run's result, None when the batch was stopped. A worker that ends without its
        result (killed from outside, a crash of the grader's own code) is started once
        more: the student's code could not have caused it, its kernel's loss is handled
        inside the worker."""
        run = self._run_once(student, cells, extra_env)
        if run is not None and run.get("failed") and not self.stopping:
            retry = self._run_once(student, cells, extra_env)
            if retry is None or not retry.get("failed"):
                return retry
        return run

    def _run_once(
        self, student: str, cells: list, extra_env: dict[str, str] | None
    ) -> dict | None:
        folder = self.work / student
        folder.mkdir(parents=True, exist_ok=True)
        private = Path(tempfile.mkdtemp(prefix="course-grade-"))  # short: socket paths
        backstop = self.limits.total_timeout + BACKSTOP_S
        share = self.slots.get() if self.slots is not None else None
        try:
            job = self.job(cells, self.kernel(private, extra_env), folder)
            if share is not None:
                job["cpus"] = share
            (folder / "job.json").write_text(json.dumps(job))
            with open(folder / "worker.log", "wb") as log:
                proc = self._start(student, folder / "job.json", log)
                if proc is None:
                    return None
                stopped = self._wait(student, proc, backstop)
        finally:
            shutil.rmtree(private, ignore_errors=True)
            if share is not None:
                self.slots.put(share)
        if self.stopping:
            return None
        return self._result(folder, proc, stopped, backstop)

    def command(self, job: Path) -> list[str]:
        """The worker's command line for the job file ``job``."""
        return [sys.executable, "-m", "course_utils.grading.batch.worker", str(job)]

    def _start(self, student: str, job: Path, log) -> subprocess.Popen | None:
        with self.lock:
            if self.stopping:
                return None
            proc = subprocess.Popen(
                self.command(job),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=worker_env(self.env),
                start_new_session=True,
            )
            self.procs[student] = proc
        return proc

    def _wait(self, student: str, proc: subprocess.Popen, backstop: float) -> bool:
        """Wait for the worker; true when it had to be killed at the backstop."""
        stopped = False
        try:
            proc.wait(timeout=backstop)
        except subprocess.TimeoutExpired:
            stopped = True
            kill_process_group(proc)
        finally:
            with self.lock:
                self.procs.pop(student, None)
            self.sweep()
        return stopped

    @staticmethod
    def _result(
        folder: Path, proc: subprocess.Popen, stopped: bool, backstop: float
    ) -> dict:
        tail = (folder / "worker.log").read_bytes()[-300:]
        tail = tail.decode("utf-8", "replace").strip()
        try:
            run = json.loads((folder / "result.json").read_text())
        except (OSError, ValueError):
            run = {"cells": [], "events": []}
        if not run.get("done"):
            last = tail.splitlines()[-1] if tail else "no output"
            detail = (
                f"the worker was stopped after {backstop:g} s; the rest was not run"
                if stopped
                else f"the grader's worker failed (exit {proc.returncode}): {last}"
            )
            run.setdefault("events", []).append(
                {
                    "kind": "gave-up" if stopped else "kernel",
                    "cell": None,
                    "detail": detail,
                }
            )
            run["failed"] = not stopped  # the worker's own failure: worth a retry
        return run

    def sweep(self) -> None:
        """Kill processes of this run that outlived their worker (re-parented to us)."""
        import psutil

        from course_utils._procs import kill_processes

        # Under the lock that starting a worker holds: a worker another thread starts
        # between the list of live workers and the list of children would otherwise
        # look like an orphan of the run, and be killed.
        with self.lock:
            live = {p.pid for p in self.procs.values()}
            try:  # orphans are re-parented to us (a subreaper): direct children only
                children = psutil.Process().children()
            except psutil.Error:
                return
            orphans = []
            for p in children:
                if p.pid in live:
                    continue
                try:
                    if p.environ().get(RUN_ENV) == self.run_id:
                        orphans.append([p, *p.children(recursive=True)])
                except psutil.Error:
                    continue
        for victims in orphans:
            kill_processes(victims, grace_s=0)

    def stop(self) -> None:
        """Kill every running worker (and its tree); no new one starts."""
        with self.lock:
            self.stopping = True
            procs = list(self.procs.values())
        for proc in procs:
            kill_process_group(proc)
        self.sweep()
