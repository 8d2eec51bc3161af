"""What the steps of ``course check-device`` share: a child process run in its own group,
an output's tail, a JUnit file's counts. The machine's facts are
:mod:`~course_utils.tooling.device_check.probe`, the install step
:mod:`~course_utils.tooling.device_check.install`, the other steps' children (lessons,
tests, claims, doctor) :mod:`~course_utils.tooling.device_check.children`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any


def run_command(
    cmd: list[str],
    *,
    timeout: float | None,
    cwd: Path,
    env: dict[str, str] | None = None,
) -> tuple[int | None, str]:
    """Run ``cmd`` in its own process group; exit code (None on timeout) and output."""
    from course_utils.tooling.execution.runner import run_in_group

    return run_in_group(cmd, timeout=timeout, cwd=cwd, env=env)


def tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def junit_counts(path: Path) -> dict[str, Any]:
    """Totals and the failing tests of a pytest JUnit XML file (empty when absent)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return {}
    counts = {k: 0 for k in ("tests", "failures", "errors", "skipped")}
    failing = []
    for suite in root.iter("testsuite"):
        for k in counts:
            counts[k] += int(suite.get(k, 0))
    for case in root.iter("testcase"):
        bad = case.find("failure")
        bad = bad if bad is not None else case.find("error")
        if bad is not None:
            message = (bad.get("message") or "").strip().split("\n")[0][:300]
            failing.append(f"{case.get('classname')}::{case.get('name')}: {message}")
    return {**counts, "failing": failing}
