"""The staged source tree: links, the README's parts, lesson pages, conf.py."""

from __future__ import annotations

import ast

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from course_utils.tooling.site import pages as site_pages

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


RECORD = {
    "release": "v0.1.0",
    "commit": "abcdef0123456789",
    "tagged": True,
    "modified": False,
    "versions": {
        "python": "3.11.7",
        "torch": "2.13.0+cpu",
        "jax": "0.10.2",
        "jaxlib": "0.10.2",
        "flax": "0.12.8",
    },
}


def _text(label: str) -> str:
    head, text, tail = label.split("\n")
    assert head == f"```{{container}} {site_pages.VERSIONS_CLASS}" and tail == "```"
    return text


def test_the_version_label_names_the_release_and_the_frameworks():
    assert _text(site_pages.version_label(RECORD)) == (
        "Outputs from release v0.1.0 of the course (commit abcdef0), run with "
        "Python 3.11.7, PyTorch 2.13.0+cpu, JAX 0.10.2 and Flax 0.12.8."
    )
    later = {**RECORD, "tagged": False, "modified": True}
    later["versions"] = {**RECORD["versions"], "jaxlib": "0.10.1", "flax": None}
    assert _text(site_pages.version_label(later)) == (
        "Outputs from commit abcdef0 of the course, not the release v0.1.0, with local "
        "changes, run with Python 3.11.7, PyTorch 2.13.0+cpu, JAX 0.10.2 (jaxlib 0.10.1) "
        "and no Flax."
    )
    outside = {**RECORD, "commit": None, "tagged": None}
    assert "v0.1.0 outside a git checkout (commit unknown)" in site_pages.version_label(
        outside
    )


def test_a_copy_without_a_record_says_versions_unknown():
    for record in (None, {}, {"release": "v0.1.0"}, {"versions": "3.11"}, "x"):
        text = _text(site_pages.version_label(record))
        assert text.startswith("Outputs: versions unknown"), record
        assert "PyTorch" not in text and "v0.1.0" not in text


def test_the_footer_says_whether_the_site_was_built_at_the_release():
    at = site_pages.build_label({**RECORD, "versions": None})
    assert at == (
        '<p class="course-versions">This site was built at release v0.1.0 of the '
        "course (commit abcdef0).</p>"
    )
    after = site_pages.build_label({**RECORD, "tagged": False})
    assert "built from commit abcdef0 of the course, not the release v0.1.0;" in after
    assert "launch buttons open the notebooks of release v0.1.0" in after
    edited = site_pages.build_label({**RECORD, "modified": True})
    assert (
        "built from release v0.1.0 of the course (commit abcdef0), with local" in edited
    )


def test_the_label_follows_the_title_cell():
    nb = new_notebook(
        cells=[new_markdown_cell("# 03 · Title"), new_code_cell("# PyTorch\n")]
    )
    label = site_pages.version_label(RECORD)
    site_pages.notebook_page(nb, "notebooks/03_x.ipynb", STAGED, True, label)
    assert nb.cells[1].source == label
    assert "course-smoke-banner" in nb.cells[2].source


def test_coloured_html_output_gets_the_text_colour_that_contrasts_most():
    grid = (
        '<pre><span style="color: #ffffff; text-decoration-color: #ffffff; '
        'background-color: #de9ed6">  CPU 3  </span>'
        '<span style="color: #000000; background-color: #393b79">CPU 0</span>'
        '<span style="color: #c0c0c0">plain</span></pre>'
    )
    fixed = site_pages.readable_text(grid)
    assert (
        'style="color: #000000; text-decoration-color: #000000; '
        'background-color: #de9ed6"' in fixed
    )  # white on light pink measured 2.1:1, black 10:1
    assert 'style="color: #ffffff; background-color: #393b79"' in fixed
    assert '<span style="color: #c0c0c0">plain</span>' in fixed  # no background: kept


def test_the_discussions_line_names_the_forum():
    line = site_pages.discussions_line("o/r")
    assert line.startswith('<p class="course-discussions">A question, an idea')
    assert '<a href="https://github.com/o/r/discussions">' in line
