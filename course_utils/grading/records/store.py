"""The report folder: one sub-folder per student, the class tables, and shard merging.

``DIR/<folder>/grade.json`` is written last, atomically, once the student's
other files are in place: it is the mark that the student is graded. It is
sealed with the report folder's key (:mod:`.keyed`) and names the hashes of
the student's other files, so a record that anyone else wrote or edited, or
whose files changed, is not believed: it is left out of the tables and the
student is graded again. The class tables ``grades.csv`` and ``grades.json``
are rebuilt from the sealed records after every student, so they never
disagree with the folders and a run that was killed loses nothing already
graded. Folder names come from :func:`.names.folder_name`, never from a record.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from course_utils._files import write_atomic
from course_utils.errors import CourseError
from course_utils.grading.inputs.ipynb import SubmissionError, read_file
from course_utils.grading.inputs.names import csv_cell, folder_name, shown, utf8
from course_utils.grading.records import keyed

RECORD = "grade.json"
WORK = ".work"
# the hidden tests' source and outputs, feedback the grader could not redact, its own errors
UNSEALED = "grade.unsealed.json"  # a record the grader could not seal (never believed)
PRIVATE = ("executed.ipynb", "feedback-unredacted.ipynb", "grader-errors.txt", UNSEALED)
FILES = ("results.json", "feedback.ipynb", "feedback.html", *PRIVATE)  # the others
INSTRUCTOR = "_instructor"  # DIR/_instructor/<folder>/: files a student must never get
MAX_FILE = 200 * 2**20  # bytes of one report file copied by merge


def student_dir(out: Path, student: str) -> Path:
    return out / folder_name(student)


def file_path(out: Path, student: str, name: str) -> Path:
    """Where a student's report file lives: instructor-only ones outside the student's folder."""
    if name in PRIVATE:
        return out / INSTRUCTOR / folder_name(student) / name
    return student_dir(out, student) / name


def _clear(path: Path) -> None:
    """Remove whatever is at ``path`` (a link is removed, not followed)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(path)
    else:
        path.unlink()


def _own_folder(folder: Path) -> None:
    """``folder`` as a real folder (not a link or a file someone put in its place)."""
    try:
        if stat.S_ISDIR(os.lstat(folder).st_mode):
            return
    except FileNotFoundError:
        pass
    _clear(folder)
    folder.mkdir(parents=True)


def save_student(
    out: Path,
    record: dict,
    files: dict[str, str | bytes],
    on_error: Callable[[str, Exception], None] | None = None,
) -> dict:
    """Write the student's files, then their sealed ``grade.json`` (the commit mark).

    With ``on_error``, a file that cannot be written is left out (its older version
    removed) and ``on_error(name, error)`` called before the record is sealed, so
    the record can say so; without it, the error is raised.
    """
    secret = keyed.key(out)
    student = record["student"]
    folder = student_dir(out, student)
    _own_folder(folder)
    hashes = {}
    for name, text in files.items():
        try:
            data = text if isinstance(text, bytes) else utf8(text).encode("utf-8")
            path = file_path(out, student, name)
            if name in PRIVATE:
                _own_folder(out / INSTRUCTOR)
                _own_folder(path.parent)
            write_atomic(path, data)
        except Exception as err:
            if on_error is None:
                raise
            on_error(name, err)
            continue
        hashes[name] = hashlib.sha256(data).hexdigest()
    for name in set(FILES) - set(hashes):  # a file of an earlier grade
        _clear(file_path(out, student, name))
    for name in PRIVATE:  # where a grader before this one wrote it
        _clear(folder / name)
    rec = keyed.seal(dict(record, files=hashes), secret)
    write_atomic(folder / RECORD, json.dumps(rec, indent=1, ensure_ascii=False) + "\n")
    return rec


def load_record(
    folder: Path, secret: bytes | None, notes: list[str] | None = None
) -> dict | None:
    """The sealed record in ``folder``; None (and a note why) for a missing or untrusted one."""
    path = folder / RECORD
    if not os.path.lexists(path):
        return None
    try:
        rec = keyed.read(path)
        why = keyed.problem(rec, folder.name) or (
            None
            if secret and keyed.sealed(rec, secret)
            else "not sealed by this grader"
        )
    except ValueError as err:
        why = str(err)
    if why is None:
        return rec
    if notes is not None:
        notes.append(f"{shown(folder.name)}/{RECORD} ignored: {why}")
    return None


