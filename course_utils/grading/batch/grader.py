"""One grading run: ``grade`` a folder of submissions, or ``check`` one notebook.

Each submission runs in a worker process of its own (:mod:`.pool`,
:mod:`.worker`) with a fresh kernel, per-cell and total timeouts, a CPU-time
limit and a resident memory watchdog; ``jobs`` workers run at once. A
student's files are written as soon as their grade is known (:mod:`.store`),
so an interrupted batch resumes where it stopped.

Once the kernel's replies are scored, nothing the grader does afterwards can cost
the student a point: each post-processing step (the flag analysis of the student's
code, reading the notebook's own VARIANT line, redacting the messages, writing the
feedback, Gradescope's ``results.json``, the executed notebook, sealing and
storing the record, the class tables) that fails is recorded in the record's
``errors`` and a ``grader error`` flag, shown in the run's summary, and replaced by
a safe stand-in (text withheld, a feedback of scores only; feedback that could not
be redacted goes to the instructor's folder only), and the student is graded again
on the next run. See docs/GRADING.md.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from course_utils.errors import CourseError
from course_utils.grading.batch import pool
from course_utils.grading.inputs.ipynb import SubmissionError, read_cells, read_file
from course_utils.grading.inputs.master import Master, in_sync, load_master
from course_utils.grading.inputs.names import shown
from course_utils.grading.inputs.seeds import fingerprint, load_secret
from course_utils.grading.inputs.seeds import variant as roster_variant
from course_utils.grading.inputs.submissions import (
    Matched,
    Submission,
    discover,
    lms_lookalike,
    match,
)
from course_utils.grading.policy import feedback, scoring
from course_utils.grading.records import store
from course_utils.grading.sandbox import environment, isolation
from course_utils.grading.sandbox.environment import RUN_ENV
from course_utils.variants import Variant, VariantError, claimed, kernel_env

if TYPE_CHECKING:
    from course_utils.grading.policy.adjust import Adjuster

__all__ = ["RUN_ENV", "Batch", "Grader", "Limits", "check", "grade", "parse_shard"]


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

    @property
    def cpu_seconds(self) -> float:
        return self.cpu_time or 2 * self.total_timeout


@dataclass
class Batch:
    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)  # for the instructor: the summary
    changes: list[tuple[str, dict]] = field(default_factory=list)  # score changes
    held: list[str] = field(default_factory=list)  # several submissions: grade kept


GRADER_ERROR = "grader error"  # the flag of a record the grader failed on in part
TABLES_EVERY_S = 5.0  # seconds between rebuilds of the class tables during a run
OTHER_VARIANT = "other variant"  # the notebook names a variant not the roster id's


def _failure(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


def _sha(path: Path | None) -> str | None:
    try:  # never through a link, never blocking on a FIFO
        return hashlib.sha256(read_file(path)).hexdigest() if path else None
    except SubmissionError:  # unreadable: read_cells says why
        return None


def _options(
    limits: Limits, smoke: bool, sandboxed: bool, secret: bytes | None = None
) -> dict:
    """The options a grade depends on: a run with others grades again. With variants on,
    the secret's fingerprint is one of them; without, they are what they always were."""
    options = {
        "timeout": limits.timeout,
        "total_timeout": limits.total_timeout,
        "memory_mb": limits.memory_mb,
        "cpu_seconds": limits.cpu_seconds,
        "smoke": smoke,
        "sandbox": "bwrap" if sandboxed else "unsafe-no-sandbox",
    }
    if secret is not None:
        options["variants"] = fingerprint(secret)
    return options


def _mtime(path: Path | None) -> str | None:
    """The submission file's modification time (the late policy's fallback), read now:
    the record keeps no path to read it from later."""
    try:
        stamp = os.lstat(path).st_mtime if path else None
    except OSError:
        return None
    if stamp is None:
        return None
    return _dt.datetime.fromtimestamp(stamp, _dt.UTC).isoformat(timespec="seconds")


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


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


