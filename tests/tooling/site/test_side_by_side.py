"""The side-by-side pairs: found from the first-line comments, in every lesson."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell

from course_utils.tooling.site import side_by_side
from course_utils.tooling.site.side_by_side import Pair

ROOT = Path(__file__).resolve().parents[3]
LESSONS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))


def test_a_pair_and_its_parity_cell():
    cells = [
        new_markdown_cell("# PyTorch is not a code cell here"),
        new_code_cell("# PyTorch\nx = 1"),
        new_code_cell("# JAX: the same\ny = 1"),
        new_code_cell("assert_close(x, y)"),
        new_code_cell("# PyTorch: alone"),
        new_markdown_cell("prose"),
        new_code_cell("\n# PyTorch\na = 1"),
        new_code_cell("# JAX\nb = 1"),
        new_code_cell("# JAX\nc = 1"),
        new_code_cell("# PyTorch: the other way round\nd = 1"),
        new_code_cell("assert_close(c, d)"),
    ]
    assert side_by_side.find_pairs(cells) == [
        Pair(1, 2, 3),
        Pair(6, 7, None),
        Pair(torch=9, jax=8, parity=10),
    ]


def test_comments_must_be_the_first_line_and_the_word_whole():
    cells = [new_code_cell("x = 1\n# PyTorch"), new_code_cell("# JAXish\n")]
    assert side_by_side.find_pairs(cells) == []
    cells = [new_code_cell("# PyTorchLightning"), new_code_cell("# JAX")]
    assert side_by_side.find_pairs(cells) == []


def test_mark_pairs_tags_the_staged_cells():
    cells = [
        new_code_cell("# PyTorch\n"),
        new_code_cell("# JAX\n"),
        new_code_cell("ok"),
    ]
    cells[0].metadata["tags"] = ["expected-error"]  # site_pages tags sharp bits first
    side_by_side.mark_pairs(cells)
    assert cells[0].metadata["tags"] == ["expected-error", "sbs-torch"]
    assert [c.metadata["tags"][-1] for c in cells[1:]] == ["sbs-jax", "sbs-parity"]


def _pairs_in_source(text: str) -> int:
    """An independent count from the jupytext source: `# %%` code cells whose first
    line is `# PyTorch...` directly followed by one whose first line is `# JAX...`, or
    the other way round."""
    cells = re.split(r"^# %%.*$", text, flags=re.M)[1:]
    heads = re.findall(r"^# %%(.*)$", text, flags=re.M)
    firsts = [
        "" if "[markdown]" in h else (c.strip("\n").split("\n", 1)[0])
        for h, c in zip(heads, cells, strict=True)
    ]
    count, i = 0, 0
    while i + 1 < len(firsts):
        pair = firsts[i : i + 2]
        torch = [bool(re.match(r"#\s*PyTorch\b", line)) for line in pair]
        jax = [bool(re.match(r"#\s*JAX\b", line)) for line in pair]
        if torch in ([True, False], [False, True]) and jax == [not t for t in torch]:
            count += 1
            i += 2
        else:
            i += 1
    return count


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_lessons_pairs_are_found(lesson):
    nb = nbformat.read(ROOT / "notebooks" / f"{lesson}.ipynb", as_version=4)
    found = side_by_side.find_pairs(nb.cells)
    source = (ROOT / "notebooks" / f"{lesson}.py").read_text(encoding="utf-8")
    assert len(found) == _pairs_in_source(source)
    assert found, (
        f"{lesson} has no `# PyTorch` / `# JAX` pair of code cells side by side"
    )
    for pair in found:
        assert abs(pair.torch - pair.jax) == 1
        assert side_by_side.first_line(nb.cells[pair.torch]).startswith("# PyTorch")
        assert side_by_side.first_line(nb.cells[pair.jax]).startswith("# JAX")
