"""The site's languages: the Chinese half, ``build/site/zh/``, beside the English, and the switch between them.

Which pages it holds: every lesson being built and every student exercise notebook whose
gettext catalog (``locale/zh/LC_MESSAGES/<name>.po``) is finished (:func:`finished`:
tracked by git in a git checkout, and no message missing, untranslated, fuzzy or
mistranslated, as ``course translate --check`` reads it), and a Chinese home page: the
Chinese README's first part when its catalog is finished, else a short page in Chinese
listing the Chinese lessons and exercises (:func:`home_page`).

A Chinese lesson page carries the English execution's outputs: the executed English copy,
each markdown cell's source replaced by the Chinese notebook's cell of the same id
(:func:`carry`; the Chinese notebook's code cells are the English ones byte for byte, so
the English outputs stand for them), and the quiz cell's output the lesson's Chinese quiz
where the Chinese cell loads it (``quiz.load(..., language="zh")``). Cell ids that do not match stop the build, naming the
lesson and the cell. The Chinese notebook is the one ``course translate`` writes
(``notebooks/zh/``), rendered here from its catalog by
:func:`course_utils.tooling.translation.command.render`, so the page is the catalog's of this
checkout even where the written notebook is stale.

The half is its own Sphinx build (``language = "zh_CN"``: the theme's labels in Chinese,
``<html lang="zh-CN">``) into ``zh/`` of the English site's folder; the launch buttons of
its pages open the Chinese notebook, and "Edit this page" opens the catalog on ``main``.
Every page of either half has a language switch (:func:`switch_href`).
"""

from __future__ import annotations

import posixpath
import subprocess
from pathlib import Path
from typing import Any

from course_utils.tooling.errors import CourseError
from course_utils.tooling.translation import catalog
from course_utils.tooling.translation import command as translate

LANGUAGE = "zh"  # translate's language: notebooks/zh/, locale/zh/
SPHINX_LANGUAGE = "zh_CN"
HTML_LANG = "zh-CN"
SUBDIR = "zh"  # the Chinese half, under the English site's folder
# Each half's switch: its link's text and language, where the other half is from this
# half's root, and the other half's language as Sphinx names it.
SWITCH = {
    "en": {"label": "中文", "lang": HTML_LANG, "root": f"{SUBDIR}/"},
    LANGUAGE: {"label": "English", "lang": "en", "root": "../"},
}
TITLE_SUFFIX = "（中文版）"
SMOKE_NOTE = (
    "```{admonition} 冒烟运行\n:class: warning course-smoke-banner\n"
    "本页显示的是一次冒烟运行（`SMOKE = True`）：所有规模都很小，因此它的计时、曲线和结论"
    "说明不了什么。`make site` 用完整运行构建网站。\n```"
)
SMOKE_ANNOUNCEMENT = (
    "冒烟运行：{which}以 SMOKE = True 运行，规模很小，计时说明不了什么；"
    "<code>make site</code> 用完整运行构建网站。"
)
HOME_WITHOUT_README = """\
# {title}

这是本课程的中文版。下面的课程与练习已经译成中文；页面上的输出来自英文版的同一次运行
（两种语言的代码单元完全相同）。其余课程仍在翻译中，请在英文版中阅读：每一页顶部的
“English”链接打开同一页的英文版。
"""


def cell_label(cells: list[Any], index: int) -> str:
    """``cell 7`` as ``course run`` counts (papermill's injected cell not counted)."""
    injected = sum(_injected(c) for c in cells[:index])
    first = (cells[index].get("source") or "").strip().split("\n", 1)[0][:60]
    return f"cell {index - injected} ({first!r})"


def _injected(cell: Any) -> bool:
    return "injected-parameters" in cell.get("metadata", {}).get("tags", [])


