"""``course check-device``: the whole course on this machine's GPU or TPU, one JSON report.

Steps, in order: install (keeping the installed torch and jax), ``course doctor``,
every lesson in smoke mode, every lesson in full mode, the notebook tests (nbval,
smoke mode) and ``course claims``. The report is rewritten atomically after each
step and each notebook, so a run stopped at any moment leaves a valid report.
With a budget, full-mode lessons are estimated from their smoke time and skipped
rather than started when they cannot finish in the time left. What each step runs
lives in :mod:`course_utils.tooling.device_steps`.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from course_utils._files import write_atomic
from course_utils.tooling import device_steps
from course_utils.tooling.errors import CourseError

SCHEMA_VERSION = 1
STEPS = ("doctor", "smoke", "full", "tests", "claims")
SKIPPED_BUDGET = "skipped: budget"  # not started: it could not finish in time
STOPPED_BUDGET = "stopped: budget"  # started, then stopped when the budget ran out
NOT_FAILED = ("ok", SKIPPED_BUDGET, STOPPED_BUDGET)
# Before any lesson has run in both modes, a full run is guessed at this many smoke runs.
FULL_OVER_SMOKE = 4.0
MIN_START_S = 10.0  # never start anything with less time than this left


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write the report as JSON, whole or not at all (a second shell may be reading it)."""
    write_atomic(path, json.dumps(data, indent=2, default=str) + "\n")


@dataclass
class Tools:
    """What the check calls; tests replace these with fakes."""

    probe: Callable[[Path, float], dict[str, Any]] = device_steps.probe_in_child
    versions: Callable[[dict[str, Any]], dict[str, Any]] = device_steps.versions
    install: Callable[..., dict[str, Any]] = device_steps.install
    doctor: Callable[..., dict[str, Any]] = device_steps.doctor
    run_notebooks: Callable[..., list[Any]] | None = None  # runner.run_notebooks
    tests: Callable[..., dict[str, Any]] = device_steps.notebook_tests
    claims: Callable[..., dict[str, Any]] = device_steps.claims
    clock: Callable[[], float] = time.monotonic


@dataclass
class Options:
    out: Path
    steps: tuple[str, ...] = STEPS
    budget: float | None = None
    install: bool = True
    wheels: Path | None = None
    timeout: float = 900.0
    lessons: list[Path] = field(default_factory=list)
    require_accelerator: bool = False


# ------------------------------------------------------------------ the check


