"""The staged source tree: links, the README's parts, lesson pages, conf.py."""

from __future__ import annotations

import ast

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from course_utils.tooling import site_pages

STAGED = {"docs/VERDICTS.md", "notebooks/03_jit_compilation.ipynb", "README.md"}


def test_links_that_leave_the_site_go_to_the_release():
    text = (
        "[rule](../docs/VERDICTS.md) [code](../course_utils/timing.py#L3) "
        "[lesson](03_jit_compilation.ipynb) [web](https://jax.dev) [here](#3.-Checkpoints)"
    )
    out = site_pages.rewrite_links(text, "notebooks/00_welcome_and_setup.ipynb", STAGED)
    assert "[rule](../docs/VERDICTS.md)" in out
    assert "[lesson](03_jit_compilation.ipynb)" in out
    assert f"[code]({site_pages.github_url('course_utils/timing.py')}#L3)" in out
    assert "[web](https://jax.dev)" in out and "[here](#3.-Checkpoints)" in out
    assert "/blob/v" in site_pages.github_url("x")


def test_the_readme_is_split_and_its_badges_dropped():
    readme = (
        "# Title\n\nWhat it is.\n\n[![Open In Colab](https://x/y.svg)](https://x)\n\n"
        "## Quickstart\n\nmake course\n\n## CPU, GPU and TPU\n\ntable\n"
    )
    home, about = site_pages.readme_parts(readme, STAGED)
    assert home.startswith("\nWhat it is.") and "Quickstart" in home
    assert "Open In Colab" not in home
    assert about.startswith("## CPU, GPU and TPU")


def test_a_lesson_page_loses_its_injected_cell_and_gets_the_banner():
    nb = new_notebook(
        cells=[
            new_markdown_cell("# 03 · Title\n\n[![Open In Colab](https://a/b.svg)](x)"),
            new_code_cell("# Parameters\nSMOKE = True\n"),
            new_code_cell("# PyTorch\n"),
            new_code_cell("# JAX\n"),
            new_code_cell("# JAX\nwith expect_error(TypeError):\n    x[0] = 1"),
        ]
    )
    nb.cells[1].metadata["tags"] = ["injected-parameters"]
    pairs = site_pages.notebook_page(nb, "notebooks/03_x.ipynb", STAGED, smoke=True)
    assert len(pairs) == 1 and len(nb.cells) == 5
    assert [c.metadata.get("tags", []) for c in nb.cells[2:]] == [
        ["sbs-torch"],
        ["sbs-jax"],
        [site_pages.EXPECTED_TAG],
    ]
    assert nb.cells[0].source.strip() == "# 03 · Title"
    assert "course-smoke-banner" in nb.cells[1].source
    nbformat.validate(nb)


def test_index_lists_every_page_and_conf_py_reads_back():
    index = site_pages.index_page(["00_a"], ["00_a_exercises"], ["GRADING"])
    for doc in ("notebooks/00_a", "exercises/00_a_exercises", "docs/GRADING", "claims"):
        assert f"\n{doc}\n" in index
    conf = site_pages.conf_py({"x": [1, "a"], "y": {"k": True}})
    tree = ast.parse(conf)
    assert [n.targets[0].id for n in tree.body[1:]] == ["x", "y"]
