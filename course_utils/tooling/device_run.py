"""One run of ``course check-device``: the steps in order, each recorded as it ends.

Steps, in order: install (keeping the installed torch and jax), ``course doctor``,
every lesson in smoke mode, every lesson in full mode, the notebook tests (nbval,
smoke mode) and ``course claims``. A step that fails or raises is recorded and the
next one runs; Ctrl-C stops the run. What each step runs lives in
:mod:`~course_utils.tooling.device_steps`, the lessons in
:mod:`~course_utils.tooling.device_lessons`, the time budget in
:mod:`~course_utils.tooling.device_budget` and the report in
:mod:`~course_utils.tooling.device_report`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_utils.tooling import device_report, device_steps
from course_utils.tooling.device_budget import (
    NOT_FAILED,
    SKIPPED_BUDGET,
    Budget,
    step_status,
)
from course_utils.tooling.device_lessons import Lessons, run_lessons

STEPS = ("doctor", "smoke", "full", "tests", "claims")

Body = Callable[[], tuple[str, dict[str, Any]]]


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

    def recorded(self) -> dict[str, Any]:
        """The options as the report records them."""
        return {
            "steps": list(self.steps),
            "budget_seconds": self.budget,
            "install": self.install,
            "wheels": str(self.wheels or "") or None,
            "timeout_per_notebook": self.timeout,
            "require_accelerator": self.require_accelerator,
        }


class Check:
    """One run of the device check: its steps in order, and its report."""

    def __init__(self, root: Path, opts: Options, tools: Tools | None = None) -> None:
        self.root, self.opts = root, opts
        self.tools = tools or Tools()
        self.work = opts.out.parent
        self.budget = Budget(opts.budget, self.tools.clock)
        self.interrupted = False
        self.torch_cuda: dict[str, Any] = {}
        planned = (["install"] if opts.install else []) + list(opts.steps)
        self.report = device_report.new_report(opts.recorded(), planned)

    def save(self) -> None:
        seconds, left = self.budget.elapsed(), self.budget.remaining()
        device_report.save(self.opts.out, self.report, seconds, left)

    def accelerator(self) -> str:
        return str(self.report["host"].get("accelerator") or "unknown")

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
            self._run_steps()
        except KeyboardInterrupt:
            self.interrupted = True
        if self.interrupted:
            self.report["status"] = "interrupted"
            return self._finish(130)
        passed = all(s["status"] in NOT_FAILED for s in self.report["steps"].values())
        self.report["status"] = "passed" if passed else "failed"
        return self._finish(0 if passed else 1)

    def _run_steps(self) -> None:
        bodies: dict[str, Body] = {
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

    def _step(self, name: str, body: Body, *, budgeted: bool = True) -> None:
        """Run one step and record it: before it starts, and when it ends."""
        rec = self.report["steps"][name]
        if budgeted and not self.budget.can_start():
            rec.update(status=SKIPPED_BUDGET)
            self.save()
            print(f"check-device: {name} {SKIPPED_BUDGET}", flush=True)
            return
        rec.update(status="running", started=device_report.now())
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
        rec.update(
            status=status, finished=device_report.now(), seconds=seconds, **detail
        )
        self.save()
        print(f"check-device: {name} {status} ({rec['seconds']:.1f} s)", flush=True)

    def _finish(self, code: int, message: str = "") -> int:
        self.report.update(complete=True, finished=device_report.now(), exit_code=code)
        self.save()
        if message:
            print(f"course: error: {message}", file=sys.stderr)
        return code

    # -- the steps
    def _probe(self) -> None:
        got = self.tools.probe(self.root, self.budget.timeout(300.0) or 300.0)
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
        limit = self.budget.timeout()
        result = self.tools.install(self.root, self.work, self.opts.wheels, limit)
        return step_status(result, limit)

    def _doctor(self) -> tuple[str, dict[str, Any]]:
        limit = self.budget.timeout(300.0)
        return step_status(self.tools.doctor(self.root, limit), limit, 300.0)

    def _lessons(self, mode: str) -> tuple[str, dict[str, Any]]:
        from course_utils.tooling import runner

        lessons = Lessons(
            root=self.root,
            paths=self.opts.lessons,
            timeout=self.opts.timeout,
            work=self.work,
            budget=self.budget,
            run=self.tools.run_notebooks or runner.run_notebooks,
            notebooks=self.report["notebooks"],
            save=self.save,
        )
        status, detail, self.interrupted = run_lessons(lessons, mode)
        return status, detail

    def _tests(self) -> tuple[str, dict[str, Any]]:
        limit = self.budget.timeout()
        return step_status(self.tools.tests(self.root, self.work, limit), limit)

    def _claims(self) -> tuple[str, dict[str, Any]]:
        full = [n for n in self.report["notebooks"] if n["mode"] == "full"]
        ran_full = (
            "full" in self.opts.steps
            and full
            and all(n["status"] != SKIPPED_BUDGET for n in full)
        )
        smoke = not ran_full
        limit = self.budget.timeout()
        result = self.tools.claims(self.root, self.work, smoke, limit)
        self.report["claims"] = result.pop("json", None)
        status, detail = step_status(result, limit)
        return status, {"mode": "smoke" if smoke else "full", **detail}


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
