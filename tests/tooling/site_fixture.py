"""The fixture site the site tests build: two small executed lessons, no lesson run.

``tests/fixtures/site/90_fixture_pairs.ipynb`` (smoke run: two pairs, math, a mermaid
diagram, a figure, a cell tagged ``raises-exception``, JupyterLab-style in-page links)
and ``91_fixture_full.ipynb`` (full run, no pair).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "site"
LESSONS = ["90_fixture_pairs", "91_fixture_full"]
CHROMIUM = os.environ.get("COURSE_CHROMIUM") or shutil.which("chromium")
CLAIMS = next(iter(sorted((ROOT / "docs" / "claims-results").glob("*.json"))), None)


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


def build_fixture_site(out: Path):
    """Build the fixture site into ``out`` (skips when the tools are missing)."""
    need_site_tools()
    from course_utils.tooling import site

    return site.build(ROOT, FIXTURES, out, LESSONS, claims=CLAIMS)


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


def launch(pw):
    """Debian's chromium under playwright (never Playwright's own browser download)."""
    return pw.chromium.launch(
        executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"]
    )
