"""The site's Sphinx source tree, staged from the course's files (nothing is written twice).

The staged tree keeps the repository's layout (``notebooks/``, ``exercises/``,
``docs/``), so every relative link between those files works as it does on GitHub;
a link to any other file of the repository goes to that file in the tagged release.
The home page includes the README (its introduction, quick start, curriculum and how
to open the notebooks), the "About" page the rest of it. Lesson pages are the
executed copies, their side-by-side pairs tagged (:mod:`course_utils.tooling.site.side_by_side`),
their sharp bits (the cells that show an error through ``expect_error``) tagged
``expected-error`` so the stylesheet marks the printed line as an error, papermill's
injected cell and the badge line left out (the page has launch buttons), a banner
on a smoke run's pages, and a line after the title cell naming the release and the framework
versions its outputs came from (:func:`version_label`, from the record ``course run``
leaves in the executed copy's metadata; "versions unknown" without one). Every page's
footer says what the site was built from (:func:`build_label`).
"""

from __future__ import annotations

import base64
import hashlib
import html
import os
import posixpath
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from course_utils.tooling.notebooks import REPOSITORY, release_tag
from course_utils.tooling.site import side_by_side
from course_utils.tooling.translation.command import BADGE_WORDS

TITLE = "JAX and PyTorch, side by side"
README_SPLIT = "## CPU, GPU and TPU"
LINK = re.compile(r"\]\(([^()\s]+)\)")
# The badge line of a notebook, English or translated (translate.BADGE_WORDS).
COLAB_BADGES = ["Open In Colab", *(w["Open In Colab"] for w in BADGE_WORDS.values())]
BADGE_LINE = re.compile(rf"^\[!\[({'|'.join(map(re.escape, COLAB_BADGES))})\]")
# A cell showing a sharp bit's error: ``with expect_error(...)`` on a line of its own.
EXPECTED_ERROR = re.compile(r"^\s*with\s+expect_error\(", re.M)
EXPECTED_TAG = "expected-error"  # myst-nb gives its cell the class tag_expected-error
SMOKE_NOTE = (
    "```{admonition} Smoke run\n:class: warning course-smoke-banner\n"
    "This page shows a smoke run (`SMOKE = True`): every size is tiny, so its timings, "
    "curves and verdicts say little. `make site` builds the site from a full run.\n```"
)


VERSIONS_CLASS = "course-versions"
# What a lesson's label names, in this order, from the record's versions.
FRAMEWORKS = (("torch", "PyTorch"), ("jax", "JAX"), ("flax", "Flax"))
UNKNOWN = (
    "Outputs: versions unknown (this executed copy holds no record of the `course run` "
    "that made it: no release, commit or framework versions)."
)


def _release_words(record: dict[str, Any]) -> str:
    """'release v0.1.0 of the course (commit abc1234)', or what else a checkout was."""
    release = record.get("release") or "an unknown release"
    commit = record.get("commit")
    if not isinstance(commit, str) or not commit:
        return f"the course's {release} outside a git checkout (commit unknown)"
    if record.get("tagged") is True:
        words = f"release {release} of the course (commit {commit[:7]})"
    elif record.get("tagged") is False:
        words = f"commit {commit[:7]} of the course, not the release {release}"
    else:
        words = f"commit {commit[:7]} of the course ({release} or later)"
    if record.get("modified"):
        words += ", with local changes"
    return words


def version_label(record: Any) -> str:
    """The line after a lesson's title cell: the release and the framework versions its
    outputs came from, as ``course run`` recorded them (``metadata.course``)."""
    versions = record.get("versions") if isinstance(record, dict) else None
    if not isinstance(versions, dict) or not versions:
        text = UNKNOWN
    else:
        named = [
            f"{name} {versions[key]}" if versions.get(key) else f"no {name}"
            for key, name in FRAMEWORKS
        ]
        jaxlib = versions.get("jaxlib")
        if jaxlib and versions.get("jax") and jaxlib != versions["jax"]:
            named[1] += f" (jaxlib {jaxlib})"
        python = versions.get("python") or "unknown"
        text = (
            f"Outputs from {_release_words(record)}, run with Python {python}, "
            f"{', '.join(named[:-1])} and {named[-1]}."
        )
    return f"```{{container}} {VERSIONS_CLASS}\n{text}\n```"


