"""Scores: one student's record from the kernel's replies, and what students must not see.

A test cell scores its points only when the kernel replied ``ok`` to it; the
submission's own outputs and metadata are never read for scoring. Each
exercise gets a status (passed, partial, failed, not implemented, missing,
error, timeout, memory, crashed, not run) and the student a status and a
one-line reason. Every message a student sees goes through the
:class:`Redactor`, which removes the hidden tests' lines (or, when it fails,
:func:`withhold`, which keeps no text at all: points never depend on it); the
``flags`` column comes from :func:`course_utils.grading.policy.flags.flags_for`
and from what the run noticed (:func:`run_flags`: output cut by the grader, an
interrupt the submission sent itself). The flag analysis reads the student's code,
which can be beyond it (a ``RecursionError`` on an expression nested 500 deep that
the kernel runs fine): its failure costs no point, it goes to ``on_error``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from course_utils.exercises import clip
from course_utils.grading.inputs.master import Master
from course_utils.grading.inputs.submissions import Matched
from course_utils.grading.policy.flags import flags_for

HIDDEN_MARK = "[hidden test line removed]"
FLAG_ANALYSIS = "flag analysis"  # the step on_error hears of when flags_for fails
WITHHELD = "[withheld: the grader could not check this text for hidden tests; your instructor has it]"
# What the grader writes into a cell's output when it cuts it (sandbox.outputs, in the
# kernel the worker's guard), and when it ignores an interrupt the grader did not send.
TRUNCATED_MARKS = ("[output truncated by the grader", "[course grader: output dropped")
SELF_INTERRUPT_MARK = (
    "[course grader: an interrupt the grader did not send was ignored]"
)
_PROBLEM_STATUS = {
    "memory": "memory",
    "died": "crashed",
    "timeout": "timeout",
    "total-timeout": "timeout",
    "kernel": "error",
    "gave-up": "crashed",
}


def _package_parent() -> str:
    """The folder that holds ``course_utils`` (a checkout or site-packages), with its
    separator: a message naming a library file names it from there."""
    import course_utils

    return str(Path(course_utils.__file__).resolve().parent.parent) + os.sep


class Redactor:
    """Removes every line of the hidden tests (also as repr/JSON escapes) from a text,
    and the instructor's path to the course (a warning names its library file)."""

    def __init__(self, hidden_sources: list[str]):
        self.parent = _package_parent()
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
        if self.parent in text:
            text = text.replace(self.parent, "")
        return text


def withhold(text: str) -> str:
    """The redaction of last resort: any text becomes :data:`WITHHELD`."""
    return WITHHELD if text else text


def run_flags(run: dict) -> list[str]:
    """Flags from what the run printed: output the grader cut, interrupts it ignored."""
    found: set[str] = set()
    for cell in run.get("cells", []):
        for out in cell.get("outputs", []):
            text = out.get("text", "") if out.get("output_type") == "stream" else ""
            if not isinstance(text, str):
                continue
            if any(mark in text for mark in TRUNCATED_MARKS):
                found.add("output truncated")
            if SELF_INTERRUPT_MARK in text:
                found.add("interrupted itself")
    return sorted(found)


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cell_message(res: dict) -> str:
    status = res.get("status")
    if status == "error":
        return f"{res.get('ename', 'Error')}: {res.get('evalue', '')}".rstrip(": ")
    if status in ("timeout", "died"):
        return res.get("detail", status)
    if status == "not run":  # skipped after a timeout: says why
        return res.get("detail", "")
    return ""


def executed_pairs(matched: Matched, run: dict) -> list[tuple[Any, dict]]:
    """Each cell that ran (or should have) with its result; ``not run`` past the end."""
    executed = [c for c in matched.cells if c.role in ("context", "solution", "test")]
    results = run.get("cells", [])
    missing = [{"status": "not run"}] * (len(executed) - len(results))
    return list(zip(executed, results + missing, strict=True))


def _test_result(cell, res: dict, gave_up: str, redact: Callable[[str], str]) -> dict:
    passed = res.get("status") == "ok"
    msg = _cell_message(res) or ("" if passed else (gave_up or "not run"))
    msg = _one_line(redact(msg)) if cell.hidden else clip(redact(msg), 2000)
    stdout = "".join(
        o.get("text", "")
        for o in res.get("outputs", [])
        if o.get("output_type") == "stream"
    )
    return {
        "name": cell.name,
        "exercise": cell.exercise,
        "hidden": cell.hidden,
        "max_points": cell.points,
        "points": cell.points if passed else 0.0,
        "status": "passed"
        if passed
        else ("not run" if res.get("status") == "not run" else "failed"),
        "message": msg,
        "output": "" if cell.hidden else redact(stdout)[-3000:],
    }


def _first(results: list[dict], status: str) -> str:
    return next(r["detail"] for r in results if r.get("status") == status)


