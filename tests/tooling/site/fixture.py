"""The fixture site the site tests build: two small executed lessons, no lesson run.

``tests/fixtures/site/90_fixture_pairs.ipynb`` (smoke run: two pairs, math, a mermaid
diagram, a figure, a sharp bit shown through ``expect_error``, JupyterLab-style in-page links)
and ``91_fixture_full.ipynb`` (full run, no pair, a review quiz from ``91_fixture_full.toml``
whose output :func:`refresh_quiz` writes from :mod:`course_utils.quiz`:
``python -m tests.tooling.site.fixture`` after changing how a quiz renders), and lesson 90's
Chinese edition, ``zh/90_fixture_pairs.ipynb`` (the same cells and ids, its prose in
Chinese, no outputs: the page carries the English ones). One pytest
run builds it once, with
the ``course site`` command, whichever test module (and xdist worker) asks first:
:func:`shared_site` holds a file lock while it builds into ``build/site-test/``.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course_utils.tooling.site import pdf as site_pdf

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "site"
LESSONS = ["90_fixture_pairs", "91_fixture_full"]
CHROMIUM = os.environ.get("COURSE_CHROMIUM") or shutil.which("chromium")
# The fixture lesson that ends with a quiz, and the quiz file its last cell loads.
QUIZ_LESSON = FIXTURES / "91_fixture_full.ipynb"
QUIZ_FILE = "tests/fixtures/site/91_fixture_full.toml"
QUIZ_SOURCE = f'from course_utils import quiz\n\nquiz.load("{QUIZ_FILE}")'


def need_site_tools() -> None:
    """Skip when the ``[site]`` extra is missing, or npm and a kept tarball both are."""
    for module in ("sphinx", "myst_nb", "sphinx_book_theme", "sphinxcontrib.mermaid"):
        pytest.importorskip(module, reason="the site needs the [site] extra")
    if shutil.which("npm") is None and not os.environ.get("COURSE_SITE_VENDOR"):
        vendor = ROOT / "build" / "site-vendor"
        if not any(vendor.glob("*.tgz")):
            pytest.skip(
                "npm is missing and no vendored mermaid/mathjax tarball is kept"
            )


SHARED = ROOT / "build" / "site-test"


def _run_id() -> str:
    """The same in every xdist worker of one pytest run; the process id elsewhere."""
    return os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid-{os.getpid()}"


def shared_site() -> dict:
    """The fixture site of this run: ``out``, the command's ``stdout``, and site.json's
    ``pages``, ``pairs`` and ``smoke``. Built by ``course site 90 91 --from FIXTURES``."""
    need_site_tools()
    SHARED.mkdir(parents=True, exist_ok=True)
    out, stamp = SHARED / "site", SHARED / "run.json"
    with open(SHARED / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = json.loads(stamp.read_text()) if stamp.exists() else {}
        if done.get("run") != _run_id():
            stamp.unlink(missing_ok=True)
            cmd = [sys.executable, "-m", "course_utils.cli", "site", "90", "91"]
            cmd += ["--from", str(FIXTURES), "--out", str(out)]
            cmd += ["--zh-from", str(FIXTURES / "zh")]
            proc = subprocess.run(
                cmd, capture_output=True, text=True, cwd=ROOT, timeout=600
            )
            assert proc.returncode == 0, proc.stderr
            done = {"run": _run_id(), "stdout": proc.stdout}
            stamp.write_text(json.dumps(done))
    return {
        "out": out,
        "stdout": done["stdout"],
        **json.loads((out / "site.json").read_text()),
    }


def need_browser() -> None:
    """Skip (fail under ``CI=true``) without playwright-python or Debian's chromium."""
    reason = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        reason = "playwright is missing (pip install -e '.[dev]')"
    if reason is None and not CHROMIUM:
        reason = "no chromium found (apt-get install chromium, or set COURSE_CHROMIUM)"
    if reason and os.environ.get("CI") == "true":
        pytest.fail(f"browser tests cannot run in CI: {reason}")
    if reason:
        pytest.skip(reason)


def need_chinese_font() -> None:
    """Skip (fail under ``CI=true``) when fontconfig knows no font with Chinese glyphs:
    chromium then draws nothing for them, and the test of the Chinese page's text has
    nothing to see."""
    try:
        found = subprocess.run(
            ["fc-list", ":lang=zh", "family"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as error:
        found, why = "", f"fc-list did not answer ({error})"
    else:
        why = "fc-list :lang=zh lists no font"
    if found:
        return
    reason = f"no font for Chinese text: {why} (apt-get install fonts-noto-cjk)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"the Chinese page's text cannot be checked in CI: {reason}")
    pytest.skip(reason)


@functools.cache
def launch(pw):
    """Debian's chromium under playwright (never Playwright's own browser download)."""
    return pw.chromium.launch(
        executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"]
    )


def only(base: str) -> dict:
    """The proxy (``browser.new_context(proxy=only(base))``) that keeps a context on
    ``base``: the course's own (:func:`course_utils.tooling.site.pdf.local_only`), which
    ``course site --pdf`` and ``make site-check`` use too. :func:`count_others` lists
    the requests it refused."""
    return site_pdf.local_only(base)


def count_others(context, base: str, others: list[str]) -> None:
    """Append to ``others`` the address of every request of ``context`` that is not
    for ``base``. A context with ``proxy=only(base)`` refuses them."""
    context.on(
        "request", lambda r: None if r.url.startswith(base) else others.append(r.url)
    )


SHOTS = ROOT / "build" / "site-screenshots"


def screenshot(target, name: str, always: bool = False, **options) -> None:
    """``target`` (a page or a locator) into ``SHOTS/name``, when ``COURSE_SCREENSHOTS=1``
    asks for it or ``always`` (what a failure looked like). They are for a person to look
    at: no test or workflow reads them. The site tests' 36 cost about 5 s of CPU."""
    if not always and os.environ.get("COURSE_SCREENSHOTS") != "1":
        return
    SHOTS.mkdir(parents=True, exist_ok=True)
    target.screenshot(path=SHOTS / name, **options)


def quiz_output() -> dict:
    """The output the fixture's quiz cell gives today: IPython's formatting of the
    quiz, as a kernel's execute_result carries it."""
    import nbformat
    from IPython.core.formatters import DisplayFormatter

    from course_utils import quiz

    data, metadata = DisplayFormatter().format(quiz.load(ROOT / QUIZ_FILE))
    return nbformat.v4.new_output(
        "execute_result", data=data, metadata=metadata, execution_count=3
    )


def quiz_cell(nb) -> dict:
    """The fixture lesson's quiz cell (its last code cell, loading QUIZ_FILE)."""
    cells = [c for c in nb.cells if c.cell_type == "code"]
    assert cells and cells[-1].source == QUIZ_SOURCE, "the fixture's quiz cell is gone"
    return cells[-1]


def refresh_quiz() -> bool:
    """Write today's quiz output into the fixture lesson; whether it changed."""
    import nbformat

    nb = nbformat.read(QUIZ_LESSON, as_version=4)
    cell = quiz_cell(nb)
    new = [quiz_output()]
    if cell.outputs == new:
        return False
    cell.outputs = new
    nbformat.write(nb, QUIZ_LESSON)
    return True


# The site served on 127.0.0.1 while a block runs: the same server `course site --pdf` prints from.
serve = site_pdf.serve


if __name__ == "__main__":
    changed = refresh_quiz()
    print(
        f"{QUIZ_LESSON.relative_to(ROOT)}: quiz output {'rewritten' if changed else 'unchanged'}"
    )
