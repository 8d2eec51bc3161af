"""Translated editions: notebooks and documents written from the English and a catalog.

The English stays the source. For each lesson (``notebooks/NN_*.ipynb``), student exercise
notebook (``exercises/*.ipynb``) and the README that has a catalog in
``locale/<language>/LC_MESSAGES/`` (:mod:`course_utils.tooling.translation.catalog`), ``course
translate`` writes ``notebooks/<language>/``, ``exercises/<language>/`` and
``README.<language>.md``: the same cells, ids, tags and metadata, the code cells byte for
byte, each markdown message replaced by its translation (a message not translated yet
stays English), the badges pointing at the translated notebook. The one code cell that
differs is a lesson's quiz cell, where the lesson's quiz has a version in the language
(``course_utils/quizzes/zh/``): its call gains ``language="zh"`` (:func:`quiz_call`).

``course translate --update`` merges the English into the catalogs (``--update NN``
starts one); ``course translate --check`` fails when a translated file differs from what
would be written, or a catalog lacks, leaves untranslated or fuzzy, or mistranslates a
message of its English source (see :func:`catalog.problems`).
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_utils import lessons, student_version
from course_utils._files import write_atomic
from course_utils.tooling import notebooks
from course_utils.tooling.errors import CourseError
from course_utils.tooling.translation import catalog

LANGUAGES = ("zh",)
# Stand for a notebook's badge line and for a written answer's stub while a cell is split
# (no words: never messages). The stub stays English: the grader and ``course grade
# answers`` recognise an unanswered cell by it.
_BADGES = "\x00\x01\x00"
_STUB = "\x00\x02\x00"
# What each language calls the badges' actions (the images stay the services' own).
BADGE_WORDS = {
    "zh": {
        "Open In Colab": "在 Colab 中打开",
        "Open In Kaggle": "在 Kaggle 中打开",
        "Binder": "在 Binder 中打开",
    }
}
# The line a translated README opens with, linking back to the English.
EDITION_LINE = {"zh": "[English](README.md) · 中文"}
# A lesson's quiz cell (docs/AUTHORING.md, "The review quiz"): the edition's passes its
# language when the quiz has a version in it.
QUIZ_CALL = re.compile(r'^(from course_utils import quiz\n\nquiz\.load\("([^"]+)")\)$')


def quiz_call(root: Path, source: str, language: str) -> str:
    """A code cell's source in the ``language`` edition: a quiz cell whose lesson has
    ``course_utils/quizzes/<language>/<lesson>.toml`` loads that version
    (``quiz.load("02_autodiff", language="zh")``); any other cell is ``source``."""
    match = QUIZ_CALL.match(source)
    quizzes = root / "course_utils" / "quizzes" / language
    if match and (quizzes / f"{match[2]}.toml").is_file():
        return f'{match[1]}, language="{language}")'
    return source


@dataclass(frozen=True)
class Source:
    """An English file with a translated edition: where it is and where the edition goes."""

    path: Path
    name: str
    target_rel: str


def sources(root: Path, language: str) -> list[Source]:
    """Every English lesson, student notebook and the README, with its edition's path."""
    out = []
    for kind in (lessons.LESSONS, lessons.STUDENTS):
        for nb in lessons.files(root, kind):
            out.append(Source(nb, nb.stem, f"{kind}/{language}/{nb.name}"))
    out.append(Source(root / "README.md", "README", f"README.{language}.md"))
    return out


def _english_rel(root: Path, src: Source) -> str:
    return str(src.path.relative_to(root))


def entries(root: Path, src: Source) -> list[catalog.Entry]:
    """The messages of one English source, each with where it is (cell id or line)."""
    rel = _english_rel(root, src)
    out = []
    if src.path.suffix == ".ipynb":
        import nbformat

        nb = nbformat.read(src.path, as_version=4)
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "markdown":
                continue
            text = _without_badges(cell.source, rel)
            for m in catalog.split(text).messages():
                out.append(catalog.Entry(m.text, f"{rel} cell {index} (id {cell.id})"))
        return out
    text = src.path.read_text(encoding="utf-8")
    line = 1
    for piece in catalog.split(text).items:
        if isinstance(piece, catalog.Message):
            out.append(catalog.Entry(piece.text, f"{rel} line {line}"))
            line += piece.text.count("\n") + piece.after.count("\n")
        else:
            line += piece.count("\n")
    return out


