"""``course site --pdf``: the home page and every lesson, printed by chromium into one PDF.

The fixture site (``site_fixture.shared_site``) is printed once into a temporary folder
and read back with pypdf: every lesson's title in the text and in the bookmarks, its
figure as an image, its diagram and its code as text. In print media at the paper's
width, a code line too long for the page wraps and the pairs are stacked; a page whose
code does not wrap stops the print, named.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from course_utils.tooling.errors import CourseError
from course_utils.tooling.site import build as site
from course_utils.tooling.site import pages as site_pages
from course_utils.tooling.site import pdf as site_pdf
from tests.tooling.site.fixture import LESSONS, launch, need_browser, shared_site

TITLES = {
    "notebooks/90_fixture_pairs": "90 · Fixture: pairs, math and a diagram",
    "notebooks/91_fixture_full": "91 · Fixture: a full run",
}


def test_the_home_page_links_the_pdf_only_when_there_is_one():
    with_pdf = site_pages.index_page(["00_a"], [], [], site_pdf.PDF_NAME)
    assert '<a href="course.pdf">course.pdf</a>' in with_pdf
    assert "course.pdf" not in site_pages.index_page(["00_a"], [], [])


def test_the_local_server_lets_the_browser_hang_up(tmp_path, capsys):
    """Chromium drops requests it no longer needs; the server must not print a
    traceback for each (it did, in every run of the site's tests)."""
    (tmp_path / "big.bin").write_bytes(b"x" * (8 << 20))
    with site_pdf.serve(tmp_path) as base:
        port = int(base.rsplit(":", 1)[1].strip("/"))
        for _ in range(3):
            client = socket.create_connection(("127.0.0.1", port))
            client.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
            )
            client.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
            client.recv(1)
            client.close()  # a reset while the server still writes
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(
            "process_request" in t.name for t in threading.enumerate()
        ):
            time.sleep(0.05)
        assert urllib.request.urlopen(base + "big.bin").read(4) == b"xxxx"
    assert "Traceback" not in capsys.readouterr().err


def test_the_refusing_sockets_close_as_the_process_ends():
    code = (
        "from course_utils.tooling.site.pdf import local_only\n"
        "local_only('http://127.0.0.1:1/'); local_only('http://127.0.0.1:2/')"
    )
    done = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", code],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "ResourceWarning" not in done.stderr, done.stderr


def test_a_named_browser_that_is_missing_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_CHROMIUM", str(tmp_path / "nowhere"))
    with pytest.raises(CourseError, match="COURSE_CHROMIUM=.*nowhere: no such file"):
        site_pdf.browser()
    monkeypatch.delenv("COURSE_CHROMIUM")
    monkeypatch.setattr(site_pdf.shutil, "which", lambda name: None)
    with pytest.raises(CourseError, match="apt-get install chromium, or set COURSE_"):
        site_pdf.browser()


def test_course_site_takes_pdf():
    from course_utils.cli import build_parser

    args = build_parser().parse_args(["site", "--pdf", "--out", "x"])
    assert args.pdf is True and args.func is site.cmd_site


@pytest.mark.slow
def test_course_site_pdf_links_it_and_prints_the_home_page_and_every_lesson(
    tmp_path, monkeypatch
):
    from tests.tooling.site.fixture import FIXTURES, ROOT, need_site_tools

    need_site_tools()
    calls = []
    monkeypatch.setattr(
        site, "run_sphinx", lambda src, out, *more: out.mkdir(parents=True)
    )

    def fake_print(out, pages):
        calls.append((out, pages))
        return site_pdf.PrintedCourse(out / site_pdf.PDF_NAME, [("index", "t", 2)], 3)

    monkeypatch.setattr(site.site_pdf, "print_course", fake_print)
    report = site.build(ROOT, FIXTURES, tmp_path / "site", LESSONS, pdf=True)
    assert calls == [
        (tmp_path / "site", ["index", *(f"notebooks/{n}" for n in LESSONS)])
    ]
    index = (tmp_path / "site-src" / "index.md").read_text()
    assert '<a href="course.pdf">course.pdf</a>' in index
    recorded = json.loads((tmp_path / "site" / "site.json").read_text())["pdf"]
    assert recorded["file"] == "course.pdf" and recorded["pages"] == 2
    assert report.pdf.images == 3


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    need_browser()
    built = shared_site()
    out = tmp_path_factory.mktemp("pdf") / site_pdf.PDF_NAME
    pages = ["index", *(f"notebooks/{n}" for n in LESSONS)]
    return site_pdf.print_course(built["out"], pages, out), built


