"""The install step of ``course check-device``: ``pip install -e .[dev]`` with the machine's
own framework builds kept (docs/DEVICE_CHECK.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from course_utils.tooling.device_check import steps
from course_utils.tooling.device_check.probe import pins


def install(
    root: Path, work: Path, wheels: Path | None, timeout: float | None
) -> dict[str, Any]:
    """``pip install -e .[dev]`` with the installed frameworks pinned as constraints."""
    from course_utils.install.hosted import pip_install

    constraints = work / "constraints.txt"
    kept = pins()
    constraints.write_text("".join(p + "\n" for p in kept), encoding="utf-8")
    cmd = pip_install("-e", f"{root}[dev]", constraint=constraints)
    if wheels is not None:
        cmd += ["--no-index", "--find-links", str(wheels)]
    code, out = steps.run_command(cmd, timeout=timeout, cwd=root)
    return {
        "ok": code == 0,
        "exit_code": code,
        "kept": kept,
        "command": cmd,
        "output": steps.tail(out),
    }