class Grader:
    """One batch: a master, limits, a report folder; grades submissions in parallel."""

    def __init__(
        self,
        master: Master,
        out: Path,
        limits: Limits,
        *,
        smoke: bool = True,
        keep_executed: bool = True,
        sandboxed: bool | None = None,
        submissions: Path | None = None,
        secret: tuple[bytes, Path] | None = None,
        variant: Variant | None = None,
        variant_ids: dict[str, str] | None = None,
        jobs: int | None = None,
    ):
        """``jobs``: the submissions graded at once, each kernel on its share of the
        cores (:func:`.pool.core_shares`); None leaves the kernels unpinned.
        ``secret`` (the variant secret and its file) turns per-student variants on:
        each kernel gets the variant of the id it grades, or of the id ``variant_ids``
        gives for it (Gradescope: the submitter's email). ``variant`` is the one variant
        of every run instead (``course check``: the notebook's own)."""
        from course_utils.grading.sandbox.process_tree import become_subreaper

        self.master, self.out, self.limits, self.smoke = master, out, limits, smoke
        self.submissions = Path(os.path.abspath(submissions)) if submissions else None
        self.keep_executed = keep_executed
        self.run_id = uuid.uuid4().hex[:12]
        self.work = out / store.WORK / self.run_id
        self.work.mkdir(parents=True, exist_ok=True)
        become_subreaper()
        env = environment.submission_kernel_env(limits.cpu_seconds, self.run_id, smoke)
        if sandboxed is None:  # course check: a sandbox when there is one
            sandboxed = isolation.problem() is None
        self.sandboxed = sandboxed
        self.secret, self.variant = (secret[0] if secret else None), variant
        self.variant_ids = dict(variant_ids or {})
        self.options = _options(limits, smoke, sandboxed, self.secret)
        # The kernel sees neither the reports, nor the master, nor the classmates' work,
        # nor the variant secret.
        hide = (out.resolve(), master.path.resolve().parent)
        hide += (Path(submissions).resolve(),) if submissions else ()
        hide += (secret[1],) if secret else ()
        self.workers = pool.Workers(
            self.work, env, self.run_id, limits, sandboxed=sandboxed, hide=hide,
            jobs=jobs,
        )  # fmt: skip
        self.lock = threading.RLock()  # one student's files and the tables at a time
        self.errors: list[str] = []  # this run's, for the summary
        self.details: dict[
            str, list[str]
        ] = {}  # student: tracebacks, for the instructor
        self.unstored: dict[str, dict] = {}  # records that could not be stored
        self.withheld: set[str] = set()  # students whose messages could not be redacted
        self.tables_at = -float("inf")  # when the class tables were last rebuilt
        self.previous: dict[str, dict] = {}  # a plain run: the records it replaces
        self.changes: list[tuple[str, dict]] = []  # this run's score changes
        # record, files -> record, files: the late policy and manual grades, applied
        # to each record as it is stored (policy.adjust.Adjuster)
        self.adjust: Callable[[dict, dict], tuple[dict, dict]] | None = None

    @property
    def stopping(self) -> bool:
        return self.workers.stopping

    def variant_for(self, student: str) -> Variant | None:
        """The variant the student is graded on: the roster id's (never the notebook's
        claim), ``course check``'s one variant, or None with variants off."""
        if self.variant is not None:
            return self.variant
        if not self.secret:
            return None
        return roster_variant(self.secret, self.variant_ids.get(student, student))

    def run_job(self, student: str, matched: Matched) -> dict | None:
        """Run the matched cells in a worker; None when the batch was stopped meanwhile."""
        env = kernel_env(self.variant_for(student))
        return self.workers.run(student, matched.cells, env)

    def grade_one(self, sub: Submission) -> dict | None:
        """Grade one submission; a failure of the grader itself becomes an ``error`` record."""
        try:
            return self._grade_one(sub)
        except Exception as err:  # noqa: BLE001 - one student's problem must not stop the batch
            if self.stopping:
                return None
            record = scoring.invalid_record(
                self.master,
                sub.student,
                f"the grader failed on this submission: {_failure(err)}",
            )
            record.update(
                status="error",
                submission=self._name(sub.path),
                submission_sha256=None,
                master=shown(self.master.path.name),
                master_sha256=self.master.sha256,
                run_id=self.run_id,
                graded_at=_now(),
            )
            self._failed(record, "grading", err)
            self._store(record, {})  # no sha: a later run grades this student again
            return record

    def _grade_one(self, sub: Submission) -> dict | None:
        started = _now()
        matched = run = None
        withheld = False
        if sub.problem:
            record = scoring.invalid_record(self.master, sub.student, sub.problem)
        else:
            try:
                cells = read_cells(sub.path)  # type: ignore[arg-type]
                matched = match(self.master, cells)
            except SubmissionError as err:
                record = scoring.invalid_record(self.master, sub.student, str(err))
            else:
                run = self.run_job(sub.student, matched)
                if run is None:
                    return None
                record, withheld = self._score(matched, run, sub.student)
                try:  # the notebook's own claim: notes and flags only, never points
                    self._variant_notes(record, cells)
                except Exception as err:  # noqa: BLE001
                    self._failed(record, "reading the notebook's VARIANT line", err)
        record.update(
            submission=self._name(sub.path),
            submission_mtime=_mtime(sub.path),
            submission_sha256=_sha(sub.path),
            master=shown(self.master.path.name),
            master_sha256=self.master.sha256,
            options=self.options,
            graded_at=started,
            run_id=self.run_id,
            sandbox="bwrap" if self.sandboxed else "unsafe-no-sandbox",
        )
        if sub.error:  # two entries for one id: the instructor must choose
            record["errors"] = [*record.get("errors", []), sub.error]
            with self.lock:
                self.errors.append(f"{sub.student}: {sub.error}")
        if not self.sandboxed:
            record["flags"] = [*record.get("flags", []), "unsafe-no-sandbox"]
        record = self.finish(record)
        if withheld:
            self.withheld.add(record["student"])
        files = self._files(matched, run, record)
        return self._store(record, files)

    def _name(self, path: Path | None) -> str | None:
        """The submission's path inside the submissions folder (``ann.ipynb``,
        ``ann/00_welcome_exercises.ipynb``): the record is handed back, and the
        instructor's folders are not the student's business."""
        if path is None:
            return None
        full = Path(os.path.abspath(path))
        if self.submissions is not None and self.submissions in full.parents:
            return shown(full.relative_to(self.submissions).as_posix())
        return shown(full.name)

    def _variant_notes(self, record: dict, cells: list[dict]) -> None:
        """With variants on: the variant graded, and a note and flag when the notebook's
        own ``VARIANT`` line names another (a copy of a classmate's notebook?)."""
        graded = self.variant_for(record["student"])
        if graded is None or self.variant is not None:
            return
        record["variant"] = graded.as_dict()
        try:
            said = claimed(cells)
        except VariantError as err:
            why = f"its VARIANT line is not one course release writes ({err})"
        else:
            why = (
                f"it says it is the variant of {said.student!r} (seed {said.seed})"
                if said is not None and said.seed is not None and said != graded
                else ""
            )
        if why:
            record["notes"] = [
                *record.get("notes", []),
                f"this notebook's VARIANT line was ignored: {why}; it was graded on the "
                f"roster's variant of {graded.student!r} (seed {graded.seed})",
            ]
            record["flags"] = [*record.get("flags", []), OTHER_VARIANT]

    # ----------------------------------------------- post-processing, guarded
    def _failed(self, record: dict, step: str, err: BaseException) -> None:
        """Record a failed post-processing step: the record's ``errors`` (the step and the
        error's type only: the record is handed back) and flag, the run's summary (the
        whole message), and the instructor's ``grader-errors.txt``."""
        record["errors"] = [
            *record.get("errors", []),
            f"the grader failed at {step} ({type(err).__name__}); graded again on the next run",
        ]
        if GRADER_ERROR not in record.get("flags", []):
            record["flags"] = [*record.get("flags", []), GRADER_ERROR]
        text = "".join(traceback.format_exception(err))
        self.details.setdefault(record["student"], []).append(f"{step}:\n{text}")
        with self.lock:
            self.errors.append(f"{record['student']}: {step} failed: {_failure(err)}")

    def _score(self, matched: Matched, run: dict, student: str) -> tuple[dict, bool]:
        """The record, redacted; when redaction fails, with its text withheld (points are
        the same: they come from the kernel's replies). A failed flag analysis of the
        student's code leaves the record with the run's flags only. Each failure is
        recorded (:meth:`_failed`). (record, text withheld)."""
        failed: list[tuple[str, BaseException]] = []

        def on_error(step: str, err: BaseException) -> None:
            failed.append((step, err))

        try:
            record = scoring.score(
                self.master, matched, run, student=student, on_error=on_error
            )
            withheld = False
        except Exception as err:  # noqa: BLE001 - try again without any text
            failed = [("redaction", err)]  # the flag analysis is heard of again
            # a failure here is not redaction's: grade_one's error record
            record = scoring.score(
                self.master,
                matched,
                run,
                student=student,
                redact=scoring.withhold,
                on_error=on_error,
            )
            withheld = True
        for step, err in failed:
            self._failed(record, step, err)
        return record, withheld

    def finish(self, record: dict) -> dict:
        """The record to save: keyed per exercise (a regrade also merges the old one).
        A student graded before keeps the history of their score's changes, and a new
        change joins it (:meth:`_changed`)."""
        record = record | {"exercise_keys": self.master.exercise_keys(self.options)}
        old = self.previous.get(record["student"])
        if old is None:
            return record
        history = list(old.get("regrades", []))
        change = self._changed(old, record)
        if change is not None:
            history.append(change)
            with self.lock:
                self.changes.append((record["student"], change))
        return record | ({"regrades": history} if history else {})

    @staticmethod
    def _changed(old: dict, new: dict) -> dict | None:
        """The change of a plain run's score (before late and manual points), and why
        the student was graded again; None when the score is the same."""
        before = sum(t["points"] for t in old.get("tests", []))
        after = sum(t["points"] for t in new.get("tests", []))
        if before == after or old.get("status") == "error":  # an error had no score
            return None
        if old.get("submission_sha256") != new.get("submission_sha256"):
            what = "resubmitted"
        elif old.get("master_sha256") != new.get("master_sha256"):
            what = "master changed"
        elif old.get("options") != new.get("options"):
            what = "options changed"
        else:
            what = "graded again"
        return {"at": new.get("graded_at"), "what": what, "old": before, "new": after,
                "old_total": before, "new_total": after}  # fmt: skip

    def _files(self, matched: Matched | None, run: dict | None, record: dict) -> dict:
        """The student's report files (``grade.json`` aside), by name; a file that cannot
        be made is replaced by a safe stand-in, and the failure recorded."""
        withheld = record["student"] in self.withheld  # redaction failed: no text
        files: dict[str, str] = {}
        if record["status"] == "error":
            # The grader failed, not the student: nothing in their folder to hand back
            # (the instructor's copy keeps what ran; the next run grades them again).
            if self.keep_executed and run is not None and matched is not None:
                try:
                    files["executed.ipynb"] = feedback.executed_notebook(matched, run)
                except Exception as err:  # noqa: BLE001
                    self._failed(record, "the executed notebook", err)
            return files
        try:
            files["results.json"] = _json(feedback.gradescope(record))
        except Exception as err:  # noqa: BLE001
            self._failed(record, "results.json (the Gradescope export)", err)
            files["results.json"] = _json(feedback.minimal_results(record))
        redact = scoring.withhold if withheld else None
        try:
            files["feedback.ipynb"] = feedback.feedback_notebook(
                self.master, matched, run, record, redact
            )
        except Exception as err:  # noqa: BLE001
            self._failed(record, "the feedback notebook", err)
            withheld = True
            try:  # the same notebook with every output's text withheld
                files["feedback.ipynb"] = feedback.feedback_notebook(
                    self.master, matched, run, record, scoring.withhold
                )
            except Exception:  # noqa: BLE001 - the scores alone
                files["feedback.ipynb"] = feedback.minimal_notebook(self.master, record)
        try:  # the same, as a page an LMS shows (it shows a notebook as JSON)
            files["feedback.html"] = feedback.html_page(files["feedback.ipynb"])
        except Exception as err:  # noqa: BLE001
            self._failed(record, "the HTML feedback", err)
        # The instructor's copy, with every text: never in the student's folder.
        if withheld:
            try:
                files["feedback-unredacted.ipynb"] = feedback.feedback_notebook(
                    self.master, matched, run, record, str
                )
            except Exception:  # noqa: BLE001 - executed.ipynb still has every output
                pass
        if self.keep_executed and run is not None:
            try:
                files["executed.ipynb"] = feedback.executed_notebook(matched, run)
            except Exception as err:  # noqa: BLE001
                self._failed(record, "the executed notebook", err)
        return files

    def _store(self, record: dict, files: dict) -> dict:
        """Seal and store the record with its files, then the tables; returns the record
        as stored. The late policy and manual grades (:attr:`adjust`) are applied first,
        so no record is stored without them, whenever the run stops. A file that cannot be
        written is left out (the record says so); a record that cannot be sealed or
        written is kept for this run's tables and summary, and for the instructor
        unsealed (never believed: the student is graded again on the next run)."""
        with self.lock:
            if self.adjust is not None:
                record, files = self.adjust(record, files)
            details = self.details.get(record["student"])
            if details:
                files = files | {"grader-errors.txt": "\n".join(details)}
            try:
                store.save_student(
                    self.out,
                    record,
                    files,
                    on_error=lambda name, e: self._failed(record, f"writing {name}", e),
                )
                self.unstored.pop(record["student"], None)
            except Exception as err:  # noqa: BLE001
                self._failed(record, "sealing and storing the record", err)
                self.unstored[record["student"]] = record
                _keep_unsealed(self.out, record)
            # The tables read every record: rebuilt at most every TABLES_EVERY_S while
            # the run goes on (grade() rebuilds them at its end, and on Ctrl-C).
            if time.monotonic() - self.tables_at >= TABLES_EVERY_S:
                self._tables()
        return record

    def _tables(self) -> list[dict]:
        """Rebuild the class tables (with this run's unstored records); a failure is an error
        of the run (the last tables written stay as they were), not of a student."""
        self.tables_at = time.monotonic()
        try:
            recs = store.write_tables(self.out, extra=self.unstored)
        except Exception as err:  # noqa: BLE001
            line = f"the class tables (grades.csv, grades.json) failed: {_failure(err)}"
            if line not in self.errors:
                self.errors.append(line)
            try:  # the summary still has every grade
                recs = store.records(self.out)
            except Exception:  # noqa: BLE001
                recs = []
            kept = [r for r in recs if r["student"] not in self.unstored]
            return kept + list(self.unstored.values())
        return recs

    def stop(self) -> None:
        self.workers.stop()


