"""The commands that take grading beyond one machine: ``grade slurm``, ``release`` and
``gradescope build`` (their arguments; the work is in :mod:`.slurm`, :mod:`.release` and
:mod:`.gradescope`). See docs/GRADING_DEPLOY.md."""

from __future__ import annotations

import argparse

from course_utils.errors import CourseError
from course_utils.tooling.args import number


def add_commands(sub) -> None:
    """Add ``grade slurm``'s options to ``grade``, and the ``release`` and ``gradescope``
    commands, to the ``course`` command's sub-parsers."""
    _extend_grade(sub.choices["grade"])
    r = sub.add_parser(
        "release",
        help="write the student-facing course (no solutions, no hidden tests) to OUT",
        description="The lessons, student exercises and course_utils, scanned for "
        "every solution and hidden-test line; see docs/GRADING_DEPLOY.md.",
    )
    r.add_argument("out", metavar="OUT", help="a new (or empty) folder")
    r.add_argument("--root", default=".", help="the course checkout (default: .)")
    r.add_argument(
        "--repo",
        metavar="OWNER/NAME[@TAG]",
        help="the GitHub repository (and tag) the release is pushed to: the badges "
        "and the setup cells' install line point there, not at the upstream course, "
        "whose solutions/ holds every hidden test",
    )
    r.add_argument(
        "--variants",
        metavar="ROSTER",
        help="write instead each student's own copy of the exercise notebooks that have "
        "per-student variants (ROSTER: one id a line, a CSV with a submission column, or "
        "Gradescope's roster CSV, whose Email column names its students)",
    )
    r.add_argument(
        "--variant-secret",
        metavar="FILE",
        help="with --variants: the secret the grader uses (default: "
        "$COURSE_VARIANT_SECRET_FILE)",
    )
    r.set_defaults(func=_lazy("integrations.release", "cmd_release"))
    _add_gradescope(sub)


def _add_gradescope(sub) -> None:
    """``course gradescope build --source MASTER --out autograder.zip``."""
    gs = sub.add_parser(
        "gradescope", help="Gradescope autograder bundles (instructors)"
    )
    verbs = gs.add_subparsers(dest="verb", metavar="build|try", required=True)
    b = verbs.add_parser(
        "build",
        help="write autograder.zip: setup.sh, run_autograder, the master, the course",
        description="See docs/GRADING_DEPLOY.md for the memory and CPU to choose.",
    )
    b.add_argument("--source", required=True, help="the master notebook")
    b.add_argument("--out", required=True, metavar="ZIP", help="the bundle to write")
    b.add_argument(
        "--root",
        default=None,
        help="the course checkout whose package the bundle installs (default: the one "
        "that holds --source, else the one this command runs from)",
    )
    b.add_argument(
        "--no-hidden-tests",
        action="store_true",
        help="accept a master without hidden tests (refused otherwise: it is usually "
        "the students' version)",
    )
    from course_utils.grading.commands.limits import add_limits

    add_limits(b, 3000.0, "Gradescope's container needs 1 GB more")
    b.add_argument("--full", action="store_true", help="full sizes (default: smoke)")
    b.add_argument(
        "--require-sandbox",
        action="store_true",
        help="grade nobody when bubblewrap cannot run in the container",
    )
    b.add_argument(
        "--hidden-visibility",
        choices=("after_published", "after_due_date"),
        default="after_published",
        help="when students see hidden tests and their total (default after_published)",
    )
    b.add_argument(
        "--max-submissions",
        type=number(int, 1),
        metavar="N",
        help="graded submissions per student; later ones keep the last graded score",
    )
    b.add_argument(
        "--min-interval",
        type=number(float, 0.1),
        metavar="MINUTES",
        help="minutes between graded submissions; sooner ones keep the last score",
    )
    b.add_argument(
        "--variant-secret",
        metavar="FILE",
        help="grade per-student variants: the secret (as given to course release "
        "--variants) travels in the bundle; each submission is graded on the variant "
        "of the submitter's Gradescope email",
    )
    b.set_defaults(func=_lazy("integrations.gradescope", "cmd_build"))
    _add_gradescope_try(verbs)


def _add_gradescope_try(verbs) -> None:
    """``course gradescope try BUNDLE SUBMISSION``."""
    t = verbs.add_parser(
        "try",
        help="run a bundle on one submission here, as Gradescope would",
        description="Unpacks BUNDLE into a local copy of Gradescope's /autograder "
        "layout, puts SUBMISSION in it with a submission_metadata.json, runs the "
        "bundle's run_autograder with the bundle's own course, and prints the results.",
    )
    t.add_argument("bundle", metavar="BUNDLE", help="the autograder.zip to try")
    t.add_argument(
        "submission", metavar="SUBMISSION", help="a notebook, or a folder to upload"
    )
    t.add_argument(
        "--email",
        default="student@example.com",
        help="the submitter's email in the metadata (a bundle with variants grades "
        "this email's variant)",
    )
    t.add_argument(
        "--keep", metavar="DIR", help="build the layout in DIR (new) and keep it"
    )
    t.set_defaults(func=_lazy("integrations.gradescope", "cmd_try"))


# ``grade``'s options that ``grade slurm`` takes (the others act on one run, or after it).
SLURM_KEEPS = {"submissions", "more", "source", "out", "timeout", "total_timeout"}
SLURM_KEEPS |= {"memory", "cpu_time", "full", "force", "unsafe_no_sandbox", "jobs"}
SLURM_KEEPS |= {"variant_secret", "no_hidden_tests", "lms"}
SLURM_KEEPS |= {"shard", "tasks", "partition", "cpus_per_task", "mem_per_task"}


def _lazy(module: str, name: str):
    """A command's entry point, imported when the command runs."""

    def run(args: argparse.Namespace) -> int:
        import importlib

        return getattr(importlib.import_module(f"course_utils.grading.{module}"), name)(
            args
        )

    return run


def _extend_grade(g: argparse.ArgumentParser) -> None:
    """``course grade slurm SUBMISSIONS ...``: ``grade``'s options plus the array's."""
    s = g.add_argument_group("grade slurm (submit a Slurm job array, one shard a task)")
    s.add_argument("--tasks", type=number(int, 1), metavar="N", help="array tasks")
    s.add_argument("--partition", metavar="P", help="Slurm partition")
    s.add_argument(
        "--cpus-per-task",
        type=number(int, 1),
        default=1,
        metavar="C",
        help="CPUs of each task: submissions graded at once in it (default 1)",
    )
    s.add_argument(
        "--mem-per-task",
        type=number(int, 256),
        metavar="MB",
        help="memory of each task (default C x --memory + 1024)",
    )
    grade = g.get_default("func")
    defaults = {a.dest: a.default for a in g._actions if a.dest != "help"}

    def dispatch(args: argparse.Namespace) -> int:
        if args.submissions == "slurm":
            from course_utils.grading.integrations import slurm

            other = sorted(
                "--" + k.replace("_", "-")
                for k, v in vars(args).items()
                if k in defaults and k not in SLURM_KEEPS and v != defaults[k]
            )
            if other:
                raise CourseError(f"grade slurm: {', '.join(other)}: not with slurm")
            return slurm.cmd_slurm(args)
        if args.tasks or args.partition or args.mem_per_task:
            raise CourseError(
                "--tasks, --partition, --mem-per-task: only with grade slurm"
            )
        return grade(args)

    g.set_defaults(func=dispatch)
