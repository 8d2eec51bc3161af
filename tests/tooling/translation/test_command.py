"""``course translate``: an edition written from the English and a catalog, code cells
byte for byte, drift reported. The committed Chinese edition's own checks are in
test_editions.py."""

from pathlib import Path

import nbformat
import pytest

from course_utils import cli, student_version
from course_utils.tooling import notebooks
from course_utils.tooling.errors import CourseError
from course_utils.tooling.translation import catalog
from course_utils.tooling.translation import command as translate

ROOT = Path(__file__).resolve().parents[3]


def _course(root: Path) -> Path:
    """A course of one lesson: title cell with badges, a code cell, a prose cell."""
    (root / "course_utils").mkdir(parents=True)
    (root / "notebooks").mkdir()
    rel = "notebooks/00_demo.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            f"# 00 · Demo\n\n{notebooks.badges(rel)}\n\nTracing runs `f` once."
        ),
        nbformat.v4.new_code_cell("x = 1  # stays English\nprint('hello')"),
        nbformat.v4.new_markdown_cell(
            "## 1. Two lists\n\n- one item\n- another item, as [in §1](#1.-Two-lists)"
        ),
        nbformat.v4.new_markdown_cell(
            f"<!-- EXERCISE: why -->\nWhy?\n\n{student_version.TEXT_STUB}"
        ),
    ]
    nb.cells[1].metadata["tags"] = ["parameters"]
    nbformat.write(nb, root / rel)
    (root / "README.md").write_text("# Demo\n\nA course.\n", encoding="utf-8")
    return root / rel


def _translate_all(root: Path, name: str, table: dict[str, str]) -> None:
    path = catalog.catalog_path(root, "zh", name)
    cat = catalog.read(path)
    for m in cat:
        if m.id:
            m.string = table[m.id]
    catalog.write(path, cat)


ZH = {
    "00 · Demo": "00 · 演示",
    "Tracing runs `f` once.": "追踪会运行 `f` 一次。",
    "1. Two lists": "1. 两个列表",
    "one item": "一项",
    "another item, as [in §1](#1.-Two-lists)": "另一项，如 [§1 所述](#1.-Two-lists)",
    "Why?": "为什么？",
}


def test_an_edition_has_the_same_cells_and_code_and_translated_prose(tmp_path):
    english = _course(tmp_path)
    assert translate.update(tmp_path, "zh", ["00"]) == [
        "locale/zh/LC_MESSAGES/00_demo.po"
    ]
    _translate_all(tmp_path, "00_demo", ZH)
    assert translate.build(tmp_path, "zh") == (["notebooks/zh/00_demo.ipynb"], [])
    en = nbformat.read(english, as_version=4)
    zh = nbformat.read(tmp_path / "notebooks/zh/00_demo.ipynb", as_version=4)
    assert [c.id for c in zh.cells] == [c.id for c in en.cells]
    assert zh.cells[1].source == en.cells[1].source
    assert zh.cells[1].metadata == en.cells[1].metadata
    assert zh.cells[0].source.startswith("# 00 · 演示\n\n[![在 Colab 中打开]")
    assert "notebooks/zh/00_demo.ipynb" in zh.cells[0].source
    assert zh.cells[0].source.endswith("追踪会运行 `f` 一次。")
    # An in-page link points at the translated heading's anchor.
    assert zh.cells[2].source == (
        "## 1. 两个列表\n\n- 一项\n- 另一项，如 [§1 所述](#1.-两个列表)"
    )
    # A written answer's stub stays as the grader knows it.
    assert zh.cells[3].source == "<!-- EXERCISE: why -->\n为什么？\n\nYOUR ANSWER HERE"
    assert zh.metadata["translation"] == {
        "language": "zh",
        "source": "notebooks/00_demo.ipynb",
    }
    assert translate.build(tmp_path, "zh", check=True) == ([], [])


def test_a_changed_english_paragraph_fails_the_check_naming_lesson_and_paragraph(
    tmp_path,
):
    english = _course(tmp_path)
    translate.update(tmp_path, "zh", ["00"])
    _translate_all(tmp_path, "00_demo", ZH)
    translate.build(tmp_path, "zh")
    nb = nbformat.read(english, as_version=4)
    nb.cells[0].source = nb.cells[0].source.replace("once.", "exactly once.")
    nbformat.write(nb, english)
    changed, problems = translate.build(tmp_path, "zh", check=True)
    assert changed == [
        "notebooks/zh/00_demo.ipynb"
    ]  # the paragraph falls back to English
    assert problems == [
        f"00_demo: notebooks/00_demo.ipynb cell 0 (id {nb.cells[0].id}): “Tracing runs "
        "`f` exactly once.” is not in the catalog (new or changed English): run "
        "`course translate --update`, then translate it"
    ]
    translate.update(tmp_path, "zh", [])
    changed, problems = translate.build(tmp_path, "zh", check=True)
    assert changed == ["notebooks/zh/00_demo.ipynb"]
    assert len(problems) == 1 and "is fuzzy (its English changed)" in problems[0]
    # Until it is revised the fuzzy message stays English in the edition.
    translate.build(tmp_path, "zh")
    zh = nbformat.read(tmp_path / "notebooks/zh/00_demo.ipynb", as_version=4)
    assert zh.cells[0].source.endswith("Tracing runs `f` exactly once.")


