"""The whole course as one PDF: chromium prints the built site's pages, one after the other.

``course site --pdf`` ends with :func:`print_course`: the built site is served on
127.0.0.1 (a request to any other host is refused), and chromium, driven by
playwright-python, opens the home page and then every lesson, each once its math is
typeset and its diagrams drawn, with its review answers unfolded (paper has nothing
to click), in print media at the width of an A4 page. There each page is measured
first: a code block, an output, a table, an image or an equation wider than the page
stops the build, named with its page. Each page is then printed (the stylesheet's print
rules wrap long lines and stack the side-by-side pairs; A4, each lesson's title and page
numbers in the margins), and pypdf joins the parts into ``course.pdf``, one bookmark
per lesson. The site links to it from its home page.

Chromium is Debian's (``chromium``), or ``chromium-browser``, ``google-chrome``, or the
binary ``$COURSE_CHROMIUM`` names; playwright-python and pypdf are in the ``[site]``
extra.
"""

from __future__ import annotations

import atexit
import functools
import http.server
import io
import os
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from course_utils.tooling.errors import CourseError

PDF_NAME = "course.pdf"
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
PAPER = "A4"
MARGIN_MM = 14
# The CSS width of A4's printable area (210 mm less both margins, at 96 px per inch):
# the width the pages are laid out at, measured at and printed at.
PRINT_WIDTH = round((210 - 2 * MARGIN_MM) / 25.4 * 96)
# Waits on a busy machine: a page's load, its math and its diagrams.
TIMEOUT_MS = 180_000

