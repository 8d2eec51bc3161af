"""How alike a class's solution cells are: ``course grade similarity``.

Evidence for a person to read, never a penalty: nothing here reads or writes a grade.

Each student's cells for each exercise are found as the grader finds them
(:func:`.inputs.submissions.discover`, then :func:`.inputs.submissions.match`), and
fingerprinted by winnowing (copydetect's: its tokenizer replaces every name with ``V``,
``F`` for functions, and every string with ``S``, and drops comments and white space,
so a copy with renamed variables still matches; the k-gram hash is a stable one here,
see :func:`kgram_hashes`). What everyone was given is subtracted first: every code cell of the starter notebook (the student version of the master, or
``--starter``: stubs, setup, visible tests, the lesson code it holds), the lesson of
the same number in ``notebooks/`` beside the master's folder, and any ``--boilerplate``
file. Then every pair of students is compared, per exercise and over all exercises.

A pair's *share* for one student is the part of that student's fingerprinted code
(copydetect's tokens: characters of the normalised code) also found in the other's;
its *score* is the larger of the two shares. :func:`write` writes, per exercise and
overall, a ranked CSV and a self-contained HTML page (no script, no CDN) showing the
top pairs' code side by side with the matching regions marked.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from course_utils import lessons, student_version
from course_utils._files import write_atomic
from course_utils.errors import CourseError
from course_utils.grading.inputs.ipynb import SubmissionError, read_cells
from course_utils.grading.inputs.master import Master
from course_utils.grading.inputs.names import csv_cell, folder_name, shown
from course_utils.grading.inputs.submissions import discover, match

NOISE = 25  # copydetect's defaults: a match shorter than this (normalised characters)
GUARANTEE = 30  # is ignored; one at least this long is always found
# Characters of one student's code for one exercise that are compared.
MAX_CODE = 200_000
SHOW = 20  # pairs shown side by side on each page
NOTICE = (
    "Similarity is evidence for a person to read, never a penalty: a high score says "
    "where to look, not what happened. Short exercises, the only natural solution and "
    "code from a shared source (a lesson, the documentation, a hint) score high too. "
    "Nothing here reads or changes a grade."
)
_NUMBERED = re.compile(r"^(\d+)_.*_exercises\.ipynb$")


def _copydetect():
    try:
        # Imported when a report is made: copydetect imports matplotlib.
        import copydetect
        from copydetect import utils
    except ModuleNotFoundError:
        raise CourseError(
            "grade similarity needs copydetect: pip install 'copydetect>=0.5.0' "
            "(make install adds it, with the dev extra)"
        ) from None
    return copydetect, utils


@dataclass
class Pair:
    """Two students compared on one exercise, or on all of them (``exercises`` then)."""

    a: str
    b: str
    share_a: float  # part of a's fingerprinted code found in b's
    share_b: float
    matched_a: int  # copydetect's tokens of a's code that match
    matched_b: int
    slices: dict[str, tuple] = field(default_factory=dict)  # exercise -> (a's, b's)
    # On the overall list: the pair's score on each exercise both have code for.
    exercises: dict[str, float] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return max(self.share_a, self.share_b)


@dataclass
class Similarity:
    master: Path
    exercises: list[str]
    code: dict[str, dict[str, str]]  # student -> exercise -> their code
    problems: dict[str, str]  # student -> why they were not compared
    notes: list[str]
    subtracted: list[str]  # what everyone was given, as shown to the reader
    noise: int
    guarantee: int
    by_exercise: dict[str, list[Pair]]  # ranked, highest score first
    overall: list[Pair]
    # student -> exercise ("" for all of them) -> the part of their code (after the
    # subtraction) that is the master's own solution: on short exercises every correct
    # pair can score high, and this tells a copy of the answer key apart
    master_share: dict[str, dict[str, float]] = field(default_factory=dict)

    def solution(self, student: str, exercise: str = "") -> str:
        """The student's share of the master's solution, for a table (blank: no code)."""
        value = self.master_share.get(student, {}).get(exercise)
        return "" if value is None else f"{value:.3f}"

    def missing(self, exercise: str) -> list[str]:
        """The compared students without code for ``exercise``."""
        return [s for s in sorted(self.code) if exercise not in self.code[s]]


def _code_cells(cells: list[dict]) -> list[str]:
    return [
        c["source"] for c in cells if c["cell_type"] == "code" and c["source"].strip()
    ]


@dataclass
class Given:
    """What everyone was given: the starter notebook's code cells, each exercise's starter."""

    cells: list[str]
    starters: dict[str, str]  # exercise -> its starter cell(s), as a student finds them
    where: str  # where they come from, for the report


def starter_code(master: Master, starter: Path | None = None) -> Given:
    """The starter notebook's code: ``--starter``, else the master's student version."""
    if starter is not None:
        try:
            cells = read_cells(starter.resolve())
        except (SubmissionError, OSError) as err:
            raise CourseError(f"--starter {starter}: {err}") from None
        where = shown(str(starter))
    else:
        nb = {"cells": read_cells(master.path.resolve())}
        try:
            cells = student_version.student_version(nb, str(master.path))["cells"]
        except student_version.MarkerError as err:
            raise CourseError(
                f"--master {master.path}: its starter code cannot be built ({err}); "
                "pass the notebook the students were given with --starter"
            ) from None
        where = f"the student version of {shown(master.path.name)}"
    # The starter's own exercise cells, found as a student's are.
    starters = {
        ex: "\n".join(src) for ex, src in match(master, cells).student_code.items()
    }
    return Given(_code_cells(cells), starters, where)


def lesson_notebooks(master_path: Path) -> list[Path]:
    """The lesson of a course master ``NN_<name>_exercises.ipynb``: ``../notebooks/NN_*.ipynb``."""
    m = _NUMBERED.match(master_path.name)
    if not m:
        return []
    root = master_path.resolve().parent.parent
    found = lessons.files(root, lessons.LESSONS, number=m[1])
    return [p for p in found if not p.name.endswith("_exercises.ipynb")]


def boilerplate_code(path: Path) -> list[str]:
    """A ``--boilerplate`` file's code: a notebook's code cells, or any text file whole."""
    try:
        if path.suffix == ".ipynb":
            return _code_cells(read_cells(path.resolve()))
        return [path.read_text(encoding="utf-8", errors="replace")]
    except (SubmissionError, OSError) as err:
        raise CourseError(f"--boilerplate {path}: {err}") from None


def blank_lines(text: str, starter: str) -> str:
    """``text`` with each line that ``starter`` holds (white space aside) turned into
    spaces: the same length, so positions in it are positions in ``text``."""
    given = {line.strip() for line in starter.split("\n")} - {""}
    lines = text.split("\n")
    out = [" " * len(line) if line.strip() in given else line for line in lines]
    if _odd(out) != _odd(lines):
        # A docstring kept in part: blanking its given lines would leave a quote open
        # and turn the rest of the code into one string, so lines with quotes stay.
        out = [
            b if _quotes(a) == (0, 0) else a for a, b in zip(lines, out, strict=True)
        ]
    return "\n".join(out)


def _quotes(line: str) -> tuple[int, int]:
    return line.count('"""'), line.count("'''")


