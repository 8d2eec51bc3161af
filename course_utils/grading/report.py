"""Scores and reports: one student's record from the kernel's replies, and the files.

A test cell scores its points only when the kernel replied ``ok`` to it; the
submission's own outputs and metadata are never read for scoring. What a
student sees (feedback notebook, Gradescope ``results.json``) never holds a
hidden test's source or output: hidden tests show a name, points and a
one-line message, and every shown text has the hidden tests' lines removed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from course_utils.grading.load import Master, Matched

HIDDEN_MARK = "[hidden test line removed]"
SUSPICIOUS = {
    "get_ipython": r"\bget_ipython\b",
    "input history": r"\b(_ih|_oh|In\s*\[|history_manager)\b",
    "frame inspection": r"\b(inspect|sys\._getframe|f_back|f_globals|gc\.get_objects)\b",
    "sys.modules / builtins": r"\b(sys\.modules|__builtins__|builtins)\b",
    "process control": r"\b(os\._exit|os\.fork|os\.setsid|os\.kill|subprocess|multiprocessing|signal\.)",
    "ctypes": r"\bctypes\b",
    "file access": r"\bopen\s*\(|/proc/|pathlib",
}


class Redactor:
    """Removes every line of the hidden tests (also as repr/JSON escapes) from a text."""

    def __init__(self, hidden_sources: list[str]):
        lines = {ln.strip() for src in hidden_sources for ln in src.splitlines()}
        variants = set()
        for ln in lines:
            if len(ln) < 8:
                continue
            variants |= {ln, repr(ln)[1:-1], json.dumps(ln)[1:-1]}
        self.variants = sorted(variants, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for v in self.variants:
            if v in text:
                text = text.replace(v, HIDDEN_MARK)
        return text


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def flags_for(code: dict[str, list[str]]) -> list[str]:
    """Names of constructs worth a human look (they can tamper with the kernel)."""
    text = "\n".join(src for sources in code.values() for src in sources)
    return [name for name, pattern in SUSPICIOUS.items() if re.search(pattern, text)]


def _cell_message(res: dict) -> str:
    status = res.get("status")
    if status == "error":
        return f"{res.get('ename', 'Error')}: {res.get('evalue', '')}".rstrip(": ")
    if status in ("timeout", "died"):
        return res.get("detail", status)
    return ""


def score(
    master: Master, matched: Matched, run: dict, *, student: str
) -> dict[str, Any]:
    """The student's record: points per test and exercise, status and a one-line reason."""
    redact = Redactor(master.hidden_sources())
    cells, results = matched.cells, run.get("cells", [])
    executed = [c for c in cells if c.role in ("context", "solution", "test")]
    by_cell = list(
        zip(
            executed,
            results + [{"status": "not run"}] * (len(executed) - len(results)),
            strict=True,
        )
    )
    gave_up = next(
        (
            e["detail"]
            for e in run.get("events", [])
            if e["kind"] in ("gave-up", "total-timeout", "kernel")
        ),
        "",
    )
    tests, exercises = [], {}
    for ex in master.exercises:
        sol = [r for c, r in by_cell if c.role == "solution" and c.exercise == ex]
        mine = [(c, r) for c, r in by_cell if c.role == "test" and c.exercise == ex]
        for c, r in mine:
            passed = r.get("status") == "ok"
            msg = _cell_message(r) or ("" if passed else (gave_up or "not run"))
            if c.hidden:
                msg = _one_line(redact(msg))
            else:
                msg = redact(msg)[:2000]
            out = (
                ""
                if c.hidden
                else redact(
                    "".join(
                        o.get("text", "")
                        for o in r.get("outputs", [])
                        if o.get("output_type") == "stream"
                    )
                )[-3000:]
            )
            tests.append(
                {
                    "name": c.name,
                    "exercise": ex,
                    "hidden": c.hidden,
                    "max_points": c.points,
                    "points": c.points if passed else 0.0,
                    "status": "passed"
                    if passed
                    else ("not run" if r.get("status") == "not run" else "failed"),
                    "message": msg,
                    "output": out,
                }
            )
        mine_tests = [t for t in tests if t["exercise"] == ex]
        everything = sol + [r for _, r in mine]
        names = {r.get("ename") for r in everything}
        kinds = {r.get("status") for r in everything}
        sol_err = next((r for r in sol if r.get("status") == "error"), None)
        if ex in matched.missing:
            status, msg = "missing", f"no cell starts with '# EXERCISE: {ex}'"
        elif mine_tests and all(t["status"] == "passed" for t in mine_tests):
            status = "passed"
            msg = (
                f"passed, although your cell raised {_cell_message(sol_err)}"
                if sol_err
                else ""
            )
        elif "NotImplementedError" in names:
            status, msg = "not implemented", "the stub still raises NotImplementedError"
        elif any("memory limit" in r.get("detail", "") for r in everything):
            status = "memory"
            msg = next(
                r["detail"] for r in everything if "memory limit" in r.get("detail", "")
            )
        elif "timeout" in kinds:
            status, msg = (
                "timeout",
                next(r["detail"] for r in everything if r.get("status") == "timeout"),
            )
        elif "died" in kinds:
            status, msg = (
                "crashed",
                next(r["detail"] for r in everything if r.get("status") == "died"),
            )
        elif sol_err is not None:
            status, msg = "error", "your code raised " + _cell_message(sol_err)
        elif any(t["status"] == "passed" for t in mine_tests):
            status, msg = (
                "partial",
                next(t["message"] for t in mine_tests if t["status"] != "passed"),
            )
        elif mine_tests and all(t["status"] == "not run" for t in mine_tests):
            status, msg = "not run", gave_up or "not run"
        else:
            status, msg = (
                "failed",
                next((t["message"] for t in mine_tests if t["message"]), ""),
            )
        exercises[ex] = {
            "points": sum(t["points"] for t in mine_tests),
            "max_points": master.max_points(ex),
            "status": status,
            "message": _one_line(redact(msg)),
        }
    return _student_status(
        master, matched, run, student, tests, exercises, redact, by_cell
    )


