"""The site's Sphinx extension: JupyterLab's heading anchors and the pairs' blocks."""

from __future__ import annotations

import pytest

from course_utils.tooling import site_ext


@pytest.mark.parametrize(
    "title, slug",
    [
        ("3. Checkpoints", "3.-Checkpoints"),
        ("7. Keras 3", "7.-Keras-3"),
        ("03 · JIT compilation", "03-·-JIT-compilation"),
        ("  padded  ", "padded"),
        ('2.1 A "quoted" word', ""),  # Sphinx would write the quote into id="..."
    ],
)
def test_headings_get_jupyterlabs_ids(title, slug):
    assert site_ext.jupyterlab_slug(title) == slug


def _cell(*classes):
    from docutils import nodes

    return nodes.container(classes=["cell", *classes])


def test_pairs_are_wrapped_with_their_parity_cell():
    nodes = pytest.importorskip("docutils.nodes")
    section = nodes.section()
    section += [
        _cell(),
        _cell("tag_sbs-torch"),
        _cell("tag_sbs-jax"),
        _cell("tag_sbs-parity"),
        _cell("tag_sbs-torch"),
        _cell("tag_sbs-jax"),
        _cell(),
    ]
    doc = nodes.document(None, None)
    doc += section
    site_ext.wrap_pairs(None, doc)
    kinds = [c["classes"] for c in section.children]
    assert kinds[0] == ["cell"] and kinds[-1] == ["cell"]
    assert kinds[1] == kinds[2] == [site_ext.PAIR_CLASS]
    assert len(section[1]) == 3 and len(section[2]) == 2
    assert section[1][2]["classes"] == ["cell", "tag_sbs-parity"]


def test_a_pair_may_open_with_its_jax_cell():
    nodes = pytest.importorskip("docutils.nodes")
    doc = nodes.document(None, None)
    doc += [_cell("tag_sbs-jax"), _cell("tag_sbs-torch"), _cell("tag_sbs-parity")]
    site_ext.wrap_pairs(None, doc)
    assert len(doc.children) == 1 and len(doc[0]) == 3
    assert doc[0][0]["classes"] == ["cell", "tag_sbs-jax"]


def test_a_lone_torch_cell_stays_as_it_is():
    nodes = pytest.importorskip("docutils.nodes")
    doc = nodes.document(None, None)
    doc += [_cell("tag_sbs-torch"), _cell()]
    site_ext.wrap_pairs(None, doc)
    assert [c["classes"] for c in doc.children] == [
        ["cell", "tag_sbs-torch"],
        ["cell"],
    ]


def test_sections_get_jupyterlabs_id_of_their_whole_title():
    nodes = pytest.importorskip("docutils.nodes")
    doc = nodes.document(None, None)
    for title in ("2.1 The sharp bit: `adam` defaults", 'With "quotes"'):
        section = nodes.section(ids=["x"])
        section += nodes.title(text=title)
        doc += section
    site_ext.add_jupyterlab_ids(None, doc)
    site_ext.add_jupyterlab_ids(None, doc)  # once only
    assert doc[0]["ids"] == ["x", "2.1-The-sharp-bit:-`adam`-defaults"]
    assert doc[1]["ids"] == ["x"]