def error_lines(batch: Batch, records: list[dict]) -> list[str]:
    """The run's errors for the console: the grader's own, then each student whose grade
    is ``error`` (the grader failed on them: graded again on the next run)."""
    lines = list(batch.errors)
    for rec in records:
        if rec.get("status") == "error":
            line = f"{shown(rec['student'])}: {shown(rec.get('reason', ''))}"
            if line not in lines:
                lines.append(line)
    return lines


def _json(data: dict) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def _keep_unsealed(out: Path, record: dict) -> None:
    """The record that could not be sealed, for the instructor (never believed)."""
    try:
        from course_utils._files import write_atomic

        path = store.file_path(out, record["student"], store.UNSEALED)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(record, indent=1, default=str) + "\n")
    except Exception:  # noqa: BLE001 - the summary and the tables still have it
        pass


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
    unsafe_no_sandbox: bool = False,
    variant_secret: str | Path | None = None,
    variant_ids: dict[str, str] | None = None,
    start_over: bool = False,
    no_hidden_tests: bool = False,
    lms: str | None = None,
    adjust: Adjuster | None = None,
) -> Batch:
    """Grade every submission in ``submissions`` against the master ``source`` into ``out``.

    ``variant_secret`` (else ``$COURSE_VARIANT_SECRET_FILE``) names the file of the
    variant secret: each student is graded on the variant of their id, or of the id
    ``variant_ids`` maps their submission's name to (the Gradescope bundle's submitter).

    Before anyone is graded, a report folder graded with another master, a master
    without hidden tests (unless ``no_hidden_tests``: the student version is an easy
    slip) and a class whose every submission is another assignment's notebook stop the
    run. ``start_over`` removes the folder's grades first, whatever master made them.
    ``lms`` (``canvas``, ``moodle``) reads student ids from that LMS's download names.
    ``adjust`` gives each record its late penalty and manual points as it is stored,
    and keeps the last grade of a student with several submissions as it is."""
    limits = limits or Limits()
    limits.check()
    _sandbox_or_refuse(unsafe_no_sandbox, echo)
    if jobs is not None and jobs < 1:
        raise CourseError(f"--jobs must be at least 1, got {jobs}")
    secret = load_secret(variant_secret)
    master = load_master(source)
    in_sync(master)
    if not no_hidden_tests:
        has_hidden_tests(master)
    out = Path(out)
    subs, notes = discover(submissions, master.path.name, lms)
    lookalike = None if lms else lms_lookalike(subs)
    # records not sealed by this grader: noted, not believed
    earlier = store.records(out, notes) if out.is_dir() else []
    if earlier and not start_over:  # first: it names the master the folder holds
        same_master(earlier, master, out)
    _this_assignment(subs, master)
    _prepare_out(out)
    where = parse_shard(shard)
    if where:
        subs = subs[where[0] :: where[1]]
    if start_over and earlier:
        removed = store.clear_grades(out)
        echo(f"note: --start-over: removed the grades of {removed} student(s) in {out}")
    elif earlier:
        _same_variants(earlier, secret, out)
        same_lms(out, lms)
    batch = Batch(notes=notes)
    subs = hold_last_grades(subs, [] if start_over else earlier, batch)
    if adjust is not None:  # their last grade stays as it is, with its own late time
        adjust.keep.update(batch.held)
    options = _options(limits, smoke, not unsafe_no_sandbox, secret and secret[0])
    todo = _to_grade(subs, out, master, force, batch, options)
    changed = master_change(todo, [] if start_over else earlier, master, out)
    other = options_change(todo, [] if start_over else earlier, options)
    _announce(batch, [lookalike, changed, other], echo)
    if todo:  # a run that grades nobody leaves the path of the file that graded them
        store.remember_master(out, master.path.resolve(), master.sha256)
    store.remember_lms(out, lms)
    start = time.perf_counter()
    grader = Grader(
        master, out, limits, smoke=smoke, sandboxed=not unsafe_no_sandbox,
        submissions=Path(submissions), secret=secret, variant_ids=variant_ids,
        jobs=jobs or os.cpu_count() or 1,
    )  # fmt: skip
    grader.previous = {r["student"]: r for r in earlier} if not start_over else {}
    grader.adjust = adjust
    _run_all(grader, todo, jobs, batch, progress, echo)
    batch.records = grader._tables()
    batch.errors += grader.errors
    batch.changes = sorted(c for c in grader.changes if c[0] in batch.graded)
    if batch.changes or (out / store.REGRADES).exists():
        store.write_regrades(out)
    batch.seconds = time.perf_counter() - start
    return batch


