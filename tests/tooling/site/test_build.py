"""``course site``: checks of the executed copies, the build of the fixture site, and
every link, anchor and asset of the built pages (a static link check over the whole build)."""

from __future__ import annotations

import re
import subprocess
import sys
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, unquote, urldefrag, urlparse

import nbformat
import pytest

from course_utils.tooling.errors import CourseError
from course_utils.tooling.site import build as site
from course_utils.tooling.site import pages as site_pages
from tests.tooling.site import fixture as site_fixture
from tests.tooling.site.fixture import FIXTURES, LESSONS, ROOT


@pytest.fixture(scope="module")
def built():
    """The fixture site, built by the ``course site`` command itself."""
    return SimpleNamespace(**site_fixture.shared_site())


def test_a_missing_executed_copy_is_named(tmp_path):
    with pytest.raises(CourseError, match=r"no executed copy of notebooks/92_gone"):
        site.build(ROOT, FIXTURES, tmp_path / "site", [*LESSONS, "92_gone"])


def test_an_error_output_is_named_with_its_cell(tmp_path):
    nb = nbformat.read(FIXTURES / "90_fixture_pairs.ipynb", as_version=4)
    nb.cells[6].outputs.append(
        nbformat.v4.new_output("error", ename="ValueError", evalue="boom", traceback=[])
    )
    nbformat.write(nb, tmp_path / "90_fixture_pairs.ipynb")
    with pytest.raises(CourseError) as err:
        site.read_executed(tmp_path / "90_fixture_pairs.ipynb", "90_fixture_pairs")
    assert "cell 5 ('assert grad_torch == grad_jax')" in str(err.value)
    assert "ValueError: boom" in str(err.value)


def test_a_figure_without_a_description_is_named_with_its_lesson_and_cell(tmp_path):
    nb = nbformat.read(FIXTURES / "90_fixture_pairs.ipynb", as_version=4)
    nb.cells[8].outputs[0].metadata = {}
    nbformat.write(nb, tmp_path / "90_fixture_pairs.ipynb")
    with pytest.raises(CourseError) as err:
        site.read_executed(tmp_path / "90_fixture_pairs.ipynb", "90_fixture_pairs")
    message = str(err.value)
    assert message.startswith(f"{tmp_path / '90_fixture_pairs.ipynb'}: cell 7 ")
    assert "('plot_curves()') shows a figure without a description" in message
    assert "plots.set_description(fig, text)" in message


def test_each_figure_is_found_with_its_image_name_and_alt_text():
    nb = nbformat.read(FIXTURES / "90_fixture_pairs.ipynb", as_version=4)
    ((index, mime, name, alt),) = site_pages.figures(nb.cells)
    assert (index, mime, alt) == (8, "image/png", 'A plot with series: "torch", "jax".')
    assert re.fullmatch(r"[0-9a-f]{64}", name)


def test_a_cell_tag_does_not_excuse_an_error(tmp_path):
    nb = nbformat.read(FIXTURES / "90_fixture_pairs.ipynb", as_version=4)
    nb.cells[9].metadata["tags"] = ["raises-exception"]
    nb.cells[9].outputs = [
        nbformat.v4.new_output("error", ename="IndexError", evalue="out", traceback=[])
    ]
    nbformat.write(nb, tmp_path / "90_fixture_pairs.ipynb")
    with pytest.raises(CourseError, match="cell 8 .* holds an error output"):
        site.read_executed(tmp_path / "90_fixture_pairs.ipynb", "90_fixture_pairs")


def test_a_sharp_bit_shows_its_error_as_a_printed_line():
    nb = site.read_executed(FIXTURES / "90_fixture_pairs.ipynb", "90_fixture_pairs")
    (sharp,) = [c for c in nb.cells if "expect_error(" in c.source]
    assert [o.output_type for o in sharp.outputs] == ["stream"]
    assert sharp.outputs[0].text == "IndexError: list index out of range\n"


def test_smoke_comes_from_the_executed_parameters():
    read = lambda n: nbformat.read(FIXTURES / f"{n}.ipynb", as_version=4)  # noqa: E731
    assert site.smoke_of(read("90_fixture_pairs")) is True
    assert site.smoke_of(read("91_fixture_full")) is False
    nb = read("91_fixture_full")
    nb.metadata.pop("papermill")
    assert site.smoke_of(nb) is False  # from papermill's injected cell
    assert site.smoke_of(nbformat.v4.new_notebook()) is None


def test_lesson_names_resolve_like_course_run():
    assert site.resolve_lessons(ROOT, FIXTURES, ["90"]) == ["90_fixture_pairs"]
    assert site.resolve_lessons(ROOT, FIXTURES, [])[0] == "00_welcome_and_setup"
    with pytest.raises(CourseError, match="unknown notebook 'nope'; lessons: 00_"):
        site.resolve_lessons(ROOT, FIXTURES, ["nope"])


@pytest.mark.slow
def test_the_build_reports_pages_pairs_and_smoke(built):
    assert built.pairs == {"90_fixture_pairs": 2, "91_fixture_full": 0}
    assert built.smoke == {"90_fixture_pairs": True, "91_fixture_full": False}
    for page in built.pages:
        assert (built.out / f"{page}.html").exists(), page


