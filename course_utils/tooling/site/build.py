"""``course site``: the course as a static website, built from executed notebooks.

``course site [NOTEBOOK...] [--from DIR] [--out DIR] [--pdf]`` reads the executed copies that
``course run`` left in ``build/executed/`` (or ``--from``), checks each one (it must
exist and hold no error output: a sharp bit prints its error through ``expect_error``), stages a
Sphinx source tree (:mod:`course_utils.tooling.site.pages`) with its assets
(:mod:`course_utils.tooling.site.assets`), and runs Sphinx with myst-nb (execution off)
and sphinx-book-theme, warnings as errors, into ``build/site/`` (or ``--out``). It
never executes a notebook. Sphinx and its extensions are the ``[site]`` extra. With
``--pdf`` chromium then prints the home page and every lesson into ``course.pdf`` beside
them (:mod:`course_utils.tooling.site.pdf`), which the home page links to.

The repository the launch buttons and the "Edit this page" and "Open an issue" links
point at is the one the notebooks' badges name
(:data:`course_utils.tooling.notebooks.REPOSITORY`), at the release tag; without one the
pages have none of those, and ``course site`` says so once.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_utils import lessons as manifest
from course_utils.tooling.errors import CourseError
from course_utils.tooling.execution.runner import checkout
from course_utils.tooling.notebooks import REPOSITORY, release_tag
from course_utils.tooling.site import assets as site_assets
from course_utils.tooling.site import languages as site_zh
from course_utils.tooling.site import pages as site_pages
from course_utils.tooling.site import pdf as site_pdf

SITE_MODULES = ("sphinx", "myst_nb", "sphinx_book_theme", "sphinxcontrib.mermaid")
# "Edit this page" opens the source on this branch: GitHub edits a branch, never a tag
# (the site workflow builds from it too: .github/workflows/site.yml).
EDIT_BRANCH = "main"
NO_REPOSITORY = (
    "no repository is configured (REPOSITORY in course_utils/tooling/notebooks.py): "
    "the pages have no launch buttons and no edit, issue or repository links"
)


@dataclass
class SiteBuild:
    """What one build made: the output folder, the pages and each lesson's pairs."""

    out: Path
    seconds: float = 0.0
    smoke: dict[str, bool | None] = field(default_factory=dict)
    pairs: dict[str, int] = field(default_factory=dict)
    pages: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    checkout: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    pdf: site_pdf.PrintedCourse | None = None
    # The Chinese half (under zh/): its pages, and each English page's Chinese one.
    zh_pages: list[str] = field(default_factory=list)
    zh_sources: dict[str, str] = field(default_factory=dict)
    counterparts: dict[str, str] = field(default_factory=dict)


_cell_label = site_zh.cell_label


def read_executed(path: Path, lesson: str) -> Any:
    """The executed copy at ``path``, checked: it exists and holds no unexpected error."""
    import nbformat

    if not path.exists():
        raise CourseError(
            f"no executed copy of notebooks/{lesson}.ipynb: {path} is missing "
            f"(run `course run {lesson}` or `make site`)"
        )
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as err:
        raise CourseError(f"{path}: not a readable notebook ({err})") from None
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                raise CourseError(
                    f"{path}: {_cell_label(nb.cells, index)} holds an error output "
                    f"({out.get('ename')}: {str(out.get('evalue'))[:200]}); "
                    "fix the lesson and run it again"
                )
    for index, _, _, alt in site_pages.figures(nb.cells):
        if alt is None:
            raise CourseError(
                f"{path}: {_cell_label(nb.cells, index)} {site_pages.NO_DESCRIPTION}"
            )
    return nb


def smoke_of(nb: Any) -> bool | None:
    """Whether an executed copy ran in smoke mode, from papermill's parameters."""
    params = nb.metadata.get("papermill", {}).get("parameters", {})
    if "SMOKE" in params and params["SMOKE"] is not None:
        return bool(params["SMOKE"])
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):
            for line in cell.source.splitlines():
                if line.replace(" ", "").startswith(("SMOKE=", "COURSE_SMOKE=")):
                    value = line.split("=", 1)[1].strip().strip("'\"").lower()
                    return value in ("true", "1", "yes")
    return None


