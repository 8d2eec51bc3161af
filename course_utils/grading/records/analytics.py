"""Class analytics: what a whole class's records say about the exercises and their tests.

:func:`summarise` reads the trusted records of a report folder (or any list of
them) and returns plain data: per exercise and per test cell the share of
students passing, the score histogram, the most common failures grouped by
their normalised message (exception type and message, numbers masked) with a
count and two example students, tests that nobody or everybody passes (a
broken test or unclear instructions), and time and memory per submission.
:mod:`.classreport` draws and writes it.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict

# A number, not the digits of a name (``x1``, ``float32``: no letter, digit or ``_``
# before it).
_NUMBER = re.compile(r"(?<![A-Za-z0-9_])[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")
NOT_RUN = ("invalid", "error")  # student statuses whose code never ran
MAX_GROUPS = 20  # failure groups listed
WHOLE = "(the whole submission)"  # the failure group of a submission that did not run


def normalise(message: str, limit: int = 160) -> str:
    """A failure message as one line with its numbers masked (``N``), cut to ``limit``."""
    text = " ".join(str(message).split()) or "(no message)"
    text = _NUMBER.sub("N", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def histogram(totals: list[float], max_total: float) -> list[dict]:
    """Counts of totals in bins: one per point up to 20 points, else 10 equal bins."""
    if max_total <= 0:
        return [{"low": 0.0, "high": 0.0, "count": len(totals)}]
    step = 1.0 if max_total <= 20 else max_total / 10
    n = int(round(max_total / step)) + (1 if step == 1.0 else 0)
    bins = [
        {"low": k * step, "high": min((k + 1) * step, max_total), "count": 0}
        for k in range(n)
    ]
    for t in totals:
        k = min(int(t // step), n - 1)
        bins[k]["count"] += 1
    return bins


def _tests(recs: list[dict]) -> list[dict]:
    """Each test cell: points, and who passed it (all students, and those whose code ran)."""
    order: dict[str, dict] = {}
    ran = [r for r in recs if r["status"] not in NOT_RUN]
    for r in recs:
        for t in r.get("tests", []):
            row = order.setdefault(
                t["name"],
                {
                    "name": t["name"],
                    "exercise": t.get("exercise"),
                    "hidden": bool(t.get("hidden")),
                    "max_points": t.get("max_points", 0),
                    "passed": 0,
                },
            )
            row["passed"] += t.get("status") == "passed"
    for row in order.values():
        row["students"] = len(recs)
        row["share"] = row["passed"] / len(recs) if recs else 0.0
        passed_ran = sum(
            any(
                t["name"] == row["name"] and t["status"] == "passed" for t in r["tests"]
            )
            for r in ran
        )
        row["flag"] = _flag(passed_ran, len(ran))
    return list(order.values())


def _flag(passed: int, ran: int) -> str:
    if ran < 2:
        return ""
    if passed == 0:
        return "nobody passes: check the test and the instructions"
    if passed == ran:
        return "everybody passes: does the test check enough?"
    return ""


def _exercises(recs: list[dict]) -> list[dict]:
    rows: dict[str, dict] = {}
    for r in recs:
        for ex, info in r.get("exercises", {}).items():
            row = rows.setdefault(
                ex,
                {
                    "exercise": ex,
                    "max_points": info.get("max_points", 0),
                    "points": [],
                    "statuses": Counter(),
                },
            )
            row["points"].append(info["points"])
            row["statuses"][info.get("status", "")] += 1
    out = []
    for row in rows.values():
        pts = row.pop("points")
        row["passed"] = row["statuses"].get("passed", 0)
        row["share"] = row["passed"] / len(pts) if pts else 0.0
        row["mean_points"] = round(statistics.fmean(pts), 3) if pts else 0.0
        row["statuses"] = dict(sorted(row["statuses"].items()))
        out.append(row)
    return out


def failures(recs: list[dict]) -> list[dict]:
    """Failed tests grouped by (test, normalised message), the largest groups first.

    A submission that never ran (invalid, or the grader failed) is one failure
    of :data:`WHOLE`, not one per test.
    """
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in recs:
        if r["status"] in NOT_RUN:  # one group for the submission, not one per test
            groups[(WHOLE, normalise(r.get("reason", "")))].append(r["student"])
            continue
        for t in r.get("tests", []):
            if t.get("status") != "passed":
                groups[(t["name"], normalise(t.get("message", "")))].append(
                    r["student"]
                )
    rows = [
        {"test": test, "message": msg, "count": len(who), "examples": sorted(who)[:2]}
        for (test, msg), who in groups.items()
    ]
    rows.sort(key=lambda g: (-g["count"], g["test"], g["message"]))
    return rows[:MAX_GROUPS]


def _resources(recs: list[dict]) -> dict:
    rows = [
        {
            "student": r["student"],
            "seconds": float(r.get("seconds") or 0.0),
            "peak_memory_mb": float(r.get("peak_memory_mb") or 0.0),
        }
        for r in recs
        if r["status"] not in NOT_RUN
    ]

    def stats(key: str) -> dict:
        values = [row[key] for row in rows] or [0.0]
        return {"median": statistics.median(values), "max": max(values)}

    return {
        "students": rows,
        "seconds": stats("seconds"),
        "memory": stats("peak_memory_mb"),
    }


def summarise(recs: list[dict]) -> dict:
    """The class report's data (plain JSON): see the module's docstring."""
    recs = sorted(recs, key=lambda r: r["student"])
    max_total = max((r["max_total"] for r in recs), default=0.0)
    totals = [r["total"] for r in recs]
    return {
        "students": len(recs),
        "statuses": dict(sorted(Counter(r["status"] for r in recs).items())),
        "max_total": max_total,
        "mean_total": round(statistics.fmean(totals), 3) if totals else 0.0,
        "histogram": histogram(totals, max_total),
        "exercises": _exercises(recs),
        "tests": _tests(recs),
        "failures": failures(recs),
        "resources": _resources(recs),
    }