@pytest.mark.slow
def test_lesson_pages_carry_pairs_anchors_banner_and_launch_buttons(built):
    html = (built.out / "notebooks" / "90_fixture_pairs.html").read_text()
    assert html.count('class="sbs-pair') == 2
    assert 'id="2.-Second-part"' in html and 'id="1.-First-part"' in html
    assert "course-smoke-banner" in html and "Open In Colab" not in html
    blob = (
        "jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/90_fixture_pairs.ipynb"
    )
    assert f"https://colab.research.google.com/github/{blob}" in html
    assert "mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?" in html
    full = (built.out / "notebooks" / "91_fixture_full.html").read_text()
    assert "course-smoke-banner" not in full
    assert "progress: 100%" in full  # a widget shows its text, no widget manager loaded


REPO = "https://github.com/jax-pytorch-side-by-side/course"


@pytest.mark.slow
def test_every_launch_target_opens_the_committed_notebook(built):
    for page in (
        "notebooks/90_fixture_pairs",
        "exercises/03_jit_compilation_exercises",
    ):
        refs = set(_parse(built.out / f"{page}.html").refs)
        blob = f"jax-pytorch-side-by-side/course/blob/v0.1.0/{page}.ipynb"
        binder = "https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0"
        expected = {
            f"https://colab.research.google.com/github/{blob}",
            f"{binder}?urlpath=lab/tree/{page}.ipynb",
            f"https://kaggle.com/kernels/welcome?src=https://github.com/{blob}",
            f"https://studiolab.sagemaker.aws/import/github/{blob}",
        }
        assert expected <= refs, (page, expected - refs)


@pytest.mark.slow
def test_edit_and_issue_links_point_at_the_source(built):
    def links(page):
        return [
            r for r in _parse(built.out / f"{page}.html").refs if r.startswith(REPO)
        ]

    lesson = links("notebooks/90_fixture_pairs")  # a jupytext pair: its .py
    assert f"{REPO}/edit/main/notebooks/90_fixture_pairs.py" in lesson
    assert f"{REPO}/blob/v0.1.0/notebooks/90_fixture_pairs.py" in lesson
    (issue,) = [u for u in lesson if "/issues/new?" in u]
    assert parse_qs(urlparse(unescape(issue)).query)["title"] == [
        "notebooks/90_fixture_pairs.py: "
    ]
    assert not any("edit" in u and u.endswith("90_fixture_pairs.ipynb") for u in lesson)
    unpaired = links("notebooks/91_fixture_full")  # no jupytext metadata: the .ipynb
    assert f"{REPO}/edit/main/notebooks/91_fixture_full.ipynb" in unpaired
    exercise = links("exercises/03_jit_compilation_exercises")  # its master
    assert f"{REPO}/edit/main/solutions/03_jit_compilation_exercises.py" in exercise
    assert f"{REPO}/edit/main/docs/VERDICTS.md" in links("docs/VERDICTS")
    assert f"{REPO}/edit/main/README.md" in links("index")
    assert (
        built.sources["notebooks/90_fixture_pairs"] == "notebooks/90_fixture_pairs.py"
    )
    assert not built.notes


@pytest.mark.slow
def test_lesson_pages_say_which_versions_their_outputs_came_from(built):
    full = (built.out / "notebooks" / "91_fixture_full.html").read_text()
    record = nbformat.read(FIXTURES / "91_fixture_full.ipynb", as_version=4)
    label = site_pages.version_label(record.metadata["course"]).split("\n")[1]
    assert f"<p>{label}</p>" in full
    assert "release v0.1.0 of the course" in label and "PyTorch 2.13.0+cpu" in label
    smoke = (built.out / "notebooks" / "90_fixture_pairs.html").read_text()
    assert "Outputs: versions unknown" in smoke and "PyTorch 2." not in smoke


@pytest.mark.slow
def test_every_page_says_what_the_site_was_built_from(built):
    footer = site_pages.build_label(built.checkout)
    assert set(built.checkout) == {"release", "commit", "tagged", "modified"}
    assert built.checkout["release"] == "v0.1.0" and built.checkout["commit"]
    for page in built.pages:
        assert footer in (built.out / f"{page}.html").read_text(), page


@pytest.mark.slow
def test_every_page_links_the_course_discussions(built):
    forum = "https://github.com/jax-pytorch-side-by-side/course/discussions"
    assert site_pages.discussions_url("jax-pytorch-side-by-side/course") == forum
    for page in built.pages:
        text = (built.out / f"{page}.html").read_text()
        assert f'<a href="{forum}">course\'s discussions on GitHub</a>' in text, page
        assert f'<a href="{forum}" title="Discussions"' in text, page  # the icon


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


