"""The Sphinx extension of the course's site (named in the generated ``conf.py``).

- :func:`jupyterlab_slug`: heading anchors as JupyterLab makes them (``3. Checkpoints``
  -> ``3.-Checkpoints``), so the in-page links that work in JupyterLab work on the site;
  MyST calls it for every heading (``myst_heading_slug_func``), and
  :func:`add_jupyterlab_ids` adds it where MyST's text of the title falls short.
- :func:`wrap_pairs`: after a page is read, each side-by-side pair's cells (tagged by
  :func:`course_utils.tooling.site.side_by_side.mark_pairs` in the staged copy) go into one
  ``sbs-pair`` block that the site's stylesheet lays out in two columns on a wide
  screen and stacked on a narrow one, the parity cell under both. The block is also
  sphinx-book-theme's ``full-width``: on a wide screen it spans the page's table of
  contents, which the theme folds to its title while such a block is on screen.
- :func:`add_page_links`: on each page with a notebook, the theme's launch menu (Colab,
  Binder) gets Kaggle and SageMaker Studio Lab, for the same notebook of the tagged
  release; on each page with a source in the repository, the repository button becomes
  a menu with "Edit this page", "Open an issue" and the source at the release (a
  lesson's jupytext ``.py``, never its generated ``.ipynb``). Its values come from the
  generated ``conf.py`` (``course_repository``, ``course_release``,
  ``course_edit_branch``, ``course_sources``); without a repository there are none.
- :func:`describe_figures`: each figure's image gets its description as its alt text
  (``course_figure_alts``: what :func:`course_utils.plots.describe` stored with the
  output, by the image's name).
- :func:`add_language_switch`: every page's link to the other language's half (the
  same page there, else its home page), which the template
  :data:`course_utils.tooling.site.assets.SWITCH_TEMPLATE` shows before the header
  buttons; in the Chinese half the launch buttons open the Chinese notebook
  (``course_notebooks``).
- the copy buttons' script (:data:`COPY_FILE`, written by
  :mod:`course_utils.tooling.site.assets`) on every page.

Nothing here imports Sphinx or docutils at import time: only a build does.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlencode

from course_utils.tooling.notebooks import kaggle_url
from course_utils.tooling.site import languages as site_zh
from course_utils.tooling.site.languages import SUBDIR
from course_utils.tooling.site.side_by_side import TAGS

PAIR_CLASS = "sbs-pair"
# sphinx-book-theme's class for content wider than the prose (its JavaScript folds the
# page's table of contents while such an element is on screen).
FULL_WIDTH = "full-width"
CSS_FILE = "course-site.css"
COPY_FILE = "course-copy.js"
STUDIO_LAB = "https://studiolab.sagemaker.aws/import/github"
GITHUB = "https://github.com"


UNSAFE = set("\"'<>&")  # Sphinx writes ids into HTML unescaped


def jupyterlab_slug(title: str) -> str:
    """JupyterLab's heading id: the heading's text with each space replaced by ``-``
    ('' when it holds a character that an HTML id attribute would need escaped)."""
    slug = title.strip().replace(" ", "-")
    return "" if UNSAFE & set(slug) else slug


def add_jupyterlab_ids(app: Any, doctree: Any) -> None:
    """Give each section JupyterLab's id of its whole title too (MyST's slug leaves out
    what a heading holds beyond plain text and code, such as quotes)."""
    from docutils import nodes

    for section in doctree.findall(nodes.section):
        if not section.children or not isinstance(section[0], nodes.title):
            continue
        slug = jupyterlab_slug(section[0].astext())
        if slug and slug not in doctree.ids:
            section["ids"].append(slug)
            doctree.ids[slug] = section


def _has(node: Any, role: str) -> bool:
    return f"tag_{TAGS[role]}" in node.get("classes", [])


def wrap_pairs(app: Any, doctree: Any) -> None:
    """Put each tagged pair (either cell first) and its parity cell into one
    ``sbs-pair`` container, in the notebook's order."""
    from docutils import nodes

    starts = [
        n
        for n in doctree.findall(nodes.container)
        if _has(n, "torch") or _has(n, "jax")
    ]
    for first in starts:
        parent = first.parent
        if PAIR_CLASS in parent.get("classes", []):
            continue  # the second cell of a pair already wrapped
        index = parent.index(first)
        members = [first]
        for role in ("jax" if _has(first, "torch") else "torch", "parity"):
            at = index + len(members)
            nxt = parent[at] if at < len(parent) else None
            if isinstance(nxt, nodes.container) and _has(nxt, role):
                members.append(nxt)
        if len(members) < 2:
            continue
        block = nodes.container(classes=[PAIR_CLASS, FULL_WIDTH])
        for member in members:
            parent.remove(member)
            block += member
        parent.insert(index, block)


def describe_figures(app: Any, doctree: Any, docname: str) -> None:
    """Each figure's image gets its description as its alt text (myst-nb writes an
    output's image under the SHA-256 of its bytes, and Sphinx's default alt is that
    file's path); ``course_figure_alts`` maps those names to the descriptions."""
    from docutils import nodes

    alts = app.config.course_figure_alts
    for image in doctree.findall(nodes.image):
        name = PurePosixPath(str(image.get("uri", ""))).stem
        if name in alts:
            image["alt"] = alts[name]


