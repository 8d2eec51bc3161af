"""The instructor's grader: ``grade`` a folder of submissions, or ``check`` one notebook.

Each submission runs in a worker process of its own (``grader_worker``) with a
fresh kernel, per-cell and total timeouts, a CPU-time limit and a resident
memory watchdog; ``jobs`` workers run at once. A student's files are written
as soon as their grade is known (``grader_store``), so an interrupted batch
resumes where it stopped. See docs/GRADING.md.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from course_utils._procs import kill_process_group
from course_utils.grading import load, report, store
from course_utils.tooling.errors import CourseError

RUN_ENV = "COURSE_GRADER_RUN"
# Only these reach the student's kernel: no tokens or credentials from the instructor's shell.
_ENV_KEEP = (
    "PATH",
    "HOME",
    "LANG",
    "LC_",
    "TZ",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "CONDA_",
    "CUDA_",
    "NVIDIA_",
    "LD_LIBRARY_PATH",
    "XLA_",
    "JAX_",
    "TF_CPP_",
    "TORCH",
    "PYTORCH_",
    "OMP_",
    "MKL_",
    "OPENBLAS_",
    "TPU_",
    "COURSE_",
)


@dataclass
class Limits:
    timeout: float = 60.0  # seconds per cell
    total_timeout: float = 600.0  # seconds per submission
    memory_mb: float = 4096.0  # resident memory of the kernel and its children
    cpu_time: float | None = None  # CPU seconds per process; default 2 x total_timeout

    def check(self) -> None:
        for name in ("timeout", "total_timeout", "memory_mb"):
            if not getattr(self, name) > 0:
                raise CourseError(
                    f"--{name.replace('_', '-')} must be positive, got {getattr(self, name)}"
                )


@dataclass
class Batch:
    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)
    seconds: float = 0.0


def _sha(path: Path | None) -> str | None:
    try:
        return (
            hashlib.sha256(path.read_bytes()).hexdigest() if path is not None else None
        )
    except OSError:  # unreadable: read_cells says why
        return None


def _prepare_out(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-test-{os.getpid()}"
        probe.write_text("ok")
        probe.unlink()
    except OSError as err:
        raise CourseError(
            f"--out {out}: cannot write there: {err.strerror or err}"
        ) from None


def kernel_env(work: Path, limits: Limits, run_id: str, smoke: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.startswith(_ENV_KEEP)}
    package_parent = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (package_parent, env.get("PYTHONPATH")) if p
    )
    env.update(
        {
            "COURSE_GRADING": "1",
            "COURSE_SMOKE": "1" if smoke else "0",
            "MPLBACKEND": "Agg",
            "PYTHONUNBUFFERED": "1",
            RUN_ENV: run_id,
            "IPYTHONDIR": _ipython_dir(work),
            "COURSE_GRADER_CPU_S": str(
                int(limits.cpu_time or 2 * limits.total_timeout)
            ),
        }
    )
    return env


# Runs after course_utils.strict's startup file: framework deprecations are errors in CI,
# but in grading a warning is shown in the output and costs no points.
_WARNINGS_STARTUP = (
    "# Written by course_utils.grading.batch: warnings are shown, never raised, while grading.\n"
    "import warnings\n"
    "from course_utils import strict\n"
    "for _category in strict.CATEGORIES:\n"
    "    warnings.filterwarnings('always', category=_category, module=strict.MODULES)\n"
)


def _ipython_dir(work: Path) -> str:
    from course_utils import strict

    root = strict.ipython_dir(str(work / "ipython"))
    (
        Path(root) / "profile_default" / "startup" / "01-course-grader-warnings.py"
    ).write_text(_WARNINGS_STARTUP)
    return root


def _kernel_spec(work: Path) -> Path:
    spec = work / "kernels" / "course-grader"
    spec.mkdir(parents=True, exist_ok=True)
    argv = [
        sys.executable,
        "-m",
        "course_utils.grading.kernel",
        "-f",
        "{connection_file}",
        "--HistoryManager.hist_file=:memory:",
        "--HistoryManager.enabled=False",
    ]
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": argv,
                "display_name": "Python 3 (grader)",
                "language": "python",
                "interrupt_mode": "signal",
            }
        )
    )
    return spec.parent


class Grader:
    """One batch: a master, limits, a report folder; grades submissions in parallel."""

    def __init__(
        self,
        master: load.Master,
        out: Path,
        limits: Limits,
        *,
        smoke: bool = True,
        keep_executed: bool = True,
    ):
        self.master, self.out, self.limits, self.smoke = master, out, limits, smoke
        self.keep_executed = keep_executed
        self.run_id = uuid.uuid4().hex[:12]
        self.work = out / store.WORK / self.run_id
        self.work.mkdir(parents=True, exist_ok=True)
        from course_utils.grading.procs import become_subreaper

        become_subreaper()
        self.kernel_dir = _kernel_spec(self.work)
        self.env = kernel_env(self.work, limits, self.run_id, smoke)
        self.procs: dict[str, subprocess.Popen] = {}
        self.lock = threading.Lock()
        self.stopping = False

    # ------------------------------------------------------------ one student
    def run_job(self, student: str, matched: load.Matched) -> dict | None:
        """Run the matched cells in a worker; None when the batch was stopped meanwhile."""
        executed = [
            c for c in matched.cells if c.role in ("context", "solution", "test")
        ]
        folder = self.work / student
        folder.mkdir(parents=True, exist_ok=True)
        cwd = tempfile.mkdtemp(prefix=f"course-grade-{student[:20]}-")
        job = {
            "cells": [
                {
                    "role": c.role,
                    "exercise": c.exercise,
                    "source": c.source,
                    "hidden": c.hidden,
                }
                for c in executed
            ],
            "timeout": self.limits.timeout,
            "total_timeout": self.limits.total_timeout,
            "memory_mb": self.limits.memory_mb,
            "env": self.env,
            "cwd": cwd,
            "kernel_dir": str(self.kernel_dir),
            "result_path": str(folder / "result.json"),
        }
        (folder / "job.json").write_text(json.dumps(job))
        wenv = dict(self.env)
        wenv.pop("COURSE_GRADER_CPU_S", None)
        with self.lock:
            if self.stopping:
                return None
            log = open(folder / "worker.log", "wb")  # noqa: SIM115 - closed below
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "course_utils.grading.worker",
                    str(folder / "job.json"),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=wenv,
                start_new_session=True,
            )
            self.procs[student] = proc
        backstop = self.limits.total_timeout + 90
        stopped = False
        try:
            proc.wait(timeout=backstop)
        except subprocess.TimeoutExpired:
            stopped = True
            kill_process_group(proc)
        finally:
            log.close()
            with self.lock:
                self.procs.pop(student, None)
            self.sweep()
            shutil.rmtree(cwd, ignore_errors=True)
        if self.stopping:
            return None
        tail = (
            (folder / "worker.log")
            .read_bytes()[-300:]
            .decode("utf-8", "replace")
            .strip()
        )
        try:
            run = json.loads((folder / "result.json").read_text())
        except (OSError, ValueError):
            run = {"cells": [], "events": []}
        if not run.get("done"):
            detail = (
                f"the worker was stopped after {backstop:g} s; the rest was not run"
                if stopped
                else f"the grader's worker failed (exit {proc.returncode}): {tail.splitlines()[-1] if tail else 'no output'}"
            )
            run.setdefault("events", []).append(
                {
                    "kind": "gave-up" if stopped else "kernel",
                    "cell": None,
                    "detail": detail,
                }
            )
        return run

    def sweep(self) -> None:
        """Kill processes of this run that outlived their worker (re-parented to us)."""
        import psutil

        with self.lock:
            live = {p.pid for p in self.procs.values()}
        try:  # orphans are re-parented to us (a subreaper): direct children only
            children = psutil.Process().children()
        except psutil.Error:
            return
        for p in children:
            if p.pid in live:
                continue
            try:
                if p.environ().get(RUN_ENV) != self.run_id:
                    continue
                victims = [p, *p.children(recursive=True)]
            except psutil.Error:
                continue
            for v in victims:
                try:
                    v.kill()
                except psutil.Error:
                    pass
            psutil.wait_procs(victims, timeout=3)

    def grade_one(self, sub: load.Submission) -> dict | None:
        """Grade one submission; a failure of the grader itself becomes an ``error`` record."""
        try:
            return self._grade_one(sub)
        except Exception as err:  # noqa: BLE001 - one student's problem must not stop the batch
            if self.stopping:
                return None
            record = report.invalid_record(
                self.master,
                sub.student,
                f"the grader failed on this submission: {type(err).__name__}: {err}",
            )
            record.update(
                status="error",
                submission=str(sub.path),
                submission_sha256=None,
                master_sha256=self.master.sha256,
                run_id=self.run_id,
                graded_at=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            )
            with self.lock:  # no sha: a later run grades this student again
                store.save_student(self.out, record, {})
                store.write_tables(self.out)
            return record

    def _grade_one(self, sub: load.Submission) -> dict | None:
        started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        matched = run = None
        if sub.problem:
            record = report.invalid_record(self.master, sub.student, sub.problem)
        else:
            try:
                cells = load.read_cells(sub.path)  # type: ignore[arg-type]
                matched = load.match(self.master, cells)
            except load.SubmissionError as err:
                record = report.invalid_record(self.master, sub.student, str(err))
            else:
                run = self.run_job(sub.student, matched)
                if run is None:
                    return None
                record = report.score(self.master, matched, run, student=sub.student)
        record.update(
            submission=str(sub.path) if sub.path else None,
            submission_sha256=_sha(sub.path),
            master=str(self.master.path),
            master_sha256=self.master.sha256,
            graded_at=started,
            run_id=self.run_id,
        )
        files = {
            "results.json": json.dumps(
                report.gradescope(record), indent=1, ensure_ascii=False
            )
            + "\n",
            "feedback.ipynb": report.feedback_notebook(
                self.master, matched, run, record
            ),
        }
        if self.keep_executed and run is not None:
            files["executed.ipynb"] = report.executed_notebook(matched, run)
        with self.lock:
            store.save_student(self.out, record, files)
            store.write_tables(self.out)
        return record

    def stop(self) -> None:
        with self.lock:
            self.stopping = True
            procs = list(self.procs.values())
        for proc in procs:
            kill_process_group(proc)
        self.sweep()


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise CourseError(f"--shard {text!r}: expected K/N, e.g. 0/4") from None
    if n < 1 or not 0 <= k < n:
        raise CourseError(f"--shard {text!r}: need 0 <= K < N")
    return k, n


def grade(
    submissions: str | Path,
    source: str | Path,
    out: str | Path,
    *,
    limits: Limits | None = None,
    jobs: int | None = None,
    force: bool = False,
    shard: str | None = None,
    smoke: bool = True,
    progress: bool | None = None,
    echo=print,
) -> Batch:
    """Grade every submission in ``submissions`` against the master ``source`` into ``out``."""
    limits = limits or Limits()
    limits.check()
    if jobs is not None and jobs < 1:
        raise CourseError(f"--jobs must be at least 1, got {jobs}")
    master = load.load_master(source)
    out = Path(out)
    subs, notes = load.discover(submissions, master.path.name)
    _prepare_out(out)
    where = parse_shard(shard)
    if where:
        subs = subs[where[0] :: where[1]]
    batch = Batch(notes=notes)
    todo = []
    for sub in subs:
        if not force and store.already_graded(
            out, sub.student, _sha(sub.path), master.sha256
        ):
            batch.skipped.append(sub.student)
        else:
            todo.append(sub)
    for note in notes:
        echo(f"note: {note}")
    if batch.skipped:
        echo(
            f"{len(batch.skipped)} student(s) already graded (use --force to grade again)"
        )
    start = time.perf_counter()
    grader = Grader(master, out, limits, smoke=smoke)
    from tqdm.auto import tqdm

    bar = tqdm(
        total=len(todo),
        desc="grading",
        unit="student",
        file=sys.stderr,
        disable=(not progress) if progress is not None else None,
    )
    pool = ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1)
    try:
        futures = {pool.submit(grader.grade_one, sub): sub.student for sub in todo}
        for fut in as_completed(futures):
            try:
                record = fut.result()
            except Exception as err:  # noqa: BLE001 - e.g. the report folder became unwritable
                echo(f"note: {futures[fut]}: not graded: {type(err).__name__}: {err}")
                record = None
            if record is not None:
                batch.graded.append(record["student"])
                bar.set_postfix_str(
                    f"{record['student']}: {record['total']:g}/{record['max_total']:g}"
                )
            bar.update(1)
    except BaseException:
        grader.stop()
        pool.shutdown(wait=True, cancel_futures=True)
        store.write_tables(out)
        store.remove_work(out, grader.work)
        raise
    finally:
        bar.close()
    pool.shutdown(wait=True)
    store.remove_work(out, grader.work)
    batch.records = store.write_tables(out)
    batch.seconds = time.perf_counter() - start
    return batch


def check(
    notebook: str | Path,
    source: str | Path | None = None,
    *,
    limits: Limits | None = None,
    smoke: bool = True,
) -> dict:
    """Run the visible tests of one notebook the way the grader does; returns its record."""
    path = Path(notebook)
    if not path.is_file():
        raise CourseError(f"NOTEBOOK {path}: no such file")
    if source is None:
        source = _pristine(path) or path
    master = load.load_master(source, visible_only=True)
    with tempfile.TemporaryDirectory(prefix="course-check-") as tmp:
        grader = Grader(
            master,
            Path(tmp),
            limits or Limits(timeout=120, total_timeout=900),
            smoke=smoke,
            keep_executed=False,
        )
        try:
            cells = load.read_cells(path)
        except load.SubmissionError as err:
            raise CourseError(f"NOTEBOOK {path}: {err}") from None
        matched = load.match(master, cells)
        run = grader.run_job("check", matched)
        return report.score(master, matched, run or {}, student=path.stem)


def _pristine(path: Path) -> Path | None:
    """The course's own copy of the student notebook, whose visible tests are unedited."""
    from course_utils.tooling.notebooks import course_root

    try:
        root = course_root(path.resolve().parent)
    except CourseError:
        return None
    candidate = root / "exercises" / path.name
    return candidate if candidate.is_file() else None
