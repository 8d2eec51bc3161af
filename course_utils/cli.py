"""The ``course`` command: one parser, built here from every room's verbs.

``doctor``, ``run``, ``sync`` and ``build-exercises`` are defined in this module;
``grade`` and ``check`` in :mod:`course_utils.grading.commands.grade`, ``claims`` in
:mod:`course_utils.claims.command`, ``check-device`` in
:mod:`course_utils.tooling.device_check.command`, ``site`` in :mod:`course_utils.tooling.site.build`,
``translate`` in :mod:`course_utils.tooling.translation.command`, ``forward-check`` in
:mod:`course_utils.tooling.forward_check.command`. Each of those modules has an
``add_commands(sub)`` that this module calls by name, so a missing module is an
import error, never a silently absent command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from course_utils.errors import CourseError
from course_utils.tooling.args import positive_seconds


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CourseError(message)


def _root():
    from course_utils.tooling.notebooks import course_root

    return course_root()


def cmd_doctor(args: argparse.Namespace) -> int:
    from course_utils import env

    rep = env.report()
    print(rep)
    fixes = []
    if not rep["jax"]:
        fixes.append("jax is missing: run `make course` or `pip install -e .`")
    if not rep["torch"]:
        fixes.append(
            "torch is missing: run `make course` (it picks the CPU build when there is no GPU)"
        )
    if rep.info.get("torch") and rep.info.get("accelerator") == "cpu":
        try:
            import torch

            if torch.version.cuda and not torch.cuda.is_available():
                fixes.append(
                    f"torch {torch.__version__} is a CUDA build on a machine without a GPU: "
                    "it works, but `pip install torch --index-url https://download.pytorch.org/whl/cpu` "
                    "is a much smaller download"
                )
        except ImportError:
            pass
    if rep.info.get("device_problem"):
        fixes.append(rep.info["device_problem"])
    if rep.info.get("accelerator") == "tpu":
        print(
            "\nOn this TPU machine JAX uses the TPU and PyTorch the CPU; comparisons run on the CPU."
        )
    try:
        root = _root()
        drift = __import__("course_utils.tooling.notebooks", fromlist=["sync"]).sync(
            root, check=True
        )
        if drift:
            fixes.append(
                f"notebooks out of sync with their .py sources: {', '.join(drift)}; run `course sync`"
            )
    except CourseError as err:
        fixes.append(str(err))
    print()
    if fixes:
        print("To fix:")
        for f in fixes:
            print(f"  - {f}")
        return 1
    print("Everything the course needs is in place.")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from course_utils import config
    from course_utils.tooling import notebooks
    from course_utils.tooling.execution import runner

    root = _root()
    nbs = notebooks.resolve(root, args.notebooks)
    if not nbs:
        raise CourseError("no notebooks to run")
    smoke = True if args.smoke else config.smoke()
    out_dir = Path(args.out) if args.out else root / "build" / "executed"
    print(
        f"running {len(nbs)} notebook(s), smoke mode {'on' if smoke else 'off'}, "
        f"executed copies in {out_dir}"
    )
    results = runner.run_notebooks(
        nbs, root=root, smoke=smoke, timeout=args.timeout, out_dir=out_dir
    )
    print(runner.summary(results, root))
    if any(r.status == "interrupted" for r in results):
        return 130
    return 0 if all(r.status == "ok" for r in results) else 1


def cmd_sync(args: argparse.Namespace) -> int:
    from course_utils.tooling import notebooks

    root = _root()
    changed = notebooks.sync(root, check=args.check)
    if args.check:
        if changed:
            for c in changed:
                print(f"out of sync: {c} (run `course sync`)")
            return 1
        print("all .ipynb files and the cheat sheet match their .py sources")
        return 0
    for c in changed:
        print(f"wrote {c}")
    print(f"{len(changed)} file(s) updated")
    return 0


def cmd_build_exercises(args: argparse.Namespace) -> int:
    from course_utils.tooling import notebooks

    root = _root()
    changed = notebooks.build_exercises(root, check=args.check)
    if args.check:
        if changed:
            for c in changed:
                print(f"out of date: {c} (run `course build-exercises`)")
            return 1
        print("exercises/ and docs/POINTS.md match solutions/")
        return 0
    for c in changed:
        print(f"wrote {c}")
    print(f"{len(changed)} file(s) updated")
    return 0


def _add_run(sub: Any) -> None:
    r = sub.add_parser(
        "run", help="execute lessons (all, or the ones named) and summarise"
    )
    r.add_argument(
        "notebooks",
        nargs="*",
        metavar="NOTEBOOK",
        help="lesson name (00, 00_welcome_and_setup) or .ipynb path",
    )
    r.add_argument(
        "--smoke", action="store_true", help="fast mode: tiny sizes, same code"
    )
    r.add_argument(
        "--timeout",
        type=positive_seconds,
        default=900.0,
        help="seconds allowed per notebook (default 900)",
    )
    r.add_argument(
        "--out", metavar="DIR", help="where executed copies go (default build/executed)"
    )
    r.set_defaults(func=cmd_run)


def _add_sync_and_build(sub: Any) -> None:
    s = sub.add_parser(
        "sync",
        help="regenerate each .ipynb from its jupytext .py source, and the cheat "
        "sheet (docs/CHEATSHEET.md) from the lessons' Summary tables",
    )
    s.add_argument(
        "--check", action="store_true", help="only report drift; exit 1 if any"
    )
    s.set_defaults(func=cmd_sync)

    b = sub.add_parser(
        "build-exercises",
        help="generate exercises/ and the points page (docs/POINTS.md) from the "
        "masters in solutions/",
    )
    b.add_argument(
        "--check", action="store_true", help="only report drift; exit 1 if any"
    )
    b.set_defaults(func=cmd_build_exercises)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="course", description="JAX and PyTorch, side by side: course tools"
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = False

    d = sub.add_parser(
        "doctor", help="report the environment and how to fix what is missing"
    )
    d.set_defaults(func=cmd_doctor)

    _add_run(sub)
    _add_sync_and_build(sub)

    from course_utils.claims import command as claims
    from course_utils.grading.commands import grade as grading_cli
    from course_utils.tooling import prose
    from course_utils.tooling.device_check import command as device_check
    from course_utils.tooling.forward_check import command as forward
    from course_utils.tooling.site import build as site
    from course_utils.tooling.translation import command as translate

    grading_cli.add_commands(sub)
    claims.add_commands(sub)
    device_check.add_commands(sub)
    site.add_commands(sub)
    translate.add_commands(sub)
    prose.add_commands(sub)
    forward.add_commands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return int(args.func(args) or 0)
    except CourseError as err:
        print(f"course: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("course: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
