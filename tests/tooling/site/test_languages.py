"""The site's Chinese half: which editions it takes, the English outputs carried into the
Chinese lesson by cell id (and the build stopped when the ids differ), and the built
pages under ``zh/``: their language, language switch, launch buttons and edit links."""

from __future__ import annotations

import copy
import re
from types import SimpleNamespace

import nbformat
import pytest

from course_utils.tooling.errors import CourseError
from course_utils.tooling.site import build as site
from course_utils.tooling.site import languages as site_zh
from course_utils.tooling.translation import command as translate
from tests.tooling.site import fixture as site_fixture
from tests.tooling.site.fixture import FIXTURES, ROOT

LESSON = "90_fixture_pairs"
ENGLISH = FIXTURES / f"{LESSON}.ipynb"
CHINESE = FIXTURES / "zh" / f"{LESSON}.ipynb"


@pytest.fixture(scope="module")
def built():
    return SimpleNamespace(**site_fixture.shared_site())


def _read(path):
    return nbformat.read(path, as_version=4)


def test_the_chinese_fixture_is_the_english_lesson_with_chinese_prose():
    english, chinese = _read(ENGLISH), _read(CHINESE)
    cells = [c for c in english.cells if not site_zh._injected(c)]
    assert [c.id for c in cells] == [c.id for c in chinese.cells]
    for en, zh in zip(cells, chinese.cells, strict=True):
        if en.cell_type == "code":
            assert zh.source == en.source and zh.outputs == []
        else:
            assert re.search(r"[\u4e00-\u9fff]", zh.source), zh.id


def test_the_english_outputs_are_carried_into_the_chinese_cells_by_id():
    english, chinese = _read(ENGLISH), _read(CHINESE)
    carried = site_zh.carry(copy.deepcopy(english), chinese, LESSON)
    zh_by_id = {c.id: c for c in chinese.cells}
    for before, after in zip(english.cells, carried.cells, strict=True):
        assert after.id == before.id
        if after.cell_type == "markdown":
            assert after.source == zh_by_id[after.id].source != before.source
        else:  # the English execution's code, outputs and papermill's cell, as they were
            assert after == before
    assert carried.metadata["translation"]["language"] == "zh"
    assert any(c.get("outputs") for c in carried.cells)


def test_the_quiz_cell_shows_the_chinese_quiz_under_the_english_count(
    tmp_path, monkeypatch
):
    from course_utils import quiz

    (tmp_path / "zh").mkdir()
    for folder, text, explain in [
        (tmp_path, "Which is even?", "2 divides it."),
        (tmp_path / "zh", "哪个是偶数？", "它能被 2 整除。"),
    ]:
        (folder / "91_x.toml").write_text(
            f'[[question]]\ntext = "{text}"\nexplain = "{explain}"\nhint = "2"\n'
            '[[question.choice]]\ntext = "3"\n[[question.choice]]\ntext = "4"\n'
            "correct = true\n",
            encoding="utf-8",
        )
    monkeypatch.setattr(quiz, "FOLDER", tmp_path)
    call = 'from course_utils import quiz\n\nquiz.load("91_x")'
    english, chinese = nbformat.v4.new_notebook(), nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(call, execution_count=7)
    cell.outputs = [
        nbformat.v4.new_output(
            "execute_result", data={"text/plain": "x"}, execution_count=7
        )
    ]
    english.cells = [cell, nbformat.v4.new_code_cell("print(1)")]
    chinese.cells = copy.deepcopy(english.cells)
    chinese.cells[0].source = call[:-1] + ', language="zh")'
    chinese.cells[0].outputs = []
    carried = site_zh.carry(english, chinese, "91_x")
    (out,) = carried.cells[0].outputs
    assert carried.cells[0].source == chinese.cells[0].source
    assert out["execution_count"] == 7
    assert "哪个是偶数？" in out["data"]["text/html"]
    assert (
        "检查" in out["data"]["text/html"] and "Which" not in out["data"]["text/html"]
    )
    assert carried.cells[1].source == "print(1)"


