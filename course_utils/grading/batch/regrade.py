"""Regrading: ``--only EXERCISE`` for the whole class after a test fix, ``--student ID`` for one.

``--only`` runs, for each student already graded, the master's setup cells, the
student's cells of that exercise and its tests, and merges the result into the
student's record: the other exercises keep their points, and the record's
per-exercise keys (:meth:`.Master.exercise_keys`) say which tests each score
comes from, so a later plain run resumes. ``--student`` grades one student
again from scratch. Either way each record notes what changed (``regrades``:
when, what, old and new points), ``DIR/regrades.csv`` lists every change of
the class (a student whose points stayed the same gets no row), and the
command prints the changes.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from course_utils.errors import CourseError
from course_utils.grading.batch import grader
from course_utils.grading.inputs.master import in_sync, load_master
from course_utils.grading.inputs.seeds import load_secret
from course_utils.grading.inputs.submissions import discover
from course_utils.grading.policy import scoring
from course_utils.grading.records import store

LOG = store.REGRADES


class Regrader(grader.Grader):
    """A batch that merges each new grade into the student's old record."""

    def __init__(self, *args, only: str | None, old: dict[str, dict], **kwargs):
        super().__init__(*args, **kwargs)
        self.only, self.old = only, old
        self.changes: list[tuple[str, dict]] = []  # this run's, by student
        self.full: dict[
            str, list
        ] = {}  # with --only: each student's cells before the cut

    def run_job(self, student, matched):
        if self.only:  # the exercise's cells only; scoring then sees the same cells
            self.full[student] = list(matched.cells)
            matched.cells[:] = [
                c
                for c in matched.cells
                if c.role == "context" or c.exercise == self.only
            ]
        return super().run_job(student, matched)

    def _files(self, matched, run, record):
        """The report files with all the student's code (other exercises' cells not run)."""
        full = self.full.pop(record["student"], None)
        if full is None or matched is None or run is None:
            return super()._files(matched, run, record)
        ran = iter(run.get("cells", []))
        kept = {id(c) for c in matched.cells}
        cells = [
            next(ran, {}) if id(c) in kept else {"status": "not run", "outputs": []}
            for c in full
            if c.role in ("context", "solution", "test")
        ]
        shown = dataclasses.replace(matched, cells=full)
        return super()._files(shown, run | {"cells": cells}, record)

    def finish(self, record: dict) -> dict:
        record = super().finish(record)
        old = self.old.get(record["student"])
        if old is None:
            return record
        what = self.only or "all"
        if self.only and record["status"] != "invalid":
            record = merge_exercise(old, record, self.only)
        raw = sum(t["points"] for t in old["tests"])  # before late and manual points
        before = old["exercises"][self.only]["points"] if self.only else raw
        after = (
            record["exercises"][self.only]["points"] if self.only else record["total"]
        )
        change = {"at": record["graded_at"], "what": what, "old": before, "new": after,
                  "old_total": raw, "new_total": record["total"]}  # fmt: skip
        self.changes.append((record["student"], change))  # each regraded, for the count
        history = list(old.get("regrades", []))
        if (before, raw) != (after, record["total"]):  # regrades.csv: the changes only
            history.append(change)
        return record | ({"regrades": history} if history else {})


def merge_exercise(old: dict, new: dict, exercise: str) -> dict:
    """``old`` with ``exercise``'s tests and points from ``new`` (and ``new``'s bookkeeping)."""
    keep = ("exercises", "tests", "total", "status", "reason", "notes", "flags")
    merged = {k: v for k, v in new.items() if k not in keep}
    tests = [t for t in old["tests"] if t["exercise"] != exercise]
    tests += [t for t in new["tests"] if t["exercise"] == exercise]
    order = list(old["exercises"])
    tests.sort(
        key=lambda t: order.index(t["exercise"]) if t["exercise"] in order else 0
    )
    exercises = dict(old["exercises"]) | {exercise: new["exercises"][exercise]}
    status, reason = old["status"], old.get("auto_reason", old["reason"])
    if new["status"] != "ok" and not _earlier_problem(old, exercise, order):
        status, reason = new["status"], new["reason"]  # this run's problem comes first
    elif status == "ok":
        status, reason = scoring.ok_status(exercises)
    return merged | {
        "exercises": exercises,
        "tests": tests,
        "total": sum(t["points"] for t in tests),
        "status": status,
        "reason": reason,
        "notes": old.get("notes", []) + new.get("notes", []),
        "flags": sorted(set(old.get("flags", [])) | set(new.get("flags", []))),
    }


# An exercise's status that is also the whole run's (scoring._PROBLEM_STATUS).
RUN_PROBLEMS = ("memory", "timeout", "crashed")


