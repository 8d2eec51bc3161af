"""Start, watch and clean up local multi-process runs: ``torchrun`` and ``jax.distributed``.

Every launch

- picks a free port (a requested port that is busy is replaced, and a launch
  that loses a race for its port is retried on another one);
- runs each top-level process in its own session, with its output in a log file
  (no pipe can fill up and block it);
- stops everything after ``timeout`` seconds, and stops the other processes soon
  after one of them fails (so a crashed rank never leaves its peers waiting);
- always cleans up: every launched process carries an environment tag, and any
  process still holding the tag after the run (even one re-parented to init) is
  killed, also on Ctrl-C;
- collects what each rank reported (``rank{N}.json`` and ``rank{N}.npz`` in the
  run folder; see :mod:`course_utils.distributed.worker`);
- on a machine that refuses TCP on the loopback (a sandbox without network), starts
  nothing, prints one sentence and returns a result whose ``skipped`` says why, with no
  rank reports, so the notebook runs on.

The pieces live in their own modules and are reachable from here under the
same names: :mod:`~course_utils.distributed.ports`, :mod:`~course_utils.distributed.processes`
(running, watching, cleaning up), :mod:`~course_utils.distributed.results` (the result
and each rank's report) and :mod:`~course_utils.distributed.excerpts` (the source the
lesson shows). Only the standard library and psutil are imported here.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# The pieces of a launch, under the names lessons and scripts call them by.
from course_utils.distributed.excerpts import (
    Excerpt,
    excerpt,
    function_source,
    script_path,
)
from course_utils.distributed.ports import (
    free_port,
    loopback_refused,
    pick_port,
    port_in_use,
)
from course_utils.distributed.processes import (
    FAIL_GRACE_S,
    TAG_ENV,
    cleanup,
    execute,
    tagged_processes,
)
from course_utils.distributed.results import (
    LaunchError,
    LaunchResult,
    LaunchTimeout,
    display_command,
    read_ranks,
)

__all__ = [
    "FAIL_GRACE_S",
    "OUT_ENV",
    "PORT_BUSY_SIGNS",
    "TAG_ENV",
    "Excerpt",
    "LaunchError",
    "LaunchResult",
    "LaunchTimeout",
    "cleanup",
    "display_command",
    "excerpt",
    "free_port",
    "function_source",
    "jax_command",
    "jax_processes",
    "loopback_refused",
    "pick_port",
    "port_in_use",
    "script_path",
    "tagged_processes",
    "torchrun",
    "torchrun_command",
    "torchrun_function",
]

OUT_ENV = "COURSE_DIST_OUT"  # the run folder where ranks read inputs and write results
PORT_BUSY_SIGNS = (
    "EADDRINUSE",
    "address already in use",
    "Address already in use",
    "Failed to start RPC server",
    "Failed to add port",
)


# ------------------------------------------------------------------ running


def _launch(
    build: Any,
    *,
    port: int | None,
    timeout: float,
    workdir: str | Path | None,
    env: Mapping[str, str] | None,
    retries: int,
    check: bool,
    what: str,
) -> LaunchResult:
    """Run ``build(port)``'s commands in a run folder and collect each rank's report."""
    if not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ValueError(
            f"{what}: timeout must be a positive number of seconds, got {timeout!r}"
        )
    if not isinstance(retries, int) or retries < 0:
        raise ValueError(f"{what}: retries must be an int >= 0, got {retries!r}")
    refused = loopback_refused()
    if (
        refused
    ):  # torchrun's store and JAX's coordinator meet over TCP: nothing can start
        print(refused + ".")
        return LaunchResult(build(0), [], "", 0.0, 0, skipped=refused)
    own_dir = workdir is None
    run_dir = (
        Path(tempfile.mkdtemp(prefix="course-dist-")) if own_dir else Path(workdir)
    )
    run_dir.mkdir(parents=True, exist_ok=True)
    for stale in (*run_dir.glob("rank*.json"), *run_dir.glob("rank*.npz")):
        stale.unlink()
    tag = uuid.uuid4().hex
    child_env = dict(os.environ)
    child_env.update(env or {})
    child_env.setdefault("OMP_NUM_THREADS", "1")
    child_env.update({TAG_ENV: tag, OUT_ENV: str(run_dir), "PYTHONUNBUFFERED": "1"})
    try:
        result = _attempts(build, port, timeout, retries, child_env, run_dir, tag)
        result.ranks = read_ranks(run_dir)
        result.workdir = str(run_dir)
    finally:
        if own_dir:
            import shutil

            shutil.rmtree(run_dir, ignore_errors=True)
    if check and result.timed_out:
        raise LaunchTimeout(
            f"{what} did not finish within {timeout:g} s; every process it started was "
            f"stopped. Last output:\n{result.tail()}",
            result,
        )
    if check and not result.ok:
        raise LaunchError(
            f"{what} failed (exit codes {result.returncodes}). Last output:\n{result.tail()}",
            result,
        )
    return result


def _attempts(
    build: Any,
    port: int | None,
    timeout: float,
    retries: int,
    env: dict[str, str],
    run_dir: Path,
    tag: str,
) -> LaunchResult:
    """Run the commands; again on another port when one was taken during start-up."""
    start = time.perf_counter()
    for attempt in range(1, retries + 2):
        chosen = pick_port(port if attempt == 1 else None)
        commands = build(chosen)
        left = timeout - (time.perf_counter() - start)
        codes, output, timed_out = execute(commands, env, run_dir, left, tag)
        seconds = time.perf_counter() - start
        result = LaunchResult(
            commands, codes, output, seconds, chosen, timed_out, attempt, tag=tag
        )
        port_lost = not result.ok and any(sign in output for sign in PORT_BUSY_SIGNS)
        if not port_lost or attempt > retries or seconds > timeout:
            break
        print(
            f"port {chosen} was taken during start-up; retrying on another",
            file=sys.stderr,
        )
    return result


def _check_count(what: str, name: str, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{what}: {name} must be a positive int, got {value!r}")


def torchrun_command(
    target: str, nproc: int, port: int, args: Sequence[str] = ()
) -> list[str]:
    """The ``torchrun`` command for one machine (as ``python -m torch.distributed.run``).

    ``target`` is a module name (run with ``-m``) or a path to a ``.py`` script.
    """
    module = not str(target).endswith(".py")
    return [
        sys.executable, "-m", "torch.distributed.run",
        "--nnodes", "1",
        "--nproc-per-node", str(nproc),
        "--master-addr", "127.0.0.1",
        "--master-port", str(port),
        *(["-m"] if module else []),
        str(target),
        *map(str, args),
    ]  # fmt: skip


def torchrun(
    target: str,
    nproc: int = 2,
    *,
    args: Sequence[str] = (),
    timeout: float = 120.0,
    port: int | None = None,
    workdir: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    retries: int = 2,
    check: bool = True,
) -> LaunchResult:
    """Run ``torchrun --nproc-per-node nproc`` on this machine and collect each rank's report.

    Raises :class:`LaunchTimeout` after ``timeout`` seconds and :class:`LaunchError`
    when a rank fails (unless ``check=False``); either way nothing is left running.
    """
    _check_count("torchrun", "nproc", nproc)
    if not target or not isinstance(target, str):
        raise ValueError(
            f"torchrun: target must be a module name or a .py path, got {target!r}"
        )
    return _launch(
        lambda port: [torchrun_command(target, nproc, port, args)],
        port=port, timeout=timeout, workdir=workdir, env=env, retries=retries, check=check,
        what=f"torchrun of {target} on {nproc} processes",
    )  # fmt: skip


def jax_command(
    target: str, coordinator: str, num_processes: int, process_id: int,
    local_devices: int, args: Sequence[str] = (),
) -> list[str]:  # fmt: skip
    """One process of a multi-process JAX run (the script parses these flags).

    ``target`` is a module name (run with ``-m``) or a path to a ``.py`` script.
    """
    return [
        sys.executable, *([target] if str(target).endswith(".py") else ["-m", target]),
        "--coordinator", coordinator,
        "--num-processes", str(num_processes),
        "--process-id", str(process_id),
        "--local-devices", str(local_devices),
        *map(str, args),
    ]  # fmt: skip


def jax_processes(
    target: str,
    num_processes: int = 2,
    local_devices: int = 4,
    *,
    args: Sequence[str] = (),
    timeout: float = 120.0,
    port: int | None = None,
    workdir: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    platform: str | None = "cpu",
    retries: int = 2,
    check: bool = True,
) -> LaunchResult:
    """Start ``num_processes`` copies of a JAX script that meet through ``jax.distributed``.

    Process 0 hosts the coordinator on ``127.0.0.1:<port>``. ``platform="cpu"``
    sets ``JAX_PLATFORMS=cpu`` so several processes never compete for one GPU;
    each then simulates ``local_devices`` CPU devices.
    """
    _check_count("jax_processes", "num_processes", num_processes)
    _check_count("jax_processes", "local_devices", local_devices)
    extra = dict(env or {})
    if platform:
        extra["JAX_PLATFORMS"] = platform
    return _launch(
        lambda port: [
            jax_command(target, f"127.0.0.1:{port}", num_processes, i, local_devices, args)
            for i in range(num_processes)
        ],
        port=port, timeout=timeout, workdir=workdir, env=extra, retries=retries, check=check,
        what=f"JAX run of {target} on {num_processes} processes",
    )  # fmt: skip


# ------------------------------------------------- a notebook function, launched


def torchrun_function(
    fn: Any,
    harness: str,
    nproc: int = 2,
    *,
    timeout: float = 120.0,
    args: Sequence[str] = (),
    problem: Mapping[str, Any] | None = None,
) -> LaunchResult:
    """Run ``harness`` under torchrun with ``fn``'s source, so each rank can call ``fn``.

    The harness reports ``not_implemented`` when ``fn`` raised
    ``NotImplementedError`` (then this raises it too, so an untouched exercise
    stub reads as "not implemented yet") and ``error`` with a traceback when
    ``fn`` failed some other way (then this raises ``AssertionError``).
    ``problem`` (see :mod:`course_utils.distributed.problem`) replaces the default one.
    On a machine that refuses TCP it returns the ``skipped`` result unjudged.
    """
    source = function_source(fn)
    with tempfile.TemporaryDirectory(prefix="course-dist-fn-") as tmp:
        code = Path(tmp) / "submitted.py"
        code.write_text(source)
        if problem is not None:
            from course_utils.distributed import problem as _problem

            _problem.save(Path(tmp) / "problem.npz", dict(problem))
        result = torchrun(
            harness, nproc, args=["--code", str(code), "--name", fn.__name__, *args],
            timeout=timeout, workdir=tmp,
        )  # fmt: skip
    if result.skipped:  # a machine that refuses TCP: nothing ran, nothing to judge
        return result
    if any(r.get("not_implemented") for r in result.ranks):
        raise NotImplementedError(f"{fn.__name__} is not implemented yet")
    errors = [r["error"] for r in result.ranks if r.get("error")]
    if errors:
        raise AssertionError(f"{fn.__name__} raised on a rank:\n{errors[0]}")
    if len(result.ranks) != nproc:
        raise AssertionError(f"expected {nproc} rank reports, got {len(result.ranks)}")
    return result