def resolve_lessons(root: Path, from_dir: Path, names: list[str]) -> list[str]:
    """Lesson names: every ``notebooks/*.ipynb`` by default, else the ones named."""
    lessons = [p.stem for p in manifest.files(root, manifest.LESSONS)]
    if not names:
        return lessons
    extra = sorted({p.stem for p in from_dir.glob("*.ipynb")} - set(lessons))
    out = []
    for name in names:
        stem = Path(name).stem
        matches = [k for k in lessons if k == stem or k.startswith(stem + "_")]
        matches = matches or [k for k in extra if k == stem or k.startswith(stem + "_")]
        if len(matches) != 1:
            raise CourseError(
                f"{'unknown' if not matches else 'ambiguous'} notebook {name!r}; "
                f"lessons: {', '.join(lessons) or '(none)'}"
            )
        out.append(matches[0])
    return out


def claims_source(root: Path, claims: Path | None) -> tuple[list[dict], str]:
    """The build machine's ``claims.json`` (if any) first, then the shipped files beside it."""
    from course_utils.claims import results

    shipped = [
        results.load(p)
        for p in sorted((root / "docs" / "claims-results").glob("*.json"))
    ]
    names = ", ".join(Path(d["_path"]).name for d in shipped) or "none"
    path = claims or root / "build" / "claims" / "claims.json"
    if path.exists():
        data = results.load(path)
        when = data["fingerprint"].get("when", "?")
        return [data, *shipped], (
            "The first column was measured by `course claims` on the machine that built "
            f"this site ({when}); the others are the course's shipped result files "
            f"({names}), measured on the machines they name."
        )
    if not shipped:
        raise CourseError(
            "no claims results: run `course claims` (build/claims/claims.json)"
        )
    return shipped, (
        "The machine that built this site has no `course claims` run "
        f"(build/claims/claims.json), so this is the course's shipped result file(s): {names}."
    )


def lesson_source(nb: Any, lesson: str) -> str:
    """The file a lesson page comes from: its jupytext ``.py`` when the notebook's
    metadata pairs it with one (every lesson's does), else the ``.ipynb`` itself."""
    formats = str(nb.metadata.get("jupytext", {}).get("formats", ""))
    paired = any(f.split(":")[0] == "py" for f in formats.split(","))
    return f"notebooks/{lesson}.{'py' if paired else 'ipynb'}"


def page_sources(
    root: Path, executed: dict[str, Any], exercises: list[Path], docs: list[str]
) -> dict[str, str]:
    """Each page's file in the repository (from its root), which "Edit this page" opens:
    a lesson's ``.py``, an exercise notebook's master in ``solutions/`` (the notebook is
    generated from it), a document, the README for the home and "About" pages."""
    sources = {f"notebooks/{n}": lesson_source(nb, n) for n, nb in executed.items()}
    for path in exercises:
        master = root / "solutions" / f"{path.stem}.py"
        name = (
            f"solutions/{master.name}" if master.exists() else f"exercises/{path.name}"
        )
        sources[f"exercises/{path.stem}"] = name
    sources |= {f"docs/{d}": f"docs/{d}.md" for d in docs}
    return sources | {"index": "README.md", "about": "README.md"}