def _earlier_problem(old: dict, exercise: str, order: list[str]) -> bool:
    """Whether ``old``'s status comes from an exercise before ``exercise``, not run again.

    A student's status is the first problem of the run; an ``--only`` run of a later
    exercise leaves that one standing."""
    if old["status"] not in RUN_PROBLEMS or exercise not in order:
        return False
    before = order[: order.index(exercise)]
    return any(old["exercises"][ex].get("status") == old["status"] for ex in before)


def write_log(out: Path) -> list[list[str]]:
    """Rebuild ``DIR/regrades.csv`` from the records; returns its rows."""
    return store.write_regrades(out)


def _limits(args: argparse.Namespace) -> grader.Limits:
    return grader.Limits(timeout=args.timeout, total_timeout=args.total_timeout,
                        memory_mb=args.memory, cpu_time=args.cpu_time)  # fmt: skip


def _chosen(args, subs, old: dict, notes: list[str]) -> list:
    if args.student:
        chosen = [s for s in subs if s.student == args.student]
        if not chosen:
            raise CourseError(f"--student {args.student!r}: no such submission")
        return chosen
    for s in subs:
        if s.student not in old:
            notes.append(
                f"{s.student}: not graded yet (grade the class without --only)"
            )
    return [s for s in subs if s.student in old]


def regrade(
    args: argparse.Namespace, echo=print, errors: list[str] | None = None, adjust=None
) -> list[list[str]]:
    """Regrade as ``args`` say; returns this run's changes: student, what, old and new
    points. ``errors`` gets the run's error lines (:func:`.grader.error_lines`);
    ``adjust`` (:class:`.adjust.Adjuster`) gives each record its late penalty and manual
    points as it is stored."""
    if args.only and args.student:
        raise CourseError("--only and --student: choose one")
    if not args.source or not args.out:
        raise CourseError("a regrade needs --source and --out, as the grading run had")
    master, out = load_master(args.source), Path(args.out)
    in_sync(master)
    if args.only and args.only not in master.exercises:
        raise CourseError(
            f"--only {args.only!r}: the master has {', '.join(master.exercises)}"
        )
    grader._sandbox_or_refuse(args.unsafe_no_sandbox, echo)
    secret = load_secret(getattr(args, "variant_secret", None))
    grader._prepare_out(out)
    subs, notes = discover(
        args.submissions, master.path.name, getattr(args, "lms", None)
    )
    old = {r["student"]: r for r in store.records(out, notes)}
    grader.same_master(list(old.values()), master, out)
    grader._same_variants(list(old.values()), secret, out)
    if old:
        grader.same_lms(out, getattr(args, "lms", None))
    chosen = _chosen(args, subs, old, notes)
    for note in notes:
        echo(f"note: {note}")
    regrader = Regrader(
        master, out, _limits(args), smoke=not args.full, sandboxed=not args.unsafe_no_sandbox,
        submissions=Path(args.submissions), only=args.only, old=old, secret=secret,
    )  # fmt: skip
    regrader.adjust = adjust
    done = grader.Batch(notes=notes)
    chosen = grader.hold_last_grades(chosen, list(old.values()), done)
    if adjust is not None:  # their last grade stays as it is, with its own late time
        adjust.keep.update(done.held)
    options = grader._options(_limits(args), not args.full,
                              not args.unsafe_no_sandbox, secret and secret[0])  # fmt: skip
    line = grader.options_change(chosen, list(old.values()), options)
    if line:  # a limit left out takes its default, as a plain run says
        echo(line)
    if chosen:  # for a later run's "master changed" line, as a plain run notes it
        store.remember_master(out, master.path.resolve(), master.sha256)
    grader._run_all(regrader, chosen, args.jobs, done, None, echo)
    recs = store.write_tables(out)
    write_log(out)
    if errors is not None:
        done.errors += regrader.errors
        mine = [r for r in recs if r["student"] in done.graded]
        errors += grader.error_lines(done, mine)
    return [
        [student, c["what"], f"{c['old']:g}", f"{c['new']:g}"]
        for student, c in sorted(regrader.changes)
        if student in done.graded
    ]


def run(args: argparse.Namespace, adjust=None) -> int:
    errors: list[str] = []
    rows = regrade(args, errors=errors, adjust=adjust)
    changed = [row for row in rows if row[2] != row[3]]
    for student, what, old, new in changed:
        print(f"{student}: {what}: {old} -> {new}")
    for line in errors:  # the grader failed on them: graded again on the next run
        print(f"error: {line}")
    print(
        f"regraded {len(rows)} student(s), {len(changed)} changed; every change is in "
        f"{Path(args.out) / LOG}"
    )
    return 1 if errors else 0