def _announce(batch: Batch, lines: list[str | None], echo) -> None:
    """What to know before the run starts: its notes, ``lines`` (warnings), and how
    many are skipped."""
    for note in batch.notes:
        echo(f"note: {note}")
    for line in filter(None, lines):
        echo(line)
    if batch.skipped:
        echo(
            f"{len(batch.skipped)} student(s) already graded (use --force to grade again)"
        )


def master_change(
    todo: list[Submission], earlier: list[dict], master: Master, out: Path
) -> str | None:
    """The line said before a run regrades students who were graded with another
    master: which one (its path when the folder noted it), which one now, and how
    many; a different file of the same name (another checkout's) is named as such."""
    before = {r["student"]: r for r in earlier}
    old = [
        before[s.student]
        for s in todo
        if s.student in before
        and before[s.student].get("master_sha256") not in (None, master.sha256)
    ]
    if not old:
        return None
    now = master.path.resolve()
    shas = sorted({r["master_sha256"] for r in old})
    known = store.masters_used(out)
    paths = sorted({known[s] for s in shas if s in known})
    names = sorted({shown(str(r.get("master"))) for r in old})
    was = f"{', '.join(names)} (sha256 {', '.join(s[:12] for s in shas)}"
    was += f"; {', '.join(paths)})" if paths else ")"
    line = (
        f"note: the master changed: {len(old)} student(s) graded with {was} are "
        f"graded again with {now} (sha256 {master.sha256[:12]})"
    )
    if any(p != str(now) for p in paths):
        line += ", another file of the same name (another checkout?)"
    elif paths:
        line += ", the same file edited since"
    return line


