"""``course grade export DIR --format canvas|moodle|csv --roster roster.csv``: the gradebook.

The roster (CSV, one row per student) maps a submission name to the student:
``submission`` and ``id`` are required, ``name``, ``email``, ``section``,
``login`` and ``canvas_id`` are used when present. The file written is the one
each LMS imports:

- ``canvas``: Canvas's gradebook CSV: ``Student``, ``ID``, ``SIS User ID``,
  ``SIS Login ID``, ``Section``, then one column per assignment, and the
  ``Points Possible`` row under the header (as Canvas's own export has it);
- ``moodle``: Moodle's CSV grade import: an identifier (``ID number``, and
  ``Email address`` to map to ``useremail``), the grade and its feedback;
- ``csv``: every roster column, points, each student's own maximum, status, late
  penalty and manual points.

Canvas and Moodle hold one maximum per assignment: the largest of the students'
(a manual item given to some students only raises theirs), and a ``warning:`` line
names the students whose own maximum is smaller.

A roster student without a graded submission is listed as missing (no grade
in the LMS files, ``missing`` in ``csv``); a graded submission without a
roster row is an error (printed, left out, exit code 1).
"""

from __future__ import annotations

import argparse
import csv
import io
from pathlib import Path

from course_utils._files import write_atomic
from course_utils.errors import CourseError
from course_utils.grading.inputs.names import csv_cell
from course_utils.grading.records import store

REQUIRED = ("submission", "id")
OPTIONAL = ("name", "email", "section", "login", "canvas_id")


def read_roster(path: Path) -> dict[str, dict[str, str]]:
    """submission name -> the roster row (every column, stripped)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise CourseError(f"--roster {path}: cannot read it: {err}") from None
    reader = csv.DictReader(io.StringIO(text))
    heads = [h.strip().lower() for h in reader.fieldnames or []]
    missing = [c for c in REQUIRED if c not in heads]
    if missing:
        raise CourseError(
            f"--roster {path}: no column {', '.join(missing)} (has: {', '.join(heads)})"
        )
    roster: dict[str, dict[str, str]] = {}
    for n, row in enumerate(reader, start=2):
        row = {k.strip().lower(): (v or "").strip() for k, v in row.items() if k}
        if row["submission"] in roster:
            raise CourseError(f"--roster {path}: line {n}: {row['submission']!r} twice")
        if row["submission"]:
            roster[row["submission"]] = {
                c: row.get(c, "") for c in (*REQUIRED, *OPTIONAL)
            }
    return roster


def _assignment(recs: list[dict], name: str | None) -> str:
    if name:
        return name
    masters = {Path(str(r.get("master", ""))).stem for r in recs if r.get("master")}
    return masters.pop() if len(masters) == 1 else "grade"


def gradebook(
    recs: list[dict], roster: dict, fmt: str, assignment: str, per_exercise: bool
):
    """(rows of the file, missing students, submissions without a roster row)."""
    by_sub = {r["student"]: r for r in recs}
    exercises = list(recs[0]["exercises"]) if recs and per_exercise else []
    max_total = full_maximum(recs, roster)
    cols = [(f"{assignment}: {ex}", ex) for ex in exercises] + [(assignment, None)]

    def points(rec, ex):
        if rec is None:
            return ""
        return f"{rec['exercises'][ex]['points']:g}" if ex else f"{rec['total']:g}"

    rows = [_header(fmt, [c for c, _ in cols])]
    if fmt == "canvas":
        maxes = [f"{recs[0]['exercises'][ex]['max_points']:g}" if ex else f"{max_total:g}"
                 for _, ex in cols] if recs else []  # fmt: skip
        rows.append(["Points Possible", "", "", "", "", *maxes])
    for sub, who in sorted(roster.items(), key=lambda kv: kv[1]["id"]):
        rec = by_sub.get(sub)
        grades = [points(rec, ex) for _, ex in cols]
        own = rec["max_total"] if rec else max_total
        rows.append(_row(fmt, sub, who, rec, grades, own))
    missing = sorted(s for s in roster if s not in by_sub)
    errors = sorted(s for s in by_sub if s not in roster)
    return rows, missing, errors


def full_maximum(recs: list[dict], roster: dict) -> float:
    """The assignment's maximum: the largest of the listed students' (a manual item
    given to some students only raises theirs)."""
    listed = [r["max_total"] for r in recs if r["student"] in roster]
    return max(listed or [r["max_total"] for r in recs], default=0)


def short_warning(recs: list[dict], roster: dict, fmt: str) -> str | None:
    """For a format with one maximum per column (Canvas's ``Points Possible`` row,
    Moodle's grade item), the students whose own maximum is smaller, and what to do."""
    listed = [r for r in recs if r["student"] in roster]
    top = full_maximum(recs, roster)
    short = sorted(
        (r for r in listed if r["max_total"] < top), key=lambda r: r["student"]
    )
    if fmt == "csv" or not short:
        return None
    lacking = sorted(
        set().union(*map(_items, listed)) - set.intersection(*map(_items, short))
    )
    tops = sorted({r["max_total"] for r in short})
    where = "Points Possible row" if fmt == "canvas" else "grade item's maximum"
    names = ", ".join(r["student"] for r in short)
    return (
        f"{fmt} scores every student out of {top:g} (its {where}), but {len(short)} "
        f"student(s) ({names}) have a maximum of {'/'.join(f'{t:g}' for t in tops)}"
        + (f": no manual item {', '.join(map(repr, lacking))}" if lacking else "")
        + "; give them the row(s) in manual.csv (with max_points; blank points count 0), "
        "import it with course grade manual and export again (the csv format gives "
        "each student their own maximum)"
    )


def _items(rec: dict) -> set[str]:
    return {m["item"] for m in (rec.get("manual") or {}).get("items", [])}


def _header(fmt: str, grade_cols: list[str]) -> list[str]:
    if fmt == "canvas":
        return ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *grade_cols]
    if fmt == "moodle":
        return [
            "ID number",
            "Email address",
            "Full name",
            *grade_cols,
            f"{grade_cols[-1]} (feedback)",
        ]
    return ["submission", "id", "name", "email", "section", *grade_cols, "max_total",
            "status", "late_penalty", "manual_points"]  # fmt: skip