def build_label(checkout: dict[str, Any]) -> str:
    """Every page's footer (HTML): the release or commit the site was built from."""
    if checkout.get("tagged") is True and not checkout.get("modified"):
        text = f"This site was built at {_release_words(checkout)}."
    else:
        text = (
            f"This site was built from {_release_words(checkout)}; its launch buttons "
            f"open the notebooks of release {checkout.get('release')}."
        )
    return f'<p class="{VERSIONS_CLASS}">{html.escape(text)}</p>'


DISCUSSIONS_CLASS = "course-discussions"


def discussions_url(repository: str) -> str:
    """The course's forum: the GitHub Discussions of ``repository`` (owner/name)."""
    return f"https://github.com/{repository}/discussions"


def discussions_line(repository: str) -> str:
    """Every page's footer line (HTML) that sends a question to the course's forum."""
    url = html.escape(discussions_url(repository), quote=True)
    return (
        f'<p class="{DISCUSSIONS_CLASS}">A question, an idea, something unclear? '
        f'Ask in the <a href="{url}">course\'s discussions on GitHub</a>.</p>'
    )


def github_url(path: str) -> str:
    """The file at ``path`` (from the repository's root) in the tagged release."""
    return f"https://github.com/{REPOSITORY}/blob/{release_tag()}/{path}"


def rewrite_links(text: str, source: str, staged: set[str]) -> str:
    """Relative Markdown links of ``source`` (a path from the root) that leave the site
    point at the repository instead; links to staged files stay as they are."""

    def fix(match: re.Match[str]) -> str:
        target = match[1]
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            return match[0]
        path, _, anchor = target.partition("#")
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
        if resolved in staged or resolved.startswith(".."):
            return match[0]
        return f"]({github_url(resolved)}{'#' + anchor if anchor else ''})"

    return LINK.sub(fix, text)


def _joined(text: str | list[str]) -> str:
    return "".join(text) if isinstance(text, list) else text


