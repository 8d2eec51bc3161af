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
  run folder; see :mod:`course_utils.dist.worker`).

Only the standard library and psutil are imported here.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import shlex
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_utils._procs import kill_process_group, kill_processes

TAG_ENV = "COURSE_DIST_TAG"  # carried by every launched process; finds orphans
OUT_ENV = "COURSE_DIST_OUT"  # the run folder where ranks read inputs and write results
PORT_BUSY_SIGNS = (
    "EADDRINUSE",
    "address already in use",
    "Address already in use",
    "Failed to start RPC server",
    "Failed to add port",
)
FAIL_GRACE_S = 5.0  # after one process fails, how long the others get to exit by themselves


class LaunchError(RuntimeError):
    """A launched run failed; ``.result`` holds its output and exit codes."""

    def __init__(self, message: str, result: LaunchResult):
        super().__init__(message)
        self.result = result


class LaunchTimeout(LaunchError):
    """A launched run did not finish in time (everything it started was killed)."""


@dataclass
class LaunchResult:
    """What a launch did: commands, exit codes, output, and each rank's report."""

    commands: list[list[str]]
    returncodes: list[int | None]
    output: str
    seconds: float
    port: int
    timed_out: bool = False
    attempts: int = 1
    ranks: list[dict[str, Any]] = field(default_factory=list)
    workdir: str = ""
    tag: str = ""  # the value of COURSE_DIST_TAG in every process of this launch

    @property
    def ok(self) -> bool:
        return not self.timed_out and all(rc == 0 for rc in self.returncodes)

    @property
    def command_line(self) -> str:
        """The first command as one would type it (``torchrun`` for torch's launcher)."""
        return display_command(self.commands[0]) if self.commands else ""

    def section(self, name: str) -> list[dict[str, Any]]:
        """Each rank's report for one demo of a combined run (keys ``name.key``)."""
        prefix = name + "."
        parts = [{k[len(prefix):]: v for k, v in r.items() if k.startswith(prefix)} for r in self.ranks]
        if not any(parts):
            raise KeyError(f"section: no report keys start with {prefix!r}")
        return parts

    def tail(self, lines: int = 25) -> str:
        return "\n".join(self.output.strip().splitlines()[-lines:])

    def __str__(self) -> str:
        state = "timed out" if self.timed_out else ("ok" if self.ok else f"failed {self.returncodes}")
        return (
            f"{len(self.commands)} launch command(s), port {self.port}, {state} in "
            f"{self.seconds:.1f} s, {len(self.ranks)} rank report(s)"
        )


# ------------------------------------------------------------------ ports


def _bind_ok(family: int, host: str, port: int) -> bool:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            if family == socket.AF_INET6:
                with contextlib.suppress(OSError):
                    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            s.bind((host, port))
        return True
    except OSError:
        return False


def port_in_use(port: int) -> bool:
    """Whether a local TCP port is taken (on the loopback or on any address).

    The JAX coordinator binds ``[::]`` (all addresses, IPv4 too), so a port
    is only free when both the loopback and the wildcard addresses can bind it.
    """
    if not isinstance(port, int) or not 0 < port < 65536:
        raise ValueError(f"port_in_use: port must be an int in 1..65535, got {port!r}")
    checks = [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET, "0.0.0.0")]
    if socket.has_ipv6 and _bind_ok(socket.AF_INET6, "::", 0):  # IPv6 usable here
        checks.append((socket.AF_INET6, "::"))
    results = [_bind_ok(family, host, port) for family, host in checks]
    return not all(results)


def free_port(tries: int = 50) -> int:
    """A TCP port that is free right now on every local address."""
    for _ in range(tries):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if not port_in_use(port):
            return port
    raise RuntimeError(f"free_port: no free TCP port found in {tries} tries")


def pick_port(port: int | None = None) -> int:
    """``port`` when it is free, else a free one (saying so when ``port`` was busy)."""
    if port is None:
        return free_port()
    if port_in_use(port):
        chosen = free_port()
        print(f"port {port} is already in use; using port {chosen} instead", file=sys.stderr)
        return chosen
    return port


# ------------------------------------------------------- processes and cleanup


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
            if value and (tag is None or value == tag) and proc.status() != psutil.STATUS_ZOMBIE:
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


# ------------------------------------------------------------------ running


def display_command(cmd: Sequence[str]) -> str:
    """A command as text, with ``python -m torch.distributed.run`` shown as ``torchrun``."""
    parts = list(cmd)
    if len(parts) >= 3 and parts[1:3] == ["-m", "torch.distributed.run"]:
        parts = ["torchrun", *parts[3:]]
    elif parts and parts[0] == sys.executable:
        parts[0] = "python"
    return shlex.join(parts)


