"""The grading kernel's entry point: the CPU-time limit is set before IPython starts."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

from course_utils.grading import kernel
from tests.grading.helpers import ROOT

SHOW = (
    "import resource\n"
    "from course_utils.grading.kernel import limit_cpu\n"
    "limit_cpu()\n"
    "print(*resource.getrlimit(resource.RLIMIT_CPU))\n"
)


def _limits(value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != kernel.CPU_ENV}
    if value is not None:
        env[kernel.CPU_ENV] = value
    return subprocess.run(
        [sys.executable, "-c", SHOW],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=env,
    ).stdout.split()


def test_cpu_limit_from_the_environment():
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY:
        assert _limits("7") == ["7", "12"]  # SIGXCPU at 7 s, SIGKILL at 12 s
    else:
        assert int(_limits("7")[1]) <= hard
    assert _limits(None) == [str(soft), str(hard)]
    assert _limits("0") == [str(soft), str(hard)]


def test_the_entry_point_runs_as_a_module():
    res = subprocess.run(
        [sys.executable, "-m", "course_utils.grading.kernel", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert res.returncode == 0, res.stderr
    assert "ipykernel" in res.stdout.lower() or "kernel" in res.stdout.lower()