def _exercise_status(
    ex: str,
    missing: bool,
    sol: list[dict],
    results: list[dict],
    tests: list[dict],
    gave_up: str,
) -> tuple[str, str]:
    """(status, message) of one exercise from its solution and test cells' results."""
    everything = sol + results
    names = {r.get("ename") for r in everything}
    kinds = {r.get("status") for r in everything}
    sol_err = next((r for r in sol if r.get("status") == "error"), None)
    memory = [r["detail"] for r in everything if "memory limit" in r.get("detail", "")]
    if missing:
        return "missing", f"no cell starts with '# EXERCISE: {ex}'"
    if tests and all(t["status"] == "passed" for t in tests):
        return "passed", (
            f"passed, although your cell raised {_cell_message(sol_err)}"
            if sol_err
            else ""
        )
    if "NotImplementedError" in names:
        return "not implemented", "the stub still raises NotImplementedError"
    if memory:
        return "memory", memory[0]
    if "timeout" in kinds:
        return "timeout", _first(everything, "timeout")
    if "died" in kinds:
        return "crashed", _first(everything, "died")
    if sol_err is not None:
        return "error", "your code raised " + _cell_message(sol_err)
    if any(t["status"] == "passed" for t in tests):
        return "partial", next(t["message"] for t in tests if t["status"] != "passed")
    if tests and all(t["status"] == "not run" for t in tests):
        return "not run", gave_up or "not run"
    return "failed", next((t["message"] for t in tests if t["message"]), "")


def score(
    master: Master,
    matched: Matched,
    run: dict,
    *,
    student: str,
    redact: Callable[[str], str] | None = None,
    on_error: Callable[[str, BaseException], None] | None = None,
) -> dict[str, Any]:
    """The student's record: points per test and exercise, status and a one-line reason.

    ``redact`` (default: a :class:`Redactor` of the master's hidden tests) is applied
    to every message before it is cut to length; the points do not depend on it.
    When the flag analysis of the student's code fails, ``on_error(FLAG_ANALYSIS,
    err)`` hears of it and the record has the run's flags only (the grade is the
    same); without ``on_error`` the error is raised.
    """
    redact = redact or Redactor(master.hidden_sources())
    try:
        code_flags = flags_for(matched.student_code)
    except Exception as err:  # RecursionError, MemoryError: the student's code is read
        if on_error is None:
            raise
        on_error(FLAG_ANALYSIS, err)
        code_flags = []
    by_cell = executed_pairs(matched, run)
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
        ex_tests = [_test_result(c, r, gave_up, redact) for c, r in mine]
        tests += ex_tests
        status, msg = _exercise_status(
            ex, ex in matched.missing, sol, [r for _, r in mine], ex_tests, gave_up
        )
        exercises[ex] = {
            "points": sum(t["points"] for t in ex_tests),
            "max_points": master.max_points(ex),
            "status": status,
            "message": _one_line(redact(msg)),
        }
    status, reason = _student_status(run, exercises, by_cell)
    return {
        "student": student,
        "status": status,
        "reason": _one_line(redact(reason)),
        "total": sum(t["points"] for t in tests),
        "max_total": master.max_points(),
        "exercises": exercises,
        "tests": tests,
        "notes": list(matched.notes)
        + [
            e["detail"]
            for e in run.get("events", [])
            if e["kind"] in ("cleanup", "restart")
        ],
        "flags": code_flags + run_flags(run),
        "seconds": round(float(run.get("seconds", 0.0)), 2),
        "processes": int(run.get("processes_seen", 0)),
        "peak_memory_mb": round(float(run.get("peak_rss_mb", 0.0)), 1),
    }


def _problem_reason(problem: dict, events: list[dict], by_cell: list) -> str:
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
    return reason


def ok_status(exercises: dict) -> tuple[str, str]:
    """``ok`` and its reason: how many exercises passed, and the others by status."""
    groups: dict[str, list[str]] = {}
    for ex, info in exercises.items():
        groups.setdefault(info["status"], []).append(ex)
    passed = len(groups.get("passed", []))
    parts = [f"{passed} of {len(exercises)} exercises passed"]
    parts += [f"{k}: {', '.join(v)}" for k, v in groups.items() if k != "passed"]
    return "ok", "; ".join(parts)


def _student_status(run: dict, exercises: dict, by_cell: list) -> tuple[str, str]:
    """The student's (status, reason): the first problem, a broken setup, tampering."""
    events = run.get("events", [])
    problem = next((e for e in events if e["kind"] in _PROBLEM_STATUS), None)
    if problem is not None:
        status = _PROBLEM_STATUS[problem["kind"]]
        reason = _problem_reason(problem, events, by_cell)
    else:
        status, reason = ok_status(exercises)
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
    return status, reason


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
