"""Feedback files: Gradescope's format, and feedback that never shows a hidden test's source."""

from __future__ import annotations

import json

import nbformat

from course_utils.grading.inputs.ipynb import read_cells
from course_utils.grading.inputs.master import load_master
from course_utils.grading.inputs.submissions import match
from course_utils.grading.policy import feedback, scoring
from tests.grading.helpers import MASTER, SUBS


def test_gradescope_format():
    rec = scoring.invalid_record(load_master(MASTER), "x", "the notebook file is empty")
    gs = feedback.gradescope(rec)
    assert gs["score"] == 0 and len(gs["tests"]) == 6
    assert {t["visibility"] for t in gs["tests"]} == {"visible", "after_published"}
    assert set(gs["tests"][0]) == {
        "name",
        "score",
        "max_score",
        "status",
        "output",
        "visibility",
    }


def _run(printed: str) -> tuple:
    """The full fixture, every cell ok, the student's square cell printing ``printed``."""
    m = load_master(MASTER)
    matched = match(m, read_cells(SUBS / "full.ipynb"))
    n = sum(c.role in ("context", "solution", "test") for c in matched.cells)
    cells = [{"status": "ok", "outputs": []} for _ in range(n)]
    stream = {"output_type": "stream", "name": "stdout", "text": printed}
    cells[1]["outputs"] = [stream]
    cells[3]["outputs"] = [dict(stream, text="hidden test output\n")]
    run = {"cells": cells, "events": []}
    return m, matched, run, scoring.score(m, matched, run, student="ann")


def test_feedback_shows_the_code_and_tests_but_no_hidden_source():
    hidden_line = next(
        ln.strip()
        for ln in load_master(MASTER).hidden_sources()[0].splitlines()
        if "SECRET" in ln
    )
    m, matched, run, rec = _run(f"I found: {hidden_line}\n")
    text = feedback.feedback_notebook(m, matched, run, rec)
    nb = nbformat.reads(text, as_version=4)
    nbformat.validate(nb)
    assert "**Score:** 8 / 8" in nb.cells[0].source
    assert "square: hidden tests" in text and "def square(x)" in text
    assert "SECRET_HIDDEN_ORACLE" not in text and "hidden test output" not in text
    assert scoring.HIDDEN_MARK in text
    assert "written answer, graded by hand" in text


def test_executed_notebook_is_every_cell_as_run():
    m, matched, run, _ = _run("hello\n")
    nb = nbformat.reads(feedback.executed_notebook(matched, run), as_version=4)
    nbformat.validate(nb)
    assert len(nb.cells) == len(run["cells"])
    assert "SECRET_HIDDEN_ORACLE" in "".join(c.source for c in nb.cells)
    assert nb.cells[3].outputs[0]["text"] == "hidden test output\n"
    assert nb.cells[0].metadata["grader"] == {"status": "ok"}


def test_notebook_text_is_nbformat_45():
    data = json.loads(feedback.notebook_text([feedback._markdown("hi")]))
    assert (data["nbformat"], data["nbformat_minor"]) == (4, 5)
    assert data["cells"][0]["id"] == "cell-0"


# Hidden lines that begin with a letter a JSON escape ends in (\n, \t, \\u): printed
# after a newline, a tab or a backslash, their tail sits right after that escape in
# the output's JSON text, where a replacement made invalid JSON.
TRICKY = [
    "n_cases = [(-2, 4), (0, 0), (1.5, 2.25)]",
    "total_hidden = sum(square(x) for x, _ in n_cases)",
    'u_word = "zoë ünïcode ✓"',
    'quoted = "say \\"hi\\" \\\\ there"',
]


def _tricky_master(tmp_path):
    nb = nbformat.read(MASTER, as_version=4)
    for cell in nb.cells:
        if cell.source.startswith("# HIDDEN TESTS: square"):
            cell.source = cell.source.replace(
                "### END HIDDEN TESTS", "\n".join(TRICKY) + "\n### END HIDDEN TESTS"
            )
    path = tmp_path / "tiny_master.ipynb"
    nbformat.write(nb, path)
    return load_master(path)


