"""The grader's verbs for the ``course`` command: ``grade``, ``grade merge`` and ``check``."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import signal
from pathlib import Path

from course_utils.errors import CourseError
from course_utils.grading.commands import deploy, limits
from course_utils.tooling.args import number

GRADE_HELP = """\
course grade SUBMISSIONS --source solutions/NAME.ipynb --out DIR [options]
course grade merge SHARD_DIR... --out DIR
{verbs}

SUBMISSIONS holds one .ipynb per student, or one sub-folder per student. A folder
literally named 'merge' (or 'report', 'export', 'manual', 'similarity', 'answers') is graded
when written as ./merge."""


@contextlib.contextmanager
def _interrupted_once():
    """Ctrl-C and SIGTERM raise KeyboardInterrupt once; later ones are ignored, to the
    process's exit once one was raised. ``timeout -s INT`` signals the grader twice (the child, then its group),
    and Ctrl-C gets pressed again: a second KeyboardInterrupt raised while the run stopped
    its workers cut that short, and the exit then waited for the workers still running,
    until their cell's timeout."""
    fired = False

    def handler(signum, frame):  # noqa: ARG001
        nonlocal fired
        if not fired:
            fired = True
            raise KeyboardInterrupt

    saved = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(sig) is signal.SIG_IGN and sig == signal.SIGINT:
            continue  # started in the background: Ctrl-C stays off
        try:
            saved[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread
            pass
    try:
        yield
    finally:
        for sig, old in saved.items():
            if old is not None and not fired:
                signal.signal(sig, old)


def cmd_grade(args: argparse.Namespace) -> int:
    with _interrupted_once():
        return _cmd_grade(args)


def _cmd_grade(args: argparse.Namespace) -> int:
    from course_utils.grading.batch import grader
    from course_utils.grading.commands import verbs
    from course_utils.grading.policy import adjust
    from course_utils.grading.records import store as grader_store

    if verbs.handles(args):
        return verbs.run(args)
    if args.submissions == "merge":
        if not args.more:
            raise CourseError("grade merge: name the shard report folders to join")
        if not args.out:
            raise CourseError("grade merge: --out DIR is required")
        shards = [Path(p) for p in args.more]
        recs, notes = adjust.merge(shards, Path(args.out))  # with the late policy
        for note in notes:
            print(f"note: {note}")
        print(grader_store.table(recs, shutil.get_terminal_size().columns))
        print(
            f"merged {len(recs)} student(s) from {len(args.more)} folder(s) into {args.out}"
        )
        return 0
    if args.more:
        raise CourseError(
            f"unexpected arguments: {' '.join(args.more)} (one SUBMISSIONS folder)"
        )
    if not args.source:
        raise CourseError(
            "--source is required: the master notebook, e.g. solutions/00_welcome_exercises.ipynb"
        )
    if not args.out:
        raise CourseError("--out DIR is required: where the reports go")
    limits = grader.Limits(
        timeout=args.timeout,
        total_timeout=args.total_timeout,
        memory_mb=args.memory,
        cpu_time=args.cpu_time,
    )
    # the late policy and manual grades: on each record as it is stored, then on the
    # class when the run ends, also by Ctrl-C or SIGTERM
    with adjust.Adjuster(Path(args.out), args) as adjuster:
        batch = grader.grade(
            args.submissions,
            args.source,
            args.out,
            limits=limits,
            jobs=args.jobs,
            force=args.force,
            shard=args.shard,
            smoke=not args.full,
            unsafe_no_sandbox=args.unsafe_no_sandbox,
            variant_secret=args.variant_secret,
            start_over=args.start_over,
            no_hidden_tests=args.no_hidden_tests,
            lms=args.lms,
            adjust=adjuster,
        )
    # as the late policy and manual points left them (a record this run could not
    # store stays as graded)
    adjusted = {r["student"]: r for r in grader_store.records(Path(args.out))}
    records = [adjusted.get(r["student"], r) for r in batch.records]
    print(grader_store.table(records, shutil.get_terminal_size().columns))
    print(grader_store.totals(records))
    for student, change in batch.changes:  # also in regrades.csv
        print(
            f"changed: {student}: {change['old']:g} -> {change['new']:g} "
            f"({change['what']})"
        )
    errors = grader.error_lines(batch, records)
    for line in errors:  # what the instructor must look at
        print(f"error: {line}")
    print(
        f"graded {len(batch.graded)}, skipped {len(batch.skipped)} already graded, "
        f"in {batch.seconds:.1f} s; reports in {args.out} (grades.csv, grades.json, <student>/)"
    )
    if errors:
        print(error_summary(errors, records, batch.held))
    return 1 if errors else 0


def error_summary(errors: list[str], records: list[dict], held: list[str]) -> str:
    """The line after the ``error:`` lines: what each kind of error left in the
    students' folders, so that nobody hands back the wrong thing."""
    failed = sorted(r["student"] for r in records if r.get("status") == "error")
    parts = []
    if failed:
        parts.append(
            f"the grader failed on {_some(failed)}: graded again on the next run, "
            "their folders hold no feedback to hand back"
        )
    if held:
        parts.append(
            f"{_some(held)} handed in several submissions: their last grade and "
            "feedback stay until one is kept"
        )
    named = tuple(f"{s}: " for s in failed + held)
    others = [line for line in errors if not line.startswith(named)]
    if others:
        parts.append(
            f"{len(others)} more: each line says what failed (the students named are "
            "graded again on the next run)"
        )
    return f"{len(errors)} error(s): " + "; ".join(parts)


def _some(students: list[str]) -> str:
    """``ann, bob`` (and the count beyond five)."""
    more = f" and {len(students) - 5} more" if len(students) > 5 else ""
    return ", ".join(students[:5]) + more


def _on_colab_without(notebook: str) -> None:
    """On Colab a notebook is not a file of the runtime: say how to make it one."""
    from course_utils.install.hosted import runtime_name

    if not Path(notebook).is_file() and runtime_name() == "colab":
        raise CourseError(
            f"NOTEBOOK {notebook}: no such file; on Colab the notebook is not a file of "
            "the runtime: File → Download → Download .ipynb, upload that file to the Files "
            "pane (the folder icon on the left), then run !course check with its name"
        )


def cmd_check(args: argparse.Namespace) -> int:
    from course_utils.grading.batch import grader

    _on_colab_without(args.notebook)
    limits = grader.Limits(
        timeout=args.timeout, total_timeout=args.total_timeout, memory_mb=args.memory
    )
    rec = grader.check(args.notebook, args.source, limits=limits, smoke=not args.full)
    rows = [
        (ex, f"{i['points']:g}/{i['max_points']:g}", i["status"], i["message"])
        for ex, i in rec["exercises"].items()
    ]
    w = [
        max(len(r[k]) for r in [("exercise", "points", "status", ""), *rows])
        for k in range(3)
    ]
    room = max(30, shutil.get_terminal_size().columns - sum(w) - 8)
    print(
        f"{'exercise'.ljust(w[0])}  {'points'.ljust(w[1])}  {'status'.ljust(w[2])}  note"
    )
    for ex, pts, st, msg in rows:
        msg = msg if len(msg) <= room else msg[: room - 1] + "…"
        print(f"{ex.ljust(w[0])}  {pts.ljust(w[1])}  {st.ljust(w[2])}  {msg}")
    for test in rec[
        "tests"
    ]:  # the whole message of a failed check: expected, got, hint
        msg = test["message"]
        if test["status"] != "passed" and ("\n" in msg or len(msg) > room):
            print(f"\n{test['name']}:\n{msg}")
    if rec["notes"]:
        print()
    for note in rec["notes"]:
        print(f"note: {note}")
    print(
        f"\nvisible tests: {rec['total']:g} / {rec['max_total']:g} points ({rec['status']}: {rec['reason']}); "
        "hidden tests are run by the instructor"
    )
    return (
        0
        if rec["exercises"]
        and all(i["status"] == "passed" for i in rec["exercises"].values())
        else 1
    )


def add_commands(sub) -> None:
    """Add ``grade`` and ``check`` to the ``course`` command's sub-parsers."""
    _add_grade(sub)
    _add_check(sub)
    deploy.add_commands(sub)  # grade slurm, release, gradescope: in .deploy


def _add_grade(sub) -> None:
    from course_utils.grading.commands import verbs

    g = sub.add_parser(
        "grade",
        help="grade a folder of submissions against a master (instructors)",
        usage=GRADE_HELP.format(verbs=verbs.HELP),
        description="Grade submissions; see docs/GRADING.md.",
    )
    g.add_argument(
        "submissions", metavar="SUBMISSIONS", help="folder of submissions, or 'merge'"
    )
    g.add_argument("more", nargs="*", help=argparse.SUPPRESS)
    g.add_argument(
        "--source", help="the master notebook (ours or an nbgrader source notebook)"
    )
    g.add_argument("--out", metavar="DIR", help="report folder")
    _add_grade_limits(g)
    g.add_argument(
        "--jobs",
        type=number(int, 1),
        default=None,
        metavar="N",
        help="submissions graded at once (default: number of cores)",
    )
    g.add_argument(
        "--force", action="store_true", help="grade again students already graded"
    )
    g.add_argument(
        "--start-over",
        action="store_true",
        help="delete the grades already in --out (made with another master, say) and "
        "grade afresh",
    )
    g.add_argument(
        "--lms",
        choices=("canvas", "moodle"),
        help="SUBMISSIONS is this LMS's bulk download: the student id is the login "
        "(Canvas's bob_12345_67890_name.ipynb) or the name (Moodle's folders); "
        "answers and similarity take it too",
    )
    g.add_argument(
        "--no-hidden-tests",
        action="store_true",
        help="grade with a master that has no hidden tests (without it such a master "
        "is refused: it is usually the students' version from exercises/)",
    )
    g.add_argument(
        "--shard",
        metavar="K/N",
        help="grade every N-th submission starting at K (0-based)",
    )
    g.add_argument(
        "--full",
        action="store_true",
        help="run the tests at full sizes (default: smoke sizes)",
    )
    g.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="run students' code without the bubblewrap sandbox (see docs/GRADING.md)",
    )
    g.add_argument(
        "--variant-secret",
        metavar="FILE",
        help="per-student variants: grade each student on the variant of their id "
        "(default: $COURSE_VARIANT_SECRET_FILE; without either, variants are off)",
    )
    verbs.add_options(g)
    g.set_defaults(func=cmd_grade)


def _add_grade_limits(g) -> None:
    """``grade``'s limits: per cell, per submission, memory, CPU time."""
    limits.add_limits(g)
    g.add_argument(
        "--cpu-time",
        type=number(float, 1),
        default=None,
        metavar="S",
        help="CPU seconds per process (default twice --total-timeout)",
    )


def _add_check(sub) -> None:
    c = sub.add_parser(
        "check", help="run the visible tests of your exercise notebook (students)"
    )
    c.add_argument("notebook", metavar="NOTEBOOK")
    c.add_argument(
        "--source",
        help="notebook whose tests to run (default: the course's copy in exercises/)",
    )
    limits.add_limits(c)  # the grader's own: a check runs as the grade does
    c.add_argument(
        "--full", action="store_true", help="full sizes (default: smoke sizes)"
    )
    c.set_defaults(func=cmd_check)
