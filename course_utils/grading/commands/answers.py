"""``course grade answers SUBMISSIONS --master NB [--out DIR] [--anonymous] [--points N]``:
the class's written answers gathered per question for grading by hand, and a
``manual.csv`` for ``course grade manual``; ``manual --key`` reads a table filled under
pseudonyms.

:mod:`.verbs` hands the command line here; :func:`add_options` adds the options to the
``grade`` parser.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import tempfile
from collections.abc import Iterator
from pathlib import Path

from course_utils.errors import CourseError
from course_utils.grading.commands import class_args
from course_utils.tooling.args import number

HELP = (
    "course grade answers SUBMISSIONS --master NB [--out DIR] [--anonymous] [--points N] "
    "[--lms canvas|moodle]\n"
    "course grade manual DIR manual.csv [--key ANSWERS/_instructor/anonymous.csv]"
)


def add_options(g) -> None:
    """The options of ``grade answers`` and ``grade manual --key``, on the ``grade`` parser."""
    g.add_argument(
        "--anonymous",
        action="store_true",
        help="answers: show students under pseudonyms; the key goes to DIR/_instructor/",
    )
    g.add_argument(
        "--points",
        type=number(float, 0),
        default=None,
        metavar="N",
        help="answers: what each written answer is worth when the master does not say",
    )
    g.add_argument(
        "--key",
        metavar="CSV",
        help="manual: the key of an anonymous manual.csv (default: beside the table)",
    )


def run(args: argparse.Namespace) -> int:
    """Gather the class's written answers, write the pages and ``manual.csv``."""
    from course_utils.grading.records import answers

    submissions, master = class_args.submissions_and_master(
        args, "answers", "solutions/07_migration_exercises.ipynb"
    )
    out = class_args.out_folder(
        args,
        submissions,
        f"answers-{master.path.stem}",
        "; write the answers elsewhere",
    )
    class_args.warn_lms_lookalike(
        args, submissions, master.path.name,
        "is named by that whole name in manual.csv, not as a class graded with "
        "--lms is",
    )  # fmt: skip
    old = out / answers.INSTRUCTOR / answers.KEY
    result = answers.collect(
        submissions,
        master,
        points=args.points,
        anonymous=args.anonymous,
        old_key=answers.read_key(old) if args.anonymous and old.is_file() else None,
        lms=getattr(args, "lms", None),
    )
    _, table = answers.write(result, out)
    _print(result, out, table)
    return 0


def _print(result, out: Path, table: Path) -> None:
    for note in result.notes:
        print(f"note: {note}")
    for student, why in sorted(result.not_read.items()):
        real = result.key[student] if result.key else student
        print(f"not read: {real}: {why}")
    if table.name != "manual.csv":
        print(
            f"note: {out / 'manual.csv'} holds grading already and was kept; "
            f"the new table is {table}"
        )
    for q in result.questions:
        worth = f", worth {q.points:g}" if q.points is not None else ""
        print(
            f"{q.id}: {result.answered(q.id)} of {len(result.students)} answered{worth}"
        )
    print(
        f"written answers of {len(result.students)} student(s) to "
        f"{len(result.questions)} question(s) in {out} (index.html, questions/); "
        f"fill {table}, then: course grade manual REPORT_DIR {table}"
    )
    if result.key:
        print(
            f"students are shown under pseudonyms; the key is {out / '_instructor' / 'anonymous.csv'}: "
            "give graders the pages and the table, not _instructor/"
        )
    if any(q.points is None for q in result.questions):
        print(
            "note: the master gives no points for a written answer: max_points is "
            "blank (give --points N, or fill the column)"
        )


def _known(folder: Path) -> set[str]:
    from course_utils.grading.records import store

    return {r["student"] for r in store.records(folder)}


@contextlib.contextmanager
def revealed(table: Path, key: str | None, folder: Path) -> Iterator[Path]:
    """``table`` with anonymous ids read through their key, for ``course grade manual``.

    The key is ``--key``, else ``_instructor/anonymous.csv`` beside the table (where
    ``grade answers --anonymous`` wrote both). A student id written with a leading
    ``'`` (how the table keeps a spreadsheet from reading ``=…`` as a formula) is read
    without it. A table that needs neither is handed on unchanged."""
    from course_utils.grading.records import answers

    path = Path(key) if key else table.parent / answers.INSTRUCTOR / answers.KEY
    if key and not path.is_file():
        raise CourseError(f"--key {key}: no such file")
    names = answers.read_key(path) if path.is_file() else {}
    try:
        text = table.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        yield table  # import_manual says what is wrong with it
        return
    reader = csv.reader(io.StringIO(text))
    rows = list(reader)
    head = [h.strip().lower() for h in (rows[0] if rows else [])]
    if "student" not in head:
        yield table
        return
    col, known = head.index("student"), _known(folder)
    changed = False
    for row in rows[1:]:
        if len(row) <= col:
            continue
        who = row[col].strip()
        real = names.get(who, who)
        if real not in known and real.startswith("'") and real[1:] in known:
            real = real[1:]
        if real != who:
            row[col], changed = real, True
    _refuse_unread_pseudonyms(rows[1:], col, known, table)
    if not changed:
        yield table
        return
    with tempfile.TemporaryDirectory(prefix="course-manual-") as tmp:
        plain = Path(tmp) / table.name
        with plain.open("w", encoding="utf-8", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(rows)
        if names:
            print(f"note: anonymous ids read through {path}")
        yield plain


def _refuse_unread_pseudonyms(
    rows: list[list[str]], col: int, known: set[str], table: Path
) -> None:
    from course_utils.grading.records import answers

    ids = {r[col].strip() for r in rows if len(r) > col} - known
    prefixes = tuple(f"{p}-" for p in answers.PREFIXES)
    anonymous = sorted(i for i in ids if i.startswith(prefixes) and i[-1:].isdigit())
    if anonymous and not (known & {r[col].strip() for r in rows if len(r) > col}):
        raise CourseError(
            f"manual grades {table}: its students are pseudonyms ({', '.join(anonymous[:3])}"
            f"{', …' if len(anonymous) > 3 else ''}) of course grade answers --anonymous: "
            "give their key with --key ANSWERS/_instructor/anonymous.csv"
        )