def test_a_chinese_notebook_without_a_cell_of_the_executed_copy_is_named():
    chinese = _read(CHINESE)
    chinese.cells[2].id = "0ddc0ffe"  # '## 1. 第一部分', 16cd334a in the English
    with pytest.raises(CourseError) as err:
        site_zh.carry(_read(ENGLISH), chinese, LESSON)
    message = str(err.value)
    assert message.startswith(
        f"notebooks/zh/{LESSON}.ipynb: the executed copy's cell 2"
    )
    assert (
        "('## 1. First part') of lesson 90_fixture_pairs has id '16cd334a'" in message
    )
    assert "has no cell with that id" in message


def test_a_cell_only_the_chinese_notebook_has_is_named():
    chinese = _read(CHINESE)
    extra = nbformat.v4.new_markdown_cell("## 3. 多出的一节")
    extra.id = "feedf00d"
    chinese.cells.append(extra)
    with pytest.raises(CourseError) as err:
        site_zh.carry(_read(ENGLISH), chinese, LESSON)
    message = str(err.value)
    assert "its cell 12 ('## 3. 多出的一节', id 'feedf00d')" in message
    assert "of lesson 90_fixture_pairs is not in the executed copy" in message


def test_a_cell_of_another_kind_under_the_same_id_is_named():
    chinese = _read(CHINESE)
    chinese.cells[2] = nbformat.v4.new_code_cell("x = 1", id=chinese.cells[2].id)
    with pytest.raises(CourseError, match="has a code cell with that id"):
        site_zh.carry(_read(ENGLISH), chinese, LESSON)


def test_the_build_stops_on_a_chinese_lesson_whose_ids_differ(tmp_path):
    chinese = _read(CHINESE)
    chinese.cells[0].id = "0ddc0ffe"
    nbformat.write(chinese, tmp_path / f"{LESSON}.ipynb")
    executed = {LESSON: site.read_executed(ENGLISH, LESSON)}
    with pytest.raises(CourseError, match=r"cell 0 \('# 90 · Fixture.*'612ad32a'"):
        site.chinese_half(ROOT, executed, [], zh_from=tmp_path)


def _source(name):
    (src,) = [s for s in translate.sources(ROOT, "zh") if s.name == name]
    return src


def test_a_lesson_is_chinese_only_with_a_tracked_and_complete_catalog():
    src = _source("02_autodiff")
    tracked = site_zh.tracked_catalogs(ROOT)
    if tracked is None:
        pytest.skip("not a git checkout")
    assert "locale/zh/LC_MESSAGES/02_autodiff.po" in tracked
    assert site_zh.finished(ROOT, src, tracked)
    assert not site_zh.finished(ROOT, src, set())  # the same catalog, untracked
    assert site_zh.finished(ROOT, src, None)  # outside git: its completeness alone


def test_a_catalog_with_a_message_left_to_translate_is_not_finished(tmp_path):
    (tmp_path / "notebooks").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 99 · A title\n\nOne sentence.")]
    nbformat.write(nb, tmp_path / "notebooks" / "99_x.ipynb")
    (tmp_path / "README.md").write_text("# R\n", encoding="utf-8")
    translate.update(tmp_path, "zh", ["99"])
    (src,) = [s for s in translate.sources(tmp_path, "zh") if s.name == "99_x"]
    assert not site_zh.finished(tmp_path, src, None)  # every message still empty
    assert site_zh.editions(tmp_path, {"99_x"}) == {}


def test_the_chinese_home_page_without_a_finished_readme_is_in_chinese():
    page = site_zh.home_page("T（中文版）", readme_part=False)
    assert page.startswith("# T（中文版）\n") and "English" in page
    assert "include" not in page
    assert "_readme_home.md" in site_zh.home_page("T", readme_part=True)


def test_the_chinese_readme_is_cut_at_its_translated_heading():
    readme = (
        f"{translate.EDITION_LINE['zh']}\n\n# 标题\n\n简介。\n\n## 显卡\n\n其余。\n"
    )
    assert site_zh.readme_home(readme, "## 显卡") == "\n简介。\n\n"


@pytest.mark.slow
def test_the_chinese_half_holds_the_translated_lesson_and_exercises(built):
    assert built.zh_pages[:2] == ["index", f"notebooks/{LESSON}"]
    assert f"notebooks/{LESSON}" in built.counterparts
    assert "notebooks/91_fixture_full" not in built.counterparts  # no Chinese edition
    exercises = [p for p in built.zh_pages if p.startswith("exercises/")]
    assert "exercises/02_autodiff_exercises" in exercises
    for page in built.zh_pages:
        html = (built.out / "zh" / f"{page}.html").read_text(encoding="utf-8")
        assert '<html lang="zh-CN"' in html, page
    for page in built.pages:
        html = (built.out / f"{page}.html").read_text(encoding="utf-8")
        assert '<html lang="en"' in html, page