class Check:
    """One run of the device check: its steps, its budget, and its report."""

    def __init__(self, root: Path, opts: Options, tools: Tools | None = None) -> None:
        self.root, self.opts = root, opts
        self.tools = tools or Tools()
        self.work = opts.out.parent
        self.start = self.tools.clock()
        self.interrupted = False
        self.torch_cuda: dict[str, Any] = {}
        planned = (["install"] if opts.install else []) + list(opts.steps)
        self.report: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "status": "running",
            "complete": False,
            "started": _now(),
            "updated": None,
            "finished": None,
            "seconds": 0.0,
            "options": {
                "steps": list(opts.steps),
                "budget_seconds": opts.budget,
                "install": opts.install,
                "wheels": str(opts.wheels or "") or None,
                "timeout_per_notebook": opts.timeout,
                "require_accelerator": opts.require_accelerator,
            },
            "budget_left_seconds": opts.budget,
            "host": {},
            "versions": {},
            "steps": {name: {"status": "pending"} for name in planned},
            "notebooks": [],
            "claims": None,
        }

    # -- time
    def remaining(self) -> float | None:
        if self.opts.budget is None:
            return None
        return self.opts.budget - (self.tools.clock() - self.start)

    def can_start(self) -> bool:
        left = self.remaining()
        return left is None or left >= MIN_START_S

    def timeout(self, cap: float | None = None) -> float | None:
        """``cap``, shortened to what is left of the budget."""
        left = self.remaining()
        if left is None:
            return cap
        return max(1.0, left if cap is None else min(cap, left))

    def save(self) -> None:
        r = self.report
        r["updated"] = _now()
        r["seconds"] = round(self.tools.clock() - self.start, 1)
        left = self.remaining()
        r["budget_left_seconds"] = None if left is None else round(max(0.0, left), 1)
        write_json(self.opts.out, r)

    # -- steps
    def _step(
        self,
        name: str,
        body: Callable[[], tuple[str, dict[str, Any]]],
        *,
        budgeted: bool = True,
    ) -> None:
        rec = self.report["steps"][name]
        if budgeted and not self.can_start():
            rec.update(status=SKIPPED_BUDGET)
            self.save()
            print(f"check-device: {name} {SKIPPED_BUDGET}", flush=True)
            return
        rec.update(status="running", started=_now())
        self.save()
        t0 = self.tools.clock()
        try:
            status, detail = body()
        except KeyboardInterrupt:
            self.interrupted = True
            status, detail = "interrupted", {}
        except Exception as err:  # a broken step is recorded; the next one runs
            status, detail = "failed", {"error": f"{type(err).__name__}: {err}"[:500]}
        seconds = round(self.tools.clock() - t0, 1)
        rec.update(status=status, finished=_now(), seconds=seconds, **detail)
        self.save()
        print(f"check-device: {name} {status} ({rec['seconds']:.1f} s)", flush=True)

    def _from(
        self, result: dict[str, Any], limit: float | None, cap: float | None = None
    ) -> tuple[str, dict[str, Any]]:
        """A step's status from its result; a run cut short by the budget is no failure."""
        detail = {k: v for k, v in result.items() if k != "ok"}
        if result.get("ok"):
            return "ok", detail
        if result.get("exit_code") is None and self.cut_by_budget(limit, cap):
            return STOPPED_BUDGET, detail
        return "failed", detail

    def cut_by_budget(self, limit: float | None, cap: float | None) -> bool:
        """Whether a time limit was shortened by the budget (so reaching it says little).

        Without a budget, :meth:`timeout` gives back ``cap`` itself.
        """
        return limit is not None and (cap is None or limit < cap)

    def _probe(self) -> None:
        got = self.tools.probe(self.root, self.timeout(300.0) or 300.0)
        self.report["host"] = got.get("host", {})
        self.torch_cuda = got.get("torch_cuda") or {}
        self.report["versions"] = self.tools.versions(self.torch_cuda)
        self.save()

    def _after_install(self) -> None:
        """New versions; the host again when a framework was missing before."""
        env = self.report["host"].get("env") or {}
        if env.get("jax") and env.get("torch"):
            self.report["versions"] = self.tools.versions(self.torch_cuda)
            self.save()
        else:
            self._probe()

    def _install(self) -> tuple[str, dict[str, Any]]:
        limit = self.timeout()
        result = self.tools.install(self.root, self.work, self.opts.wheels, limit)
        return self._from(result, limit)

    def _doctor(self) -> tuple[str, dict[str, Any]]:
        limit = self.timeout(300.0)
        return self._from(self.tools.doctor(self.root, limit), limit, 300.0)

    def _tests(self) -> tuple[str, dict[str, Any]]:
        limit = self.timeout()
        return self._from(self.tools.tests(self.root, self.work, limit), limit)

    def _claims(self) -> tuple[str, dict[str, Any]]:
        full = [n for n in self.report["notebooks"] if n["mode"] == "full"]
        ran_full = (
            "full" in self.opts.steps
            and full
            and all(n["status"] != SKIPPED_BUDGET for n in full)
        )
        smoke = not ran_full
        limit = self.timeout()
        result = self.tools.claims(self.root, self.work, smoke, limit)
        self.report["claims"] = result.pop("json", None)
        status, detail = self._from(result, limit)
        return status, {"mode": "smoke" if smoke else "full", **detail}

    def estimate(self, notebook: str) -> float | None:
        """Seconds a full run of ``notebook`` should take, from its smoke run."""
        runs: dict[str, dict[str, dict[str, Any]]] = {}
        for n in self.report["notebooks"]:
            runs.setdefault(n["notebook"], {})[n["mode"]] = n
        smoke = runs.get(notebook, {}).get("smoke")
        if not smoke or smoke["status"] != "ok":
            return None
        ratios = [
            r["full"]["seconds"] / r["smoke"]["seconds"]
            for r in runs.values()
            if r.get("full", {}).get("status") == "ok"
            and r.get("smoke", {}).get("status") == "ok"
            and r["smoke"]["seconds"] > 0
        ]
        ratio = statistics.median(ratios) if ratios else FULL_OVER_SMOKE
        return smoke["seconds"] * ratio

    def _lessons(self, mode: str) -> tuple[str, dict[str, Any]]:
        from course_utils.tooling import runner

        run = self.tools.run_notebooks or runner.run_notebooks
        entries = []
        for nb in self.opts.lessons:
            try:
                rel = str(nb.resolve().relative_to(self.root))
            except ValueError:
                rel = str(nb)
            entry: dict[str, Any] = {"notebook": rel, "mode": mode}
            left = self.remaining()
            guess = self.estimate(rel) if mode == "full" else None
            if guess is not None:
                entry["estimate_seconds"] = round(guess, 1)
            if self.interrupted:
                break
            if not self.can_start() or (
                guess is not None and left is not None and guess > left
            ):
                entry.update(status=SKIPPED_BUDGET, seconds=0.0)
            else:
                limit = self.timeout(self.opts.timeout) or self.opts.timeout
                res = run(
                    [nb],
                    root=self.root,
                    smoke=mode == "smoke",
                    timeout=limit,
                    out_dir=self.work / "executed" / mode,
                    progress=False,
                )[0]
                stopped = res.status == "timeout" and self.cut_by_budget(
                    limit, self.opts.timeout
                )
                entry.update(
                    status=STOPPED_BUDGET if stopped else res.status,
                    seconds=round(res.seconds, 1),
                    timeout=round(limit, 1),
                    cell=res.cell,
                    error=res.error,
                )
                if res.status != "ok" and res.output:
                    entry["output_tail"] = device_steps.tail(res.output, 20)
                self.interrupted = res.status == "interrupted"
            print(
                f"check-device: {mode} {Path(rel).stem} {entry['status']} "
                f"({entry['seconds']:.1f} s)",
                flush=True,
            )
            self.report["notebooks"].append(entry)
            entries.append(entry)
            self.save()
        counts: dict[str, int] = {}
        for e in entries:
            counts[e["status"]] = counts.get(e["status"], 0) + 1
        if self.interrupted:
            status = "interrupted"
        elif entries and all(e["status"] == SKIPPED_BUDGET for e in entries):
            status = SKIPPED_BUDGET
        elif any(e["status"] not in NOT_FAILED for e in entries):
            status = "failed"
        else:
            status = "ok"
        return status, {"counts": counts}

    # -- the whole run
    def run(self) -> int:
        """Every step in order; returns 0 when every step that ran passed."""
        self.save()
        try:
            self._probe()
            if self.opts.require_accelerator and self.accelerator() not in (
                "gpu",
                "tpu",
            ):
                message = no_accelerator_message(self.report["host"])
                self.report.update(status="no accelerator", error=message)
                return self._finish(1, message)
            bodies: dict[str, Callable[[], tuple[str, dict[str, Any]]]] = {
                "install": self._install,
                "doctor": self._doctor,
                "smoke": lambda: self._lessons("smoke"),
                "full": lambda: self._lessons("full"),
                "tests": self._tests,
                "claims": self._claims,
            }
            for name in self.report["steps"]:
                if self.interrupted:
                    self.report["steps"][name]["status"] = "not run: interrupted"
                    continue
                self._step(name, bodies[name], budgeted=name not in ("smoke", "full"))
                if name == "install":
                    self._after_install()
        except KeyboardInterrupt:
            self.interrupted = True
        if self.interrupted:
            self.report["status"] = "interrupted"
            return self._finish(130)
        passed = all(s["status"] in NOT_FAILED for s in self.report["steps"].values())
        self.report["status"] = "passed" if passed else "failed"
        return self._finish(0 if passed else 1)

    def accelerator(self) -> str:
        return str(self.report["host"].get("accelerator") or "unknown")

    def _finish(self, code: int, message: str = "") -> int:
        self.report.update(complete=True, finished=_now(), exit_code=code)
        self.save()
        if message:
            print(f"course: error: {message}", file=sys.stderr)
        return code


