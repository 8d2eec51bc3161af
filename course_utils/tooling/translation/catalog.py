"""Translation catalogs: markdown split into messages, gettext ``.po`` files, their checks.

A markdown text (a notebook's markdown cell, a document) is cut into *pieces*: verbatim
text (blank lines, fenced code, display math, list markers, table rules, HTML comments) and
*messages*, one per paragraph, heading, list item, blockquote, table cell and ``<summary>``
line, the units a translator works on. Joining the pieces gives the text back byte for
byte; putting translations in place of the messages gives the translated text, with the
verbatim pieces (code above all) untouched.

Catalogs are gettext ``.po`` files (read and written by Babel, as Sphinx's own i18n does):
one per notebook or document under ``locale/<language>/LC_MESSAGES/``. A message whose
English changed turns *fuzzy* (Babel's merge, like ``msgmerge``), keeping the old
translation for the translator to revise; :func:`problems` reports it, with every message
that is untranslated or whose code spans, math, link targets, HTML tags or numbers differ
from the English.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

LOCALE_DIR = "locale"
PROJECT = "JAX and PyTorch, side by side"
BUGS = "https://github.com/jax-pytorch-side-by-side/course/issues"

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^(\s{0,3}#{1,6}\s+)(.*?)(\s*)$")
_ITEM = re.compile(r"^(\s*(?:[-*+]|\d{1,3}[.)])\s+)(\S.*)$")
_QUOTE = re.compile(r"^(\s*>\s?)(.*)$")
_TABLE_RULE = re.compile(r"^\s*\|?[\s:|-]*-[\s:|-]*\|?\s*$")
_SUMMARY = re.compile(r"^(\s*(?:<details>)?\s*<summary>)(.*?)(</summary>\s*)$")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
_TAG_LINE = re.compile(r"^\s*(?:</?[A-Za-z][^>]*>\s*)+$")

_CODE = re.compile(r"(`+)(.+?)\1", re.S)
_MATH = re.compile(r"(?<![$\\])\$(?!\$)([^$\n]+?)(?<!\\)\$")
_LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_URL = re.compile(r"<?https?://[^\s)>]+>?")
_TAG = re.compile(r"</?[A-Za-z][^>\n]*>")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[A-Za-z]{2,}")


@dataclass
class Message:
    """One translatable unit: its lines' prefixes, so a translation is laid out like it."""

    text: str
    prefixes: list[str]
    after: str = ""
    continuation: str = ""

    def render(self, translation: str) -> str:
        lines = translation.split("\n")
        out = []
        for k, line in enumerate(lines):
            if k < len(self.prefixes):
                prefix = self.prefixes[k]
            else:
                prefix = self.continuation
            out.append(prefix + line)
        return "\n".join(out) + self.after


@dataclass
class Pieces:
    """A markdown text as verbatim strings and :class:`Message` objects, in order."""

    items: list[str | Message] = field(default_factory=list)

    def messages(self) -> list[Message]:
        return [p for p in self.items if isinstance(p, Message)]

    def render(self, translate: Callable[[str], str] | None = None) -> str:
        out = []
        for p in self.items:
            if isinstance(p, Message):
                out.append(p.render(translate(p.text) if translate else p.text))
            else:
                out.append(p)
        return "".join(out)


def translatable(text: str) -> bool:
    """Whether ``text`` holds words once code, math, links and tags are taken out."""
    return bool(_WORD.search(_strip_fixed(text)))


def _strip_fixed(text: str) -> str:
    for pattern in (_CODE, _MATH, _LINK, _URL, _TAG):
        text = pattern.sub(" ", text)
    return text


def _starts_block(line: str) -> bool:
    return bool(
        not line.strip()
        or _FENCE.match(line)
        or _HEADING.match(line)
        or _ITEM.match(line)
        or line.lstrip().startswith("|")
        or line.lstrip().startswith("$$")
        or _COMMENT.match(line)
        or _TAG_LINE.match(line)
        or _SUMMARY.match(line)
    )