def launch_buttons(repository: str, ref: str, relpath: str) -> list[dict[str, str]]:
    """The launch menu's Kaggle and SageMaker Studio Lab entries for the notebook at
    ``relpath`` (from the repository's root) of ``repository`` at ``ref``."""
    studio_lab = f"{STUDIO_LAB}/{repository}/blob/{ref}/{relpath}"
    return [
        {
            "type": "link",
            "text": "Kaggle",
            "tooltip": "Launch on Kaggle",
            "icon": "fab fa-kaggle",
            "url": kaggle_url(repository, ref, relpath),
            "label": "launch-kaggle",
        },
        {
            "type": "link",
            "text": "SageMaker Studio Lab",
            "tooltip": "Launch on SageMaker Studio Lab",
            "icon": "fab fa-aws",
            "url": studio_lab,
            "label": "launch-studio-lab",
        },
    ]


def source_buttons(
    repository: str, release: str, branch: str, page: str, source: str
) -> list[dict[str, str]]:
    """The links of a page with a ``source``: "Edit this page" (``source`` on ``branch``:
    GitHub edits a branch, never a tag), "Open an issue" (titled with ``source``, its
    body naming the page and the release) and the source as it is in ``release``."""
    repo = f"{GITHUB}/{repository}"
    issue = urlencode(
        {
            "title": f"{source}: ",
            "body": f"Page: {page}.html (source {source}, release {release})\n\n",
        }
    )
    name = source.rsplit("/", 1)[-1]
    return [
        {
            "type": "link",
            "text": "Edit this page",
            "tooltip": f"Edit {source} on GitHub",
            "icon": "fas fa-pencil-alt",
            "url": f"{repo}/edit/{branch}/{source}",
            "label": "source-edit-button",
        },
        {
            "type": "link",
            "text": "Open an issue",
            "tooltip": "Open an issue about this page",
            "icon": "fas fa-lightbulb",
            "url": f"{repo}/issues/new?{issue}",
            "label": "source-issues-button",
        },
        {
            "type": "link",
            "text": f"Source: {name} ({release})",
            "tooltip": f"{source} in release {release}",
            "icon": "fas fa-code",
            "url": f"{repo}/blob/{release}/{source}",
            "label": "source-file-button",
        },
    ]


def add_page_links(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """The page's extra launch targets and source links, into the theme's header buttons
    (connected after the theme has made them)."""
    config = app.config
    repository = config.course_repository
    buttons = context.get("header_buttons")
    if not repository or buttons is None:
        return
    theirs = f"/{pagename}.ipynb"  # the theme's path, from the staged tree's root
    notebook = config.course_notebooks.get(pagename, theirs[1:])
    for group in buttons:
        if group.get("label") == "launch-buttons":
            for button in group["buttons"]:
                if "url" in button:
                    button["url"] = button["url"].replace(theirs, f"/{notebook}")
            group["buttons"] += launch_buttons(
                repository, config.course_release, notebook
            )
    source = config.course_sources.get(pagename)
    if not source:
        return
    page = pagename if config.course_language == "en" else f"{SUBDIR}/{pagename}"
    links = source_buttons(
        repository, config.course_release, config.course_edit_branch, page, source
    )
    for index, button in enumerate(buttons):
        if button.get("label") == "source-repository-button":
            buttons[index] = {
                "type": "group",
                "tooltip": "Source repository",
                "icon": button["icon"],
                "buttons": [{**button, "text": "Repository"}, *links],
                "label": "source-buttons",
            }


def add_language_switch(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """The link to this page in the other language's half, or to that half's home page
    (its href, text and language, for the switch's template)."""
    config = app.config
    language = config.course_language
    switch = site_zh.SWITCH[language]
    context["course_switch"] = {
        "href": site_zh.switch_href(language, pagename, config.course_counterparts),
        "label": switch["label"],
        "lang": switch["lang"],
    }


def chinese_search() -> type:
    """Sphinx's Chinese search with the stemmer it names: it stems Latin words with the
    English stemmer but names it ``ChineseStemmer`` in ``language_data.js``, which
    stops every Chinese page's scripts (``ChineseStemmer is not defined``)."""
    from sphinx.search.zh import SearchChinese

    return type(
        "SearchChineseEnglishStemmer", (SearchChinese,), {"language_name": "English"}
    )


def setup(app: Any) -> dict[str, Any]:
    from sphinx import search

    search.languages["zh"] = chinese_search()
    app.add_config_value("course_repository", "", "html", str)
    app.add_config_value("course_release", "", "html", str)
    app.add_config_value("course_edit_branch", "", "html", str)
    app.add_config_value("course_sources", {}, "html", dict)
    app.add_config_value("course_figure_alts", {}, "html", dict)
    app.add_config_value("course_language", "en", "html", str)
    app.add_config_value("course_counterparts", {}, "html", dict)
    app.add_config_value("course_notebooks", {}, "html", dict)
    app.connect("html-page-context", add_language_switch)
    app.connect("doctree-read", add_jupyterlab_ids)
    app.connect("doctree-read", wrap_pairs)
    app.connect("doctree-resolved", describe_figures)
    # After sphinx-book-theme's header buttons (its handlers run at priority 501).
    app.connect("html-page-context", add_page_links, priority=502)
    app.add_css_file(CSS_FILE)
    app.add_js_file(COPY_FILE)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
