"""The JSON report of ``course check-device``: its shape, its atomic saves, its file name.

The report is rewritten whole after every step and every notebook (a temporary
file, then a rename), so a run killed at any moment leaves a valid report with
``complete: false``. docs/DEVICE_CHECK.md describes its fields.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from course_utils._files import write_atomic

SCHEMA_VERSION = 1


def now() -> str:
    """The time now, as the report writes it (UTC, to the second)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write the report as JSON, whole or not at all (a second shell may be reading it)."""
    write_atomic(path, json.dumps(data, indent=2, default=str) + "\n")


def new_report(options: dict[str, Any], planned: list[str]) -> dict[str, Any]:
    """A report before anything ran: every ``planned`` step pending."""
    return {
        "schema_version": SCHEMA_VERSION,
        "status": "running",
        "complete": False,
        "started": now(),
        "updated": None,
        "finished": None,
        "seconds": 0.0,
        "options": options,
        "budget_left_seconds": options.get("budget_seconds"),
        "host": {},
        "versions": {},
        "steps": {name: {"status": "pending"} for name in planned},
        "notebooks": [],
        "claims": None,
    }


def save(
    path: Path, report: dict[str, Any], seconds: float, left: float | None
) -> None:
    """Stamp ``report`` with the time spent and the budget left, then write it."""
    report["updated"] = now()
    report["seconds"] = round(seconds, 1)
    report["budget_left_seconds"] = None if left is None else round(max(0.0, left), 1)
    write_json(path, report)


def report_name(report: dict[str, Any]) -> str:
    """The file name a report gets under docs/device-reports/: ``<date>-<device>.json``."""
    host = report.get("host") or {}
    device = host.get("gpu_name") or host.get("accelerator") or "unknown"
    slug = re.sub(r"[^a-z0-9]+", "-", str(device).lower()).strip("-") or "unknown"
    return f"{str(report.get('started', ''))[:10]}-{slug}.json"