def _odd(lines: list[str]) -> tuple[int, int]:
    counts = [_quotes(line) for line in lines]
    return sum(c[0] for c in counts) % 2, sum(c[1] for c in counts) % 2


@dataclass
class Fingerprint:
    """One student's code for one exercise, as :func:`copydetect.compare_files` reads it."""

    k: int
    filtered_code: str  # the code with names as V and F, strings as S, no comments
    offsets: Any  # copydetect's map from filtered positions back to the code's
    hash_idx: dict[int, list[int]]  # fingerprint -> where it starts in filtered_code
    hashes: set[int] = field(init=False)
    # Characters of filtered_code that the fingerprints cover.
    token_coverage: float = field(init=False)

    def __post_init__(self) -> None:
        _, utils = _copydetect()
        self.hashes = set(self.hash_idx)
        self.token_coverage = utils.get_token_coverage(
            self.hash_idx, self.k, len(self.filtered_code)
        )


def kgram_hashes(doc: str, k: int) -> np.ndarray:
    """A stable 64-bit hash of each k-gram of ``doc``. copydetect's own uses ``hash()``,
    which Python salts per process: its winnowing, and so a pair's score, changed from
    one run to the next."""
    data = [
        doc[i : i + k].encode("utf-8", "surrogatepass") for i in range(len(doc) - k + 1)
    ]
    digests = (hashlib.blake2b(d, digest_size=8).digest() for d in data)
    return np.array(
        [int.from_bytes(d, "little", signed=True) for d in digests], dtype=np.int64
    )