def _without_badges(source: str, rel: str) -> str:
    source = source.replace(notebooks.badges(rel), _BADGES)
    return source.replace(student_version.TEXT_STUB, _STUB)


def _badges(rel: str, language: str) -> str:
    text = notebooks.badges(rel)
    for english, word in BADGE_WORDS[language].items():
        text = text.replace(f"[![{english}]", f"[![{word}]")
    return text


def render(root: Path, src: Source, language: str, cat: Any) -> str:
    """The translated edition of ``src`` as its file's text."""
    done = catalog.translations(cat)

    def tr(text: str) -> str:
        return done.get(text, text)

    rel = _english_rel(root, src)
    if src.path.suffix != ".ipynb":
        text = catalog.split(src.path.read_text(encoding="utf-8")).render(tr)
        return EDITION_LINE[language] + "\n\n" + _edition_links(root, language, text)
    import nbformat

    nb = nbformat.read(src.path, as_version=4)
    split = [
        catalog.split(_without_badges(c.source, rel))
        if c.cell_type == "markdown"
        else None
        for c in nb.cells
    ]
    anchors = _anchors(split, tr)
    for cell, pieces in zip(nb.cells, split, strict=True):
        if pieces is None:
            if cell.cell_type == "code":
                cell.source = quiz_call(root, cell.source, language)
            continue
        text = pieces.render(tr)
        text = _LOCAL_LINK.sub(lambda m: f"](#{anchors.get(m[1], m[1])})", text)
        text = text.replace(_STUB, student_version.TEXT_STUB)
        cell.source = text.replace(_BADGES, _badges(src.target_rel, language))
    nb.metadata.pop("jupytext", None)
    nb.metadata["translation"] = {"language": language, "source": rel}
    return nbformat.writes(nb) + "\n"


_LOCAL_LINK = re.compile(r"\]\(#([^)\s]+)\)")
_LINK_TARGET = re.compile(r"\]\(([^)\s]+)\)")
_NOTEBOOK_PATH = re.compile(r"\b(notebooks|exercises)/([0-9][0-9]_\w+)\.ipynb")


def _edition_links(root: Path, language: str, text: str) -> str:
    """Link targets (badges included) that name an English notebook with an edition in
    ``language`` point at the edition (``notebooks/zh/...``); the others stay English.
    The catalog keeps the English targets; only the written file points elsewhere."""

    def edition(m: re.Match) -> str:
        kind, name = m[1], m[2]
        if catalog.catalog_path(root, language, name).exists():
            return f"{kind}/{language}/{name}.ipynb"
        return m[0]

    return _LINK_TARGET.sub(lambda m: f"]({_NOTEBOOK_PATH.sub(edition, m[1])})", text)


_HEADING_MARK = re.compile(r"^\s{0,3}#{1,6}\s+$")


def _anchor(heading: str) -> str:
    """JupyterLab's anchor of a heading (spaces to hyphens), which the site keeps too."""
    return heading.strip().replace(" ", "-")


def _anchors(split: list, tr) -> dict[str, str]:
    """Each English heading's anchor, mapped to its translation's: an in-page link keeps
    the English target in the catalog and points at the translated heading here."""
    out = {}
    for pieces in split:
        if pieces is None:
            continue
        items = pieces.items
        for before, piece in zip(items, items[1:], strict=False):
            if isinstance(piece, catalog.Message) and isinstance(before, str):
                if _HEADING_MARK.match(before):
                    out[_anchor(piece.text)] = _anchor(tr(piece.text))
    return out


