"""The files handed back: Gradescope's ``results.json``, the student's feedback notebook, the executed one.

They are built from a student's record (:mod:`.scoring`) and the worker's
results. What a student sees (``feedback.ipynb``, ``results.json``) never holds
a hidden test's source or output: hidden tests show a name, points and a
one-line message, and every shown output goes through the
:class:`~course_utils.grading.policy.scoring.Redactor`. ``executed.ipynb`` is the
instructor's copy, every cell as run. Notebooks are written as nbformat 4.5
JSON directly (nbformat imports slowly).
"""

from __future__ import annotations

import json

from course_utils.grading.inputs.master import Master
from course_utils.grading.inputs.submissions import Matched
from course_utils.grading.policy.scoring import Redactor


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