class Fingerprints:
    """Winnowed fingerprints of a student's code (copydetect's normalising and winnowing),
    less what everyone was given.

    Two subtractions: the lines of the exercise's starter cell are blanked before
    fingerprinting, so that no k-gram runs from the starter into the student's code
    (the signature and docstring everyone shares would otherwise join every pair's
    first match); then every k-gram of the given code cells, lessons and boilerplate
    files is dropped from the fingerprints.
    """

    def __init__(
        self,
        given: list[str],
        starters: dict[str, str] | None = None,
        noise: int = NOISE,
        guarantee: int = GUARANTEE,
    ):
        if noise < 1 or guarantee < noise:
            raise CourseError(
                f"--noise {noise} and --guarantee {guarantee}: need 1 <= noise <= guarantee"
            )
        self.noise, self.window = noise, guarantee - noise + 1
        self.starters = starters or {}
        # Every k-gram of what was given, not only its winnowed ones, so that none
        # survives because the winnowing of the given code picked a neighbour.
        self.given: set[int] = set()
        for text in given:
            self.given.update(kgram_hashes(self._filtered(text)[0], noise).tolist())

    def _filtered(self, text: str):
        _, utils = _copydetect()
        return utils.filter_code(text, "code.py", "python")

    def __call__(self, text: str, exercise: str | None = None) -> Fingerprint:
        """The fingerprints of a student's code for ``exercise``."""
        _, utils = _copydetect()
        filtered, offsets = self._filtered(
            blank_lines(text, self.starters.get(exercise, ""))
        )
        hashes = kgram_hashes(filtered, self.noise)
        picked, where = utils.winnow(hashes, self.window, remove_duplicates=False)
        # The given k-grams are dropped here, not by copydetect's `boilerplate=` (0.5.0),
        # which runs np.intersect1d(assume_unique=True) on winnowed hashes that repeat:
        # it drops repeats of a student's own k-grams and keeps repeats of given ones.
        hash_idx: dict[int, list[int]] = {}
        for h, i in zip(picked.tolist(), where.tolist(), strict=True):
            if h not in self.given:
                hash_idx.setdefault(h, []).append(i)
        return Fingerprint(self.noise, filtered, offsets, hash_idx)


def collect(
    submissions: Path, master: Master, lms: str | None = None
) -> tuple[dict[str, dict[str, str]], dict[str, str], list[str]]:
    """(student -> exercise -> code, student -> why not compared, notes); ``lms``: ids
    from that LMS's download names."""
    subs, notes = discover(submissions, master.path.name, lms)
    if not subs:
        raise CourseError(
            f"SUBMISSIONS {shown(str(submissions))}: no notebooks "
            "(one .ipynb or one folder per student)"
        )
    code: dict[str, dict[str, str]] = {}
    problems: dict[str, str] = {}
    for sub in subs:
        if sub.problem or sub.path is None:
            problems[sub.student] = sub.problem or "no notebook"
            continue
        try:
            cells = read_cells(sub.path)
        except SubmissionError as err:
            problems[sub.student] = f"{shown(sub.path.name)}: {err}"
            continue
        mine = match(master, cells).student_code
        code[sub.student] = {}
        for ex in master.exercises:
            if ex not in mine:
                continue
            text = "\n\n".join(mine[ex])
            if len(text) > MAX_CODE:
                notes.append(
                    f"{sub.student}: {ex}: only the first {MAX_CODE} characters "
                    f"of {len(text)} were compared"
                )
                text = text[:MAX_CODE]
            code[sub.student][ex] = text
    return code, problems, notes


def _ranked(pairs: list[Pair]) -> list[Pair]:
    return sorted(
        pairs, key=lambda p: (-p.score, -(p.matched_a + p.matched_b), p.a, p.b)
    )