def _scan(out: Path, secret: bytes | None, notes: list[str] | None) -> list:
    """(record, folder) for every trusted record in ``out``, by folder name."""
    if not out.is_dir():
        return []
    found = []
    with os.scandir(out) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        if entry.name.startswith(".") or entry.name == INSTRUCTOR:
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        rec = load_record(Path(entry.path), secret, notes)
        if rec is not None:
            found.append((rec, Path(entry.path)))
    return found


def records(out: Path, notes: list[str] | None = None) -> list[dict]:
    """Every graded student's trusted record in ``out``; ``notes`` gets why others were not."""
    secret = keyed.key(out, create=False) if out.is_dir() else None
    return [rec for rec, _ in _scan(out, secret, notes)]


REGRADES = "regrades.csv"  # every score change, from the records
TABLES = ("grades.csv", "grades.json", REGRADES, "class-report")


MASTERS = ".masters.json"  # DIR/_instructor/: each master's sha256 -> its path


def remember_master(out: Path, path: Path, sha256: str) -> None:
    """Note where the master of this sha256 was read from (the records name it by
    file name only: they are handed back), so a later run graded with another can
    say which file replaced which."""
    known = masters_used(out)
    if known.get(sha256) == str(path):
        return
    text = json.dumps(known | {sha256: str(path)}, indent=1, sort_keys=True)
    try:  # a note for a later run's line: never worth a failed run
        _own_folder(out / INSTRUCTOR)
        write_atomic(out / INSTRUCTOR / MASTERS, text + "\n")
    except OSError:
        pass


def masters_used(out: Path) -> dict[str, str]:
    """sha256 -> path of each master this report folder was graded with (as noted by
    :func:`remember_master`; empty for a folder graded before it was kept)."""
    try:
        known = json.loads(read_file(out / INSTRUCTOR / MASTERS))
    except (SubmissionError, ValueError, OSError):
        return {}
    if not isinstance(known, dict):
        return {}
    return {k: v for k, v in known.items() if isinstance(v, str)}


LMS = ".lms.json"  # DIR/_instructor/: the --lms its student ids were read with


def remember_lms(out: Path, lms: str | None) -> None:
    """Note the ``--lms`` (or none) this report folder's student ids were read with."""
    if lms_used(out) == (True, lms):
        return
    _own_folder(out / INSTRUCTOR)
    write_atomic(out / INSTRUCTOR / LMS, json.dumps({"lms": lms}) + "\n")


def lms_used(out: Path) -> tuple[bool, str | None]:
    """(noted, the ``--lms`` or None) as :func:`remember_lms` noted it; not noted for
    a folder graded before it was kept."""
    try:
        known = json.loads(read_file(out / INSTRUCTOR / LMS))
    except (SubmissionError, ValueError, OSError):
        return False, None
    lms = known.get("lms") if isinstance(known, dict) else None
    return isinstance(known, dict) and (lms is None or isinstance(lms, str)), lms


def clear_grades(out: Path) -> int:
    """Delete every student's grade in ``out`` (their folders, the instructor's files,
    the tables), keeping the folder's key; returns how many students were removed. Other
    files in ``out`` are not the grader's and stay."""
    removed = 0
    for entry in sorted(out.iterdir()) if out.is_dir() else []:
        if entry.name in TABLES or entry.name == INSTRUCTOR:
            _clear(entry)
        elif (
            not entry.name.startswith(".") and entry.is_dir() and not entry.is_symlink()
        ):
            if os.path.lexists(entry / RECORD):
                _clear(entry)
                removed += 1
    return removed


def _files_intact(out: Path, rec: dict) -> bool:
    files = rec.get("files")
    return isinstance(files, dict) and all(
        keyed.file_hash(file_path(out, rec["student"], name)) == sha
        for name, sha in files.items()
    )


