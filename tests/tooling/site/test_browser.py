"""The built site in a real browser: Debian's chromium, driven by playwright-python.

The fixture site (two small executed lessons, every exercise, the docs) is served on
127.0.0.1 and every request to another host is blocked and counted. Every page is
visited once at 1280 px: no HTTP error, no page error, every local image decoded, math
typeset, the mermaid diagram drawn, every anchor and internal link resolving, every
launch target there; then the side-by-side pairs are measured at 1280 px (two columns,
each at least 480 px wide, spanning the folded table of contents), 899 and 400 px
(stacked), and the copy buttons are clicked and the clipboard read.
With ``COURSE_SCREENSHOTS=1`` screenshots go to ``build/site-screenshots/``. Without
chromium (or playwright) the tests skip with one line, except under ``CI=true``, where
that is a failure.
"""

from __future__ import annotations

import urllib.request
from types import SimpleNamespace
from urllib.parse import unquote, urldefrag, urlparse

import nbformat
import pytest

from course_utils.tooling.site import pdf as site_pdf
from tests.tooling.site import a11y as site_a11y
from tests.tooling.site.fixture import (
    FIXTURES,
    count_others,
    launch,
    need_browser,
    need_chinese_font,
    only,
    screenshot,
    shared_site,
)

pytestmark = pytest.mark.browser

LESSON = "notebooks/90_fixture_pairs"
# The Chinese half's pages visited with the English ones (its other pages are the same
# kind: the exercise notebooks), and the Chinese lesson.
ZH_LESSON = f"zh/{LESSON}"
ZH_PAGES = ("zh/index", ZH_LESSON)
FULL_SHOTS = (
    "index",
    "claims",
)  # and every lesson: whole pages; others: the first screen
RELEASE = "jax-pytorch-side-by-side/course/blob/v0.1.0"

# What every page reports, evaluated in the page once its scripts have run.
PAGE_STATE = """async () => {
  const local = Array.from(document.images).filter(i => i.src.startsWith(location.origin));
  const undecoded = (await Promise.all(local.map(
      i => i.decode().then(() => i.naturalWidth > 0 ? null : i.src, () => i.src))))
      .filter(Boolean);
  const links = Array.from(document.querySelectorAll('a[href]')).map(a => a.href);
  const ids = Array.from(document.querySelectorAll('[id]')).map(e => e.id);
  return {undecoded, links, ids,
          math: document.querySelectorAll('.math').length,
          typeset: document.querySelectorAll('mjx-container').length,
          mermaid: document.querySelectorAll('pre.mermaid, div.mermaid').length,
          drawn: document.querySelectorAll('.mermaid svg').length};
}"""
MATHJAX_DONE = "() => window.MathJax && MathJax.startup && MathJax.startup.promise"


@pytest.fixture(scope="module")
def served():
    need_browser()
    report = SimpleNamespace(**shared_site())
    # the server `course site --pdf` prints from
    with site_pdf.serve(report.out) as base:
        yield report, base


@pytest.fixture(scope="module")
def browser(served):
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        chromium = launch(pw)
    except Exception:
        pw.stop()
        raise
    yield chromium
    chromium.close()
    pw.stop()


@pytest.fixture(scope="module")
def site_context(served, browser):
    """The module's one context, and the requests to other hosts it refused. Its pages
    get axe-core, and the site may use the clipboard."""
    _, base = served
    blocked: list[str] = []
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, proxy=only(base)
    )
    context.set_default_timeout(90_000)  # a busy machine is slow, not broken
    count_others(context, base, blocked)
    context.add_init_script(script=site_a11y.axe_script())
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base[:-1])
    yield context, blocked
    context.close()


@pytest.fixture(scope="module")
def tests_tab(site_context):
    tab = site_context[0].new_page()
    yield tab
    tab.close()


@pytest.fixture
def page(served, tests_tab):
    """The tests' tab, at 1280 by 900 px in light mode, with nothing the site stored
    (the theme's mode): the tests take turns in it. A new context for each test cost
    about 1.3 s more CPU: a new renderer, and MathJax and mermaid fetched and compiled
    again."""
    _, base = served
    tests_tab.set_viewport_size({"width": 1280, "height": 900})
    tests_tab.emulate_media(color_scheme="light")
    if tests_tab.url.startswith(base):
        tests_tab.evaluate("() => localStorage.clear()")
    return tests_tab


