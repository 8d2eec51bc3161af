"""Errors shown on purpose go through the course's expected-error helper, never a cell tag.

A sharp bit's error is printed by ``course_utils.expect.expect_error`` in a line or
two, so every notebook runs to its end under any runner (plain papermill, nbconvert,
Colab's Run All), and a sharp bit that stops raising fails its cell. Cell tags such as
``raises-exception`` are read by some front ends only, and ``%xmode Minimal`` is no
longer needed to keep an error short.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")) + sorted(
    (ROOT / "solutions").glob("[0-9][0-9]_*.py")
)
NOTEBOOKS = [
    p
    for folder in ("notebooks", "solutions", "exercises")
    for p in sorted((ROOT / folder).glob("[0-9][0-9]_*.ipynb"))
]
CELL = re.compile(r"^# %%(.*)$", re.MULTILINE)
HELPER = "expect_error"
BROAD = {"Exception", "BaseException"}


def cells(source: str) -> list[tuple[str, str]]:
    """(header, body) of every cell in a jupytext percent file."""
    marks = list(CELL.finditer(source))
    return [
        (
            m.group(1),
            source[m.end() : marks[i + 1].start() if i + 1 < len(marks) else None],
        )
        for i, m in enumerate(marks)
    ]


def _with_items(tree: ast.AST) -> set[int]:
    """ids of the calls that are a ``with`` statement's context expressions."""
    return {
        id(item.context_expr)
        for node in ast.walk(tree)
        if isinstance(node, ast.With | ast.AsyncWith)
        for item in node.items
    }


def _is_helper(call: ast.Call) -> bool:
    f = call.func
    return (isinstance(f, ast.Name) and f.id == HELPER) or (
        isinstance(f, ast.Attribute) and f.attr == HELPER
    )


def _broad(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return handler.type is None or any(
        isinstance(k, ast.Name) and k.id in BROAD for k in kinds
    )


def problems(source: str) -> list[str]:
    """Where a notebook source breaks the rule, as ``cell N: what``."""
    found = []
    for i, (header, body) in enumerate(cells(source)):
        if "raises-exception" in header:
            found.append(
                f"cell {i}: tagged raises-exception; wrap the code in `with {HELPER}(...)`"
            )
        if "[markdown]" in header:
            continue
        if re.search(r"^# %xmode\b", body, re.M):
            found.append(f"cell {i}: `%xmode` is not needed, {HELPER} prints one line")
        try:
            tree = ast.parse(body)
        except SyntaxError:
            continue
        in_with = _with_items(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and _is_helper(node)
                and id(node) not in in_with
            ):
                found.append(f"cell {i}: {HELPER}(...) outside a `with` statement")
        for node in tree.body:  # a cell that catches any error to show it by hand
            if isinstance(node, ast.Try) and any(_broad(h) for h in node.handlers):
                found.append(
                    f"cell {i}: catches every error at the top of the cell; "
                    f"show the expected one with `with {HELPER}(SomeError):`"
                )
    return found


def test_the_rule_finds_tags_xmode_bare_calls_and_broad_catches():
    bad = (
        "# %%\n# %xmode Minimal\n\n"
        '# %% tags=["raises-exception"]\nraise ValueError\n\n'
        "# %%\nexpect_error(ValueError)\n\n"
        "# %%\ntry:\n    f()\nexcept Exception as err:\n    print(err)\n"
    )
    assert [p.split(":")[0] for p in problems(bad)] == [
        "cell 0",
        "cell 1",
        "cell 2",
        "cell 3",
    ]
    good = (
        "# %% [markdown]\n# `%xmode Minimal` is what IPython offers.\n\n"
        '# %% tags=["parameters"]\nSMOKE = None\n\n'
        "# %%\nwith expect_error(ValueError, lines=2):\n    raise ValueError('x')\n\n"
        "# %%\nwith expect_error(KeyError), other():\n    f()\n\n"
        "# %%\ntry:\n    import flatbuffers\nexcept ImportError:\n    pass\n\n"
        "# %%\ndef probe():\n    try:\n        f()\n    except Exception:\n        return 1\n"
    )
    assert problems(good) == []


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_expected_errors_go_through_the_helper(source):
    found = problems(source.read_text(encoding="utf-8"))
    assert not found, (
        f"{source.relative_to(ROOT)}: "
        + "; ".join(found)
        + " (docs/AUTHORING.md, sharp bits)"
    )


@pytest.mark.parametrize(
    "notebook", NOTEBOOKS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS]
)
def test_no_notebook_cell_is_tagged_raises_exception(notebook):
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    tagged = [
        i
        for i, cell in enumerate(nb["cells"])
        if "raises-exception" in cell.get("metadata", {}).get("tags", [])
    ]
    assert not tagged, (
        f"{notebook.relative_to(ROOT)}: cells {tagged} are tagged raises-exception; "
        f"edit the .py source to use `with {HELPER}(...)` and run `course sync`"
    )
