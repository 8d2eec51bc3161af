"""The grader's shared fixture: one generated class (``generated_class``), graded once."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.grading.generated_class import GradedClass, grade_command, write_class
from tests.grading.helpers import ROOT, require_sandbox


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory) -> GradedClass:
    """The generated class graded on this machine (``--jobs 2``), once per test process."""
    require_sandbox()
    root = tmp_path_factory.mktemp("class")
    expected = write_class(root / "subs")
    cmd = [sys.executable, "-m", "course_utils.tooling.cli"]
    cmd += grade_command(root / "subs", root / "graded", "--jobs", "2")
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return GradedClass(root / "subs", root / "graded", expected)
