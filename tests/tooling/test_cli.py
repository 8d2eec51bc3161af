"""The ``course`` command's old address still runs it: installed ``course`` scripts
import ``main`` from it, and the student notebooks' check line runs it with ``-m``."""

import subprocess
import sys
from pathlib import Path

from course_utils import cli
from course_utils.tooling import cli as old_address

ROOT = Path(__file__).resolve().parents[2]


def test_the_old_address_is_the_command():
    assert old_address.main is cli.main


def test_python_m_at_the_old_address_runs_the_command():
    out = subprocess.run(
        [sys.executable, "-m", "course_utils.tooling.cli", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert "check-device" in out.stdout
