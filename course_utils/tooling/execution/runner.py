"""Execute notebooks with papermill, each in its own process, and summarise the results.

Each notebook runs in a child process (its own process group) so a per-notebook
timeout or Ctrl-C can stop it and its kernel cleanly; one failure never stops
the others. Executed copies land in ``build/executed/``. Papermill runs as it
is, with nothing patched: any error output fails the notebook, so a sharp bit
shows its error through :func:`course_utils.expect.expect_error`.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from course_utils._procs import kill_process_group

# The distributions whose versions each executed copy records (``metadata.course``).
RECORDED = ("torch", "jax", "jaxlib", "flax")


@dataclass
class Result:
    notebook: str
    status: str  # ok | failed | timeout | interrupted
    seconds: float
    cell: int | None = None
    error: str = ""
    output: str = ""


def kernel_env(root: Path, smoke: bool) -> dict[str, str]:
    """The environment of a kernel running a course notebook here: the caller's own,
    with the smoke switch and strict deprecations (a graded submission's kernel gets a
    filtered one: :func:`course_utils.grading.sandbox.environment.submission_kernel_env`)."""
    from course_utils import config, strict

    env = {**os.environ, **config.smoke_environ(smoke)}
    env["IPYTHONDIR"] = strict.ipython_dir(str(root / "build" / "ipython"))
    # No MPLBACKEND: kernels use the inline backend, so executed copies keep their figures.
    env["PYTHONUNBUFFERED"] = "1"
    return env


def tcp_refused() -> bool:
    """Whether this process may not open a TCP socket on the loopback.

    Jupyter kernels talk to their client over TCP on 127.0.0.1 by default; some
    sandboxes (a TPU machine lent without network, say) refuse every internet socket
    but let Unix sockets through.
    """
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            # A bind can succeed where nothing can connect (a loopback that is down).
            with socket.create_connection(server.getsockname(), timeout=2.0):
                pass
    except OSError:
        return True
    return False


def kernel_transport() -> str:
    """``ipc`` (Unix sockets) where TCP is refused or ``COURSE_KERNEL_TRANSPORT=ipc``
    asks for it, else ``tcp``, Jupyter's default."""
    asked = os.environ.get("COURSE_KERNEL_TRANSPORT", "").strip().lower()
    if asked in ("tcp", "ipc"):
        return asked
    if asked:
        raise ValueError(
            f"COURSE_KERNEL_TRANSPORT={asked!r}: expected 'tcp' or 'ipc' (or unset)"
        )
    return "ipc" if tcp_refused() else "tcp"


def kernel_options() -> dict[str, Any]:
    """Extra arguments for papermill's kernel client: when :func:`kernel_transport`
    says ``ipc``, a kernel over Unix sockets that binds no TCP socket of its own
    (:mod:`course_utils.tooling.execution.ipc_kernel`; the socket files lie beside the kernel's
    connection file, in Jupyter's runtime folder); nothing otherwise."""
    if kernel_transport() != "ipc":
        return {}
    from course_utils.tooling.execution.ipc_kernel import IPCKernelManager

    return {"kernel_manager_class": IPCKernelManager}


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def checkout(root: Path) -> dict[str, Any]:
    """The checkout at ``root``: its ``commit`` (None outside git), whether that commit
    is the course's ``release`` tag (``tagged``; None when unknown) and whether tracked
    files differ from it (``modified``)."""
    from course_utils.tooling.notebooks import release_tag

    tag = release_tag()
    commit = _git(root, "rev-parse", "HEAD")
    tagged = modified = None
    if commit:
        at_tag = _git(
            root, "rev-parse", "-q", "--verify", f"refs/tags/{tag}^{{commit}}"
        )
        tagged = at_tag == commit
        status = _git(root, "status", "--porcelain", "--untracked-files=no")
        modified = None if status is None else bool(status)
    return {"release": tag, "commit": commit, "tagged": tagged, "modified": modified}


def run_record(root: Path) -> dict[str, Any]:
    """What ``course run`` writes into each executed copy's metadata (``course``): the
    checkout (:func:`checkout`) and the versions of Python and :data:`RECORDED` in this
    interpreter, the one papermill's ``python3`` kernel runs (jupyter_client starts a
    ``python`` kernel spec with ``sys.executable``)."""
    from course_utils.install.frameworks import installed_version

    versions = {"python": platform.python_version()}
    versions |= {name: installed_version(name) for name in RECORDED}
    return {**checkout(root), "versions": versions}


def record_run(nb_path: Path, record: dict[str, Any]) -> None:
    """Write ``record`` into the executed copy at ``nb_path`` (``metadata.course``)."""
    import nbformat

    nb = nbformat.read(nb_path, as_version=4)
    nb.metadata["course"] = record
    nbformat.write(nb, nb_path)


def _source_index(nb_out: str, index: int) -> int:
    """Index of a cell in the input notebook, not counting papermill's injected cell.

    ``index`` counts the cells papermill executed; the copy it wrote also holds the
    red "execution failed" banners it added afterwards, which are left out.
    """
    import nbformat

    try:
        cells = nbformat.read(nb_out, as_version=4).cells
    except Exception:
        return index
    cells = [
        c
        for c in cells
        if "papermill-error-cell-tag" not in c.get("metadata", {}).get("tags", [])
    ]
    injected = sum(
        "injected-parameters" in c.get("metadata", {}).get("tags", [])
        for c in cells[:index]
    )
    return index - injected