def settings(
    smoke: list[str],
    lessons: int,
    repository: str | None = REPOSITORY,
    sources: dict[str, str] | None = None,
    built: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The values of the generated ``conf.py`` (``smoke``: the lessons of a smoke run;
    ``repository``: owner/name on GitHub, or None; ``sources``: each page's file there;
    ``built``: the checkout the site is built from, for every page's footer)."""
    options: dict[str, Any] = {
        "path_to_docs": "",
        # The language switch before the theme's buttons (site_ext.add_language_switch).
        "article_header_end": [
            site_assets.SWITCH_TEMPLATE,
            "article-header-buttons.html",
        ],
    }
    if repository:
        options |= {
            "repository_url": f"https://github.com/{repository}",
            "repository_branch": release_tag(),
            "use_repository_button": True,
            # The course's forum, beside the search box on every page (the footer
            # links to it too).
            "icon_links": [
                {
                    "name": "Discussions",
                    "url": site_pages.discussions_url(repository),
                    "icon": "fa-solid fa-comments",
                    "type": "fontawesome",
                }
            ],
            "launch_buttons": {
                "colab_url": "https://colab.research.google.com",
                "binderhub_url": "https://mybinder.org",
                "notebook_interface": "jupyterlab",
            },
        }
    if built is not None:
        options["extra_footer"] = site_pages.build_label(built)
    if repository:
        options["extra_footer"] = site_pages.discussions_line(repository) + options.get(
            "extra_footer", ""
        )
    if smoke:
        options["announcement"] = (
            "Smoke run: "
            + ("every lesson" if len(smoke) == lessons else ", ".join(smoke))
            + " ran with SMOKE = True, so the sizes are tiny and the timings say little;"
            " <code>make site</code> builds the site from a full run."
        )
    return {
        "language": "en",
        "project": site_pages.TITLE,
        "html_title": site_pages.TITLE,
        "extensions": [
            "myst_nb",
            "sphinxcontrib.mermaid",
            "course_utils.tooling.site.extension",
        ],
        "nb_execution_mode": "off",
        "nb_merge_streams": True,
        # No widget manager from a CDN: a widget (a progress bar) shows its text instead.
        "nb_ipywidgets_js": {},
        "nb_mime_priority_overrides": [
            ("*", "application/vnd.jupyter.widget-view+json", None)
        ],
        "myst_enable_extensions": ["dollarmath", "amsmath", "colon_fence"],
        "myst_heading_anchors": 6,
        "myst_heading_slug_func": "course_utils.tooling.site.extension.jupyterlab_slug",
        "myst_fence_as_directive": ["mermaid"],
        "mathjax_path": site_assets.MATHJAX_JS,
        "mermaid_use_local": site_assets.MERMAID_JS,
        "mermaid_fullscreen": False,
        "mermaid_height": "auto",
        "html_theme": "sphinx_book_theme",
        "html_theme_options": options,
        "html_static_path": ["_static"],
        "templates_path": ["_templates"],
        "exclude_patterns": ["_readme_*.md", ".doctrees"],
        # A traceback that the IPython lexer cannot take is shown in its relaxed mode.
        "suppress_warnings": ["misc.highlighting_failure"],
        "author": "the course's authors",
        "smartquotes": False,  # the text as the notebooks have it (and JupyterLab's ids)
        # Read by course_utils.tooling.site.extension (its launch targets and source links).
        "course_repository": repository or "",
        "course_release": release_tag(),
        "course_edit_branch": EDIT_BRANCH,
        "course_sources": sources or {},
        # Each figure's alt text by its image's name (site_pages.figures), set by stage().
        "course_figure_alts": {},
        # The half this build makes ("en", or site_zh.LANGUAGE under zh/), each page's
        # page in the other half (the switch links to the other home page without one)
        # and, in the Chinese half, the notebook each page's launch buttons open.
        "course_language": "en",
        "course_counterparts": {},
        "course_notebooks": {},
    }


def _staged_set(root: Path, lessons: list[str], exercises: list[Path]) -> set[str]:
    staged = {f"notebooks/{s}.ipynb" for s in lessons} | {"README.md"}
    staged |= {f"exercises/{p.name}" for p in exercises}
    return staged | {f"docs/{p.name}" for p in (root / "docs").glob("*.md")}


def _student_version(path: Path, text: str | None = None) -> Any:
    """The student notebook at ``path`` (or given as ``text``), refused if it holds a
    solution or hidden tests."""
    import nbformat

    if text is None:
        nb = nbformat.read(path, as_version=4)
    else:
        nb = nbformat.reads(text, as_version=4)
    for index, cell in enumerate(nb.cells):
        if any(m in cell.source for m in ("### BEGIN SOLUTION", "HIDDEN TESTS")):
            raise CourseError(f"{path}: cell {index} holds a solution or hidden tests")
    return nb


@dataclass
class ChineseHalf:
    """The Chinese half's sources: page -> notebook (a lesson's carries its English
    execution's outputs) and the Chinese README's home part (None unless finished)."""

    pages: dict[str, Any] = field(default_factory=dict)
    readme_home: str | None = None


def chinese_half(
    root: Path,
    executed: dict[str, Any],
    exercises: list[Path],
    zh_from: Path | None = None,
) -> ChineseHalf:
    """The Chinese editions of the lessons in ``executed``, of the student notebooks and
    of the README whose catalogs are finished (:func:`site_zh.finished`); with
    ``zh_from``, the lessons' Chinese notebooks are every ``zh_from/<lesson>.ipynb``."""
    import copy

    import nbformat

    names = {p.stem for p in exercises} | {"README"}
    if zh_from is None:
        names |= set(executed)
    texts = site_zh.editions(root, names)
    if zh_from is not None:
        for lesson in executed:
            path = zh_from / f"{lesson}.ipynb"
            if path.exists():
                texts[lesson] = path.read_text(encoding="utf-8")
    half = ChineseHalf()
    for lesson, nb in executed.items():
        if lesson in texts:
            chinese = nbformat.reads(texts[lesson], as_version=4)
            english = copy.deepcopy(nb)
            half.pages[f"notebooks/{lesson}"] = site_zh.carry(english, chinese, lesson)
    for path in exercises:
        if path.stem in texts:
            where = path.parent / site_zh.LANGUAGE / path.name
            nb = _student_version(where, texts[path.stem])
            half.pages[f"exercises/{path.stem}"] = nb
    if "README" in texts:
        from course_utils.tooling.translation import catalog

        cat = catalog.read(catalog.catalog_path(root, site_zh.LANGUAGE, "README"))
        heading = site_pages.README_SPLIT.removeprefix("## ")
        split = "## " + catalog.translations(cat).get(heading, heading)
        half.readme_home = site_zh.readme_home(texts["README"], split)
    return half


def stage(
    root: Path,
    executed: dict[str, Any],
    src: Path,
    claims: Path | None,
    repository: str | None = REPOSITORY,
    pdf: bool = False,
    zh_pages: Iterable[str] = (),
) -> SiteBuild:
    """Write the Sphinx source tree for ``executed`` (lesson name -> checked notebook);
    with ``pdf``, the home page links to the course's PDF; ``zh_pages``, the pages of
    the Chinese half (each English page of one of them switches to it)."""
    import nbformat

    report = SiteBuild(out=src, checkout=checkout(root))
    report.counterparts = {page: page for page in ["index", *zh_pages]}
    if not repository:
        report.notes.append(NO_REPOSITORY)
    exercises = manifest.files(root, manifest.STUDENTS)
    docs = sorted(p.stem for p in (root / "docs").glob("*.md"))
    report.sources = page_sources(root, executed, exercises, docs)
    staged = _staged_set(root, list(executed), exercises)
    alts = {}
    for lesson, nb in executed.items():
        alts |= {name: alt for _, _, name, alt in site_pages.figures(nb.cells) if alt}
        report.smoke[lesson] = smoke_of(nb)
        label = site_pages.version_label(nb.metadata.get("course"))
        pairs = site_pages.notebook_page(
            nb, f"notebooks/{lesson}.ipynb", staged, report.smoke[lesson], label
        )
        report.pairs[lesson] = len(pairs)
        (src / "notebooks").mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, src / "notebooks" / f"{lesson}.ipynb")
    for path in exercises:
        nb = _student_version(path)
        site_pages.notebook_page(nb, f"exercises/{path.name}", staged, None)
        (src / "exercises").mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, src / "exercises" / path.name)
    for name in docs:
        text = (root / "docs" / f"{name}.md").read_text(encoding="utf-8")
        site_pages.write(
            src / "docs" / f"{name}.md",
            site_pages.rewrite_links(text, f"docs/{name}.md", staged),
        )
    home, about = site_pages.readme_parts(
        (root / "README.md").read_text(encoding="utf-8"), staged
    )
    site_pages.write(src / "_readme_home.md", home)
    site_pages.write(src / "_readme_about.md", about)
    site_pages.write(src / "about.md", site_pages.ABOUT_PAGE)
    site_pages.write(
        src / "claims.md", site_pages.claims_page(*claims_source(root, claims))
    )
    site_pages.write(
        src / "index.md",
        site_pages.index_page(
            list(executed),
            [p.stem for p in exercises],
            docs,
            site_pdf.PDF_NAME if pdf else None,
        ),
    )
    smoke = [lesson for lesson, on in report.smoke.items() if on]
    conf = settings(smoke, len(executed), repository, report.sources, report.checkout)
    conf["course_figure_alts"] = alts
    conf["course_counterparts"] = report.counterparts
    site_pages.write(src / "conf.py", site_pages.conf_py(conf))
    site_assets.install(root, src / "_static", src / "_templates")
    report.pages = ["index", "about", "claims", *(f"notebooks/{s}" for s in executed)]
    report.pages += [f"exercises/{p.stem}" for p in exercises] + [
        f"docs/{d}" for d in docs
    ]
    return report


