"""The site's assets: served from npm tarballs kept in the vendor folder, never a CDN."""

from __future__ import annotations

import io
import tarfile

import pytest

from course_utils.tooling import site_assets, site_pages
from course_utils.tooling.errors import CourseError


def _tarball(path, members):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_only_the_served_files_are_copied(tmp_path):
    version = site_assets.NPM["mermaid"][0]
    _tarball(
        tmp_path / f"mermaid-{version}.tgz",
        {
            "package/dist/mermaid.esm.min.mjs": b"import './chunks/mermaid.esm.min/a.mjs'",
            "package/dist/chunks/mermaid.esm.min/a.mjs": b"export {}",
            "package/dist/mermaid.js": b"not served",
            "package/README.md": b"no",
        },
    )
    written = site_assets.extract("mermaid", tmp_path, tmp_path / "static")
    rel = sorted(str(p.relative_to(tmp_path / "static")) for p in written)
    assert rel == [
        "mermaid/chunks/mermaid.esm.min/a.mjs",
        "mermaid/mermaid.esm.min.mjs",
    ]
    assert rel[1] == site_assets.MERMAID_JS


def test_a_missing_tarball_without_npm_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setattr(site_assets.shutil, "which", lambda name: None)
    with pytest.raises(
        CourseError, match=r"npm is missing: install it .* or put mathjax-"
    ):
        site_assets.tarball("mathjax", tmp_path)


def test_the_vendor_folder_can_be_moved(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_SITE_VENDOR", str(tmp_path))
    assert site_assets.vendor_dir(tmp_path / "elsewhere") == tmp_path
    monkeypatch.delenv("COURSE_SITE_VENDOR")
    assert site_assets.vendor_dir(tmp_path) == tmp_path / "build" / "site-vendor"


def test_pairs_stand_side_by_side_only_on_a_wide_screen():
    css = site_assets.CSS
    narrow, wide = css.split("@media")
    assert "grid-template-columns: minmax(0, 1fr);" in narrow
    assert f"(min-width: {site_assets.WIDE}px)" in wide
    assert "minmax(0, 1fr) minmax(0, 1fr)" in wide and "grid-column: 1 / -1" in wide


def test_a_sharp_bits_printed_error_is_marked():
    assert f".tag_{site_pages.EXPECTED_TAG} .cell_output pre" in site_assets.CSS
