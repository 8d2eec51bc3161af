"""What the site's pages load, served from the site itself: mermaid, MathJax, the stylesheet
and the copy buttons' script; the theme's templates the site replaces; and axe-core, which
the browser tests load into the pages. The templates are files in ``templates/``.

Mermaid (lesson 03's pipeline diagram) and MathJax come from their npm packages at
pinned versions (:data:`NPM`): ``npm pack`` fetches each tarball once into the vendor
folder (``build/site-vendor``, or ``$COURSE_SITE_VENDOR``), and every build copies the
files the pages need out of it into ``_static/``. No page loads anything from another
host. :data:`CSS` lays the side-by-side pairs out in two columns from 900 px up, and
from :data:`XL` up lets each pair span the page's table of contents; :data:`COPY_SCRIPT`
gives every code block a copy button.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from course_utils.tooling.errors import CourseError
from course_utils.tooling.site.extension import (
    COPY_FILE,
    CSS_FILE,
    FULL_WIDTH,
    PAIR_CLASS,
)

# name -> (version, the folder of its tarball whose layout _static/<name>/ keeps,
# the members the site serves: files, or folders ending in "/")
NPM = {
    "mermaid": (
        "11.12.1",
        "package/dist/",
        ("mermaid.esm.min.mjs", "chunks/mermaid.esm.min/"),
    ),
    "mathjax": ("3.2.2", "package/es5/", ("tex-svg-full.js",)),
}
# What the browser tests load into the pages, never the site: axe-core, which checks a
# page's accessibility (tests/tooling/site/test_browser.py). Kept and fetched as above.
TEST_NPM = {"axe-core": ("4.14.1", "package/", ("axe.min.js",))}
# Paths relative to _static, as conf.py names them.
MERMAID_JS = "mermaid/mermaid.esm.min.mjs"
MATHJAX_JS = "mathjax/tex-svg-full.js"
WIDE = 900  # px: from this width up, a pair's two cells stand side by side
# px: from this width up the theme shows the page's table of contents as a column on the
# right (pydata-sphinx-theme's $breakpoint-sidebar-secondary, Bootstrap's xl).
XL = 1200
COPY_CLASS = "course-copy"
# The language switch: its template (templates/, conf.py's article_header_end) and its
# link's class, which the template names.
SWITCH_TEMPLATE = "course-language.html"
SWITCH_CLASS = "course-language"

# The colours of ANSI-coloured output (a traceback, a coloured log), in place of
# myst-nb's (Jupyter's), several of which fell below WCAG's 4.5:1 on the theme's code
# background (blue 3.0:1 in light mode, magenta 3.9:1 in dark): each of these measures
# at least 5.9:1 there (#f3f4f5 light, #29313d dark).
ANSI = {
    "Black": ("#3e424d", "#b8bcc4"),
    "Red": ("#b42318", "#ff8f87"),
    "Green": ("#0a6b2d", "#5fd38d"),
    "Yellow": ("#765a00", "#e6c84f"),
    "Blue": ("#0b5cad", "#7ab8ff"),
    "Magenta": ("#8f2b85", "#e79be2"),
    "Cyan": ("#04676a", "#6fd6d8"),
    "White": ("#595959", "#e0ddd3"),
}
ANSI_CSS = "".join(
    f'html[data-theme="{theme}"] div.highlight .-Color[class*=-{name}] '
    f"{{ color: {pair[i]}; }}\n"
    for name, pair in ANSI.items()
    for i, theme in enumerate(("light", "dark"))
)

CSS = f"""\
/* The course's side-by-side pairs: PyTorch left, JAX right, the parity cell under both. */
.{PAIR_CLASS} {{
  display: grid;
  grid-template-columns: minmax(0, 1fr);
  gap: 0.25rem 1rem;
  margin: 1rem 0;
}}
@media (min-width: {WIDE}px) {{
  .{PAIR_CLASS} {{ grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }}
  .{PAIR_CLASS} > .tag_sbs-parity {{ grid-column: 1 / -1; }}
}}
.{PAIR_CLASS} > .cell {{ margin: 0; min-width: 0; }}
/* A pair is "{FULL_WIDTH}", the theme's class for content wider than the prose: the theme
   folds the page's table of contents to its title while one is on screen (hovering the
   title opens it). Below {XL} px there is no such column, so a pair keeps the prose's
   width (the theme's own rule would make it 136 % of it). */
.{PAIR_CLASS}.{FULL_WIDTH} {{ width: auto; max-width: none; }}
@media (min-width: {XL}px) {{
  /* From the prose's left edge less 1rem to 1rem short of the column's right edge:
     the article's 2rem right padding, then the column's width. */
  .{PAIR_CLASS}.{FULL_WIDTH} {{
    width: calc(100% + 2rem + var(--pst-sidebar-secondary));
    max-width: none;
    margin-left: -1rem;
  }}
}}
/* Each half is narrow: a smaller font shows more of each line (the rest scrolls; wrapped
   Python would lose its indentation). */