def tracked_catalogs(root: Path) -> set[str] | None:
    """The catalogs git tracks (paths from the root); None outside a git checkout."""
    try:
        proc = subprocess.run(
            ["git", "ls-files", "-z", "--", f"locale/{LANGUAGE}/"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return {p for p in proc.stdout.split("\0") if p}


def finished(root: Path, src: translate.Source, tracked: set[str] | None) -> bool:
    """Whether ``src``'s catalog is finished: it exists, git tracks it (in a git
    checkout: an untracked one is still being written) and has no problem."""
    path = catalog.catalog_path(root, LANGUAGE, src.name)
    rel = str(path.relative_to(root))
    if not path.exists() or (tracked is not None and rel not in tracked):
        return False
    cat = catalog.read(path)
    return not catalog.problems(cat, translate.entries(root, src), src.name)


def editions(root: Path, names: set[str]) -> dict[str, str]:
    """Of the sources named (a lesson's or exercise notebook's stem, ``README``), those
    with a finished catalog: name -> the Chinese edition's text."""
    tracked = tracked_catalogs(root)
    out = {}
    for src in translate.sources(root, LANGUAGE):
        if src.name in names and finished(root, src, tracked):
            cat = catalog.read(catalog.catalog_path(root, LANGUAGE, src.name))
            out[src.name] = translate.render(root, src, LANGUAGE, cat)
    return out


def carry(english: Any, chinese: Any, lesson: str) -> Any:
    """The executed English copy ``english`` with each markdown cell's source replaced by
    the Chinese notebook's cell of the same id (changed in place and returned); a cell id
    of either that the other lacks, or a cell whose kind differs, stops the build."""
    where = f"notebooks/{LANGUAGE}/{lesson}.ipynb"
    by_id = {c.get("id"): c for c in chinese.cells}
    seen = set()
    for index, cell in enumerate(english.cells):
        if _injected(cell):
            continue
        cid = cell.get("id")
        match = by_id.get(cid)
        if match is None or match.cell_type != cell.cell_type:
            what = "has no cell" if match is None else f"has a {match.cell_type} cell"
            raise CourseError(
                f"{where}: the executed copy's {cell_label(english.cells, index)} of "
                f"lesson {lesson} has id {cid!r}, and the Chinese notebook {what} with "
                "that id: the Chinese edition and the executed copy come from different "
                "versions of the lesson (run `course translate`, or `course run "
                f"{lesson}` again)"
            )
        seen.add(cid)
        if cell.cell_type == "markdown":
            cell.source = match.source
        elif match.source != cell.source and _is_quiz_call(cell.source, match.source):
            cell.source = match.source
            cell.outputs = quiz_outputs(cell.get("outputs", []), match.source)
    for index, cell in enumerate(chinese.cells):
        if cell.get("id") not in seen:
            first = (cell.get("source") or "").strip().split("\n", 1)[0][:60]
            raise CourseError(
                f"{where}: its cell {index} ({first!r}, id {cell.get('id')!r}) of lesson "
                f"{lesson} is not in the executed copy: the Chinese edition and the "
                "executed copy come from different versions of the lesson (run `course "
                f"translate`, or `course run {lesson}` again)"
            )
    english.metadata["translation"] = chinese.metadata.get("translation", {})
    return english


def _is_quiz_call(english: str, chinese: str) -> bool:
    """Whether ``chinese`` is the quiz cell ``english`` loading the Chinese quiz."""
    found = translate.QUIZ_CALL.match(english)
    return bool(found) and chinese == f'{found[1]}, language="{LANGUAGE}")'


def quiz_outputs(outputs: list[Any], source: str) -> list[Any]:
    """The quiz cell's outputs for the Chinese page: the Chinese quiz, formatted as the
    kernel formats it, under the English execution's count."""
    import nbformat
    from IPython.core.formatters import DisplayFormatter

    from course_utils import quiz

    name = translate.QUIZ_CALL.match(source.replace(f', language="{LANGUAGE}")', ")"))
    data, metadata = DisplayFormatter().format(quiz.load(name[2], language=LANGUAGE))
    count = next(
        (o.get("execution_count") for o in outputs if "execution_count" in o), None
    )
    return [
        nbformat.v4.new_output(
            "execute_result", data=data, metadata=metadata, execution_count=count
        )
    ]


def readme_home(readme_zh: str, split_heading: str) -> str:
    """The Chinese README's part for the home page: after its edition line and title,
    up to ``split_heading`` (the translation of the English README's split heading)."""
    lines = readme_zh.split("\n")
    if lines and lines[0] == translate.EDITION_LINE[LANGUAGE]:
        lines = lines[1:]
    text = "\n".join(lines).lstrip("\n")
    head = text.partition(split_heading)[0]
    return head.split("\n", 1)[1] if head.startswith("# ") else head


def home_page(title: str, readme_part: bool) -> str:
    """The Chinese home page's opening: the Chinese README's first part (included from
    ``_readme_home.md``) when it is finished, else a short page in Chinese."""
    if readme_part:
        return f"# {title}\n\n```{{include}} _readme_home.md\n```\n"
    return HOME_WITHOUT_README.format(title=title)


def switch_href(language: str, pagename: str, counterparts: dict[str, str]) -> str:
    """The language switch's link on ``pagename`` of the ``language`` half: the same
    page of the other half when it has one (``counterparts``), else the other half's
    home page; relative, so that the site works from any folder."""
    target = counterparts.get(pagename, "index")
    here = posixpath.dirname(pagename) or "."
    return posixpath.relpath(f"{SWITCH[language]['root']}{target}.html", here)


def catalog_source(name: str) -> str:
    """The file "Edit this page" opens for a Chinese page: the catalog of ``name``."""
    return f"locale/{LANGUAGE}/LC_MESSAGES/{name}.po"


def notebook_path(pagename: str) -> str:
    """The Chinese notebook of a Chinese page (``notebooks/02_autodiff`` ->
    ``notebooks/zh/02_autodiff.ipynb``), which its launch buttons open."""
    folder, _, name = pagename.rpartition("/")
    return f"{folder}/{LANGUAGE}/{name}.ipynb"