def _catalog_for(root: Path, language: str, src: Source) -> Any | None:
    path = catalog.catalog_path(root, language, src.name)
    return catalog.read(path) if path.exists() else None


def update(root: Path, language: str, names: list[str]) -> list[str]:
    """Merge the English into every existing catalog and into new ones for ``names``."""
    wanted = {_match(root, language, n).name for n in names}
    written = []
    for src in sources(root, language):
        path = catalog.catalog_path(root, language, src.name)
        if not path.exists() and src.name not in wanted:
            continue
        before = path.read_text(encoding="utf-8") if path.exists() else None
        cat = _catalog_for(root, language, src)
        merged = catalog.update(cat, language, entries(root, src))
        catalog.write(path, merged)
        if path.read_text(encoding="utf-8") != before:
            written.append(str(path.relative_to(root)))
    return written


def _match(root: Path, language: str, name: str) -> Source:
    every = sources(root, language)
    candidates = [s for s in every if name in (s.name, str(s.path.relative_to(root)))]
    if not candidates:
        candidates = [s for s in every if s.name.startswith(f"{name}_")]
    of_lessons = [s for s in candidates if s.target_rel.startswith("notebooks/")]
    pick = candidates if len(candidates) == 1 else of_lessons
    if len(pick) != 1:
        names = ", ".join(s.name for s in every)
        raise CourseError(f"unknown or ambiguous source {name!r}; one of: {names}")
    return pick[0]


def build(
    root: Path, language: str, check: bool = False
) -> tuple[list[str], list[str]]:
    """Write (or, with ``check``, compare) every edition that has a catalog.

    Returns the editions written or drifted, and, with ``check``, every catalog problem.
    An edition whose catalog is gone is removed (reported as drift under ``check``).
    """
    changed, issues = [], []
    expected = set()
    for src in sources(root, language):
        cat = _catalog_for(root, language, src)
        target = root / src.target_rel
        if cat is None:
            if target.exists():
                if check:
                    changed.append(f"{src.target_rel} (no catalog)")
                else:
                    target.unlink()
                    changed.append(f"{src.target_rel} (removed: no catalog)")
            continue
        expected.add(target)
        text = render(root, src, language, cat)
        if check:
            issues += catalog.problems(cat, entries(root, src), src.name)
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                changed.append(src.target_rel)
        elif not target.exists() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, text)
            changed.append(src.target_rel)
    for kind in (lessons.LESSONS, lessons.STUDENTS):
        for stray in lessons.files(root, kind, language=language):
            if stray not in expected and stray.exists():
                changed.append(f"{stray.relative_to(root)} (no English source)")
    return changed, issues


def cmd_translate(args: argparse.Namespace) -> int:
    root = notebooks.course_root()
    language = args.language
    if args.update:
        for rel in update(root, language, args.names):
            print(f"updated {rel}")
    elif args.names:
        raise CourseError("name sources only with --update (to start their catalogs)")
    changed, issues = build(root, language, check=args.check)
    if args.check:
        for c in changed:
            print(f"out of date: {c} (run `course translate`)")
        for p in issues:
            print(p)
        if changed or issues:
            return 1
        print(f"every {language} edition matches its English source and catalog")
        return 0
    for c in changed:
        print(f"wrote {c}")
    print(f"{len(changed)} {language} file(s) updated")
    return 0


def add_commands(sub: Any) -> None:
    t = sub.add_parser(
        "translate",
        help="write the translated notebooks and README from the gettext catalogs",
    )
    t.add_argument(
        "names",
        nargs="*",
        metavar="SOURCE",
        help="with --update: start these catalogs (03, README)",
    )
    t.add_argument("--language", choices=LANGUAGES, default="zh")
    t.add_argument(
        "--update",
        action="store_true",
        help="merge the English into the catalogs first (new messages empty, changed ones fuzzy)",
    )
    t.add_argument(
        "--check",
        action="store_true",
        help="only report drift and unfinished or mistranslated messages; exit 1 if any",
    )
    t.set_defaults(func=cmd_translate)
