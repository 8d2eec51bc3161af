"""course_utils.tooling.device_check.install: the install step (pip faked)."""

from __future__ import annotations

import sys
from pathlib import Path

from course_utils.tooling.device_check import install as device_install
from course_utils.tooling.device_check import probe as device_probe
from course_utils.tooling.device_check import steps as device_steps
from tests.tooling.device_check.test_probe import DISTS

ROOT = Path(__file__).resolve().parents[3]


def test_install_pins_the_installed_builds_and_can_stay_offline(tmp_path, monkeypatch):
    monkeypatch.setattr(device_probe.metadata, "distributions", lambda: DISTS)
    seen = []

    def fake_run(cmd, *, timeout, cwd, env=None):
        seen.append(cmd)
        return 0, "Successfully installed"

    monkeypatch.setattr(device_steps, "run_command", fake_run)
    result = device_install.install(ROOT, tmp_path, None, 100.0)
    assert result["ok"] and "torch==2.11.0+cu128" in result["kept"]
    cmd = seen[0]
    assert cmd[:4] == [sys.executable, "-m", "pip", "install"]
    assert cmd[cmd.index("-e") + 1] == f"{ROOT}[dev]"
    constraints = Path(cmd[cmd.index("--constraint") + 1])
    assert constraints.read_text().splitlines() == result["kept"]
    assert "--no-index" not in cmd
    device_install.install(ROOT, tmp_path, tmp_path / "wheels", None)
    assert seen[1][-3:] == ["--no-index", "--find-links", str(tmp_path / "wheels")]