OPTION_NAMES = {
    "timeout": "--timeout",
    "total_timeout": "--total-timeout",
    "memory_mb": "--memory",
    "cpu_seconds": "--cpu-time",
    "smoke": "sizes",
    "sandbox": "sandbox",
}


def options_change(
    todo: list[Submission], earlier: list[dict], options: dict
) -> str | None:
    """The line said before a run grades students again because the options their grade
    depends on changed (an option left out takes its default): which, now and before,
    and how many (``--timeout 60 now, 30 before``), so that the run can be stopped."""
    before = {r["student"]: r.get("options") for r in earlier}
    now = json.loads(json.dumps(options))
    old = [before.get(s.student) for s in todo]
    old = [o for o in old if isinstance(o, dict) and o != now]
    if not old:
        return None
    parts = []
    keys = list(now) + sorted({k for o in old for k in o} - set(now))
    for key in keys:
        was = {_option(key, o.get(key)) for o in old if o.get(key) != now.get(key)}
        if key == "cpu_seconds" and _cpu_follows(now, old):
            continue  # twice --total-timeout, named already
        if was:
            name = OPTION_NAMES.get(key, key)
            now_is = _option(key, now.get(key))
            parts.append(f"{name} {now_is} now, {', '.join(sorted(was))} before")
    return (
        f"note: the options changed: {len(old)} student(s) graded again: "
        f"{'; '.join(parts)} (Ctrl-C, then give them as before, to keep their grades)"
    )


