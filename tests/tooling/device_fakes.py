"""Fakes for the device check's tests: every tool of :class:`Check`, a clock, a call log."""

from __future__ import annotations

import json
from pathlib import Path

from course_utils.tooling.device_run import Check, Options, Tools
from course_utils.tooling.runner import Result

CLAIMS_JSON = {
    "smoke": False,
    "machine": {"device": {"kind": "gpu"}},
    "claims": [{"id": "x"}],
}


class Fakes:
    """Every tool of the check, faked: a clock that each step advances, and a call log."""

    def __init__(
        self,
        root: Path,
        *,
        smoke=None,
        full=None,
        accelerator="gpu",
        step_seconds=1.0,
        tests_seconds=1.0,
        claims_seconds=1.0,
    ):
        self.root = root
        self.t = 0.0
        self.calls: list[tuple] = []
        self.smoke = smoke or {}  # stem -> (status, seconds)
        self.full = full or {}
        self.accelerator = accelerator
        self.step_seconds = step_seconds
        self.tests_seconds = tests_seconds
        self.claims_seconds = claims_seconds
        self.snapshots: dict[str, dict] = {}
        self.out: Path | None = None

    def clock(self) -> float:
        return self.t

    def _seen(self, name: str) -> None:
        """What the report on disk says when step ``name`` starts."""
        self.snapshots[name] = json.loads(self.out.read_text())

    def tools(self, out: Path) -> Tools:
        """The fakes as the check's tools, the report being written to ``out``."""
        self.out = out
        return Tools(
            probe=self.probe,
            versions=self.versions,
            install=self.install,
            doctor=self.doctor,
            run_notebooks=self.run_notebooks,
            tests=self.tests,
            claims=self.claims,
            clock=self.clock,
        )

    def probe(self, root, timeout):
        self.calls.append(("probe", timeout))
        return {
            "host": {
                "accelerator": self.accelerator,
                "jax_backend": "cpu",
                "torch_device": "cpu",
                "gpu_name": "NVIDIA H100 80GB HBM3",
                "env": {"jax": "0.10.2", "torch": "2.13.0"},
            },
            "torch_cuda": {"cuda": "13.0", "cudnn": 91900},
        }

    def versions(self, torch_cuda):
        self.calls.append(("versions",))
        return {"jax": "0.10.2", **{f"torch_{k}": v for k, v in torch_cuda.items()}}

    def install(self, root, work, wheels, timeout):
        self.calls.append(("install", wheels, timeout))
        self._seen("install")
        self.t += self.step_seconds
        return {"ok": True, "exit_code": 0, "kept": ["torch==2.13.0"]}

    def doctor(self, root, timeout):
        self.calls.append(("doctor", timeout))
        self._seen("doctor")
        self.t += self.step_seconds
        return {"ok": True, "exit_code": 0, "output": "Everything ..."}

    def run_notebooks(self, nbs, *, root, smoke, timeout, out_dir, progress):
        (nb,) = nbs
        mode = "smoke" if smoke else "full"
        self.calls.append((mode, nb.stem, timeout, self.t))
        self._seen(f"{mode}:{nb.stem}")
        status, seconds = (self.smoke if smoke else self.full).get(nb.stem, ("ok", 1.0))
        if seconds > timeout:
            status, seconds = "timeout", timeout
        self.t += seconds
        error = "ValueError: boom" if status == "failed" else ""
        return [
            Result(
                str(nb),
                status,
                seconds,
                cell=3 if error else None,
                error=error,
                output="line 1\nValueError: boom" if error else "",
            )
        ]

    def tests(self, root, work, timeout):
        self.calls.append(("tests", timeout))
        self._seen("tests")
        seconds = self.tests_seconds
        if timeout is not None and seconds > timeout:
            self.t += timeout
            return {"ok": False, "exit_code": None, "output": "did not finish"}
        self.t += seconds
        return {"ok": True, "exit_code": 0, "tests": 36, "failures": 0}

    def claims(self, root, work, smoke, timeout):
        self.calls.append(("claims", smoke, timeout))
        self._seen("claims")
        self.t += self.claims_seconds
        return {"ok": True, "exit_code": 0, "json": json.loads(json.dumps(CLAIMS_JSON))}

    def names(self) -> list[str]:
        return [
            c[0] if c[0] not in ("smoke", "full") else f"{c[0]}:{c[1]}"
            for c in self.calls
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