def split(markdown: str) -> Pieces:
    """Cut ``markdown`` into verbatim pieces and messages (see the module's docstring)."""
    lines = markdown.split("\n")
    pieces = Pieces()
    add = pieces.items.append
    i = 0
    n = len(lines)

    def newline(k: int) -> str:
        return "\n" if k < n - 1 else ""

    def message(prefixes: list[str], texts: list[str], last: int, cont: str) -> None:
        text = "\n".join(texts)
        if translatable(text):
            add(Message(text, prefixes, newline(last), cont))
        else:
            add(
                "\n".join(p + t for p, t in zip(prefixes, texts, strict=True))
                + newline(last)
            )

    while i < n:
        line = lines[i]
        end = _verbatim_end(lines, i)
        if end is not None:
            add("\n".join(lines[i : end + 1]) + newline(end))
            i = end + 1
            continue
        if not line.strip() or _COMMENT.match(line) or _TAG_LINE.match(line):
            add(line + newline(i))
            i += 1
            continue
        summary = _SUMMARY.match(line)
        if summary and translatable(summary.group(2)):
            add(summary.group(1))
            add(Message(summary.group(2), [""], summary.group(3) + newline(i)))
            i += 1
            continue
        if line.lstrip().startswith("|"):
            _table_row(line, add)
            add(newline(i))
            i += 1
            continue
        heading = _HEADING.match(line)
        if heading:
            add(heading.group(1))
            text, after = heading.group(2), heading.group(3) + newline(i)
            add(Message(text, [""], after) if translatable(text) else text + after)
            i += 1
            continue
        item = _ITEM.match(line)
        quote = _QUOTE.match(line)
        if item:
            prefixes, texts = [item.group(1)], [item.group(2)]
            default = " " * len(item.group(1))
        elif quote:
            prefixes, texts = [quote.group(1)], [quote.group(2)]
            default = quote.group(1)
        else:
            lead = line[: len(line) - len(line.lstrip())]
            prefixes, texts = [lead], [line[len(lead) :]]
            default = lead
        j = i + 1
        while j < n and not _starts_block(lines[j]):
            nxt = lines[j]
            q = _QUOTE.match(nxt) if quote else None
            lead = q.group(1) if q else nxt[: len(nxt) - len(nxt.lstrip())]
            prefixes.append(lead)
            texts.append(nxt[len(lead) :])
            j += 1
        cont = prefixes[1] if len(prefixes) > 1 else default
        message(prefixes, texts, j - 1, cont)
        i = j
    return pieces


def _verbatim_end(lines: list[str], i: int) -> int | None:
    """The last line of the fenced code or display math starting at line ``i``, if any."""
    line, n = lines[i], len(lines)
    fence = _FENCE.match(line)
    if fence:
        mark = fence.group(1)
        j = i + 1
        while j < n and not lines[j].lstrip().startswith(mark[0] * len(mark)):
            j += 1
        return min(j, n - 1)
    if line.lstrip().startswith("$$"):
        if line.strip() != "$$" and line.rstrip().endswith("$$"):
            return i
        j = i + 1
        while j < n and not lines[j].rstrip().endswith("$$"):
            j += 1
        return min(j, n - 1)
    return None


def _table_row(line: str, add: Callable[[str | Message], None]) -> None:
    if _TABLE_RULE.match(line):
        add(line)
        return
    for cell in _cells(line):
        if cell.startswith("|") or not cell.strip():
            add(cell)
            continue
        stripped = cell.strip()
        lead = cell[: len(cell) - len(cell.lstrip())]
        tail = cell[len(lead) + len(stripped) :]
        if translatable(stripped):
            add(lead)
            add(Message(stripped, [""], tail))
        else:
            add(cell)


def _cells(line: str) -> list[str]:
    """A table row as alternating separators and cells; ``|`` inside code is a cell's."""
    out, buf, code = [], [], 0
    k = 0
    while k < len(line):
        ch = line[k]
        if ch == "`":
            run = len(line[k:]) - len(line[k:].lstrip("`"))
            code = 0 if code == run else (run if code == 0 else code)
            buf.append(line[k : k + run])
            k += run
            continue
        if ch == "\\" and k + 1 < len(line):
            buf.append(line[k : k + 2])
            k += 2
            continue
        if ch == "|" and not code:
            out += ["".join(buf), "|"]
            buf = []
        else:
            buf.append(ch)
        k += 1
    out.append("".join(buf))
    return [c for c in out if c != ""]


# --- what a translation must keep ------------------------------------------------


def fixed_parts(text: str) -> dict[str, Counter]:
    """The parts of a message a translation keeps unchanged, by kind."""
    code = [m.group(0) for m in _CODE.finditer(text)]
    rest = _CODE.sub(" ", text)
    maths = [m.group(0) for m in _MATH.finditer(rest)]
    rest = _MATH.sub(" ", rest)
    links = [m.group(1) for m in _LINK.finditer(rest)]
    rest = _LINK.sub(" ", rest)
    urls = [m.group(0).strip("<>") for m in _URL.finditer(rest)]
    rest = _URL.sub(" ", rest)
    tags = [m.group(0) for m in _TAG.finditer(rest)]
    rest = _TAG.sub(" ", rest)
    numbers = [m.group(0).replace(",", "") for m in _NUMBER.finditer(rest)]
    return {
        "code span": Counter(code),
        "math": Counter(maths),
        "link target": Counter(links + urls),
        "HTML tag": Counter(tags),
        "number": Counter(numbers),
    }


def differences(english: str, translation: str) -> list[str]:
    """What ``translation`` lost or added of ``english``'s fixed parts, in words."""
    want, got = fixed_parts(english), fixed_parts(translation)
    out = []
    for kind in want:
        missing = want[kind] - got[kind]
        extra = got[kind] - want[kind]
        if missing:
            out.append(f"{kind} missing: {', '.join(sorted(missing))}")
        if extra:
            out.append(f"{kind} not in the English: {', '.join(sorted(extra))}")
    return out


# --- catalogs ---------------------------------------------------------------------


def catalog_path(root: Path, language: str, name: str) -> Path:
    """``locale/<language>/LC_MESSAGES/<name>.po``."""
    return root / LOCALE_DIR / language / "LC_MESSAGES" / f"{name}.po"