def compare(
    code: dict[str, dict[str, str]], exercises: list[str], fingerprints: Fingerprints
) -> tuple[dict[str, list[Pair]], list[Pair]]:
    """Every pair of students, per exercise and over all exercises, ranked."""
    copydetect, _ = _copydetect()
    students = sorted(code)
    prints = {
        (s, ex): fingerprints(text, ex)
        for s in students
        for ex, text in code[s].items()
    }
    covered = {
        s: sum(fp.token_coverage for (t, _), fp in prints.items() if t == s)
        for s in students
    }
    by_exercise: dict[str, list[Pair]] = {}
    totals = {
        pair: Pair(*pair, 0.0, 0.0, 0, 0)
        for pair in itertools.combinations(students, 2)
    }
    for ex in exercises:
        pairs = []
        for a, b in itertools.combinations(
            [s for s in students if (s, ex) in prints], 2
        ):
            fa, fb = prints[a, ex], prints[b, ex]
            _, (share_a, share_b), slices = copydetect.compare_files(fa, fb)
            matched_a = round(share_a * fa.token_coverage)
            matched_b = round(share_b * fb.token_coverage)
            pair = Pair(a, b, float(share_a), float(share_b), matched_a, matched_b)
            if matched_a:
                pair.slices[ex] = slices
            pairs.append(pair)
            total = totals[a, b]
            total.matched_a += matched_a
            total.matched_b += matched_b
            total.slices.update(pair.slices)
            total.exercises[ex] = pair.score
        by_exercise[ex] = _ranked(pairs)
    for (a, b), total in totals.items():
        total.share_a = total.matched_a / covered[a] if covered[a] else 0.0
        total.share_b = total.matched_b / covered[b] if covered[b] else 0.0
    return by_exercise, _ranked(list(totals.values()))


def master_solutions(master: Master) -> dict[str, str]:
    """Each exercise's solution in the master, its marker lines taken out."""
    markers = (student_version.BEGIN_SOLUTION, student_version.END_SOLUTION)
    out: dict[str, list[str]] = {}
    for cell in master.cells:
        if cell.role == "solution" and cell.exercise:
            lines = [x for x in cell.source.splitlines() if x.strip() not in markers]
            out.setdefault(cell.exercise, []).append("\n".join(lines))
    return {ex: "\n\n".join(cells) for ex, cells in out.items()}


def against_master(
    code: dict[str, dict[str, str]], solutions: dict[str, str], fingerprints
) -> dict[str, dict[str, float]]:
    """Per student and exercise (and ``""`` for all), the part of their code found in
    the master's solution."""
    copydetect, _ = _copydetect()
    theirs = {ex: fingerprints(text, ex) for ex, text in solutions.items()}
    shares: dict[str, dict[str, float]] = {}
    for student, mine in code.items():
        shares[student] = {}
        matched = covered = 0
        for ex, text in mine.items():
            if ex not in theirs:
                continue
            fp = fingerprints(text, ex)
            _, (share, _), _ = copydetect.compare_files(fp, theirs[ex])
            shares[student][ex] = float(share)
            matched += round(share * fp.token_coverage)
            covered += fp.token_coverage
        shares[student][""] = matched / covered if covered else 0.0
    return shares


def similarity(
    submissions: Path,
    master: Master,
    *,
    starter: Path | None = None,
    boilerplate: tuple[Path, ...] = (),
    noise: int = NOISE,
    guarantee: int = GUARANTEE,
    lms: str | None = None,
) -> Similarity:
    """Compare every pair of the class's submissions against ``master``'s exercises."""
    given = starter_code(master, starter)
    subtracted = [f"{given.where} ({len(given.cells)} code cells)"]
    cells = list(given.cells)
    for path in [*lesson_notebooks(master.path), *boilerplate]:
        more = boilerplate_code(path)
        cells += more
        subtracted.append(f"{shown(str(path))} ({len(more)} code cells)")
    fingerprints = Fingerprints(cells, given.starters, noise, guarantee)
    code, problems, notes = collect(submissions, master, lms)
    by_exercise, overall = compare(code, master.exercises, fingerprints)
    shares = against_master(code, master_solutions(master), fingerprints)
    return Similarity(
        master.path,
        master.exercises,
        code,
        problems,
        notes,
        subtracted,
        noise,
        guarantee,
        by_exercise,
        overall,
        shares,
    )


