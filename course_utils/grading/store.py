"""The report folder: one sub-folder per student, the class tables, and shard merging.

``DIR/<student>/grade.json`` is written last, atomically, once the student's
other files are in place: it is the mark that the student is graded. The
class tables ``grades.csv`` and ``grades.json`` are rebuilt from those marks
after every student, so they never disagree with the folders and a run that
was killed loses nothing already graded.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

from course_utils._files import write_atomic
from course_utils.tooling.errors import CourseError

RECORD = "grade.json"
WORK = ".work"


def student_dir(out: Path, student: str) -> Path:
    return out / student


def save_student(out: Path, record: dict, files: dict[str, str]) -> None:
    """Write the student's files, then their ``grade.json`` (the commit mark)."""
    folder = student_dir(out, record["student"])
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        write_atomic(folder / name, text)
    write_atomic(
        folder / RECORD, json.dumps(record, indent=1, ensure_ascii=False) + "\n"
    )


def load_record(folder: Path) -> dict | None:
    try:
        data = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "student" in data else None


def records(out: Path) -> list[dict]:
    """Every graded student's record in ``out``, by student id."""
    if not out.is_dir():
        return []
    found = []
    for folder in sorted(out.iterdir()):
        if folder.is_dir() and not folder.name.startswith("."):
            rec = load_record(folder)
            if rec is not None:
                found.append(rec)
    return found


def already_graded(
    out: Path, student: str, submission_sha: str | None, master_sha: str
) -> bool:
    rec = load_record(student_dir(out, student))
    return bool(
        rec
        and rec.get("status") != "error"
        and rec.get("submission_sha256") == submission_sha
        and rec.get("master_sha256") == master_sha
    )


def _exercise_columns(recs: list[dict]) -> list[str]:
    cols: list[str] = []
    for rec in recs:
        for ex in rec.get("exercises", {}):
            if ex not in cols:
                cols.append(ex)
    return cols


def write_tables(out: Path) -> list[dict]:
    """Rebuild ``grades.csv`` and ``grades.json`` from the students' records."""
    recs = records(out)
    cols = _exercise_columns(recs)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    fixed = ["total", "max_total", "status", "reason", "flags", "seconds"]
    heads = [f"exercise:{c}" if c in fixed or c == "student" else c for c in cols]
    writer.writerow(["student", *heads, *fixed])
    for r in recs:
        exs = r.get("exercises", {})
        writer.writerow(
            [
                r["student"],
                *(f"{exs[c]['points']:g}" if c in exs else "" for c in cols),
                f"{r['total']:g}",
                f"{r['max_total']:g}",
                r["status"],
                r["reason"],
                " ".join(f.replace(" ", "_") for f in r.get("flags", [])),
                r.get("seconds", ""),
            ]
        )
    write_atomic(out / "grades.csv", buf.getvalue())
    summary = [
        {
            k: r.get(k)
            for k in (
                "student",
                "total",
                "max_total",
                "status",
                "reason",
                "flags",
                "notes",
                "seconds",
                "graded_at",
            )
        }
        | {
            "exercises": {
                ex: {k: v for k, v in info.items() if k != "message"}
                | {"message": info.get("message", "")}
                for ex, info in r.get("exercises", {}).items()
            }
        }
        for r in recs
    ]
    write_atomic(
        out / "grades.json",
        json.dumps({"students": summary}, indent=1, ensure_ascii=False) + "\n",
    )
    return recs


def merge(inputs: list[Path], out: Path) -> tuple[list[dict], list[str]]:
    """Join shard report folders into ``out``; a student graded twice keeps the newest grade."""
    notes: list[str] = []
    chosen: dict[str, tuple[dict, Path]] = {}
    for folder in inputs:
        if not folder.is_dir():
            raise CourseError(f"grade merge: {folder} is not a folder")
        recs = records(folder)
        if not recs:
            notes.append(f"{folder}: no graded students")
        for rec in recs:
            prev = chosen.get(rec["student"])
            if prev is not None:
                keep_new = rec.get("graded_at", "") > prev[0].get("graded_at", "")
                notes.append(
                    f"student {rec['student']!r} is in {prev[1]} and {folder}; "
                    f"kept the newer grade from {folder if keep_new else prev[1]}"
                )
                if not keep_new:
                    continue
            chosen[rec["student"]] = (rec, folder)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CourseError(
            f"--out {out}: cannot create it: {err.strerror or err}"
        ) from None
    for student, (_rec, folder) in sorted(chosen.items()):
        src, dst = folder / student, out / student
        if src.resolve() == dst.resolve():
            continue
        tmp = out / WORK / f"merge-{student}"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(src, tmp, ignore=shutil.ignore_patterns(".*"))
        if dst.exists():
            shutil.rmtree(dst)
        tmp.rename(dst)
    _remove_if_empty(out / WORK)
    return write_tables(out), notes


def table(recs: list[dict], width: int = 100) -> str:
    """The final plain-text table: student, score, status, reason."""
    if not recs:
        return "no students graded"
    rows = [
        (r["student"], f"{r['total']:g}/{r['max_total']:g}", r["status"], r["reason"])
        for r in recs
    ]
    w = [
        max(len(x[i]) for x in [("student", "score", "status", ""), *rows])
        for i in range(3)
    ]
    lines = [
        f"{'student'.ljust(w[0])}  {'score'.ljust(w[1])}  {'status'.ljust(w[2])}  reason"
    ]
    room = max(20, width - sum(w) - 8)
    for s, p, st, why in rows:
        why = why if len(why) <= room else why[: room - 1] + "…"
        lines.append(f"{s.ljust(w[0])}  {p.ljust(w[1])}  {st.ljust(w[2])}  {why}")
    return "\n".join(lines)


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


def remove_work(out: Path, run_folder: Path) -> None:
    """Delete this run's scratch folder (and ``.work`` itself when nothing else is in it)."""
    shutil.rmtree(run_folder, ignore_errors=True)
    _remove_if_empty(out / WORK)
