"""The prose check: how long each lesson reads, and how long its sentences are.

``course prose`` prints one row per lesson and per student notebook and fails when a
lesson is over its budget (docs/AUTHORING.md, "How prose is counted"). The budgets come
from documents readers hold up as models (the JAX docs, the Flax NNX guides, uvadlc,
d2l): about 17 words a sentence, few over 40, none over 60, few parentheses.

What counts, in markdown cells only:

- inline code, a math span and a link's text each count as they read: a code or math
  span is one word, a link is its text; images, HTML tags and comments count nothing;
- headings and table rows are words but not sentences;
- every other paragraph and every list item is split into sentences at ``.``, ``!`` or
  ``?`` followed by a space and a word that does not start in lower case;
- text folded in ``<details>`` counts like any other: a fold keeps a rare case out of the
  reader's way, not out of the budget.

Code comments are counted apart (``comment words``), so that prose cannot move into
comments unnoticed, and the characters of markdown per character of code keep a lesson
from reading like a script.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_utils import lessons as manifest

# The budgets of one lesson and of the whole course (docs/AUTHORING.md).
MAX_WORDS = 8_000
MAX_MEAN = 19.0
MAX_P90 = 32
MAX_SHARE_OVER_40 = 0.03
MAX_OVER_60 = 0
MAX_PARENS_PER_1000 = 10.0
MAX_COURSE_WORDS = 75_000
MIN_PROSE_RATIO = 0.8
WORDS_PER_MINUTE = 200

_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_CODE = re.compile(r"``(?:[^`]|`(?!`))+``|`[^`\n]+`")
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.DOTALL)
_WORD = re.compile(r"[\w\u00C0-\uFFFF]")
# A sentence ends at . ! or ? (perhaps closed by a quote or a bracket), then a space
# and a word that does not start in lower case.
_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[^a-z\s])")
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_TOKEN = "X"  # what a code or math span becomes: one word


@dataclass
class Prose:
    """The counts of one notebook."""

    path: str
    words: int = 0
    sentences: list[int] = field(default_factory=list)
    parens: int = 0
    comment_words: int = 0
    markdown_chars: int = 0
    code_chars: int = 0
    long: list[tuple[int, str]] = field(default_factory=list)  # (cell, sentence)

    @property
    def minutes(self) -> float:
        return self.words / WORDS_PER_MINUTE

    @property
    def mean(self) -> float:
        return sum(self.sentences) / len(self.sentences) if self.sentences else 0.0

    @property
    def p90(self) -> int:
        if not self.sentences:
            return 0
        ranked = sorted(self.sentences)
        return ranked[max(0, math.ceil(0.9 * len(ranked)) - 1)]

    @property
    def over_40(self) -> float:
        n = len(self.sentences)
        return sum(1 for k in self.sentences if k > 40) / n if n else 0.0

    @property
    def over_60(self) -> int:
        return sum(1 for k in self.sentences if k > 60)

    @property
    def parens_per_1000(self) -> float:
        return 1000 * self.parens / self.words if self.words else 0.0

    @property
    def prose_ratio(self) -> float:
        return self.markdown_chars / max(self.code_chars, 1)


def _plain(text: str) -> str:
    """Markdown to the words a reader reads: code and math as one word each."""
    text = _HTML_COMMENT.sub(" ", text)
    text = _IMAGE.sub(" ", text)
    text = _CODE.sub(_TOKEN, text)
    text = _MATH.sub(_TOKEN, text)
    text = _LINK.sub(r"\1", text)
    text = _TAG.sub(" ", text)
    return text.replace("**", "").replace("__", "")


def count_words(text: str) -> int:
    """Words in plain text: tokens holding a letter or a digit."""
    return sum(1 for tok in text.split() if _WORD.search(tok))


def split_sentences(paragraph: str) -> list[str]:
    """One paragraph of plain text as its sentences."""
    return [s.strip() for s in _END.split(paragraph) if count_words(s)]


def _blocks(source: str) -> Iterable[tuple[str, str]]:
    """(kind, text) for each block of a markdown cell: prose, heading or table."""
    para: list[str] = []
    fenced = False

    def flush() -> Iterable[tuple[str, str]]:
        if para:
            yield "prose", " ".join(para)
            para.clear()

    for raw in source.splitlines():
        line = raw.strip()
        if line.startswith("```") or line.startswith("~~~"):
            yield from flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        if not line:
            yield from flush()
        elif line.startswith("#"):
            yield from flush()
            yield "heading", line.lstrip("#")
        elif line.startswith("|"):
            yield from flush()
            if not re.fullmatch(r"[|:\-\s]+", line):
                yield "table", line.replace("|", " ")
        elif _LIST.match(line):
            yield from flush()
            para.append(_LIST.sub("", line))
        else:
            para.append(line.lstrip("> "))
    yield from flush()


def _comment_words(code: str) -> int:
    n = 0
    for line in code.splitlines():
        s = line.strip()
        if s.startswith("#") and not s.startswith(
            ("# %%", "#!", "# TESTS", "# HIDDEN")
        ):
            n += count_words(s.lstrip("#"))
        elif "  # " in line:
            n += count_words(line.split("  # ", 1)[1])
    return n


def measure(nb: Any, path: str = "") -> Prose:
    """Count the prose of a notebook (an nbformat node or anything with ``cells``)."""
    p = Prose(path=path)
    for index, cell in enumerate(nb.cells):
        source = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        if cell.cell_type == "code":
            p.code_chars += len(source)
            p.comment_words += _comment_words(source)
            continue
        if cell.cell_type != "markdown":
            continue
        p.markdown_chars += len(source)
        for kind, block in _blocks(source):
            text = _plain(block)
            p.parens += text.count("(")
            if kind != "prose":
                p.words += count_words(text)
                continue
            for sentence in split_sentences(text):
                k = count_words(sentence)
                p.words += k
                p.sentences.append(k)
                if k > 40:
                    p.long.append((index, sentence))
    return p


def budget_failures(p: Prose) -> list[str]:
    """What in a lesson is over its budget, one phrase each."""
    out = []
    if p.words > MAX_WORDS:
        out.append(f"{p.words:,} words (budget {MAX_WORDS:,})")
    if p.mean > MAX_MEAN:
        out.append(f"mean sentence {p.mean:.1f} words (budget {MAX_MEAN:g})")
    if p.p90 > MAX_P90:
        out.append(f"90th percentile {p.p90} words (budget {MAX_P90})")
    if p.over_40 > MAX_SHARE_OVER_40:
        out.append(
            f"{p.over_40:.1%} of sentences over 40 words (budget {MAX_SHARE_OVER_40:.0%})"
        )
    if p.over_60 > MAX_OVER_60:
        out.append(f"{p.over_60} sentence(s) over 60 words (budget {MAX_OVER_60})")
    if p.parens_per_1000 > MAX_PARENS_PER_1000:
        out.append(
            f"{p.parens_per_1000:.1f} parentheses per 1,000 words (budget {MAX_PARENS_PER_1000:g})"
        )
    if p.prose_ratio < MIN_PROSE_RATIO:
        out.append(
            f"{p.prose_ratio:.2f} characters of prose per character of code "
            f"(at least {MIN_PROSE_RATIO})"
        )
    return out


HEADER = (
    f"{'notebook':<50} {'words':>6} {'min':>4} {'mean':>5} {'p90':>4} "
    f"{'>40':>6} {'>60':>4} {'(/1k':>5} {'comm':>5} {'ratio':>5}"
)


def row(p: Prose) -> str:
    return (
        f"{p.path:<50} {p.words:>6} {p.minutes:>4.0f} {p.mean:>5.1f} {p.p90:>4} "
        f"{p.over_40:>6.1%} {p.over_60:>4} {p.parens_per_1000:>5.1f} "
        f"{p.comment_words:>5} {p.prose_ratio:>5.2f}"
    )


def total(rows: list[Prose], name: str) -> Prose:
    t = Prose(path=name)
    for p in rows:
        t.words += p.words
        t.sentences += p.sentences
        t.parens += p.parens
        t.comment_words += p.comment_words
        t.markdown_chars += p.markdown_chars
        t.code_chars += p.code_chars
    return t


def _read(path: Path) -> Any:
    if path.suffix == ".py":
        from course_utils.tooling.notebooks import read_py

        return read_py(path)
    import nbformat

    return nbformat.read(path, as_version=4)


# A lesson's or a student notebook's name starts with its two-digit number.
NUMBERED = "[0-9][0-9]"


def lessons(root: Path) -> list[Path]:
    """The lessons' ``.py`` sources."""
    return manifest.files(root, manifest.LESSONS, ".py", number=NUMBERED)


