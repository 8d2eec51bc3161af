"""The site's assets: served from npm tarballs kept in the vendor folder, never a CDN."""

from __future__ import annotations

import io
import tarfile

import pytest

from course_utils.tooling.errors import CourseError
from course_utils.tooling.site import assets as site_assets
from course_utils.tooling.site import extension as site_ext
from course_utils.tooling.site import pages as site_pages


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
    narrow, wide = css.split(f"@media (min-width: {site_assets.WIDE}px)")
    assert "grid-template-columns: minmax(0, 1fr);" in narrow
    assert "minmax(0, 1fr) minmax(0, 1fr)" in wide and "grid-column: 1 / -1" in wide


def test_a_sharp_bits_printed_error_is_marked():
    assert f".tag_{site_pages.EXPECTED_TAG} .cell_output pre" in site_assets.CSS


def test_pairs_span_the_table_of_contents_only_where_it_is_a_column():
    css = site_assets.CSS
    pair = f".{site_ext.PAIR_CLASS}.{site_ext.FULL_WIDTH}"
    base, wide = css.split(f"@media (min-width: {site_assets.XL}px)")
    assert f"{pair} {{ width: auto; max-width: none; }}" in base
    assert "width: calc(100% + 2rem + var(--pst-sidebar-secondary));" in wide
    assert site_assets.XL > site_assets.WIDE


def test_the_copy_script_is_served_by_the_site(tmp_path, monkeypatch):
    monkeypatch.setattr(site_assets, "extract", lambda *args: [])
    site_assets.install(tmp_path, tmp_path / "static", tmp_path / "templates")
    script = (tmp_path / "static" / site_ext.COPY_FILE).read_text()
    assert script == site_assets.COPY_SCRIPT
    assert f'"{site_assets.COPY_CLASS}"' in script and "@COPY_CLASS@" not in script
    assert "http" not in script.replace("https?", "")  # nothing from another host


def test_the_search_button_is_named_by_what_it_shows(tmp_path, monkeypatch):
    """WCAG 2.5.3: the theme's aria-label="Search" on a button showing "Search Ctrl+K"
    is axe's serious label-content-name-mismatch; the site's copy has none."""
    monkeypatch.setattr(site_assets, "extract", lambda *args: [])
    site_assets.install(tmp_path, tmp_path / "static", tmp_path / "templates")
    button = (tmp_path / "templates" / "search-button-field.html").read_text()
    assert "aria-label=" not in button and 'aria-hidden="true"' in button
    assert "search-button__default-text" in button and "<kbd" in button


def test_the_theme_templates_are_installed_and_the_switch_has_its_class(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(site_assets, "extract", lambda *args: [])
    site_assets.install(tmp_path, tmp_path / "static", tmp_path / "templates")
    names = sorted(p.name for p in (tmp_path / "templates").iterdir())
    assert names == ["course-language.html", "search-button-field.html"]
    assert site_assets.SWITCH_TEMPLATE in names
    switch = (tmp_path / "templates" / site_assets.SWITCH_TEMPLATE).read_text()
    assert f'class="btn {site_assets.SWITCH_CLASS}"' in switch
    assert "{{ course_switch.href }}" in switch


def test_colours_keep_their_contrast():
    css = site_assets.CSS
    copy = css.split(f".{site_assets.COPY_CLASS} {{", 1)[1].split("}", 1)[0]
    assert "opacity" not in copy  # a faded button's text fell to 3.4:1
    assert ".bd-header-announcement code {" in css


def test_a_test_only_package_is_read_from_its_tarball(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_SITE_VENDOR", str(tmp_path))
    version = site_assets.TEST_NPM["axe-core"][0]
    _tarball(tmp_path / f"axe-core-{version}.tgz", {"package/axe.min.js": b"axe = 1"})
    assert site_assets.npm_text(tmp_path, "axe-core", "axe.min.js") == "axe = 1"
    with pytest.raises(CourseError, match="'axe.js' is not one of axe-core's files"):
        site_assets.npm_text(tmp_path, "axe-core", "axe.js")
    assert "axe-core" not in site_assets.NPM  # never served by a site


def test_ansi_colours_meet_wcag_aa_on_the_code_background_in_both_themes():
    from course_utils.tooling.site.pages import _luminance

    def contrast(a: str, b: str) -> float:
        high, low = sorted((_luminance(a[1:]), _luminance(b[1:])), reverse=True)
        return (high + 0.05) / (low + 0.05)

    # the theme's code background, as axe measured it in each mode
    for name, (light, dark) in site_assets.ANSI.items():
        assert contrast(light, "#f3f4f5") >= 4.5, name
        assert contrast(dark, "#29313d") >= 4.5, name
        for theme, colour in (("light", light), ("dark", dark)):
            rule = f'html[data-theme="{theme}"] div.highlight .-Color[class*=-{name}]'
            assert f"{rule} {{ color: {colour}; }}" in site_assets.CSS