def _visit(page, base: str, page_name: str, problems: list[str]) -> dict:
    """One page: its HTTP errors, page errors and state once math and diagrams are done.
    ``page`` is the tab that visited the pages before, as a reader clicking through the
    site has; its listeners append to ``problems``, emptied here first."""
    problems.clear()
    page.goto(base + page_name + ".html", wait_until="load")
    if page.locator(".math").count():
        page.wait_for_function(MATHJAX_DONE, timeout=30_000)
        page.evaluate("() => MathJax.startup.promise")
    if page.locator("pre.mermaid, div.mermaid").count():
        page.wait_for_selector(".mermaid svg", state="attached", timeout=30_000)
    state = page.evaluate(PAGE_STATE)
    whole = page_name in FULL_SHOTS or "notebooks/" in page_name
    screenshot(page, f"{page_name.replace('/', '__')}.png", full_page=whole)
    state["axe"] = site_a11y.both_modes(page)
    state["problems"] = list(problems)
    return state


@pytest.fixture(scope="module")
def visited(served, site_context):
    """Every page of the site, visited once at 1280 px, one after the other in one tab
    (a new tab for each page took about twice the CPU time)."""
    report, base = served
    context, blocked = site_context
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda err: problems.append(f"page error: {err}"))
    page.on(
        "response",
        lambda r: (
            problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None
        ),
    )
    names = [*report.pages, *ZH_PAGES]
    states = {name: _visit(page, base, name, problems) for name in names}
    page.close()
    return base, states, list(blocked)


def test_every_page_loads_without_errors_and_nothing_from_another_host(visited):
    _, states, blocked = visited
    problems = [f"{n}: {p}" for n, s in states.items() for p in s["problems"]]
    problems += [
        f"{n}: image not decoded: {u}"
        for n, s in states.items()
        for u in s["undecoded"]
    ]
    assert not problems, "\n".join(problems)
    assert not blocked, f"requests to other hosts: {blocked[:10]}"


def test_no_page_has_a_serious_accessibility_problem_in_light_or_dark_mode(visited):
    """axe-core on every page, light and dark: no serious or critical violation and no
    heading-order (tests/tooling/site/a11y.py)."""
    _, states, _ = visited
    bad = [line for n, s in states.items() for line in site_a11y.failures(n, s["axe"])]
    assert not bad, "\n".join(bad)
    lesson = states[LESSON]["axe"]
    assert [lesson[m]["theme"] for m in ("light", "dark")] == ["light", "dark"]


def test_axe_finds_what_it_must_fail_on(served, page):
    """The check itself: a page with an unlabelled button, an image without alt text,
    grey-on-white text and a skipped heading level fails with each named."""
    _, base = served
    page.goto(f"{base}{LESSON}.html", wait_until="load")
    page.evaluate(
        """() => document.querySelector('.bd-article').insertAdjacentHTML('beforeend',
        '<button class="bad"></button><img src="x.png"><h1>A</h1><h4>B</h4>' +
        '<p style="color:#bbb;background:#fff">faint</p>')"""
    )
    found = "\n".join(site_a11y.failures("bad", {"light": site_a11y.check(page)}))
    for rule in ("button-name", "image-alt", "heading-order", "color-contrast"):
        assert rule in found, found


def test_a_lesson_loaded_in_dark_mode_passes_axe_and_shows_its_figure_described(
    served, page
):
    """A reader whose system is dark gets the dark theme at load (the mermaid diagram
    drawn dark too); every rule passes there, and the figure's alt text is its
    description."""
    _, base = served
    page.emulate_media(color_scheme="dark")
    page.goto(f"{base}{LESSON}.html", wait_until="load")
    page.wait_for_selector(".mermaid svg", state="attached", timeout=30_000)
    page.wait_for_function(MATHJAX_DONE, timeout=30_000)
    run = site_a11y.check(page)
    screenshot(page, "lesson-dark.png", full_page=True)
    assert run["theme"] == "dark"
    assert not site_a11y.failures(LESSON, {"dark": run})
    alts = page.eval_on_selector_all(
        ".cell_output img", "imgs => imgs.map(i => i.getAttribute('alt'))"
    )
    assert alts == ['A plot with series: "torch", "jax".']


def test_math_is_typeset_and_the_diagram_drawn(visited):
    _, states, _ = visited
    lesson = states[LESSON]
    assert lesson["math"] >= 2 and lesson["typeset"] >= lesson["math"]
    assert lesson["mermaid"] == 1 and lesson["drawn"] == 1
    untypeset = [n for n, s in states.items() if s["typeset"] < s["math"]]
    undrawn = [n for n, s in states.items() if s["drawn"] < s["mermaid"]]
    assert not untypeset and not undrawn, (untypeset, undrawn)


