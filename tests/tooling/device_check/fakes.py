"""Fakes for the device check's tests: the check's tools, a clock, children that take fake time."""

from __future__ import annotations

import json
from pathlib import Path

from course_utils.tooling.device_check.run import Check, Options, Tools
from course_utils.tooling.device_check.schedule import Item

CLAIMS_JSON = {
    "smoke": True,
    "machine": {"device": {"kind": "gpu"}},
    "claims": [{"id": "x"}],
}


class FakeChild:
    """A child that ends ``seconds`` after it started, on the fakes' clock."""

    def __init__(self, fakes: Fakes, item: Item, limit, ids, status, seconds, extra):
        self.fakes, self.item, self.limit, self.ids = fakes, item, limit, ids
        self.t0 = fakes.t
        self.status, self.seconds, self.extra = status, seconds, extra
        self.stopped: str | None = None

    def _done(self, status: str, seconds: float) -> dict:
        self.fakes.release(self)
        return {
            "status": status,
            "seconds": seconds,
            "timeout": self.limit,
            "cores": list(self.ids),
            **self.extra,
        }

    def poll(self):
        if self.fakes.t - self.t0 < self.seconds:
            return None
        return self._done(self.status, self.seconds)

    def stop(self, why: str):
        self.stopped = why
        self.fakes.stops.append((self.item.key, why, self.fakes.t))
        return {
            **self._done(why, self.fakes.t - self.t0),
            "error": "did not finish",
            "output": "line 1\nstill going",
        }


class Fakes:
    """Every tool of the check, faked: a clock advanced by the check's sleeps, and a log.

    ``times`` maps an item's key (``smoke:notebooks/00_a.ipynb``, ``tests:...``,
    ``claims``, ``doctor``) to ``(status, seconds)``; anything else is ``("ok", 1.0)``.
    """

    def __init__(
        self,
        root: Path,
        *,
        times=None,
        accelerator="gpu",
        install_seconds=1.0,
        cores=4,
        gpu_memory_gib=None,
    ):
        self.root = root
        self.t = 0.0
        self.calls: list[tuple] = []
        self.times = times or {}
        self.accelerator = accelerator
        self.install_seconds = install_seconds
        self.cores = cores
        self.gpu_memory_gib = gpu_memory_gib
        self.snapshots: dict[str, dict] = {}
        self.running: list[FakeChild] = []
        self.most_cores = 0
        self.most_gib = 0.0
        self.most_children = 0
        self.stops: list[tuple] = []
        self.out: Path | None = None

    def clock(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds

    def _seen(self, name: str) -> None:
        """What the report on disk says when ``name`` starts."""
        self.snapshots[name] = json.loads(self.out.read_text())

    def tools(self, out: Path) -> Tools:
        """The fakes as the check's tools, the report being written to ``out``."""
        self.out = out
        return Tools(
            probe=self.probe,
            versions=self.versions,
            install=self.install,
            launch=self.launch,
            clock=self.clock,
            sleep=self.sleep,
            core_ids=lambda: list(range(self.cores)),
        )

    def probe(self, root, timeout):
        self.calls.append(("probe", timeout))
        host = {
            "accelerator": self.accelerator,
            "jax_backend": "cpu",
            "torch_device": "cpu",
            "gpu_name": "NVIDIA H100 80GB HBM3",
            "env": {"jax": "0.10.2", "torch": "2.13.0"},
        }
        if self.gpu_memory_gib is not None:
            host["gpu_memory_gib"] = self.gpu_memory_gib
        return {"host": host, "torch_cuda": {"cuda": "13.0", "cudnn": 91900}}

    def versions(self, torch_cuda):
        self.calls.append(("versions",))
        return {"jax": "0.10.2", **{f"torch_{k}": v for k, v in torch_cuda.items()}}

    def install(self, root, work, wheels, timeout):
        self.calls.append(("install", wheels, timeout))
        self._seen("install")
        self.t += self.install_seconds
        return {"ok": True, "exit_code": 0, "kept": ["torch==2.13.0"]}

    def launch(self, item: Item, limit, ids):
        self.calls.append((item.key, limit, self.t, tuple(ids)))
        self._seen(item.key)
        status, seconds = self.times.get(item.key, ("ok", 1.0))
        extra: dict = {}
        if item.kind == "claims":
            extra = {"exit_code": 0, "json": json.loads(json.dumps(CLAIMS_JSON))}
            extra["mode"] = "smoke"
        elif item.kind == "tests":
            extra = {"exit_code": 0, "tests": 3, "failures": 0, "errors": 0}
        elif item.kind == "doctor":
            extra = {"exit_code": 0, "output": "Everything ..."}
        if status == "failed":
            extra.update(cell=3, error="ValueError: boom", output="x\nValueError: boom")
        child = FakeChild(self, item, limit, ids, status, seconds, extra)
        self.running.append(child)
        held = [c for c in self.running]
        cores = sum(len(c.ids) for c in held)
        total = self.gpu_memory_gib
        gib = sum(min(c.item.gpu_gib, total or c.item.gpu_gib) for c in held)
        self.most_cores = max(self.most_cores, cores)
        self.most_gib = max(self.most_gib, gib)
        self.most_children = max(self.most_children, len(held))
        all_ids = [i for c in held for i in c.ids]
        assert len(all_ids) == len(set(all_ids)), "two children on one core"
        return child

    def release(self, child: FakeChild) -> None:
        if child in self.running:
            self.running.remove(child)

    def started(self) -> list[str]:
        """The keys of the items started, in order."""
        return [
            c[0] for c in self.calls if c[0] not in ("probe", "versions", "install")
        ]


def lessons(root: Path, *stems: str) -> list[Path]:
    (root / "notebooks").mkdir(exist_ok=True)
    return [root / "notebooks" / f"{s}.ipynb" for s in stems]


def make(tmp_path, fakes=None, *, stems=("00_a", "01_b"), **opts):
    """A check of fake lessons ``stems`` under ``tmp_path``, its fakes, and its report file."""
    fakes = fakes or Fakes(tmp_path)
    out = tmp_path / "build" / "report.json"
    options = Options(out=out, lessons=lessons(tmp_path, *stems), **opts)
    return Check(tmp_path, options, fakes.tools(out)), fakes, out
