"""What the site's pages load, served from the site itself: mermaid, MathJax, the stylesheet.

Mermaid (lesson 03's pipeline diagram) and MathJax come from their npm packages at
pinned versions (:data:`NPM`): ``npm pack`` fetches each tarball once into the vendor
folder (``build/site-vendor``, or ``$COURSE_SITE_VENDOR``), and every build copies the
files the pages need out of it into ``_static/``. No page loads anything from another
host. :data:`CSS` lays the side-by-side pairs out in two columns from 900 px up.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from course_utils.tooling.errors import CourseError
from course_utils.tooling.site_ext import CSS_FILE, PAIR_CLASS

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
# Paths relative to _static, as conf.py names them.
MERMAID_JS = "mermaid/mermaid.esm.min.mjs"
MATHJAX_JS = "mathjax/tex-svg-full.js"
WIDE = 900  # px: from this width up, a pair's two cells stand side by side

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
/* Each half is narrow: a smaller font shows more of each line (the rest scrolls; wrapped
   Python would lose its indentation). */
.{PAIR_CLASS} pre {{ font-size: 0.85em; }}
.course-smoke-banner {{ font-weight: 600; }}
/* A sharp bit's error, printed in a line by expect_error: marked as an error. */
.tag_expected-error .cell_output pre {{ border-left: 0.25rem solid #c9302c; }}
"""


def vendor_dir(root: Path) -> Path:
    """Where the npm tarballs are kept between builds."""
    env = os.environ.get("COURSE_SITE_VENDOR")
    return Path(env) if env else root / "build" / "site-vendor"


def tarball(name: str, vendor: Path) -> Path:
    """The pinned npm tarball of ``name``, fetched with ``npm pack`` when not yet kept."""
    version = NPM[name][0]
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


def install(root: Path, static: Path) -> None:
    """Everything the pages load, into the staged ``_static`` folder."""
    vendor = vendor_dir(root)
    for name in NPM:
        extract(name, vendor, static)
    (static / CSS_FILE).write_text(CSS, encoding="utf-8")