def _student_status(
    master, matched, run, student, tests, exercises, redact, by_cell
) -> dict:
    events = run.get("events", [])
    problem = next(
        (
            e
            for e in events
            if e["kind"]
            in ("memory", "died", "timeout", "total-timeout", "kernel", "gave-up")
        ),
        None,
    )
    kind_to_status = {
        "memory": "memory",
        "died": "crashed",
        "timeout": "timeout",
        "total-timeout": "timeout",
        "kernel": "error",
        "gave-up": "crashed",
    }
    if problem is not None:
        status = kind_to_status[problem["kind"]]
        where = ""
        if problem.get("cell") is not None and problem["cell"] < len(by_cell):
            cell = by_cell[problem["cell"]][0]
            where = (
                f"exercise {cell.exercise!r} ({'your code' if cell.role == 'solution' else cell.name}): "
                if cell.exercise
                else "a setup cell: "
            )
        reason = where + problem["detail"]
        if problem["kind"] in ("timeout", "died", "memory") and not any(
            e["kind"] == "gave-up" for e in events
        ):
            reason += "; the other exercises were graded"
    else:
        status = "ok"
        groups: dict[str, list[str]] = {}
        for ex, info in exercises.items():
            groups.setdefault(info["status"], []).append(ex)
        passed = len(groups.get("passed", []))
        parts = [f"{passed} of {len(exercises)} exercises passed"]
        parts += [f"{k}: {', '.join(v)}" for k, v in groups.items() if k != "passed"]
        reason = "; ".join(parts)
    setup = next(
        (r for c, r in by_cell if c.role == "context" and r.get("status") == "error"),
        None,
    )
    if setup is not None and problem is None:
        status = "error"
        reason = (
            f"a setup cell of the master raised {_cell_message(setup)} (check the grading "
            "environment; this student is graded again on the next run)"
        )
    if run.get("canary") == "tampered":
        status = "review"
        reason = (
            "a check cell that must fail reported success: the kernel was tampered with; "
            "review this submission by hand"
        )
    total = sum(t["points"] for t in tests)
    notes = list(matched.notes) + [
        e["detail"] for e in events if e["kind"] in ("cleanup", "restart")
    ]
    return {
        "student": student,
        "status": status,
        "reason": _one_line(redact(reason)),
        "total": total,
        "max_total": master.max_points(),
        "exercises": exercises,
        "tests": tests,
        "notes": notes,
        "flags": flags_for(matched.student_code),
        "seconds": round(float(run.get("seconds", 0.0)), 2),
        "processes": int(run.get("processes_seen", 0)),
        "peak_memory_mb": round(float(run.get("peak_rss_mb", 0.0)), 1),
    }


