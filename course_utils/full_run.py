"""A lesson's result from a real full run, shown beside its smoke output.

Smoke mode proves that a lesson's code runs; its numbers (two epochs of training, a few
timing rounds) say little more. A lesson run in full mode calls :func:`save`, which
writes its numbers with the machine's fingerprint (processor, cores, accelerator,
versions, date; :func:`course_utils.claims.results.fingerprint`) to
``build/full-runs/<lesson>.json`` in a clone of the course (under the working folder
elsewhere). The course ships such files, measured on its own machines, in
``course_utils/full_runs/`` (package data, so Colab's install has them too):
:func:`shipped` reads a lesson's files back and checks them, :func:`label` names each
one's machine, and :func:`table` sets them beside this run's numbers. :func:`columns`
gathers the shipped runs and this one with each machine's load, and :func:`load_note`
says whether a column's speeds can be read. Importing this module imports no framework.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from course_utils._files import write_atomic
from course_utils.errors import CourseError

SCHEMA = 1
SHIPPED = Path(__file__).resolve().with_name("full_runs")

__all__ = [
    "SCHEMA",
    "SHIPPED",
    "columns",
    "label",
    "load",
    "load_note",
    "save",
    "shipped",
    "table",
]


def _out_dir() -> Path:
    from course_utils import config

    try:  # a clone of the course keeps results in its build/ folder
        return config.course_root() / "build" / "full-runs"
    except FileNotFoundError:  # the package alone (Colab, Kaggle): the working folder
        return Path("build") / "full-runs"


def save(
    lesson: str,
    result: Mapping[str, Any],
    machine: Mapping[str, Any],
    out: str | Path | None = None,
) -> Path:
    """Write ``result`` (numbers and strings, JSON-ready) with ``machine``'s fingerprint.

    ``machine`` is the run's environment report (``env.report().info``). Returns the
    file written: ``out`` (a folder) or ``build/full-runs``, then ``<lesson>.json``.
    """
    from course_utils.claims.results import fingerprint

    data = {
        "schema": SCHEMA,
        "lesson": lesson,
        "smoke": bool(machine.get("smoke_mode", False)),
        "fingerprint": fingerprint(dict(machine)),
        "result": dict(result),
    }
    path = Path(out) if out is not None else _out_dir()
    path.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    return write_atomic(path / f"{lesson}.json", text)


def load(path: str | Path) -> dict[str, Any]:
    """Read one result file and check its format; a bad file names itself and the field."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CourseError(f"{path}: no such full-run result file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CourseError(f"{path}: unreadable JSON ({err})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise CourseError(f"{path}: not a full-run result file of schema {SCHEMA}")
    for key, kind in (("lesson", str), ("fingerprint", dict), ("result", dict)):
        if not isinstance(data.get(key), kind):
            raise CourseError(f"{path}: {key} is missing or not a {kind.__name__}")
    if "cpu" not in data["fingerprint"]:
        raise CourseError(f"{path}: fingerprint has no cpu")
    return data


def shipped(lesson: str, folder: str | Path | None = None) -> list[dict[str, Any]]:
    """The full-run result files the course ships for ``lesson`` (``<lesson>--*.json``)."""
    folder = Path(folder) if folder is not None else SHIPPED
    return [load(p) for p in sorted(folder.glob(f"{lesson}--*.json"))]


def label(run: Mapping[str, Any]) -> str:
    """The column heading of a run: its machine and date, then its frameworks' versions."""
    from course_utils.claims.results import machine_label

    f = run["fingerprint"]
    versions = ", ".join(f"{k} {f[k]}" for k in ("jax", "flax", "torch") if k in f)
    return f"{machine_label(run)}; {versions}" if versions else machine_label(run)


def table(
    columns: Sequence[tuple[str, Mapping[str, Any]]],
    rows: Mapping[str, str],
) -> str:
    """A Markdown table: one row per ``rows`` key (its format spec), one column per result.

    ``columns`` holds ``(heading, result)`` pairs; a result without a row's key shows a
    dash, and a string value is shown as it is.
    """
    lines = [
        "| | " + " | ".join(h for h, _ in columns) + " |",
        "|---|" + "---:|" * len(columns),
    ]
    for key, spec in rows.items():
        cells = []
        for _, result in columns:
            value = result.get(key)
            if value is None:
                cells.append("—")
            elif isinstance(value, str):
                cells.append(value)
            else:
                cells.append(format(value, spec))
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def columns(
    lesson: str, result: Mapping[str, Any], folder: str | Path | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """The shipped runs of ``lesson``, then ``result`` as "this run", for :func:`table`.

    Each column's numbers gain its machine's ``load average`` (over one minute, when
    the run was saved, or now for this run) and ``cores``, which :func:`load_note`
    reads; an old file without them shows a dash.
    """
    import os

    cols = [
        (
            label(run),
            {
                **run["result"],
                "load average": run["fingerprint"].get("load_average_1min"),
                "cores": run["fingerprint"].get("cores"),
            },
        )
        for run in shipped(lesson, folder)
    ]
    load_now = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    cols.append(
        ("this run", {**result, "load average": load_now, "cores": os.cpu_count()})
    )
    return cols


def load_note(heading: str, numbers: Mapping[str, Any]) -> str:
    """One line: a column's load average against its cores, and what that makes of its speeds.

    The load average counts the processes running or waiting for the cores. Above the
    number of cores, a run's loops shared the machine with other programs: their
    timings measure that work too, so they compare neither framework.
    """
    load_avg, cores = numbers.get("load average"), numbers.get("cores")
    if load_avg is None or not cores:
        return f"{heading}: load unknown, so its speeds cannot be judged"
    where = f"{heading}: load {load_avg:.1f} on {cores} cores"
    if load_avg > cores:
        return f"{where}, a busy machine: its speeds also time other programs and compare neither framework"
    return f"{where}, quiet enough to read its speeds"
