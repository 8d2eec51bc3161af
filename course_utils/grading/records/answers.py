"""Written answers collected for graders: ``course grade answers``.

A master's written answers are its markdown cells marked ``<!-- EXERCISE: id -->`` (or
nbgrader's manually graded answers). Each student's cell for each of them is found as
the grader finds it (:func:`.inputs.submissions.discover`, then
:func:`.inputs.submissions.match`), and the question's text, the marker and the
``YOUR ANSWER HERE`` placeholder are taken off, so that a grader reads the answer alone.
An answer that is missing (the cell deleted), untouched or empty is ``None``: the pages
say "(no answer)".

:func:`write` writes one self-contained HTML page per question (every student's answer
in a stable order, rendered from markdown offline: raw HTML is escaped, images are not
fetched, nothing comes from a CDN), an index page, and ``manual.csv``: one row per
student and question in the columns ``course grade manual`` reads (``student``,
``item``, ``points``, ``max_points``, ``comment``), for the graders to fill. With
``anonymous``, every student is shown and listed under a pseudonym (``anon-07``); the
key from pseudonym to student is written to ``_instructor/anonymous.csv`` only, and
``course grade manual`` reads the filled table through it. Nothing here reads or
writes a grade, and no student code runs.
"""

from __future__ import annotations

import csv
import functools
import html
import io
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from course_utils import student_version
from course_utils._files import write_atomic
from course_utils.errors import CourseError
from course_utils.grading.inputs.ipynb import SubmissionError, nbgrader_meta, read_cells
from course_utils.grading.inputs.master import Master
from course_utils.grading.inputs.names import csv_cell, folder_name, shown
from course_utils.grading.inputs.submissions import discover, match

INSTRUCTOR = "_instructor"  # beside the pages: what graders must not be given
KEY = "anonymous.csv"  # in INSTRUCTOR: pseudonym -> student
MANUAL = "manual.csv"
NO_ANSWER = "(no answer)"
MAX_ANSWER = 100_000  # characters of one answer shown
PREFIXES = ("anon", "blind", "hidden")  # a pseudonym's prefix: the first no student has
_MARKER = re.compile(r"[ \t]*<!--\s*EXERCISE:\s*[^>]*?-->[ \t]*\n?")
_BEGIN_END = {student_version.BEGIN_MD, student_version.END_MD}
KEY_HEAD = ["anonymous_id", "student", "not_read"]
MANUAL_HEAD = ["student", "item", "points", "max_points", "comment"]


@dataclass
class Question:
    """One written answer of the master."""

    id: str
    prompt: str  # the master's cell without its marker and model answer
    model: str  # the model answer (the master's solution region), may be empty
    points: float | None  # what it is worth: the master's nbgrader points, or --points


@dataclass
class Collected:
    """Every student's answer to every question, as shown to the graders."""

    master: Path
    questions: list[Question]
    students: list[str]  # shown ids (pseudonyms when anonymous), in the pages' order
    answers: dict[str, dict[str, str | None]]  # shown id -> question -> answer
    not_read: dict[str, str]  # shown id -> why no notebook was read
    notes: list[str] = field(default_factory=list)
    key: dict[str, str] | None = None  # pseudonym -> student, when anonymous

    def answered(self, question: str) -> int:
        return sum(1 for s in self.students if self.answers[s].get(question))


def _regions(text: str) -> list[tuple[int, int]]:
    lines = text.split("\n")
    begins = [
        i for i, line in enumerate(lines) if line.strip() == student_version.BEGIN_MD
    ]
    ends = [i for i, line in enumerate(lines) if line.strip() == student_version.END_MD]
    return list(zip(begins, ends, strict=False))


def _unmarked(text: str) -> str:
    return _MARKER.sub("", text).strip("\n")


def question(
    master: Master, exercise: str, raw: dict, points: float | None
) -> Question:
    """The question of one written answer: its prompt, its model answer, its points."""
    text = "".join(raw["source"]) if isinstance(raw["source"], list) else raw["source"]
    lines = text.split("\n")
    regions = _regions(text)
    if regions:
        inside = {i for a, b in regions for i in range(a, b + 1)}
        prompt = "\n".join(x for i, x in enumerate(lines) if i not in inside)
        model = "\n".join(
            x
            for a, b in regions
            for x in lines[a + 1 : b]
            if x.strip() not in _BEGIN_END
        )
    else:  # nbgrader: the whole cell is the answer; its question is the cell before
        prompt, model = "", text
    try:
        worth = float(nbgrader_meta(raw).get("points") or 0)
    except (TypeError, ValueError):
        worth = 0.0
    return Question(
        exercise, _unmarked(prompt), _unmarked(model).strip(), worth or points
    )


