"""The Sphinx extension of the course's site (named in the generated ``conf.py``).

- :func:`jupyterlab_slug`: heading anchors as JupyterLab makes them (``3. Checkpoints``
  -> ``3.-Checkpoints``), so the in-page links that work in JupyterLab work on the site;
  MyST calls it for every heading (``myst_heading_slug_func``), and
  :func:`add_jupyterlab_ids` adds it where MyST's text of the title falls short.
- :func:`wrap_pairs`: after a page is read, each side-by-side pair's cells (tagged by
  :func:`course_utils.tooling.site_pairs.mark_pairs` in the staged copy) go into one
  ``sbs-pair`` block that the site's stylesheet lays out in two columns on a wide
  screen and stacked on a narrow one, the parity cell under both.

Nothing here imports Sphinx or docutils at import time: only a build does.
"""

from __future__ import annotations

from typing import Any

from course_utils.tooling.site_pairs import TAGS

PAIR_CLASS = "sbs-pair"
CSS_FILE = "course-site.css"


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
        block = nodes.container(classes=[PAIR_CLASS])
        for member in members:
            parent.remove(member)
            block += member
        parent.insert(index, block)


def setup(app: Any) -> dict[str, Any]:
    app.connect("doctree-read", add_jupyterlab_ids)
    app.connect("doctree-read", wrap_pairs)
    app.add_css_file(CSS_FILE)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