def test_redaction_works_on_decoded_text_of_every_output_kind(tmp_path):
    m = _tricky_master(tmp_path)
    matched = match(m, read_cells(SUBS / "full.ipynb"))
    n = sum(c.role in ("context", "solution", "test") for c in matched.cells)
    cells = [{"status": "ok", "outputs": []} for _ in range(n)]
    innocent = [  # no hidden line, each one character short of one after an escape
        "x\n" + TRICKY[0][1:],
        "\t" + TRICKY[1][1:],
        "\\" + TRICKY[2],  # a backslash, then a whole hidden line: removed
    ]
    wrapped = [f'before "{ln}" \\ after ✓ zoë\n' for ln in TRICKY]
    half = len(TRICKY[3]) // 2
    stream = lambda text, name="stdout": {  # noqa: E731
        "output_type": "stream",
        "name": name,
        "text": text,
    }
    cells[1]["outputs"] = [
        stream(innocent[0] + "\n" + innocent[1] + "\n"),
        stream(["line one\n", innocent[2] + "\n"], "stderr"),
        stream(wrapped[0]),
        stream('split: "' + TRICKY[3][:half]),  # one line printed in two parts
        stream(TRICKY[3][half:] + '" done\n'),
        {"output_type": "error", "ename": "AssertionError", "evalue": wrapped[1],
         "traceback": ["Traceback (most recent call last):", "  " + wrapped[2], "end"]},
        {"output_type": "display_data", "metadata": {},
         "data": {"text/plain": [wrapped[3]], "text/html": f"<pre>{TRICKY[0]}</pre>",
                  "text/markdown": f"`{TRICKY[1]}` and {json.dumps(TRICKY[2])}",
                  "image/png": "iVBORw0KGgo="}},
    ]  # fmt: skip
    run = {"cells": cells, "events": []}
    rec = scoring.score(m, matched, run, student="ann")
    text = feedback.feedback_notebook(m, matched, run, rec)
    nb = nbformat.reads(text, as_version=4)  # valid JSON, and a valid notebook
    nbformat.validate(nb)
    decoded = "".join(
        str(o.get("text", "")) + str(o.get("evalue", "")) + "\n".join(o.get("traceback", []))
        + "".join(str(v) for v in o.get("data", {}).values())
        for c in nb.cells for o in c.get("outputs", [])
    )  # fmt: skip
    for ln in TRICKY:
        for form in (ln, json.dumps(ln)[1:-1], repr(ln)[1:-1]):
            assert form not in decoded, form
    assert innocent[0] in decoded and innocent[1] in decoded  # not hidden lines: kept
    assert decoded.count(scoring.HIDDEN_MARK) >= 8  # the wrapped lines, html, md, split
    assert 'before "' in decoded and '" \\ after ✓ zoë' in decoded  # the rest is kept
    assert 'split: "' + scoring.HIDDEN_MARK + '" done' in decoded
    assert "iVBORw0KGgo=" in decoded  # binary data untouched


def test_the_html_feedback_is_the_notebook_as_a_page_canvas_and_moodle_show():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            "# Feedback\n\n**Score:** 5 / 8\n\n| exercise | points |\n|---|---|\n"
            "| `square` | 5 / 8 |\n"
        ),
        nbformat.v4.new_code_cell("print('<script>x</script>')"),
        nbformat.v4.new_code_cell("1/0"),
    ]
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="<b>hi</b>\n")]
    nb.cells[2].outputs = [
        nbformat.v4.new_output(
            "error",
            ename="ZeroDivisionError",
            evalue="division by zero",
            traceback=["\x1b[31mZeroDivisionError\x1b[0m: division by zero"],
        ),  # fmt: skip
        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="}),
    ]
    page = feedback.html_page(nbformat.writes(nb))
    assert page.startswith("<!doctype html>") and "<title>Feedback</title>" in page
    assert "<strong>Score:</strong> 5 / 8" in page
    assert "<td><code>square</code></td>" in page and "|---|" not in page  # a table
    assert "&lt;script&gt;" in page and "<script>" not in page
    assert "&lt;b&gt;hi&lt;/b&gt;" in page
    assert "ZeroDivisionError: division by zero" in page and "\x1b" not in page
    assert "data:image/png;base64,iVBORw0KGgo=" in page
