"""course_utils.tooling.device_steps: what each step of the device check runs (child processes faked)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from course_utils.tooling import device_steps
from tests.tooling.device_fakes import CLAIMS_JSON

ROOT = Path(__file__).resolve().parents[2]


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


def test_claims_step_embeds_course_claims_json_and_picks_the_mode(
    tmp_path, monkeypatch
):
    seen = []

    def fake_run(cmd, *, timeout, cwd, env=None):
        seen.append((cmd, env["COURSE_SMOKE"]))
        folder = Path(cmd[cmd.index("--out") + 1])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "claims.json").write_text(json.dumps(CLAIMS_JSON))
        return 0, "3 claims"

    monkeypatch.setattr(device_steps, "run_command", fake_run)
    result = device_steps.claims(ROOT, tmp_path, True, 50.0)
    assert result["ok"] and result["json"] == CLAIMS_JSON
    assert seen[-1][0][3:5] == ["claims", "--out"] and seen[-1][0][-1] == "--smoke"
    assert seen[-1][1] == "1"
    device_steps.claims(ROOT, tmp_path, False, 50.0)
    assert "--smoke" not in seen[-1][0] and seen[-1][1] == "0"

    monkeypatch.setattr(
        device_steps, "run_command", lambda cmd, **kw: (None, "timeout")
    )
    result = device_steps.claims(ROOT, tmp_path, False, 50.0)
    assert not result["ok"] and result["json"] is None and result["exit_code"] is None


JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest"
errors="1" failures="1" skipped="0" tests="3"><testcase classname="notebooks.00_a.ipynb"
name="Cell 4"><failure message="AssertionError: parity&#10;more"/></testcase><testcase
classname="notebooks.01_b.ipynb" name="Cell 1"/><testcase classname="solutions.x.ipynb"
name="Cell 2"><error message="kernel died"/></testcase></testsuite></testsuites>"""


def test_notebook_tests_run_nbval_in_smoke_mode_and_count_results(
    tmp_path, monkeypatch
):
    seen = {}

    def fake_run(cmd, *, timeout, cwd, env=None):
        seen.update(cmd=cmd, timeout=timeout, smoke=env["COURSE_SMOKE"])
        Path(
            cmd[[c.startswith("--junitxml") for c in cmd].index(True)].split("=", 1)[1]
        ).write_text(JUNIT)
        return 1, "1 failed, 1 passed, 1 error"

    monkeypatch.setattr(device_steps, "run_command", fake_run)
    result = device_steps.notebook_tests(ROOT, tmp_path, 200.0)
    assert seen["smoke"] == "1" and seen["timeout"] == 200.0
    assert "--nbval-lax" in seen["cmd"] and seen["cmd"][-2:] == [
        "notebooks",
        "solutions",
    ]
    assert "--nbval-cell-timeout=200" in seen["cmd"]
    assert not result["ok"]
    assert (result["tests"], result["failures"], result["errors"]) == (3, 1, 1)
    assert result["failing"] == [
        "notebooks.00_a.ipynb::Cell 4: AssertionError: parity",
        "solutions.x.ipynb::Cell 2: kernel died",
    ]


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
    assert time.monotonic() - start < 20
