"""The site's side-by-side pairs: a ``# PyTorch`` cell, the mirrored ``# JAX`` cell, the parity cell.

A lesson marks its mirrored cells with their first line (``# PyTorch`` and ``# JAX``, in
either order, optionally followed by more words: ``# PyTorch: one step``), which
JupyterLab keeps whatever it saves. :func:`find_pairs` finds them in a notebook's cells at build time;
:func:`mark_pairs` gives the cells of each pair a tag (in the site's staged copy only)
that the Sphinx extension (:mod:`course_utils.tooling.site.extension`) turns into one
two-column block, the parity cell (the code cell right after the pair) under both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TORCH = re.compile(r"#\s*PyTorch\b")
JAX = re.compile(r"#\s*JAX\b")
# Tags the staged copy's cells get; myst-nb turns a tag into the class ``tag_<tag>``.
TAGS = {"torch": "sbs-torch", "jax": "sbs-jax", "parity": "sbs-parity"}


@dataclass(frozen=True)
class Pair:
    """Indices of one pair's cells in the notebook (``parity`` is None when absent);
    ``torch`` comes before ``jax`` in most pairs, after it in some."""

    torch: int
    jax: int
    parity: int | None


def first_line(cell: dict[str, Any]) -> str:
    """The first line of a code cell's source ('' for other cells)."""
    if cell.get("cell_type") != "code":
        return ""
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(source)
    return source.lstrip("\n").split("\n", 1)[0].strip()


def _framework(cell: dict[str, Any]) -> str | None:
    line = first_line(cell)
    if TORCH.match(line):
        return "torch"
    if JAX.match(line):
        return "jax"
    return None


def find_pairs(cells: Sequence[dict[str, Any]]) -> list[Pair]:
    """Every ``# PyTorch`` code cell directly followed by a ``# JAX`` code cell, or the
    other way round. The parity cell is the next cell when it is code that opens with
    neither comment.
    """
    pairs = []
    i = 0
    while i + 1 < len(cells):
        kinds = (_framework(cells[i]), _framework(cells[i + 1]))
        if kinds in (("torch", "jax"), ("jax", "torch")):
            nxt = cells[i + 2] if i + 2 < len(cells) else None
            parity = (
                i + 2
                if nxt is not None
                and nxt.get("cell_type") == "code"
                and _framework(nxt) is None
                else None
            )
            torch, jax = (i, i + 1) if kinds[0] == "torch" else (i + 1, i)
            pairs.append(Pair(torch, jax, parity))
            i += 3 if parity is not None else 2
        else:
            i += 1
    return pairs


def mark_pairs(cells: list[dict[str, Any]]) -> list[Pair]:
    """Tag each pair's cells in place (``sbs-torch``, ``sbs-jax``, ``sbs-parity``)."""
    pairs = find_pairs(cells)
    for pair in pairs:
        for role in ("torch", "jax", "parity"):
            index = getattr(pair, role)
            if index is None:
                continue
            meta = cells[index].setdefault("metadata", {})
            tags = list(meta.get("tags", []))
            meta["tags"] = [*tags, TAGS[role]]
    return pairs