.{PAIR_CLASS} pre {{ font-size: 0.85em; }}
.course-smoke-banner {{ font-weight: 600; }}
/* The folded table of contents' caret: sphinx-book-theme names Font Awesome 6, and
   pydata-sphinx-theme serves Font Awesome 7 (without this the caret is a missing glyph). */
.bd-sidebar-secondary.hide:not(:hover) .onthispage::after {{ font-family: "Font Awesome 7 Free"; }}
/* The release and the framework versions a lesson's outputs came from. */
.course-versions {{ font-size: 0.85em; color: var(--pst-color-text-muted); }}
/* Each code block's copy button (course-copy.js), in its top right corner. */
div.highlight {{ position: relative; }}
/* Fully opaque in both themes: a faded button's text fails WCAG's 4.5:1 contrast
   (axe measured 3.4:1 at the opacity it had). */
.{COPY_CLASS} {{
  position: absolute; top: 0.3rem; right: 0.3rem; z-index: 2;
  font-size: 0.75rem; line-height: 1; padding: 0.25rem 0.45rem;
  border: 1px solid var(--pst-color-border); border-radius: 0.25rem;
  background: var(--pst-color-surface); color: var(--pst-color-text-base);
  cursor: pointer;
}}
div.highlight:hover > .{COPY_CLASS}, .{COPY_CLASS}:focus {{
  border-color: var(--pst-color-primary);
}}
/* Code in the smoke banner: the theme's pink inline code on the banner's grey measured
   1.2:1 (light) and 4.2:1 (dark); the banner's own text colour passes in both. */