def stage_zh(
    root: Path,
    half: ChineseHalf,
    src: Path,
    report: SiteBuild,
    repository: str | None = REPOSITORY,
) -> None:
    """Write the Chinese half's Sphinx source tree (its pages changed in place) and note
    its pages and sources in ``report`` (the English half's, staged before)."""
    import nbformat

    staged = {f"{page}.ipynb" for page in half.pages} | {"README.md"}
    alts = {}
    for page, nb in half.pages.items():
        name = page.split("/", 1)[1]
        if page.startswith("notebooks/"):
            alts |= {n: alt for _, _, n, alt in site_pages.figures(nb.cells) if alt}
            label = site_pages.version_label(nb.metadata.get("course"))
            smoke = report.smoke[name]
            site_pages.notebook_page(
                nb, f"{page}.ipynb", staged, smoke, label, site_zh.SMOKE_NOTE
            )
        else:
            site_pages.notebook_page(nb, f"{page}.ipynb", staged, None)
        (src / page).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, src / f"{page}.ipynb")
        report.zh_sources[page] = site_zh.catalog_source(name)
    title = site_pages.TITLE + site_zh.TITLE_SUFFIX
    if half.readme_home is not None:
        home = site_pages.rewrite_links(
            site_pages.strip_badges(half.readme_home), "README.md", staged
        )
        site_pages.write(src / "_readme_home.md", home)
        report.zh_sources["index"] = site_zh.catalog_source("README")
    lessons = [p for p in half.pages if p.startswith("notebooks/")]
    exercises = [p for p in half.pages if p.startswith("exercises/")]
    site_pages.write(
        src / "index.md",
        site_zh.home_page(title, half.readme_home is not None)
        + "\n"
        + site_pages.toctree("课程", lessons)
        + site_pages.toctree("练习", exercises),
    )
    smoke = [name for name, on in report.smoke.items() if on]
    conf = settings(
        smoke, len(report.smoke), repository, report.zh_sources, report.checkout
    )
    if smoke:
        which = (
            "每一课都" if len(smoke) == len(report.smoke) else "、".join(smoke) + " "
        )
        conf["html_theme_options"]["announcement"] = site_zh.SMOKE_ANNOUNCEMENT.format(
            which=which
        )
    conf |= {
        "language": site_zh.SPHINX_LANGUAGE,
        "project": title,
        "html_title": title,
        "course_figure_alts": alts,
        "course_language": site_zh.LANGUAGE,
        "course_counterparts": {p: p for p in ["index", *half.pages]},
        "course_notebooks": {p: site_zh.notebook_path(p) for p in half.pages},
    }
    site_pages.write(src / "conf.py", site_pages.conf_py(conf))
    site_assets.install(root, src / "_static", src / "_templates")
    report.zh_pages = ["index", *half.pages]


