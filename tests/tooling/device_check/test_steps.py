"""course_utils.tooling.device_check.steps: what each step of the device check runs (child processes faked)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from course_utils.tooling.device_check import steps as device_steps
from tests import load

ROOT = Path(__file__).resolve().parents[3]


class Dist:
    def __init__(self, name, version):
        self.metadata = {"Name": name}
        self.version = version


DISTS = [
    Dist("torch", "2.11.0+cu128"),
    Dist("jax", "0.7.2"),
    Dist("jaxlib", "0.7.2"),
    Dist("jax_cuda12_plugin", "0.7.2"),
    Dist("jax-cuda12-pjrt", "0.7.2"),
    Dist("libtpu", "0.0.21.1"),
    Dist("torch_xla", "2.9.0"),
    Dist("flax", "0.11.2"),
    Dist("torchvision", "0.26.0"),
    Dist("jaxtyping", "0.3.2"),
    Dist("optax", "0.2.8"),
]


def test_pins_keep_the_frameworks_and_plugins_and_nothing_else(monkeypatch):
    monkeypatch.setattr(device_steps.metadata, "distributions", lambda: DISTS)
    assert device_steps.pins() == [
        "jax-cuda12-pjrt==0.7.2",
        "jax-cuda12-plugin==0.7.2",
        "jax==0.7.2",
        "jaxlib==0.7.2",
        "libtpu==0.0.21.1",
        "torch-xla==2.9.0",
        "torch==2.11.0+cu128",
        "torchvision==0.26.0",  # built against that torch: kept with it
    ]


def test_versions_list_plugins_and_what_torch_says_of_cuda(monkeypatch):
    monkeypatch.setattr(device_steps.metadata, "distributions", lambda: DISTS)
    v = device_steps.versions({"cuda": "12.8", "cudnn": 91002})
    assert (v["jax"], v["flax"], v["torch"], v["orbax-checkpoint"]) == (
        "0.7.2",
        "0.11.2",
        "2.11.0+cu128",
        None,
    )
    assert v["jax_plugins"] == {
        "jax-cuda12-pjrt": "0.7.2",
        "jax-cuda12-plugin": "0.7.2",
    }
    assert (v["libtpu"], v["torch_cuda"], v["torch_cudnn"]) == (
        "0.0.21.1",
        "12.8",
        91002,
    )
    assert v["python"].count(".") == 2


def test_install_pins_the_installed_builds_and_can_stay_offline(tmp_path, monkeypatch):
    monkeypatch.setattr(device_steps.metadata, "distributions", lambda: DISTS)
    seen = []

    def fake_run(cmd, *, timeout, cwd, env=None):
        seen.append(cmd)
        return 0, "Successfully installed"

    monkeypatch.setattr(device_steps, "run_command", fake_run)
    result = device_steps.install(ROOT, tmp_path, None, 100.0)
    assert result["ok"] and "torch==2.11.0+cu128" in result["kept"]
    cmd = seen[0]
    assert cmd[:4] == [sys.executable, "-m", "pip", "install"]
    assert cmd[cmd.index("-e") + 1] == f"{ROOT}[dev]"
    constraints = Path(cmd[cmd.index("--constraint") + 1])
    assert constraints.read_text().splitlines() == result["kept"]
    assert "--no-index" not in cmd
    device_steps.install(ROOT, tmp_path, tmp_path / "wheels", None)
    assert seen[1][-3:] == ["--no-index", "--find-links", str(tmp_path / "wheels")]


JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest"
errors="1" failures="1" skipped="0" tests="3"><testcase classname="notebooks.00_a.ipynb"
name="Cell 4"><failure message="AssertionError: parity&#10;more"/></testcase><testcase
classname="notebooks.01_b.ipynb" name="Cell 1"/><testcase classname="solutions.x.ipynb"
name="Cell 2"><error message="kernel died"/></testcase></testsuite></testsuites>"""


def test_junit_counts_totals_and_failing_tests(tmp_path):
    path = tmp_path / "t.xml"
    path.write_text(JUNIT)
    got = device_steps.junit_counts(path)
    assert (got["tests"], got["failures"], got["errors"]) == (3, 1, 1)
    assert got["failing"] == [
        "notebooks.00_a.ipynb::Cell 4: AssertionError: parity",
        "solutions.x.ipynb::Cell 2: kernel died",
    ]
    assert device_steps.junit_counts(tmp_path / "missing.xml") == {}


def test_a_probe_that_crashes_reports_an_unknown_accelerator(monkeypatch):
    monkeypatch.setattr(
        device_steps,
        "run_command",
        lambda cmd, **kw: (1, "Traceback\nRuntimeError: CUDA init failed"),
    )
    got = device_steps.probe_in_child(ROOT, 10.0)
    assert got["host"]["accelerator"] == "unknown"
    assert "CUDA init failed" in got["host"]["error"]


def test_run_command_stops_what_runs_past_its_timeout(tmp_path):
    start = time.monotonic()
    code, out = device_steps.run_command(
        [sys.executable, "-u", "-c", "import time; print('started'); time.sleep(60)"],
        timeout=2.0,
        cwd=tmp_path,
    )
    assert code is None and out.splitlines() == ["started", "did not finish within 2 s"]
    assert time.monotonic() - start < load.stretched(20)