def _cpu_follows(now: dict, old: list[dict]) -> bool:
    """The CPU time is the default, twice the total timeout, now and before."""
    return all(
        o.get("cpu_seconds") == 2 * (o.get("total_timeout") or 0) for o in [now, *old]
    )


def _option(key: str, value) -> str:
    if key == "smoke":
        return "smoke" if value else "full (--full)"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:g}"
    return "none" if value is None else str(value)


def hold_last_grades(
    subs: list[Submission], earlier: list[dict], batch: Batch
) -> list[Submission]:
    """The submissions to go on with. A student with several submissions (an old and a
    new download in one folder) who was graded before keeps that grade and its
    feedback, not an ``invalid`` 0: they are left out of the run, with an error
    line (``batch.errors``) that names the entries and the grade kept."""
    before = {r["student"]: r for r in earlier}
    kept = []
    for sub in subs:
        old = before.get(sub.student)
        if sub.error is None or sub.path is not None or old is None:
            kept.append(sub)
            continue
        batch.held.append(sub.student)
        batch.errors.append(
            f"{shown(sub.student)}: {sub.error}; their last grade "
            f"({old['total']:g}/{old['max_total']:g}, graded {old.get('graded_at')}) "
            "and its feedback are kept until then"
        )
    return kept


def same_master(records: list[dict], master: Master, out: Path) -> None:
    """A report folder holds one assignment: a run with another master would rewrite
    every grade in it (as another assignment's notebook). The same master's file,
    edited (a fixed test), is the same assignment."""
    seen = sorted({Path(r["master"]).name for r in records if r.get("master")})
    if seen and seen != [master.path.name]:
        raise CourseError(
            f"--out {out}: its {len(records)} student(s) were graded with the master "
            f"{', '.join(seen)}, not {master.path.name}: give another --out for this "
            "master, or --start-over to delete those grades and grade with this one"
        )