def run_sphinx(src: Path, out: Path, *more: tuple[Path, Path]) -> None:
    """Sphinx's HTML build, warnings (and missing references) as errors; each of
    ``more`` (a source tree and its output) builds at the same time."""
    missing = [m for m in SITE_MODULES if _missing(m)]
    if missing:
        raise CourseError(
            f"the site needs {', '.join(missing)}: pip install -e '.[site]'"
        )
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "html",
        "-W",
        "-n",
        "--keep-going",
        "-q",
    ]
    procs = [
        (
            subprocess.Popen(
                [*cmd, "-d", str(s / ".doctrees"), str(s), str(o)],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                cwd=s,
            ),
            s,
        )
        for s, o in [(src, out), *more]
    ]
    failed = []
    for proc, tree in procs:
        output = proc.communicate()[0]
        if proc.returncode != 0:
            lines = output.strip().splitlines()
            failed.append(f"sphinx failed ({tree}):\n" + "\n".join(lines[-40:]))
    if failed:
        raise CourseError("\n".join(failed))


def _missing(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:
        return True


def build(
    root: Path,
    from_dir: Path,
    out: Path,
    lessons: list[str] | None = None,
    claims: Path | None = None,
    repository: str | None = REPOSITORY,
    pdf: bool = False,
    zh_from: Path | None = None,
) -> SiteBuild:
    """Check the executed copies, stage the source trees next to ``out`` (the English
    half and the Chinese one, built into ``out/zh``), run Sphinx; with ``pdf``, print
    the home page and every English lesson into ``out/course.pdf``; ``zh_from``: the
    lessons' Chinese notebooks (default: the finished ones of ``notebooks/zh/``)."""
    start = time.perf_counter()
    names = lessons if lessons is not None else resolve_lessons(root, from_dir, [])
    if not names:
        raise CourseError(f"no lessons to build: {root / 'notebooks'} has no notebook")
    executed = {n: read_executed(from_dir / f"{n}.ipynb", n) for n in names}
    exercises = manifest.files(root, manifest.STUDENTS)
    half = chinese_half(root, executed, exercises, zh_from)
    src = out.parent / f"{out.name}-src"
    zh_src = out.parent / f"{out.name}-src-{site_zh.SUBDIR}"
    for path in (src, zh_src, out):
        shutil.rmtree(path, ignore_errors=True)
    report = stage(root, executed, src, claims, repository, pdf, half.pages)
    stage_zh(root, half, zh_src, report, repository)
    run_sphinx(src, out, (zh_src, out / site_zh.SUBDIR))
    report.out = out
    report.seconds = time.perf_counter() - start  # the PDF has its own
    if pdf:
        report.pdf = site_pdf.print_course(
            out, ["index", *(f"notebooks/{n}" for n in names)]
        )
    (out / "site.json").write_text(
        json.dumps(
            {
                "smoke": report.smoke,
                "pairs": report.pairs,
                "pages": report.pages,
                "sources": report.sources,
                "zh_pages": report.zh_pages,
                "zh_sources": report.zh_sources,
                "counterparts": report.counterparts,
                "checkout": report.checkout,
                "notes": report.notes,
                "pdf": None
                if report.pdf is None
                else {
                    "file": report.pdf.path.name,
                    "pages": report.pdf.pages,
                    "images": report.pdf.images,
                    "parts": report.pdf.parts,
                    "seconds": round(report.pdf.seconds, 1),
                },
            },
            indent=1,
        )
    )
    return report


def cmd_site(args: argparse.Namespace) -> int:
    from course_utils.tooling.notebooks import course_root

    root = course_root()
    from_dir = Path(args.from_dir) if args.from_dir else root / "build" / "executed"
    out = Path(args.out) if args.out else root / "build" / "site"
    names = resolve_lessons(root, from_dir, args.notebooks)
    zh_from = Path(args.zh_from).resolve() if args.zh_from else None
    report = build(root, from_dir, out.resolve(), names, pdf=args.pdf, zh_from=zh_from)
    for note in report.notes:
        print(f"note: {note}")
    smoke = {v for v in report.smoke.values()}
    mode = "smoke" if smoke == {True} else "full" if smoke == {False} else "mixed"
    print(
        f"built {len(report.pages)} pages ({len(names)} lessons, {mode} run, "
        f"{sum(report.pairs.values())} side-by-side pairs) in {report.seconds:.1f} s: "
        f"{out / 'index.html'}; in Chinese {len(report.zh_pages)} pages "
        f"({sum(p.startswith('notebooks/') for p in report.zh_pages)} lessons): "
        f"{out / site_zh.SUBDIR / 'index.html'}"
    )
    if report.pdf is not None:
        printed = report.pdf
        print(
            f"printed {printed.path.name}: {printed.pages} pages (the home page and "
            f"{len(printed.parts) - 1} lessons, {printed.images} images) in "
            f"{printed.seconds:.1f} s: {printed.path}"
        )
    return 0


def add_commands(sub: Any) -> None:
    p = sub.add_parser(
        "site", help="build the course's website from executed notebooks"
    )
    p.add_argument(
        "notebooks", nargs="*", metavar="NOTEBOOK", help="lessons (default: all)"
    )
    p.add_argument(
        "--from",
        dest="from_dir",
        metavar="DIR",
        help="executed copies (default build/executed, from `course run`)",
    )
    p.add_argument("--out", metavar="DIR", help="the site (default build/site)")
    p.add_argument(
        "--pdf",
        action="store_true",
        help="also print the home page and every lesson into DIR/course.pdf "
        "(chromium), linked from the home page",
    )
    p.add_argument(
        "--zh-from",
        dest="zh_from",
        metavar="DIR",
        help="the lessons' Chinese notebooks, DIR/<lesson>.ipynb (default: those of "
        "notebooks/zh/ whose catalog is finished)",
    )
    p.set_defaults(func=cmd_site)
