"""``course grade``'s class-level verbs and options: ``report``, ``export``, ``manual``,
``similarity`` and ``answers`` (in their own modules), regrading (``--only``,
``--student``) and the late policy (``--deadline`` …).

:mod:`.grade` hands a ``grade`` command line here when :func:`handles` says so;
the options are added to the ``grade`` parser by :func:`add_options`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from course_utils.errors import CourseError
from course_utils.grading.commands import answers, similarity
from course_utils.tooling.args import number

VERBS = ("report", "export", "manual", "similarity", "answers")
HELP = f"""\
course grade report DIR
course grade export DIR --format canvas|moodle|csv --roster roster.csv [--per-exercise]
{answers.HELP}
{similarity.HELP}
course grade SUBMISSIONS --source NB --out DIR --only EXERCISE | --student ID
course grade slurm SUBMISSIONS --source NB --out DIR --tasks N [--partition P]"""


def handles(args: argparse.Namespace) -> bool:
    """Whether this ``grade`` command line is one of the verbs or a regrade."""
    regrade = getattr(args, "only", None) or getattr(args, "student", None)
    return args.submissions in VERBS or bool(regrade)


def _one_folder(args: argparse.Namespace, verb: str, extra: int = 0) -> list[Path]:
    if len(args.more) != 1 + extra:
        want = "DIR" + (" FILE" if extra else "")
        raise CourseError(
            f"grade {verb}: expected {want}, got {len(args.more)} argument(s)"
        )
    folder = Path(args.more[0])
    if not (folder / "grades.json").is_file():
        raise CourseError(f"grade {verb}: {folder} is not a graded report folder")
    return [Path(p) for p in args.more]


def run(args: argparse.Namespace) -> int:
    """Run the verb or regrade named by ``args``."""
    if args.submissions == "report":
        return _report(args)
    if args.submissions == "export":
        (folder,) = _one_folder(args, "export")
        from course_utils.grading.integrations import gradebook

        return gradebook.run(folder, args)
    if args.submissions == "similarity":
        return similarity.run(args)
    if args.submissions == "answers":
        return answers.run(args)
    if args.submissions == "manual":
        folder, table = _one_folder(args, "manual", extra=1)
        from course_utils.grading.policy import adjust

        with answers.revealed(table, args.key, folder) as plain:  # pseudonyms read
            return adjust.import_manual(folder, plain)
    from course_utils.grading.batch import regrade
    from course_utils.grading.policy import adjust

    # the late policy and manual grades, kept: on each record as it is stored, then on
    # the class when the regrade ends, also by Ctrl-C or SIGTERM
    with adjust.Adjuster(Path(args.out), args) as adjuster:
        return regrade.run(args, adjuster)


def _report(args: argparse.Namespace) -> int:
    from course_utils.grading.records import classreport

    (folder,) = _one_folder(args, "report")
    where, data = classreport.write(folder)
    flagged = [t for t in data["tests"] if t["flag"]]
    print(
        f"class report of {data['students']} student(s) in {where} (report.html, report.md)"
    )
    for t in flagged:
        print(f"flag: {t['name']}: {t['flag']}")
    return 0


def add_options(g) -> None:
    """The options of the verbs, regrading and the late policy, on the ``grade`` parser."""
    g.add_argument("--format", choices=("canvas", "moodle", "csv"), default="csv",
                   help="export: the gradebook file's format")  # fmt: skip
    g.add_argument("--roster", metavar="CSV", help="export: submission name -> student")
    g.add_argument(
        "--per-exercise", action="store_true", help="export: a column per exercise"
    )
    g.add_argument(
        "--assignment", metavar="NAME", help="export: the gradebook column's name"
    )
    g.add_argument(
        "--only", metavar="EXERCISE", help="regrade one exercise for the class"
    )
    g.add_argument("--student", metavar="ID", help="regrade one student")
    similarity.add_options(g)
    answers.add_options(g)
    g.add_argument(
        "--deadline",
        metavar="ISO",
        help="late policy: the deadline (ISO 8601, UTC unless given)",
    )
    g.add_argument("--penalty-per-day", type=number(float, 0), default=None, metavar="PCT",
                   help="late policy: percent of the score taken per day (or part) late")  # fmt: skip
    g.add_argument("--cutoff", type=number(float, 0), default=None, metavar="DAYS",
                   help="late policy: later than this many days scores 0")  # fmt: skip
    g.add_argument("--grace", type=number(float, 0), default=None, metavar="MINUTES",
                   help="late policy: minutes after the deadline still on time")  # fmt: skip
    g.add_argument(
        "--extensions",
        metavar="CSV",
        help="late policy: student,deadline or student,days",
    )
    g.add_argument(
        "--times",
        metavar="CSV",
        help="late policy: student,submitted_at (else file times)",
    )