def same_lms(out: Path, lms: str | None) -> None:
    """A report folder's student ids are read with one ``--lms``, or none, throughout:
    another would grade each submission again under another id, beside the class."""
    noted, before = store.lms_used(out)
    if not noted or before == lms:
        return
    had = f"with --lms {before}" if before else "without --lms"
    give = f"give --lms {before}" if before else "give no --lms"
    now = f"--lms {lms}" if lms else "no --lms"
    raise CourseError(
        f"--out {out}: its students were graded {had}; {give} as before, or another "
        f"--out, or --start-over to delete those grades and grade with {now}"
    )


def has_hidden_tests(master: Master) -> None:
    """A master has hidden tests: without them it is the student version, whose grade
    would be the visible tests' points only."""
    if master.hidden_sources():
        return
    path = master.path
    hint = "grade with the master from solutions/"
    if path.resolve().parent.name == "exercises":
        twin = path.resolve().parent.parent / "solutions" / path.name
        if twin.is_file():
            hint = f"grade with the master, solutions/{path.name}"
    raise CourseError(
        f"--source {path}: no hidden tests, so it looks like the students' version "
        f"(exercises/); {hint}, or pass --no-hidden-tests if this master has none by "
        "design"
    )


def _this_assignment(subs: list[Submission], master: Master) -> None:
    """Stop when every readable submission (two or more) is another assignment's
    notebook: the master is the wrong one, not the whole class."""
    from course_utils.grading.inputs.assignment import WrongAssignment, check_assignment

    wrong: list[tuple[str, str]] = []
    for sub in subs:
        if sub.problem or sub.path is None:
            continue
        try:
            cells = read_cells(sub.path)
        except SubmissionError:
            continue
        try:
            check_assignment(master, cells)
        except WrongAssignment as err:
            wrong.append((sub.student, str(err)))
        else:
            return  # one is this assignment's: grade the class
    if len(wrong) >= 2:
        student, why = wrong[0]
        raise CourseError(
            f"every submission ({len(wrong)}) is another assignment's notebook "
            f"({shown(student)}: {why}): is --source the right master? Nobody was graded"
        )


