"""One run of ``course check-device``: install, then everything else side by side.

The install step (keeping the installed torch and jax) runs first and alone. Then
every item of the other steps (``course doctor``; every lesson in smoke and in full
mode; every master and student notebook in smoke mode; the notebook tests, one
notebook per child; ``course claims`` in smoke mode) runs as cores and GPU memory
allow, longest first, within the time budget
(:mod:`~course_utils.tooling.device_check.schedule`). The report is rewritten after every
item ends, and each step's record is closed when its last item ends. What the items
are lives in :mod:`~course_utils.tooling.device_check.items`, their estimates in
:mod:`~course_utils.tooling.device_check.estimates`, their processes in
:mod:`~course_utils.tooling.device_check.children`, the budget in
:mod:`~course_utils.tooling.device_check.budget` and the report in
:mod:`~course_utils.tooling.device_check.report`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_utils.tooling.device_check import install as device_install
from course_utils.tooling.device_check import items as device_lessons
from course_utils.tooling.device_check import probe as device_probe
from course_utils.tooling.device_check import report as device_report
from course_utils.tooling.device_check import steps as device_steps
from course_utils.tooling.device_check.budget import (
    NOT_FAILED,
    SKIPPED_BUDGET,
    Budget,
    step_status,
)
from course_utils.tooling.device_check.schedule import (
    Hooks,
    Item,
    Launch,
    core_list,
    plan,
    run,
    skipped_result,
)

STEPS = ("doctor", "smoke", "full", "tests", "claims")

Body = Callable[[], tuple[str, dict[str, Any]]]


@dataclass
class Tools:
    """What the check calls; tests replace these with fakes."""

    probe: Callable[[Path, float], dict[str, Any]] = device_probe.probe_in_child
    versions: Callable[[dict[str, Any]], dict[str, Any]] = device_probe.versions
    install: Callable[..., dict[str, Any]] = device_install.install
    launch: Launch | None = None  # device_children.Launcher(root, work)
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    core_ids: Callable[[], list[int]] | None = None  # this process's cores


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
    cores: int | None = None  # None: every core this process may run on
    gpu_memory: float | None = None  # GiB; None: what the probe reads
    # One item at a time, each with every core; None: when the probe finds a TPU.
    one_at_a_time: bool | None = None

    def recorded(self) -> dict[str, Any]:
        """The options as the report records them."""
        return {
            "steps": list(self.steps),
            "budget_seconds": self.budget,
            "install": self.install,
            "wheels": str(self.wheels or "") or None,
            "timeout_per_notebook": self.timeout,
            "require_accelerator": self.require_accelerator,
            "cores": self.cores,
            "gpu_memory_gib": self.gpu_memory,
            "one_at_a_time": self.one_at_a_time,
        }


def available_cores() -> list[int]:
    """The ids of the cores this process may run on."""
    import os

    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


class Check:
    """One run of the device check: install, then the items side by side, and its report."""

    def __init__(self, root: Path, opts: Options, tools: Tools | None = None) -> None:
        self.root, self.opts = root, opts
        self.tools = tools or Tools()
        self.work = opts.out.parent
        self.budget = Budget(opts.budget, self.tools.clock)
        self.interrupted = False
        self.torch_cuda: dict[str, Any] = {}
        planned = (["install"] if opts.install else []) + list(opts.steps)
        self.report = device_report.new_report(opts.recorded(), planned)
        self._left: dict[str, int] = {}
        self._statuses: dict[str, list[str]] = {}
        self._started: dict[str, float] = {}

    def save(self) -> None:
        seconds, left = self.budget.elapsed(), self.budget.remaining()
        device_report.save(self.opts.out, self.report, seconds, left)

    def accelerator(self) -> str:
        return str(self.report["host"].get("accelerator") or "unknown")

    # -- the whole run
    def run(self) -> int:
        """Install, then every item; returns 0 when every step that ran passed."""
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
            if self.opts.install:
                self._step("install", self._install)
                if not self.interrupted:
                    self._after_install()
            if self.interrupted:
                for name in self.opts.steps:
                    self.report["steps"][name]["status"] = "not run: interrupted"
            else:
                self._items()
        except KeyboardInterrupt:
            self.interrupted = True
        if self.interrupted:
            self.report["status"] = "interrupted"
            return self._finish(130)
        passed = all(s["status"] in NOT_FAILED for s in self.report["steps"].values())
        self.report["status"] = "passed" if passed else "failed"
        return self._finish(0 if passed else 1)

    def _step(self, name: str, body: Body) -> None:
        """Run one step alone and record it: before it starts, and when it ends."""
        rec = self.report["steps"][name]
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

    # -- the machine
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

    def core_ids(self) -> list[int]:
        ids = (self.tools.core_ids or available_cores)()
        return ids[: self.opts.cores] if self.opts.cores else ids

    def gpu_memory(self) -> float | None:
        """GiB the scheduler shares out: the option, else the GPU's; None: not counted."""
        if self.opts.gpu_memory is not None:
            return self.opts.gpu_memory
        return self.report["host"].get("gpu_memory_gib")

    def one_at_a_time(self) -> bool:
        """Whether items run one at a time: the option, else on a TPU (only one
        process at a time may open its chips)."""
        if self.opts.one_at_a_time is not None:
            return self.opts.one_at_a_time
        return self.accelerator() == "tpu"

    # -- everything after the install, side by side
    def _items(self) -> None:
        items = device_lessons.items(
            self.root, self.opts.lessons, self.opts.steps, self.opts.timeout
        )
        core_ids, gib = self.core_ids(), self.gpu_memory()
        alone = self.one_at_a_time()
        left = self.budget.remaining()
        predicted = plan(items, core_ids, gib, left, one_at_a_time=alone)
        self.report["schedule"] = {
            "cores": len(core_ids),
            "gpu_memory_gib": gib,
            "one_at_a_time": alone,
            "predicted_seconds": round(predicted.wall, 1),
        }
        for name in self.opts.steps:
            mine = [i for i in items if i.step == name]
            self._left[name], self._statuses[name] = len(mine), []
            rec = self.report["steps"][name]
            if mine:
                rec.update(status="running", started=device_report.now())
            else:
                rec.update(status="ok", seconds=0.0)
        self._t0 = self.tools.clock()
        self.save()
        if self.tools.launch is None:
            from course_utils.tooling.device_check.children import Launcher

            self.tools.launch = Launcher(self.root, self.work)
        hooks = Hooks(
            started=self._item_started,
            ended=self._item_ended,
            skipped=lambda item: self._item_ended(item, skipped_result()),
            refresh=lambda waiting: device_lessons.refresh(
                waiting, self.report["notebooks"]
            ),
        )
        finished = run(
            items,
            self.tools.launch,
            core_ids=core_ids,
            gpu_gib=gib,
            budget=self.budget,
            hooks=hooks,
            sleep=self.tools.sleep,
            one_at_a_time=alone,
        )
        self.interrupted = not finished

    def _item_started(self, item: Item, limit: float | None, ids) -> None:
        self._started[item.key] = round(self.budget.elapsed(), 1)
        print(f"check-device: start {item.key} (cores {core_list(ids)})", flush=True)

    def _item_ended(self, item: Item, result: dict[str, Any]) -> None:
        """Record ``item``'s result, close its step when it was the last, save."""
        result = dict(result)
        if item.key in self._started:
            result["started_at"] = self._started[item.key]
        status = result["status"]
        step = self.report["steps"][item.step]
        if item.kind in device_lessons.NOTEBOOK_KINDS:
            self.report["notebooks"].append(device_lessons.entry(item, result))
        elif item.kind == "tests":
            _add_tests(step, item, result)
        else:  # doctor, claims: the step is the item
            if item.kind == "claims":
                self.report["claims"] = result.pop("json", None)
                step["mode"] = result.pop("mode", "smoke")
            for key in ("exit_code", "error"):
                if key in result:
                    step[key] = result[key]
            if "output" in result:
                out = result["output"]
                step["output"] = (
                    out if item.kind == "doctor" else device_steps.tail(out)
                )
        self._statuses[item.step].append(status)
        self._left[item.step] -= 1
        if item.key != item.step:  # a step of one item is printed when it closes
            seconds = result.get("seconds", 0.0)
            print(f"check-device: {item.key} {status} ({seconds:.1f} s)", flush=True)
        if self._left[item.step] == 0:
            self._close(item.step)
        self.save()

    def _close(self, name: str) -> None:
        statuses = self._statuses[name]
        rec = self.report["steps"][name]
        rec.update(
            status=device_lessons.step_status(statuses),
            finished=device_report.now(),
            seconds=round(self.tools.clock() - self._t0, 1),
        )
        if name in ("smoke", "full", "tests"):
            rec["counts"] = device_lessons.counts(statuses)
        if name == "tests":
            from course_utils.tooling.device_check.children import merge_junit

            files = sorted((self.work / "notebook-tests").glob("*.xml"))
            if files:
                merge_junit(files, self.work / "notebook-tests.xml")
        print(f"check-device: {name} {rec['status']} ({rec['seconds']:.1f} s)")


def _add_tests(step: dict[str, Any], item: Item, result: dict[str, Any]) -> None:
    """Add one notebook's nbval results to the tests step's totals."""
    for key in ("tests", "failures", "errors", "skipped"):
        step[key] = step.get(key, 0) + int(result.get(key, 0))
    step.setdefault("failing", []).extend(result.get("failing", []))
    run_rec = {
        "notebook": item.notebook,
        "status": result["status"],
        "seconds": round(result.get("seconds", 0.0), 1),
    }
    if result["status"] not in ("ok", SKIPPED_BUDGET) and result.get("output"):
        run_rec["output_tail"] = device_steps.tail(result["output"], 20)
    step.setdefault("runs", []).append(run_rec)


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