def questions(master: Master, points: float | None = None) -> list[Question]:
    """The master's written answers, in notebook order; :class:`CourseError` if none."""
    if not master.answers:
        raise CourseError(
            f"--master {shown(str(master.path))}: no written answers (markdown cells "
            "marked '<!-- EXERCISE: <id> -->', or nbgrader's manually graded answers)"
        )
    raw = {}
    for cell in read_cells(master.path.resolve()):
        ex = student_version.exercise_id(cell) or nbgrader_meta(cell).get("grade_id")
        if cell["cell_type"] == "markdown" and ex in master.answers and ex not in raw:
            raw[ex] = cell
    return [question(master, ex, raw[ex], points) for ex in master.answers]


def answer_text(text: str, prompt: str) -> str | None:
    """A student's answer: their cell without the marker, the question as it was given
    and the placeholder; ``None`` when nothing else is left."""
    lines = _unmarked(text).split("\n")
    given = [x.strip() for x in _unmarked(prompt).split("\n") if x.strip()]
    i = 0
    for want in given:  # the question, when it stands unchanged at the top
        while i < len(lines) and not lines[i].strip():
            i += 1
        if i < len(lines) and lines[i].strip() == want:
            i += 1
        else:
            break
    kept = [
        x
        for x in lines[i:]
        if x.strip() not in {student_version.TEXT_STUB, *_BEGIN_END}
    ]
    answer = "\n".join(kept).strip("\n")
    return answer if answer.strip() else None


def _pseudonyms(students: list[str], old: dict[str, str]) -> dict[str, str]:
    """student -> pseudonym: those of the previous key kept, new ones in a random order."""
    prefix = next(
        (p for p in PREFIXES if not any(s.startswith(f"{p}-") for s in students)), None
    )
    if prefix is None:
        raise CourseError(
            "--anonymous: every pseudonym prefix "
            f"({', '.join(p + '-' for p in PREFIXES)}) starts a student's id"
        )
    mine = {
        s: p for p, s in old.items() if s in students and p.startswith(prefix + "-")
    }
    new = [s for s in students if s not in mine]
    secrets.SystemRandom().shuffle(new)
    width = max(2, len(str(len(students))))
    taken, n = set(mine.values()), 0
    for s in new:
        n += 1
        while f"{prefix}-{n:0{width}d}" in taken:
            n += 1
        mine[s] = f"{prefix}-{n:0{width}d}"
    return mine


def read_key(path: Path) -> dict[str, str]:
    """pseudonym -> student, from a key written by :func:`write`."""
    try:
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    except (OSError, UnicodeDecodeError) as err:
        raise CourseError(f"--key {path}: cannot read it: {err}") from None
    if rows and not {"anonymous_id", "student"} <= set(rows[0]):
        raise CourseError(f"--key {path}: needs columns anonymous_id and student")
    return {r["anonymous_id"]: r["student"] for r in rows}


def collect(
    submissions: Path,
    master: Master,
    *,
    points: float | None = None,
    anonymous: bool = False,
    old_key: dict[str, str] | None = None,
    lms: str | None = None,
) -> Collected:
    """Every student's written answers to ``master``'s questions (``lms``: ids from
    that LMS's download names)."""
    asked = questions(master, points)
    subs, notes = discover(submissions, master.path.name, lms)
    if not subs:
        raise CourseError(
            f"SUBMISSIONS {shown(str(submissions))}: no notebooks "
            "(one .ipynb or one folder per student)"
        )
    answers: dict[str, dict[str, str | None]] = {}
    not_read: dict[str, str] = {}
    for sub in subs:
        answers[sub.student] = {q.id: None for q in asked}
        try:
            if sub.problem or sub.path is None:
                raise SubmissionError(sub.problem or "no notebook")
            matched = match(master, read_cells(sub.path))
        except SubmissionError as err:
            not_read[sub.student] = str(err)
            continue
        for q in asked:
            cells = matched.student_code.get(q.id, [])
            found = [a for a in (answer_text(c, q.prompt) for c in cells) if a]
            text = "\n\n".join(found)
            if len(text) > MAX_ANSWER:
                notes.append(
                    f"{sub.student}: {q.id}: only the first {MAX_ANSWER} characters "
                    f"of {len(text)} are shown"
                )
                text = text[:MAX_ANSWER] + "\n\n[cut]"
            answers[sub.student][q.id] = text or None
    result = Collected(master.path, asked, sorted(answers), answers, not_read, notes)
    return anonymised(result, old_key or {}) if anonymous else result