def _same_variants(
    records: list[dict], secret: tuple[bytes, Path] | None, out: Path
) -> None:
    """A report folder is graded with one variant secret, or none, throughout: another
    would grade its students on other numbers than their classmates'."""
    want = fingerprint(secret[0]) if secret else None
    seen = {r["options"].get("variants") for r in records if r.get("options")}
    if seen and seen != {want}:
        had = "without variants" if seen == {None} else "with another variant secret"
        now = "with --variant-secret" if secret else "without --variant-secret"
        raise CourseError(
            f"--out {out}: its students were graded {had}; grading {now} would give "
            "them other numbers: give the same secret (or none) as before, or another --out"
        )


def _sandbox_or_refuse(unsafe: bool, echo) -> None:
    """Students' code runs in a sandbox, or the instructor said ``--unsafe-no-sandbox``."""
    if unsafe:
        echo("note: --unsafe-no-sandbox: students' code runs without a sandbox")
        return
    problem = isolation.problem()
    if problem:
        raise CourseError(
            f"{problem}: students' code is only run in a sandbox "
            "(install bubblewrap, or pass --unsafe-no-sandbox)"
        )


def _to_grade(
    subs: list[Submission],
    out: Path,
    master: Master,
    force: bool,
    batch: Batch,
    options: dict,
) -> list[Submission]:
    """The submissions to grade; the others (graded already, same files and options) are skipped."""
    todo = []
    for sub in subs:
        keys = master.exercise_keys(options)
        if not force and store.already_graded(
            out, sub.student, _sha(sub.path), master.sha256, options, keys
        ):
            batch.skipped.append(sub.student)
        else:
            todo.append(sub)
    return todo


def progress_line(done: int, total: int, record: dict, elapsed: float) -> str:
    """``[3/6] ann: 8/8 ok (3.5 s); about 9 s left``: one student as they finish, and
    the time left at the run's pace so far (its parallelism included)."""
    left = total - done
    eta = f"about {_duration(elapsed / done * left)} left" if left else "done"
    return (
        f"[{done}/{total}] {shown(record['student'])}: "
        f"{record['total']:g}/{record['max_total']:g} {record['status']} "
        f"({record.get('seconds', 0):.1f} s); {eta}"
    )


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds} s" if seconds < 120 else f"{seconds // 60} min {seconds % 60} s"


def _run_all(grader: Grader, todo, jobs, batch: Batch, progress, echo) -> None:
    """Grade ``todo`` on ``jobs`` threads, a line per student as they finish (unless
    ``progress`` is False); on Ctrl-C stop the workers, keep what is graded."""
    pool = ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1)
    started, done = time.monotonic(), 0
    try:
        futures = {pool.submit(grader.grade_one, sub): sub.student for sub in todo}
        for fut in as_completed(futures):
            done += 1
            try:
                record = fut.result()
            except Exception as err:  # noqa: BLE001 - e.g. the report folder became unwritable
                batch.errors.append(f"{futures[fut]}: not graded: {_failure(err)}")
                record = None
            if record is not None:
                batch.graded.append(record["student"])
                if progress is not False:
                    elapsed = time.monotonic() - started
                    echo(progress_line(done, len(todo), record, elapsed))
    except BaseException:
        grader.stop()
        pool.shutdown(wait=True, cancel_futures=True)
        store.write_tables(grader.out)
        store.remove_work(grader.out, grader.work)
        raise
    pool.shutdown(wait=True)
    store.remove_work(grader.out, grader.work)


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
    master = load_master(source, visible_only=True)
    try:
        cells = read_cells(path.resolve())  # the student's own file: a link is fine
        mine = claimed(cells)  # the student's own check: their copy's variant
    except (SubmissionError, VariantError) as err:
        raise CourseError(f"NOTEBOOK {path}: {err}") from None
    with tempfile.TemporaryDirectory(prefix="course-check-") as tmp:
        grader = Grader(
            master,
            Path(tmp),
            limits or Limits(),
            smoke=smoke,
            keep_executed=False,
            variant=mine,
        )
        matched = match(master, cells)
        run = grader.run_job("check", matched)
        # The flags are the instructor's (check shows none): their analysis failing
        # changes nothing here.
        return scoring.score(
            master, matched, run or {}, student=path.stem, on_error=lambda *_: None
        )


def _pristine(path: Path) -> Path | None:
    """The course's own copy of the student notebook, whose visible tests are unedited."""
    from course_utils.tooling.notebooks import course_root

    try:
        root = course_root(path.resolve().parent)
    except CourseError:
        return None
    candidate = root / "exercises" / path.name
    return candidate if candidate.is_file() else None
