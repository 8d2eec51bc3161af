"""The grader's shared fixture: one generated class (``generated_class``), graded once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from filelock import FileLock

from tests.grading.generated_class import (
    KINDS,
    ROSTER,
    GradedClass,
    grade_command,
    write_class,
)
from tests.grading.helpers import ROOT, require_sandbox


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory) -> GradedClass:
    """The generated class graded on this machine (``--jobs 2``), once per test run:
    pytest-xdist's workers share it (the first grades it, the others wait and reuse it).
    Tests read it; one that changes reports works on a copy."""
    require_sandbox()
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, shared by its workers
    root = base / "generated-class"
    with FileLock(str(root) + ".lock"):
        if not (root / "complete").exists():
            shutil.rmtree(root, ignore_errors=True)
            write_class(root / "subs")
            cmd = [sys.executable, "-m", "course_utils.cli"]
            cmd += grade_command(root / "subs", root / "graded", "--jobs", "2")
            done = subprocess.run(
                cmd, cwd=ROOT, capture_output=True, text=True, timeout=600
            )
            assert done.returncode == 0, done.stdout + done.stderr
            (root / "complete").touch()
    expected = {s: KINDS[kind] for s, kind in ROSTER.items()}
    return GradedClass(root / "subs", root / "graded", expected)
