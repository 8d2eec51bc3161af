"""course_utils.tooling.device_check.steps: what the device check's steps share."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from course_utils.tooling.device_check import steps as device_steps
from tests import load

ROOT = Path(__file__).resolve().parents[3]


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


def test_run_command_stops_what_runs_past_its_timeout(tmp_path):
    start = time.monotonic()
    code, out = device_steps.run_command(
        [sys.executable, "-u", "-c", "import time; print('started'); time.sleep(60)"],
        timeout=2.0,
        cwd=tmp_path,
    )
    assert code is None and out.splitlines() == ["started", "did not finish within 2 s"]
    assert time.monotonic() - start < load.stretched(20)