def test_the_cli_reports_drift_and_exits_1(tmp_path, monkeypatch, capsys):
    _course(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["translate", "--update", "README"]) == 0
    assert cli.main(["translate", "--check"]) == 1
    out = capsys.readouterr().out
    assert "README: README.md line 1: “Demo” is not translated" in out
    _translate_all(tmp_path, "README", {"Demo": "演示", "A course.": "一门课程。"})
    assert cli.main(["translate"]) == 0
    text = (tmp_path / "README.zh.md").read_text(encoding="utf-8")
    assert text == "[English](README.md) · 中文\n\n# 演示\n\n一门课程。\n"
    assert cli.main(["translate", "--check"]) == 0
    (tmp_path / "README.zh.md").write_text("edited by hand", encoding="utf-8")
    assert cli.main(["translate", "--check"]) == 1
    assert (
        "out of date: README.zh.md (run `course translate`)" in capsys.readouterr().out
    )
    assert cli.main(["translate", "--update", "nosuch"]) == 2
    assert "unknown or ambiguous source 'nosuch'" in capsys.readouterr().err


def test_the_glossary_check_catches_an_inconsistent_term(tmp_path):
    cat = catalog.update(
        None, "zh", [catalog.Entry("Data parallelism splits `x`.", "")]
    )
    cat["Data parallelism splits `x`."].string = "数据平行切分 `x`。"
    terms = {"data parallelism": "数据并行"}
    assert catalog.terminology(cat, terms, "05") == [
        "05: “Data parallelism splits `x`.” uses “data parallelism”: its translation "
        "lacks “数据并行”"
    ]
    assert catalog.terminology(cat, {"splits `x`": "切分"}, "05") == []
    bad = tmp_path / "GLOSSARY.md"
    bad.write_text("| English | 中文 |\n|---|---|\n| sharding | |\n", encoding="utf-8")
    with pytest.raises(CourseError, match="GLOSSARY.md: table row 2 needs"):
        catalog.glossary(bad)


def test_the_quiz_cell_loads_the_chinese_quiz_only_where_there_is_one(tmp_path):
    english = _course(tmp_path)
    nb = nbformat.read(english, as_version=4)
    call = 'from course_utils import quiz\n\nquiz.load("00_demo")'
    nb.cells.append(nbformat.v4.new_code_cell(call))
    nbformat.write(nb, english)
    translate.update(tmp_path, "zh", ["00"])
    _translate_all(tmp_path, "00_demo", ZH)
    translate.build(tmp_path, "zh")
    path = tmp_path / "notebooks/zh/00_demo.ipynb"
    assert nbformat.read(path, as_version=4).cells[-1].source == call
    zh_quiz = tmp_path / "course_utils" / "quizzes" / "zh" / "00_demo.toml"
    zh_quiz.parent.mkdir(parents=True)
    zh_quiz.write_text("", encoding="utf-8")
    assert translate.build(tmp_path, "zh", check=True)[0] == [
        "notebooks/zh/00_demo.ipynb"
    ]
    translate.build(tmp_path, "zh")
    zh = nbformat.read(path, as_version=4)
    assert zh.cells[-1].source == call[:-1] + ', language="zh")'
    assert zh.cells[1].source == nb.cells[1].source  # every other code cell as it was
    assert (
        translate.quiz_call(tmp_path, call + "\nprint(1)", "zh") == call + "\nprint(1)"
    )


def test_the_translated_readme_links_to_the_editions_that_exist(tmp_path):
    _course(tmp_path)
    (tmp_path / "notebooks" / "01_other.ipynb").write_text("{}", encoding="utf-8")
    badge = notebooks.badges("notebooks/00_demo.ipynb")
    (tmp_path / "README.md").write_text(
        f"# Demo\n\n{badge}\n\nSee [00](notebooks/00_demo.ipynb) and "
        "[01](notebooks/01_other.ipynb), in `notebooks/00_demo.ipynb`.\n",
        encoding="utf-8",
    )
    translate.update(tmp_path, "zh", ["README", "00"])
    src = next(s for s in translate.sources(tmp_path, "zh") if s.name == "README")
    text = translate.render(
        tmp_path,
        src,
        "zh",
        catalog.read(catalog.catalog_path(tmp_path, "zh", "README")),
    )
    # 00 has a catalog, so an edition: the link and every badge open it; 01 has none
    assert "[00](notebooks/zh/00_demo.ipynb)" in text
    assert "[01](notebooks/01_other.ipynb)" in text
    assert badge.replace("notebooks/00_demo", "notebooks/zh/00_demo") in text
    assert "`notebooks/00_demo.ipynb`" in text  # prose and code spans stay as written