# ---- the report ------------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _csv(rows: list[list]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for row in rows:
        writer.writerow([csv_cell(x) for x in row])
    return buf.getvalue()


_HEAD = [
    "rank",
    "student_a",
    "student_b",
    "score",
    "share_a",
    "share_b",
    "matched_a",
    "matched_b",
]


def _row(rank: int, p: Pair) -> list:
    shares = (f"{p.score:.3f}", f"{p.share_a:.3f}", f"{p.share_b:.3f}")
    return [rank, p.a, p.b, *shares, p.matched_a, p.matched_b]


def exercise_csv(
    pairs: list[Pair], result: Similarity | None = None, exercise: str = ""
) -> str:
    """One exercise's pairs, with (given ``result``) each student's match with the
    master's solution on it."""
    if result is None:
        return _csv([_HEAD] + [_row(i, p) for i, p in enumerate(pairs, 1)])
    head = _HEAD + ["master_a", "master_b"]
    rows = [
        _row(i, p) + [result.solution(p.a, exercise), result.solution(p.b, exercise)]
        for i, p in enumerate(pairs, 1)
    ]
    return _csv([head] + rows)


def overall_csv(result: Similarity) -> str:
    head = _HEAD + ["master_a", "master_b"]
    head += [f"exercise:{ex}" for ex in result.exercises]
    rows = [
        _row(i, p)
        + [result.solution(p.a), result.solution(p.b)]
        + [
            f"{p.exercises[ex]:.3f}" if ex in p.exercises else ""
            for ex in result.exercises
        ]
        for i, p in enumerate(result.overall, 1)
    ]
    return _csv([head] + rows)


_STYLE = """body{font-family:sans-serif;margin:1.5em;max-width:110em}
.notice{border:2px solid #b58900;background:#fdf6e3;padding:.6em 1em}
table{border-collapse:collapse}td,th{border:1px solid #aaa;padding:.2em .5em;text-align:left}
.side{display:grid;grid-template-columns:1fr 1fr;gap:1em}
pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;overflow-wrap:anywhere;font-size:90%}
mark{background:#ffd54f}"""


def _code_html(text: str, slices) -> str:
    if slices is None or not len(slices[0]):
        return html.escape(text)
    _, utils = _copydetect()
    marked, _ = utils.highlight_overlap(
        text, slices, "<mark>", "</mark>", escape_html=True
    )
    return marked


def _side_by_side(result: Similarity, p: Pair, exercises: list[str]) -> list[str]:
    esc = html.escape
    parts = []
    for ex in exercises:
        if ex not in result.code[p.a] or ex not in result.code[p.b]:
            continue
        sl = p.slices.get(ex, (None, None))
        parts.append(f"<h4>{esc(ex)}</h4><div class='side'>")
        for who, slices in ((p.a, sl[0]), (p.b, sl[1])):
            code = _code_html(result.code[who][ex], slices)
            parts.append(f"<div><b>{esc(who)}</b><pre>{code}</pre></div>")
        parts.append("</div>")
    return parts


def _intro_html(
    result: Similarity, pairs: list[Pair], exercises: list[str]
) -> list[str]:
    """What was compared, what was subtracted, who was not compared and why."""
    esc = html.escape
    parts = [
        f"<p class='notice'>{esc(NOTICE)}</p>",
        f"<p>Master: {esc(shown(str(result.master)))}. Compared: {len(result.code)} "
        f"students, {len(pairs)} pairs. Subtracted before comparing (what everyone was "
        f"given): {esc('; '.join(result.subtracted))}. Matches shorter than "
        f"{result.noise} normalised characters are ignored; matches of "
        f"{result.guarantee} or more are always found.</p>",
    ]
    if result.problems:
        parts.append(
            "<h2>Not compared</h2><table><tr><th>student</th><th>why</th></tr>"
        )
        for student, why in sorted(result.problems.items()):
            parts.append(f"<tr><td>{esc(student)}</td><td>{esc(why)}</td></tr>")
        parts.append("</table>")
    for ex in exercises:
        if result.missing(ex):
            parts.append(
                f"<p>No code for {esc(ex)}: {esc(', '.join(result.missing(ex)))}.</p>"
            )
    parts += [f"<p>Note: {esc(note)}</p>" for note in result.notes]
    return parts