def _row(fmt, sub, who, rec, grades, max_total) -> list[str]:
    if fmt == "canvas":
        login = who["login"] or who["email"]
        return [
            who["name"],
            who["canvas_id"],
            who["id"],
            login,
            who["section"],
            *grades,
        ]
    if fmt == "moodle":
        feedback = "" if rec is None else _feedback(rec)
        return [who["id"], who["email"], who["name"], *grades, feedback]
    status = "missing" if rec is None else rec["status"]
    late = (rec or {}).get("late") or {}
    manual = (rec or {}).get("manual") or {}
    return [sub, who["id"], who["name"], who["email"], who["section"], *grades,
            f"{max_total:g}", status, f"{late.get('penalty', 0):g}" if late else "",
            f"{manual.get('points', 0):g}" if manual else ""]  # fmt: skip


def _feedback(rec: dict) -> str:
    text = f"{rec['total']:g} / {rec['max_total']:g}: {rec['status']}: {rec['reason']}"
    late = rec.get("late") or {}
    if late.get("penalty"):
        text += f"; late penalty {late['penalty']:g} points ({late.get('why', '')})"
    return text


def run(folder: Path, args: argparse.Namespace) -> int:
    if not args.roster:
        raise CourseError("grade export: --roster roster.csv is required")
    roster = read_roster(Path(args.roster))
    recs = store.records(folder)
    assignment = _assignment(recs, args.assignment)
    rows, missing, errors = gradebook(
        recs, roster, args.format, assignment, args.per_exercise
    )
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(
        [[csv_cell(c) for c in r] for r in rows]
    )
    target = (
        Path(args.out)
        if args.out
        else folder / "class-report" / f"gradebook-{args.format}.csv"
    )
    write_atomic(target, buf.getvalue())
    warning = short_warning(recs, roster, args.format)
    if warning:
        print(f"warning: {warning}")
    for sub in missing:
        print(f"missing: {sub} ({roster[sub]['id']}) has no graded submission")
    for sub in errors:
        print(
            f"error: submission {sub!r} has no roster entry; it is not in the gradebook"
        )
    print(f"{args.format} gradebook of {len(roster)} student(s) in {target}")
    return 1 if errors else 0
