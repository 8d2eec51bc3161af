"""``course claims``: measure every claim on every device kind, judge it, and report.

:func:`run` is the Python entry point (lesson 08 calls it): it plans the device
kinds (:func:`~course_utils.claims.devices.detect_devices`), measures each claim
on each (:func:`~course_utils.claims.benchmarks.measure`), judges it
(:func:`~course_utils.claims.verdicts.evaluate`), prints a table, and writes
``claims.json`` and ``claims.png``. :func:`add_commands` registers the
``claims`` command with the ``course`` parser; :func:`cmd_claims` runs it.
The benchmarks (and so numpy) are imported when :func:`run` is called, never
when the ``course`` command builds its parser.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from course_utils.claims import devices, registry
from course_utils.claims.devices import DEVICE_CHOICES, DevicePlan, DeviceTarget
from course_utils.claims.harness import matched_precision
from course_utils.claims.report import ClaimsReport, save_plot, text_table, write_json
from course_utils.claims.verdict_rule import Measured, Outcome
from course_utils.claims.verdicts import evaluate
from course_utils.errors import CourseError


def _machine(plan: DevicePlan | None = None) -> dict[str, Any]:
    from course_utils import env, timing

    info = dict(env.report().info)
    info["threads"] = timing.thread_settings()
    # The precision every benchmark runs under, not the process's own defaults.
    with matched_precision():
        prec = env.precision()
    info["jax_matmul_precision"] = prec["jax"]
    info["precision"] = (
        f"{prec['name']} (jax {prec['jax']}, torch matmul {prec['torch_matmul']}, "
        f"conv {prec['torch_conv']}), in every benchmark"
    )
    kinds = [t.kind for t in plan.targets] if plan else ["cpu"]
    named = (
        [f"{t.kind} ({t.name})" if t.name else t.kind for t in plan.targets]
        if plan
        else kinds
    )
    info["summary"] = (
        f"benchmarks on {' and '.join(named)}; CPU {info.get('cpu_count')} cores, torch "
        f"{info.get('torch_threads')} threads; float32 matmuls at 'highest' precision in both "
        "frameworks"
    )
    if plan and plan.note:
        info["summary"] += f"; {plan.note}"
    if hasattr(os, "getloadavg"):
        # Read before the first benchmark, so it counts the work that came just
        # before (a notebook's own timings among it), not the benchmarks: whether
        # other work competed with a measurement is each monitor's record, which
        # :func:`_busy_warning` gathers.
        load = os.getloadavg()[0]
        info["load_average_1min"] = round(load, 2)
        info["summary"] += f", load average {load:.1f} at the start"
    return info


def _busy_warning(outcomes: Sequence[Outcome]) -> str | None:
    """The measurements whose contention monitor found the machine busy, or None.

    A contended measurement is never judged (the verdict rule), so each one
    named here is inconclusive; one that the rule withheld for a reason it
    checks before contention (too few rounds) is named with that reason.
    """
    several = len({o.device for o in outcomes}) > 1
    busy = [o for o in outcomes if (o.contention or {}).get("reason")]
    if not busy:
        return None

    def name(o: Outcome) -> str:
        return f"{o.claim.id} ({o.device})" if several else o.claim.id

    text = (
        f"the machine was busy while {', '.join(name(o) for o in busy)} "
        f"{'was' if len(busy) == 1 else 'were'} measured: other work competed for the cores "
        "(or one framework's threads outnumbered them)"
    )
    by_load = [name(o) for o in busy if o.why.startswith("contended")]
    other = [o for o in busy if not o.why.startswith("contended")]
    if not other:
        return text + (
            f", so {'that claim is' if len(busy) == 1 else 'those claims are'} inconclusive"
        )
    if by_load:
        text += (
            f"; {', '.join(by_load)} {'is' if len(by_load) == 1 else 'are'} "
            "inconclusive for that reason"
        )
    return text + "".join(
        f"; {name(o)} is {o.verdict} for a reason the rule checks first: {o.why}"
        for o in other
    )


def _check_arguments(
    only: Sequence[str], measured: Mapping[str, Any], out_dir: Path | None
) -> None:
    ids = [c.id for c in registry.CLAIMS]
    for where, given in (("claim", only), ("measured claim", measured)):
        unknown = [i for i in given if i not in ids]
        if unknown:
            raise CourseError(
                f"unknown {where} {unknown[0]!r}; claims: {', '.join(ids)}"
            )
    bad = [k for k, v in measured.items() if not isinstance(v, Measured)]
    if bad:
        raise TypeError(f"run: measured[{bad[0]!r}] must be a claims.Measured")
    if out_dir is not None and out_dir.exists() and not out_dir.is_dir():
        raise CourseError(f"--out {out_dir} is a file; give a folder")


def _measure_on(
    target: DeviceTarget,
    *,
    smoke: bool,
    only: Sequence[str],
    given: Mapping[str, Measured],
    verbose: bool,
    done: Callable[[Outcome], None] = lambda outcome: None,
) -> list[Outcome]:
    """Every claim (or ``only`` those) on one device kind; ``given`` ones are not measured again.

    ``done`` is called with each outcome as soon as it is judged.
    """
    from course_utils.claims import benchmarks

    outcomes = []
    for claim in registry.CLAIMS:
        if only and claim.id not in only:
            continue
        if verbose:
            print(f"measuring {claim.id} on {target.kind} ...", flush=True)
        if claim.id in given:
            m = given[claim.id]
            m.details.setdefault("measured_by", "the caller (already timed)")
            outcome = evaluate(claim, lambda m=m: m, target.kind)
        else:
            outcome = evaluate(
                claim,
                lambda c=claim: benchmarks.measure(c.id, smoke=smoke, target=target),
                target.kind,
            )
        outcome.device_name = outcome.device_name or target.name
        if verbose:
            print(
                f"  {outcome.verdict}: {outcome.measured_text()} ({outcome.seconds:.1f} s)",
                flush=True,
            )
        outcomes.append(outcome)
        done(outcome)
    return outcomes


def _print_summary(report: ClaimsReport) -> None:
    print()
    print(text_table(report.outcomes))
    print(
        f"\n{len(report.outcomes)} outcomes in {report.seconds:.0f} s "
        f"({'smoke' if report.smoke else 'full'} mode); {report.machine['summary']}"
    )
    if "warning" in report.machine:
        print(f"warning: {report.machine['warning']}")
    if report.json_path is not None:
        print(f"wrote {report.json_path} and {report.png_path}")


def run(
    *,
    smoke: bool | None = None,
    out: str | Path | None = None,
    only: Sequence[str] | None = None,
    measured: Mapping[str, Measured] | None = None,
    measured_on: str = "cpu",
    device: str | None = None,
    verbose: bool = True,
) -> ClaimsReport:
    """Measure every claim (or ``only`` those ids), print the table, write JSON and PNG to ``out``.

    ``device`` is ``all`` (the CPU, and the accelerator when one is present),
    ``cpu``, ``accelerator`` or ``auto`` (the accelerator when one is present, else
    the CPU); every claim is measured once per device kind. The default is ``all``
    in full mode and ``auto`` in smoke mode. With ``out``, ``claims.json`` is
    rewritten after every claim (``"complete": false`` until the last), so a run
    stopped part-way keeps what it measured.
    ``measured`` supplies measurements already taken (a notebook that timed the
    same thing in its own cells) by claim id, on the device kind ``measured_on``;
    those claims are judged from them there instead of being measured again.
    """
    from course_utils import config

    smoke = config.smoke(smoke)
    only, measured = list(only or []), dict(measured or {})
    out_dir = Path(out) if out is not None else None
    _check_arguments(only, measured, out_dir)
    plan = devices.detect_devices(device or ("auto" if smoke else "all"))
    start = time.perf_counter()
    outcomes: list[Outcome] = []
    report = ClaimsReport(
        outcomes,
        smoke,
        _machine(plan),
        0.0,
        devices=[t.kind for t in plan.targets],
        device_note=plan.note,
        complete=False,
    )

    def save(outcome: Outcome | None = None) -> None:
        if outcome is not None:
            outcomes.append(outcome)
        warning = _busy_warning(outcomes)
        if warning:
            report.machine["warning"] = warning
        report.seconds = time.perf_counter() - start
        if out_dir is not None:
            report.json_path = write_json(report, out_dir / "claims.json")

    for target in plan.targets:
        given = measured if target.kind == measured_on else {}
        _measure_on(
            target, smoke=smoke, only=only, given=given, verbose=verbose, done=save
        )
    report.complete = True
    save()
    if out_dir is not None:
        report.png_path = save_plot(outcomes, out_dir / "claims.png")
    if verbose:
        _print_summary(report)
    return report


# --------------------------------------------------------------------- CLI


def _course_root() -> Path:
    """The checkout holding ``notebooks/``; outside one, a :class:`CourseError` that says so."""
    from course_utils import config

    try:
        return config.course_root()
    except FileNotFoundError as err:
        raise CourseError(f"course claims: {err}") from None


def cmd_claims(args: Any) -> int:
    from course_utils import config

    if args.action == "merge":
        from course_utils.claims import results

        if args.into:
            if not args.paths:
                raise CourseError(
                    "course claims merge --into: give the runs to add "
                    "(course claims merge DIR --into FILE)"
                )
            for run_path in args.paths:
                data = results.add_run(args.into, run_path)
                print(f"added the claims of {run_path} to {args.into}")
            label = results.machine_label(data)
            print(f"{args.into}: {len(data['claims'])} claims, {label}")
            return 0
        print(results.merge_table([results.load(p) for p in args.paths]))
        return 0
    if args.into:
        raise CourseError(
            "course claims: --into goes with merge (course claims merge DIR --into FILE)"
        )
    if args.paths:
        raise CourseError(
            f"course claims: unexpected {args.paths[0]!r}; to combine result files, "
            "run `course claims merge DIR...`"
        )

    smoke = True if args.smoke else config.smoke()
    out = Path(args.out) if args.out else _course_root() / "build" / "claims"
    run(smoke=smoke, out=out, only=args.only, device=args.device)
    return 0


def add_commands(sub: Any) -> None:
    """Register ``course claims [--smoke] [--out DIR] [--only ID ...] [--device KIND]``
    and ``course claims merge DIR_OR_FILE... [--into FILE]``."""
    p = sub.add_parser(
        "claims",
        help="re-measure the source articles' popular claims on this machine",
        description="Run compact versions of the course's claim benchmarks on the CPU and, "
        "when one is present, on the GPU or TPU (both frameworks on the same device kind, "
        "float32 matmuls at 'highest' precision); print a table of claim, device, source, "
        "measured ratio (median and its 95 % interval widened by 15 %) and verdict; write claims.json "
        "(with the machine's fingerprint) and claims.png. `course claims merge DIR...` "
        "puts several machines' claims.json side by side.",
    )
    p.add_argument(
        "action",
        nargs="?",
        choices=["merge"],
        help="merge: print one table from the result files or folders that follow",
    )
    p.add_argument(
        "paths", nargs="*", metavar="DIR", help="result files or folders (merge)"
    )
    p.add_argument(
        "--into",
        metavar="FILE",
        help="merge: add the runs' claims to this result file (the same machine and "
        "mode, claims it lacks) instead of printing a table",
    )
    p.add_argument("--smoke", action="store_true", help="small sizes (about a minute)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="where claims.json and claims.png go (default build/claims)",
    )
    p.add_argument(
        "--only",
        metavar="ID",
        action="append",
        help="measure only this claim (repeatable)",
    )
    p.add_argument(
        "--device",
        choices=DEVICE_CHOICES,
        default=None,
        help="where to measure: all (the CPU, and the accelerator when present; "
        "the default), cpu, accelerator, or auto (the accelerator when present, "
        "else the CPU; the default with --smoke)",
    )
    p.set_defaults(func=cmd_claims)