def _child(
    nb_in: str, nb_out: str, smoke: bool, result_path: str, cell_timeout: int
) -> int:
    """Runs inside the child process: papermill, then a JSON result file."""
    import papermill as pm

    start = time.perf_counter()
    result = Result(notebook=nb_in, status="ok", seconds=0.0)
    try:
        pm.execute_notebook(
            nb_in,
            nb_out,
            parameters={"SMOKE": smoke},
            kernel_name="python3",
            progress_bar=False,
            cwd=str(Path(nb_in).parent),
            execution_timeout=cell_timeout,
            **kernel_options(),
        )
    except pm.PapermillExecutionError as err:
        result.status = "failed"
        result.cell = _source_index(nb_out, err.cell_index)
        result.error = f"{err.ename}: {err.evalue}".strip().split("\n")[0][:300]
    except Exception as err:  # kernel died, bad notebook, cell timeout...
        result.status = "failed"
        result.error = f"{type(err).__name__}: {err}".split("\n")[0][:300]
    result.seconds = time.perf_counter() - start
    Path(result_path).write_text(json.dumps(asdict(result)))
    return 0 if result.status == "ok" else 1


def run_one(
    notebook: Path,
    out_dir: Path,
    *,
    root: Path,
    smoke: bool,
    timeout: float,
) -> Result:
    """Execute one notebook in a child process group with a wall-clock ``timeout``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    nb_out = out_dir / notebook.name
    fd, result_path = tempfile.mkstemp(suffix=".json", prefix="course-run-")
    os.close(fd)
    cmd = [
        sys.executable,
        "-m",
        "course_utils.tooling.execution.runner",
        str(notebook),
        str(nb_out),
        "1" if smoke else "0",
        result_path,
        str(int(timeout)),
    ]
    start = time.perf_counter()
    try:
        code, output = run_in_group(cmd, timeout=timeout, env=kernel_env(root, smoke))
        if code is None:
            return Result(
                str(notebook),
                "timeout",
                time.perf_counter() - start,
                error=f"did not finish within {timeout:g} s",
            )
        try:
            data = json.loads(Path(result_path).read_text() or "{}")
        except (OSError, json.JSONDecodeError):
            data = {}
    finally:
        Path(result_path).unlink(missing_ok=True)
    if not data:
        tail = (output or "").strip().splitlines()[-1:] or ["no output"]
        return Result(
            str(notebook),
            "failed",
            time.perf_counter() - start,
            error=f"runner crashed (exit {code}): {tail[0][:300]}",
            output=output or "",
        )
    result = Result(**data)
    result.output = output or ""
    if result.status == "ok":
        record_run(nb_out, run_record(root))
    return result


def run_in_group(
    cmd: list[str],
    *,
    timeout: float | None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[int | None, str]:
    """Run ``cmd`` in its own process group: exit code (None on timeout) and output.

    On a timeout or Ctrl-C the whole tree is stopped (:func:`course_utils._procs.kill_process_group`)
    before this returns or re-raises.
    """
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out or ""
    except subprocess.TimeoutExpired:
        kill_process_group(proc)
        try:  # what it printed before it was stopped
            out, _ = proc.communicate(timeout=5)
        except (subprocess.TimeoutExpired, ValueError, OSError):
            out = ""
        return (
            None,
            f"{(out or '').rstrip()}\ndid not finish within {timeout:.0f} s".lstrip(),
        )
    except KeyboardInterrupt:
        kill_process_group(proc)
        raise


def run_notebooks(
    notebooks: list[Path],
    *,
    root: Path,
    smoke: bool,
    timeout: float,
    out_dir: Path,
    progress: bool = True,
) -> list[Result]:
    """Execute each notebook in turn; a failure is recorded and the next one runs.

    Ctrl-C stops the notebook in progress (and its kernel), marks the rest
    ``interrupted`` and returns what was finished.
    """
    from tqdm.auto import tqdm

    results: list[Result] = []
    bar = tqdm(
        notebooks, desc="notebooks", unit="nb", disable=not progress, file=sys.stderr
    )
    try:
        for nb in bar:
            bar.set_postfix_str(nb.stem)
            results.append(
                run_one(nb, out_dir, root=root, smoke=smoke, timeout=timeout)
            )
    except KeyboardInterrupt:
        done = {r.notebook for r in results}
        for nb in notebooks:
            if str(nb) not in done:
                results.append(
                    Result(str(nb), "interrupted", 0.0, error="stopped by Ctrl-C")
                )
    finally:
        bar.close()
    return results


def summary(results: list[Result], root: Path | None = None) -> str:
    """A plain-text table: notebook, status, seconds, failing cell and its error line."""
    rows = []
    for r in results:
        name = r.notebook
        if root is not None:
            try:
                name = str(Path(r.notebook).resolve().relative_to(root))
            except ValueError:
                pass
        where = f"cell {r.cell}: " if r.cell is not None else ""
        rows.append(
            (name, r.status, f"{r.seconds:.1f}", (where + r.error) if r.error else "")
        )
    head = ("notebook", "status", "seconds", "error")
    widths = [max(len(x[i]) for x in [head, *rows]) for i in range(3)]
    lines = [
        "  ".join(h.ljust(w) for h, w in zip(head[:3], widths, strict=True))
        + "  "
        + head[3]
    ]
    lines.append("-" * (sum(widths) + 6 + 5))
    for row in rows:
        lines.append(
            "  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True))
            + "  "
            + row[3]
        )
    ok = sum(r.status == "ok" for r in results)
    lines.append(f"{ok} of {len(results)} notebooks ran without error")
    return "\n".join(lines)


if __name__ == "__main__":
    nb_in, nb_out, smoke_flag, result_file, cell_timeout = sys.argv[1:6]
    sys.exit(_child(nb_in, nb_out, smoke_flag == "1", result_file, int(cell_timeout)))