def invalid_record(master: Master, student: str, reason: str) -> dict[str, Any]:
    """The record of a submission that could not be run at all."""
    tests = [
        {
            "name": c.name,
            "exercise": c.exercise,
            "hidden": c.hidden,
            "max_points": c.points,
            "points": 0.0,
            "status": "failed",
            "message": reason,
            "output": "",
        }
        for c in master.tests
    ]
    exercises = {
        ex: {
            "points": 0.0,
            "max_points": master.max_points(ex),
            "status": "invalid",
            "message": reason,
        }
        for ex in master.exercises
    }
    return {
        "student": student,
        "status": "invalid",
        "reason": reason,
        "total": 0.0,
        "max_total": master.max_points(),
        "exercises": exercises,
        "tests": tests,
        "notes": [],
        "flags": [],
        "seconds": 0.0,
        "peak_memory_mb": 0.0,
    }


# ----------------------------------------------------------------- files


def gradescope(record: dict) -> dict:
    """Gradescope's autograder ``results.json``."""
    return {
        "score": record["total"],
        "execution_time": record["seconds"],
        "output": f"Status: {record['status']} — {record['reason']}",
        "stdout_visibility": "hidden",
        "tests": [
            {
                "name": t["name"],
                "score": t["points"],
                "max_score": t["max_points"],
                "status": "passed" if t["status"] == "passed" else "failed",
                "output": (
                    t["message"] + ("\n\n" + t["output"] if t["output"] else "")
                ).strip(),
                "visibility": "after_published" if t["hidden"] else "visible",
            }
            for t in record["tests"]
        ],
    }


def _code(
    source: str, outputs: list | None = None, metadata: dict | None = None
) -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": metadata or {},
        "outputs": outputs or [],
        "source": source,
    }


def _markdown(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def notebook_text(cells: list[dict]) -> str:
    """An nbformat 4.5 notebook as JSON text (written directly: nbformat imports slowly)."""
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i}"
    nb = {
        "cells": cells,
        "metadata": {
            "kernelspec": {
                "display_name": "Python 3",
                "language": "python",
                "name": "python3",
            },
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def feedback_notebook(
    master: Master, matched: Matched | None, run: dict | None, record: dict
) -> str:
    """The student's notebook of results: their code, and each test by name and message."""
    redact = Redactor(master.hidden_sources())
    mark = {"passed": "✓", "failed": "✗", "not run": "–"}
    rows = "\n".join(
        f"| `{ex}` | {i['points']:g} / {i['max_points']:g} | {i['status']} | {i['message']} |"
        for ex, i in record["exercises"].items()
    )
    head = (
        f"# Feedback: {master.path.stem}\n\n**Student:** {record['student']}  \n"
        f"**Score:** {record['total']:g} / {record['max_total']:g}  \n"
        f"**Status:** {record['status']} — {record['reason']}\n\n"
        f"| exercise | points | status | note |\n|---|---|---|---|\n{rows}\n"
    )
    if record["notes"]:
        head += "\n" + "\n".join(f"- {n}" for n in record["notes"]) + "\n"
    cells = [_markdown(head)]
    results = (run or {}).get("cells", [])
    executed = [
        c
        for c in (matched.cells if matched else [])
        if c.role in ("context", "solution", "test")
    ]
    for ex in master.exercises:
        info = record["exercises"][ex]
        cells.append(
            _markdown(
                f"## `{ex}` · {info['status']} · {info['points']:g} / {info['max_points']:g}"
            )
        )
        for k, c in enumerate(executed):
            if c.role == "solution" and c.exercise == ex:
                res = results[k] if k < len(results) else {}
                outs = [
                    json.loads(redact(json.dumps(o))) for o in res.get("outputs", [])
                ]
                cells.append(_code(c.source, outs))
        lines = [
            f"- {mark.get(t['status'], '✗')} **{t['name']}** ({t['points']:g} / {t['max_points']:g})"
            + (f": {t['message']}" if t["message"] else "")
            for t in record["tests"]
            if t["exercise"] == ex
        ]
        cells.append(_markdown("\n".join(lines) or "No tests."))
    for ex in master.answers:
        text = (
            "\n\n".join(matched.student_code.get(ex, []) if matched else [])
            or "*(no answer found)*"
        )
        cells.append(_markdown(f"## `{ex}` · written answer, graded by hand\n\n{text}"))
    return notebook_text(cells)


def executed_notebook(matched: Matched | None, run: dict) -> str:
    """The instructor's copy: every cell as run, hidden tests and their outputs included."""
    executed = [
        c
        for c in (matched.cells if matched else [])
        if c.role in ("context", "solution", "test")
    ]
    cells = []
    for c, res in zip(executed, run.get("cells", []), strict=False):
        meta = {
            "grader": {
                k: res.get(k) for k in ("status", "detail", "seconds") if k in res
            }
        }
        cells.append(_code(c.source, res.get("outputs", []), meta))
    return notebook_text(cells)