def _switch(html):
    (link,) = re.findall(
        r'<a class="btn course-language" href="([^"]+)" lang="([^"]+)"'
        r' hreflang="[^"]+">([^<]+)</a>',
        html,
    )
    return link


@pytest.mark.slow
def test_every_page_switches_to_its_counterpart_or_the_other_home(built):
    zh = built.out / "zh"
    read = lambda p: p.read_text(encoding="utf-8")  # noqa: E731
    lesson = f"notebooks/{LESSON}"
    assert _switch(read(built.out / f"{lesson}.html")) == (
        f"../zh/{lesson}.html",
        "zh-CN",
        "中文",
    )
    assert _switch(read(zh / f"{lesson}.html")) == (
        f"../../{lesson}.html",
        "en",
        "English",
    )
    assert (
        _switch(read(built.out / "notebooks/91_fixture_full.html"))[0]
        == "../zh/index.html"
    )
    assert _switch(read(built.out / "claims.html"))[0] == "zh/index.html"
    assert _switch(read(zh / "index.html"))[0] == "../index.html"
    for page in built.pages:  # every English page has the switch
        _switch(read(built.out / f"{page}.html"))


@pytest.mark.slow
def test_the_chinese_lesson_shows_the_english_outputs_and_chinese_prose(built):
    html = (built.out / "zh" / "notebooks" / f"{LESSON}.html").read_text("utf-8")
    english = (built.out / "notebooks" / f"{LESSON}.html").read_text("utf-8")
    assert "第二部分" in html and "Second part" not in html
    assert html.count('class="sbs-pair') == 2
    for printed in (
        "torch: 6.0",
        "parity: equal",
        "IndexError: list index out of range",
    ):
        assert printed in html and printed in english
    # the figure is the English run's, described the same way
    (image,) = re.findall(
        r'<img alt="([^"]+)" src="\.\./_images/([0-9a-f]+)\.png"', html
    )
    assert image[0] == "A plot with series: &quot;torch&quot;, &quot;jax&quot;."
    assert image[1] in english
    assert "冒烟运行" in html and "在 Colab 中打开" not in html
    assert 'id="2.-第二部分"' in html


@pytest.mark.slow
def test_chinese_pages_launch_the_chinese_notebook_and_edit_its_catalog(built):
    html = (built.out / "zh" / "notebooks" / f"{LESSON}.html").read_text("utf-8")
    repo = "jax-pytorch-side-by-side/course"
    blob = f"{repo}/blob/v0.1.0/notebooks/zh/{LESSON}.ipynb"
    assert f"https://colab.research.google.com/github/{blob}" in html
    assert f"lab/tree/notebooks/zh/{LESSON}.ipynb" in html
    assert f"https://studiolab.sagemaker.aws/import/github/{blob}" in html
    assert f"/blob/v0.1.0/notebooks/{LESSON}.ipynb" not in html
    assert f"github.com/{repo}/edit/main/locale/zh/LC_MESSAGES/{LESSON}.po" in html
    exercise = (built.out / "zh/exercises/02_autodiff_exercises.html").read_text(
        "utf-8"
    )
    assert "blob/v0.1.0/exercises/zh/02_autodiff_exercises.ipynb" in exercise
    assert "edit/main/locale/zh/LC_MESSAGES/02_autodiff_exercises.po" in exercise


@pytest.mark.slow
def test_the_chinese_home_lists_the_chinese_pages_in_chinese(built):
    html = (built.out / "zh" / "index.html").read_text("utf-8")
    if "index" in built.zh_sources:  # the Chinese README is finished: its first part
        assert built.zh_sources["index"] == "locale/zh/LC_MESSAGES/README.po"
        assert "这是本课程的中文版" not in html
    else:
        assert "这是本课程的中文版" in html
    assert f'href="notebooks/{LESSON}.html"' in html
    assert 'href="exercises/02_autodiff_exercises.html"' in html
    assert "课程" in html and "练习" in html
    assert "搜索" in html  # the theme's own labels in Chinese