# Every element in the article wider than the page, or whose content is wider than
# itself (a block that scrolls on screen is cut off on paper); text of the first line.
WIDE = """() => {
  const limit = document.documentElement.clientWidth;
  const wide = [];
  const sel = '.bd-article pre, .bd-article table, .bd-article img, '
            + '.bd-article mjx-container, .bd-article .mermaid svg';
  for (const el of document.querySelectorAll(sel)) {
    const box = el.getBoundingClientRect();
    if (box.width === 0) continue;
    const cut = el.scrollWidth > el.clientWidth + 1 && el.tagName !== 'IMG';
    if (box.right > limit + 1 || cut) {
      const text = (el.innerText || el.getAttribute('alt') || '').trim();
      wide.push(`${el.tagName.toLowerCase()} ${Math.round(Math.max(box.width,
        el.scrollWidth))} px: ${text.split('\\n')[0].slice(0, 80)}`);
    }
  }
  return {limit, page: document.documentElement.scrollWidth, wide};
}"""
# What a printed page needs done first: MathJax's typesetting, mermaid's drawing, and
# the folded review answers opened.
READY = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  const diagrams = document.querySelectorAll('pre.mermaid, div.mermaid');
  const start = Date.now();
  // Drawn: each diagram processed by mermaid, with an svg, and unchanged for half a
  // second (mermaid rewrites a drawn svg once more, about 100 ms later; a print in
  // between shows an empty box).
  const drawn = () => Array.from(diagrams).every(
    d => d.getAttribute('data-processed') === 'true' && d.querySelector('svg'));
  const state = () => Array.from(diagrams).map(d => d.innerHTML.length).join(',');
  let last = null, steady = 0;
  while (steady < 5) {
    if (Date.now() - start > 60000) throw new Error('a mermaid diagram was not drawn');
    const now = drawn() ? state() : null;
    steady = now !== null && now === last ? steady + 1 : 0;
    last = now;
    await new Promise(r => setTimeout(r, 100));
  }
  document.querySelectorAll('.bd-article details').forEach(d => { d.open = true; });
  await document.fonts.ready;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return {title: (document.querySelector('.bd-article h1') || {}).innerText || '',
          images: document.querySelectorAll('.bd-article img').length};
}"""
MARGIN_TEXT = (
    '<div style="font-size:8px;width:100%;padding:0 {mm}mm;color:#444;'
    'display:flex;justify-content:space-between"><span>{left}</span>'
    "<span>{right}</span></div>"
)


@dataclass
class PrintedCourse:
    """What :func:`print_course` made: the PDF, each part's title and page count, and
    the seconds it took."""

    path: Path
    parts: list[tuple[str, str, int]] = field(default_factory=list)
    images: int = 0
    seconds: float = 0.0

    @property
    def pages(self) -> int:
        return sum(n for _, _, n in self.parts)


def browser() -> str:
    """The chromium binary that prints (``$COURSE_CHROMIUM``, else the first found)."""
    named = os.environ.get("COURSE_CHROMIUM")
    if named:
        if not Path(named).exists():
            raise CourseError(f"COURSE_CHROMIUM={named}: no such file")
        return named
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    raise CourseError(
        "course site --pdf prints with chromium, and none was found "
        f"({', '.join(BROWSERS)}): apt-get install chromium, or set COURSE_CHROMIUM"
    )


class _Server(http.server.ThreadingHTTPServer):
    """A local server that lets the browser hang up: chromium drops requests it no longer
    needs (a page left before its last script arrived), and the server's write then
    meets a closed socket. Any other error is printed as before."""

    def handle_error(self, request, client_address) -> None:
        # a broken pipe, a reset or an aborted connection: the browser hung up
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@contextmanager
def serve(directory: Path) -> Iterator[str]:
    """``directory`` over HTTP on 127.0.0.1 (mermaid's modules need a server, not
    ``file://``); yields the base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(directory))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def local_only(base: str) -> dict:
    """The proxy setting (``browser.new_context(proxy=local_only(base))``) that keeps a
    context on ``base``, a served site's address (``http://127.0.0.1:PORT/``): chromium
    sends every request for another host or port to a port that refuses it, so nothing
    leaves the machine.

    A route (``context.route``) would refuse them too, but Playwright turns off the
    browser's cache while one is set: every page then loads and compiles each script
    (MathJax, mermaid) again."""
    refuser = socket.socket()  # bound, never listening: a connection to it is refused
    refuser.bind(("127.0.0.1", 0))
    if not _REFUSERS:
        atexit.register(_close_refusers)
    _REFUSERS.append(refuser)  # kept open, so that no other program takes the port
    return {
        "server": f"http://127.0.0.1:{refuser.getsockname()[1]}",
        "bypass": urlparse(base).netloc,
    }


_REFUSERS: list[socket.socket] = []


def _close_refusers() -> None:
    """Close the refusing sockets as the process ends (else each is a ResourceWarning)."""
    while _REFUSERS:
        _REFUSERS.pop().close()


def _margins(title: str) -> dict[str, str]:
    from html import escape

    return {
        "header_template": MARGIN_TEXT.format(
            mm=MARGIN_MM, left=escape(title), right=""
        ),
        "footer_template": MARGIN_TEXT.format(
            mm=MARGIN_MM,
            left="JAX and PyTorch, side by side",
            right='<span class="pageNumber"></span> / <span class="totalPages"></span>',
        ),
    }


def print_page(page, url: str, name: str) -> tuple[bytes, str, int]:
    """One page of the site as PDF bytes, with its title and image count; a
    :class:`CourseError` naming the page and what is wider than the paper."""
    page.goto(url, wait_until="load")
    ready = page.evaluate(READY)
    page.emulate_media(media="print", color_scheme="light")
    layout = page.evaluate(WIDE)
    if layout["wide"] or layout["page"] > layout["limit"] + 1:
        items = "; ".join(layout["wide"][:5]) or f"the page is {layout['page']} px"
        raise CourseError(
            f"{name}.html is wider than an {PAPER} page in print "
            f"({layout['limit']} px): {items}"
        )
    title = ready["title"].strip() or name
    data = page.pdf(
        format=PAPER,
        margin={
            side: f"{MARGIN_MM + (4 if side in ('top', 'bottom') else 0)}mm"
            for side in ("top", "bottom", "left", "right")
        },
        print_background=True,
        display_header_footer=True,
        outline=True,
        tagged=True,
        **_margins(title),
    )
    page.emulate_media(media="screen")
    return data, title, ready["images"]


def print_course(
    site: Path, pages: list[str], out: Path | None = None
) -> PrintedCourse:
    """Print ``pages`` (names of the built ``site``'s pages, in order: ``index``,
    ``notebooks/00_welcome_and_setup``, ...) into one PDF, by default the site's own
    ``course.pdf``."""
    try:
        from playwright.sync_api import sync_playwright
        from pypdf import PdfReader, PdfWriter
    except ImportError as err:
        raise CourseError(
            f"course site --pdf needs {err.name}: pip install -e '.[site]'"
        ) from None
    start = time.perf_counter()
    out = out or site / PDF_NAME
    report = PrintedCourse(out)
    writer = PdfWriter()
    with serve(site) as base, sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=browser(),
            args=["--no-sandbox", "--disable-dev-shm-usage"],
        )
        try:
            context = chromium.new_context(
                viewport={"width": PRINT_WIDTH, "height": 1100},
                color_scheme="light",
                proxy=local_only(base),
            )
            context.set_default_timeout(TIMEOUT_MS)
            page = context.new_page()
            for name in pages:
                data, title, images = print_page(page, f"{base}{name}.html", name)
                reader = PdfReader(io.BytesIO(data))
                writer.append(reader, outline_item=title)
                report.parts.append((name, title, len(reader.pages)))
                report.images += images
        finally:
            chromium.close()
    writer.add_metadata({"/Title": "JAX and PyTorch, side by side"})
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as handle:
        writer.write(handle)
    report.seconds = time.perf_counter() - start
    return report