def read(path: Path):
    """The catalog at ``path`` (Babel's ``Catalog``); a broken file names itself."""
    from babel.messages.pofile import PoFileError, read_po

    from course_utils.tooling.errors import CourseError

    try:
        with open(path, "rb") as f:
            catalog = read_po(f, abort_invalid=True)
    except (PoFileError, ValueError, UnicodeDecodeError) as err:
        raise CourseError(f"{path}: not a readable gettext catalog: {err}") from None
    # Babel reads a fuzzy message's previous English (``#|``) only when it fits on one
    # line; a longer one comes back as translator comments starting with "|", which
    # would outlive the message's revision. The previous English is only a reviser's aid.
    for message in catalog:
        message.user_comments = [
            c for c in message.user_comments if not c.startswith("|")
        ]
    return catalog


def write(path: Path, catalog) -> None:
    """Write ``catalog`` (no obsolete entries; lines wrapped at 76 as msgmerge does)."""
    from babel.messages.pofile import write_po

    from course_utils._files import write_atomic

    buf = io.BytesIO()
    write_po(buf, catalog, width=76, ignore_obsolete=True, include_previous=True)
    text = buf.getvalue().decode("utf-8")
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)


@dataclass(frozen=True)
class Entry:
    """A message as a source holds it: its text and where (for messages and comments)."""

    text: str
    where: str


def update(catalog, language: str, entries: Iterable[Entry]):
    """``catalog`` (or a new one) merged with the English ``entries``: new messages
    empty, changed ones fuzzy with their old translation, removed ones dropped."""
    from babel.messages.catalog import Catalog

    template = Catalog(project=PROJECT, fuzzy=False)
    for e in entries:
        if e.text in template:
            template[e.text].auto_comments.append(e.where)
        else:
            template.add(e.text, auto_comments=[e.where])
    if catalog is None:
        catalog = Catalog(
            locale=language,
            project=PROJECT,
            version="",
            copyright_holder="the course's authors",
            msgid_bugs_address=BUGS,
            last_translator="the course's translators",
            language_team=f"{language} <{BUGS}>",
            fuzzy=False,
            header_comment=f"# {language} translations of {PROJECT}.\n"
            "# Distributed under the course's license (LICENSE).",
        )
        catalog.creation_date = template.creation_date
        catalog.revision_date = template.creation_date
    catalog.update(template, update_creation_date=False)
    for message in catalog:
        if message.id and message.fuzzy and not message.string:
            message.flags.discard("fuzzy")
    return catalog


def translations(catalog) -> dict[str, str]:
    """Each finished message's translation (not empty, not fuzzy)."""
    return {
        m.id: m.string
        for m in catalog
        if m.id and m.string and not m.fuzzy and isinstance(m.string, str)
    }


def problems(catalog, entries: Iterable[Entry], name: str) -> list[str]:
    """Every message of ``entries`` that ``catalog`` lacks, leaves untranslated or fuzzy,
    or translates with a code span, math, link target, tag or number changed."""
    out = []
    for e in entries:
        head = _head(e.text)
        message = catalog.get(e.text) if catalog is not None else None
        if message is None:
            out.append(
                f"{name}: {e.where}: “{head}” is not in the catalog (new or changed "
                "English): run `course translate --update`, then translate it"
            )
        elif not message.string:
            out.append(f"{name}: {e.where}: “{head}” is not translated")
        elif message.fuzzy:
            out.append(
                f"{name}: {e.where}: “{head}” is fuzzy (its English changed): revise "
                "the translation, then remove the fuzzy flag"
            )
        else:
            for d in differences(e.text, message.string):
                out.append(f"{name}: {e.where}: “{head}”: {d}")
    return out


def _head(text: str, width: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


# --- terminology --------------------------------------------------------------------


def glossary(path: Path) -> dict[str, str]:
    """A glossary's terms: the rows of its first table, ``| English | translation | … |``.

    An English cell may give several forms (``data parallel / data parallelism``); each
    maps to the row's translation. A row that is not two filled cells names the file.
    """
    from course_utils.tooling.errors import CourseError

    terms: dict[str, str] = {}
    rows = [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.lstrip().startswith("|") and not _TABLE_RULE.match(line)
    ]
    for number, row in enumerate(rows[1:], start=2):
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0] or not cells[1]:
            raise CourseError(
                f"{path}: table row {number} needs an English term and its translation"
            )
        for form in cells[0].split(" / "):
            terms[form.strip().lower()] = cells[1]
    return terms


def terminology(cat, terms: dict[str, str], name: str) -> list[str]:
    """Every finished translation whose English uses a glossary term (in prose, not code)
    without the term's translation."""
    out = []
    for english, translation in translations(cat).items():
        prose = _strip_fixed(english).lower()
        for term, wanted in terms.items():
            if (
                re.search(rf"(?<![\w-]){re.escape(term)}(?![\w-])", prose)
                and wanted not in translation
            ):
                out.append(
                    f"{name}: “{_head(english)}” uses “{term}”: its translation lacks “{wanted}”"
                )
    return out