def already_graded(
    out: Path,
    student: str,
    submission_sha: str | None,
    master_sha: str,
    options: dict | None = None,
    keys: dict | None = None,
) -> bool:
    """A sealed record of the same submission, master and options, its files untouched.

    With the master's ``keys`` (:meth:`.Master.exercise_keys`, options included), a
    record whose every exercise has its key counts although the master changed
    elsewhere (a record regraded with ``--only`` after a test fix).
    """
    folder = student_dir(out, student)
    try:
        secret = keyed.key(out, create=False)
    except OSError:
        return False
    rec = load_record(folder, secret)
    return bool(
        rec
        and rec["student"] == student
        and rec.get("status") != "error"
        and not rec.get("errors")  # the grader failed on part of it: graded again
        and submission_sha is not None
        and rec.get("submission_sha256") == submission_sha
        and (
            rec.get("master_sha256") == master_sha
            or (keys is not None and rec.get("exercise_keys") == keys)
        )
        and rec.get("options") == json.loads(json.dumps(options))
        and _files_intact(out, rec)
    )


def _exercise_columns(recs: list[dict]) -> list[str]:
    cols: list[str] = []
    for rec in recs:
        for ex in rec.get("exercises", {}):
            if ex not in cols:
                cols.append(ex)
    return cols


def _adjustment(value, keep_zero: bool = False) -> str:
    """A late penalty (blank when none) or manual points (blank without any row)."""
    if not isinstance(value, int | float) or (not value and not keep_zero):
        return ""
    return f"{value:g}"


def write_tables(
    out: Path, notes: list[str] | None = None, extra: dict[str, dict] | None = None
) -> list[dict]:
    """Rebuild ``grades.csv`` and ``grades.json`` from the students' trusted records.

    ``extra``: this run's records that could not be stored (by student), listed in
    place of any older record of theirs, with their points and errors.
    """
    recs = records(out, notes)
    if extra:
        recs = [r for r in recs if r["student"] not in extra] + list(extra.values())
        recs.sort(key=lambda r: folder_name(r["student"]))
    cols = _exercise_columns(recs)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    fixed = ["total", "max_total", "status", "reason", "flags", "seconds"]
    fixed += ["late_penalty", "manual_points"]  # in the total: what the policy moved
    heads = [f"exercise:{c}" if c in fixed or c == "student" else c for c in cols]
    writer.writerow([csv_cell(h) for h in ["student", *heads, *fixed]])
    for r in recs:
        exs = r.get("exercises", {})
        row = [
            r["student"],
            *(f"{exs[c]['points']:g}" if c in exs else "" for c in cols),
            f"{r['total']:g}",
            f"{r['max_total']:g}",
            r["status"],
            r["reason"],
            " ".join(f.replace(" ", "_") for f in r.get("flags", [])),
            r.get("seconds", ""),
            _adjustment((r.get("late") or {}).get("penalty")),
            _adjustment((r.get("manual") or {}).get("points"), keep_zero=True),
        ]
        writer.writerow([csv_cell(x) for x in row])
    write_atomic(out / "grades.csv", buf.getvalue())
    keys = ("student", "total", "max_total", "status", "reason", "flags", "notes")
    summary = [
        {k: r.get(k) for k in (*keys, "seconds", "graded_at")}
        | {"errors": list(r.get("errors", []))}
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


def write_regrades(out: Path) -> list[list[str]]:
    """Rebuild ``DIR/regrades.csv`` from the records' ``regrades`` (every change of a
    student's score, whichever run made it); returns its rows."""
    rows = [
        [r["student"], c["at"], c["what"], f"{c['old']:g}", f"{c['new']:g}",
         f"{c['old_total']:g}", f"{c['new_total']:g}"]
        for r in records(out)
        for c in r.get("regrades", [])
    ]  # fmt: skip
    rows.sort(key=lambda row: (row[1], row[0]))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["student", "at", "what", "old", "new", "old_total", "new_total"])
    writer.writerows([csv_cell(x) for x in row] for row in rows)
    write_atomic(out / REGRADES, buf.getvalue())
    return rows


def _copy_checked(src: Path, dst: Path, sha: str) -> bool:
    """Copy a regular file (not through a link) when its bytes still have hash ``sha``."""
    try:
        data = read_file(src, MAX_FILE)
    except SubmissionError:
        return False
    if hashlib.sha256(data).hexdigest() != sha:
        return False
    write_atomic(dst, data)
    return True


def _copy_merged(
    shard: Path, out: Path, tmp: Path, student: str, name: str, sha: str
) -> bool:
    """Copy one report file of a shard's student: instructor-only ones to their own place."""
    src = file_path(shard, student, name)
    if name not in PRIVATE:
        return _copy_checked(src, tmp / name, sha)
    _own_folder(out / INSTRUCTOR)
    _own_folder(file_path(out, student, name).parent)
    return _copy_checked(src, file_path(out, student, name), sha)