_COLUMNS = ("rank", "student a", "student b", "score", "share a", "share b",
            "matched tokens a / b", "master a", "master b")  # fmt: skip


def _ranking_html(
    pairs: list[Pair], linked: int, result: Similarity, exercise: str = ""
) -> list[str]:
    """The pairs that score above 0, highest first; the first ``linked`` link to their code."""
    esc = html.escape
    zero = sum(1 for p in pairs if p.score == 0)

    def solution(student: str) -> str:
        value = result.master_share.get(student, {}).get(exercise)
        return "" if value is None else _pct(value)

    parts = [
        "<h2>Pairs, highest score first</h2>",
        "<p>Score: the larger of the two shares; a student's share is the part of their "
        "code (after the subtraction) found in the other's, in copydetect's tokens "
        f"(characters of the normalised code). {zero} of {len(pairs)} pairs share "
        "nothing beyond what was given and are in the CSV only. Master a and b: the "
        "part of each student's code that is the master's own solution; where every "
        "correct pair scores high (a short exercise), a copy of the answer key stands "
        "out here.</p>",
        "<table><tr>" + "".join(f"<th>{h}</th>" for h in _COLUMNS) + "</tr>",
    ]
    for i, p in enumerate((p for p in pairs if p.score > 0), 1):
        rank = f"<a href='#pair-{i}'>{i}</a>" if i <= linked else str(i)
        cells = [rank, esc(p.a), esc(p.b), _pct(p.score), _pct(p.share_a),
                 _pct(p.share_b), f"{p.matched_a} / {p.matched_b}",
                 solution(p.a), solution(p.b)]  # fmt: skip
        parts.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    parts.append("</table>")
    return parts


def page(
    result: Similarity,
    title: str,
    pairs: list[Pair],
    exercises: list[str],
    links: list[tuple[str, str]],
    show: int = SHOW,
) -> str:
    """One self-contained HTML page: the notice, the ranked pairs, the top ones side by side."""
    esc = html.escape
    top = [p for p in pairs if p.score > 0][:show]
    parts = [
        f"<!doctype html><meta charset='utf-8'><title>{esc(title)}</title>",
        f"<style>{_STYLE}</style><h1>{esc(title)}</h1>",
    ]
    if links:
        anchors = (f"<a href='{esc(h)}'>{esc(t)}</a>" for t, h in links)
        parts.append("<p>" + " · ".join(anchors) + "</p>")
    parts += _intro_html(result, pairs, exercises)
    one = exercises[0] if len(exercises) == 1 and pairs is not result.overall else ""
    parts += _ranking_html(pairs, len(top), result, one)
    if top:
        parts.append(f"<h2>The top {len(top)} pairs side by side</h2>")
    for i, p in enumerate(top, 1):
        parts.append(
            f"<h3 id='pair-{i}'>{i}. {esc(p.a)} and {esc(p.b)}: {_pct(p.score)}</h3>"
        )
        parts += _side_by_side(result, p, exercises)
    return "\n".join(parts) + "\n"


def exercise_file(exercise: str) -> str:
    """The exercise's file stem under ``exercises/``: one safe path component."""
    return folder_name(exercise)


def write(result: Similarity, out: Path, show: int = SHOW) -> list[Path]:
    """``overall.csv``, ``overall.html`` and ``exercises/<id>.csv|.html`` under ``out``."""
    name = shown(result.master.name)
    stems = {ex: exercise_file(ex) for ex in result.exercises}
    links = [(ex, f"exercises/{stems[ex]}.html") for ex in result.exercises]
    title = f"Similarity: {name}, all exercises"
    overall = page(result, title, result.overall, result.exercises, links, show)
    written = [
        write_atomic(out / "overall.csv", overall_csv(result)),
        write_atomic(out / "overall.html", overall),
    ]
    back = [("all exercises", "../overall.html")]
    for ex, pairs in result.by_exercise.items():
        title = f"Similarity: {name}, exercise {ex}"
        one = page(result, title, pairs, [ex], back, show)
        written += [
            write_atomic(
                out / "exercises" / f"{stems[ex]}.csv", exercise_csv(pairs, result, ex)
            ),
            write_atomic(out / "exercises" / f"{stems[ex]}.html", one),
        ]
    return written
