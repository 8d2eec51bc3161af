"""``python -m course_utils``: the ``course`` command through the interpreter itself, as
the student notebooks' check line runs it (no ``course`` on the kernel's PATH needed)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.grading.helpers import ROOT


def test_python_m_course_utils_is_the_course_command(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))  # no `course` (nor a venv) on PATH
    done = subprocess.run(
        [sys.executable, "-m", "course_utils", "check", "nope.ipynb"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "course: error: NOTEBOOK nope.ipynb: no such file" in done.stderr