def anonymised(result: Collected, old_key: dict[str, str]) -> Collected:
    """The same answers under pseudonyms, in the pseudonyms' order; the key kept."""
    names = _pseudonyms(result.students, old_key)
    key = {p: s for s, p in names.items()}
    return Collected(
        result.master,
        result.questions,
        sorted(key),
        {names[s]: a for s, a in result.answers.items()},
        {names[s]: why for s, why in result.not_read.items()},
        result.notes,
        key,
    )


# ---- the pages and the table ------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _markdown():
    try:
        from markdown_it import MarkdownIt
    except (
        ModuleNotFoundError
    ):  # jupytext's dependency, so always there with the course
        raise CourseError(
            "grade answers needs markdown-it-py: pip install markdown-it-py"
        ) from None
    # Raw HTML is escaped; images become links (nothing is fetched when a page opens);
    # tables (the feedback's score table) are tables.
    return MarkdownIt("commonmark", {"html": False}).enable("table").disable("image")


def render(text: str) -> str:
    """Markdown as HTML: raw HTML escaped, images as links, no script."""
    return _markdown().render(text)


def points_text(q: Question) -> str:
    return "" if q.points is None else f"{q.points:g}"


def manual_rows(result: Collected) -> list[list[str]]:
    """``manual.csv``: one row per student and question, in the pages' order."""
    rows = []
    for s in result.students:
        for q in result.questions:
            comment = "" if result.answers[s].get(q.id) else NO_ANSWER
            rows.append([s, q.id, "", points_text(q), comment])
    return rows


def manual_csv(result: Collected) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for row in [MANUAL_HEAD, *manual_rows(result)]:
        writer.writerow([csv_cell(x) for x in row])
    return buf.getvalue()


def key_csv(result: Collected) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(KEY_HEAD)
    for p, s in sorted((result.key or {}).items()):
        writer.writerow([p, s, result.not_read.get(p, "")])
    return buf.getvalue()


def line_numbers(result: Collected) -> dict[tuple[str, str], int]:
    """(student, question) -> its line in ``manual.csv`` (the header is line 1)."""
    rows = manual_rows(result)
    return {(r[0], r[1]): n for n, r in enumerate(rows, start=2)}


_STYLE = """body{font-family:sans-serif;margin:1.5em;max-width:60em;line-height:1.4}
.question{border-left:4px solid #268bd2;padding:.2em 1em;background:#f4f8fb}
.answer{border:1px solid #aaa;padding:.2em 1em;margin:.3em 0}
.none{color:#777;font-style:italic}
.box{font-family:monospace;background:#fdf6e3;padding:.3em .6em;display:inline-block}
.blank{display:inline-block;min-width:4em;border-bottom:1px solid #333}
pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;overflow-wrap:anywhere}
table{border-collapse:collapse}td,th{border:1px solid #aaa;padding:.2em .5em;text-align:left}
@media print{section{break-inside:avoid}}"""


def _head(title: str) -> list[str]:
    esc = html.escape
    return [
        f"<!doctype html><meta charset='utf-8'><title>{esc(title)}</title>",
        f"<style>{_STYLE}</style><h1>{esc(title)}</h1>",
    ]


def _how(result: Collected, table: str, href: str) -> str:
    blind = (
        " Students are shown under pseudonyms; the key is not among these files."
        if result.key
        else ""
    )
    esc = html.escape
    return (
        f"<p>Grade each answer in <a href='{esc(href)}'>{esc(table)}</a> (the answers "
        "folder's table): its line is given beside the answer. Fill <code>points</code> "
        "(and a <code>comment</code>, which the student reads in their feedback), then "
        f"import it: <code>course grade manual REPORT_DIR {esc(table)}</code>.{blind}</p>"
    )


