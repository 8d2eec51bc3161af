"""``course check-device``: the whole course on this machine's GPU or TPU, one JSON report.

This module is the command: its arguments, checked and turned into
:class:`~course_utils.tooling.device_check.run.Options`, and what it prints, the plan
(``--plan``) included. The run itself (install, then ``course doctor``, every
lesson in smoke and full mode, the masters and student notebooks, the notebook
tests and ``course claims`` side by side, within an optional time budget) is
:class:`~course_utils.tooling.device_check.run.Check`. See docs/DEVICE_CHECK.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from course_utils.tooling.device_check import estimates as device_estimates
from course_utils.tooling.device_check.report import report_name
from course_utils.tooling.device_check.run import (
    STEPS,
    Check,
    Options,
    Tools,
    available_cores,
)
from course_utils.tooling.device_check.schedule import Plan, core_list, plan
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
    have = len(available_cores())
    if args.cores and args.cores > have and not args.plan:
        raise CourseError(
            f"--cores {args.cores}: this process may run on {have} cores; "
            f"give at most {have} (or use --plan to see a plan for another machine)"
        )
    return Options(
        out=out.resolve(),
        steps=args.steps,
        budget=args.budget,
        install=not args.no_install,
        wheels=wheels,
        timeout=args.timeout,
        lessons=lessons,
        require_accelerator=args.require_accelerator,
        cores=args.cores,
        gpu_memory=args.gpu_memory,
        one_at_a_time=True if args.one_at_a_time else None,
    )


def make_plan(root: Path, opts: Options) -> Plan:
    """The schedule the check would follow with the shipped estimates."""
    from course_utils.tooling.device_check import items as device_lessons

    items = device_lessons.items(root, opts.lessons, opts.steps, opts.timeout)
    cores = opts.cores or len(available_cores())
    offset = device_estimates.INSTALL_S if opts.install else 0.0
    return plan(
        items,
        list(range(cores)),
        opts.gpu_memory,
        opts.budget,
        offset=offset,
        one_at_a_time=bool(opts.one_at_a_time),
    )


def plan_text(made: Plan, opts: Options) -> str:
    """The plan as ``--plan`` prints it: one line per item, then the predicted wall."""
    cores = opts.cores or len(available_cores())
    memory = "not counted" if opts.gpu_memory is None else f"{opts.gpu_memory:g} GiB"
    budget = "no budget" if opts.budget is None else f"budget {opts.budget:g} s"
    alone = ", one item at a time" if opts.one_at_a_time else ""
    lines = [f"check-device plan: {budget}, {cores} cores, GPU memory {memory}{alone}"]
    lines.append(
        f"{'start':>7} {'end':>7} {'estimate':>8}  {'cores':<7} {'GiB':>5}  item"
    )
    if opts.install:
        est = device_estimates.INSTALL_S
        lines.append(
            f"{0.0:7.1f} {est:7.1f} {est:8.1f}  {'all':<7} {0:5g}  install (alone)"
        )
    for row in sorted(made.rows, key=lambda r: (r.start, -r.item.seconds)):
        slot = core_list(row.core_ids)
        late = (
            "  (past the budget: would be stopped)"
            if opts.budget is not None and row.end > opts.budget
            else ""
        )
        lines.append(
            f"{row.start:7.1f} {row.end:7.1f} {row.item.seconds:8.1f}  {slot:<7} "
            f"{row.item.gpu_gib:5g}  {row.item.key}{late}"
        )
    for item in made.skipped:
        lines.append(
            f"{'-':>7} {'-':>7} {item.seconds:8.1f}  {'-':<7} {'-':>5}  "
            f"{item.key} (skipped: budget)"
        )
    wall = max(made.wall, device_estimates.INSTALL_S if opts.install else 0.0)
    of = "" if opts.budget is None else f" of the {opts.budget:g} s budget"
    lines.append(
        f"predicted wall: {wall:.1f} s{of}; {len(made.rows)} items scheduled, "
        f"{len(made.skipped)} skipped"
    )
    return "\n".join(lines)


def _stoppable(run: Any) -> int:
    """``run()`` with SIGTERM handled as Ctrl-C, so ``timeout`` or a scheduler that stops
    the check also stops its children (each in a session of its own)."""
    import signal

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        before = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        return run()
    try:
        return run()
    finally:
        signal.signal(signal.SIGTERM, before)


def cmd_check_device(args: Any, tools: Tools | None = None) -> int:
    from course_utils.tooling.notebooks import course_root

    root = course_root()
    opts = options_from_args(args, root)
    if args.plan:
        print(plan_text(make_plan(root, opts), opts))
        return 0
    budget = f", budget {opts.budget:g} s" if opts.budget else ""
    print(
        f"check-device: steps {','.join(opts.steps)}{budget}; report in {opts.out}",
        flush=True,
    )
    check = Check(root, opts, tools)
    code = _stoppable(check.run)
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
        "course doctor, every lesson (smoke and full mode), the masters and student "
        "notebooks, the notebook tests and course claims side by side as cores and GPU "
        "memory allow, rewriting one JSON report after every item. See docs/DEVICE_CHECK.md.",
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
    _add_schedule_options(p)
    p.set_defaults(func=cmd_check_device)


def _add_schedule_options(p: Any) -> None:
    """``--cores``, ``--gpu-memory``, ``--one-at-a-time`` and ``--plan``."""
    from course_utils.tooling.args import number

    p.add_argument(
        "--cores",
        type=number(int, 1),
        metavar="N",
        help="cores to share out among the children (default: all this process has)",
    )
    p.add_argument(
        "--gpu-memory",
        type=number(float, 0.1),
        metavar="GIB",
        help="GPU memory to share out, GiB (default: the GPU's, as the probe reads it)",
    )
    p.add_argument(
        "--one-at-a-time",
        action="store_true",
        help="run one item at a time, each with every core (the default on a TPU, "
        "whose chips only one process may open)",
    )
    p.add_argument(
        "--plan",
        action="store_true",
        help="print the schedule for this budget and run nothing",
    )
