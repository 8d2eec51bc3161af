"""The child processes of ``course check-device``: started side by side, pinned, stopped.

Each item runs in a child process of its own process group (a notebook through the
runner's child, as ``course run`` runs it; one notebook's nbval tests; ``course
claims``; ``course doctor``), its output going to a log file, so many can run at once
and any of them can be stopped with everything it started.

Several children share the machine's cores and its one GPU, so each child gets
(:func:`child_env`, :func:`pinned`):

- **its own cores**: the child is pinned to the core ids the scheduler gave it
  (``sched_setaffinity``). XLA sizes its CPU thread pool from the cores a process may
  run on and has no variable for it, and the course's thread policy
  (:func:`course_utils.contention.set_threads`) sets PyTorch's intra-op threads to the
  same count; ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and
  ``TORCHINDUCTOR_COMPILE_THREADS`` (Inductor's compile workers) say the same to the
  libraries that read them;
- **JAX's memory policy**: no preallocation (:func:`course_utils.env.memory_policy`,
  what ``env.setup()`` sets), so JAX allocates as it goes instead of taking 75 % of the
  GPU at its first operation; a variable the caller set is kept. No memory fraction
  is set: it would be a hard cap, turning a low reservation into an out-of-memory failure;
- **PyTorch's allocator** with ``expandable_segments:True``, so its cached blocks
  fragment less and more processes fit beside each other.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from course_utils.config import smoke_environ
from course_utils.env import memory_policy
from course_utils.tooling.device_check import steps as device_steps
from course_utils.tooling.device_check.schedule import Item

THREAD_VARS = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "TORCHINDUCTOR_COMPILE_THREADS",
)
TORCH_ALLOC = "expandable_segments:True"


def child_env(base: Mapping[str, str], core_ids: tuple[int, ...]) -> dict[str, str]:
    """``base`` with the thread and GPU-memory settings for a child on ``core_ids``."""
    env = dict(base)
    n = str(max(1, len(core_ids)))
    env.update({var: n for var in THREAD_VARS})
    env.update(memory_policy(env))
    if "PYTORCH_CUDA_ALLOC_CONF" not in env and "PYTORCH_ALLOC_CONF" not in env:
        env["PYTORCH_CUDA_ALLOC_CONF"] = TORCH_ALLOC
    env["PYTHONUNBUFFERED"] = "1"
    return env


# Run by a short-lived interpreter that pins itself to the cores, then execs the command:
# the command starts pinned, and so does every thread and process it starts.
_PIN_THEN_EXEC = (
    "import os, sys; os.sched_setaffinity(0, {int(c) for c in sys.argv[1].split(',')}); "
    "os.execvp(sys.argv[2], sys.argv[2:])"
)


def pinned(cmd: list[str], core_ids: tuple[int, ...]) -> list[str]:
    """``cmd`` started on ``core_ids`` (as it is where the OS cannot pin). A launcher pins
    itself and execs ``cmd``, so the child runs no instruction of ``cmd`` unpinned: pinning
    it from the parent once it had started lost the race on a busy machine, and a
    ``preexec_fn`` runs Python between fork and exec, where a parent that has started
    JAX's threads can deadlock."""
    if not core_ids or not hasattr(os, "sched_setaffinity"):
        return cmd
    cores = ",".join(str(c) for c in core_ids)
    return [sys.executable, "-c", _PIN_THEN_EXEC, cores, *cmd]