def question_page(
    result: Collected, q: Question, lines: dict, table: str = MANUAL
) -> str:
    """One question: the prompt, the model answer, every student's answer with its box."""
    esc = html.escape
    name = shown(result.master.name)
    parts = _head(f"Written answers: {name}, {q.id}")
    parts.append("<p><a href='../index.html'>all questions</a></p>")
    parts.append(
        f"<div class='question'>{render(q.prompt) or '<p>(no question text)</p>'}</div>"
    )
    if q.model:
        parts.append(
            "<details><summary>Model answer (from the master)</summary>"
            f"<div class='answer'>{render(q.model)}</div></details>"
        )
    parts.append(_how(result, table, f"../{table}"))
    parts.append(
        f"<p>{result.answered(q.id)} of {len(result.students)} students answered.</p>"
    )
    top = "" if q.points is None else f" / {esc(points_text(q))}"
    for s in result.students:
        text = result.answers[s].get(q.id)
        if text:
            body = render(text)
        elif s in result.not_read:
            why = "" if result.key else f": {esc(result.not_read[s])}"
            body = (
                f"<p class='none'>{NO_ANSWER} (the notebook could not be read{why})</p>"
            )
        else:
            body = f"<p class='none'>{NO_ANSWER}</p>"
        box = (
            f"<span class='box'>points <span class='blank'></span>{top} · "
            f"{esc(table)} line {lines[s, q.id]} · {esc(s)}, {esc(q.id)}</span>"
        )
        parts.append(
            f"<section id='{esc(folder_name(s))}'><h2>{esc(s)}</h2>"
            f"<div class='answer'>{body}</div>{box}</section>"
        )
    return "\n".join(parts) + "\n"


def question_file(exercise: str) -> str:
    """The question's file under ``questions/``: one safe path component."""
    return f"{folder_name(exercise)}.html"


def index_page(result: Collected, table: str = MANUAL) -> str:
    esc = html.escape
    parts = _head(f"Written answers: {shown(result.master.name)}")
    parts.append(
        f"<p>{len(result.students)} students, {len(result.questions)} questions. "
        "Each page shows every student's answer to one question, in the same order.</p>"
    )
    parts.append(_how(result, table, table))
    parts.append("<table><tr><th>question</th><th>answered</th><th>points</th></tr>")
    for q in result.questions:
        link = f"<a href='questions/{esc(question_file(q.id))}'>{esc(q.id)}</a>"
        worth = esc(points_text(q)) or "(not given)"
        parts.append(
            f"<tr><td>{link}</td><td>{result.answered(q.id)} of "
            f"{len(result.students)}</td><td>{worth}</td></tr>"
        )
    parts.append("</table>")
    if result.not_read:
        who = ", ".join(sorted(result.not_read))
        parts.append(
            f"<p>Not read (every answer shows as {NO_ANSWER}): {esc(who)}.</p>"
        )
    if not result.key:  # a note may name a student
        parts += [f"<p>Note: {esc(n)}</p>" for n in result.notes]
    return "\n".join(parts) + "\n"


def _has_grading(path: Path) -> bool:
    """A ``manual.csv`` someone has started filling: points or comments of their own."""
    try:
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    except (OSError, UnicodeDecodeError, csv.Error):
        return True  # unreadable: not ours to overwrite
    return any(
        (r.get("points") or "").strip()
        or (r.get("comment") or "").strip() not in ("", NO_ANSWER)
        for r in rows
    )


def write(result: Collected, out: Path) -> tuple[list[Path], Path]:
    """The pages, the key (when anonymous) and the table; returns (written, table).

    A ``manual.csv`` in ``out`` that graders have begun to fill is never overwritten:
    the new table is then ``manual-new.csv``, and the pages name it."""
    table = out / MANUAL
    if table.exists() and _has_grading(table):
        table = out / "manual-new.csv"
    lines = line_numbers(result)
    written = [write_atomic(out / "index.html", index_page(result, table.name))]
    for q in result.questions:
        page = question_page(result, q, lines, table.name)
        written.append(write_atomic(out / "questions" / question_file(q.id), page))
    if result.key is not None:
        written.append(write_atomic(out / INSTRUCTOR / KEY, key_csv(result)))
    written.append(write_atomic(table, manual_csv(result)))
    return written, table
