"""``course grade similarity SUBMISSIONS --master NB [--out DIR]``: how alike the class's
solution cells are, for a person to read (never a penalty; no grade is read or written).

:mod:`.verbs` hands the command line here; :func:`add_options` adds the options to the
``grade`` parser.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from course_utils.grading.commands import class_args
from course_utils.tooling.args import number

HELP = (
    "course grade similarity SUBMISSIONS --master NB [--out DIR] [--starter NB] "
    "[--boilerplate FILE]... [--noise N] [--guarantee N] [--show N] [--lms canvas|moodle]"
)
TOP = 10  # pairs printed on the console


def add_options(g) -> None:
    """The options of ``grade similarity``, on the ``grade`` parser."""
    g.add_argument(
        "--master",
        metavar="NB",
        help="similarity, answers: the master whose exercises are read (or --source)",
    )
    g.add_argument(
        "--starter",
        metavar="NB",
        help="similarity: the notebook the students were given (default: the master's student version)",
    )
    g.add_argument(
        "--boilerplate",
        metavar="FILE",
        action="append",
        default=[],
        help="similarity: more code everyone had (a notebook or a text file); repeatable",
    )
    g.add_argument(
        "--noise",
        type=number(int, 1),
        default=None,
        metavar="N",
        help="similarity: matches shorter than N normalised characters are ignored (25)",
    )
    g.add_argument(
        "--guarantee",
        type=number(int, 1),
        default=None,
        metavar="N",
        help="similarity: matches of N normalised characters or more are always found (30)",
    )
    g.add_argument(
        "--show",
        type=number(int, 0),
        default=None,
        metavar="N",
        help="similarity: pairs shown side by side on each page (20)",
    )


def run(args: argparse.Namespace) -> int:
    """Compare the class's submissions, write the report, print the top pairs."""
    from course_utils.grading.records import similarity

    submissions, master = class_args.submissions_and_master(
        args, "similarity", "solutions/00_welcome_exercises.ipynb"
    )
    out = class_args.out_folder(
        args,
        submissions,
        f"similarity-{master.path.stem}",
        ", where the report would be taken for submissions; write it elsewhere",
    )
    class_args.warn_lms_lookalike(
        args, submissions, master.path.name, "is named by that whole name in the pairs"
    )
    noise = args.noise or similarity.NOISE
    result = similarity.similarity(
        submissions,
        master,
        starter=Path(args.starter) if args.starter else None,
        boilerplate=tuple(Path(p) for p in args.boilerplate),
        noise=noise,
        guarantee=args.guarantee or max(similarity.GUARANTEE, noise),
        lms=getattr(args, "lms", None),
    )
    show = similarity.SHOW if args.show is None else args.show
    similarity.write(result, out, show)
    _print(result, out)
    return 0


def _print(result, out: Path) -> None:
    for note in result.notes:
        print(f"note: {note}")
    for student, why in sorted(result.problems.items()):
        print(f"not compared: {student}: {why}")
    top = [p for p in result.overall if p.score > 0][:TOP]
    if top:
        width = max(len(p.a) + len(p.b) for p in top) + 5
        print(f"{'pair'.ljust(width)}  score  shares")
    for p in top:
        pair = f"{p.a} and {p.b}".ljust(width)
        print(f"{pair}  {p.score:5.0%}  {p.share_a:.0%} / {p.share_b:.0%}")
    above = sum(1 for p in result.overall if p.score > 0)
    print(
        f"compared {len(result.code)} student(s) on {len(result.exercises)} "
        f"exercise(s): {above} of {len(result.overall)} pair(s) score above 0"
        f"{f' (the top {len(top)} above)' if top else ''}; reports in {out} "
        "(overall.csv, overall.html, exercises/)"
    )
    print(
        "Similarity is evidence for a person to read, never a penalty: no grade was read or changed."
    )
