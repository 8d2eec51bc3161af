"""The site's Sphinx extension: JupyterLab's heading anchors, the pairs' blocks, the
launch targets and the source links it adds to the theme's header buttons."""

from __future__ import annotations

import posixpath
from types import SimpleNamespace
from urllib.parse import parse_qs, urlparse

import pytest

from course_utils.tooling import notebooks
from course_utils.tooling.site import extension as site_ext


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
    assert kinds[1] == kinds[2] == [site_ext.PAIR_CLASS, site_ext.FULL_WIDTH]
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


REPO = "owner/course"


def _app(repository=REPO, sources=None, language="en", notebooks=None):
    config = SimpleNamespace(
        course_language=language,
        course_notebooks=notebooks or {},
        course_counterparts={"index": "index", "notebooks/03_x": "notebooks/03_x"},
        course_repository=repository,
        course_release="v9.9.9",
        course_edit_branch="main",
        course_sources={"notebooks/03_x": "notebooks/03_x.py"}
        if sources is None
        else sources,
    )
    return SimpleNamespace(config=config)


def _theme_buttons():
    """What sphinx-book-theme leaves in the context: its launch menu, the repository button."""
    return [
        {"type": "group", "label": "launch-buttons", "buttons": [{"text": "Colab"}]},
        {
            "type": "link",
            "label": "source-repository-button",
            "icon": "fab fa-github",
            "url": f"https://github.com/{REPO}",
            "text": "",
        },
    ]


def test_the_launch_menu_gets_kaggle_and_studio_lab():
    context = {"header_buttons": _theme_buttons()}
    site_ext.add_page_links(_app(), "notebooks/03_x", "page.html", context, None)
    launch = context["header_buttons"][0]["buttons"]
    urls = {b["text"]: b["url"] for b in launch[1:]}
    blob = f"{REPO}/blob/v9.9.9/notebooks/03_x.ipynb"
    assert urls == {
        "Kaggle": f"https://kaggle.com/kernels/welcome?src=https://github.com/{blob}",
        "SageMaker Studio Lab": f"https://studiolab.sagemaker.aws/import/github/{blob}",
    }
    assert urls["Kaggle"] == notebooks.kaggle_url(
        REPO, "v9.9.9", "notebooks/03_x.ipynb"
    )


def test_a_chinese_page_launches_the_chinese_notebook_and_edits_its_catalog():
    theirs = f"https://colab.research.google.com/github/{REPO}/blob/v9.9.9/"
    buttons = _theme_buttons()
    buttons[0]["buttons"][0]["url"] = theirs + "notebooks/03_x.ipynb"
    context = {"header_buttons": buttons}
    app = _app(
        sources={"notebooks/03_x": "locale/zh/LC_MESSAGES/03_x.po"},
        language="zh",
        notebooks={"notebooks/03_x": "notebooks/zh/03_x.ipynb"},
    )
    site_ext.add_page_links(app, "notebooks/03_x", "page.html", context, None)
    launch = {b["text"]: b["url"] for b in context["header_buttons"][0]["buttons"]}
    blob = f"{REPO}/blob/v9.9.9/notebooks/zh/03_x.ipynb"
    assert launch == {
        "Colab": theirs + "notebooks/zh/03_x.ipynb",
        "Kaggle": f"https://kaggle.com/kernels/welcome?src=https://github.com/{blob}",
        "SageMaker Studio Lab": f"https://studiolab.sagemaker.aws/import/github/{blob}",
    }
    urls = {b["text"]: b["url"] for b in context["header_buttons"][1]["buttons"]}
    edit = f"https://github.com/{REPO}/edit/main/locale/zh/LC_MESSAGES/03_x.po"
    assert urls["Edit this page"] == edit
    body = parse_qs(urlparse(urls["Open an issue"]).query)["body"][0]
    assert "Page: zh/notebooks/03_x.html" in body


@pytest.mark.parametrize(
    ("language", "page", "href", "label", "lang"),
    [
        ("en", "notebooks/03_x", "../zh/notebooks/03_x.html", "中文", "zh-CN"),
        ("en", "notebooks/04_y", "../zh/index.html", "中文", "zh-CN"),
        ("en", "index", "zh/index.html", "中文", "zh-CN"),
        ("en", "docs/GRADING", "../zh/index.html", "中文", "zh-CN"),
        ("zh", "notebooks/03_x", "../../notebooks/03_x.html", "English", "en"),
        ("zh", "exercises/05_z", "../../index.html", "English", "en"),
        ("zh", "index", "../index.html", "English", "en"),
        ("zh", "search", "../index.html", "English", "en"),
    ],
)
def test_the_language_switch_links_the_same_page_or_the_other_home(
    language, page, href, label, lang
):
    context = {}
    site_ext.add_language_switch(_app(language=language), page, "p", context, None)
    assert context["course_switch"] == {"href": href, "label": label, "lang": lang}
    # the link resolves to the counterpart (or the home page) from the page's folder
    here = posixpath.dirname(f"{'zh/' if language == 'zh' else ''}{page}")
    target = posixpath.normpath(posixpath.join(here, href))
    other = "notebooks/03_x" if page == "notebooks/03_x" else "index"
    assert target == (f"zh/{other}.html" if language == "en" else f"{other}.html")


def test_the_repository_button_becomes_a_menu_with_edit_and_issue_links():
    context = {"header_buttons": _theme_buttons()}
    site_ext.add_page_links(_app(), "notebooks/03_x", "page.html", context, None)
    group = context["header_buttons"][1]
    assert group["type"] == "group" and group["label"] == "source-buttons"
    urls = {b["text"]: b["url"] for b in group["buttons"]}
    assert urls["Repository"] == f"https://github.com/{REPO}"
    assert (
        urls["Edit this page"]
        == f"https://github.com/{REPO}/edit/main/notebooks/03_x.py"
    )
    assert urls["Source: 03_x.py (v9.9.9)"] == (
        f"https://github.com/{REPO}/blob/v9.9.9/notebooks/03_x.py"
    )
    issue = urlparse(urls["Open an issue"])
    assert issue.path == f"/{REPO}/issues/new"
    query = parse_qs(issue.query)
    assert query["title"] == ["notebooks/03_x.py: "]
    assert "notebooks/03_x.html" in query["body"][0] and "v9.9.9" in query["body"][0]


def test_a_page_without_a_source_keeps_the_lone_repository_button():
    context = {"header_buttons": _theme_buttons()}
    site_ext.add_page_links(_app(sources={}), "claims", "page.html", context, None)
    assert context["header_buttons"][1]["label"] == "source-repository-button"


def test_without_a_repository_nothing_is_added():
    context = {"header_buttons": _theme_buttons()}
    site_ext.add_page_links(_app(repository=""), "notebooks/03_x", "p", context, None)
    assert context["header_buttons"] == _theme_buttons()


def test_a_figure_gets_its_description_as_alt_text():
    from docutils import nodes

    doctree = nodes.document(None, None)
    doctree += nodes.image(uri="../_build/jupyter_execute/abc123.png")
    doctree += nodes.image(uri="pictures/other.png", alt="kept")
    config = SimpleNamespace(course_figure_alts={"abc123": "A plot of the loss."})
    site_ext.describe_figures(SimpleNamespace(config=config), doctree, "notebooks/90")
    described, other = doctree.findall(nodes.image)
    assert described["alt"] == "A plot of the loss." and other["alt"] == "kept"