def no_accelerator_message(host: dict[str, Any]) -> str:
    """Why the check stops under ``--require-accelerator``, and what to do."""
    env = host.get("env") or {}
    seen = (
        "an NVIDIA GPU answers nvidia-smi"
        if host.get("nvidia_smi_gpu")
        else ("this looks like a TPU host" if host.get("tpu_host") else "")
    )
    jax = (
        host.get("jax_backend") if env.get("jax") else "nothing (jax is not installed)"
    )
    torch = (
        host.get("torch_device")
        if env.get("torch")
        else "nothing (torch is not installed)"
    )
    using = f"jax uses {jax}, torch uses {torch}"
    fix = (
        "install jax and torch builds for it (see docs/DEVICE_CHECK.md)"
        if seen
        else "run this on a GPU or TPU machine, or leave out --require-accelerator"
    )
    error = f" (probe failed: {host['error']})" if host.get("error") else ""
    hardware = f"; {seen}, but neither framework uses it" if seen else ""
    return (
        f"--require-accelerator: no GPU or TPU in use: {using}{hardware}{error}; {fix}"
    )


# ------------------------------------------------------------------------ CLI


def report_name(report: dict[str, Any]) -> str:
    """The file name a report gets under docs/device-reports/: ``<date>-<device>.json``."""
    host = report.get("host") or {}
    device = host.get("gpu_name") or host.get("accelerator") or "unknown"
    slug = re.sub(r"[^a-z0-9]+", "-", str(device).lower()).strip("-") or "unknown"
    return f"{str(report.get('started', ''))[:10]}-{slug}.json"


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
    from course_utils.tooling.cli import _positive

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
        type=_positive,
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
        type=_positive,
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