def _source(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def strip_badges(text: str) -> str:
    return "\n".join(
        line for line in text.split("\n") if not BADGE_LINE.match(line.strip())
    )


# The image outputs myst-nb renders, base64 in the notebook (an SVG is text).
IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/svg+xml")
NO_DESCRIPTION = (
    "shows a figure without a description (its image has no alt text): run the lesson "
    "again with `course run` (its env.setup() describes each matplotlib figure from "
    "its titles, axis labels and legend), and give a figure that has none of those a "
    "title or course_utils.plots.set_description(fig, text)"
)


def image_name(mime: str, content: Any) -> str:
    """The file name myst-nb gives an image output: the SHA-256 of its bytes."""
    if isinstance(content, list):
        content = "".join(content)
    if mime == "image/svg+xml":
        data = os.linesep.join(content.splitlines()).encode("utf-8")
    else:
        data = base64.b64decode(content)
    return hashlib.sha256(data).hexdigest()


def figures(cells: Iterable[Any]) -> Iterable[tuple[int, str, str, str | None]]:
    """Each image output of ``cells``: (cell index, its mime type, its file name's stem
    as myst-nb writes it, its alt text or None)."""
    for index, cell in enumerate(cells):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            mime = next((m for m in IMAGE_MIMES if m in data), None)
            if mime is None:
                continue
            alt = (out.get("metadata", {}).get(mime) or {}).get("alt")
            alt = alt.strip() if isinstance(alt, str) and alt.strip() else None
            yield index, mime, image_name(mime, data[mime]), alt


# An inline style that sets a text colour and a background colour (rich's HTML, as in
# jax.debug.visualize_array_sharding's grid of devices).
COLOURED = re.compile(
    r'style="(?P<style>[^"]*?background-color:\s*#(?P<bg>[0-9a-fA-F]{6})[^"]*)"'
)
TEXT_COLOUR = re.compile(r"(?<![-\w])(color|text-decoration-color):\s*#[0-9a-fA-F]{6}")


def _luminance(hex6: str) -> float:
    """WCAG's relative luminance of a colour ``rrggbb``."""
    channels = [int(hex6[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [
        c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels
    ]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def readable_text(html_text: str) -> str:
    """Each inline-styled span with a background gets black or white text, whichever
    contrasts more with it (JAX's sharding grid put white on light pink, 2.1:1)."""

    def fix(match: re.Match[str]) -> str:
        bg = _luminance(match["bg"])
        # contrast with black: (bg + 0.05) / 0.05; with white: 1.05 / (bg + 0.05)
        ink = "#000000" if (bg + 0.05) ** 2 > 0.0525 else "#ffffff"
        style = TEXT_COLOUR.sub(lambda m: f"{m[1]}: {ink}", match["style"])
        return f'style="{style}"'

    return COLOURED.sub(fix, html_text)


def notebook_page(
    nb: Any,
    source: str,
    staged: set[str],
    smoke: bool | None,
    label: str | None = None,
    smoke_note: str = SMOKE_NOTE,
) -> list[side_by_side.Pair]:
    """Prepare one notebook (an ``nbformat`` node, changed in place) as a site page;
    ``label`` (markdown) goes after its title cell, and on a smoke run's page
    ``smoke_note`` (the banner, in the page's language)."""
    import nbformat

    cells = [
        c for c in nb.cells if "injected-parameters" not in c.metadata.get("tags", [])
    ]
    for cell in cells:
        if cell.cell_type == "markdown":
            cell.source = rewrite_links(strip_badges(_source(cell)), source, staged)
        elif EXPECTED_ERROR.search(_source(cell)):
            cell.metadata.setdefault("tags", []).append(EXPECTED_TAG)
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/html" in data:
                data["text/html"] = readable_text(_joined(data["text/html"]))
    at = 1 if cells and cells[0].cell_type == "markdown" else 0
    if smoke:
        cells.insert(at, nbformat.v4.new_markdown_cell(smoke_note))
    if label:
        cells.insert(at, nbformat.v4.new_markdown_cell(label))
    nb.cells = cells
    return side_by_side.mark_pairs(nb.cells)


def readme_parts(readme: str, staged: set[str]) -> tuple[str, str]:
    """The README, links fixed and badges out, split into the home page's part and the rest."""
    text = rewrite_links(strip_badges(readme), "README.md", staged)
    head, sep, tail = text.partition(README_SPLIT)
    head = head.split("\n", 1)[1] if head.startswith("# ") else head
    return head, sep + tail


def toctree(caption: str, docs: Iterable[str]) -> str:
    lines = "\n".join(docs)
    return f"```{{toctree}}\n:caption: {caption}\n:maxdepth: 1\n\n{lines}\n```\n"


PDF_LINK = (
    '<p class="course-pdf">The whole course in one file, for paper or reading offline: '
    '<a href="{name}">{name}</a> (this page and every lesson with its outputs and '
    "figures, one bookmark per lesson).</p>\n"
)


def index_page(
    lessons: list[str], exercises: list[str], docs: list[str], pdf: str | None = None
) -> str:
    """The home page: the README's first part, then the site's table of contents;
    ``pdf``, the course's PDF beside it, linked before the contents."""
    return "\n".join(
        [
            f"# {TITLE}\n",
            "```{include} _readme_home.md\n```\n",
            PDF_LINK.format(name=pdf) if pdf else "",
            toctree("Lessons", (f"notebooks/{s}" for s in lessons)),
            toctree("Exercises", (f"exercises/{s}" for s in exercises)),
            toctree(
                "For instructors", ["claims", *(f"docs/{d}" for d in docs), "about"]
            ),
        ]
    )


ABOUT_PAGE = "# About the course\n\n```{include} _readme_about.md\n```\n"


def claims_page(results: list[dict[str, Any]], origin: str) -> str:
    """The ``course claims`` table of the machine(s) that ``results`` came from."""
    from course_utils.claims.results import machine_label, merge_table

    machines = "; ".join(machine_label(r) for r in results)
    return (
        "# Popular claims, measured\n\n"
        f"{origin} Machine: {machines}. Each verdict follows the course's one rule "
        "([docs/VERDICTS.md](docs/VERDICTS.md)); `course claims` measures them again on "
        "your machine.\n\n" + merge_table(results) + "\n"
    )


def conf_py(settings: dict[str, Any]) -> str:
    """``conf.py`` from plain values (each a literal Python can read back)."""
    lines = ['"""Generated by `course site`; edit course_utils/tooling/site*.py."""']
    lines += [f"{key} = {value!r}" for key, value in settings.items()]
    return "\n".join(lines) + "\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