def _read_ranks(workdir: Path) -> list[dict[str, Any]]:
    reports: dict[int, dict[str, Any]] = {}
    for path in workdir.glob("rank*.json"):
        try:
            rank = int(path.stem[4:])
            reports[rank] = json.loads(path.read_text())
        except (ValueError, json.JSONDecodeError):
            continue
        arrays = path.with_suffix(".npz")
        if arrays.exists():
            import numpy as np

            with np.load(arrays) as data:
                reports[rank].update({k: data[k] for k in data.files})
    return [reports[r] for r in sorted(reports)]


def _execute(
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
    if not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ValueError(f"{what}: timeout must be a positive number of seconds, got {timeout!r}")
    if not isinstance(retries, int) or retries < 0:
        raise ValueError(f"{what}: retries must be an int >= 0, got {retries!r}")
    own_dir = workdir is None
    run_dir = Path(tempfile.mkdtemp(prefix="course-dist-")) if own_dir else Path(workdir)
    run_dir.mkdir(parents=True, exist_ok=True)
    for stale in (*run_dir.glob("rank*.json"), *run_dir.glob("rank*.npz")):
        stale.unlink()
    tag = uuid.uuid4().hex
    child_env = dict(os.environ)
    child_env.update(env or {})
    child_env.setdefault("OMP_NUM_THREADS", "1")
    child_env.update({TAG_ENV: tag, OUT_ENV: str(run_dir), "PYTHONUNBUFFERED": "1"})
    start = time.perf_counter()
    try:
        for attempt in range(1, retries + 2):
            chosen = pick_port(port if attempt == 1 else None)
            commands = build(chosen)
            codes, output, timed_out = _execute(
                commands, child_env, run_dir, timeout - (time.perf_counter() - start), tag
            )
            result = LaunchResult(
                commands, codes, output, time.perf_counter() - start, chosen, timed_out, attempt,
                tag=tag,
            )
            port_lost = not result.ok and any(sign in output for sign in PORT_BUSY_SIGNS)
            if not port_lost or attempt > retries or time.perf_counter() - start > timeout:
                break
            print(f"port {chosen} was taken during start-up; retrying on another", file=sys.stderr)
        result.ranks = _read_ranks(run_dir)
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


def _check_count(what: str, name: str, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{what}: {name} must be a positive int, got {value!r}")


def torchrun_command(target: str, nproc: int, port: int, args: Sequence[str] = ()) -> list[str]:
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
        raise ValueError(f"torchrun: target must be a module name or a .py path, got {target!r}")
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


# ------------------------------------------------------- showing the scripts


class Excerpt(str):
    """Source code that a notebook shows as a highlighted Python block."""

    def _repr_markdown_(self) -> str:
        return f"```python\n{self}\n```"


def script_path(module: str) -> Path:
    """The file of a launchable module, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise ValueError(f"script_path: no Python file for module {module!r}")
    return Path(spec.origin)


def excerpt(module: str, region: str) -> Excerpt:
    """The lines of ``module`` between ``# [region]`` and ``# [/region]``, dedented."""
    lines = script_path(module).read_text().splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == f"# [{region}]")
        stop = next(i for i, ln in enumerate(lines) if ln.strip() == f"# [/{region}]")
    except StopIteration:
        raise ValueError(f"excerpt: {module} has no region '# [{region}]' ... '# [/{region}]'") from None
    return Excerpt(textwrap.dedent("\n".join(lines[start + 1 : stop])).strip("\n"))


# ------------------------------------------------- a notebook function, launched


def function_source(fn: Any) -> str:
    """The source of a function defined in a notebook cell or a module, dedented."""
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise TypeError(f"function_source: expected a Python function, got {type(fn).__name__}")
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as err:
        raise ValueError(
            f"function_source: the source of {fn.__name__!r} cannot be found ({err}); "
            "define it in a notebook cell or a .py file"
        ) from None


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
    ``problem`` (see :mod:`course_utils.dist.problem`) replaces the default one.
    """
    source = function_source(fn)
    with tempfile.TemporaryDirectory(prefix="course-dist-fn-") as tmp:
        code = Path(tmp) / "submitted.py"
        code.write_text(source)
        if problem is not None:
            from course_utils.dist import problem as _problem

            _problem.save(Path(tmp) / "problem.npz", dict(problem))
        result = torchrun(
            harness, nproc, args=["--code", str(code), "--name", fn.__name__, *args],
            timeout=timeout, workdir=tmp,
        )  # fmt: skip
    if any(r.get("not_implemented") for r in result.ranks):
        raise NotImplementedError(f"{fn.__name__} is not implemented yet")
    errors = [r["error"] for r in result.ranks if r.get("error")]
    if errors:
        raise AssertionError(f"{fn.__name__} raised on a rank:\n{errors[0]}")
    if len(result.ranks) != nproc:
        raise AssertionError(f"expected {nproc} rank reports, got {len(result.ranks)}")
    return result