class Process:
    """One child: started at once, polled, stopped with its whole tree.

    ``finish(code, output)`` turns its exit code and output into the item's result.
    """

    def __init__(
        self,
        cmd: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        log: Path,
        core_ids: tuple[int, ...],
        limit: float | None,
        finish: Callable[[int, str], dict[str, Any]],
    ) -> None:
        log.parent.mkdir(parents=True, exist_ok=True)
        self.log, self.limit, self.finish = log, limit, finish
        self.core_ids = core_ids
        self.t0 = time.monotonic()
        with open(log, "w", encoding="utf-8") as out:
            self.proc = subprocess.Popen(
                pinned(cmd, core_ids),
                cwd=cwd,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def output(self) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def _base(self) -> dict[str, Any]:
        return {
            "seconds": time.monotonic() - self.t0,
            "timeout": None if self.limit is None else round(self.limit, 1),
            "cores": list(self.core_ids),
        }

    def poll(self) -> dict[str, Any] | None:
        code = self.proc.poll()
        if code is None:
            return None
        return {**self._base(), **self.finish(code, self.output())}

    def stop(self, why: str) -> dict[str, Any]:
        from course_utils._procs import kill_process_group

        kill_process_group(self.proc)
        limit = "" if self.limit is None else f" within {self.limit:g} s"
        error = (
            "stopped by Ctrl-C" if why == "interrupted" else f"did not finish{limit}"
        )
        return {
            **self._base(),
            "status": why,
            "exit_code": None,
            "error": error,
            "output": self.output(),
        }


def _slug(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", key).strip("-")


class Launcher:
    """Starts the real child of each item (see :func:`course_utils.tooling.device_check.schedule.run`)."""

    def __init__(
        self, root: Path, work: Path, environ: Mapping[str, str] | None = None
    ):
        self.root, self.work = root, work
        self.environ = dict(os.environ if environ is None else environ)

    def __call__(
        self, item: Item, limit: float | None, core_ids: tuple[int, ...]
    ) -> Process:
        start = {
            "tests": self._tests,
            "claims": self._claims,
            "doctor": self._doctor,
        }.get(item.kind, self._notebook)
        cmd, env, finish = start(item, limit)
        return Process(
            cmd,
            cwd=self.root,
            env=child_env(env, core_ids),
            log=self.work / "logs" / f"{_slug(item.key)}.log",
            core_ids=core_ids,
            limit=limit,
            finish=finish,
        )

    def _notebook(self, item: Item, limit: float | None):
        """The runner's child: papermill, then a JSON result file (as ``course run``)."""
        from course_utils.tooling.execution.runner import kernel_env

        smoke = item.kind != "full"
        nb = self.root / str(item.notebook)
        folder = {"master": "solutions", "student": "exercises"}.get(item.kind, "")
        out_dir = self.work / "executed" / ("full" if not smoke else "smoke") / folder
        out_dir.mkdir(parents=True, exist_ok=True)
        result = self.work / "results" / f"{_slug(item.key)}.json"
        result.parent.mkdir(parents=True, exist_ok=True)
        result.unlink(missing_ok=True)
        cell_timeout = int(limit or item.timeout or 900)
        cmd = [
            sys.executable,
            "-m",
            "course_utils.tooling.execution.runner",
            str(nb),
            str(out_dir / nb.name),
            "1" if smoke else "0",
            str(result),
            str(cell_timeout),
        ]
        env = {**self.environ, **_kernel_vars(kernel_env(self.root, smoke))}

        def finish(code: int, output: str) -> dict[str, Any]:
            try:
                data = json.loads(result.read_text() or "{}")
            except (OSError, json.JSONDecodeError):
                data = {}
            if not data:
                last = (output.strip().splitlines() or ["no output"])[-1]
                return {
                    "status": "failed",
                    "cell": None,
                    "error": f"runner crashed (exit {code}): {last[:300]}",
                    "output": output,
                }
            return {
                "status": data["status"],
                "cell": data.get("cell"),
                "error": data.get("error", ""),
                "output": output,
            }

        return cmd, env, finish

    def _tests(self, item: Item, limit: float | None):
        """nbval over one notebook in smoke mode, its JUnit XML beside the report."""
        junit = self.work / "notebook-tests" / f"{_slug(str(item.notebook))}.xml"
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.unlink(missing_ok=True)
        cell_timeout = int(min(600, limit)) if limit else 600
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--nbval-lax",
            f"--nbval-cell-timeout={cell_timeout}",
            f"--junitxml={junit}",
            str(item.notebook),
        ]

        def finish(code: int, output: str) -> dict[str, Any]:
            counts = device_steps.junit_counts(junit)
            return {
                "status": "ok" if code == 0 else "failed",
                "exit_code": code,
                **counts,
                "output": output,
            }

        return cmd, {**self.environ, **smoke_environ(True)}, finish

    def _claims(self, item: Item, limit: float | None):
        """``course claims --smoke`` (the accelerator only where there is one)."""
        out_dir = self.work / "claims"
        (out_dir / "claims.json").unlink(missing_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "course_utils.cli",
            "claims",
            "--out",
            str(out_dir),
            "--smoke",
        ]

        def finish(code: int, output: str) -> dict[str, Any]:
            try:
                data = json.loads((out_dir / "claims.json").read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                data = None
            ok = code == 0 and data is not None
            return {
                "status": "ok" if ok else "failed",
                "exit_code": code,
                "json": data,
                "mode": "smoke",
                "output": output,
            }

        return cmd, {**self.environ, **smoke_environ(True)}, finish

    def _doctor(self, item: Item, limit: float | None):
        cmd = [sys.executable, "-m", "course_utils.cli", "doctor"]

        def finish(code: int, output: str) -> dict[str, Any]:
            return {
                "status": "ok" if code == 0 else "failed",
                "exit_code": code,
                "output": output,
            }

        return cmd, self.environ, finish


def _kernel_vars(env: dict[str, str]) -> dict[str, str]:
    """What :func:`~course_utils.tooling.execution.runner.kernel_env` changed in ``os.environ``."""
    return {k: v for k, v in env.items() if os.environ.get(k) != v}


def merge_junit(files: list[Path], out: Path) -> None:
    """One JUnit XML of every notebook's tests (what the workflow uploads)."""
    suites = ET.Element("testsuites")
    for path in files:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError):
            continue
        for suite in root.iter("testsuite"):
            suites.append(suite)
    out.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suites).write(out, encoding="utf-8", xml_declaration=True)