def test_every_anchor_and_internal_link_resolves(visited):
    base, states, _ = visited
    ids = {base + name + ".html": set(s["ids"]) for name, s in states.items()}
    bad, files = [], set()
    for name, state in states.items():
        for link in state["links"]:
            url, frag = urldefrag(link)
            if not url.startswith(base) or urlparse(url).path.endswith("/"):
                continue
            if not url.endswith(".html") or (
                url not in ids and url.startswith(base + "zh/")
            ):
                files.add(url)  # a download, or a Chinese page not visited: it is there
            elif url not in ids:
                bad.append(f"{name}: {link} (page not in the site)")
            elif frag and unquote(frag) not in ids[url]:
                bad.append(f"{name}: {link} (no such anchor)")
    for url in sorted(files):
        try:
            urllib.request.urlopen(url, timeout=30).close()
        except OSError as err:
            bad.append(f"{url}: {err}")
    assert not bad, "\n".join(bad[:40])
    assert {"1.-First-part", "2.-Second-part"} <= set(states[LESSON]["ids"])
    assert {"1.-第一部分", "2.-第二部分"} <= set(states[ZH_LESSON]["ids"])


def test_launch_buttons_open_the_committed_notebook(visited):
    _, states, _ = visited
    links = states[LESSON]["links"]
    colab = f"https://colab.research.google.com/github/{RELEASE}/{LESSON}.ipynb"
    assert colab in links
    binder = "https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0"
    assert f"{binder}?urlpath=lab/tree/{LESSON}.ipynb" in links
    github = f"https://github.com/{RELEASE}/{LESSON}.ipynb"
    assert f"https://kaggle.com/kernels/welcome?src={github}" in links
    studio_lab = "https://studiolab.sagemaker.aws/import/github"
    assert f"{studio_lab}/{RELEASE}/{LESSON}.ipynb" in links
    zh = states[ZH_LESSON]["links"]
    assert (
        f"https://colab.research.google.com/github/{RELEASE}/notebooks/zh/90_fixture_pairs.ipynb"
        in zh
    )
    assert f"{binder}?urlpath=lab/tree/notebooks/zh/90_fixture_pairs.ipynb" in zh
    assert not any(f"/blob/v0.1.0/{LESSON}.ipynb" in u for u in zh)
    assert not any(f"lab/tree/{LESSON}.ipynb" in u for u in zh)
    exercise = f"{RELEASE}/exercises/03_jit_compilation_exercises.ipynb"
    assert any(
        exercise in u for u in states["exercises/03_jit_compilation_exercises"]["links"]
    )