@pytest.mark.browser
def test_the_pdf_holds_every_lesson_its_figures_diagram_and_code(printed):
    from pypdf import PdfReader

    report, _ = printed
    reader = PdfReader(report.path)
    assert len(reader.pages) == report.pages > len(report.parts) == 3
    text = re.sub(r"\s+", " ", " ".join(p.extract_text() for p in reader.pages))
    for title in TITLES.values():
        assert title in text
    bookmarks = [o.title for o in reader.outline if not isinstance(o, list)]
    assert bookmarks == ["JAX and PyTorch, side by side", *TITLES.values()]
    # lesson 90's figure is the only image of the site's pages that print
    assert report.images == 1
    assert sum(len(p.images) for p in reader.pages) == 1
    assert "Python function" in text  # the mermaid diagram, drawn before printing
    assert 'print("torch:", grad_torch)' in text
    assert [(n, t) for n, t, _ in report.parts[1:]] == list(TITLES.items())


def _print_layout(browser, base: str, name: str):
    page = browser.new_page(viewport={"width": site_pdf.PRINT_WIDTH, "height": 1100})
    page.goto(f"{base}{name}.html", wait_until="load")
    page.emulate_media(media="print")
    return page


@pytest.mark.browser
def test_in_print_long_code_wraps_and_pairs_stack(printed):
    from playwright.sync_api import sync_playwright

    _, built = printed
    with site_pdf.serve(built["out"]) as base, sync_playwright() as pw:
        browser = launch(pw)
        page = _print_layout(browser, base, "notebooks/90_fixture_pairs")
        assert page.evaluate(site_pdf.WIDE)["wide"] == []
        page.evaluate(  # a 300-character line at the end of every code block and output
            """() => document.querySelectorAll('.bd-article .highlight pre')
                 .forEach(p => p.append('x = ' + '1 + '.repeat(74) + '1'))"""
        )
        layout = page.evaluate(site_pdf.WIDE)
        assert layout["wide"] == [] and layout["page"] <= layout["limit"]
        halves = page.evaluate(
            """() => Array.from(document.querySelector('.sbs-pair').children)
                 .map(c => c.getBoundingClientRect().toJSON())"""
        )
        torch, jax, parity = halves
        assert jax["y"] >= torch["y"] + torch["height"] - 1
        assert parity["y"] >= jax["y"] + jax["height"] - 1
        assert abs(jax["width"] - torch["width"]) < 2
        browser.close()


@pytest.mark.browser
def test_code_wider_than_the_page_stops_the_print_named(tmp_path):
    from playwright.sync_api import sync_playwright

    need_browser()
    (tmp_path / "wide.html").write_text(
        '<html><body><div class="bd-article"><pre style="white-space: pre; '
        f'overflow: auto">{"y = 1 + " * 60}1</pre></div></body></html>'
    )
    with site_pdf.serve(tmp_path) as base, sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": site_pdf.PRINT_WIDTH, "height": 900})
        with pytest.raises(CourseError) as err:
            site_pdf.print_page(page, f"{base}wide.html", "docs/wide")
        browser.close()
    message = str(err.value)
    assert message.startswith("docs/wide.html is wider than an A4 page in print")
    assert "pre " in message and "y = 1 + y = 1" in message
