"""Adjustments to graded records: the late policy and manual grades, kept across reruns.

Both are stored in the report folder (``DIR/_instructor/.policy.json`` and
``DIR/_instructor/.manual.csv``: a dot name is never a student's folder) and
applied after every grading run, regrade or import to every record, so a
student graded again keeps them. A record's total is always recomputed from
its tests: ``points = tests + manual points``, then the late penalty
(``--penalty-per-day`` percent of it per day or part of a day late; zero past
``--cutoff`` days), so applying twice changes nothing. The student's
``feedback.ipynb`` (score line and an *Adjustments* cell), ``results.json``
and the reason in ``grades.csv`` show them; the record is sealed again.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
from pathlib import Path

from course_utils._files import write_atomic
from course_utils.errors import CourseError
from course_utils.grading.inputs.names import shown
from course_utils.grading.policy import late
from course_utils.grading.records import store

POLICY = ".policy.json"
MANUAL = ".manual.csv"
# each student's submission (sha256) when the --times manifest was given: a later one
# is a resubmission the manifest does not time
TIMED = ".times-submissions.json"
MARK = "adjustments"  # the feedback cell's metadata key
FUTURE = "future submission time"  # the flag of a submission time ahead of the clock


def _private(out: Path) -> Path:
    return out / store.INSTRUCTOR


def read_manual(path: Path, blank: list[str] | None = None) -> dict[str, list[dict]]:
    """student -> rows of the manual grading CSV (student, item, points, max_points,
    comment). A row whose points are blank scores 0 (an unanswered question's row), is
    marked ``blank`` and named in ``blank`` (``student: item``)."""
    try:
        reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig")))
    except (OSError, UnicodeDecodeError) as err:
        raise CourseError(f"manual grades {path}: cannot read it: {err}") from None
    heads = {(h or "").strip().lower() for h in reader.fieldnames or []}
    if not {"student", "points"} <= heads:
        raise CourseError(f"manual grades {path}: needs columns student and points")
    table: dict[str, list[dict]] = {}
    for n, raw in enumerate(reader, start=2):
        row = {(k or "").strip().lower(): (v or "").strip() for k, v in raw.items()}
        if not row["points"] and blank is not None and row["student"]:
            blank.append(f"{row['student']}: {row.get('item', '')}")
        try:
            points = float(row["points"] or 0)
            top = float(row.get("max_points") or 0)
        except ValueError:
            raise CourseError(
                f"manual grades {path}: line {n}: points must be numbers"
            ) from None
        item = {"item": row.get("item", ""), "points": points, "max_points": top,
                "comment": row.get("comment", "")}  # fmt: skip
        if not row["points"]:
            item["blank"] = True
        table.setdefault(row["student"], []).append(item)
    return table


HEADS = ("student", "item", "points", "max_points", "comment")


def merged(old: dict[str, list[dict]], new: dict[str, list[dict]]) -> dict:
    """``old``'s rows with ``new``'s: a row of the same student and item replaces the
    old one (unless its points are blank and the old one's are not), the others are
    added."""
    table = {s: {m["item"]: m for m in rows} for s, rows in old.items()}
    for student, rows in new.items():
        mine = table.setdefault(student, {})
        for m in rows:
            had = mine.get(m["item"])
            if not (m.get("blank") and had is not None and not had.get("blank")):
                mine[m["item"]] = m
    return {s: list(rows.values()) for s, rows in table.items()}


def _write_manual(path: Path, table: dict[str, list[dict]]) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(HEADS)
    for student, rows in sorted(table.items()):
        for m in rows:
            points = "" if m.get("blank") else f"{m['points']:g}"
            writer.writerow([student, m["item"], points, f"{m['max_points']:g}",
                             m["comment"]])  # fmt: skip
    write_atomic(path, buf.getvalue())


def import_manual(out: Path, table: Path) -> int:
    """``course grade manual DIR FILE``: merge the table into the one kept in ``DIR``
    (a row of the same student and item replaces the kept one; blank points are not
    graded yet, and counted), and apply it."""
    blank: list[str] = []
    rows = read_manual(table, blank)
    kept = _private(out) / MANUAL
    before = read_manual(kept) if kept.is_file() else {}
    whole = merged(before, rows)
    _write_manual(kept, whole)
    known = {r["student"] for r in store.records(out)}
    strangers = sorted(set(rows) - known)
    still = {
        f"{s}: {m['item']}" for s, ms in whole.items() for m in ms if m.get("blank")
    }
    kept_points = [b for b in blank if b not in still]  # a former import's points stay
    blank = [b for b in blank if b in still]
    if blank:
        shown_blank = ", ".join(blank[:5]) + (", …" if len(blank) > 5 else "")
        print(
            f"note: {len(blank)} row(s) with blank points ({shown_blank}) count 0 "
            "until a later import gives them points"
        )
    if kept_points:
        print(
            f"note: {len(kept_points)} row(s) with blank points kept the points a "
            "former import gave"
        )
    changed = apply_all(out)
    n, had = (sum(map(len, t.values())) for t in (rows, before))
    now = sum(len(v) for v in whole.values())
    how = f"merged with the {had} kept before, {now} now, in" if had else "kept in"
    print(
        f"manual grades of {len(rows)} student(s): {n} row(s) {how} {out}; "
        f"{changed} record(s) updated"
    )
    if strangers:
        print(f"error: {_strangers(out, table, rows, strangers, known)}")
        return 1
    return 0


def _strangers(
    out: Path, table: Path, rows: dict[str, list[dict]], strangers: list[str],
    known: set[str],
) -> str:  # fmt: skip
    """The error line for the table's rows that name no graded student (kept: they
    count once a student of that id is graded), with the ids to write instead when
    they are an LMS download's names of graded students."""
    from course_utils.grading.inputs.submissions import LMS_NAMES, lms_student

    n = sum(len(rows[s]) for s in strangers)
    named = ", ".join(shown(s) for s in strangers[:3])
    named += f" and {len(strangers) - 3} more" if len(strangers) > 3 else ""
    line = (
        f"manual grades {table}: {n} row(s) name no graded student in {out} "
        f"({named}): their points count for no one (kept, for a student of that id "
        "graded later)"
    )
    noted, graded_with = store.lms_used(out)
    for lms in [graded_with] if noted and graded_with else list(LMS_NAMES):
        ids = [lms_student(s.removesuffix(".ipynb"), lms) for s in strangers]
        found = [i for i in ids if i in known]
        if found:
            return (
                f"{line}; they are {lms.capitalize()} download names: write the "
                f"students' ids ({', '.join(map(shown, found))}) in the student column "
                f"and import it again (course grade answers gives them with --lms {lms})"
            )
    return f"{line}; correct their student column and import it again"


def after_grade(out: Path, args: argparse.Namespace) -> None:
    """After grading: store the late policy given on the command line, apply what is stored."""
    Adjuster(out, args).finish()


# The late policy's numbers a rerun keeps when it leaves them out: (argument, key, flag).
KEPT_NUMBERS = (
    ("penalty_per_day", "penalty_per_day", "--penalty-per-day"),
    ("grace", "grace_minutes", "--grace"),
)


class Adjuster:
    """The late policy and manual grades of a grading run or regrade.

    The grader calls it on each record as it stores it (``record, files -> record,
    files``), so a record is never stored without them, even when the run is stopped
    (Ctrl-C, SIGTERM, a kill) before :meth:`finish`, which stores the policy the
    command line gave and applies both to every record. The policy given is read
    before the run, with the stored ones (a bad ``--times`` stops it before anyone is
    graded); the policy given is stored when the first record is."""

    def __init__(self, out: Path, args: argparse.Namespace, echo=print):
        self.out = out
        self.policy, self.manual = _stored(out)
        some = any(getattr(args, n, None) is not None for n in late.OPTIONS)
        if self.policy and some and not getattr(args, "deadline", None):
            args = argparse.Namespace(
                **vars(args) | {"deadline": self.policy["deadline"]}
            )
            echo(
                f"note: late policy: kept --deadline {self.policy['deadline']} given before"
            )
        self.given = late.policy_from_args(args)
        self.times_given = getattr(args, "times", None) is not None
        # the records as they were: a record stored with another late penalty or other
        # manual points than before notes the change (regrades.csv)
        self.before = {r["student"]: r for r in store.records(out)}
        self.changes: list[tuple[str, dict]] = []
        kept = (self.policy or {}).get("times")
        if self.given is not None and getattr(args, "times", None) is None and kept:
            self.given["times"] = kept  # the manifest given before: replaced by --times
            echo(
                f"note: late policy: kept the {len(kept)} submission time(s) of the "
                f"--times manifest given before (a new --times FILE replaces them)"
            )
        kept = (self.policy or {}).get("extensions")
        forgot = getattr(args, "extensions", None) is None
        if self.given is not None and forgot and kept:
            self.given["extensions"] = kept  # as given before: replaced by --extensions
            echo(
                f"note: late policy: kept the {len(kept)} extension(s) of the "
                "--extensions file given before (days added move with --deadline, a "
                "date stays; a new --extensions FILE replaces them, an empty one clears "
                "them)"
            )
        for name, key, flag in KEPT_NUMBERS:  # left out on a rerun: as given before
            value = (self.policy or {}).get(key)
            if self.given is not None and getattr(args, name, None) is None and value:
                self.given[key] = value
                echo(
                    f"note: late policy: kept {flag} {value:g} given before ({flag} 0 clears it)"
                )
        if self.given is not None:
            self.policy = self.given
        self.started = False  # a record was stored with them
        self.by_file: list[str] = []
        # students with several submissions: their last grade is kept as it was (the
        # grader adds them), not given the late time of the new submission
        self.keep: set[str] = set()

    def _store_given(self) -> None:
        if self.given is not None:
            text = json.dumps(self.given, indent=1) + "\n"
            write_atomic(_private(self.out) / POLICY, text)

    def __call__(self, rec: dict, files: dict) -> tuple[dict, dict]:
        if not self.started:
            self.started = True
            self._store_given()
        if self.policy is None and not self.manual:
            return rec, files
        manual = self.manual.get(rec["student"], [])
        rec = adjusted(rec, self.policy, manual, self.by_file)
        rec = _noted(self.before.get(rec["student"]), rec, self.changes)
        return rec, adjusted_files(rec, files)

    def __enter__(self) -> Adjuster:
        return self

    def __exit__(self, kind, err, tb) -> None:
        """Around the run: :meth:`finish` when it ends, or stops after storing a record."""
        if kind is None or self.started:
            self.finish()

    def finish(self, echo=print) -> None:
        """Store the policy given and apply what is stored to every record."""
        if not self.out.is_dir():
            return
        self._store_given()
        private = _private(self.out)
        if self.times_given:
            _store_timed(self.out, (self.given or {}).get("times", {}))
        for student, change in self.changes:
            echo(_changed_line(student, change))
        if (private / POLICY).is_file() or (private / MANUAL).is_file():
            apply_all(self.out, echo=echo, keep=self.keep)


def _stored(out: Path) -> tuple[dict | None, dict[str, list[dict]]]:
    """The policy and manual grades kept in the report folder."""
    policy_file, manual_file = _private(out) / POLICY, _private(out) / MANUAL
    policy = json.loads(policy_file.read_text()) if policy_file.is_file() else None
    return policy, read_manual(manual_file) if manual_file.is_file() else {}


def _store_timed(out: Path, times: dict) -> None:
    """Note each timed student's submission as the --times manifest is given."""
    timed = {
        r["student"]: r.get("submission_sha256")
        for r in store.records(out)
        if r["student"] in times
    }
    write_atomic(_private(out) / TIMED, json.dumps(timed, indent=1) + "\n")


def _resubmitted_since_times(
    out: Path, policy: dict | None, recs: list[dict]
) -> list[str]:
    """Students timed by the manifest whose submission changed since it was given."""
    path = _private(out) / TIMED
    if not policy or not policy.get("times") or not path.is_file():
        return []
    timed = json.loads(path.read_text())
    return [
        shown(r["student"])
        for r in recs
        if r["student"] in policy["times"]
        and timed.get(r["student"]) not in (None, r.get("submission_sha256"))
    ]


def _parts(rec: dict) -> tuple[float, float]:
    """A record's late penalty and manual points."""
    return (
        (rec.get("late") or {}).get("penalty", 0.0),
        (rec.get("manual") or {}).get("points", 0.0),
    )


def _noted(old: dict | None, new: dict, changes: list[tuple[str, dict]]) -> dict:
    """``new`` with a regrades entry when its late penalty or manual points differ from
    ``old``'s (the student's record before): ``what`` says which, ``old`` and ``new``
    are the totals after them, ``old_total`` and ``new_total`` before them."""
    if old is None or old.get("status") == "error":  # an error had no score
        return new
    (pen0, man0), (pen1, man1) = _parts(old), _parts(new)
    what = ", ".join(
        name
        for name, a, b in (("late penalty", pen0, pen1), ("manual points", man0, man1))
        if a != b
    )
    if not what:
        return new
    at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    change = {"at": at, "what": what, "old": old["total"], "new": new["total"],
              "old_total": sum(t["points"] for t in old.get("tests", [])),
              "new_total": sum(t["points"] for t in new.get("tests", []))}  # fmt: skip
    changes.append((new["student"], change))
    return new | {"regrades": list(new.get("regrades", [])) + [change]}


def _changed_line(student: str, change: dict) -> str:
    return f"changed: {shown(student)}: {change['old']:g} -> {change['new']:g} ({change['what']})"


def apply_all(out: Path, echo=print, keep: set[str] | frozenset = frozenset()) -> int:
    """Apply the stored policy and manual grades to every record but those of the
    students in ``keep``; returns how many records' points (total or maximum) changed.
    A changed late penalty or manual points is noted in the record (regrades.csv)."""
    policy, manual = _stored(out)
    changed = 0
    by_file: list[str] = []
    future: list[str] = []
    changes: list[tuple[str, dict]] = []
    recs = store.records(out)
    for rec in recs:
        if rec["student"] in keep:
            continue
        new = adjusted(rec, policy, manual.get(rec["student"], []), by_file)
        new = _noted(rec, new, changes)
        if (new.get("late") or {}).get("future"):
            future.append(shown(rec["student"]))
        if new != rec:
            _save(out, new)
        if (new["total"], new["max_total"]) != (rec["total"], rec["max_total"]):
            changed += 1  # its points
    for student, change in changes:
        echo(_changed_line(student, change))
    again = _resubmitted_since_times(out, policy, recs)
    if again:
        echo(
            f"warning: late policy: {len(again)} student(s) ({', '.join(again)}) "
            "submitted again after the --times manifest was given, which still times "
            "them: give --times again with their new submission times"
        )
    if changes or (out / store.REGRADES).exists():
        store.write_regrades(out)
    if by_file:
        echo(f"warning: {late.file_time_warning(by_file)}")
    if future:
        echo(
            f"warning: late policy: the submission time of {len(future)} student(s) "
            f"({', '.join(future)}) is in the future: no penalty was taken; check "
            "--times (flag 'future submission time')"
        )
    store.write_tables(out)
    return changed


def adjusted(
    rec: dict, policy: dict | None, manual: list[dict], by_file: list[str]
) -> dict:
    """The record with its manual points and late penalty (from its tests, so idempotent)."""
    rec = dict(rec)
    base_reason = rec.get("auto_reason", rec["reason"])
    if rec.get("reason") != rec.get("adjusted_reason"):
        base_reason = rec["reason"]  # graded again since: its own reason
    points = sum(t["points"] for t in rec["tests"])
    extra = sum(m["points"] for m in manual)
    rec["manual"] = {"points": extra, "items": manual} if manual else None
    rec["max_total"] = rec.get("auto_max_total", rec["max_total"])
    rec["auto_max_total"] = rec["max_total"]
    rec["max_total"] += sum(m["max_points"] for m in manual)
    info = late.lateness(rec, policy, by_file) if policy else None
    total = points + extra
    if info:
        info["penalty"] = round(min(total, total * info["fraction"]), 3)
        total -= info["penalty"]
    rec["late"] = info
    rec["total"] = max(0.0, total)
    flags = [f for f in rec.get("flags", []) if f != FUTURE]
    rec["flags"] = flags + ([FUTURE] if info and info.get("future") else [])
    parts = [base_reason] + ([f"manual {extra:+g}"] if manual else [])
    parts += (
        [f"late: {info['why']}, -{info['penalty']:g}"]
        if info and info["penalty"]
        else []
    )
    rec["auto_reason"], rec["reason"] = base_reason, "; ".join(parts)
    rec["adjusted_reason"] = rec["reason"]
    return rec


def _lines(rec: dict) -> list[str]:
    lines = []
    for m in (rec.get("manual") or {}).get("items", []):
        top = f" / {m['max_points']:g}" if m["max_points"] else ""
        lines.append(f"- **{m['item'] or 'graded by hand'}**: {m['points']:g}{top}"
                     + (f" — {m['comment']}" if m["comment"] else ""))  # fmt: skip
    info = rec.get("late")
    if info:
        lines.append(f"- **late policy**: submitted {info['submitted_at']} ({info['source']}), "
                     f"deadline {info['deadline']}: {info['why']}; -{info['penalty']:g} points")  # fmt: skip
    return lines


def _save(out: Path, rec: dict) -> None:
    """Rewrite the student's feedback and results with the adjustments, then reseal."""
    files = {}
    for name in rec.get("files", {}):
        files[name] = store.file_path(out, rec["student"], name).read_bytes()
    store.save_student(
        out,
        {k: v for k, v in rec.items() if k not in ("seal", "files")},
        adjusted_files(rec, files),
    )


def adjusted_files(rec: dict, files: dict) -> dict:
    """The student's report files (by name) with the adjusted record's score: the
    feedback's score line and *Adjustments* cell, and ``results.json``'s score."""
    files = dict(files)
    lines = _lines(rec)
    if "feedback.ipynb" in files:
        files["feedback.ipynb"] = _feedback(
            json.loads(files["feedback.ipynb"]), rec, lines
        )
        if "feedback.html" in files:
            from course_utils.grading.policy.feedback import html_page

            files["feedback.html"] = html_page(files["feedback.ipynb"])
    if "results.json" in files:
        results = json.loads(files["results.json"])
        results["score"] = rec["total"]
        results["output"] = f"Status: {rec['status']} — {rec['reason']}"
        files["results.json"] = json.dumps(results, indent=1, ensure_ascii=False) + "\n"
    return files


def _feedback(nb: dict, rec: dict, lines: list[str]) -> str:
    head = nb["cells"][0]
    text = "".join(head["source"]).split("\n")
    for i, line in enumerate(text):
        if line.startswith("**Score:**"):
            text[i] = f"**Score:** {rec['total']:g} / {rec['max_total']:g}  "
        if line.startswith("**Status:**"):
            text[i] = f"**Status:** {rec['status']} — {shown(rec['reason'])}"
    head["source"] = "\n".join(text)
    cells = [c for c in nb["cells"] if MARK not in c.get("metadata", {})]
    if lines:
        cells.insert(1, {"cell_type": "markdown", "id": "adjustments", "metadata": {MARK: True},
                         "source": "## Adjustments\n\n" + "\n".join(lines)})  # fmt: skip
    nb["cells"] = cells
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def merge(inputs: list[Path], out: Path, echo=print) -> tuple[list[dict], list[str]]:
    """``course grade merge``: the shards' records (:func:`.store.merge`) with the late
    policy and manual grades their totals come from, kept in ``out`` for later runs and
    imports. Shards (or an ``out`` that keeps them already) with different policies, or
    different manual points for one student and item, are refused before anything is
    written: a later run would give some students another policy's penalty."""
    folders = list(inputs)
    if any((_private(out) / name).is_file() for name in (POLICY, MANUAL)):
        folders.append(out)
    policies = {folder: _stored(folder)[0] for folder in folders}
    first = folders[0] if folders else out
    for folder, policy in policies.items():
        if policy != policies[first]:
            differ = _differ(policies[first], policy)
            raise CourseError(
                f"grade merge: {first} and {folder} were graded with different late "
                f"policies ({differ}): run each shard's command again with the same "
                "--deadline, --penalty-per-day, --cutoff, --grace, --extensions and "
                "--times (nothing is graded again), then merge"
            )
    manual: dict[str, dict[str, dict]] = {}
    for folder in folders:
        for student, rows in _stored(folder)[1].items():
            for m in rows:
                had = manual.setdefault(student, {}).setdefault(m["item"], m)
                if had != m:
                    raise CourseError(
                        f"grade merge: {folder} keeps other manual points for "
                        f"{student!r}, item {m['item']!r}, than another folder: import "
                        "the same manual table into each, then merge"
                    )
    recs, notes = store.merge(inputs, out)
    policy = policies.get(first)
    if policy is not None:
        write_atomic(_private(out) / POLICY, json.dumps(policy, indent=1) + "\n")
    if manual:
        table = {student: list(rows.values()) for student, rows in manual.items()}
        _write_manual(_private(out) / MANUAL, table)
    if policy is not None or manual:
        apply_all(out, echo)
        recs = store.records(out)
    return recs, notes


def _differ(a: dict | None, b: dict | None) -> str:
    """What differs between two stored policies, in words."""
    if a is None or b is None:
        return "one has none"
    keys = sorted(k for k in {*a, *b} if a.get(k) != b.get(k))
    return "their " + ", ".join(k.replace("_", " ") for k in keys) + " differ"