def _pair_boxes(page) -> list[list[dict]]:
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('.sbs-pair')).map(p =>
             Array.from(p.children).map(c => {
               const r = c.getBoundingClientRect();
               return {x: r.x, y: r.y, w: r.width, h: r.height};
             }))"""
    )


@pytest.mark.parametrize(
    ("lesson", "width"),
    [(LESSON, 1280), (LESSON, 899), (LESSON, 400), (ZH_LESSON, 1280), (ZH_LESSON, 400)],
)
def test_pairs_stand_side_by_side_when_wide_and_stack_when_narrow(
    served, page, lesson, width
):
    report, base = served
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{base}{lesson}.html", wait_until="load")
    pairs = _pair_boxes(page)
    page.locator(".sbs-pair").first.scroll_into_view_if_needed()
    prefix = "zh-" if lesson == ZH_LESSON else ""
    screenshot(page, f"{prefix}pairs-{width}px.png")
    assert len(pairs) == report.pairs["90_fixture_pairs"] == 2
    layout = page.evaluate(
        """() => ({side: document.querySelector('.bd-sidebar-primary')
                     .getBoundingClientRect().right,
                   scroll: document.documentElement.scrollWidth})"""
    )
    assert layout["scroll"] <= width  # nothing runs off the page
    if width >= 1200:  # a pair on screen folds the table of contents it spans
        page.wait_for_selector(".bd-sidebar-secondary.hide", state="attached")
    for torch, jax, *parity in pairs:
        if width >= 900:
            assert (
                abs(torch["y"] - jax["y"]) < 2
                and jax["x"] >= torch["x"] + torch["w"] - 1
            )
            assert abs(torch["w"] - jax["w"]) < 2
            assert jax["x"] + jax["w"] <= width
        else:
            assert (
                jax["y"] >= torch["y"] + torch["h"] - 1
                and abs(jax["x"] - torch["x"]) < 2
            )
        if width >= 1200:  # room for the pairs: ~336 px each beside the contents
            assert torch["w"] >= 480 and torch["x"] >= layout["side"]
        for cell in parity:
            assert cell["y"] >= max(torch["y"] + torch["h"], jax["y"] + jax["h"]) - 1
            assert cell["w"] >= torch["w"] + (jax["w"] if width >= 900 else 0) - 1


@pytest.mark.parametrize("width", [1280, 400])
def test_the_discussions_are_a_click_away(served, page, width):
    """The footer's link on every width; the icon beside the search box where the
    sidebar shows (on a phone it is in the menu)."""
    _, base = served
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{base}{LESSON}.html")
    forum = "https://github.com/jax-pytorch-side-by-side/course/discussions"
    footer = page.locator(f'.course-discussions a[href="{forum}"]')
    footer.scroll_into_view_if_needed()
    assert footer.is_visible()
    icon = page.locator(f'.bd-sidebar-primary a.pst-navbar-icon[href="{forum}"]')
    assert icon.count() == 1 and icon.is_visible() == (width >= 960)
    assert icon.text_content().strip() == "Discussions"  # its name, read out


def test_a_smoke_run_says_so_on_its_pages(served, page):
    _, base = served
    page.goto(f"{base}{LESSON}.html")
    assert page.locator(".course-smoke-banner").is_visible()
    assert "SMOKE = True" in page.locator(".bd-header-announcement").inner_text()
    page.goto(f"{base}notebooks/91_fixture_full.html")
    assert page.locator(".course-smoke-banner").count() == 0


def test_each_code_block_copies_its_code_without_prompts_or_outputs(served, page):
    _, base = served
    page.goto(f"{base}{LESSON}.html", wait_until="load")
    halves = page.locator(".sbs-pair > .cell:not(.tag_sbs-parity)")
    assert halves.count() == 4
    for i in range(halves.count()):  # one button on each half, none on an output
        assert halves.nth(i).locator(".course-copy").count() == 1
    assert page.locator(".cell_output .course-copy").count() == 0
    nb = nbformat.read(FIXTURES / "90_fixture_pairs.ipynb", as_version=4)
    torch = halves.nth(0).locator(".course-copy")
    torch.click()
    assert page.evaluate("() => navigator.clipboard.readText()") == nb.cells[4].source
    assert torch.inner_text() == "Copied"
    # A console session in the prose: its prompted lines, the prompts and output off.
    console = page.locator(".bd-article section > div.highlight-python .course-copy")
    assert console.count() == 1
    console.click()
    assert page.evaluate("() => navigator.clipboard.readText()") == "y = [1, 2]\nlen(y)"


# Each text drawn on a canvas in the font the page's prose has, as pixels: two Chinese
# characters and a private-use one, which no font has (its glyph is the missing box).
GLYPHS = """() => {
  const p = document.querySelector('.bd-article p');
  const style = getComputedStyle(p);
  const draw = text => {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 64;
    const ctx = canvas.getContext('2d');
    ctx.font = `48px ${style.fontFamily}`;
    ctx.fillText(text, 4, 52);
    return Array.from(ctx.getImageData(0, 0, 64, 64).data).join(',');
  };
  return {lang: document.documentElement.lang, text: p.innerText,
          ink: draw('梯'), other: draw('度'), missing: draw('\\uE000')};
}"""


def test_the_switch_goes_both_ways_and_chinese_text_renders(served, page):
    """A reader on the English lesson clicks 中文 and reads the same lesson in Chinese,
    its characters drawn (not the missing-glyph box), then clicks English to go back."""
    need_chinese_font()
    _, base = served
    page.goto(f"{base}{LESSON}.html")
    assert page.evaluate("() => document.documentElement.lang") == "en"
    for width in (1280, 400):  # on the header's row, among its icons, at either width
        page.set_viewport_size({"width": width, "height": 900})
        switch = page.locator("a.course-language").bounding_box()
        header = page.locator(".bd-header-article").bounding_box()
        buttons = page.locator(".article-header-buttons").bounding_box()
        assert header["y"] <= switch["y"], (width, switch, header)
        assert switch["y"] + switch["height"] <= header["y"] + header["height"], width
        assert switch["x"] + switch["width"] <= buttons["x"], (width, switch, buttons)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.locator("a.course-language", has_text="中文").click()
    page.wait_for_url(f"{base}{ZH_LESSON}.html")
    glyphs = page.evaluate(GLYPHS)
    assert glyphs["lang"] == "zh-CN" and "一节已经执行过的小课" in glyphs["text"]
    assert set(glyphs["ink"].split(",")) != {"0"}, (
        "a Chinese character drew nothing on the canvas (is a font for Chinese installed?)"
    )
    assert glyphs["ink"] != glyphs["other"], "two Chinese characters drew the same box"
    assert glyphs["ink"] != glyphs["missing"], (
        "a Chinese character drew the missing box"
    )
    screenshot(page.locator(".bd-article"), "zh-lesson-text.png")
    page.locator("a.course-language", has_text="English").click()
    page.wait_for_url(f"{base}{LESSON}.html")
    page.goto(f"{base}notebooks/91_fixture_full.html")  # no Chinese edition: its home
    page.locator("a.course-language").click()
    page.wait_for_url(f"{base}zh/index.html")
    assert page.locator("h1").first.inner_text().endswith("（中文版）")