def student_notebooks(root: Path) -> list[Path]:
    return manifest.files(root, manifest.STUDENTS, number=NUMBERED)


def report(
    root: Path, names: list[str] | None = None, long: bool = False
) -> tuple[str, bool]:
    """The table for the lessons (all, or those whose name starts with one of ``names``)."""
    chosen = [p for p in lessons(root) if not names or p.stem.startswith(tuple(names))]
    rows = [measure(_read(p), p.relative_to(root).as_posix()) for p in chosen]
    lines = [HEADER]
    failed = False
    for p in rows:
        lines.append(row(p))
        for f in budget_failures(p):
            failed = True
            lines.append(f"    over budget: {f}")
        if long:
            for cell, sentence in p.long:
                lines.append(
                    f"    cell {cell}, {count_words(sentence)} words: {sentence}"
                )
    if not names:
        course = total(rows, "all lessons")
        lines.append(row(course))
        if course.words > MAX_COURSE_WORDS:
            failed = True
            lines.append(
                f"    over budget: {course.words:,} words (budget {MAX_COURSE_WORDS:,})"
            )
        students = [
            measure(_read(p), p.relative_to(root).as_posix())
            for p in student_notebooks(root)
        ]
        if students:
            lines.append("")
            lines.append(
                HEADER.replace("notebook", "student notebook", 1)[: len(HEADER)]
            )
            lines.extend(row(p) for p in students)
    return "\n".join(lines), failed


def cmd_prose(args: argparse.Namespace) -> int:
    from course_utils.tooling.notebooks import course_root

    text, failed = report(course_root(), args.lessons or None, long=args.long)
    print(text)
    print(
        f"\nBudgets a lesson: {MAX_WORDS:,} words, mean sentence {MAX_MEAN:g}, p90 {MAX_P90}, "
        f"{MAX_SHARE_OVER_40:.0%} over 40 words, none over 60, {MAX_PARENS_PER_1000:g} "
        f"parentheses per 1,000 words, {MIN_PROSE_RATIO} characters of prose per character "
        f"of code; the course {MAX_COURSE_WORDS:,} words (docs/AUTHORING.md)."
    )
    return 1 if failed else 0


def add_commands(sub: Any) -> None:
    p = sub.add_parser(
        "prose", help="how long each lesson reads; fails on a lesson over its budget"
    )
    p.add_argument(
        "lessons",
        nargs="*",
        metavar="NN",
        help="lesson numbers or names (default: all)",
    )
    p.add_argument(
        "--long",
        action="store_true",
        help="list every sentence over 40 words, with its cell",
    )
    p.set_defaults(func=cmd_prose)
