"""The arguments the class-wide report commands share (``course grade similarity`` and
``course grade answers``): one SUBMISSIONS folder, the master from ``--master``, an
output folder outside the submissions, and ``--lms``."""

from __future__ import annotations

import argparse
from pathlib import Path

from course_utils.errors import CourseError


def submissions_and_master(args: argparse.Namespace, verb: str, example: str):
    """The one SUBMISSIONS folder and the loaded master; ``example`` names a master."""
    from course_utils.grading.inputs.master import load_master

    if len(args.more) != 1:
        raise CourseError(
            f"grade {verb}: expected one SUBMISSIONS folder, got {len(args.more)} argument(s)"
        )
    source = args.master or args.source
    if not source:
        raise CourseError(
            f"grade {verb}: --master is required: the master notebook, e.g. {example}"
        )
    try:
        master = load_master(source)
    except CourseError as err:  # load_master names --source, its option in `grade`
        text = str(err)
        if args.master:
            text = text.replace("--source", "--master", 1)
        raise CourseError(text) from None
    return Path(args.more[0]), master


def out_folder(
    args: argparse.Namespace, submissions: Path, default: str, why: str
) -> Path:
    """``--out`` (or ``default``): a folder, or none yet, outside ``submissions``; ``why``
    ends the error for an output inside them."""
    out = Path(args.out or default)
    where, subs = out.resolve(), submissions.resolve()
    if where == subs or subs in where.parents:
        raise CourseError(f"--out {out}: inside SUBMISSIONS {submissions}{why}")
    if out.exists() and not out.is_dir():
        raise CourseError(f"--out {out}: not a folder")
    return out


def warn_lms_lookalike(
    args: argparse.Namespace, submissions: Path, master_name: str, each: str
) -> None:
    """Without ``--lms``, the ``course grade`` warning line when the submissions are
    named as an LMS's download names them (``each`` says what becomes of such a name):
    its students are then named by whole file names, not as the graded class is."""
    from course_utils.grading.inputs.submissions import discover, lms_lookalike

    if getattr(args, "lms", None) is None and submissions.is_dir():
        line = lms_lookalike(discover(submissions, master_name)[0], each)
        if line:
            print(line)