def _choose(inputs: list[Path], notes: list[str]) -> dict[str, tuple[dict, Path]]:
    """The record to keep for each student (the newest), and the folder it is in."""
    chosen: dict[str, tuple[dict, Path]] = {}
    for shard in inputs:
        if not shard.is_dir():
            raise CourseError(f"grade merge: {shard} is not a folder")
        found = _scan(shard, keyed.key(shard, create=False), notes)
        if not found:
            notes.append(f"{shard}: no graded students")
        for rec, folder in found:
            prev = chosen.get(rec["student"])
            if prev is not None:
                keep_new = str(rec.get("graded_at", "")) > str(
                    prev[0].get("graded_at", "")
                )
                notes.append(
                    f"student {rec['student']!r} is in {prev[1].parent} and {shard}; "
                    f"kept the newer grade from {shard if keep_new else prev[1].parent}"
                )
                if not keep_new:
                    continue
            chosen[rec["student"]] = (rec, folder)
    return chosen


def merge(inputs: list[Path], out: Path) -> tuple[list[dict], list[str]]:
    """Join shard report folders into ``out``; a student graded twice keeps the newest grade.

    Only records sealed by their shard's key are taken (re-sealed with ``out``'s),
    with the files whose hashes they name; everything is written and removed
    under ``out`` only, in folders named by :func:`.names.folder_name`.
    """
    notes: list[str] = []
    chosen = _choose(inputs, notes)
    try:
        out.mkdir(parents=True, exist_ok=True)
        secret = keyed.key(out)
    except OSError as err:
        raise CourseError(
            f"--out {out}: cannot create it: {err.strerror or err}"
        ) from None
    for student, (rec, src) in sorted(chosen.items()):
        dst = student_dir(out, student)
        if src.resolve() == dst.resolve():
            continue
        tmp = out / WORK / f"merge-{folder_name(student)}"
        _clear(tmp)
        tmp.mkdir(parents=True)
        files = {
            name: sha
            for name, sha in rec.get("files", {}).items()
            if name in FILES and _copy_merged(src.parent, out, tmp, student, name, sha)
        }
        if files != rec.get("files", {}):
            notes.append(f"student {student!r}: changed report files were not copied")
        merged = keyed.seal(dict(rec, files=files), secret)
        write_atomic(
            tmp / RECORD, json.dumps(merged, indent=1, ensure_ascii=False) + "\n"
        )
        _clear(dst)
        tmp.rename(dst)
    _remove_if_empty(out / WORK)
    for folder in inputs:  # which master file graded them, for a later run's line
        for sha, path in masters_used(folder).items():
            remember_master(out, Path(path), sha)
        noted, lms = lms_used(folder)
        if noted:
            remember_lms(out, lms)
    return write_tables(out, notes), notes


def table(recs: list[dict], width: int = 100) -> str:
    """The final plain-text table: student, score, status, reason."""
    if not recs:
        return "no students graded"
    rows = [
        (
            shown(r["student"]),
            f"{r['total']:g}/{r['max_total']:g}",
            shown(r["status"]),
            shown(r["reason"]),
        )
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


def totals(recs: list[dict]) -> str:
    """The class in one line: how many, the mean and its range, each status, and the
    points the late policy took."""
    if not recs:
        return "class: no students graded"
    scores = [r["total"] for r in recs]
    tops = {r["max_total"] for r in recs}
    top = f"/{max(tops):g}" if len(tops) == 1 else ""
    statuses: dict[str, int] = {}
    for r in recs:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    parts = [
        f"class: {len(recs)} student(s)",
        f"mean {sum(scores) / len(scores):.3g}{top}",
        f"lowest {min(scores):g}, highest {max(scores):g}",
        ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())),
    ]
    late = [r for r in recs if (r.get("late") or {}).get("penalty")]
    if late:
        taken = sum(r["late"]["penalty"] for r in late)
        parts.append(f"late penalty on {len(late)} ({taken:g} points in all)")
    return "; ".join(parts)


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


def remove_work(out: Path, run_folder: Path) -> None:
    """Delete this run's scratch folder (and ``.work`` itself when nothing else is in it)."""
    shutil.rmtree(run_folder, ignore_errors=True)
    _remove_if_empty(out / WORK)
