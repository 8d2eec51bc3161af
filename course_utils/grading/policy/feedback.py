"""The files handed back: Gradescope's ``results.json``, the student's feedback notebook, the executed one.

They are built from a student's record (:mod:`.scoring`) and the worker's
results. What a student sees (``feedback.ipynb``, ``results.json``) never holds
a hidden test's source or output: hidden tests show a name, points and a
one-line message, and every shown output goes through the
:class:`~course_utils.grading.policy.scoring.Redactor`, applied to the output's
decoded text (:func:`redact_output`: stream text, error value and traceback, and
every text of a display's data), never to its JSON form, whose escapes a
replacement could cut. ``executed.ipynb`` is the instructor's copy, every cell as
run. Notebooks are written as nbformat 4.5 JSON directly (nbformat imports slowly).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any

from course_utils.grading.inputs.master import Master
from course_utils.grading.inputs.submissions import Matched
from course_utils.grading.policy.scoring import Redactor

# A display's binary data (base64): no line of a hidden test can be read in it.
BINARY = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp")


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


def _text(value: Any, redact: Callable[[str], str], lines: bool = False) -> Any:
    """Every string in ``value`` (a JSON value) redacted; with ``lines``, a list of
    strings is one text in lines (nbformat's multi-line strings), redacted whole."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        if lines and value and all(isinstance(v, str) for v in value):
            return redact("".join(value))
        return [_text(v, redact) for v in value]
    if isinstance(value, dict):
        return {k: _text(v, redact) for k, v in value.items()}
    return value


def redact_output(output: dict, redact: Callable[[str], str]) -> dict:
    """One notebook output with its decoded text redacted: a stream's text, an
    error's name, value and traceback, and each of a display's data but binary images."""
    out = dict(output)
    kind = out.get("output_type")
    if kind == "stream":
        out["text"] = _text(out.get("text", ""), redact, lines=True)
    elif kind == "error":
        for key in ("ename", "evalue"):
            out[key] = _text(out.get(key, ""), redact)
        lines = out.get("traceback", [])
        if isinstance(lines, list):  # one text: a hidden line split across entries
            out["traceback"] = redact("\n".join(map(str, lines))).split("\n")
    else:
        data = out.get("data", {})
        if isinstance(data, dict):
            out["data"] = {
                mime: value if mime in BINARY else _text(value, redact, lines=True)
                for mime, value in data.items()
            }
        out["metadata"] = _text(out.get("metadata", {}), redact)
    return out


def redact_outputs(outputs: list, redact: Callable[[str], str]) -> list[dict]:
    """A cell's outputs redacted; consecutive stream outputs of one stream are joined
    first (as a notebook shows them), so a line printed in two parts is one line."""
    joined: list[dict] = []
    for out in outputs:
        if not isinstance(out, dict):
            continue
        last = joined[-1] if joined else None
        if (
            last is not None
            and out.get("output_type") == "stream" == last.get("output_type")
            and out.get("name") == last.get("name")
        ):
            last["text"] = _lines(last.get("text", "")) + _lines(out.get("text", ""))
            continue
        joined.append(dict(out))
    return [redact_output(o, redact) for o in joined]


def _lines(text: Any) -> str:
    return "".join(map(str, text)) if isinstance(text, list) else str(text)


def feedback_notebook(
    master: Master,
    matched: Matched | None,
    run: dict | None,
    record: dict,
    redact: Callable[[str], str] | None = None,
) -> str:
    """The student's notebook of results: their code, and each test by name and message.

    ``redact`` (default: a :class:`Redactor` of the master's hidden tests) is applied to
    the decoded text of every output shown; the instructor's unredacted copy passes
    ``str`` (nothing removed).
    """
    redact = redact or Redactor(master.hidden_sources())
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
                outs = redact_outputs(res.get("outputs", []), redact)
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


def minimal_notebook(master: Master, record: dict) -> str:
    """The feedback when the full one could not be made: the scores and statuses only."""
    rows = "\n".join(
        f"| `{ex}` | {i['points']:g} / {i['max_points']:g} | {i['status']} |"
        for ex, i in record["exercises"].items()
    )
    head = (
        f"# Feedback: {master.path.stem}\n\n**Student:** {record['student']}  \n"
        f"**Score:** {record['total']:g} / {record['max_total']:g}  \n"
        f"**Status:** {record['status']}\n\n"
        f"| exercise | points | status |\n|---|---|---|\n{rows}\n\n"
        "The detailed feedback could not be prepared (a failure of the grader, not of "
        "your work); your instructor has been told. Your points are as above."
    )
    return notebook_text([_markdown(head)])


def minimal_results(record: dict) -> dict:
    """Gradescope's ``results.json`` with the score and each test's points, no text."""
    return {
        "score": record["total"],
        "output": "The detailed results could not be prepared (a failure of the "
        "grader); your instructor has been told.",
        "stdout_visibility": "hidden",
        "tests": [
            {
                "name": t["name"],
                "score": t["points"],
                "max_score": t["max_points"],
                "visibility": "after_published" if t["hidden"] else "visible",
            }
            for t in record["tests"]
        ],
    }


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


# ---- the same feedback as a web page ------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PAGE_STYLE = """body{font-family:sans-serif;margin:1.5em auto;max-width:60em;padding:0 1em}
pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;overflow-wrap:anywhere}
pre.out{background:#fff;border-left:3px solid #ccc}pre.err{background:#fdecea}
table{border-collapse:collapse}td,th{border:1px solid #aaa;padding:.2em .5em}
img{max-width:100%}"""


def _joined(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _output_html(out: dict) -> str:
    esc = html.escape
    kind = out.get("output_type")
    if kind == "stream":
        return f"<pre class='out'>{esc(_joined(out.get('text')))}</pre>"
    if kind == "error":
        lines = [_ANSI.sub("", x) for x in out.get("traceback") or []]
        text = "\n".join(lines) or f"{out.get('ename')}: {out.get('evalue')}"
        return f"<pre class='err'>{esc(text)}</pre>"
    data = out.get("data") or {}
    for mime in BINARY:  # an image, in the page itself: nothing is fetched
        if mime in data:
            b64 = "".join(_joined(data[mime]).split())
            return f"<img alt='output' src='data:{mime};base64,{esc(b64)}'>"
    if "text/plain" in data:
        return f"<pre class='out'>{esc(_joined(data['text/plain']))}</pre>"
    return ""


def html_page(notebook: str) -> str:
    """``feedback.html``: the feedback notebook as one self-contained page (an LMS such
    as Canvas or Moodle shows a ``.ipynb`` as JSON): markdown rendered with raw HTML
    escaped, code and outputs as text, images inline, no script."""
    from course_utils.grading.records.answers import render

    nb = json.loads(notebook)
    cells = nb.get("cells", [])
    title = "Feedback"
    parts = []
    for cell in cells:
        source = _joined(cell.get("source"))
        if cell.get("cell_type") == "markdown":
            if title == "Feedback" and source.startswith("# "):
                title = source.splitlines()[0][2:].strip() or title
            parts.append(render(source))
        elif cell.get("cell_type") == "code":
            parts.append(f"<pre>{html.escape(source)}</pre>")
            parts += [_output_html(o) for o in cell.get("outputs", [])]
    head = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
        f"</title><style>{_PAGE_STYLE}</style></head><body>"
    )
    return head + "\n".join(p for p in parts if p) + "\n</body></html>\n"
