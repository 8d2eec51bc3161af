"""The late policy: a deadline, a per-day penalty or a cut-off, extensions, submission times.

``course grade … --deadline 2026-03-01T23:59 [--penalty-per-day 10] [--cutoff 3]
[--grace 15] [--extensions ext.csv] [--times manifest.csv]`` stores the policy in the report
folder (:mod:`.adjust` applies it). Times without a zone are UTC. An extension
row is ``student,deadline`` (a new deadline, which stays when ``--deadline`` changes) or
``student,days`` (days added, stored as days: they move with ``--deadline``).
Submission times come from the manifest (``student,submitted_at``, as an LMS
export lists them); a student missing from it, or every student when there is
no manifest, is timed by the submission file's modification time, with a
warning: copying files changes that time. A submission up to ``--grace`` minutes after
its deadline is on time; a submission time in the future (a wrong clock, a typo in the
manifest) takes no penalty and is flagged.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import math
import os
from pathlib import Path

from course_utils.errors import CourseError

DAY = 86400.0
FUTURE_SLACK_MIN = 5.0  # minutes a submission time may be ahead of this clock
FILE_TIME_WARNING = (
    "late policy: submission times of {n} student(s) ({who}) come from file modification "
    "times (not in a --times manifest); copying files changes them"
)


def parse_time(text: str, what: str) -> dt.datetime:
    try:
        when = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise CourseError(f"{what}: {text!r} is not an ISO 8601 time") from None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _rows(path: Path, what: str) -> list[list[str]]:
    try:
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    except (OSError, UnicodeDecodeError) as err:
        raise CourseError(f"{what} {path}: cannot read it: {err}") from None
    rows = [[c.strip() for c in r] for r in rows if r and any(c.strip() for c in r)]
    if rows and rows[0][0].lower() in ("student", "submission"):
        rows = rows[1:]  # a header
    if any(len(r) < 2 for r in rows):
        raise CourseError(f"{what} {path}: every row needs two columns")
    return rows


def extensions(path: Path, deadline: dt.datetime) -> dict[str, dict]:
    """student -> their extension, from rows of ``student,deadline`` or ``student,days``:
    ``{"days": 2.0}`` (added to the deadline, so they move with it) or ``{"deadline":
    ISO}`` (a date given, which stays)."""
    out: dict[str, dict] = {}
    for student, value, *_ in _rows(path, "--extensions"):
        try:
            days = float(value)
            deadline + dt.timedelta(days=days)  # a number of days it can add
        except (ValueError, OverflowError):
            when = parse_time(value, f"--extensions {path}")
            out[student] = {"deadline": when.isoformat()}
        else:
            out[student] = {"days": days}
    return out


def deadline_of(student: str, policy: dict) -> dt.datetime:
    """The student's deadline: the policy's, with their extension (days added, or a date;
    a policy stored by an older grader keeps each extension as a date, an ISO string)."""
    deadline = dt.datetime.fromisoformat(policy["deadline"])
    ext = (policy.get("extensions") or {}).get(student)
    if isinstance(ext, str):
        return dt.datetime.fromisoformat(ext)
    if isinstance(ext, dict) and "days" in ext:
        return deadline + dt.timedelta(days=float(ext["days"]))
    if isinstance(ext, dict) and "deadline" in ext:
        return dt.datetime.fromisoformat(ext["deadline"])
    return deadline


# the options of the late policy beside --deadline, which each needs
OPTIONS = ("penalty_per_day", "cutoff", "extensions", "times", "grace")


def policy_from_args(args: argparse.Namespace) -> dict | None:
    """The policy the command line gives (None when it gives none)."""
    get = lambda name: getattr(args, name, None)  # noqa: E731
    given = [n for n in OPTIONS if get(n) is not None]
    if not get("deadline"):
        if given:
            raise CourseError(f"--{given[0].replace('_', '-')} needs --deadline")
        return None
    deadline = parse_time(get("deadline"), "--deadline")
    times = {s: parse_time(t, f"--times {get('times')}").isoformat()
             for s, t, *_ in _rows(Path(get("times")), "--times")} if get("times") else {}  # fmt: skip
    return {
        "deadline": deadline.isoformat(),
        "penalty_per_day": get("penalty_per_day") or 0.0,
        "cutoff": get("cutoff"),
        "extensions": extensions(Path(get("extensions")), deadline)
        if get("extensions")
        else {},
        "times": times,
        "grace_minutes": get("grace") or 0.0,
    }


def file_time(rec: dict) -> dt.datetime | None:
    """The submission file's modification time, as the grader read it (a record of an
    older grader: read from the file, None when it is gone)."""
    if rec.get("submission_mtime"):
        return dt.datetime.fromisoformat(rec["submission_mtime"])
    try:
        stamp = os.lstat(str(rec.get("submission") or "")).st_mtime
    except OSError:
        return None
    return dt.datetime.fromtimestamp(stamp, dt.UTC)


def _submitted(rec: dict, policy: dict, timed_by_file: list[str]):
    student = rec["student"]
    if student in policy["times"]:
        return dt.datetime.fromisoformat(policy["times"][student]), "manifest"
    when = file_time(rec)
    if when is None:
        return None, ""
    timed_by_file.append(student)
    return when, "file time"


def lateness(rec: dict, policy: dict, by_file: list[str]) -> dict | None:
    """How late the student was: times, days late, the fraction of points taken, and why.

    A student timed by their file's modification time is added to ``by_file``.
    """
    submitted, source = _submitted(rec, policy, by_file)
    if submitted is None:
        return None
    deadline = deadline_of(rec["student"], policy)
    late_days = (submitted - deadline).total_seconds() / DAY
    grace = float(policy.get("grace_minutes") or 0.0)
    days = math.ceil(late_days) if late_days > 0 else 0
    info = {"submitted_at": submitted.isoformat(timespec="seconds"), "source": source,
            "deadline": deadline.isoformat(timespec="seconds"), "days": days}  # fmt: skip
    cutoff, pct = policy.get("cutoff"), policy.get("penalty_per_day") or 0.0
    now = dt.datetime.now(dt.UTC)
    if submitted > now + dt.timedelta(minutes=FUTURE_SLACK_MIN):  # a clock or a typo
        return info | {
            "days": 0,
            "fraction": 0.0,
            "future": True,
            "why": f"the submission time ({source}) is in the future: check it; "
            "no penalty",
        }
    if days == 0:
        return info | {"fraction": 0.0, "why": "on time"}
    if late_days * DAY <= grace * 60:
        return info | {
            "days": 0,
            "fraction": 0.0,
            "why": f"on time (within the {grace:g}-minute grace period)",
        }
    if cutoff is not None and late_days > cutoff:
        return info | {
            "fraction": 1.0,
            "why": f"{days} day(s) late, past the {cutoff:g}-day cut-off",
        }
    return info | {"fraction": min(1.0, days * pct / 100),
                   "why": f"{days} day(s) late at {pct:g}% a day"}  # fmt: skip


def file_time_warning(students: list[str]) -> str:
    """One warning naming every student timed by their file."""
    return FILE_TIME_WARNING.format(n=len(students), who=", ".join(students))