.bd-header-announcement code {{
  color: inherit; background: transparent; border: 1px solid currentColor;
}}
/* A sharp bit's error, printed in a line by expect_error: marked as an error. */
.tag_expected-error .cell_output pre {{ border-left: 0.25rem solid #c9302c; }}
/* ANSI-coloured output, readable in both themes (ANSI above). */
{ANSI_CSS}/* On paper (the course's PDF, course_utils/tooling/site/pdf.py): nothing scrolls, so
   long lines wrap (code and outputs alike; the rest of a line starts at the block's left
   edge), every pair is stacked, PyTorch above JAX, nothing is wider than the page, and a
   code block shorter than a page is not split across two. */
@media print {{
  .bd-article pre, .bd-article pre code {{
    white-space: pre-wrap; overflow-wrap: anywhere; overflow: visible;
  }}
  .bd-article .cell_input, .bd-article .output, .bd-article div.highlight {{
    break-inside: avoid;
  }}
  .{PAIR_CLASS}, .{PAIR_CLASS}.{FULL_WIDTH} {{
    grid-template-columns: minmax(0, 1fr); width: auto; margin-left: 0;
  }}
  .{PAIR_CLASS} > .tag_sbs-parity {{ grid-column: auto; }}
  .{PAIR_CLASS} pre {{ font-size: inherit; }}
  .bd-article .pst-scrollable-table-container, .bd-article .output,
  .bd-article .cell_output {{ overflow: visible; }}
  .bd-article table {{ max-width: 100%; }}
  .bd-article td, .bd-article th {{ overflow-wrap: anywhere; }}
  /* Sphinx keeps inline code on one line (span.pre), which widened lesson 00's idiom
     table to 759 px on a 688 px page. */
  .bd-article code span.pre {{ white-space: pre-wrap; overflow-wrap: anywhere; }}
  .bd-article img {{ max-width: 100%; height: auto; break-inside: avoid; }}
  .bd-article mjx-container[display="true"] {{ max-width: 100%; overflow: visible; }}
  .{COPY_CLASS} {{ display: none; }}
  .{SWITCH_CLASS} {{ display: none; }}
}}
/* The language switch: a word among the header's icons, on their row (the theme stacks
   the header's end items as blocks, which put the switch above the header's top edge). */
.{SWITCH_CLASS} {{ font-weight: 600; white-space: nowrap; }}
.header-article-items__end {{ display: flex; flex-wrap: wrap; justify-content: flex-end; align-items: center; }}
"""


# Every code block of a page (code cells, and fenced code in the prose), never an output,
# gets a button that copies its code. A block of a console session (a line opening with
# ">>> ", "In [1]: " or "$ ") copies only its prompted lines (those and the continuation
# prompts "... " and "   ...: "), the prompts taken off, as sphinx-copybutton does; any
# other block copies its text as it is.
COPY_SCRIPT = r"""
// The course's copy buttons (course_utils/tooling/site/assets.py): no network, no library.
(() => {
  const FIRST = /^(>>> |In \[\d*\]: |\$ )/;
  const PROMPT = /^(>>> |\.\.\. |In \[\d*\]: | {3,}\.\.\.: |\$ )/;
  const strip = (text) => {
    const lines = text.replace(/\n$/, "").split("\n");
    if (!lines.some((l) => FIRST.test(l))) return lines.join("\n");
    return lines.filter((l) => PROMPT.test(l)).map((l) => l.replace(PROMPT, "")).join("\n");
  };
  const fallback = (text) => {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    return done ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  };
  const copy = (text) =>
    navigator.clipboard && window.isSecureContext
      ? navigator.clipboard.writeText(text).catch(() => fallback(text))
      : fallback(text);
  const say = (button, word) => {
    button.textContent = word;
    setTimeout(() => { button.textContent = "Copy"; }, 2000);
  };
  const add = () => {
    for (const block of document.querySelectorAll(".bd-article div.highlight")) {
      const pre = block.querySelector("pre");
      if (!pre || block.closest(".cell_output, .output")) continue;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "@COPY_CLASS@";
      button.textContent = "Copy";
      button.title = "Copy the code";
      button.setAttribute("aria-label", "Copy the code");
      button.addEventListener("click", () => {
        copy(strip(pre.textContent)).then(() => say(button, "Copied"),
                                          () => say(button, "Copy failed"));
      });
      block.prepend(button);
    }
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", add);
  else add();
})();
""".lstrip().replace("@COPY_CLASS@", COPY_CLASS)


# The theme's templates the site replaces, kept as files beside this module and copied into
# ``_templates/`` (conf.py's templates_path): the language switch, and the theme's search
# button without its aria-label (each file says why).
TEMPLATES = Path(__file__).resolve().with_name("templates")


def vendor_dir(root: Path) -> Path:
    """Where the npm tarballs are kept between builds."""
    env = os.environ.get("COURSE_SITE_VENDOR")
    return Path(env) if env else root / "build" / "site-vendor"


def tarball(name: str, vendor: Path) -> Path:
    """The pinned npm tarball of ``name``, fetched with ``npm pack`` when not yet kept."""
    version = (NPM | TEST_NPM)[name][0]
    path = vendor / f"{name}-{version}.tgz"
    if path.exists():
        return path
    npm = shutil.which("npm")
    if npm is None:
        raise CourseError(
            f"the site serves {name} {version} from its npm package, and npm is missing: "
            f"install it (apt-get install npm) or put {path.name} in {vendor}"
        )
    vendor.mkdir(parents=True, exist_ok=True)
    cmd = [npm, "pack", f"{name}@{version}", "--pack-destination", str(vendor)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if out.returncode != 0 or not path.exists():
        tail = (out.stderr or out.stdout).strip().splitlines()[-1:] or ["no output"]
        raise CourseError(f"`npm pack {name}@{version}` failed: {tail[0]}")
    return path


def extract(name: str, vendor: Path, static: Path) -> list[Path]:
    """Copy ``name``'s served files from its tarball into ``static``; the paths written."""
    _, base, members = NPM[name]
    written = []
    with tarfile.open(tarball(name, vendor)) as tar:
        for info in tar.getmembers():
            rel = info.name.removeprefix(base)
            if rel == info.name or not info.isfile():
                continue
            if not any(
                rel == m or (m.endswith("/") and rel.startswith(m)) for m in members
            ):
                continue
            target = static / name / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(info) as src:  # type: ignore[union-attr]
                target.write_bytes(src.read())
            written.append(target)
    if not written:
        raise CourseError(f"{tarball(name, vendor)} holds none of {members}")
    return written


def npm_text(root: Path, name: str, member: str) -> str:
    """The text of one file (``member``, under the package's folder) of a pinned npm
    package, read from its tarball (fetched once, as for the site's own)."""
    version, base, members = (NPM | TEST_NPM)[name]
    if member not in members:
        raise CourseError(f"{member!r} is not one of {name}'s files: {members}")
    path = tarball(name, vendor_dir(root))
    with tarfile.open(path) as tar:
        try:
            data = tar.extractfile(base + member)
        except KeyError:
            data = None
        if data is None:
            raise CourseError(f"{path} holds no {base + member}")
        return data.read().decode("utf-8")


def install(root: Path, static: Path, templates: Path) -> None:
    """Everything the pages load, into the staged ``_static`` folder, and the theme's
    templates the site replaces, into ``templates``."""
    vendor = vendor_dir(root)
    for name in NPM:
        extract(name, vendor, static)
    static.mkdir(parents=True, exist_ok=True)
    (static / CSS_FILE).write_text(CSS, encoding="utf-8")
    (static / COPY_FILE).write_text(COPY_SCRIPT, encoding="utf-8")
    templates.mkdir(parents=True, exist_ok=True)
    for path in sorted(TEMPLATES.glob("*.html")):
        shutil.copyfile(path, templates / path.name)