def test_a_checkout_at_the_release_tag_says_so(tmp_path):
    from course_utils.tooling.notebooks import release_tag

    assert site.checkout(tmp_path)["commit"] is None  # not a git checkout
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("a")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-q", "-m", "a")
    _git(tmp_path, "tag", release_tag())
    at = site.checkout(tmp_path)
    assert at["tagged"] is True and at["modified"] is False
    assert site_pages.build_label(at).startswith(
        f'<p class="course-versions">This site was built at release {release_tag()} '
    )
    (tmp_path / "a.txt").write_text("b")
    assert site.checkout(tmp_path)["modified"] is True
    _git(tmp_path, "commit", "-q", "-am", "b")
    after = site.checkout(tmp_path)
    assert after["tagged"] is False and after["commit"] != at["commit"]
    assert f"not the release {release_tag()}" in site_pages.build_label(after)


def test_without_a_repository_the_links_are_left_out_and_the_build_says_so(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(
        site.site_assets, "install", lambda root, static, templates: None
    )
    executed = {n: site.read_executed(FIXTURES / f"{n}.ipynb", n) for n in LESSONS}
    report = site.stage(ROOT, executed, tmp_path, None, repository=None)
    assert report.notes == [site.NO_REPOSITORY]  # once, however many pages
    conf = (tmp_path / "conf.py").read_text()
    assert "course_repository = ''" in conf and "repository_url" not in conf
    assert "launch_buttons" not in conf
    assert "discussions" not in conf and "icon_links" not in conf
    configured = site_pages.conf_py(site.settings([], 2))
    assert "course_repository = 'jax-pytorch-side-by-side/course'" in configured


@pytest.mark.slow
def test_exercise_pages_hold_no_solution(built):
    for page in (built.out / "exercises").glob("*.html"):
        text = page.read_text()
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text, page.name


@pytest.mark.slow
def test_home_page_includes_the_readme_and_claims_name_the_machine(built):
    home = (built.out / "index.html").read_text()
    for part in (
        "Quickstart",
        "Curriculum",
        "Opening the notebooks",
        "00_welcome_and_setup",
    ):
        assert part in home, part
    assert "CPU, GPU and TPU" not in home  # on the "About" page
    assert "CPU, GPU and TPU" in (built.out / "about.html").read_text()
    claims = (built.out / "claims.html").read_text()
    assert "cores" in claims and "Machine:" in claims
    assert (
        "shipped result file" in claims or "the machine that built this site" in claims
    )


class _Refs(HTMLParser):
    """Every ``href``/``src`` of a page, and every ``id``."""

    def __init__(self):
        super().__init__()
        self.refs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("href", "src") and value:
                self.refs.append(value)
            elif key == "id" and value:
                self.ids.add(value)


def _parse(path: Path) -> _Refs:
    parser = _Refs()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


@pytest.mark.slow
def test_every_local_link_anchor_and_asset_resolves(built):
    pages = {
        p: _parse(p) for p in built.out.rglob("*.html") if "_static" not in p.parts
    }
    bad = []
    for page, parsed in pages.items():
        for ref in parsed.refs:
            url, frag = urldefrag(ref)
            if (
                urlparse(url).scheme
                or ref.startswith("//")
                or ref.startswith("mailto:")
            ):
                continue
            target = (
                (page.parent / unquote(url.split("?")[0])).resolve() if url else page
            )
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                bad.append(f"{page.relative_to(built.out)}: {ref} (no such file)")
            elif frag and target.suffix == ".html":
                if unquote(frag) not in pages[target].ids:
                    bad.append(f"{page.relative_to(built.out)}: {ref} (no such anchor)")
    assert not bad, "\n".join(bad[:40])


@pytest.mark.slow
def test_nothing_is_loaded_from_another_host(built):
    loaders = re.compile(r'<(?:script|link|img)[^>]+(?:src|href)="(https?:)?//', re.I)
    for page in built.out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for match in loaders.finditer(text):
            tag = text[match.start() : match.start() + 200]
            assert 'rel="canonical"' in tag, f"{page.name} loads {tag}"
    module = (built.out / "_static" / "mermaid" / "mermaid.esm.min.mjs").read_text()
    assert "cdn.jsdelivr" not in module


@pytest.mark.slow
def test_course_site_reports_what_it_built(built):
    assert "2 lessons, mixed run, 2 side-by-side pairs" in built.stdout
    assert str(built.out / "index.html") in built.stdout


def test_course_site_fails_in_one_line_naming_the_missing_copy(tmp_path):
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "course_utils.cli",
            "site",
            "--from",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith(
        "course: error: no executed copy of notebooks/00_welcome_and_setup.ipynb"
    )


def test_claims_page_puts_the_builders_run_next_to_the_shipped_files(tmp_path):
    from course_utils.tooling.site import build as site

    shipped = sorted((ROOT / "docs" / "claims-results").glob("*.json"))
    assert shipped, "the course ships at least one result file"
    mine = tmp_path / "claims.json"
    mine.write_text(shipped[0].read_text())
    results, origin = site.claims_source(ROOT, mine)
    assert [r["_path"] for r in results] == [str(mine), *map(str, shipped)]
    assert "the machine that built this site" in origin
    assert shipped[0].name in origin
    results, origin = site.claims_source(ROOT, tmp_path / "absent.json")
    assert [r["_path"] for r in results] == list(map(str, shipped))
    assert "shipped result file" in origin
