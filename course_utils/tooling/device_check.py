"""``course check-device``: the whole course on this machine's GPU or TPU, one JSON report.

This module is the command: its arguments, checked and turned into
:class:`~course_utils.tooling.device_run.Options`, and what it prints. The run
itself (install, ``course doctor``, every lesson in smoke then full mode, the
notebook tests and ``course claims``, within an optional time budget) is
:class:`~course_utils.tooling.device_run.Check`. See docs/DEVICE_CHECK.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from course_utils.tooling.device_report import report_name
from course_utils.tooling.device_run import STEPS, Check, Options, Tools
from course_utils.tooling.errors import CourseError


def _steps(text: str) -> tuple[str, ...]:
    import argparse

    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [n for n in names if n not in STEPS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown step {unknown[0]!r}; steps: {','.join(STEPS)}"
            if unknown
            else f"no steps given; steps: {','.join(STEPS)}"
        )
    return tuple(s for s in STEPS if s in names)


def options_from_args(args: Any, root: Path) -> Options:
    """Check the arguments that argparse cannot, and turn them into :class:`Options`."""
    from course_utils.tooling import notebooks

    out = (
        Path(args.out) if args.out else root / "build" / "device-check" / "report.json"
    )
    if out.is_dir():
        raise CourseError(
            f"--out {out} is a folder; give a file name such as {out}/report.json"
        )
    wheels = Path(args.wheels).resolve() if args.wheels else None
    if wheels is not None and args.no_install:
        raise CourseError("--wheels is for the install step; leave out --no-install")
    if wheels is not None and not wheels.is_dir():
        raise CourseError(
            f"--wheels {args.wheels}: no such folder (collect it with pip download)"
        )
    lessons = notebooks.resolve(root, args.lesson or [])
    if not lessons:
        raise CourseError(f"no lessons found in {root / 'notebooks'}")
    return Options(
        out=out.resolve(),
        steps=args.steps,
        budget=args.budget,
        install=not args.no_install,
        wheels=wheels,
        timeout=args.timeout,
        lessons=lessons,
        require_accelerator=args.require_accelerator,
    )


def cmd_check_device(args: Any, tools: Tools | None = None) -> int:
    from course_utils.tooling.notebooks import course_root

    root = course_root()
    opts = options_from_args(args, root)
    budget = f", budget {opts.budget:g} s" if opts.budget else ""
    print(
        f"check-device: steps {','.join(opts.steps)}{budget}; report in {opts.out}",
        flush=True,
    )
    check = Check(root, opts, tools)
    code = check.run()
    for name, step in check.report["steps"].items():
        print(f"  {name:<8} {step['status']}")
    print(f"check-device: {check.report['status']}; report in {opts.out}")
    if check.accelerator() in ("gpu", "tpu"):
        print(
            "to record it: cp "
            f"{opts.out} docs/device-reports/{report_name(check.report)}"
        )
    return code


def add_commands(sub: Any) -> None:
    """Register ``course check-device``."""
    from course_utils.tooling.args import positive_seconds

    p = sub.add_parser(
        "check-device",
        help="install and run the whole course on this GPU/TPU machine; one JSON report",
        description="Install the course keeping the installed torch and jax, then run "
        "course doctor, every lesson (smoke mode, then full mode), the notebook tests and "
        "course claims, writing one JSON report after every step. See docs/DEVICE_CHECK.md.",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        help="the report (default build/device-check/report.json)",
    )
    p.add_argument(
        "--budget",
        metavar="S",
        type=positive_seconds,
        help="seconds for the whole check: smoke first, full mode while time is left",
    )
    p.add_argument(
        "--steps",
        type=_steps,
        default=STEPS,
        metavar="LIST",
        help=f"comma-separated steps to run (default {','.join(STEPS)})",
    )
    p.add_argument("--no-install", action="store_true", help="skip the install step")
    p.add_argument(
        "--wheels",
        metavar="DIR",
        help="install from the wheels in DIR only (a machine without network)",
    )
    p.add_argument(
        "--timeout",
        type=positive_seconds,
        default=900.0,
        metavar="S",
        help="seconds allowed per notebook (default 900)",
    )
    p.add_argument(
        "--lesson",
        action="append",
        metavar="NAME",
        help="run only this lesson (repeatable; default every lesson)",
    )
    p.add_argument(
        "--require-accelerator",
        action="store_true",
        help="stop at once when neither framework finds a GPU or TPU",
    )
    p.set_defaults(func=cmd_check_device)
