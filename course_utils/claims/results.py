"""Results from several machines: a hardware fingerprint, a checked file format, one merged table.

``course claims --out DIR`` writes ``DIR/claims.json``: the outcomes plus a
:func:`fingerprint` of the machine (CPU model, cores, accelerator, versions,
threads, load, when). :func:`load` reads such a file back and refuses one that
does not match the format, naming the file and the field. :func:`merge_table`
puts several machines' verdicts side by side, one row per claim;
``course claims merge DIR_OR_FILE...`` prints it. :func:`add_run` adds a later
run's new claims to a result file of the same machine (``course claims merge DIR
--into FILE``), each row keeping its run's date. The repository keeps
measured result files in ``docs/claims-results/``, one per machine; lesson 08
shows the reader's run next to them (:func:`shipped`).
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from course_utils.claims import registry
from course_utils.claims.verdict_rule import VERDICTS, fmt
from course_utils.errors import CourseError

SCHEMA = 1
SHIPPED = Path(__file__).resolve().parents[2] / "docs" / "claims-results"
_CLAIM_FIELDS = {"id": str, "verdict": str, "device": str, "n": int}


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux), or what platform knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def fingerprint(machine: dict[str, Any]) -> dict[str, Any]:
    """What identifies the machine a run came from (``machine``: the run's env report)."""
    from course_utils import contention

    keys = (
        "jax",
        "jaxlib",
        "flax",
        "torch",
        "accelerator",
        "jax_devices",
        "torch_device",
    )
    return {
        "cpu": cpu_model(),
        "cores": contention.cores(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        **{k: str(machine[k]) for k in keys if k in machine},
        "threads": contention.thread_policy(),
        "load_average_1min": contention.load_average(),
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def _fail(path: Path, what: str) -> CourseError:
    return CourseError(f"{path}: not a `course claims` result file: {what}")


def _check_claim(path: Path, i: int, c: Any) -> None:
    if not isinstance(c, dict):
        raise _fail(path, f"claims[{i}] is not an object")
    for key, kind in _CLAIM_FIELDS.items():
        if not isinstance(c.get(key), kind):
            raise _fail(path, f"claims[{i}].{key} is missing or not a {kind.__name__}")
    if c["verdict"] not in VERDICTS:
        raise _fail(
            path, f"claims[{i}].verdict {c['verdict']!r} is not one of {VERDICTS}"
        )
    interval = c.get("interval")
    if interval is not None and not (
        isinstance(interval, list)
        and len(interval) == 2
        and all(isinstance(x, int | float) for x in interval)
    ):
        raise _fail(path, f"claims[{i}].interval must be [low, high]")


def load(path: str | Path) -> dict[str, Any]:
    """Read and check one result file (a ``claims.json``, or a folder holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / "claims.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CourseError(f"{path}: no such result file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise _fail(path, f"unreadable JSON ({err})") from None
    if not isinstance(data, dict):
        raise _fail(path, "the top level is not an object")
    if data.get("schema") != SCHEMA:
        raise _fail(path, f"schema is {data.get('schema')!r}, expected {SCHEMA}")
    if (
        not isinstance(data.get("fingerprint"), dict)
        or "cpu" not in data["fingerprint"]
    ):
        raise _fail(path, "fingerprint is missing or has no cpu")
    if not isinstance(data.get("claims"), list):
        raise _fail(path, "claims is missing or not a list")
    for i, c in enumerate(data["claims"]):
        _check_claim(path, i, c)
    data["_path"] = str(path)
    return data


def machine_label(data: dict[str, Any]) -> str:
    """'AMD EPYC (2 cores), 2026-11-30' for a column heading; '+ 1 x TPU v5 lite' where JAX had one.

    The accelerator is named so that a file measured on a TPU or GPU host gets a
    heading of its own beside a CPU file from a host with the same processor.
    A file with runs added (:func:`add_run`) names every run's date.
    """
    f = data["fingerprint"]
    mode = ", smoke" if data.get("smoke") else ""
    if data.get("complete") is False:
        mode += ", stopped part-way"
    kind = str(f.get("accelerator", "cpu"))
    devices = str(f.get("jax_devices", ""))
    accelerator = ""
    if kind != "cpu":
        named = devices and not devices.lower().endswith("cpu")
        accelerator = f" + {devices if named else kind.upper()}"
    dates = [str(f.get("when", "?"))[:10]]
    dates += [str(a.get("when", "?"))[:10] for a in data.get("added", [])]
    dates = list(dict.fromkeys(dates))  # each date once, in the order measured
    when = dates[0] if len(dates) == 1 else f"{', '.join(dates[:-1])} and {dates[-1]}"
    return f"{f['cpu']} ({f.get('cores', '?')} cores{mode}){accelerator}, {when}"


def _cell(c: dict[str, Any]) -> str:
    if c.get("median") is None:
        return c["verdict"]
    unit = c.get("unit", "x")
    text = f"{c['verdict']}: {fmt(c['median'], unit)}"
    if c.get("interval"):
        lo, hi = c["interval"]
        text += f" ({fmt(lo, unit)}–{fmt(hi, unit)})"
    return text


def merge_table(results: Sequence[dict[str, Any]]) -> str:
    """One Markdown table: a row per claim and device kind, a column per result file."""
    if not results:
        raise CourseError("claims merge: give at least one result file or folder")
    cells: dict[tuple[str, str], list[str]] = {}
    for col, data in enumerate(results):
        for c in data["claims"]:
            row = cells.setdefault((c["id"], c["device"]), ["—"] * len(results))
            row[col] = _cell(c)
    order = {c.id: i for i, c in enumerate(registry.CLAIMS)}
    keys = sorted(cells, key=lambda k: (order.get(k[0], len(order)), k[1]))
    head = (
        "| claim | device | stated | "
        + " | ".join(machine_label(d) for d in results)
        + " |"
    )
    lines = [head, "|---|---|---|" + "---|" * len(results)]
    for claim_id, device in keys:
        stated = registry.get(claim_id).claimed if claim_id in order else "?"
        lines.append(
            f"| {claim_id} | {device} | {stated} | "
            + " | ".join(cells[(claim_id, device)])
            + " |"
        )
    return "\n".join(lines)


# What a later run must share with a result file to join it: the same kind of machine
# (processor, cores, accelerator), the same versions and the same thread policy.
SAME_MACHINE = (
    "cpu",
    "cores",
    "cpu_count",
    "python",
    "jax",
    "jaxlib",
    "flax",
    "torch",
    "accelerator",
    "jax_devices",
    "torch_device",
    "threads",
)


def _refuse_run(path: Path, base: dict[str, Any], new: dict[str, Any]) -> None:
    """CourseError when ``new`` cannot join the file at ``path``, saying why and what to do."""
    run = new["_path"]
    for key in SAME_MACHINE:
        mine, theirs = base["fingerprint"].get(key), new["fingerprint"].get(key)
        if mine != theirs:
            raise CourseError(
                f"{run}: its {key} is {theirs!r} and {path}'s is {mine!r}: "
                "ship it as a result file of its own"
            )
    if bool(new.get("smoke")) != bool(base.get("smoke")):
        modes = (
            "smoke" if new.get("smoke") else "full",
            "smoke" if base.get("smoke") else "full",
        )
        raise CourseError(
            f"{run}: a {modes[0]}-mode run cannot join {path}, a {modes[1]}-mode file"
        )
    if new.get("complete") is False:
        raise CourseError(f"{run}: the run stopped part-way; run it to its end first")
    have = {(c["id"], c["device"]) for c in base["claims"]}
    again = [
        f"{c['id']} ({c['device']})"
        for c in new["claims"]
        if (c["id"], c["device"]) in have
    ]
    if again:
        raise CourseError(
            f"{run}: {path} already holds {', '.join(again)}; a claim measured again "
            "belongs in a new run of the whole file"
        )


def add_run(path: str | Path, run: str | Path) -> dict[str, Any]:
    """Add a later run's claims to the result file at ``path``; returns the file, loaded.

    ``run`` (a ``claims.json`` or its folder) must come from the same kind of
    machine (:data:`SAME_MACHINE`), in the same mode, run to its end, and hold
    only claims the file lacks on their device kind. Each added claim keeps its
    run's date (``added_when``), and the file's ``added`` list records each run:
    its date, load, platform, seconds, summary and busy-machine warning.
    """
    from course_utils._files import write_atomic

    path = Path(path)
    base, new = load(path), load(run)
    _refuse_run(path, base, new)
    f, machine = new["fingerprint"], new.get("machine", {})
    entry = {
        "when": f.get("when"),
        "load_average_1min": f.get("load_average_1min"),
        "platform": f.get("platform"),
        "seconds": new.get("seconds"),
        "summary": machine.get("summary"),
        "claims": [f"{c['id']} ({c['device']})" for c in new["claims"]],
    }
    if machine.get("warning"):
        entry["warning"] = machine["warning"]
    data = {k: v for k, v in base.items() if k != "_path"}
    data["claims"] = base["claims"] + [
        {**c, "added_when": f.get("when")} for c in new["claims"]
    ]
    data["devices"] = list(
        dict.fromkeys([*base.get("devices", []), *new.get("devices", [])])
    )
    data["added"] = [*base.get("added", []), entry]
    write_atomic(path, json.dumps(data, indent=2, default=str) + "\n")
    return load(path)


def shipped() -> list[dict[str, Any]]:
    """The result files the repository carries (measured on the course's machines)."""
    return [load(p) for p in sorted(SHIPPED.glob("*.json"))]
