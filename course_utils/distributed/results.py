"""What a launch leaves: its result, its errors, and each rank's report read back.

Each rank writes ``rank{N}.json`` and, for arrays, ``rank{N}.npz`` in the run
folder (see :mod:`course_utils.distributed.worker`); :func:`read_ranks` collects them
in rank order. Only the standard library (and numpy, for arrays) is imported.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class LaunchError(RuntimeError):
    """A launched run failed; ``.result`` holds its output and exit codes."""

    def __init__(self, message: str, result: LaunchResult):
        super().__init__(message)
        self.result = result


class LaunchTimeout(LaunchError):
    """A launched run did not finish in time (everything it started was killed)."""


@dataclass
class LaunchResult:
    """What a launch did: commands, exit codes, output, and each rank's report."""

    commands: list[list[str]]
    returncodes: list[int | None]
    output: str
    seconds: float
    port: int
    timed_out: bool = False
    attempts: int = 1
    ranks: list[dict[str, Any]] = field(default_factory=list)
    workdir: str = ""
    tag: str = ""  # the value of COURSE_DIST_TAG in every process of this launch
    skipped: str = ""  # why nothing was launched (a machine that refuses TCP), or ""

    @property
    def ok(self) -> bool:
        return (
            not self.skipped
            and not self.timed_out
            and all(rc == 0 for rc in self.returncodes)
        )

    @property
    def command_line(self) -> str:
        """The first command as one would type it (``torchrun`` for torch's launcher)."""
        return display_command(self.commands[0]) if self.commands else ""

    def section(self, name: str) -> list[dict[str, Any]]:
        """Each rank's report for one demo of a combined run (keys ``name.key``).

        Empty when the run was :attr:`skipped`, so a cell that loops over the reports
        shows nothing instead of failing.
        """
        if self.skipped:
            return []
        prefix = name + "."
        parts = [
            {k[len(prefix) :]: v for k, v in r.items() if k.startswith(prefix)}
            for r in self.ranks
        ]
        if not any(parts):
            raise KeyError(f"section: no report keys start with {prefix!r}")
        return parts

    def tail(self, lines: int = 25) -> str:
        return "\n".join(self.output.strip().splitlines()[-lines:])

    def __str__(self) -> str:
        if self.skipped:
            return f"not launched: {self.skipped}."
        state = (
            "timed out"
            if self.timed_out
            else ("ok" if self.ok else f"failed {self.returncodes}")
        )
        return (
            f"{len(self.commands)} launch command(s), port {self.port}, {state} in "
            f"{self.seconds:.1f} s, {len(self.ranks)} rank report(s)"
        )


def display_command(cmd: Sequence[str]) -> str:
    """A command as text, with ``python -m torch.distributed.run`` shown as ``torchrun``."""
    parts = list(cmd)
    if len(parts) >= 3 and parts[1:3] == ["-m", "torch.distributed.run"]:
        parts = ["torchrun", *parts[3:]]
    elif parts and parts[0] == sys.executable:
        parts[0] = "python"
    return shlex.join(parts)


def read_ranks(workdir: Path) -> list[dict[str, Any]]:
    """Each rank's report in rank order, its arrays merged in (unreadable ones skipped)."""
    reports: dict[int, dict[str, Any]] = {}
    for path in workdir.glob("rank*.json"):
        try:
            rank = int(path.stem[4:])
            reports[rank] = json.loads(path.read_text())
        except (ValueError, json.JSONDecodeError):
            continue
        arrays = path.with_suffix(".npz")
        if arrays.exists():
            import numpy as np

            with np.load(arrays) as data:
                reports[rank].update({k: data[k] for k in data.files})
    return [reports[r] for r in sorted(reports)]
